//! A cancel racing an accept (issue #34): the pair is sent hundreds of times with jittered
//! gaps, in either order, and whenever the cancel's reply is "canceled", nothing of the
//! command runs afterwards — neither a command started by the answer's resume just after the
//! cancel, nor one started while the cancel was being journalled.

use super::*;

/// A small deterministic jitter (no random source needed): microseconds in `0..max`.
fn jitter(seed: u64, max: u64) -> Duration {
    let x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    Duration::from_micros((x >> 33) % max)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancel_racing_an_accept_runs_nothing_after_it() {
    const ROUNDS: u64 = 200;
    let dir = tempfile::tempdir().unwrap();
    let out = tempfile::tempdir().unwrap();
    let rt = runtime(&dir, vec![shell_agent(3600)]).await;
    let mut canceled = Vec::new();
    for n in 0..ROUNDS {
        // Long enough that a command the cancel failed to stop would still be running (and
        // then leave its file) when the runtime shuts down.
        let ran = out.path().join(format!("ran-{n}"));
        let command = format!("sleep 0.2; touch {}", ran.display());
        let a = rt
            .admit(input("shell", &format!("m{n}"), &command))
            .await
            .unwrap();
        let i = pending(&rt, &a).await;
        let task_id = a.task().task_id.to_string();
        let accept = answering(&i, &task_id, "accept", &format!("a{n}"));
        // Either may go first, by up to 3 ms.
        let (answer_gap, cancel_gap) = if n % 2 == 0 {
            (Duration::ZERO, jitter(n, 3000))
        } else {
            (jitter(n, 3000), Duration::ZERO)
        };
        let (answered, cancel) = tokio::join!(
            async {
                tokio::time::sleep(answer_gap).await;
                rt.answer(accept).await
            },
            async {
                tokio::time::sleep(cancel_gap).await;
                rt.cancel(&task_id, &canceler(None)).await.unwrap()
            }
        );
        let _ = answered;
        if matches!(cancel, CancelOutcome::Canceled(_)) {
            canceled.push((task_id, ran));
        }
    }
    assert!(
        canceled.len() as u64 > ROUNDS / 2,
        "most cancels land while the task asks or runs: {}",
        canceled.len()
    );
    // Every turn, and every process a turn waits for, has ended after this.
    rt.shutdown(Duration::from_secs(30)).await;
    let mut ran_anyway = Vec::new();
    for (task_id, ran) in &canceled {
        let f = state_of(&rt, task_id).await;
        assert_eq!(f.state, TaskState::Canceled, "{task_id}");
        if ran.exists() {
            ran_anyway.push(task_id.clone());
        }
    }
    assert!(
        ran_anyway.is_empty(),
        "{} of {} canceled tasks ran their command anyway: {ran_anyway:?}",
        ran_anyway.len(),
        canceled.len()
    );
}
