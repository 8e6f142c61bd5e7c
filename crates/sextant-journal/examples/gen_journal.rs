//! Builds a large journal for the journal-size benchmark (`JOURNAL=… bench/run.sh`), through the
//! journal's own writer, so the file is exactly what a long-running Sextant would hold: each
//! task is an echo task of the benchmark's caller (`task_created` in a new Session, the
//! turn's start, its output and `completed`: four events), with `EXTRA` more output chunks
//! per task for long histories. The WAL is checkpointed into the file at the end.
//!
//! ```text
//! cargo run --release -p sextant-journal --example gen_journal -- PATH TASKS [EXTRA]
//! # 1 M tasks (4 M events):             … -- /tmp/big/journal.db 1000000
//! # 10 M events (500 k tasks of 20):    … -- /tmp/ev/journal.db 500000 16
//! ```
//!
//! The tasks belong to `anonymous-local:loopback:anonymous` on the `echo` Agent, the caller
//! and Agent `bench/run.sh` drives, so its requests run against the largest possible share of
//! the journal. It prints progress every 100,000 tasks and the file sizes at the end.

use std::time::Instant;

use chrono::Utc;
use sextant_core::a2a::{Artifact, Message, Part, Role, TaskState};
use sextant_core::{AgentSpec, EventBody};
use sextant_journal::{Admission, Journal, NewEvent, TurnGuard};

const CALLERS: u64 = 32;

fn admission(n: u64) -> Admission {
    let id = format!("gen-{n}");
    let mut message = Message::new(Role::User, vec![Part::text("hello from wrk")]);
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

fn chunk(append: bool, last: bool, id: &str) -> EventBody {
    EventBody::Artifact {
        artifact: Artifact {
            artifact_id: id.to_string(),
            name: Some("echo".into()),
            description: None,
            parts: vec![Part::text("hello from wrk")],
            metadata: None,
            extensions: None,
        },
        append,
        last_chunk: last,
    }
}

async fn caller(j: Journal, who: u64, tasks: u64, extra: u64) {
    let mut n = who;
    while n < tasks {
        let admitted = match j.admit_early(admission(n)).await {
            Ok((Ok(a), _live)) => a,
            Ok((Err(refusal), _)) => panic!("admission refused: {refusal:?}"),
            Err(e) => panic!("admission failed: {e}"),
        };
        let task = admitted.task().clone();
        let (sid, tid) = (task.session_id.as_str(), task.task_id.as_str());
        let guard = TurnGuard::default();
        let artifact_id = sextant_core::ids::new_id();
        let mut events = vec![event(
            tid,
            EventBody::TurnStarted {
                through: Some(1),
                working: true,
            },
        )];
        for i in 0..=extra {
            events.push(event(tid, chunk(i > 0, i == extra, &artifact_id)));
        }
        events.push(event(
            tid,
            EventBody::TaskState {
                state: TaskState::Completed,
                message: None,
            },
        ));
        let pending: Vec<_> = events
            .into_iter()
            .map(|e| j.submit_append(sid, vec![e], Some(guard.clone())))
            .collect();
        for p in pending {
            p.wait().await.expect("append failed");
        }
        if n.is_multiple_of(100_000) {
            eprintln!("gen_journal: {n} tasks");
        }
        n += CALLERS;
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let mut args = std::env::args().skip(1);
    let path = args.next().expect("usage: gen_journal PATH TASKS [EXTRA]");
    let tasks: u64 = args.next().and_then(|a| a.parse().ok()).expect("TASKS");
    let extra: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(0);
    let path = std::path::PathBuf::from(path);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).expect("create the journal's directory");
    }
    let j = Journal::open(&path).expect("journal");
    j.upsert_agents(vec![AgentSpec::echo()], Utc::now())
        .await
        .expect("agents");
    let t0 = Instant::now();
    let handles: Vec<_> = (0..CALLERS)
        .map(|c| tokio::spawn(caller(j.clone(), c, tasks, extra)))
        .collect();
    for h in handles {
        h.await.expect("caller");
    }
    drop(j);
    let c = rusqlite::Connection::open(&path).expect("reopen the journal");
    c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
        .expect("checkpoint");
    drop(c);
    let size = |p: &std::path::Path| std::fs::metadata(p).map_or(0, |m| m.len());
    let wal = path.with_extension("db-wal");
    println!(
        "gen_journal: {tasks} tasks of {} events in {:.0} s; journal {:.0} MiB, WAL {:.1} MiB",
        4 + extra,
        t0.elapsed().as_secs_f64(),
        size(&path) as f64 / 1048576.0,
        size(&wal) as f64 / 1048576.0
    );
}
