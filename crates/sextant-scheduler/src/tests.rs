//! The scheduler against a real journal and runtime (echo Agent), with a manual clock: the
//! tests move wall time and call `run_due_now`, or wake the loop; nothing sleeps.

use std::sync::Arc;
use std::time::Duration as StdDuration;

use chrono::{DateTime, Duration, Utc};
use sextant_core::a2a::TaskState;
use sextant_core::projection::message_text;
use sextant_core::{AgentSpec, Clock, ManualClock, MissedRunPolicy, Principal, ScheduleSource};
use sextant_journal::Journal;
use sextant_runtime::{Runtime, RuntimeConfig};
use tokio_util::sync::CancellationToken;

use super::*;

fn utc(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().to_utc()
}

/// 10:00:30 UTC: the every-minute schedule's first slot is 10:01:00.
fn t0() -> DateTime<Utc> {
    utc("2026-12-01T10:00:30Z")
}

struct Rig {
    scheduler: Scheduler,
    runtime: Runtime,
    clock: ManualClock,
}

async fn rig_on(path: &std::path::Path, clock: &ManualClock) -> Rig {
    let journal = Journal::open(path).unwrap();
    let agents = vec![AgentSpec::echo()];
    journal
        .upsert_agents(agents.clone(), clock.now())
        .await
        .unwrap();
    let runtime = Runtime::new(
        journal,
        Arc::new(clock.clone()),
        agents,
        RuntimeConfig {
            work_dir: path.with_extension("work"),
            idle_worker: StdDuration::from_secs(60),
        },
    );
    Rig {
        scheduler: Scheduler::new(runtime.clone()),
        runtime,
        clock: clock.clone(),
    }
}

async fn rig(dir: &tempfile::TempDir) -> Rig {
    rig_on(&dir.path().join("journal.db"), &ManualClock::new(t0())).await
}

fn every_minute(prompt: &str) -> ScheduleFields {
    ScheduleFields {
        name: Some("minutely".into()),
        prompt: Some(prompt.into()),
        cron: Some("* * * * *".into()),
        timezone: Some("Europe/Berlin".into()),
        agent_id: Some("echo".into()),
        ..Default::default()
    }
}

async fn settle(rt: &Runtime, task_id: &str) -> sextant_core::projection::TaskFold {
    let task = rt.journal().task(task_id).await.unwrap().unwrap();
    tokio::time::timeout(StdDuration::from_secs(10), rt.wait_settled(&task, 0))
        .await
        .expect("task settled in time")
        .unwrap()
}

fn owner() -> Principal {
    Principal::person()
}

#[tokio::test]
async fn a_due_slot_becomes_a_run_with_its_own_session() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(&dir).await;
    let s = r
        .scheduler
        .create(&owner(), every_minute("status report"), ScheduleSource::Api)
        .await
        .unwrap();
    assert_eq!(s.next_runs.len(), 5);
    assert_eq!(s.next_runs[0].utc, "2026-12-01T10:01:00.000Z");
    assert_eq!(s.next_runs[0].local, "2026-12-01T11:01:00+01:00");
    assert!(s.access.allowed);

    // Not due yet.
    assert!(r.scheduler.run_due_now().await.unwrap().is_empty());

    r.clock.set(utc("2026-12-01T10:01:00Z"));
    let runs = r.scheduler.run_due_now().await.unwrap();
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(run.trigger, "cron");
    assert_eq!(run.scheduled_for, "2026-12-01T10:01:00.000Z");
    assert_eq!(run.record, "started");
    let session_id = run.session_id.clone().expect("a session");
    let fold = settle(&r.runtime, run.task_id.as_deref().unwrap()).await;
    assert_eq!(fold.state, TaskState::Completed);
    assert_eq!(message_text(&fold.history[0]), "status report");

    // The Session is a schedule Session, owned by the creator, and links back to the Run.
    let session = r
        .runtime
        .journal()
        .session(&session_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(session.origin, "schedule");
    assert_eq!(session.caller, owner().key());
    let back = r
        .runtime
        .journal()
        .run_by_session(&session_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(back.run_id, run.run_id);

    // The same slot never fires twice; the next one gets a new Session.
    assert!(r.scheduler.run_due_now().await.unwrap().is_empty());
    r.clock.advance(Duration::minutes(1));
    let next = r.scheduler.run_due_now().await.unwrap();
    assert_eq!(next.len(), 1);
    assert_ne!(next[0].session_id.as_deref(), Some(session_id.as_str()));

    let page = r.scheduler.runs(&owner(), &s.id, None, 10).await.unwrap();
    assert_eq!(page.total, 2);
    assert_eq!(page.runs[0].id, next[0].run_id, "newest first");
    assert_eq!(page.runs[1].status, "completed");
}

#[tokio::test]
async fn replay_uses_the_earlier_prompt_and_disable_stops_runs() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(&dir).await;
    let me = owner();
    let s = r
        .scheduler
        .create(&me, every_minute("old prompt"), ScheduleSource::Api)
        .await
        .unwrap();
    let first = r.scheduler.run_now(&me, &s.id).await.unwrap();
    assert_eq!(first.trigger, "manual");
    assert_eq!(first.prompt, "old prompt");

    r.scheduler
        .update(
            &me,
            &s.id,
            ScheduleFields {
                prompt: Some("new prompt".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let replay = r.scheduler.replay(&me, &s.id, &first.id).await.unwrap();
    assert_eq!(replay.trigger, "replay");
    assert_eq!(replay.replay_of.as_deref(), Some(first.id.as_str()));
    assert_eq!(replay.prompt, "old prompt");
    let fold = settle(&r.runtime, replay.task_id.as_deref().unwrap()).await;
    assert_eq!(message_text(&fold.history[0]), "old prompt");
    let now = r.scheduler.run_now(&me, &s.id).await.unwrap();
    assert_eq!(now.prompt, "new prompt");

    let off = r
        .scheduler
        .update(
            &me,
            &s.id,
            ScheduleFields {
                enabled: Some(false),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert!(!off.enabled);
    assert_eq!(off.next_fire_at, None);
    r.clock.advance(Duration::minutes(10));
    assert!(r.scheduler.run_due_now().await.unwrap().is_empty());

    // Re-enabling starts from now: the ten minutes it was off are not "missed".
    let on = r
        .scheduler
        .update(
            &me,
            &s.id,
            ScheduleFields {
                enabled: Some(true),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(on.next_fire_at.as_deref(), Some("2026-12-01T10:11:00.000Z"));
    assert!(r.scheduler.run_due_now().await.unwrap().is_empty());

    r.scheduler.delete(&me, &s.id).await.unwrap();
    assert!(matches!(
        r.scheduler.get(&me, &s.id).await,
        Err(Error::NotFound)
    ));
    assert!(matches!(
        r.scheduler.delete(&me, &s.id).await,
        Err(Error::NotFound)
    ));
}

#[tokio::test]
async fn schedules_are_invisible_to_other_principals() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(&dir).await;
    let s = r
        .scheduler
        .create(&owner(), every_minute("mine"), ScheduleSource::Console)
        .await
        .unwrap();
    assert_eq!(s.source, "console");
    let other = Principal::anonymous_local();
    assert!(r.scheduler.list(&other).await.unwrap().is_empty());
    fn nf<T>(e: Result<T>) -> bool {
        matches!(e, Err(Error::NotFound))
    }
    assert!(nf(r.scheduler.get(&other, &s.id).await));
    assert!(nf(r
        .scheduler
        .update(&other, &s.id, ScheduleFields::default())
        .await));
    assert!(nf(r.scheduler.run_now(&other, &s.id).await));
    assert!(nf(r.scheduler.runs(&other, &s.id, None, 10).await));
    assert!(nf(r.scheduler.delete(&other, &s.id).await));
    assert_eq!(r.scheduler.list(&owner()).await.unwrap().len(), 1);
}

#[tokio::test]
async fn validation_names_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(&dir).await;
    let field = |e: Result<ScheduleView>| match e {
        Err(Error::Invalid(f)) => f.field,
        other => panic!("expected a field error, got {other:?}"),
    };
    let mut bad = every_minute("x");
    bad.cron = Some("every minute".into());
    assert_eq!(
        field(r.scheduler.create(&owner(), bad, ScheduleSource::Api).await),
        "cron"
    );
    let mut bad = every_minute("x");
    bad.timezone = Some("Europe/Atlantis".into());
    assert_eq!(
        field(r.scheduler.create(&owner(), bad, ScheduleSource::Api).await),
        "timezone"
    );
    let mut bad = every_minute("x");
    bad.agent_id = Some("nobody".into());
    assert_eq!(
        field(r.scheduler.create(&owner(), bad, ScheduleSource::Api).await),
        "agent_id"
    );
    let mut bad = every_minute("x");
    bad.timezone = None;
    assert_eq!(
        field(r.scheduler.create(&owner(), bad, ScheduleSource::Api).await),
        "timezone"
    );
    let mut bad = every_minute(" ");
    bad.missed_run_grace_secs = Some(5);
    assert_eq!(
        field(r.scheduler.create(&owner(), bad, ScheduleSource::Api).await),
        "prompt"
    );
    let mut bad = every_minute("x");
    bad.missed_run_grace_secs = Some(5);
    assert_eq!(
        field(r.scheduler.create(&owner(), bad, ScheduleSource::Api).await),
        "missed_run_grace_secs"
    );
    assert!(r.scheduler.list(&owner()).await.unwrap().is_empty());
}

#[tokio::test]
async fn revoked_access_blocks_runs_but_not_cleanup() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(&dir).await;
    let anon = Principal::anonymous_local();
    let s = r
        .scheduler
        .create(&anon, every_minute("as anon"), ScheduleSource::Api)
        .await
        .unwrap();

    r.runtime.set_denied("echo", vec![anon.key()]);
    let view = r.scheduler.get(&anon, &s.id).await.unwrap();
    assert!(!view.access.allowed);

    // The cron Run is recorded as blocked, with the reason; no Session.
    r.clock.set(utc("2026-12-01T10:01:00Z"));
    let runs = r.scheduler.run_due_now().await.unwrap();
    assert_eq!(runs.len(), 1);
    let blocked = RunView::from(&runs[0]);
    assert_eq!(blocked.status, "blocked");
    assert!(
        blocked.reason.as_deref().unwrap().contains("revoked"),
        "{blocked:?}"
    );
    assert_eq!(blocked.session_id, None);
    assert!(blocked.finished_at.is_some());
    // Run now is recorded as blocked too.
    let now = r.scheduler.run_now(&anon, &s.id).await.unwrap();
    assert_eq!(now.status, "blocked");
    // Enabling again, or creating another, is refused.
    r.scheduler
        .update(
            &anon,
            &s.id,
            ScheduleFields {
                enabled: Some(false),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let again = r
        .scheduler
        .update(
            &anon,
            &s.id,
            ScheduleFields {
                enabled: Some(true),
                ..Default::default()
            },
        )
        .await;
    assert!(matches!(again, Err(Error::Forbidden(_))), "{again:?}");
    let create = r
        .scheduler
        .create(&anon, every_minute("x"), ScheduleSource::Api)
        .await;
    assert!(matches!(create, Err(Error::Forbidden(_))), "{create:?}");
    // The runtime refuses direct inputs as well.
    let mut m = sextant_core::a2a::Message::new(
        sextant_core::a2a::Role::User,
        vec![sextant_core::a2a::Part::text("hi")],
    );
    m.message_id = "direct".into();
    let direct = r
        .runtime
        .admit(sextant_runtime::Input {
            principal: anon.clone(),
            agent_id: "echo".into(),
            message: m,
            origin: "a2a".into(),
        })
        .await;
    assert!(matches!(
        direct,
        Err(sextant_runtime::AdmitError::AccessDenied(
            sextant_runtime::AccessError::Revoked { .. }
        ))
    ));
    // The owner of the plan still reads its history and deletes it.
    assert_eq!(
        r.scheduler
            .runs(&anon, &s.id, None, 10)
            .await
            .unwrap()
            .total,
        2
    );
    r.scheduler.delete(&anon, &s.id).await.unwrap();

    // Restored access: Runs start again.
    r.runtime.set_denied("echo", vec![]);
    let s = r
        .scheduler
        .create(&anon, every_minute("back"), ScheduleSource::Api)
        .await
        .unwrap();
    let run = r.scheduler.run_now(&anon, &s.id).await.unwrap();
    assert!(run.session_id.is_some(), "{run:?}");
    let fold = settle(&r.runtime, run.task_id.as_deref().unwrap()).await;
    assert_eq!(fold.state, TaskState::Completed);
}

#[tokio::test]
async fn missed_slots_follow_the_policy() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(&dir).await;
    let me = owner();
    let mut skip = every_minute("skip");
    skip.cron = Some("0 * * * *".into());
    let skip = r
        .scheduler
        .create(&me, skip, ScheduleSource::Api)
        .await
        .unwrap();
    let mut once = every_minute("once");
    once.cron = Some("0 * * * *".into());
    once.missed_run_policy = Some(MissedRunPolicy::RunOnce);
    once.missed_run_grace_secs = Some(600);
    let once = r
        .scheduler
        .create(&me, once, ScheduleSource::Api)
        .await
        .unwrap();

    // The machine sleeps from 10:00:30 to 13:05: slots 11:00, 12:00, 13:00 were missed.
    r.clock.set(utc("2026-12-01T13:05:00Z"));
    let runs = r.scheduler.run_due_now().await.unwrap();
    assert_eq!(runs.len(), 2);
    let of = |id: &str| RunView::from(runs.iter().find(|run| run.schedule_id == id).unwrap());
    let s = of(&skip.id);
    assert_eq!(
        (s.status.as_str(), s.scheduled_for.as_str()),
        ("missed", "2026-12-01T13:00:00.000Z")
    );
    assert!(
        s.reason.as_deref().unwrap().contains("2 earlier slot(s)"),
        "{s:?}"
    );
    let o = of(&once.id);
    assert_eq!(o.scheduled_for, "2026-12-01T13:00:00.000Z");
    assert!(o.session_id.is_some(), "{o:?}");
    assert!(o.reason.as_deref().unwrap().contains("ran late"), "{o:?}");
    // Both cursors moved past now.
    for id in [&skip.id, &once.id] {
        let v = r.scheduler.get(&me, id).await.unwrap();
        assert_eq!(v.next_fire_at.as_deref(), Some("2026-12-01T14:00:00.000Z"));
    }
    // 30 minutes late is beyond the 10-minute grace window: run_once records a miss too.
    r.clock.set(utc("2026-12-01T16:30:00Z"));
    let runs = r.scheduler.run_due_now().await.unwrap();
    let o = RunView::from(runs.iter().find(|run| run.schedule_id == once.id).unwrap());
    assert_eq!(o.status, "missed");
    assert!(
        o.reason
            .as_deref()
            .unwrap()
            .contains("beyond the 10m grace window"),
        "{o:?}"
    );
}

#[tokio::test]
async fn two_schedulers_on_one_database_fire_each_slot_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("journal.db");
    let clock = ManualClock::new(t0());
    // Two journals on one file are two processes: separate writer threads and connections.
    let a = rig_on(&path, &clock).await;
    let b = rig_on(&path, &clock).await;
    let mut ids = Vec::new();
    for i in 0..5 {
        let s = a
            .scheduler
            .create(
                &owner(),
                every_minute(&format!("p{i}")),
                ScheduleSource::Api,
            )
            .await
            .unwrap();
        ids.push(s.id);
    }
    let mut fired_a = 0;
    let mut fired_b = 0;
    for minute in 1..=4 {
        clock.set(t0() + Duration::seconds(30) + Duration::minutes(minute - 1));
        let (ra, rb) = tokio::join!(a.scheduler.run_due_now(), b.scheduler.run_due_now());
        fired_a += ra.unwrap().len();
        fired_b += rb.unwrap().len();
    }
    assert_eq!(fired_a + fired_b, 5 * 4, "every slot fired exactly once");
    for id in &ids {
        let page = a.scheduler.runs(&owner(), id, None, 100).await.unwrap();
        assert_eq!(page.total, 4);
        let mut slots: Vec<_> = page.runs.iter().map(|r| r.scheduled_for.clone()).collect();
        slots.sort();
        slots.dedup();
        assert_eq!(slots.len(), 4, "one Run per slot");
        // Each Run was started exactly once: one task per Run, each in its own Session.
        for run in &page.runs {
            assert!(run.task_id.is_some(), "{run:?}");
        }
    }
    a.runtime.shutdown(StdDuration::from_secs(5)).await;
    b.runtime.shutdown(StdDuration::from_secs(5)).await;
}

#[tokio::test]
async fn the_loop_wakes_on_changes_and_stops_on_cancel() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(&dir).await;
    let cancel = CancellationToken::new();
    let handle = r.scheduler.start(cancel.clone());
    let mut events = r.runtime.journal().hub().subscribe_all();
    r.scheduler
        .create(&owner(), every_minute("from the loop"), ScheduleSource::Api)
        .await
        .unwrap();
    // Move wall time to the slot and nudge the loop (as a wake-up from sleep would).
    r.clock.set(utc("2026-12-01T10:01:00Z"));
    r.scheduler.changed();
    let ev = tokio::time::timeout(StdDuration::from_secs(10), events.recv())
        .await
        .expect("the loop fired the slot")
        .unwrap();
    let session = r
        .runtime
        .journal()
        .session(&ev.session_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(session.origin, "schedule");
    handle.shutdown().await;
    assert!(cancel.is_cancelled());
}

#[tokio::test]
async fn pending_runs_are_started_at_the_next_start() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(&dir).await;
    let s = r
        .scheduler
        .create(&owner(), every_minute("after a crash"), ScheduleSource::Api)
        .await
        .unwrap();
    // Claim the slot as a crashed process would have: the Run is recorded, never started.
    let row = r.runtime.journal().schedule(&s.id).await.unwrap().unwrap();
    let now = utc("2026-12-01T10:01:00Z");
    r.clock.set(now);
    let claim = r
        .scheduler
        .claim_for(&row, now, &sextant_core::ids::format_time(now));
    let run_id = claim.run.as_ref().unwrap().run_id.clone();
    assert_eq!(
        r.runtime.journal().claim_slots(vec![claim]).await.unwrap(),
        [true]
    );
    assert_eq!(r.scheduler.recover_pending().await.unwrap(), 1);
    let run = r.runtime.journal().run(&run_id).await.unwrap().unwrap();
    assert_eq!(run.record, "started");
    // Recovering again is harmless: nothing is pending.
    assert_eq!(r.scheduler.recover_pending().await.unwrap(), 0);
}

#[tokio::test]
async fn a_paused_loop_claims_nothing_until_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(&dir).await;
    r.scheduler.pause(true);
    assert!(r.scheduler.is_paused());
    let handle = r.scheduler.start(CancellationToken::new());
    let s = r
        .scheduler
        .create(&owner(), every_minute("paused"), ScheduleSource::Api)
        .await
        .unwrap();
    let mut events = r.runtime.journal().hub().subscribe_all();
    r.clock.set(utc("2026-12-01T10:01:00Z"));
    r.scheduler.changed();
    // A bounded look for something that must not happen: the slot is due, the loop is awake.
    let fired = tokio::time::timeout(StdDuration::from_millis(300), events.recv()).await;
    assert!(fired.is_err(), "a paused loop fired a slot");
    let page = r.scheduler.runs(&owner(), &s.id, None, 10).await.unwrap();
    assert_eq!(page.total, 0);

    r.scheduler.pause(false);
    let ev = tokio::time::timeout(StdDuration::from_secs(10), events.recv())
        .await
        .expect("the resumed loop fired the slot")
        .unwrap();
    let session = r
        .runtime
        .journal()
        .session(&ev.session_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(session.origin, "schedule");
    handle.shutdown().await;
}

/// A form learns every bad field at once; a change is judged on the fields it sends.
#[tokio::test]
async fn every_bad_field_is_named_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(&dir).await;
    let mut bad = every_minute(" ");
    bad.name = Some("".into());
    bad.cron = Some("61 * * * *".into());
    bad.timezone = Some("Asia/Tokio".into());
    bad.agent_id = Some("nobody".into());
    bad.missed_run_grace_secs = Some(5);
    let errs = r.scheduler.field_errors(&bad, true);
    let fields: Vec<&str> = errs.iter().map(|e| e.field).collect();
    assert_eq!(
        fields,
        [
            "name",
            "prompt",
            "timezone",
            "cron",
            "agent_id",
            "missed_run_grace_secs"
        ]
    );
    assert!(errs[3].message.ends_with("minute must be 0–59, not 61"));
    // Missing fields of a new schedule are named; a change sends only what changes.
    let missing = r.scheduler.field_errors(&ScheduleFields::default(), true);
    assert_eq!(missing.len(), 5);
    assert!(
        r.scheduler
            .field_errors(&ScheduleFields::default(), false)
            .is_empty()
    );
    assert!(
        r.scheduler
            .field_errors(&every_minute("x"), true)
            .is_empty()
    );
    // A cron that never fires is judged in its zone.
    let mut never = every_minute("x");
    never.cron = Some("0 9 30 2 *".into());
    assert_eq!(r.scheduler.field_errors(&never, true)[0].field, "cron");
}
