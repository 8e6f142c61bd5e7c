use chrono::{DateTime, Utc};
use sextant_core::a2a::{Message, Part, Role, TaskState};
use sextant_core::{AgentSpec, EventBody};

use super::*;

fn t0() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-11-29T10:00:00Z")
        .unwrap()
        .to_utc()
}

fn msg(id: &str, text: &str) -> Message {
    let mut m = Message::new(Role::User, vec![Part::text(text)]);
    m.message_id = id.into();
    m
}

fn admission(caller: &str, id: &str, text: &str) -> Admission {
    Admission {
        caller: caller.into(),
        caller_kind: "person".into(),
        agent_id: "echo".into(),
        context_id: None,
        task_id: None,
        message: msg(id, text),
        content_hash: sextant_core::ids::sha256_hex(text.as_bytes()),
        input_key: id.into(),
        origin: "a2a".into(),
        at: t0(),
    }
}

async fn journal(dir: &tempfile::TempDir) -> Journal {
    let j = Journal::open(dir.path().join("journal.db")).unwrap();
    j.upsert_agents(vec![AgentSpec::echo()], t0())
        .await
        .unwrap();
    j
}

#[tokio::test]
async fn admission_is_idempotent_on_identical_retries_only() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let first = j
        .admit(admission("alice", "m1", "hi"))
        .await
        .unwrap()
        .unwrap();
    let Admitted::Created {
        task,
        session_created: true,
        event,
    } = first
    else {
        panic!("expected a new task in a new session")
    };
    assert_eq!(event.seq, 1);
    assert_eq!(task.state, TaskState::Submitted);

    let again = j
        .admit(admission("alice", "m1", "hi"))
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(again, Admitted::Duplicate { task: ref t } if t.task_id == task.task_id));

    let changed = j
        .admit(admission("alice", "m1", "different"))
        .await
        .unwrap();
    assert_eq!(
        changed.unwrap_err(),
        Refusal::MessageIdReused {
            task_id: task.task_id.clone()
        }
    );

    // Another caller may use the same messageId: it is their own conversation.
    let bob = j
        .admit(admission("bob", "m1", "hi"))
        .await
        .unwrap()
        .unwrap();
    assert_ne!(bob.task().task_id, task.task_id);
    assert_ne!(bob.task().session_id, task.session_id);
}

#[tokio::test]
async fn contexts_are_scoped_by_caller() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let mut a1 = admission("alice", "m1", "one");
    a1.context_id = Some("ctx".into());
    let mut a2 = admission("alice", "m2", "two");
    a2.context_id = Some("ctx".into());
    let mut b1 = admission("bob", "m3", "three");
    b1.context_id = Some("ctx".into());
    let t1 = j.admit(a1).await.unwrap().unwrap();
    let t2 = j.admit(a2).await.unwrap().unwrap();
    let t3 = j.admit(b1).await.unwrap().unwrap();
    assert_eq!(t1.task().session_id, t2.task().session_id);
    assert!(matches!(
        t2,
        Admitted::Created {
            session_created: false,
            ..
        }
    ));
    assert_ne!(t1.task().session_id, t3.task().session_id);
}

#[tokio::test]
async fn follow_ups_are_checked_against_the_task() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let created = j
        .admit(admission("alice", "m1", "hi"))
        .await
        .unwrap()
        .unwrap();
    let task = created.task().clone();

    let mut other_callers = admission("bob", "m2", "more");
    other_callers.task_id = Some(task.task_id.clone());
    assert_eq!(
        j.admit(other_callers).await.unwrap().unwrap_err(),
        Refusal::TaskNotFound
    );

    let mut mismatch = admission("alice", "m2", "more");
    mismatch.task_id = Some(task.task_id.clone());
    mismatch.context_id = Some("elsewhere".into());
    assert!(matches!(
        j.admit(mismatch).await.unwrap().unwrap_err(),
        Refusal::ContextMismatch { .. }
    ));

    let mut follow = admission("alice", "m2", "more");
    follow.task_id = Some(task.task_id.clone());
    let f = j.admit(follow).await.unwrap().unwrap();
    assert!(matches!(f, Admitted::FollowUp { ref event, .. } if event.seq == 2));

    j.append_one(
        &task.session_id,
        &task.task_id,
        EventBody::TaskState {
            state: TaskState::Completed,
            message: None,
        },
        t0(),
    )
    .await
    .unwrap();
    let mut late = admission("alice", "m3", "late");
    late.task_id = Some(task.task_id.clone());
    assert!(matches!(
        j.admit(late).await.unwrap().unwrap_err(),
        Refusal::TaskTerminal { .. }
    ));

    // A terminal task never changes state again.
    let err = j
        .append_one(
            &task.session_id,
            &task.task_id,
            EventBody::TaskState {
                state: TaskState::Working,
                message: None,
            },
            t0(),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Conflict(_)));
}

#[tokio::test]
async fn events_are_append_only_and_survive_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let task = {
        let j = journal(&dir).await;
        let t = j
            .admit(admission("alice", "m1", "hi"))
            .await
            .unwrap()
            .unwrap()
            .task()
            .clone();
        let err = j
            .read(|c| Ok(c.execute("DELETE FROM events", [])?))
            .await
            .unwrap_err();
        assert!(err.to_string().contains("append-only"), "{err}");
        t
    };
    let j = Journal::open(dir.path().join("journal.db")).unwrap();
    let evs = j.task_events(&task.task_id, 0).await.unwrap();
    assert_eq!(evs.len(), 1);
    assert!(matches!(evs[0].body, EventBody::TaskCreated { .. }));
}

#[tokio::test]
async fn the_task_cache_is_rebuildable_from_the_journal() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    for i in 0..5 {
        let t = j
            .admit(admission("alice", &format!("m{i}"), "x"))
            .await
            .unwrap()
            .unwrap();
        let t = t.task();
        let mut evs = vec![NewEvent {
            task_id: Some(t.task_id.clone()),
            body: EventBody::TaskState {
                state: TaskState::Working,
                message: None,
            },
            at: t0() + chrono::Duration::seconds(i),
        }];
        if i % 2 == 0 {
            evs.push(NewEvent {
                task_id: Some(t.task_id.clone()),
                body: EventBody::TaskState {
                    state: TaskState::Completed,
                    message: None,
                },
                at: t0() + chrono::Duration::seconds(i + 1),
            });
        }
        j.append(&t.session_id, evs).await.unwrap();
    }
    assert_eq!(j.rebuild_check().await.unwrap(), Vec::<String>::new());

    // Corrupt one cached state behind the journal's back: the check finds it.
    let victim = j
        .list_tasks(TaskFilter {
            limit: 1,
            ..Default::default()
        })
        .await
        .unwrap();
    let victim = victim.tasks[0].task_id.clone();
    let v = victim.clone();
    j.read(move |c| {
        Ok(c.execute(
            "UPDATE tasks SET state = 'TASK_STATE_FAILED' WHERE task_id = ?1",
            [v],
        )?)
    })
    .await
    .unwrap();
    assert_eq!(j.rebuild_check().await.unwrap(), vec![victim]);
}

#[tokio::test]
async fn listing_pages_through_tasks_newest_first() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    for i in 0..7 {
        let mut a = admission("alice", &format!("m{i}"), "x");
        a.at = t0() + chrono::Duration::seconds(i);
        j.admit(a).await.unwrap().unwrap();
    }
    j.admit(admission("bob", "b", "x")).await.unwrap().unwrap();
    let mut seen = Vec::new();
    let mut cursor = None;
    loop {
        let page = j
            .list_tasks(TaskFilter {
                caller: Some("alice".into()),
                cursor: cursor.clone(),
                limit: 3,
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(page.total, 7);
        seen.extend(page.tasks.iter().map(|t| t.message_id.clone()));
        match page.next {
            Some(c) => cursor = Some(c),
            None => break,
        }
    }
    assert_eq!(seen, vec!["m6", "m5", "m4", "m3", "m2", "m1", "m0"]);
}

#[tokio::test]
async fn committed_events_are_published_in_seq_order() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let t = j
        .admit(admission("alice", "m1", "hi"))
        .await
        .unwrap()
        .unwrap()
        .task()
        .clone();
    let mut rx = j.hub().subscribe(&t.session_id);
    for state in [TaskState::Working, TaskState::Completed] {
        j.append_one(
            &t.session_id,
            &t.task_id,
            EventBody::TaskState {
                state,
                message: None,
            },
            t0(),
        )
        .await
        .unwrap();
    }
    assert_eq!(rx.recv().await.unwrap().seq, 2);
    assert_eq!(rx.recv().await.unwrap().seq, 3);
}

fn schedule_row(id: &str, next: &str) -> ScheduleRow {
    ScheduleRow {
        schedule_id: id.into(),
        creator: "alice".into(),
        creator_kind: "person".into(),
        creator_principal: "{}".into(),
        name: "n".into(),
        prompt: "p".into(),
        cron: "* * * * *".into(),
        timezone: "UTC".into(),
        agent_id: "echo".into(),
        enabled: true,
        missed_run_policy: "skip".into(),
        missed_run_grace_secs: 3600,
        source: "api".into(),
        created_at: "2026-11-29T10:00:00.000Z".into(),
        updated_at: "2026-11-29T10:00:00.000Z".into(),
        next_fire_at: Some(next.into()),
    }
}

fn cron_run(schedule_id: &str, slot: &str) -> RunRow {
    RunRow {
        run_id: sextant_core::ids::new_id(),
        schedule_id: schedule_id.into(),
        trigger: "cron".into(),
        scheduled_for: slot.into(),
        prompt: "p".into(),
        agent_id: "echo".into(),
        executed_as: "alice".into(),
        record: "pending".into(),
        reason: None,
        session_id: None,
        task_id: None,
        replay_of: None,
        created_at: slot.into(),
        started_at: None,
        finished_at: None,
        task_state: None,
        task_state_at: None,
    }
}

#[tokio::test]
async fn a_slot_is_claimed_once_across_two_journals_on_one_file() {
    let dir = tempfile::tempdir().unwrap();
    let a = journal(&dir).await;
    let b = Journal::open(dir.path().join("journal.db")).unwrap();
    let slot = "2026-11-29T10:01:00.000Z";
    let next = "2026-11-29T10:02:00.000Z";
    a.create_schedule(schedule_row("s1", slot)).await.unwrap();
    let claim = || {
        vec![Claim {
            schedule_id: "s1".into(),
            expected: slot.into(),
            next: Some(next.into()),
            run: Some(cron_run("s1", slot)),
        }]
    };
    let (ra, rb) = tokio::join!(a.claim_slots(claim()), b.claim_slots(claim()));
    let (ra, rb) = (ra.unwrap(), rb.unwrap());
    assert_eq!(ra.len(), 1);
    assert!(ra[0] ^ rb[0], "exactly one claim wins: {ra:?} {rb:?}");
    let (runs, total) = a.runs("s1", None, 10).await.unwrap();
    assert_eq!(total, 1);
    assert_eq!(runs[0].scheduled_for, slot);
    assert_eq!(
        a.schedule("s1")
            .await
            .unwrap()
            .unwrap()
            .next_fire_at
            .as_deref(),
        Some(next)
    );
    // Even with a stale cursor the unique slot index refuses a second cron Run.
    let mut again = schedule_row("s1", slot);
    again.next_fire_at = Some(slot.into());
    assert!(a.update_schedule(again).await.unwrap());
    let won = b
        .claim_slots(vec![Claim {
            schedule_id: "s1".into(),
            expected: slot.into(),
            next: Some(next.into()),
            run: Some(cron_run("s1", slot)),
        }])
        .await
        .unwrap();
    assert_eq!(won, [false]);
    assert_eq!(a.runs("s1", None, 10).await.unwrap().1, 1);
    // Only the creator deletes it, and its Runs go with it.
    assert!(!a.delete_schedule("mallory", "s1").await.unwrap());
    assert!(a.delete_schedule("alice", "s1").await.unwrap());
    assert_eq!(a.runs("s1", None, 10).await.unwrap().1, 0);
}
