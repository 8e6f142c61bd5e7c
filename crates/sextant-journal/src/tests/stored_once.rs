//! What is stored once (#17, bytes per task), and journals written before that read the same.

use super::*;

const AT: &str = "2026-11-29T10:00:00.000Z";

/// Every `task` line of an export of `j`.
async fn exported_tasks(j: &Journal) -> Vec<export::TaskLine> {
    export_lines(&export_text(j).await)
        .into_iter()
        .filter_map(|l| match l {
            export::Line::Task(t) => Some(t),
            _ => None,
        })
        .collect()
}

/// A journal one migration short of the content hash leaving `tasks`, its task written the
/// old way (the hash in both `tasks` and `inputs`), migrates and keeps what the hash is for:
/// an identical retry still finds the task, another message under its key is still refused,
/// and the export still gives the hash, now from `inputs`.
#[tokio::test]
async fn a_journal_with_hashes_in_tasks_migrates_without_losing_one() {
    let dir = tempfile::tempdir().unwrap();
    let hash = sextant_core::ids::sha256_hex(b"hi");
    {
        let c = journal_before(dir.path(), "20261203100000_task_content_hash_once");
        c.execute_batch(&format!(
            "INSERT INTO agents VALUES ('echo', 'Echo', '', 'echo', '{{}}', '{AT}', '{AT}');
             INSERT INTO sessions VALUES ('s', 'echo', 'alice', 'person', 'cx', 'a2a', '{AT}', '{AT}', 2);
             INSERT INTO tasks (task_id, session_id, caller, agent_id, context_id, message_id,
                                content_hash, created_at, state, state_at, last_seq, first_seq,
                                outcome)
             VALUES ('a', 's', 'alice', 'echo', 'cx', 'm1', '{hash}', '{AT}',
                     'TASK_STATE_COMPLETED', '{AT}', 2, 1, 'completed');
             INSERT INTO inputs VALUES ('alice', 'echo', 'm1', 'a', '{hash}', 1);
             INSERT INTO events VALUES ('s', 1, 'a', '{AT}', 'task_created',
               '{{\"type\":\"task_created\",\"message\":{{\"messageId\":\"m1\",\"contextId\":\"cx\",\"taskId\":\"a\",\"role\":\"ROLE_USER\",\"parts\":[{{\"text\":\"hi\"}}]}}}}');
             INSERT INTO events VALUES ('s', 2, 'a', '{AT}', 'task_state',
               '{{\"type\":\"task_state\",\"state\":\"TASK_STATE_COMPLETED\"}}');"
        ))
        .unwrap();
    }
    let j = journal(&dir).await;
    let columns: Vec<String> = j
        .read(|c| {
            Ok(c.prepare("SELECT name FROM pragma_table_info('tasks')")?
                .query_map([], |r| r.get(0))?
                .collect::<rusqlite::Result<_>>()?)
        })
        .await
        .unwrap();
    assert!(!columns.iter().any(|c| c == "content_hash"), "{columns:?}");

    let task = j.task("a").await.unwrap().unwrap();
    assert_eq!(
        (task.state.clone(), task.first_seq, task.message_id.as_str()),
        (TaskState::Completed, 1, "m1")
    );
    let retry = Admission {
        context_id: None,
        ..admission("alice", "m1", "hi")
    };
    match j.admit(retry).await.unwrap() {
        Ok(Admitted::Duplicate { task }) => assert_eq!(task.task_id, "a"),
        other => panic!("an identical retry finds its task: {other:?}"),
    }
    match j.admit(admission("alice", "m1", "not hi")).await.unwrap() {
        Err(Refusal::MessageIdReused { task_id }) => assert_eq!(task_id, "a"),
        other => panic!("another message under the key is refused: {other:?}"),
    }
    assert_eq!(
        exported_tasks(&j).await,
        vec![export::TaskLine {
            task,
            content_hash: Some(hash)
        }]
    );
}

/// A task's content hash is written to `inputs` only, and the export finds each task's own
/// (the input at its first seq, not a later one of the same task).
#[tokio::test]
async fn a_task_s_hash_is_stored_once_and_exported_from_its_first_input() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let a = admitted(&j, admission("alice", "m1", "first")).await;
    let b = admitted(&j, admission("alice", "m2", "second")).await;
    let follow = Admission {
        task_id: Some(a.task_id.clone()),
        context_id: Some(a.context_id.clone()),
        ..admission("alice", "m3", "later")
    };
    assert!(matches!(
        j.admit(follow).await.unwrap(),
        Ok(Admitted::FollowUp { .. })
    ));
    let hashes: Vec<String> = j
        .read(|c| {
            Ok(
                c.prepare("SELECT content_hash FROM inputs ORDER BY input_key")?
                    .query_map([], |r| r.get(0))?
                    .collect::<rusqlite::Result<_>>()?,
            )
        })
        .await
        .unwrap();
    let h = |t: &str| sextant_core::ids::sha256_hex(t.as_bytes());
    assert_eq!(hashes, [h("first"), h("second"), h("later")]);

    let mut got: Vec<(TaskId, Option<String>)> = exported_tasks(&j)
        .await
        .into_iter()
        .map(|t| (t.task.task_id, t.content_hash))
        .collect();
    got.sort();
    let mut want = vec![
        (a.task_id.clone(), Some(h("first"))),
        (b.task_id.clone(), Some(h("second"))),
    ];
    want.sort();
    assert_eq!(got, want);
}

/// The export's join of tasks to their first inputs uses an index SQLite builds for it, not a
/// scan of `inputs` per task (which grows with the square of the journal).
#[tokio::test]
async fn the_export_s_task_query_does_not_scan_inputs_per_task() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let plan: Vec<String> = j
        .read(|c| {
            Ok(
                c.prepare(&format!("EXPLAIN QUERY PLAN {}", export::tasks_sql()))?
                    .query_map([], |r| r.get(3))?
                    .collect::<rusqlite::Result<_>>()?,
            )
        })
        .await
        .unwrap();
    assert!(plan.iter().any(|p| p.contains("AUTOMATIC")), "{plan:#?}");
}

/// Every event of an export of `j`.
async fn exported_events(j: &Journal) -> Vec<JournalEvent> {
    export_lines(&export_text(j).await)
        .into_iter()
        .filter_map(|l| match l {
            export::Line::Event(e) => Some(e),
            _ => None,
        })
        .collect()
}

/// The stored bodies of the journal's input events, in order.
async fn input_bodies(j: &Journal) -> Vec<String> {
    j.read(|c| {
        Ok(c.prepare(
            "SELECT body FROM events WHERE kind IN ('task_created', 'input_accepted')
             ORDER BY session_id, seq",
        )?
        .query_map([], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?)
    })
    .await
    .unwrap()
}

/// The message of an input event.
fn input(ev: &JournalEvent) -> &Message {
    match &ev.body {
        EventBody::TaskCreated { message } | EventBody::InputAccepted { message } => message,
        other => panic!("not an input: {other:?}"),
    }
}

/// An input's message is stored without the taskId and contextId its row and Session hold,
/// and every reader gets it back whole: a task's events, a Session's, the export, and the
/// event handed out at admission, all equal.
#[tokio::test]
async fn an_input_is_stored_without_its_ids_and_read_back_with_them() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let Admitted::Created { task, event, .. } = j
        .admit(admission("alice", "m1", "hi"))
        .await
        .unwrap()
        .unwrap()
    else {
        panic!("a new task")
    };
    let follow = Admission {
        task_id: Some(task.task_id.clone()),
        context_id: Some(task.context_id.clone()),
        ..admission("alice", "m2", "again")
    };
    let Admitted::FollowUp { event: event2, .. } = j.admit(follow).await.unwrap().unwrap() else {
        panic!("a follow-up")
    };
    for ev in [&event, &event2] {
        let m = input(ev);
        assert_eq!(m.task_id.as_deref(), Some(task.task_id.as_str()));
        assert_eq!(m.context_id.as_deref(), Some(task.context_id.as_str()));
    }

    let bodies = input_bodies(&j).await;
    assert_eq!(bodies.len(), 2);
    for b in &bodies {
        assert!(!b.contains(task.task_id.as_str()), "{b}");
        assert!(!b.contains(task.context_id.as_str()), "{b}");
        assert!(!b.contains("taskId") && !b.contains("contextId"), "{b}");
    }

    let want = vec![(*event).clone(), (*event2).clone()];
    let of_task = j.task_events(&task.task_id, 0).await.unwrap();
    assert_eq!(of_task, want);
    let of_session = j.session_events(&task.session_id, 0, 100).await.unwrap();
    assert_eq!(of_session, want);
    assert_eq!(exported_events(&j).await, want);
}

/// Bodies written before the ids were left out (they carry both) read as they were, and the
/// same as the bodies written now: a journal with one of each reads both whole.
#[tokio::test]
async fn old_input_bodies_with_their_ids_read_the_same_as_new_ones() {
    let dir = tempfile::tempdir().unwrap();
    {
        let c = journal_before(dir.path(), "20261203100000_task_content_hash_once");
        c.execute_batch(&format!(
            "INSERT INTO agents VALUES ('echo', 'Echo', '', 'echo', '{{}}', '{AT}', '{AT}');
             INSERT INTO sessions VALUES ('s', 'echo', 'alice', 'person', 'cx', 'a2a', '{AT}', '{AT}', 1);
             INSERT INTO tasks (task_id, session_id, caller, agent_id, context_id, message_id,
                                content_hash, created_at, state, state_at, last_seq, first_seq)
             VALUES ('old', 's', 'alice', 'echo', 'cx', 'm1', 'h', '{AT}', 'TASK_STATE_SUBMITTED',
                     '{AT}', 1, 1);
             INSERT INTO inputs VALUES ('alice', 'echo', 'm1', 'old', 'h', 1);
             INSERT INTO events VALUES ('s', 1, 'old', '{AT}', 'task_created',
               '{{\"type\":\"task_created\",\"message\":{{\"messageId\":\"m1\",\"contextId\":\"cx\",\"taskId\":\"old\",\"role\":\"ROLE_USER\",\"parts\":[{{\"text\":\"hi\"}}]}}}}');"
        ))
        .unwrap();
    }
    let j = journal(&dir).await;
    // A new task in the same Session (its contextId), stored the new way.
    let new = admitted(
        &j,
        Admission {
            context_id: Some("cx".into()),
            ..admission("alice", "m2", "hi")
        },
    )
    .await;
    assert_eq!(new.session_id, "s");
    let bodies = input_bodies(&j).await;
    assert!(bodies[0].contains("\"taskId\":\"old\""), "{}", bodies[0]);
    assert!(!bodies[1].contains("taskId"), "{}", bodies[1]);

    let evs = j.session_events("s", 0, 100).await.unwrap();
    assert_eq!(evs.len(), 2);
    for (ev, (id, message_id)) in evs
        .iter()
        .zip([("old", "m1"), (new.task_id.as_str(), "m2")])
    {
        let mut want = msg(message_id, "hi");
        want.task_id = Some(id.to_string());
        want.context_id = Some("cx".into());
        assert_eq!(input(ev), &want);
        assert_eq!(j.task_events(id, 0).await.unwrap(), vec![ev.clone()]);
    }
    assert_eq!(exported_events(&j).await, evs);
}
