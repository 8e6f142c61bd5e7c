//! What is stored once (#17, bytes per task), and journals written before that read the same.

use super::*;

const AT: &str = "2026-11-29T10:00:00.000Z";

/// Every `task` line of an export of `j`.
async fn exported_tasks(j: &Journal) -> Vec<export::TaskLine> {
    let path = j.path().to_path_buf();
    let bytes = tokio::task::spawn_blocking(move || {
        let c = export::open_for_export(&path).unwrap();
        let version = export::schema_version(&c).unwrap();
        let mut w = export::Writer::new(Vec::new(), version, t0()).unwrap();
        export::write(&c, &mut w).unwrap();
        w.finish().unwrap().0
    })
    .await
    .unwrap();
    String::from_utf8(bytes)
        .unwrap()
        .lines()
        .filter_map(|l| match serde_json::from_str(l).unwrap() {
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

    let mut got: Vec<(String, Option<String>)> = exported_tasks(&j)
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
