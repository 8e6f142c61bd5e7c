//! `kill -9` (issue #21, and #14 point 10): a turn's processes die with Sextant, what they
//! left in their process group is ended at the next start, and the interrupted task says its
//! command may have run instead of inviting a blind retry.
//!
//! The Sextant that is killed runs in a child process: this test binary run again with only
//! [`serve_until_killed`] (an ignored test that serves when `SEXTANT_E2E_SERVE_DIR` is set).

use serde_json::json;

use crate::support::*;

const SERVE_DIR: &str = "SEXTANT_E2E_SERVE_DIR";

/// Not a test of its own: the Sextant that the kill -9 test kills. It prints its URL and
/// serves until it is killed.
#[tokio::test]
#[ignore = "run by a_kill_9_leaves_no_turn_process_running in a child process"]
async fn serve_until_killed() {
    let Some(dir) = std::env::var_os(SERVE_DIR) else {
        return;
    };
    let running = sextant::start(loopback(std::path::Path::new(&dir)))
        .await
        .expect("sextant starts");
    println!("SEXTANT_URL={}", running.url());
    std::future::pending::<()>().await;
}

/// Waits (bounded) until `pid` has ended; whether it did.
async fn ends(pid: i32) -> bool {
    ends_within(pid, STEP).await
}

#[tokio::test]
async fn a_kill_9_leaves_no_turn_process_running() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    // The turn's command starts a background job (a grandchild of Sextant, in the turn's
    // group), says so, and keeps running.
    let script = format!(
        "read -r turn; (sleep 60; touch {d}/late-effect) & echo $! > {d}/job.pid; \
         echo $$ > {d}/leader.pid; echo started; sleep 60"
    );
    std::fs::write(dir.path().join("agents.toml"), exec_agent("bg", &script)).unwrap();

    let (mut child, url) = child_sextant("kill9::serve_until_killed", SERVE_DIR, dir.path()).await;

    // Start the turn and wait (on its stream) until its command says it started.
    let http = client();
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
                       "params": { "message": msg("go") } });
    let resp = send(
        http.post(format!("{url}/api/v1/agents/bg/a2a"))
            .header("content-type", "application/json")
            .header("A2A-Version", "1.0")
            .body(body.to_string()),
    )
    .await;
    let mut s = Sse::from_response(resp);
    let mut task_id = None;
    loop {
        let f = s.next_frame().await.expect("the stream stays open");
        let r = f.json()["result"].clone();
        if let Some(id) = r["task"]["id"].as_str() {
            task_id = Some(id.to_string());
        }
        if r["artifactUpdate"].to_string().contains("started") {
            break;
        }
    }
    let task_id = task_id.expect("the task");
    let pid = |f: &str| -> i32 {
        std::fs::read_to_string(dir.path().join(f))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let (leader, job) = (pid("leader.pid"), pid("job.pid"));
    assert!(!dead(leader) && !dead(job));

    // kill -9.
    drop(s);
    child.kill().unwrap();
    child.wait().unwrap();
    // The turn's command dies with Sextant (its parent-death signal).
    assert!(ends(leader).await, "the turn's command outlived a kill -9");

    // The next start ends what is left of the turn's group before it marks the turn.
    let app = TestApp::start_in(dir, false).await;
    assert!(
        ends(job).await,
        "the turn's background job outlived the next start"
    );
    let task = app.get_task_as(Who::Anon, "bg", &task_id).await;
    assert_eq!(state(&task), "TASK_STATE_FAILED", "{task}");
    let why = task["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(why.contains("may have run"), "{why}");
    assert!(why.contains("were ended at this start"), "{why}");
    assert!(!why.contains("Send the message again to retry"), "{why}");
    assert!(!app.dir.path().join("late-effect").exists());
    app.shutdown().await;
}
