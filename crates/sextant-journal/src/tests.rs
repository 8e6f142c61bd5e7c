use chrono::{DateTime, Utc};
use sextant_core::a2a::{Message, Part, Role, TaskState};
use sextant_core::ids::{RunId, ScheduleId, SessionId, TaskId};
use sextant_core::schedule::{MissedRunPolicy, RunOutcome, RunRecord, RunTrigger};
use sextant_core::{AgentSpec, CallerKey, EventBody};

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
        caller: CallerKey::from_stored(caller),
        caller_kind: sextant_core::PrincipalKind::Person,
        agent_id: "echo".into(),
        context_id: None,
        task_id: None,
        message: msg(id, text),
        content_hash: sextant_core::ids::sha256_hex(text.as_bytes()),
        input_key: id.into(),
        origin: sextant_core::Origin::A2a,
        max_active_tasks: None,
        max_context_inputs: None,
        push_config: None,
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
            task_id: task.task_id.to_string()
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
            task_id: Some(t.task_id.to_string()),
            body: EventBody::TaskState {
                state: TaskState::Working,
                message: None,
            },
            at: t0() + chrono::Duration::seconds(i),
        }];
        if i % 2 == 0 {
            evs.push(NewEvent {
                task_id: Some(t.task_id.to_string()),
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
            [v.as_str()],
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
    let t = admitted(&j, admission("alice", "m1", "hi")).await;
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
        creator: CallerKey::from_stored("alice"),
        creator_kind: sextant_core::PrincipalKind::Person,
        creator_principal: "{}".into(),
        name: "n".into(),
        prompt: "p".into(),
        cron: "* * * * *".into(),
        timezone: "UTC".into(),
        agent_id: "echo".into(),
        enabled: true,
        missed_run_policy: MissedRunPolicy::Skip,
        missed_run_grace_secs: 3600,
        source: sextant_core::ScheduleSource::Api,
        created_at: t("2026-11-29T10:00:00.000Z"),
        updated_at: t("2026-11-29T10:00:00.000Z"),
        next_fire_at: Some(t(next)),
        overlap_policy: sextant_core::OverlapPolicy::Skip,
        jitter_secs: 0,
        pause_after_failures: None,
        consecutive_failures: 0,
        paused_reason: None,
        paused_at: None,
        once_at: None,
        source_principal: None,
        editors: Vec::new(),
        due_at: Some(t(next)),
    }
}

/// A time in the stored format, parsed.
fn t(s: &str) -> DateTime<Utc> {
    sextant_core::ids::parse_time(s).unwrap()
}

fn cron_run(schedule_id: &str, slot: &str) -> RunRow {
    RunRow {
        run_id: RunId::new(),
        schedule_id: schedule_id.into(),
        trigger: RunTrigger::Cron,
        scheduled_for: t(slot),
        prompt: "p".into(),
        agent_id: "echo".into(),
        executed_as: CallerKey::from_stored("alice"),
        record: RunRecord::Pending,
        reason: None,
        session_id: None,
        task_id: None,
        replay_of: None,
        created_at: t(slot),
        started_at: None,
        finished_at: None,
        task_state: None,
        task_state_at: None,
        overlap_policy: None,
        jitter_secs: None,
        outcome: None,
        result: None,
        settled_at: None,
    }
}

/// The text columns of a stored Run that [`RunRow`] types.
fn run_text(c: &rusqlite::Connection, run_id: &str) -> Vec<Option<String>> {
    c.query_row(
        "SELECT trigger, scheduled_for, record, created_at, started_at, finished_at,
                overlap_policy
         FROM runs WHERE run_id = ?1",
        [run_id],
        |r| (0..7).map(|i| r.get(i)).collect(),
    )
    .unwrap()
}

#[tokio::test]
async fn run_rows_in_the_stored_format_read_typed_and_write_back_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    for id in ["s1", "s2"] {
        j.create_schedule(schedule_row(id, "2026-11-29T10:01:00.000Z"))
            .await
            .unwrap();
    }
    // As a journal written before rows were typed holds it: plain text columns.
    let c = rusqlite::Connection::open(j.path()).unwrap();
    c.execute(
        "INSERT INTO runs (run_id, schedule_id, trigger, scheduled_for, prompt, agent_id,
             executed_as, record, reason, created_at, started_at, finished_at, settled_at,
             overlap_policy, outcome)
         VALUES ('old', 's1', 'catchup', '2026-11-29T10:01:00.000Z', 'p', 'echo', 'alice',
             'missed', 'late', '2026-11-29T10:05:00.123Z', NULL, '2026-11-29T10:05:00.123Z',
             '2026-11-29T10:05:01.000Z', 'buffer_one', 'canceled')",
        [],
    )
    .unwrap();
    let run = j.run("old").await.unwrap().unwrap();
    assert_eq!(run.trigger, RunTrigger::Catchup);
    assert_eq!(run.record, RunRecord::Missed);
    assert_eq!(run.scheduled_for, t("2026-11-29T10:01:00.000Z"));
    assert_eq!(run.created_at, t("2026-11-29T10:05:00.123Z"));
    assert_eq!(run.started_at, None);
    assert_eq!(run.finished_at, Some(t("2026-11-29T10:05:00.123Z")));
    assert_eq!(run.settled_at, Some(t("2026-11-29T10:05:01.000Z")));
    assert_eq!(
        run.overlap_policy,
        Some(sextant_core::OverlapPolicy::BufferOne)
    );
    assert_eq!(run.outcome, Some(RunOutcome::Canceled));
    // Rows (and so export lines) carry times in the stored format, and read back.
    let json = serde_json::to_value(&run).unwrap();
    assert_eq!(json["trigger"], "catchup");
    assert_eq!(json["record"], "missed");
    assert_eq!(json["scheduled_for"], "2026-11-29T10:01:00.000Z");
    assert_eq!(json["created_at"], "2026-11-29T10:05:00.123Z");
    assert_eq!(json["started_at"], serde_json::Value::Null);
    assert_eq!(json["overlap_policy"], "buffer_one");
    assert_eq!(json["outcome"], "canceled");
    assert_eq!(serde_json::from_value::<RunRow>(json).unwrap(), run);
    // Written back (a copy, on another schedule so the slot is free), each column the insert
    // writes holds the same text as the original.
    let copy = RunRow {
        run_id: "copy".into(),
        schedule_id: "s2".into(),
        ..run
    };
    j.insert_run(copy).await.unwrap();
    assert_eq!(run_text(&c, "copy"), run_text(&c, "old"));
}

/// The text columns of a stored schedule that [`ScheduleRow`] types.
fn schedule_text(c: &rusqlite::Connection, id: &str) -> Vec<Option<String>> {
    c.query_row(
        "SELECT missed_run_policy, created_at, updated_at, next_fire_at, paused_at, due_at,
                source, overlap_policy
         FROM schedules WHERE schedule_id = ?1",
        [id],
        |r| (0..8).map(|i| r.get(i)).collect(),
    )
    .unwrap()
}

#[tokio::test]
async fn schedule_rows_in_the_stored_format_read_typed_and_write_back_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    // As a journal written before rows were typed holds it: plain text columns.
    let c = rusqlite::Connection::open(j.path()).unwrap();
    c.execute(
        "INSERT INTO schedules (schedule_id, creator, creator_kind, creator_principal, name,
             prompt, cron, timezone, agent_id, enabled, missed_run_policy,
             missed_run_grace_secs, source, created_at, updated_at, next_fire_at, paused_at,
             due_at, overlap_policy)
         VALUES ('old', 'alice', 'person', '{}', 'n', 'p', '* * * * *', 'UTC', 'echo', 1,
             'run_once', 60, 'assistant', '2026-11-29T10:00:00.000Z',
             '2026-11-29T10:00:30.250Z', '2026-11-29T10:01:00.000Z',
             '2026-11-29T09:00:00.000Z', '2026-11-29T10:01:07.000Z', 'cancel_previous')",
        [],
    )
    .unwrap();
    let s = j.schedule("old").await.unwrap().unwrap();
    assert_eq!(s.missed_run_policy, MissedRunPolicy::RunOnce);
    assert_eq!(s.updated_at, t("2026-11-29T10:00:30.250Z"));
    assert_eq!(s.next_fire_at, Some(t("2026-11-29T10:01:00.000Z")));
    assert_eq!(s.due_at, Some(t("2026-11-29T10:01:07.000Z")));
    assert_eq!(s.source, sextant_core::ScheduleSource::Assistant);
    assert_eq!(
        s.overlap_policy,
        sextant_core::OverlapPolicy::CancelPrevious
    );
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(json["missed_run_policy"], "run_once");
    assert_eq!(json["source"], "assistant");
    assert_eq!(json["overlap_policy"], "cancel_previous");
    assert_eq!(json["next_fire_at"], "2026-11-29T10:01:00.000Z");
    assert_eq!(serde_json::from_value::<ScheduleRow>(json).unwrap(), s);
    let copy = ScheduleRow {
        schedule_id: "copy".into(),
        ..s
    };
    j.create_schedule(copy).await.unwrap();
    assert_eq!(schedule_text(&c, "copy"), schedule_text(&c, "old"));
}

/// A schedule whose stored values this Sextant cannot read (a policy name a newer one wrote, a
/// hand-edited time) is left out of the scheduler's due read and of its creator's list; every
/// other schedule is still there, and still fires.
#[tokio::test]
async fn a_schedule_row_that_does_not_read_is_left_out_not_the_whole_list() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    for id in ["good1", "good2"] {
        j.create_schedule(schedule_row(id, "2026-11-29T10:01:00.000Z"))
            .await
            .unwrap();
    }
    let c = rusqlite::Connection::open(j.path()).unwrap();
    for (id, policy, created, source, overlap) in [
        ("later", "later", "2026-11-29T10:00:00.000Z", "api", "skip"),
        ("when", "skip", "yesterday", "api", "skip"),
        ("cli", "skip", "2026-11-29T10:00:00.000Z", "cli", "skip"),
        ("queue", "skip", "2026-11-29T10:00:00.000Z", "api", "queue"),
    ] {
        c.execute(
            "INSERT INTO schedules (schedule_id, creator, creator_kind, creator_principal, name,
                 prompt, cron, timezone, agent_id, enabled, missed_run_policy,
                 missed_run_grace_secs, source, created_at, updated_at, next_fire_at, due_at,
                 overlap_policy)
             VALUES (?1, 'alice', 'person', '{}', 'n', 'p', '* * * * *', 'UTC', 'echo', 1, ?2,
                 60, ?4, ?3, '2026-11-29T10:00:00.000Z', '2026-11-29T10:00:30.000Z',
                 '2026-11-29T10:00:30.000Z', ?5)",
            rusqlite::params![id, policy, created, source, overlap],
        )
        .unwrap();
    }
    let ids = |rows: Vec<ScheduleRow>| -> Vec<ScheduleId> {
        let mut ids: Vec<ScheduleId> = rows.into_iter().map(|s| s.schedule_id).collect();
        ids.sort();
        ids
    };
    // The unreadable ones are due first (an earlier cursor), and the batch has room for all.
    let due = j
        .due_schedules(t("2026-11-29T10:02:00.000Z"), 10)
        .await
        .unwrap();
    assert_eq!(ids(due), ["good1", "good2"]);
    assert_eq!(
        ids(j.schedules_owned("alice").await.unwrap()),
        ["good1", "good2"]
    );
    // Left out of lists, not gone: read alone, each still says what is wrong with it.
    let err = j.schedule("later").await.unwrap_err().to_string();
    assert!(err.contains("missed-run policy \"later\""), "{err}");
    let err = j.schedule("when").await.unwrap_err().to_string();
    assert!(err.contains("time \"yesterday\""), "{err}");
    let err = j.schedule("cli").await.unwrap_err().to_string();
    assert!(err.contains("schedule source \"cli\""), "{err}");
    let err = j.schedule("queue").await.unwrap_err().to_string();
    assert!(err.contains("overlap policy \"queue\""), "{err}");
}

/// A Run whose stored values do not read is left out of its schedule's Runs list, and the page
/// reads on past it: a page still has as many Runs as asked for when there are that many.
#[tokio::test]
async fn a_run_row_that_does_not_read_is_left_out_of_the_runs_list() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    j.create_schedule(schedule_row("s1", "2026-11-29T10:01:00.000Z"))
        .await
        .unwrap();
    for (id, slot) in [
        ("r1", "2026-11-29T10:01:00.000Z"),
        ("r2", "2026-11-29T10:02:00.000Z"),
        ("r3", "2026-11-29T10:04:00.000Z"),
    ] {
        let run = RunRow {
            run_id: id.into(),
            ..cron_run("s1", slot)
        };
        j.insert_run(run).await.unwrap();
    }
    // Newest first, these sort as: y (its text sorts after any date), r3, x, r2, r1.
    let c = rusqlite::Connection::open(j.path()).unwrap();
    for (id, trigger, created, outcome) in [
        ("x", "hourly", "2026-11-29T10:03:00.000Z", None),
        ("y", "manual", "yesterday", None),
        ("z", "manual", "2026-11-29T10:03:30.000Z", Some("timed_out")),
    ] {
        c.execute(
            "INSERT INTO runs (run_id, schedule_id, trigger, scheduled_for, prompt, agent_id,
                 executed_as, record, created_at, outcome, settled_at)
             VALUES (?1, 's1', ?2, '2026-11-29T10:00:00.000Z', 'p', 'echo', 'alice',
                 'missed', ?3, ?4, CASE WHEN ?4 IS NULL THEN NULL ELSE ?3 END)",
            rusqlite::params![id, trigger, created, outcome],
        )
        .unwrap();
    }
    let ids = |(runs, total): (Vec<RunRow>, u64)| -> (Vec<RunId>, u64) {
        (runs.into_iter().map(|r| r.run_id).collect(), total)
    };
    let all = ids(j.runs("s1", None, 10).await.unwrap());
    assert_eq!(all, (vec!["r3".into(), "r2".into(), "r1".into()], 6));
    let err = j.run("z").await.unwrap_err().to_string();
    assert!(err.contains("run outcome \"timed_out\""), "{err}");
    // Nor does its outcome count in the schedule's record.
    let h = j.run_histories("alice", Some("s1"), 10).await.unwrap();
    assert_eq!(h.get("s1").cloned().unwrap_or_default(), Default::default());
    let first = ids(j.runs("s1", None, 2).await.unwrap());
    assert_eq!(first.0, ["r3", "r2"]);
    let after_r3 = Some(("2026-11-29T10:04:00.000Z".to_string(), "r3".to_string()));
    assert_eq!(ids(j.runs("s1", after_r3, 1).await.unwrap()).0, ["r2"]);
}

#[tokio::test]
async fn a_stored_run_value_this_sextant_does_not_know_is_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    j.create_schedule(schedule_row("s1", "2026-11-29T10:01:00.000Z"))
        .await
        .unwrap();
    let c = rusqlite::Connection::open(j.path()).unwrap();
    for (id, trigger, slot) in [
        ("t", "hourly", "2026-11-29T10:01:00.000Z"),
        ("s", "manual", "yesterday"),
    ] {
        c.execute(
            "INSERT INTO runs (run_id, schedule_id, trigger, scheduled_for, prompt, agent_id,
                 executed_as, record, created_at)
             VALUES (?1, 's1', ?2, ?3, 'p', 'echo', 'alice', 'pending',
                 '2026-11-29T10:05:00.000Z')",
            rusqlite::params![id, trigger, slot],
        )
        .unwrap();
    }
    let err = j.run("t").await.unwrap_err().to_string();
    assert!(err.contains("run trigger \"hourly\""), "{err}");
    let err = j.run("s").await.unwrap_err().to_string();
    assert!(err.contains("time \"yesterday\""), "{err}");
}

#[tokio::test]
async fn task_rows_in_the_stored_format_read_typed_and_write_back_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let id = new_tasks(&j, 1).await.remove(0).task_id;
    // As a journal written before rows were typed holds it: plain text columns.
    let c = rusqlite::Connection::open(j.path()).unwrap();
    let text = |c: &rusqlite::Connection| -> (String, String, String) {
        c.query_row(
            "SELECT created_at, state, state_at FROM tasks WHERE task_id = ?1",
            [id.as_str()],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap()
    };
    c.execute(
        "UPDATE tasks SET created_at = '2026-11-29T10:00:00.000Z', state = 'TASK_STATE_WORKING',
             state_at = '2026-11-29T10:00:01.250Z' WHERE task_id = ?1",
        [id.as_str()],
    )
    .unwrap();
    let old = text(&c);
    let task = j.task(&id).await.unwrap().unwrap();
    assert_eq!(task.created_at, t("2026-11-29T10:00:00.000Z"));
    assert_eq!(task.state, TaskState::Working);
    assert_eq!(task.state_at, t("2026-11-29T10:00:01.250Z"));
    let json = serde_json::to_value(&task).unwrap();
    assert_eq!(json["created_at"], "2026-11-29T10:00:00.000Z");
    assert_eq!(json["state_at"], "2026-11-29T10:00:01.250Z");
    assert_eq!(serde_json::from_value::<TaskRow>(json).unwrap(), task);
    // Written back through the cache update, the columns hold the same text again.
    c.execute(
        "UPDATE tasks SET state = 'x', state_at = 'y' WHERE task_id = ?1",
        [id.as_str()],
    )
    .unwrap();
    queries::tasks::touch(
        &c,
        &id,
        task.last_seq,
        Some((&task.state, task.state_at, task.outcome)),
    )
    .unwrap();
    assert_eq!(text(&c), old);
    // A state this Sextant does not know is an error, not a made-up state.
    c.execute(
        "UPDATE tasks SET state = 'TASK_STATE_NAPPING' WHERE task_id = ?1",
        [id.as_str()],
    )
    .unwrap();
    let err = j.task(&id).await.unwrap_err().to_string();
    assert!(err.contains("task state \"TASK_STATE_NAPPING\""), "{err}");
}

#[tokio::test]
async fn session_rows_in_the_stored_format_read_typed_and_write_back_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let id = new_tasks(&j, 1).await.remove(0).session_id;
    // As a journal written before rows were typed holds it: plain text columns.
    let c = rusqlite::Connection::open(j.path()).unwrap();
    let text = |c: &rusqlite::Connection, id: &str| -> (String, String, String) {
        c.query_row(
            "SELECT caller_kind, created_at, updated_at FROM sessions WHERE session_id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap()
    };
    c.execute(
        "UPDATE sessions SET caller_kind = 'anonymous-local',
             created_at = '2026-11-29T10:00:00.000Z', updated_at = '2026-11-29T10:00:02.500Z'
         WHERE session_id = ?1",
        [id.as_str()],
    )
    .unwrap();
    let s = j.session(&id).await.unwrap().unwrap();
    assert_eq!(s.caller_kind, sextant_core::PrincipalKind::AnonymousLocal);
    assert_eq!(s.created_at, t("2026-11-29T10:00:00.000Z"));
    assert_eq!(s.updated_at, t("2026-11-29T10:00:02.500Z"));
    let json = serde_json::to_value(&s).unwrap();
    assert_eq!(json["caller_kind"], "anonymous-local");
    assert_eq!(json["updated_at"], "2026-11-29T10:00:02.500Z");
    assert_eq!(serde_json::from_value::<SessionRow>(json).unwrap(), s);
    let copy = SessionRow {
        session_id: "copy".into(),
        context_id: "another".into(),
        ..s
    };
    queries::sessions::insert(&c, &copy).unwrap();
    assert_eq!(text(&c, "copy"), text(&c, &id));
    c.execute(
        "UPDATE sessions SET caller_kind = 'robot' WHERE session_id = ?1",
        [id.as_str()],
    )
    .unwrap();
    let err = j.session(&id).await.unwrap_err().to_string();
    assert!(err.contains("caller kind \"robot\""), "{err}");
}

/// A Session's labels never fail the list they are shown in: a Session that is gone has
/// none, and a stored kind this Sextant does not know reads as none (the other label still
/// reads), where the Session's row read alone is the clear error.
#[tokio::test]
async fn a_session_s_labels_are_none_where_they_do_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let t = new_tasks(&j, 1).await.remove(0);
    let labels = j.session_labels(&t.session_id).await.unwrap();
    assert_eq!(
        (labels.origin, labels.caller_kind),
        (
            Some(sextant_core::Origin::A2a),
            Some(sextant_core::PrincipalKind::Person)
        )
    );
    assert_eq!(
        j.session_labels("gone").await.unwrap(),
        queries::sessions::Labels::default()
    );
    let c = rusqlite::Connection::open(j.path()).unwrap();
    c.execute(
        "UPDATE sessions SET caller_kind = 'robot' WHERE session_id = ?1",
        [t.session_id.as_str()],
    )
    .unwrap();
    let labels = j.session_labels(&t.session_id).await.unwrap();
    assert_eq!(
        (labels.origin, labels.caller_kind),
        (Some(sextant_core::Origin::A2a), None)
    );
    let d = j.task_digest(t.clone()).await.unwrap();
    assert_eq!(
        (d.origin, d.caller_kind),
        (Some(sextant_core::Origin::A2a), None)
    );
    assert!(j.session(&t.session_id).await.is_err());
}

/// A Session whose stored origin this Sextant does not know (a newer one wrote it) is left
/// out of the Sessions list, which reads on past it to fill the page; its tasks are labelled
/// with no origin; read alone, it is the stored module's clear error.
#[tokio::test]
async fn a_session_with_an_unknown_origin_is_left_out_of_lists_and_labelled_with_none() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let tasks = new_tasks(&j, 3).await;
    let (all, _) = j.list_sessions(None, None, None, 10).await.unwrap();
    let order: Vec<SessionId> = all.iter().map(|s| s.session_id.clone()).collect();
    assert_eq!(order.len(), 3);
    assert!(all.iter().all(|s| s.origin == sextant_core::Origin::A2a));
    // The newest Session holds an origin this Sextant does not know.
    let c = rusqlite::Connection::open(j.path()).unwrap();
    c.execute(
        "UPDATE sessions SET origin = 'mcp' WHERE session_id = ?1",
        [order[0].as_str()],
    )
    .unwrap();
    let (page, total) = j.list_sessions(None, None, None, 2).await.unwrap();
    let ids: Vec<&str> = page.iter().map(|s| s.session_id.as_str()).collect();
    assert_eq!(ids, [order[1].as_str(), order[2].as_str()]);
    assert_eq!(total, 3, "the tally still counts it");
    let err = j.session(&order[0]).await.unwrap_err().to_string();
    assert!(err.contains("session origin \"mcp\""), "{err}");
    let task = tasks.iter().find(|t| t.session_id == order[0]).unwrap();
    let d = j.task_digest(task.clone()).await.unwrap();
    assert_eq!(
        (d.origin, d.caller_kind),
        (None, Some(sextant_core::PrincipalKind::Person))
    );
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
            next_due: Some(next.into()),
            runs: vec![cron_run("s1", slot)],
        }]
    };
    let (ra, rb) = tokio::join!(a.claim_slots(claim()), b.claim_slots(claim()));
    let (ra, rb) = (ra.unwrap(), rb.unwrap());
    assert_eq!(ra.len(), 1);
    assert!(ra[0] ^ rb[0], "exactly one claim wins: {ra:?} {rb:?}");
    let (runs, total) = a.runs("s1", None, 10).await.unwrap();
    assert_eq!(total, 1);
    assert_eq!(runs[0].scheduled_for, t(slot));
    assert_eq!(
        a.schedule("s1").await.unwrap().unwrap().next_fire_at,
        Some(t(next))
    );
    // Even with a stale cursor the unique slot index refuses a second cron Run.
    let mut again = schedule_row("s1", slot);
    again.next_fire_at = Some(t(slot));
    assert!(a.update_schedule(again, false).await.unwrap());
    let won = b
        .claim_slots(vec![Claim {
            schedule_id: "s1".into(),
            expected: slot.into(),
            next: Some(next.into()),
            next_due: Some(next.into()),
            runs: vec![cron_run("s1", slot)],
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

/// Cached statements are prepared once per connection: a statement that SQLite re-prepared on
/// every bind (as it did before query-planner stability was switched on) re-parses its SQL on
/// every journal read.
#[tokio::test]
async fn cached_reads_are_not_re_prepared() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let mut reprepared = 0;
    for i in 0..10 {
        let a = j
            .admit(admission("c", &format!("m{i}"), "hi"))
            .await
            .unwrap()
            .unwrap();
        let t = a.task().clone();
        j.append_one(
            &t.session_id,
            &t.task_id,
            EventBody::TurnStarted {
                through: None,
                working: false,
            },
            t0(),
        )
        .await
        .unwrap();
        let (id, after) = (t.task_id.clone(), i64::from(i % 2));
        reprepared = j
            .read(move |c| {
                let events = queries::events::for_task(c, &id, after)?;
                assert!(!events.is_empty() || after > 0);
                let st = c.prepare_cached(queries::events::FOR_TASK)?;
                Ok(st.get_status(rusqlite::StatementStatus::RePrepare))
            })
            .await
            .unwrap();
    }
    assert_eq!(reprepared, 0);
}

fn state(task: &TaskRow, state: TaskState, secs: i64) -> NewEvent {
    NewEvent {
        task_id: Some(task.task_id.to_string()),
        body: EventBody::TaskState {
            state,
            message: None,
        },
        at: t0() + chrono::Duration::seconds(secs),
    }
}

/// `n` new tasks of alice's, each in a new Session.
async fn new_tasks(j: &Journal, n: usize) -> Vec<TaskRow> {
    let mut tasks = Vec::new();
    for i in 0..n {
        let a = j
            .admit(admission("alice", &format!("m{i}"), "x"))
            .await
            .unwrap()
            .unwrap();
        tasks.push(a.task().clone());
    }
    tasks
}

/// The task an admission created.
async fn admitted(j: &Journal, a: Admission) -> TaskRow {
    j.admit(a).await.unwrap().unwrap().task().clone()
}

/// SQLite's query plan for `sql` with `args`, its steps joined by "; ".
async fn query_plan(j: &Journal, sql: &'static str, args: &[&str]) -> String {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    j.read(move |c| {
        let mut st = c.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))?;
        st.query_map(rusqlite::params_from_iter(&args), |r| r.get::<_, String>(3))?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map(|v| v.join("; "))
            .map_err(Error::from)
    })
    .await
    .unwrap()
}

async fn seqs_of(j: &Journal, session_id: &str) -> Vec<i64> {
    j.session_events(session_id, 0, 1000)
        .await
        .unwrap()
        .iter()
        .map(|e| e.seq)
        .collect()
}

/// The writer caches seqs and states; a second writer on the same file (a `sextant token`
/// command, or a second Sextant where the file system has no locks) must make it read them
/// again, not reuse a seq or miss a terminal state.
#[tokio::test]
async fn two_writers_on_one_file_share_seqs_and_states() {
    let dir = tempfile::tempdir().unwrap();
    let j1 = journal(&dir).await;
    let j2 = Journal::open(dir.path().join("journal.db")).unwrap();
    let t = new_tasks(&j1, 1).await.remove(0);
    for i in 0..6 {
        let j = if i % 2 == 0 { &j1 } else { &j2 };
        j.append(&t.session_id, vec![state(&t, TaskState::Working, i)])
            .await
            .unwrap();
    }
    j2.append(&t.session_id, vec![state(&t, TaskState::Completed, 9)])
        .await
        .unwrap();
    let late = j1
        .append(&t.session_id, vec![state(&t, TaskState::Working, 10)])
        .await;
    assert!(matches!(late, Err(Error::Conflict(_))), "{late:?}");
    assert_eq!(
        seqs_of(&j1, &t.session_id).await,
        (1..=8).collect::<Vec<_>>()
    );
    assert_eq!(j1.rebuild_check().await.unwrap(), Vec::<String>::new());
    let row = j1.task(&t.task_id).await.unwrap().unwrap();
    assert_eq!((row.state, row.last_seq), (TaskState::Completed, 8));
}

/// Jobs in one batch: a refused one leaves no seq, state or cached column behind.
#[tokio::test]
async fn a_failed_job_leaves_no_trace_in_its_batch() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let mut two = new_tasks(&j, 2).await;
    let (t, u) = (two.remove(0), two.remove(0));
    j.append(&t.session_id, vec![state(&t, TaskState::Completed, 1)])
        .await
        .unwrap();
    for round in 0..20 {
        let (ok1, bad, ok2) = tokio::join!(
            j.append(&u.session_id, vec![state(&u, TaskState::Working, round)]),
            // Two events, the second refused: the first must not stay either.
            j.append(
                &t.session_id,
                vec![
                    NewEvent {
                        task_id: Some(t.task_id.to_string()),
                        body: EventBody::TurnStarted {
                            through: None,
                            working: false,
                        },
                        at: t0(),
                    },
                    state(&t, TaskState::Working, round),
                ]
            ),
            j.append(&u.session_id, vec![state(&u, TaskState::Working, round)]),
        );
        ok1.unwrap();
        ok2.unwrap();
        assert!(matches!(bad, Err(Error::Conflict(_))));
    }
    assert_eq!(seqs_of(&j, &t.session_id).await, vec![1, 2]);
    assert_eq!(
        seqs_of(&j, &u.session_id).await,
        (1..=41).collect::<Vec<_>>()
    );
    assert_eq!(j.rebuild_check().await.unwrap(), Vec::<String>::new());
}

/// Many Sessions appending at once (so batches hold several jobs per Session): every Session's
/// seqs are gap-free and the cached columns match the events.
#[tokio::test]
async fn concurrent_appends_keep_every_session_gap_free() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let tasks = new_tasks(&j, 8).await;
    let mut handles = Vec::new();
    for t in tasks.clone() {
        let j = j.clone();
        handles.push(tokio::spawn(async move {
            for i in 0..25 {
                j.append(&t.session_id, vec![state(&t, TaskState::Working, i)])
                    .await
                    .unwrap();
            }
            j.append(&t.session_id, vec![state(&t, TaskState::Completed, 30)])
                .await
                .unwrap();
        }));
    }
    for h in handles {
        h.await.unwrap();
    }
    for t in &tasks {
        assert_eq!(
            seqs_of(&j, &t.session_id).await,
            (1..=27).collect::<Vec<_>>()
        );
        let s = j.session(&t.session_id).await.unwrap().unwrap();
        assert_eq!(s.last_seq, 27);
    }
    assert_eq!(j.rebuild_check().await.unwrap(), Vec::<String>::new());
}

/// An append that fails after it wrote (a database error, here forced by a trigger) takes its
/// batch down whole: nothing of it commits, its seq is not used, later writes go on.
#[tokio::test]
async fn a_write_failure_abandons_the_batch_and_nothing_half_written_stays() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let t = new_tasks(&j, 1).await.remove(0);
    j.read(|c| {
        Ok(c.execute_batch(
            "CREATE TRIGGER boom BEFORE INSERT ON events WHEN NEW.kind = 'reply'
             BEGIN SELECT RAISE(ABORT, 'boom'); END;",
        )?)
    })
    .await
    .unwrap();
    let failed = j
        .append(
            &t.session_id,
            vec![
                state(&t, TaskState::Working, 1),
                NewEvent {
                    task_id: Some(t.task_id.to_string()),
                    body: EventBody::Reply {
                        message: msg("r1", "hello"),
                    },
                    at: t0(),
                },
            ],
        )
        .await;
    assert!(failed.is_err());
    let ok = j
        .append(&t.session_id, vec![state(&t, TaskState::Completed, 2)])
        .await
        .unwrap();
    assert_eq!(ok[0].seq, 2);
    assert_eq!(seqs_of(&j, &t.session_id).await, vec![1, 2]);
    assert_eq!(j.rebuild_check().await.unwrap(), Vec::<String>::new());
}

/// A watched admission's subscription starts with the task's own first event.
#[tokio::test]
async fn a_watched_admission_sees_its_first_event_and_the_later_ones() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let (a, live) = j
        .admit_watched(admission("alice", "m1", "x"), true)
        .await
        .unwrap();
    let t = a.unwrap().task().clone();
    let mut live = live.expect("a created task is watched");
    j.append(&t.session_id, vec![state(&t, TaskState::Working, 1)])
        .await
        .unwrap();
    let first = live.recv().await.unwrap();
    assert!(matches!(first.body, EventBody::TaskCreated { .. }));
    assert_eq!(live.recv().await.unwrap().seq, 2);
    // A retry creates nothing and watches nothing.
    let (again, live) = j
        .admit_watched(admission("alice", "m1", "x"), true)
        .await
        .unwrap();
    assert!(matches!(again, Ok(Admitted::Duplicate { .. })) && live.is_none());
}

/// Sustained writes reuse the WAL: checkpoints keep up with the writer, so the file stays near
/// its checkpoint size instead of growing with every commit.
#[tokio::test]
async fn the_wal_stays_bounded_under_sustained_writes() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let sessions = new_tasks(&j, 64).await;
    // Two concurrent appenders, as a busy server has: one commit per append, or a few each.
    let mut handles = Vec::new();
    for half in sessions.chunks(32) {
        let (j, half) = (j.clone(), half.to_vec());
        handles.push(tokio::spawn(async move {
            for round in 0..80 {
                for t in &half {
                    j.append(&t.session_id, vec![state(t, TaskState::Working, round)])
                        .await
                        .unwrap();
                }
            }
        }));
    }
    for h in handles {
        h.await.unwrap();
    }
    let wal = std::fs::metadata(dir.path().join("journal.db-wal"))
        .unwrap()
        .len();
    let bound = 2 * wal::WAL_PAGES_PER_CHECKPOINT as u64 * 4096;
    assert!(wal <= bound, "the WAL grew to {wal} bytes (bound {bound})");
}

/// The two reads of live tasks use the partial `tasks_live` index (their WHERE must repeat its
/// condition word for word, or SQLite scans every task ever run).
#[tokio::test]
async fn live_task_reads_use_the_live_index() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let plans = (
        query_plan(&j, queries::tasks::UNFINISHED, &[]).await,
        query_plan(&j, queries::security::ACTIVE_TASKS, &["peer:x"]).await,
    );
    assert!(plans.0.contains("tasks_live"), "{}", plans.0);
    assert!(plans.1.contains("tasks_live"), "{}", plans.1);
}

/// The writes of a task row build no ephemeral table: SQLite evaluates the `tasks_live`
/// condition on each of them, and an IN list there made every state update build and free a
/// temporary B-tree with its own page cache (a fifth of the writer's time per task).
#[tokio::test]
async fn task_writes_build_no_ephemeral_table() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    // (statement, whether it writes the `tasks_live` index)
    for (sql, indexed) in [
        (queries::tasks::INSERT, true),
        (queries::tasks::TOUCH, false),
        (queries::tasks::TOUCH_STATE, true),
    ] {
        let opcodes = j
            .read(move |c| {
                let mut st = c.prepare(&format!("EXPLAIN {sql}"))?;
                let nulls = vec![rusqlite::types::Null; st.parameter_count()];
                st.query_map(rusqlite::params_from_iter(nulls), |r| r.get::<_, String>(1))?
                    .collect::<rusqlite::Result<Vec<_>>>()
                    .map_err(Error::from)
            })
            .await
            .unwrap();
        let writes_index = opcodes.iter().any(|o| o == "IdxInsert");
        assert_eq!(writes_index, indexed, "{sql}: {opcodes:?}");
        assert!(
            !opcodes.iter().any(|o| o == "OpenEphemeral"),
            "{sql}: {opcodes:?}"
        );
    }
}

/// A task's events come from a range of its Session's primary key (there is no index of events
/// by task), and only that task's: two tasks of one Session interleave there.
#[tokio::test]
async fn a_tasks_events_are_a_range_of_its_session() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let first = admitted(&j, admission("alice", "m1", "one")).await;
    let mut next = admission("alice", "m2", "two");
    next.context_id = Some(first.context_id.clone());
    let second = admitted(&j, next).await;
    assert_eq!(second.session_id, first.session_id);
    assert_eq!((first.first_seq, second.first_seq), (1, 2));
    for (i, t) in [&first, &second, &first, &second].into_iter().enumerate() {
        j.append(&t.session_id, vec![state(t, TaskState::Working, i as i64)])
            .await
            .unwrap();
    }
    let seqs = |evs: Vec<JournalEvent>| evs.iter().map(|e| e.seq).collect::<Vec<_>>();
    assert_eq!(
        seqs(j.task_events(&first.task_id, 0).await.unwrap()),
        [1, 3, 5]
    );
    assert_eq!(
        seqs(j.task_events(&second.task_id, 0).await.unwrap()),
        [2, 4, 6]
    );
    assert_eq!(seqs(j.task_events(&second.task_id, 4).await.unwrap()), [6]);
    assert!(j.task_events("no-such-task", 0).await.unwrap().is_empty());
    assert!(j.rebuild_check().await.unwrap().is_empty());
    // The Session's tasks, in the order they were created, from its task_created events.
    let ids: Vec<TaskId> = (j.session_tasks(&first.session_id).await.unwrap())
        .into_iter()
        .map(|t| t.task_id)
        .collect();
    assert_eq!(ids, [first.task_id.clone(), second.task_id.clone()]);

    let plan = query_plan(&j, queries::events::FOR_TASK, &["t", "0"]).await;
    assert!(
        plan.contains("SEARCH e USING PRIMARY KEY (session_id=? AND seq>? AND seq<?)"),
        "{plan}"
    );
    let plan = query_plan(&j, queries::tasks::FOR_SESSION, &["s"]).await;
    assert!(!plan.contains("SCAN"), "{plan}");
}

/// The migration that dropped the index of events by task gives existing tasks their first
/// seq, so their events are still found.
#[test]
fn existing_tasks_get_their_first_seq() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = journal_before(dir.path(), "20261130220000_task_events_in_session");
    let before: i64 = c
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    c.execute_batch(
        "INSERT INTO agents VALUES ('echo', 'Echo', '', 'echo', '{}', 't', 't');
         INSERT INTO sessions VALUES ('s', 'echo', 'alice', 'person', 'cx', 'a2a', 't', 't', 4);
         INSERT INTO events VALUES ('s', 1, 'a', 't', 'task_created', '{}');
         INSERT INTO events VALUES ('s', 2, 'b', 't', 'task_created', '{}');
         INSERT INTO events VALUES ('s', 3, 'a', 't', 'task_state', '{}');
         INSERT INTO events VALUES ('s', 4, 'b', 't', 'task_state', '{}');
         INSERT INTO tasks VALUES ('a', 's', 'alice', 'echo', 'cx', 'm1', 'h', 't',
                                   'TASK_STATE_WORKING', 't', 3);
         INSERT INTO tasks VALUES ('b', 's', 'alice', 'echo', 'cx', 'm2', 'h', 't',
                                   'TASK_STATE_WORKING', 't', 4);",
    )
    .unwrap();
    assert_eq!(
        migrate::migrate(&mut c).unwrap(),
        migrate::MIGRATIONS.len() - before as usize
    );
    let first: Vec<(String, i64)> = c
        .prepare("SELECT task_id, first_seq FROM tasks ORDER BY task_id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(first, [("a".to_string(), 1), ("b".to_string(), 2)]);
    let index: i64 = c
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE name = 'events_task'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(index, 0);
}

#[tokio::test]
async fn settling_runs_counts_failures_once_and_pauses_at_the_limit() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let mut s = schedule_row("s1", "2026-11-29T10:01:00.000Z");
    s.pause_after_failures = Some(2);
    j.create_schedule(s).await.unwrap();
    let runs: Vec<RunRow> = (0..4)
        .map(|i| {
            let mut r = cron_run("s1", &format!("2026-11-29T10:0{i}:00.000Z"));
            r.record = RunRecord::Failed;
            r
        })
        .collect();
    j.insert_runs(runs.clone()).await.unwrap();
    let at = sextant_core::ids::parse_time("2026-11-29T11:00:00.000Z").unwrap();
    let why = |n: i64| format!("paused after {n}");
    let first = j
        .settle_run(
            &runs[0].run_id,
            RunOutcome::Failed,
            Some("boom".into()),
            at,
            why,
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!((first.failures_before, first.failures_after), (0, 1));
    assert_eq!(first.paused, None);
    // Recording the same Run again changes nothing.
    assert!(
        j.settle_run(&runs[0].run_id, RunOutcome::Failed, None, at, why)
            .await
            .unwrap()
            .is_none()
    );
    // A cancellation leaves the count; a second failure reaches the limit and pauses.
    let c = j
        .settle_run(&runs[1].run_id, RunOutcome::Canceled, None, at, why)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(c.failures_after, 1);
    let second = j
        .settle_run(&runs[2].run_id, RunOutcome::Failed, None, at, why)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(second.paused.as_deref(), Some("paused after 2"));
    let row = j.schedule("s1").await.unwrap().unwrap();
    assert!(!row.enabled);
    assert_eq!(row.next_fire_at, None);
    assert_eq!(row.due_at, None);
    assert_eq!(row.paused_reason.as_deref(), Some("paused after 2"));
    // Already paused: a later failure counts but pauses nothing more.
    let third = j
        .settle_run(&runs[3].run_id, RunOutcome::Failed, None, at, why)
        .await
        .unwrap()
        .unwrap();
    assert_eq!((third.failures_after, third.paused), (3, None));
    let h = j.run_histories("alice", None, 2).await.unwrap();
    let h = &h["s1"];
    assert_eq!((h.succeeded, h.failed, h.canceled), (0, 3, 1));
    assert_eq!(h.recent.len(), 2);
    // Enabling again resets the count.
    let mut row = j.schedule("s1").await.unwrap().unwrap();
    row.enabled = true;
    assert!(j.update_schedule(row, true).await.unwrap());
    assert_eq!(
        j.schedule("s1")
            .await
            .unwrap()
            .unwrap()
            .consecutive_failures,
        0
    );
}

fn push_ev(task: &str, body: EventBody) -> NewEvent {
    NewEvent {
        task_id: Some(task.into()),
        body,
        at: t0(),
    }
}

fn to_state(s: TaskState) -> EventBody {
    EventBody::TaskState {
        state: s,
        message: None,
    }
}

fn artifact(text: &str) -> EventBody {
    EventBody::Artifact {
        artifact: sextant_core::a2a::Artifact {
            artifact_id: "a".into(),
            name: None,
            description: None,
            parts: vec![Part::text(text)],
            metadata: None,
            extensions: None,
        },
        append: false,
        last_chunk: true,
    }
}

fn config(task: &str, id: &str) -> PushConfigRow {
    PushConfigRow::new(
        task,
        id,
        CallerKey::from_stored("alice"),
        "https://hooks.example/x",
        "sealed",
        t("2026-11-29T10:00:00.000Z"),
    )
}

/// The seqs still owed to a config, oldest first.
async fn owed(j: &Journal, task: &str, id: &str) -> Vec<i64> {
    let (t, i) = (task.to_string(), id.to_string());
    j.read(move |c| {
        let mut st = c.prepare(
            "SELECT seq FROM push_outbox WHERE task_id = ?1 AND config_id = ?2 ORDER BY delivery_id",
        )?;
        let rows = st.query_map(rusqlite::params![t, i], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<Vec<i64>>>()?)
    })
    .await
    .unwrap()
}

/// Every event a config covers is queued with it, in the event's transaction and in order:
/// status changes, artifacts, the terminal state; not follow-up inputs, not a turn start that
/// changes nothing, and nothing after the task ended.
#[tokio::test]
async fn events_are_queued_for_a_tasks_push_configs_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let a = j
        .admit(admission("alice", "m1", "hi"))
        .await
        .unwrap()
        .unwrap();
    let task = a.task().clone();
    let (tid, sid) = (task.task_id.as_str(), task.session_id.as_str());
    assert_eq!(
        j.put_push_config(config(tid, "c1")).await.unwrap(),
        PushPut::Created
    );
    assert_eq!(
        j.put_push_config(config("no-such-task", "c1"))
            .await
            .unwrap(),
        PushPut::TaskNotFound
    );
    let evs = j
        .append(
            sid,
            vec![
                push_ev(
                    tid,
                    EventBody::TurnStarted {
                        through: Some(1),
                        working: false,
                    },
                ),
                push_ev(tid, to_state(TaskState::Working)),
                push_ev(tid, artifact("out")),
                push_ev(tid, to_state(TaskState::InputRequired)),
            ],
        )
        .await
        .unwrap();
    let mut follow = admission("alice", "m2", "more");
    follow.task_id = Some(tid.into());
    j.admit(follow).await.unwrap().unwrap();
    let done = j
        .append(
            sid,
            vec![
                push_ev(tid, to_state(TaskState::Completed)),
                push_ev(tid, artifact("late")),
            ],
        )
        .await
        .unwrap();
    let want: Vec<i64> = vec![evs[1].seq, evs[2].seq, evs[3].seq, done[0].seq];
    assert_eq!(owed(&j, tid, "c1").await, want);
    let row = j.push_config(tid, "c1").await.unwrap().unwrap();
    assert_eq!(row.pending, 4);
    assert!(row.next_attempt_at.is_some());

    // Delivery takes them in order; each success makes the next one due.
    let now = "2026-11-29T10:00:01.000Z";
    let due = j.push_due(t(now), 10).await.unwrap();
    assert_eq!(due.len(), 1);
    assert_eq!(due[0].1.seq, want[0]);
    assert!(j.push_delivered(due[0].1.clone(), t(now)).await.unwrap());
    assert!(
        !j.push_delivered(due[0].1.clone(), t(now)).await.unwrap(),
        "only once"
    );
    let head = j.push_head(tid, "c1").await.unwrap().unwrap();
    assert_eq!(head.seq, want[1]);
    let row = j.push_config(tid, "c1").await.unwrap().unwrap();
    assert_eq!((row.pending, row.delivered), (3, 1));

    // A failure pushes the next attempt back; stopping takes the config out of the due list
    // with everything it still owes (the terminal state too) until it is re-enabled.
    j.push_failed(
        tid,
        "c1",
        t(now),
        "HTTP 500",
        Some(t("2026-11-29T10:05:00.000Z")),
    )
    .await
    .unwrap();
    assert!(j.push_due(t(now), 10).await.unwrap().is_empty());
    assert_eq!(
        j.push_next_due().await.unwrap(),
        Some(t("2026-11-29T10:05:00.000Z"))
    );
    j.push_failed(tid, "c1", t(now), "HTTP 500 again", None)
        .await
        .unwrap();
    let row = j.push_config(tid, "c1").await.unwrap().unwrap();
    assert_eq!(row.attempts, 2);
    assert_eq!(row.failing_at, Some(t(now)));
    assert_eq!(row.last_error.as_deref(), Some("HTTP 500 again"));
    assert!(
        j.push_due(t("2027-01-01T00:00:00.000Z"), 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert_eq!(j.push_next_due().await.unwrap(), None);
    assert_eq!(owed(&j, tid, "c1").await, want[1..].to_vec());
    assert!(j.resume_push_config(tid, "c1", t(now)).await.unwrap());
    let row = j.push_config(tid, "c1").await.unwrap().unwrap();
    assert_eq!((row.attempts, row.failing_at), (0, None));
    assert_eq!(j.push_due(t(now), 10).await.unwrap().len(), 1);

    // Deleting a config drops what it was owed; deleting again is not an error.
    assert!(j.delete_push_config(tid, "c1").await.unwrap());
    assert!(!j.delete_push_config(tid, "c1").await.unwrap());
    assert!(owed(&j, tid, "c1").await.is_empty());
}

/// A config that comes with the message is stored with the admission and owed the task's
/// first event; the writer's index of configs survives a reopen (a restart) and a deleted
/// config is owed nothing more.
#[tokio::test]
async fn an_inline_config_covers_the_first_event_and_survives_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let (tid, sid) = {
        let j = journal(&dir).await;
        let mut a = admission("alice", "m1", "hi");
        a.push_config = Some(config("", "inline"));
        let task = j.admit(a).await.unwrap().unwrap().task().clone();
        assert_eq!(owed(&j, &task.task_id, "inline").await, vec![1]);
        let row = j
            .push_config(&task.task_id, "inline")
            .await
            .unwrap()
            .unwrap();
        assert_eq!((row.pending, row.caller.as_str()), (1, "alice"));
        // A retry of the same message stores nothing and queues nothing.
        let mut again = admission("alice", "m1", "hi");
        again.push_config = Some(config("", "other"));
        assert!(matches!(
            j.admit(again).await.unwrap().unwrap(),
            Admitted::Duplicate { .. }
        ));
        assert!(
            j.push_config(&task.task_id, "other")
                .await
                .unwrap()
                .is_none()
        );
        (task.task_id, task.session_id)
    };
    // The writer thread ends with the last handle; a new journal reads the configs again.
    let j = Journal::open(dir.path().join("journal.db")).unwrap();
    j.append(&sid, vec![push_ev(&tid, to_state(TaskState::Working))])
        .await
        .unwrap();
    assert_eq!(owed(&j, &tid, "inline").await, vec![1, 2]);
    j.put_push_config(config(&tid, "second")).await.unwrap();
    assert!(j.delete_push_config(&tid, "inline").await.unwrap());
    j.append(&sid, vec![push_ev(&tid, to_state(TaskState::Completed))])
        .await
        .unwrap();
    assert!(owed(&j, &tid, "inline").await.is_empty());
    assert_eq!(owed(&j, &tid, "second").await, vec![3]);
    // A config added to an ended task is kept (and readable) but owed nothing.
    j.put_push_config(config(&tid, "late")).await.unwrap();
    assert!(j.push_config(&tid, "late").await.unwrap().is_some());
    assert!(owed(&j, &tid, "late").await.is_empty());
}

/// An approval raised for `task` (its task waits on it).
fn raised(task: &TaskRow, secs: i64) -> NewEvent {
    use sextant_core::interaction::{Interaction, InteractionKind, command_approval_options};
    NewEvent {
        task_id: Some(task.task_id.to_string()),
        body: EventBody::InteractionRaised {
            interaction: Interaction {
                interaction_id: format!("i-{}", task.task_id),
                task_id: task.task_id.to_string(),
                kind: InteractionKind::ToolApproval,
                title: "Run this?".into(),
                description: None,
                command: Some("ls".into()),
                cwd: None,
                options: command_approval_options(),
                fields: vec![],
                reason_allowed: true,
                scope: "turn".into(),
                expires_at: None,
                default_option: "decline".into(),
                grant_key: None,
                engine_ref: serde_json::Value::Null,
                action: None,
                from: None,
            },
        },
        at: t0() + chrono::Duration::seconds(secs),
    }
}

fn answered(task: &TaskRow, option: &str, expired: bool, secs: i64) -> NewEvent {
    NewEvent {
        task_id: Some(task.task_id.to_string()),
        body: EventBody::InteractionAnswered {
            answer: sextant_core::interaction::Answer {
                interaction_id: format!("i-{}", task.task_id),
                option: option.into(),
                reason: None,
                values: Default::default(),
                message_id: format!("a-{}", task.task_id),
                answered_by: "you".into(),
                expired,
                digest: None,
            },
        },
        at: t0() + chrono::Duration::seconds(secs),
    }
}

fn output(task: &TaskRow, secs: i64) -> NewEvent {
    NewEvent {
        task_id: Some(task.task_id.to_string()),
        body: EventBody::Artifact {
            artifact: sextant_core::a2a::Artifact {
                artifact_id: "out".into(),
                name: None,
                description: None,
                parts: vec![Part::text("done")],
                metadata: None,
                extensions: None,
            },
            append: false,
            last_chunk: true,
        },
        at: t0() + chrono::Duration::seconds(secs),
    }
}

/// Events that end tasks `t[0..7]`, and the outcome each should get.
fn outcome_cases(t: &[TaskRow]) -> Vec<(Vec<NewEvent>, &'static str)> {
    vec![
        (
            vec![
                answered(&t[0], "decline", false, 1),
                state(&t[0], TaskState::Completed, 2),
            ],
            "declined",
        ),
        (
            vec![
                answered(&t[1], "cancel", false, 1),
                state(&t[1], TaskState::Failed, 2),
            ],
            "canceled",
        ),
        (
            vec![
                answered(&t[2], "decline", true, 1),
                state(&t[2], TaskState::Completed, 2),
            ],
            "expired",
        ),
        // Accepted, then output: the task did its work.
        (
            vec![
                answered(&t[3], "accept", false, 1),
                output(&t[3], 2),
                state(&t[3], TaskState::Completed, 3),
            ],
            "completed",
        ),
        // Declined, but the agent went on and produced something: it completed.
        (
            vec![
                answered(&t[4], "decline", false, 1),
                output(&t[4], 2),
                state(&t[4], TaskState::Completed, 3),
            ],
            "completed",
        ),
        (vec![state(&t[5], TaskState::Failed, 1)], "failed"),
        (vec![state(&t[6], TaskState::Working, 1)], ""),
    ]
}

/// The same outcomes when a task's answer or output and its end are in one batch (the writer
/// then knows the last act without reading it back).
#[tokio::test]
async fn an_ended_task_has_the_same_outcome_when_it_ends_in_the_batch_of_its_last_act() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let t = new_tasks(&j, 7).await;
    let cases = outcome_cases(&t);
    for (i, (evs, _)) in cases.iter().enumerate() {
        let mut evs = evs.clone();
        if matches!(evs[0].body, EventBody::InteractionAnswered { .. }) {
            evs.insert(0, raised(&t[i], 0));
        }
        j.append(&t[i].session_id, evs).await.unwrap();
    }
    for (i, (_, want)) in cases.iter().enumerate() {
        let row = j.task(&t[i].task_id).await.unwrap().unwrap();
        assert_eq!(row.outcome.map_or("", |o| o.as_str()), *want, "task {i}");
    }
    assert_eq!(j.rebuild_check().await.unwrap(), Vec::<String>::new());
}

/// A task's outcome says what happened, from its last answer or output: a declined command
/// "completes" and a canceled one "fails" on the A2A wire, but they were declined / canceled.
#[tokio::test]
async fn an_ended_task_has_its_outcome_in_words() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let t = new_tasks(&j, 7).await;
    let cases = outcome_cases(&t);
    for (i, (evs, _)) in cases.iter().enumerate() {
        // The answer in one batch, the end in a later one, as the API and the engine write them.
        let (first, rest) = evs.split_at(1);
        let mut first = first.to_vec();
        if matches!(first[0].body, EventBody::InteractionAnswered { .. }) {
            first.insert(0, raised(&t[i], 0));
        }
        j.append(&t[i].session_id, first).await.unwrap();
        j.append(&t[i].session_id, rest.to_vec()).await.unwrap();
    }
    for (i, (_, want)) in cases.iter().enumerate() {
        let row = j.task(&t[i].task_id).await.unwrap().unwrap();
        assert_eq!(row.outcome.map_or("", |o| o.as_str()), *want, "task {i}");
    }
    assert_eq!(j.rebuild_check().await.unwrap(), Vec::<String>::new());

    // The filter finds tasks by outcome, and by where they are.
    let by = |status: &str| {
        let j = j.clone();
        let status = TaskStatus::parse(status).unwrap();
        async move {
            let mut ids: Vec<TaskId> = j
                .list_tasks(TaskFilter {
                    status: Some(status),
                    limit: 50,
                    ..Default::default()
                })
                .await
                .unwrap()
                .tasks
                .into_iter()
                .map(|t| t.task_id)
                .collect();
            ids.sort();
            ids
        }
    };
    assert_eq!(by("canceled").await, [t[1].task_id.clone()]);
    assert_eq!(by("declined").await, [t[0].task_id.clone()]);
    assert_eq!(by("unfinished").await, [t[6].task_id.clone()]);
    assert_eq!(by("active").await, [t[6].task_id.clone()]);
    assert!(by("waiting").await.is_empty());
    assert!(TaskStatus::parse("nope").is_none());

    // A cached outcome that disagrees with the journal is found.
    let victim = t[0].task_id.clone();
    let v = victim.clone();
    j.read(move |c| {
        Ok(c.execute(
            "UPDATE tasks SET outcome = 'completed' WHERE task_id = ?1",
            [v.as_str()],
        )?)
    })
    .await
    .unwrap();
    assert_eq!(j.rebuild_check().await.unwrap(), vec![victim]);
}

/// A task that ends, in any state, closes the cards it left open: they leave the pending list
/// at once, and an answer that comes later is refused.
#[tokio::test]
async fn an_ended_task_closes_its_pending_cards() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let t = new_tasks(&j, 5).await;
    let ends = [
        TaskState::Failed,
        TaskState::Canceled,
        TaskState::Completed,
        TaskState::Rejected,
    ];
    for task in &t {
        let waits = vec![raised(task, 1), state(task, TaskState::AuthRequired, 1)];
        j.append(&task.session_id, waits).await.unwrap();
    }
    assert_eq!(j.pending_interactions().await.unwrap().len(), t.len());
    for (task, end) in t.iter().zip(ends) {
        j.append(&task.session_id, vec![state(task, end, 2)])
            .await
            .unwrap();
    }
    // The one task left waiting keeps its card.
    let pending = j.pending_interactions().await.unwrap();
    assert_eq!(
        pending.iter().map(|r| &r.task_id).collect::<Vec<_>>(),
        [&t[4].task_id]
    );
    for task in &t[..4] {
        let row = j
            .interaction(&format!("i-{}", task.task_id))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(row.state, "closed");
        let late = j
            .append(&task.session_id, vec![answered(task, "accept", false, 3)])
            .await;
        assert!(matches!(late, Err(Error::Conflict(_))), "{late:?}");
    }
}

/// A journal written before ended tasks closed their cards still has them `pending`: they are
/// not listed, and do not keep their Sessions from retention.
#[tokio::test]
async fn an_old_journal_s_open_cards_of_ended_tasks_are_not_pending() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let t = new_tasks(&j, 1).await;
    let task = &t[0];
    let evs = vec![
        raised(task, 1),
        state(task, TaskState::AuthRequired, 1),
        state(task, TaskState::Failed, 2),
    ];
    j.append(&task.session_id, evs).await.unwrap();
    let id = format!("i-{}", task.task_id);
    let i = id.clone();
    j.read(move |c| {
        Ok(c.execute(
            "UPDATE interactions SET state = 'pending', answered_seq = NULL
             WHERE interaction_id = ?1",
            [i.as_str()],
        )?)
    })
    .await
    .unwrap();
    assert_eq!(j.interaction(&id).await.unwrap().unwrap().state, "pending");
    assert!(j.pending_interactions().await.unwrap().is_empty());
    let protected = j.read(crate::retention::protected).await.unwrap();
    assert!(
        !protected.contains(task.session_id.as_str()),
        "{protected:?}"
    );
}

/// The counts of unfinished tasks are every caller's, whatever the page size.
#[tokio::test]
async fn unfinished_tasks_are_counted_by_state() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let t = new_tasks(&j, 60).await;
    let bob = admitted(&j, admission("bob", "b1", "x")).await;
    for (i, task) in t.iter().enumerate() {
        let s = match i % 3 {
            0 => TaskState::AuthRequired,
            1 => TaskState::Completed,
            _ => TaskState::Working,
        };
        j.append(&task.session_id, vec![state(task, s, 1)])
            .await
            .unwrap();
    }
    let c = j.task_counts().await.unwrap();
    assert_eq!(
        (c.auth_required, c.working, c.submitted, c.input_required),
        (20, 20, 1, 0)
    );
    let _ = bob;
}

/// The agent prefix filter takes its characters literally.
#[tokio::test]
async fn the_agent_filter_takes_a_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let mut a = admission("alice", "p1", "x");
    a.agent_id = "peer:helper".into();
    let mut b = admission("alice", "p2", "x");
    b.agent_id = "peer_x".into();
    j.upsert_agents(
        vec![
            AgentSpec {
                id: "peer:helper".into(),
                ..AgentSpec::echo()
            },
            AgentSpec {
                id: "peer_x".into(),
                ..AgentSpec::echo()
            },
        ],
        t0(),
    )
    .await
    .unwrap();
    let p = admitted(&j, a).await;
    admitted(&j, b).await;
    admitted(&j, admission("alice", "e1", "x")).await;
    let list = |agent: &str| {
        let j = j.clone();
        let agent = agent.to_string();
        async move {
            j.list_tasks(TaskFilter {
                agent_prefix: Some(agent),
                limit: 50,
                ..Default::default()
            })
            .await
            .unwrap()
        }
    };
    let peers = list("peer:").await;
    assert_eq!(peers.total, 1);
    assert_eq!(peers.tasks[0].task_id, p.task_id);
    assert_eq!(list("peer%").await.total, 0);
    assert_eq!(list("peer_").await.total, 1, "_ is literal");
    assert_eq!(list("").await.total, 3);
}

/// A journal in `dir` migrated up to, not including, migration `name`: old rows are
/// inserted by hand, then `migrate` runs the rest.
fn journal_before(dir: &std::path::Path, name: &str) -> rusqlite::Connection {
    let c = rusqlite::Connection::open(dir.join("journal.db")).unwrap();
    let before = migrate::MIGRATIONS
        .iter()
        .position(|(n, _)| *n == name)
        .unwrap();
    for (_, sql) in &migrate::MIGRATIONS[..before] {
        c.execute_batch(sql).unwrap();
    }
    c.pragma_update(None, "user_version", before as i64)
        .unwrap();
    c
}

/// The migration that added outcomes gives the tasks that had ended theirs.
#[test]
fn ended_tasks_get_their_outcome() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = journal_before(dir.path(), "20261201230000_task_outcome");
    let answer = |opt: &str, expired: bool| {
        format!(
            r#"{{"type":"interaction_answered","answer":{{"interactionId":"i","option":"{opt}","messageId":"m","answeredBy":"you","expired":{expired}}}}}"#
        )
    };
    c.execute_batch(&format!(
        "INSERT INTO agents VALUES ('echo', 'Echo', '', 'echo', '{{}}', 't', 't');
         INSERT INTO sessions VALUES ('s', 'echo', 'alice', 'person', 'cx', 'a2a', 't', 't', 9);
         INSERT INTO events VALUES ('s', 1, 'a', 't', 'task_created', '{{}}');
         INSERT INTO events VALUES ('s', 2, 'b', 't', 'task_created', '{{}}');
         INSERT INTO events VALUES ('s', 3, 'c', 't', 'task_created', '{{}}');
         INSERT INTO events VALUES ('s', 4, 'd', 't', 'task_created', '{{}}');
         INSERT INTO events VALUES ('s', 5, 'a', 't', 'interaction_answered', '{}');
         INSERT INTO events VALUES ('s', 6, 'b', 't', 'interaction_answered', '{}');
         INSERT INTO events VALUES ('s', 7, 'c', 't', 'interaction_answered', '{}');
         INSERT INTO events VALUES ('s', 8, 'c', 't', 'artifact', '{{}}');
         INSERT INTO events VALUES ('s', 9, 'e', 't', 'task_created', '{{}}');
         INSERT INTO tasks VALUES ('a', 's', 'alice', 'echo', 'cx', 'm1', 'h', 't', 'TASK_STATE_COMPLETED', 't', 5, 1);
         INSERT INTO tasks VALUES ('b', 's', 'alice', 'echo', 'cx', 'm2', 'h', 't', 'TASK_STATE_FAILED', 't', 6, 2);
         INSERT INTO tasks VALUES ('c', 's', 'alice', 'echo', 'cx', 'm3', 'h', 't', 'TASK_STATE_COMPLETED', 't', 8, 3);
         INSERT INTO tasks VALUES ('d', 's', 'alice', 'echo', 'cx', 'm4', 'h', 't', 'TASK_STATE_CANCELED', 't', 4, 4);
         INSERT INTO tasks VALUES ('e', 's', 'alice', 'echo', 'cx', 'm5', 'h', 't', 'TASK_STATE_WORKING', 't', 9, 9);",
        answer("decline", false),
        answer("cancel", false),
        answer("decline", false),
    ))
    .unwrap();
    migrate::migrate(&mut c).unwrap();
    let got: Vec<(String, Option<String>)> = c
        .prepare("SELECT task_id, outcome FROM tasks ORDER BY task_id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    let want = [
        ("a", Some("declined")),
        ("b", Some("canceled")),
        ("c", Some("completed")),
        ("d", Some("canceled")),
        ("e", None),
    ]
    .map(|(a, b)| (a.to_string(), b.map(String::from)));
    assert_eq!(got, want);
}

/// (indexed, queued) counts of task text matching `zebra`.
async fn zebra_text(j: &Journal) -> (i64, i64) {
    j.read(|c| {
        Ok((
            c.query_row(
                "SELECT count(*) FROM task_text WHERE task_text MATCH 'zebra'",
                [],
                |r| r.get(0),
            )?,
            c.query_row(
                "SELECT count(*) FROM task_text_pending WHERE body LIKE '%zebra%'",
                [],
                |r| r.get(0),
            )?,
        ))
    })
    .await
    .unwrap()
}

/// The writer queues each event's search text and indexes the queue in bulk (one FTS5
/// segment for many tasks, not one per commit), yet every search finds the text of every
/// task committed before it asked, and the index stays whole.
#[tokio::test]
async fn a_search_finds_the_text_of_every_task_committed_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    for round in 0..20 {
        let (a, b) = tokio::join!(
            j.admit(admission("alice", &format!("z1-{round}"), "zebra crossing")),
            j.admit(admission("bob", &format!("z2-{round}"), "a zebra again")),
        );
        a.unwrap().unwrap();
        b.unwrap().unwrap();
        if round == 0 {
            // Queued, not indexed: nothing asked for it yet.
            assert_eq!(zebra_text(&j).await, (0, 2));
        }
        let found = j.list_tasks(text_search("zebra")).await.unwrap();
        assert_eq!(found.tasks.len(), 2 * (round + 1), "round {round}");
    }
    admitted(&j, admission("carol", "z3", "zebra at last")).await;
    let q = queries::search::fts_query("zebra");
    let (page, hits) = j.list_task_digests(text_search("zebra"), q).await.unwrap();
    assert_eq!(page.tasks.len(), 41);
    assert!(hits.iter().all(|(_, hit)| hit.is_some()), "{hits:?}");
    assert_eq!(zebra_text(&j).await, (41, 0));
    j.call(|c| {
        Ok(c.execute(
            "INSERT INTO task_text(task_text, rank) VALUES ('integrity-check', 1)",
            [],
        )?)
    })
    .await
    .unwrap();
}

/// Queued text is indexed without a search once enough of it waits, and once the writer has
/// been idle a moment.
#[tokio::test]
async fn queued_text_is_indexed_in_bulk_and_when_the_writer_is_idle() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let n = writer::FLUSH_AT + 20;
    let mut all = tokio::task::JoinSet::new();
    for i in 0..n {
        let j = j.clone();
        all.spawn(async move {
            j.admit(admission("alice", &format!("b{i}"), "zebra herd"))
                .await
        });
    }
    while let Some(r) = all.join_next().await {
        r.unwrap().unwrap().unwrap();
    }
    let (indexed, queued) = zebra_text(&j).await;
    assert_eq!(indexed + queued, n as i64);
    assert!(
        indexed >= writer::FLUSH_AT as i64,
        "{indexed} indexed, {queued} queued"
    );
    // Idle: the rest follows by itself.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while zebra_text(&j).await != (n as i64, 0) {
        assert!(
            std::time::Instant::now() < deadline,
            "{:?}",
            zebra_text(&j).await
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Text still queued when the journal stopped (a crash, a kill) is indexed when it opens.
#[tokio::test]
async fn text_queued_when_the_journal_stopped_is_indexed_when_it_opens() {
    let dir = tempfile::tempdir().unwrap();
    {
        let j = journal(&dir).await;
        admitted(&j, admission("alice", "k1", "zebra overnight")).await;
        assert_eq!(zebra_text(&j).await, (0, 1));
    }
    let j = journal(&dir).await;
    assert_eq!(zebra_text(&j).await, (1, 0));
    let found = j.list_tasks(text_search("zebra")).await.unwrap();
    assert_eq!(found.tasks.len(), 1);
}

/// A blocking caller's short turn (its start, output and end, sent without waiting, as the
/// runtime's turn sink does) commits with the task's early admission: one commit per task,
/// not two. The writer waits for the turn only while it goes on (`writer::EARLY_GAP`, longer
/// in these tests so a busy machine cannot split one).
#[tokio::test]
async fn a_short_turn_commits_with_its_early_admission() {
    use std::sync::atomic::Ordering;
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let rounds = 20;
    let before = j.inner.shared.commits.load(Ordering::Relaxed);
    for i in 0..rounds {
        let (out, live) = j
            .admit_early(admission("alice", &format!("s{i}"), "hello"))
            .await
            .unwrap();
        let task = out.unwrap().task().clone();
        let guard = TurnGuard::default();
        let ev = |body| NewEvent {
            task_id: Some(task.task_id.to_string()),
            body,
            at: t0(),
        };
        let turn = [
            EventBody::TurnStarted {
                through: None,
                working: true,
            },
            EventBody::Reply {
                message: msg(&format!("r{i}"), "hello back"),
            },
            EventBody::TaskState {
                state: TaskState::Completed,
                message: None,
            },
        ];
        // Each step takes a moment, as an engine's do (the thread is this test's runtime).
        let sent: Vec<_> = turn
            .into_iter()
            .map(|body| {
                std::thread::sleep(std::time::Duration::from_micros(100));
                j.submit_append(&task.session_id, vec![ev(body)], Some(guard.clone()))
            })
            .collect();
        for s in sent {
            s.wait().await.unwrap();
        }
        let mut live = live.unwrap();
        assert_eq!(live.recv().await.unwrap().seq, 1);
    }
    let commits = j.inner.shared.commits.load(Ordering::Relaxed) - before;
    // One each (without the wait: two to four each).
    assert_eq!(commits, rounds, "{commits} commits for {rounds} tasks");
}

/// On a multi-thread runtime a batch's answers and events go out from one task there
/// (`writer::Deliver`): still every event of a batch is published before its caller hears,
/// in seq order, and an early admission's subscription yields its task's events.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_is_delivered_from_the_runtime_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let j = Journal::open(dir.path().join("journal.db")).unwrap();
    j.upsert_agents(vec![AgentSpec::echo()], t0())
        .await
        .unwrap();
    let mut all = j.hub().subscribe_all();
    let mut tasks = Vec::new();
    for i in 0..50 {
        let (out, live) = j
            .admit_early(admission("alice", &format!("d{i}"), "hello"))
            .await
            .unwrap();
        let task = out.unwrap().task().clone();
        let mut live = live.expect("an early admission subscribes");
        let evs = j
            .append(
                &task.session_id,
                vec![NewEvent {
                    task_id: Some(task.task_id.to_string()),
                    body: EventBody::TaskState {
                        state: TaskState::Completed,
                        message: None,
                    },
                    at: t0(),
                }],
            )
            .await
            .unwrap();
        // Published before the append was answered: both are there already.
        for want in [1, evs[0].seq] {
            let got = all.try_recv().expect("published before the answer");
            assert_eq!(
                (got.session_id.as_str(), got.seq),
                (task.session_id.as_str(), want)
            );
            assert_eq!(live.try_recv().unwrap().seq, want);
        }
        tasks.push(task);
    }
    assert_eq!(tasks.len(), 50);
}

fn text_search(q: &str) -> TaskFilter {
    TaskFilter {
        text: queries::search::fts_query(q),
        limit: 50,
        ..Default::default()
    }
}

/// The full-text index follows every append, finds inputs, outputs, questions and reasons,
/// takes any typed text without an SQL or FTS5 error, and is rebuilt identically from the
/// journal.
#[tokio::test]
async fn task_text_is_searchable_in_step_with_the_journal() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let deploy = admitted(
        &j,
        admission("alice", "d", "Deploy the staging server\nthen report"),
    )
    .await;
    let other = admitted(&j, admission("alice", "o", "summarise the news")).await;
    let mut ask = raised(&deploy, 1);
    if let EventBody::InteractionRaised { interaction } = &mut ask.body {
        interaction.command = Some("kubectl rollout restart".into());
    }
    j.append(&deploy.session_id, vec![ask]).await.unwrap();
    let mut no = answered(&deploy, "decline", false, 2);
    if let EventBody::InteractionAnswered { answer } = &mut no.body {
        answer.reason = Some("use the canary first".into());
    }
    j.append(
        &deploy.session_id,
        vec![no, state(&deploy, TaskState::Completed, 3)],
    )
    .await
    .unwrap();
    j.append(&other.session_id, vec![output(&other, 1)])
        .await
        .unwrap();

    let ids = |q: &'static str| {
        let j = j.clone();
        async move {
            let mut v: Vec<TaskId> = j
                .list_tasks(text_search(q))
                .await
                .unwrap()
                .tasks
                .into_iter()
                .map(|t| t.task_id)
                .collect();
            v.sort();
            v
        }
    };
    assert_eq!(ids("staging").await, [deploy.task_id.as_str()], "the input");
    assert_eq!(
        ids("kubectl rollout").await,
        [deploy.task_id.as_str()],
        "the command asked"
    );
    assert_eq!(
        ids("canary").await,
        [deploy.task_id.as_str()],
        "the reason answered"
    );
    assert_eq!(ids("done").await, [other.task_id.as_str()], "the output");
    assert_eq!(
        ids("deplo").await,
        [deploy.task_id.as_str()],
        "words are prefixes"
    );
    assert!(
        ids("staging news").await.is_empty(),
        "every word must match"
    );
    for hostile in [
        "\"",
        "a\" OR \"b",
        "NEAR(",
        "x:*",
        "${IFS}",
        "'; DROP TABLE tasks; --",
        "\u{202e}bidi\u{200b}",
        "\u{1b}[31m",
    ] {
        j.list_tasks(text_search(hostile)).await.unwrap();
    }

    // A snippet marks where it matched.
    let (page, digests) = j
        .list_task_digests(text_search("canary"), queries::search::fts_query("canary"))
        .await
        .unwrap();
    assert_eq!(page.tasks.len(), 1);
    assert_eq!(
        digests[0].1.as_deref(),
        Some("use the \u{2}canary\u{3} first")
    );
    assert_eq!(
        digests[0].0.title.as_deref(),
        Some("Deploy the staging server")
    );

    // Rebuilt from the journal, the index answers the same.
    let before: Vec<(String, String)> = j
        .read(|c| {
            Ok(
                c.prepare("SELECT task_id, body FROM task_text ORDER BY task_id, body")?
                    .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                    .collect::<rusqlite::Result<_>>()?,
            )
        })
        .await
        .unwrap();
    let n = j.rebuild_search().await.unwrap();
    let after: Vec<(String, String)> = j
        .read(|c| {
            Ok(
                c.prepare("SELECT task_id, body FROM task_text ORDER BY task_id, body")?
                    .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                    .collect::<rusqlite::Result<_>>()?,
            )
        })
        .await
        .unwrap();
    assert_eq!(before, after);
    assert_eq!(n as usize, after.len());
    assert_eq!(ids("canary").await, [deploy.task_id.as_str()]);
}

/// A journal from before the index gets it built at its next open.
#[tokio::test]
async fn an_older_journal_gets_its_index_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let t = admitted(&j, admission("alice", "m", "find me later")).await;
    drop(j);
    let path = dir.path().join("journal.db");
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch("DELETE FROM task_text; UPDATE task_text_state SET built = 0;")
            .unwrap();
    }
    let j = journal(&dir).await;
    let found = j.list_tasks(text_search("later")).await.unwrap();
    assert_eq!(found.tasks[0].task_id, t.task_id);
}

/// A digest says what a task is: its input's first line, its result, and its schedule.
#[tokio::test]
async fn a_digest_says_what_a_task_is() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let t = admitted(
        &j,
        admission("alice", "m", "\n  Check   the disks\nand more"),
    )
    .await;
    let mut done = state(&t, TaskState::Completed, 2);
    if let EventBody::TaskState { message, .. } = &mut done.body {
        *message = Some(Message::new(Role::Agent, vec![Part::text("exit code 0")]));
    }
    j.append(&t.session_id, vec![output(&t, 1), done])
        .await
        .unwrap();
    let row = j.task(&t.task_id).await.unwrap().unwrap();
    let d = j.task_digest(row).await.unwrap();
    assert_eq!(d.title.as_deref(), Some("Check the disks"));
    assert_eq!(
        d.result.as_deref(),
        Some("done"),
        "the output of a task that completed"
    );
    assert_eq!(
        (d.origin, d.caller_kind),
        (
            Some(sextant_core::Origin::A2a),
            Some(sextant_core::PrincipalKind::Person)
        )
    );
    assert_eq!(d.schedule_id, None);

    let f = admitted(&j, admission("alice", "f", "x")).await;
    let mut failed = state(&f, TaskState::Failed, 2);
    if let EventBody::TaskState { message, .. } = &mut failed.body {
        *message = Some(Message::new(
            Role::Agent,
            vec![Part::text("cannot start sh")],
        ));
    }
    j.append(&f.session_id, vec![output(&f, 1), failed])
        .await
        .unwrap();
    let d = j
        .task_digest(j.task(&f.task_id).await.unwrap().unwrap())
        .await
        .unwrap();
    assert_eq!(
        d.result.as_deref(),
        Some("cannot start sh"),
        "the error of a task that failed"
    );
}

/// A schedule's Run's task, admitted as the scheduler admits it (`run-<run_id>`, origin
/// `schedule`), or with another origin.
async fn run_task(j: &Journal, run: &RunRow, origin: sextant_core::Origin) -> TaskRow {
    let key = format!("run-{}", run.run_id);
    let mut a = admission(&run.executed_as, &key, &run.prompt);
    a.context_id = Some(key.into());
    a.origin = origin;
    admitted(j, a).await
}

#[tokio::test]
async fn runs_by_tasks_finds_the_runs_among_many_ended_tasks_in_one_read() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    j.create_schedule(schedule_row("s1", "2026-11-29T10:01:00.000Z"))
        .await
        .unwrap();
    let with_task = |slot: &str, task: &str| RunRow {
        record: RunRecord::Started,
        task_id: Some(task.into()),
        ..cron_run("s1", slot)
    };
    let a = with_task("2026-11-29T10:01:00.000Z", "t-a");
    let b = with_task("2026-11-29T10:02:00.000Z", "t-b\"'],\u{202e}");
    let idle = cron_run("s1", "2026-11-29T10:03:00.000Z");
    j.insert_runs(vec![a.clone(), b.clone(), idle])
        .await
        .unwrap();
    // Ids that are no Run's (and one that would break a hand-made list) are passed over.
    let asked = ["t-x", b.task_id.as_deref().unwrap(), "t-a", "", "t-a"]
        .map(String::from)
        .to_vec();
    let found = j.runs_by_tasks(asked).await.unwrap();
    let ids: Vec<&str> = found.iter().map(|r| r.run_id.as_str()).collect();
    assert_eq!(ids, vec![a.run_id.as_str(), b.run_id.as_str()]);
    assert!(j.runs_by_tasks(Vec::new()).await.unwrap().is_empty());
}

#[tokio::test]
async fn schedule_grants_apply_only_to_the_schedules_runs_under_the_same_prompt_and_agent() {
    use sextant_core::schedule::grant_fingerprint;
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    j.create_schedule(schedule_row("s1", "2026-11-29T10:01:00.000Z"))
        .await
        .unwrap();
    let run = cron_run("s1", "2026-11-29T10:01:00.000Z");
    let other = cron_run("s1", "2026-11-29T10:02:00.000Z");
    j.insert_runs(vec![run.clone(), other.clone()])
        .await
        .unwrap();
    let task = run_task(&j, &run, sextant_core::Origin::Schedule).await;
    let scope = j.run_scope(task.clone()).await.unwrap().expect("a Run");
    assert_eq!((scope.schedule_id.as_str(), scope.current), ("s1", true));
    assert!(scope.grants.is_empty());
    // Not a Run: the same ids sent by anyone else than the scheduler.
    let forged = run_task(&j, &other, sextant_core::Origin::A2a).await;
    assert_eq!(j.run_scope(forged).await.unwrap(), None);

    let action = sextant_core::ApprovedAction::shell("p", None);
    let grant = GrantRow {
        grant_id: "g1".into(),
        schedule_id: "s1".into(),
        grant_key: format!("shell:{}", action.digest),
        digest: action.digest.clone(),
        action,
        fingerprint: grant_fingerprint("p", "echo"),
        granted_by: "you".into(),
        granted_at: sextant_core::ids::parse_time("2026-11-29T10:01:05.000Z").unwrap(),
        run_id: Some(run.run_id.clone()),
        task_id: task.task_id.clone(),
        interaction_id: "i1".into(),
        voided_at: None,
        void_reason: None,
    };
    j.put_schedule_grant(grant.clone()).await.unwrap();
    let scope = j.run_scope(task.clone()).await.unwrap().unwrap();
    assert_eq!(scope.grants, vec![grant.grant_key.clone()]);
    assert_eq!(j.schedule_grants("s1").await.unwrap(), vec![grant.clone()]);

    // The prompt changed behind the API's back: the fingerprint alone stops the grant.
    j.call(|c| {
        c.execute(
            "UPDATE schedules SET prompt = 'q' WHERE schedule_id = 's1'",
            [],
        )?;
        Ok(())
    })
    .await
    .unwrap();
    let scope = j.run_scope(task.clone()).await.unwrap().unwrap();
    assert!(!scope.current && scope.grants.is_empty(), "{scope:?}");
    // Changed through the API (and back), the grant is void for good.
    let mut s = j.schedule("s1").await.unwrap().unwrap();
    s.prompt = "p".into();
    j.update_schedule(s.clone(), false).await.unwrap();
    assert_eq!(
        j.run_scope(task.clone())
            .await
            .unwrap()
            .unwrap()
            .grants
            .len(),
        1
    );
    s.agent_id = "other".into();
    j.update_schedule(s.clone(), false).await.unwrap();
    s.agent_id = "echo".into();
    j.update_schedule(s, false).await.unwrap();
    let stored = j.schedule_grants("s1").await.unwrap();
    assert_eq!(
        stored[0].void_reason.as_deref(),
        Some("the schedule's Agent changed")
    );
    assert!(
        j.run_scope(task.clone())
            .await
            .unwrap()
            .unwrap()
            .grants
            .is_empty()
    );

    // Revoked, it is gone.
    assert!(j.revoke_schedule_grant("s1", "g1").await.unwrap());
    assert!(!j.revoke_schedule_grant("s1", "g1").await.unwrap());
    assert!(j.schedule_grants("s1").await.unwrap().is_empty());
}

/// The console's lists of every caller's tasks read a page's rows, not the journal: ended
/// tasks newest first down `tasks_ended`, stopping after the page, and unfinished ones from
/// `tasks_live` (walking an ordered index for them would read every ended task too). Each
/// page also has the rows a plain read of the tasks gives, on a first page and after a cursor.
#[tokio::test]
async fn console_task_lists_read_a_page_not_the_journal() {
    use crate::queries::tasks::{TaskStatus, list, page_sql};
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let mut ids = Vec::new();
    for i in 0..12 {
        let caller = if i % 3 == 0 { "bob" } else { "alice" };
        ids.push(admitted(&j, admission(caller, &format!("m{i}"), "x")).await);
    }
    for (n, t) in ids.iter().enumerate().filter(|(n, _)| n % 4 != 1) {
        let state = match n % 4 {
            2 => TaskState::Failed,
            3 => TaskState::InputRequired,
            _ => TaskState::Completed,
        };
        j.append_one(
            &t.session_id,
            &t.task_id,
            EventBody::TaskState {
                state,
                message: None,
            },
            t0() + chrono::Duration::seconds(n as i64),
        )
        .await
        .unwrap();
    }
    let page = |status: Option<TaskStatus>, state: Option<TaskState>| TaskFilter {
        status,
        state,
        limit: 6,
        ..Default::default()
    };
    let cases = [
        (page(None, None), "tasks_ended"),
        (page(None, Some(TaskState::Completed)), "tasks_ended"),
        (
            page(
                Some(TaskStatus::Ended(sextant_core::TaskOutcome::Failed)),
                None,
            ),
            "tasks_ended",
        ),
        (
            TaskFilter {
                caller: Some("alice".into()),
                agent_id: Some("echo".into()),
                ..page(None, None)
            },
            "tasks_by_caller_agent",
        ),
        (page(Some(TaskStatus::Unfinished), None), "tasks_live"),
        (page(Some(TaskStatus::Active), None), "tasks_live"),
        (page(Some(TaskStatus::Waiting), None), "tasks_live"),
        (page(None, Some(TaskState::Submitted)), "tasks_live"),
    ];
    // The next pages, after the first list's newest task: of unfinished tasks, and of all
    // (where the two indexes' pages merge).
    let mut cases = cases.to_vec();
    for (status, index) in [
        (Some(TaskStatus::Unfinished), "tasks_live"),
        (None, "tasks_ended"),
    ] {
        let newest = j
            .list_tasks(page(status.clone(), None))
            .await
            .unwrap()
            .tasks[0]
            .clone();
        let cursor = (
            sextant_core::ids::format_time(newest.state_at),
            newest.task_id.to_string(),
        );
        cases.push((
            TaskFilter {
                cursor: Some(cursor),
                ..page(status, None)
            },
            index,
        ));
    }
    j.read(move |c| {
        for (f, index) in cases {
            let (sql, params) = page_sql(&f);
            // (id, parent, detail) of each step.
            let plan: Vec<(i64, i64, String)> = c
                .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))?
                .query_map(rusqlite::params_from_iter(params), |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(3)?))
                })?
                .collect::<rusqlite::Result<_>>()?;
            assert!(plan.iter().any(|s| s.2.contains(index)), "{f:?}: {plan:?}");
            // Never every task; and ended tasks are read in the index's order, not sorted
            // (only a page's rows are, where two pages merge).
            assert!(!plan.iter().any(|s| s.2 == "SCAN tasks"), "{f:?}: {plan:?}");
            for scan in plan.iter().filter(|s| !s.2.contains("tasks_live")) {
                if scan.2.starts_with("SCAN tasks") || scan.2.starts_with("SEARCH tasks") {
                    let sorted = plan
                        .iter()
                        .any(|s| s.1 == scan.1 && s.2.contains("TEMP B-TREE"));
                    assert!(!sorted, "{f:?}: {plan:?}");
                }
            }
            // The same rows as reading every task and sorting them.
            let (w, p) = crate::queries::tasks::filter_sql(&f);
            let truth: Vec<(String, String)> = c
                .prepare(&format!(
                    "SELECT state_at, task_id FROM tasks NOT INDEXED WHERE {w} \
                     ORDER BY state_at DESC, task_id DESC"
                ))?
                .query_map(rusqlite::params_from_iter(p), |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })?
                .collect::<rusqlite::Result<_>>()?;
            let want: Vec<String> = truth
                .into_iter()
                .filter(|row| f.cursor.as_ref().is_none_or(|cut| row < cut))
                .take(6)
                .map(|(_, id)| id)
                .collect();
            let got: Vec<String> = list(c, &f)?
                .tasks
                .iter()
                .map(|t| t.task_id.to_string())
                .collect();
            assert!(!want.is_empty(), "{f:?}: the case lists nothing");
            assert_eq!(got, want, "{f:?}");
        }
        Ok(())
    })
    .await
    .unwrap();
}

/// `totalSize` comes from `task_tally` when the filter allows (caller, Agent, state), so a
/// list costs the same on a journal of a million tasks as on an empty one; and the tally stays
/// exact through inserts, state changes and deletes. Each count is checked against a
/// `COUNT(*)` of the tasks themselves, and the plans against reading the tasks.
#[tokio::test]
async fn task_counts_come_from_the_tally_and_stay_exact() {
    use crate::queries::tasks::{TaskStatus, count, filter_sql};
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    j.upsert_agents(
        vec![AgentSpec {
            id: "other".into(),
            ..AgentSpec::echo()
        }],
        t0(),
    )
    .await
    .unwrap();
    let mut ids = Vec::new();
    for (i, (caller, agent)) in [
        ("alice", "echo"),
        ("alice", "echo"),
        ("alice", "other"),
        ("bob", "echo"),
        ("alice", "echo"),
    ]
    .into_iter()
    .enumerate()
    {
        let mut a = admission(caller, &format!("m{i}"), "x");
        a.agent_id = agent.into();
        ids.push(admitted(&j, a).await);
    }
    for (t, state) in [
        (&ids[0], TaskState::Completed),
        (&ids[1], TaskState::Working),
        (&ids[3], TaskState::Completed),
    ] {
        j.append_one(
            &t.session_id,
            &t.task_id,
            EventBody::TaskState {
                state,
                message: None,
            },
            t0() + chrono::Duration::seconds(5),
        )
        .await
        .unwrap();
    }
    let filters = || {
        let f = |caller: Option<&str>, agent: Option<&str>| TaskFilter {
            caller: caller.map(String::from),
            agent_id: agent.map(String::from),
            limit: 10,
            ..Default::default()
        };
        vec![
            f(Some("alice"), Some("echo")),
            f(Some("alice"), Some("other")),
            f(Some("bob"), Some("echo")),
            f(Some("carol"), Some("echo")),
            f(None, Some("echo")),
            f(Some("alice"), None),
            f(None, None),
            TaskFilter {
                state: Some(TaskState::Completed),
                ..f(Some("alice"), Some("echo"))
            },
            TaskFilter {
                status: Some(TaskStatus::Unfinished),
                ..f(None, None)
            },
            TaskFilter {
                status: Some(TaskStatus::Active),
                ..f(Some("alice"), Some("echo"))
            },
        ]
    };
    let check = |when: &'static str| {
        let j = j.clone();
        async move {
            j.read(move |c| {
                for f in filters() {
                    let (w, p) = filter_sql(&f);
                    let truth: i64 = c.query_row(
                        &format!("SELECT COUNT(*) FROM tasks WHERE {w}"),
                        rusqlite::params_from_iter(p),
                        |r| r.get(0),
                    )?;
                    assert_eq!(count(c, &f)?, truth as u64, "{when}: {f:?}");
                }
                for caller in [Some("alice"), Some("bob"), Some("carol"), None] {
                    let truth: i64 = c.query_row(
                        "SELECT COUNT(*) FROM sessions WHERE (?1 IS NULL OR caller = ?1)",
                        [caller],
                        |r| r.get(0),
                    )?;
                    let (_, total) = crate::queries::sessions::list(c, caller, None, None, 1)?;
                    assert_eq!(total, truth as u64, "{when}: Sessions of {caller:?}");
                }
                Ok(())
            })
            .await
            .unwrap()
        }
    };
    check("after inserts and state changes").await;
    assert_eq!(
        j.list_tasks(TaskFilter {
            caller: Some("alice".into()),
            agent_id: Some("echo".into()),
            limit: 1,
            ..Default::default()
        })
        .await
        .unwrap()
        .total,
        3
    );

    // A delete (retention) keeps the tally exact.
    let gone = ids[1].task_id.clone();
    j.read(move |c| {
        c.execute_batch("PRAGMA foreign_keys = OFF")?;
        let session: String = c.query_row(
            "SELECT session_id FROM tasks WHERE task_id = ?1",
            [gone.as_str()],
            |r| r.get(0),
        )?;
        c.execute("DELETE FROM tasks WHERE task_id = ?1", [gone.as_str()])?;
        c.execute("DELETE FROM sessions WHERE session_id = ?1", [session])?;
        Ok(())
    })
    .await
    .unwrap();
    check("after a delete").await;

    // The caller's count reads the tally, not the tasks; the caller's page walks the
    // (caller, Agent) index in order, without sorting the caller's history.
    let plans = j
        .read(|c| {
            let f = TaskFilter {
                caller: Some("alice".into()),
                agent_id: Some("echo".into()),
                limit: 10,
                ..Default::default()
            };
            let plan = |sql: &str| -> rusqlite::Result<String> {
                let mut st = c.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))?;
                st.query_map(["alice", "echo"], |r| r.get::<_, String>(3))?
                    .collect::<rusqlite::Result<Vec<_>>>()
                    .map(|v| v.join("; "))
            };
            assert!(super::queries::tasks::tally_counts(&f));
            Ok((
                plan("SELECT COALESCE(SUM(n), 0) FROM task_tally WHERE 1 AND caller = ?1 AND agent_id = ?2")?,
                plan(
                    "SELECT task_id FROM tasks WHERE 1 AND caller = ?1 AND agent_id = ?2 \
                     ORDER BY state_at DESC, task_id DESC LIMIT 11",
                )?,
            ))
        })
        .await
        .unwrap();
    assert!(plans.0.contains("task_tally"), "{}", plans.0);
    assert!(
        plans.1.contains("tasks_by_caller_agent") && !plans.1.contains("TEMP B-TREE"),
        "{}",
        plans.1
    );
}

/// Opening a journal that migrations rewrote leaves no pages in the WAL: a migration over a
/// large journal (the indexes of a million tasks: 150 MB) would otherwise sit in the WAL,
/// searched by every read, until the first write's checkpoint.
#[tokio::test]
async fn opening_after_migrations_leaves_the_wal_empty() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.db");
    let _j = Journal::open(&path).unwrap();
    let wal = std::fs::metadata(dir.path().join("journal.db-wal")).map_or(0, |m| m.len());
    assert_eq!(wal, 0, "the WAL after the migrations of a new journal");
}

/// A WAL that grew past the checkpoint threshold (a reader held an old snapshot, so the
/// checkpoints could not let it start again) is cut back once it can start again, instead of
/// keeping its high-water size on disk.
#[tokio::test]
async fn a_grown_wal_is_cut_back_after_it_starts_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.db");
    let j = journal(&dir).await;
    let wal_size = || std::fs::metadata(dir.path().join("journal.db-wal")).map_or(0, |m| m.len());
    let big = "x".repeat(64 * 1024);
    // A reader pins the snapshot before the writes.
    let reader = rusqlite::Connection::open(&path).unwrap();
    reader
        .execute_batch("BEGIN; SELECT COUNT(*) FROM tasks;")
        .unwrap();
    let mut n = 0;
    while wal_size() < 2 * wal::WAL_SIZE_LIMIT as u64 {
        admitted(&j, admission("alice", &format!("big{n}"), &big)).await;
        n += 1;
    }
    reader.execute_batch("COMMIT").unwrap();
    drop(reader);
    // Writes go on: a checkpoint copies everything, the WAL starts again and is cut back.
    for i in 0..2_000 {
        admitted(&j, admission("bob", &format!("after{i}"), "x")).await;
        if wal_size() <= wal::WAL_SIZE_LIMIT as u64 {
            return;
        }
    }
    panic!("the WAL stayed at {} bytes", wal_size());
}

/// Every line an export writes parses back into the row it was written from: the Sessions,
/// tasks, events, schedules and Runs read back equal what the journal's own queries return.
#[tokio::test]
async fn an_export_parses_back_into_the_journal_s_rows() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let tasks = new_tasks(&j, 3).await;
    j.append(
        &tasks[0].session_id,
        vec![state(&tasks[0], TaskState::Working, 1)],
    )
    .await
    .unwrap();
    j.append(
        &tasks[0].session_id,
        vec![state(&tasks[0], TaskState::Completed, 2)],
    )
    .await
    .unwrap();
    j.create_schedule(schedule_row("s1", "2026-11-29T10:01:00.000Z"))
        .await
        .unwrap();
    j.insert_run(cron_run("s1", "2026-11-29T10:01:00.000Z"))
        .await
        .unwrap();

    let text = export_text(&j).await;
    let lines = export_lines(&text);
    // Each line is one object with its type first.
    for l in text.lines() {
        assert!(l.starts_with("{\"type\":\""), "{l}");
    }

    let export::Line::Header(h) = &lines[0] else {
        panic!("the header comes first: {:?}", lines[0])
    };
    assert_eq!((h.format.as_str(), h.version), (export::FORMAT, 1));
    assert_eq!(h.schema_version as usize, migrate::MIGRATIONS.len());
    let export::Line::End(end) = lines.last().unwrap() else {
        panic!("the end line comes last")
    };

    let mut sessions = Vec::new();
    let mut got_tasks = Vec::new();
    let mut events = Vec::new();
    let mut schedules = Vec::new();
    let mut runs = Vec::new();
    for l in &lines[1..lines.len() - 1] {
        match l {
            export::Line::Session(s) => sessions.push(s.clone()),
            export::Line::Task(t) => got_tasks.push(t.clone()),
            export::Line::Event(e) => events.push(e.clone()),
            export::Line::Schedule(s) => schedules.push(s.clone()),
            export::Line::Run(r) => runs.push(r.clone()),
            other => panic!("unexpected line {other:?}"),
        }
    }
    assert_eq!(end.counts["session"], 3);
    assert_eq!(end.counts["event"] as usize, events.len());

    for t in &tasks {
        let s = j.session(&t.session_id).await.unwrap().unwrap();
        assert!(sessions.contains(&s), "{s:?}");
        let row = j.task(&t.task_id).await.unwrap().unwrap();
        // The hash comes from the task's creating input (the tasks table has none of its own).
        let line = export::TaskLine {
            task: row,
            content_hash: Some(sextant_core::ids::sha256_hex(b"x")),
        };
        assert!(got_tasks.contains(&line), "{line:?}");
        let evs = j.session_events(&t.session_id, 0, 100).await.unwrap();
        assert!(!evs.is_empty());
        for e in evs {
            assert!(events.contains(&e), "{e:?}");
        }
    }
    assert_eq!(got_tasks.len(), 3);
    let done = got_tasks
        .iter()
        .find(|t| t.task.task_id == tasks[0].task_id)
        .unwrap();
    assert_eq!(done.task.state, TaskState::Completed);
    assert_eq!(schedules, vec![j.schedule("s1").await.unwrap().unwrap()]);
    assert_eq!(runs, j.runs("s1", None, 10).await.unwrap().0);
}

/// A snapshot taken while admissions keep committing holds every task committed before it
/// began, passes the integrity check, and leaves the live journal writable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_snapshot_under_writes_holds_everything_committed_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let committed = std::sync::Arc::new(Mutex::new(Vec::new()));
    let mut writers = Vec::new();
    for w in 0..4 {
        let (j, stop, committed) = (j.clone(), stop.clone(), committed.clone());
        writers.push(tokio::spawn(async move {
            let mut i = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let t = admitted(&j, admission("alice", &format!("w{w}-{i}"), "x")).await;
                committed.lock().unwrap().push(t.task_id);
                i += 1;
            }
        }));
    }
    // Let some commit first.
    while committed.lock().unwrap().len() < 50 {
        tokio::task::yield_now().await;
    }
    let before: Vec<TaskId> = committed.lock().unwrap().clone();
    let dest = dir.path().join("copy.db");
    let checked = j.snapshot(dest.clone()).await.unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for w in writers {
        w.await.unwrap();
    }
    assert!(checked.tasks as usize >= before.len(), "{checked:?}");
    assert!(
        !dir.path().join("copy.db-wal").exists(),
        "one self-contained file"
    );
    let copy = Journal::open(&dest).unwrap();
    for id in &before {
        assert!(copy.task(id).await.unwrap().is_some(), "task {id} missing");
    }
    assert!(copy.rebuild_check().await.unwrap().is_empty());
    // The original still takes writes.
    admitted(&j, admission("alice", "after", "x")).await;
    // A snapshot is never written over a file.
    assert!(j.snapshot(dest).await.is_err());
}

#[test]
fn a_file_that_is_not_a_journal_fails_the_check() {
    let dir = tempfile::tempdir().unwrap();
    let junk = dir.path().join("junk.db");
    std::fs::write(&junk, b"definitely not sqlite, but long enough to have a header..........................................................").unwrap();
    assert!(backup::check(&junk).is_err());
    let empty = dir.path().join("empty.db");
    rusqlite::Connection::open(&empty)
        .unwrap()
        .execute_batch("CREATE TABLE t (x)")
        .unwrap();
    let e = backup::check(&empty).unwrap_err().to_string();
    assert!(e.contains("not a Sextant journal"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_run_on_the_fixed_reader_threads_only() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    // Many reads at once, each holding its thread a moment so that the reads overlap: on an
    // elastic pool (tokio's blocking pool) they would spread over new threads.
    let reads: Vec<_> = (0..64)
        .map(|_| {
            let j = j.clone();
            tokio::spawn(async move {
                j.read(|c| {
                    c.query_row("SELECT count(*) FROM events", [], |r| r.get::<_, i64>(0))?;
                    std::thread::sleep(std::time::Duration::from_millis(2));
                    Ok(std::thread::current().name().map(str::to_owned))
                })
                .await
                .unwrap()
            })
        })
        .collect();
    let mut names = std::collections::BTreeSet::new();
    for r in reads {
        names.insert(r.await.unwrap());
    }
    assert!(names.len() <= READERS, "{names:?}");
    for name in &names {
        assert!(
            name.as_deref()
                .is_some_and(|n| n.starts_with("sextant-journal-read-")),
            "{name:?}"
        );
    }
}

#[tokio::test]
async fn a_read_that_panics_fails_alone() {
    let dir = tempfile::tempdir().unwrap();
    let j = journal(&dir).await;
    for _ in 0..READERS * 2 {
        let e = j
            .read(|_| -> Result<()> { panic!("a read that panics (expected in this test)") })
            .await
            .unwrap_err();
        assert!(matches!(e, Error::Failed(_)), "{e:?}");
    }
    // Every reader is still there, on a working connection.
    let n: i64 = j
        .read(|c| Ok(c.query_row("SELECT count(*) FROM events", [], |r| r.get(0))?))
        .await
        .unwrap();
    assert_eq!(n, 0);
}

/// The spelling migration: a Session stored with serde's old `anonymous_local` reads as
/// `anonymous-local`, the spelling of keys and access lists; other kinds are untouched.
#[test]
fn old_caller_kind_spelling_is_migrated() {
    let dir = tempfile::tempdir().unwrap();
    let mut c = journal_before(dir.path(), "20261202160000_caller_kind_spelling");
    c.execute_batch(
        "INSERT INTO agents VALUES ('echo', 'Echo', '', 'echo', '{}', 't', 't');
         INSERT INTO sessions VALUES ('s1', 'echo', 'anonymous-local:loopback:anonymous',
             'anonymous_local', 'c1', 'a2a', 't', 't', 0);
         INSERT INTO sessions VALUES ('s2', 'echo', 'peer:sextant:alice', 'peer', 'c2', 'a2a',
             't', 't', 0);",
    )
    .unwrap();
    migrate::migrate(&mut c).unwrap();
    let kinds: Vec<String> = c
        .prepare("SELECT caller_kind FROM sessions ORDER BY session_id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(kinds, ["anonymous-local", "peer"]);
}

/// An export of `j` (at its schema version, taken at `t0`), as text.
async fn export_text(j: &Journal) -> String {
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
    String::from_utf8(bytes).unwrap()
}

/// The lines of an export, parsed.
fn export_lines(text: &str) -> Vec<export::Line> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

mod retention;
mod stored_once;

/// An export of a journal that is not migrated yet says so as its own error (the caller can
/// tell the person to start Sextant once), not as a write conflict.
#[test]
fn exporting_an_unmigrated_journal_is_too_old() {
    let dir = tempfile::tempdir().unwrap();
    drop(journal_before(
        dir.path(),
        "20261202160000_caller_kind_spelling",
    ));
    let err = crate::export::open_for_export(&dir.path().join("journal.db")).unwrap_err();
    assert!(
        matches!(err, Error::TooOld { found, known } if found < known && known == migrate::MIGRATIONS.len()),
        "{err:?}"
    );
    assert!(
        err.to_string().contains("start Sextant on it once"),
        "{err}"
    );
}

/// A snapshot into a file that exists is refused as a file error, not a write conflict.
#[test]
fn a_snapshot_never_overwrites_a_file() {
    let dir = tempfile::tempdir().unwrap();
    drop(journal_before(dir.path(), "20261129000000_init"));
    let dest = dir.path().join("copy.db");
    std::fs::write(&dest, b"keep me").unwrap();
    let err = crate::backup::snapshot(&dir.path().join("journal.db"), &dest).unwrap_err();
    assert!(matches!(err, Error::File(_)), "{err:?}");
    assert_eq!(std::fs::read(&dest).unwrap(), b"keep me");
}

/// The journal holds every transcript: a new one is 0600, and so are the `-wal` and `-shm`
/// SQLite makes beside it (they take the main file's mode), whatever the umask; an existing one
/// readable by others is made owner-only at open, and so is a snapshot.
#[cfg(unix)]
#[tokio::test]
async fn the_journal_and_its_wal_are_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("journal.db");
    let j = journal(&dir).await;
    let wal = dir.path().join("journal.db-wal");
    let shm = dir.path().join("journal.db-shm");
    assert!(wal.exists() && shm.exists());
    assert_eq!(mode(&db), 0o600);
    assert_eq!(mode(&wal), 0o600);
    assert_eq!(mode(&shm), 0o600);
    let copy = dir.path().join("copy.db");
    j.snapshot(copy.clone()).await.unwrap();
    assert_eq!(mode(&copy), 0o600);
    drop(j);

    // A journal an older Sextant left 0644 (its WAL too) is tightened when it opens.
    let old = tempfile::tempdir().unwrap();
    let db = old.path().join("journal.db");
    std::fs::copy(&copy, &db).unwrap();
    std::fs::write(old.path().join("journal.db-wal"), b"").unwrap();
    for f in ["journal.db", "journal.db-wal"] {
        std::fs::set_permissions(old.path().join(f), std::fs::Permissions::from_mode(0o644))
            .unwrap();
    }
    let j = Journal::open(&db).unwrap();
    assert_eq!(mode(&db), 0o600);
    assert_eq!(mode(&old.path().join("journal.db-wal")), 0o600);
    assert_eq!(mode(&old.path().join("journal.db-shm")), 0o600);
    drop(j);
}
