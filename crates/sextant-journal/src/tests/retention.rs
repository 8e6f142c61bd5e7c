//! Retention: what goes, what stays, and that what stays is whole.

use std::collections::BTreeSet;

use super::*;
use crate::export::Line;
use crate::retention::{Plan, Policy};

fn days(n: i64) -> chrono::Duration {
    chrono::Duration::days(n)
}

/// An admission of alice's at `at`, in context `cx` if given.
fn at(id: &str, cx: Option<&str>, when: DateTime<Utc>) -> Admission {
    Admission {
        context_id: cx.map(Into::into),
        at: when,
        ..admission("alice", id, &format!("text of {id}"))
    }
}

/// A task admitted at `when` and completed a second later, with an output (so it has
/// full-text rows).
async fn done(j: &Journal, id: &str, cx: Option<&str>, when: DateTime<Utc>) -> TaskRow {
    let t = admitted(j, at(id, cx, when)).await;
    // Long enough that the Sessions, not the schema, make most of a small journal's pages.
    let text = format!("an answer to {id} ").repeat(100);
    let reply = sextant_core::a2a::Message::new(Role::Agent, vec![Part::text(text)]);
    j.append(
        &t.session_id,
        vec![
            NewEvent {
                task_id: Some(t.task_id.to_string()),
                body: EventBody::Reply { message: reply },
                at: when + chrono::Duration::seconds(1),
            },
            NewEvent {
                task_id: Some(t.task_id.to_string()),
                body: EventBody::TaskState {
                    state: TaskState::Completed,
                    message: None,
                },
                at: when + chrono::Duration::seconds(1),
            },
        ],
    )
    .await
    .unwrap();
    t
}

/// A Run of `schedule` that started `task`.
fn started_run(schedule: &str, task: &TaskRow, when: &str) -> RunRow {
    RunRow {
        record: RunRecord::Started,
        session_id: Some(task.session_id.clone()),
        task_id: Some(task.task_id.clone()),
        trigger: RunTrigger::Manual,
        ..cron_run(schedule, when)
    }
}

async fn count(j: &Journal, sql: &'static str) -> i64 {
    j.read(move |c| Ok(c.query_row(sql, [], |r| r.get(0))?))
        .await
        .unwrap()
}

/// Every check that the journal is whole: SQLite's own, the tallies against the rows, the
/// task cache against the events, no marker left, no row of a missing task or Session.
async fn assert_whole(j: &Journal) {
    // On a connection of its own: FTS5's check on a reader that read the index before the
    // last commit can compare against its cached structure and report a mismatch that is
    // not there (seen without any retention, after a push config was stored).
    let c = rusqlite::Connection::open(j.path()).unwrap();
    let integrity: String = c
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    let fk = c
        .prepare("PRAGMA foreign_key_check")
        .unwrap()
        .query_map([], |_| Ok(()))
        .unwrap()
        .count();
    drop(c);
    assert_eq!(integrity, "ok");
    assert_eq!(fk, 0, "foreign key violations");
    let off = count(
        j,
        "SELECT COUNT(*) FROM (SELECT caller, agent_id, state, COUNT(*) AS n FROM tasks
          GROUP BY 1, 2, 3) t
         FULL JOIN (SELECT * FROM task_tally WHERE n <> 0) y
           USING (caller, agent_id, state)
         WHERE t.n IS NOT y.n",
    )
    .await;
    assert_eq!(off, 0, "task_tally differs from the tasks");
    let off = count(
        j,
        "SELECT COUNT(*) FROM (SELECT caller, COUNT(*) AS n FROM sessions GROUP BY 1) s
         FULL JOIN (SELECT * FROM session_tally WHERE n <> 0) y USING (caller)
         WHERE s.n IS NOT y.n",
    )
    .await;
    assert_eq!(off, 0, "session_tally differs from the sessions");
    assert!(j.rebuild_check().await.unwrap().is_empty());
    for orphan in [
        "SELECT COUNT(*) FROM retention_marker",
        "SELECT COUNT(*) FROM task_text WHERE task_id NOT IN (SELECT task_id FROM tasks)",
        "SELECT COUNT(*) FROM task_text_pending WHERE task_id NOT IN (SELECT task_id FROM tasks)",
        "SELECT COUNT(*) FROM push_outbox WHERE task_id NOT IN (SELECT task_id FROM tasks)",
        "SELECT COUNT(*) FROM runs WHERE session_id IS NOT NULL
           AND session_id NOT IN (SELECT session_id FROM sessions)",
        "SELECT COUNT(*) FROM tasks t WHERE NOT EXISTS (SELECT 1 FROM events e
           WHERE e.session_id = t.session_id AND e.seq = t.first_seq)",
    ] {
        assert_eq!(count(j, orphan).await, 0, "{orphan}");
    }
}

/// What ListTasks answers for alice on echo: its total and the ids of every task.
async fn listed(j: &Journal) -> (u64, BTreeSet<TaskId>) {
    let page = j
        .list_tasks(TaskFilter {
            caller: Some("alice".into()),
            agent_id: Some("echo".into()),
            limit: 1000,
            ..TaskFilter::default()
        })
        .await
        .unwrap();
    let ids = page.tasks.iter().map(|t| t.task_id.clone()).collect();
    (page.total, ids)
}

fn read_export(path: &std::path::Path) -> Vec<Line> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Line>(l).unwrap())
        .collect()
}

/// Old Sessions go whole and are in the export; a Session with a task still running, one
/// with a decision waiting, one still owed push deliveries, a schedule's latest Run's and the
/// recent ones stay; the journal stays whole and its counts exact.
#[tokio::test]
async fn old_sessions_go_and_pending_work_and_latest_runs_stay() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let old = t0();
    let now = t0() + days(30);
    let gone_a = done(&j, "a", None, old).await;
    // Two tasks in one Session: both go with it.
    let gone_b1 = done(&j, "b1", Some("cx-b"), old).await;
    let gone_b2 = done(&j, "b2", Some("cx-b"), old).await;
    assert_eq!(gone_b1.session_id, gone_b2.session_id);
    let running = admitted(&j, at("live", None, old)).await;
    let waiting = admitted(&j, at("ask", None, old)).await;
    j.append(&waiting.session_id, vec![raised(&waiting, 1)])
        .await
        .unwrap();
    // Push deliveries still owed: queued while the task ran, never delivered.
    let pushed = admitted(&j, at("push", None, old)).await;
    j.put_push_config(config(&pushed.task_id, "c1"))
        .await
        .unwrap();
    j.append(
        &pushed.session_id,
        vec![state(&pushed, TaskState::Completed, 2)],
    )
    .await
    .unwrap();
    // A schedule's two Runs: the earlier one's Session goes, the latest one's stays.
    j.create_schedule(schedule_row("s1", "2026-12-01T00:00:00.000Z"))
        .await
        .unwrap();
    let run_old = done(&j, "r1", None, old).await;
    let run_latest = done(&j, "r2", None, old + chrono::Duration::hours(1)).await;
    j.insert_run(started_run("s1", &run_old, "2026-11-29T10:00:00.000Z"))
        .await
        .unwrap();
    j.insert_run(started_run("s1", &run_latest, "2026-11-29T11:00:00.000Z"))
        .await
        .unwrap();
    // A third Run's Session, old and not latest, stays while its end is not recorded; the
    // first one's end is.
    j.create_schedule(schedule_row("s2", "2026-12-01T00:00:00.000Z"))
        .await
        .unwrap();
    let unsettled = done(&j, "r3", None, old).await;
    j.insert_run(started_run("s2", &unsettled, "2026-11-29T10:00:00.000Z"))
        .await
        .unwrap();
    let newer = done(&j, "r4", None, old + chrono::Duration::hours(2)).await;
    j.insert_run(started_run("s2", &newer, "2026-11-29T12:00:00.000Z"))
        .await
        .unwrap();
    for t in [&run_old, &newer] {
        let run = j.run_by_task(&t.task_id).await.unwrap().unwrap();
        j.settle_run(
            &run.run_id,
            sextant_core::RunOutcome::Succeeded,
            None,
            sextant_core::ids::parse_time("2026-11-29T12:00:00.000Z").unwrap(),
            |_| String::new(),
        )
        .await
        .unwrap();
    }
    let recent = done(&j, "new", None, now - days(2)).await;

    let policy = Policy {
        keep_days: Some(7),
        keep_bytes: None,
    };
    let plan: Plan = j.retention_plan(policy.clone(), now).await.unwrap();
    let planned: BTreeSet<_> = plan
        .candidates
        .iter()
        .map(|c| c.session_id.clone())
        .collect();
    let gone_sessions: BTreeSet<_> = [&gone_a, &gone_b1, &run_old]
        .iter()
        .map(|t| t.session_id.to_string())
        .collect();
    assert_eq!(planned, gone_sessions);
    assert_eq!(plan.tasks(), 4);
    assert_eq!(
        plan.kept, 6,
        "running, waiting, pushed, two latest Runs, an unsettled Run"
    );
    // A plan deletes nothing.
    assert!(j.task(&gone_a.task_id).await.unwrap().is_some());

    let file = dir.path().join("retention/deleted.jsonl");
    let report = j
        .retain(policy.clone(), now, Some(file.clone()))
        .await
        .unwrap();
    assert_eq!((report.sessions, report.tasks), (3, 4));
    assert_eq!(report.export.as_deref(), Some(file.as_path()));
    for t in [&gone_a, &gone_b1, &gone_b2, &run_old] {
        assert!(j.task(&t.task_id).await.unwrap().is_none(), "{}", t.task_id);
        assert!(j.session(&t.session_id).await.unwrap().is_none());
        assert!(j.task_events(&t.task_id, 0).await.unwrap().is_empty());
    }
    for t in [
        &running,
        &waiting,
        &pushed,
        &run_latest,
        &unsettled,
        &newer,
        &recent,
    ] {
        assert!(j.task(&t.task_id).await.unwrap().is_some(), "{}", t.task_id);
        assert!(!j.task_events(&t.task_id, 0).await.unwrap().is_empty());
    }
    assert!(j.run_by_task(&run_old.task_id).await.unwrap().is_none());
    assert!(j.run_by_task(&run_latest.task_id).await.unwrap().is_some());
    let (total, ids) = listed(&j).await;
    assert_eq!(total, 7);
    assert_eq!(ids.len(), 7);
    assert_whole(&j).await;
    // The deleted inputs are forgotten: the same messageId is a new task now.
    let again = admitted(&j, at("a", None, now)).await;
    assert_ne!(again.task_id, gone_a.task_id);

    // The export holds exactly what was deleted, and parses.
    let lines = read_export(&file);
    assert!(matches!(lines.first(), Some(Line::Header(_))));
    let Some(Line::End(end)) = lines.last() else {
        panic!("no end line");
    };
    let sessions: BTreeSet<_> = lines
        .iter()
        .filter_map(|l| match l {
            Line::Session(s) => Some(s.session_id.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(sessions, gone_sessions);
    // Each task line carries the content hash of the input that created it (read from
    // `inputs` before that row went with the task).
    for l in &lines {
        if let Line::Task(t) = l {
            let text = format!("text of {}", t.task.message_id);
            let want = sextant_core::ids::sha256_hex(text.as_bytes());
            assert_eq!(t.content_hash.as_deref(), Some(want.as_str()), "{t:?}");
        }
    }
    assert_eq!(end.counts.get("task"), Some(&4));
    assert_eq!(end.counts.get("run"), Some(&1));
    assert_eq!(end.counts.get("event").copied(), Some(report.events));

    // Nothing more goes, and an ordinary DELETE is still refused.
    let again = j.retain(policy, now, None).await.unwrap();
    assert_eq!(again.sessions, 0);
    let err = j
        .read(|c| Ok(c.execute("DELETE FROM events", [])?))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("append-only"), "{err}");
    let err = j
        .read(move |c| {
            Ok(c.execute(
                "DELETE FROM events WHERE session_id = ?1",
                [recent.session_id.as_str()],
            )?)
        })
        .await
        .unwrap_err();
    assert!(err.to_string().contains("append-only"), "{err}");
}

/// A policy that is off deletes nothing, however old the journal.
#[tokio::test]
async fn no_policy_deletes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    done(&j, "a", None, t0()).await;
    let r = j
        .retain(Policy::default(), t0() + days(3650), None)
        .await
        .unwrap();
    assert_eq!(r.sessions, 0);
    assert_eq!(count(&j, "SELECT COUNT(*) FROM tasks").await, 1);
}

/// An export that cannot be written, or a batch that cannot commit, deletes nothing, and the
/// export keeps no line of what was not deleted.
#[tokio::test]
async fn a_failing_export_or_batch_deletes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    for i in 0..3 {
        done(&j, &format!("m{i}"), None, t0()).await;
    }
    let policy = Policy {
        keep_days: Some(1),
        keep_bytes: None,
    };
    let now = t0() + days(10);
    // The export's directory is a file: the export cannot be created.
    std::fs::write(dir.path().join("blocked"), "").unwrap();
    let err = j
        .retain(
            policy.clone(),
            now,
            Some(dir.path().join("blocked/x.jsonl")),
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("export"), "{err}");
    assert_eq!(count(&j, "SELECT COUNT(*) FROM tasks").await, 3);

    // The export is written, then the delete fails: the batch rolls back and its lines go.
    let side = rusqlite::Connection::open(dir.path().join("journal.db")).unwrap();
    side.execute_batch(
        "CREATE TRIGGER no_delete BEFORE DELETE ON sessions BEGIN SELECT RAISE(ABORT, 'no'); END",
    )
    .unwrap();
    let file = dir.path().join("retention/x.jsonl");
    assert!(
        j.retain(policy.clone(), now, Some(file.clone()))
            .await
            .is_err()
    );
    assert_eq!(count(&j, "SELECT COUNT(*) FROM tasks").await, 3);
    assert_eq!(count(&j, "SELECT COUNT(*) FROM events").await, 9);
    let lines = read_export(&file);
    assert_eq!(lines.len(), 2, "header and end only: {lines:?}");
    assert_whole(&j).await;

    side.execute_batch("DROP TRIGGER no_delete").unwrap();
    let r = j.retain(policy, now, None).await.unwrap();
    assert_eq!(r.sessions, 3);
    assert_whole(&j).await;
    // The deletes ran with foreign keys off; the writer's next writes have them on again.
    let orphan = j
        .call(|c| {
            Ok(c.execute(
                "INSERT INTO inputs VALUES ('alice', 'echo', 'k', 'no-such-task', 'h', 1)",
                [],
            )?)
        })
        .await;
    assert!(orphan.is_err(), "{orphan:?}");
}

/// With a size limit the oldest Sessions go first, until the estimate is under it.
#[tokio::test]
async fn a_size_limit_deletes_the_oldest_first() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let mut tasks = Vec::new();
    for i in 0..40 {
        tasks.push(
            done(
                &j,
                &format!("m{i}"),
                None,
                t0() + chrono::Duration::minutes(i),
            )
            .await,
        );
    }
    let now = t0() + days(1);
    let used = j
        .retention_plan(Policy::default(), now)
        .await
        .unwrap()
        .used_bytes;
    let policy = Policy {
        keep_days: None,
        keep_bytes: Some(used - used / 4),
    };
    let r = j.retain(policy, now, None).await.unwrap();
    assert!(r.sessions > 0 && r.sessions < 40, "{r:?}");
    let n = r.sessions as usize;
    for (i, t) in tasks.iter().enumerate() {
        assert_eq!(
            j.task(&t.task_id).await.unwrap().is_none(),
            i < n,
            "task {i}"
        );
    }
    assert_whole(&j).await;
}

/// In incremental auto-vacuum mode the freed pages go back to the file system.
#[tokio::test]
async fn freed_pages_are_given_back_in_incremental_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.db");
    {
        let j = journal(&dir).await;
        for i in 0..200 {
            done(&j, &format!("m{i}"), None, t0()).await;
        }
    }
    assert!(crate::retention::convert_to_incremental(&path).unwrap());
    assert!(!crate::retention::convert_to_incremental(&path).unwrap());
    let j = Journal::open(&path).unwrap();
    let policy = Policy {
        keep_days: Some(1),
        keep_bytes: None,
    };
    let r = j.retain(policy, t0() + days(2), None).await.unwrap();
    assert_eq!(r.sessions, 200);
    let rec = r.reclaimed.unwrap();
    assert_eq!(rec.auto_vacuum, 2);
    assert!(rec.pages > 0, "{rec:?}");
    assert_eq!(rec.free_pages, 0);
    assert!(r.used_after < r.used_before);
    assert_whole(&j).await;
}

/// The marker lets a DELETE of events through for the Session it names only, and a Session
/// that changed after the plan is left alone by its batch.
#[tokio::test]
async fn the_marker_opens_one_session_and_changed_sessions_stay() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let a = done(&j, "a", Some("cx-a"), t0()).await;
    let b = done(&j, "b", None, t0()).await;
    let (sa, sb) = (a.session_id.clone(), b.session_id.clone());
    let refused = j
        .read(move |c| {
            let tx = c.unchecked_transaction()?;
            tx.execute(
                "INSERT INTO retention_marker (one, session_id) VALUES (1, ?1)",
                [sa.as_str()],
            )?;
            let other = tx.execute("DELETE FROM events WHERE session_id = ?1", [sb.as_str()]);
            let own = tx.execute("DELETE FROM events WHERE session_id = ?1", [sa.as_str()]);
            // Rolled back: this connection is a reader's.
            drop(tx);
            Ok((other.is_err(), own.map_err(|e| e.to_string())))
        })
        .await
        .unwrap();
    assert!(refused.0, "the marker must not open another Session");
    assert_eq!(refused.1, Ok(3));

    let now = t0() + days(10);
    let policy = Policy {
        keep_days: Some(1),
        keep_bytes: None,
    };
    let plan = j.retention_plan(policy, now).await.unwrap();
    assert_eq!(plan.candidates.len(), 2);
    // A new task in a's Session after the plan: a's batch must keep it.
    done(&j, "a2", Some("cx-a"), now).await;
    let batch = plan.candidates.clone();
    let d = j
        .call_alone(move |c| crate::retention::delete_batch(c, &batch, None))
        .await
        .unwrap();
    assert_eq!((d.sessions, d.changed), (1, 1));
    assert!(j.task(&a.task_id).await.unwrap().is_some());
    assert!(j.task(&b.task_id).await.unwrap().is_none());
    assert_whole(&j).await;
}

/// Retention's lone writes interleave with the group commits of live admissions: every
/// admission made meanwhile is committed and kept, and every old Session goes.
#[tokio::test]
async fn retention_runs_beside_live_writes() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let mut old = Vec::new();
    for i in 0..300 {
        old.push(done(&j, &format!("old{i}"), None, t0()).await);
    }
    let now = t0() + days(10);
    let policy = Policy {
        keep_days: Some(1),
        keep_bytes: None,
    };
    let live: Vec<_> = (0..300)
        .map(|i| {
            let j = j.clone();
            tokio::spawn(async move { done(&j, &format!("new{i}"), None, now).await })
        })
        .collect();
    let report = j.retain(policy, now, None).await.unwrap();
    assert_eq!(report.sessions, 300);
    for h in live {
        let t = h.await.unwrap();
        assert!(j.task(&t.task_id).await.unwrap().is_some());
    }
    for t in &old {
        assert!(j.task(&t.task_id).await.unwrap().is_none());
    }
    assert_eq!(count(&j, "SELECT COUNT(*) FROM tasks").await, 300);
    assert_whole(&j).await;
}
