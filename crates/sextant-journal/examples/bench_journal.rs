//! Benchmark (not a test): the journal's share of one durable SendMessage.
//!
//! ```text
//! cargo run --release -p sextant-journal --example bench_journal [-- CLIENTS SECS]
//! ```
//!
//! `CLIENTS` concurrent callers (default 32) each repeat what the echo Agent's task writes:
//! an admission in a new Session, then the turn's start (which sets `working`), the output
//! artifact and `completed`, pipelined as the worker sends them, waiting for the last. It runs
//! twice, as the server admits:
//! - `committed`: the admission is waited for until it commits (`Journal::admit`), as for a
//!   streaming or `returnImmediately` caller, who hears "accepted" at once;
//! - `early`: the admission is answered before its commit (`Journal::admit_early`), as for a
//!   blocking SendMessage, so the turn's appends can join its transaction.
//!
//! Prints tasks/s and the process's CPU time per task (from `/proc/self/stat`), which on a
//! noisy machine says more than the rate: compare schema or writer changes by CPU per task,
//! in one run each, back to back. Also prints the WAL file's size at the end (checkpoints
//! keep it bounded).

use std::time::{Duration, Instant};

use chrono::Utc;
use sextant_core::a2a::{Artifact, Message, Part, Role, TaskState};
use sextant_core::{AgentSpec, EventBody};
use sextant_journal::{Admission, Journal, NewEvent, TurnGuard};

fn cpu_ticks() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command's closing parenthesis; utime and stime are the 12th and 13th.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let n = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    n(11) + n(12)
}

fn admission(phase: &str, client: usize, n: u64) -> Admission {
    let id = format!("bench-{phase}-c{client}-{n}");
    let mut message = Message::new(Role::User, vec![Part::text("hello from the bench")]);
    message.message_id = id.clone();
    Admission {
        caller: sextant_core::Principal::anonymous_local().caller_key(),
        caller_kind: sextant_core::PrincipalKind::AnonymousLocal,
        agent_id: "echo".into(),
        context_id: None,
        task_id: None,
        message,
        content_hash: sextant_core::ids::sha256_hex(id.as_bytes()),
        input_key: id,
        origin: sextant_core::Origin::A2a,
        max_active_tasks: None,
        max_context_inputs: None,
        push_config: None,
        at: Utc::now(),
    }
}

fn event(task_id: &str, body: EventBody) -> NewEvent {
    NewEvent {
        task_id: Some(task_id.to_string()),
        body,
        at: Utc::now(),
    }
}

fn state(task_id: &str, state: TaskState) -> NewEvent {
    event(
        task_id,
        EventBody::TaskState {
            state,
            message: None,
        },
    )
}

async fn client(j: Journal, phase: String, client: usize, until: Instant, early: bool) -> u64 {
    let mut done = 0;
    while Instant::now() < until {
        let admission = admission(&phase, client, done);
        let admitted = if early {
            j.admit_early(admission)
                .await
                .map(|(admitted, _live)| admitted)
        } else {
            j.admit(admission).await
        };
        let Ok(Ok(admitted)) = admitted else {
            panic!("admission failed: {admitted:?}");
        };
        let task = admitted.task().clone();
        let (sid, tid) = (task.session_id.as_str(), task.task_id.as_str());
        let guard = TurnGuard::default();
        let start = j.submit_append(
            sid,
            vec![event(
                tid,
                EventBody::TurnStarted {
                    through: Some(1),
                    working: true,
                },
            )],
            Some(guard.clone()),
        );
        let artifact = Artifact {
            artifact_id: sextant_core::ids::new_id(),
            name: Some("echo".into()),
            description: None,
            parts: vec![Part::text("hello from the bench")],
            metadata: None,
            extensions: None,
        };
        let output = j.submit_append(
            sid,
            vec![event(
                tid,
                EventBody::Artifact {
                    artifact,
                    append: false,
                    last_chunk: true,
                },
            )],
            Some(guard.clone()),
        );
        let end = j.submit_append(sid, vec![state(tid, TaskState::Completed)], Some(guard));
        for s in [start, output, end] {
            s.wait().await.expect("append failed");
        }
        done += 1;
    }
    done
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mut args = std::env::args().skip(1);
    let clients: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(32);
    let secs: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(10);
    let dir = tempfile::tempdir().expect("temp dir");
    let j = Journal::open(dir.path().join("journal.db")).expect("journal");
    j.upsert_agents(vec![AgentSpec::echo()], Utc::now())
        .await
        .expect("agents");

    // Per mode, one second of warm-up, then the measured phase.
    for (mode, early) in [("committed", false), ("early", true)] {
        for (phase, secs) in [("warm-up", 1), ("measured", secs)] {
            measure(&j, dir.path(), clients, mode, early, phase, secs).await;
        }
    }
}

async fn measure(
    j: &Journal,
    dir: &std::path::Path,
    clients: usize,
    mode: &str,
    early: bool,
    phase: &str,
    secs: u64,
) {
    let t0 = Instant::now();
    let c0 = cpu_ticks();
    let until = t0 + Duration::from_secs(secs);
    let handles: Vec<_> = (0..clients)
        .map(|c| {
            tokio::spawn(client(
                j.clone(),
                format!("{mode}-{phase}"),
                c,
                until,
                early,
            ))
        })
        .collect();
    let mut tasks = 0;
    for h in handles {
        tasks += h.await.expect("client");
    }
    let wall = t0.elapsed().as_secs_f64();
    let cpu_ms = (cpu_ticks() - c0) as f64 * 10.0;
    if phase == "measured" {
        let wal = std::fs::metadata(dir.join("journal.db-wal")).map_or(0, |m| m.len());
        println!(
            "{mode:>9} admission, {clients} clients: {tasks} tasks in {wall:.1} s = {:.0} tasks/s, CPU {:.3} ms/task, WAL {:.1} MiB",
            tasks as f64 / wall,
            cpu_ms / tasks as f64,
            wal as f64 / (1024.0 * 1024.0)
        );
    }
}
