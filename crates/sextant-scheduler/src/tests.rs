//! The scheduler against a real journal and runtime (echo Agent), with a manual clock: the
//! tests move wall time and call `run_due_now`, or wake the loop; nothing sleeps.

use std::sync::Arc;
use std::time::Duration as StdDuration;

use chrono::{DateTime, Duration, Utc};
use sextant_core::a2a::TaskState;
use sextant_core::ids::format_time;
use sextant_core::projection::message_text;
use sextant_core::{
    AgentSpec, ManualClock, MissedRunPolicy, Principal, RunRecord, RunTrigger, ScheduleSource,
};
use sextant_journal::{RunRow, ScheduleRow};
use sextant_runtime::Runtime;
use sextant_runtime::test_support::TestRuntime;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::view::short_id;

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
    let runtime = TestRuntime::at(path)
        .clock(Arc::new(clock.clone()))
        .agents(vec![AgentSpec::echo(), AgentSpec::shell(), flaky()])
        .start()
        .await;
    Rig {
        scheduler: Scheduler::new(runtime.clone()),
        runtime,
        clock: clock.clone(),
    }
}

/// An exec Agent that fails (exit 3, "disk full") when the prompt says "fail", and echoes
/// "ok" otherwise.
fn flaky() -> AgentSpec {
    AgentSpec {
        id: "flaky".into(),
        name: "Flaky".into(),
        description: "fails on request".into(),
        skills: Vec::new(),
        engine: sextant_core::EngineSpec::Exec {
            command: vec![
                "sh".into(),
                "-c".into(),
                "read -r line; case \"$line\" in *fail*) echo 'disk full' >&2; exit 3;; \
                 *) echo ok;; esac"
                    .into(),
            ],
            working_dir: None,
            env: Default::default(),
            timeout_secs: 30,
            input: Default::default(),
        },
        ..AgentSpec::echo()
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
    assert_eq!(run.trigger, RunTrigger::Cron);
    assert_eq!(format_time(run.scheduled_for), "2026-12-01T10:01:00.000Z");
    assert_eq!(run.record, RunRecord::Started);
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
    assert_eq!(session.origin, sextant_core::Origin::Schedule);
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
    assert_eq!(first.trigger, RunTrigger::Manual);
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
    assert_eq!(replay.trigger, RunTrigger::Replay);
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
    assert_eq!(s.source, ScheduleSource::Console);
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
            origin: sextant_core::Origin::A2a,
            grant: None,
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
            .contains("beyond the 10m catch-up window"),
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
        let (ra, rb) = (ra.unwrap(), rb.unwrap());
        fired_a += ra.len();
        fired_b += rb.len();
        // This minute's tasks end before the next minute comes due: a Run still going then
        // would be skipped by the overlap policy, which is not what this test is about.
        for (rig, runs) in [(&a, &ra), (&b, &rb)] {
            for run in runs {
                settle(&rig.runtime, run.task_id.as_deref().unwrap()).await;
            }
        }
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
    assert_eq!(session.origin, sextant_core::Origin::Schedule);
    handle.shutdown().await;
    assert!(cancel.is_cancelled());
}

/// Claims the every-minute plan's 10:01 slot as a process that stopped right after would have:
/// the Run is recorded, never started. Returns the plan's row and the pending Run.
async fn claim_as_crashed(r: &Rig, schedule_id: &str) -> (ScheduleRow, RunRow) {
    let row = r
        .runtime
        .journal()
        .schedule(schedule_id)
        .await
        .unwrap()
        .unwrap();
    let now = utc("2026-12-01T10:01:00Z");
    r.clock.set(now);
    let claim = r
        .scheduler
        .claim_for(&row, now, &runner::Overlap::default())
        .claim;
    let pending = claim.runs[0].clone();
    assert_eq!(
        r.runtime.journal().claim_slots(vec![claim]).await.unwrap(),
        [true]
    );
    (row, pending)
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
    let (_, pending) = claim_as_crashed(&r, &s.id).await;
    let run_id = pending.run_id.clone();
    assert_eq!(r.scheduler.recover_pending().await.unwrap(), 1);
    let run = r.runtime.journal().run(&run_id).await.unwrap().unwrap();
    assert_eq!(run.record, RunRecord::Started);
    // Recovering again is harmless: nothing is pending.
    assert_eq!(r.scheduler.recover_pending().await.unwrap(), 0);
}

/// A Run whose task ended before the Run was linked to it (admitted, then Sextant stopped;
/// or a quick turn that finished before the link committed, so the watcher found no Run on
/// the task) is settled when it is linked, not left "running" until a later tick.
#[tokio::test]
async fn a_run_whose_task_already_ended_is_settled_when_linked() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(&dir).await;
    let s = r
        .scheduler
        .create(
            &owner(),
            every_minute("done before linked"),
            ScheduleSource::Api,
        )
        .await
        .unwrap();
    let (row, pending) = claim_as_crashed(&r, &s.id).await;
    // The Run's task was admitted and ran to its end; the Run was never linked to it.
    let admitted = r
        .runtime
        .admit(sextant_runtime::Input {
            principal: owner(),
            agent_id: "echo".into(),
            message: runner::run_message(&row, &pending),
            origin: sextant_core::Origin::Schedule,
            grant: None,
        })
        .await
        .unwrap();
    let fold = settle(&r.runtime, &admitted.task().task_id).await;
    assert_eq!(fold.state, TaskState::Completed);

    // No watcher runs here and the clock stands still: only the link itself can settle it.
    assert_eq!(r.scheduler.recover_pending().await.unwrap(), 1);
    let run = r
        .runtime
        .journal()
        .run(&pending.run_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(run.record, RunRecord::Started);
    assert_eq!(run.task_id.as_deref(), Some(&*admitted.task().task_id));
    assert_eq!(run.outcome, Some(sextant_core::RunOutcome::Succeeded));
    assert!(run.settled_at.is_some());
}

#[tokio::test]
async fn a_paused_loop_claims_nothing_until_resumed() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(&dir).await;
    r.scheduler.set_paused(true).await.unwrap();
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

    r.scheduler.set_paused(false).await.unwrap();
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
    assert_eq!(session.origin, sextant_core::Origin::Schedule);
    handle.shutdown().await;
}

/// Steps a manual clock across a daylight-saving transition, ticking every `step`, and
/// returns the slots (in the plan's zone) of the cron Runs that came out.
async fn slots_across(expr: &str, zone: &str, from: &str, to: &str, step: Duration) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(utc(from));
    let r = rig_on(&dir.path().join("journal.db"), &clock).await;
    let mut fields = every_minute("dst");
    fields.cron = Some(expr.into());
    fields.timezone = Some(zone.into());
    // Which slots fire is the question here, not overlap: with `skip`, a slot whose previous
    // Run had not settled yet (a busy machine) was recorded as skipped instead of started.
    fields.overlap_policy = Some(sextant_core::OverlapPolicy::AllowAll);
    let s = r
        .scheduler
        .create(&owner(), fields, ScheduleSource::Api)
        .await
        .unwrap();
    let end = utc(to);
    while clock.now() < end {
        clock.advance(step);
        for run in r.scheduler.run_due_now().await.unwrap() {
            assert_eq!(run.record, RunRecord::Started, "{run:?}");
        }
    }
    let tz: chrono_tz::Tz = zone.parse().unwrap();
    let page = r.scheduler.runs(&owner(), &s.id, None, 200).await.unwrap();
    let mut slots: Vec<String> = page
        .runs
        .iter()
        .map(|run| {
            sextant_core::ids::parse_time(&run.scheduled_for)
                .unwrap()
                .with_timezone(&tz)
                .to_rfc3339()
        })
        .collect();
    slots.sort();
    slots
}

#[tokio::test]
async fn the_loop_fires_fixed_hours_once_and_intervals_in_both_passes_at_fall_back() {
    // New York, 2027-11-07 (the issue's case): two Runs, not four.
    assert_eq!(
        slots_across(
            "0,30 1 7 11 *",
            "America/New_York",
            "2027-11-07T03:00:00Z",
            "2027-11-07T08:00:00Z",
            Duration::minutes(5)
        )
        .await,
        ["2027-11-07T01:00:00-04:00", "2027-11-07T01:30:00-04:00"]
    );
    // Berlin, 2027-10-31.
    assert_eq!(
        slots_across(
            "15,45 2 31 10 *",
            "Europe/Berlin",
            "2027-10-30T23:00:00Z",
            "2027-10-31T03:00:00Z",
            Duration::minutes(5)
        )
        .await,
        ["2027-10-31T02:15:00+02:00", "2027-10-31T02:45:00+02:00"]
    );
    // An interval keeps firing through the repeated hour.
    assert_eq!(
        slots_across(
            "*/30 * * * *",
            "America/New_York",
            "2027-11-07T04:50:00Z",
            "2027-11-07T07:10:00Z",
            Duration::minutes(5)
        )
        .await,
        [
            "2027-11-07T01:00:00-04:00",
            "2027-11-07T01:00:00-05:00",
            "2027-11-07T01:30:00-04:00",
            "2027-11-07T01:30:00-05:00",
            "2027-11-07T02:00:00-05:00"
        ]
    );
}

#[tokio::test]
async fn the_loop_fires_a_gap_once_at_its_end_at_spring_forward() {
    // Berlin, 2027-03-28: 02:15 and 02:45 do not exist; one Run at 03:00 CEST.
    assert_eq!(
        slots_across(
            "15,45 2 * * *",
            "Europe/Berlin",
            "2027-03-28T00:00:00Z",
            "2027-03-28T02:00:00Z",
            Duration::minutes(5)
        )
        .await,
        ["2027-03-28T03:00:00+02:00"]
    );
}

#[tokio::test]
async fn a_missed_slot_before_an_on_time_one_leaves_a_trace() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(&dir).await;
    let mut hourly = every_minute("hourly");
    hourly.cron = Some("0 * * * *".into());
    let s = r
        .scheduler
        .create(&owner(), hourly, ScheduleSource::Api)
        .await
        .unwrap();
    // Asleep from 10:00:30 to 12:00:10: 11:00 was missed, 12:00 is on time.
    r.clock.set(utc("2026-12-01T12:00:10Z"));
    let runs = r.scheduler.run_due_now().await.unwrap();
    let views: Vec<RunView> = runs.iter().map(RunView::from).collect();
    assert_eq!(views.len(), 2, "{views:?}");
    let on_time = views.iter().find(|v| v.status != "missed").unwrap();
    assert_eq!(on_time.scheduled_for, "2026-12-01T12:00:00.000Z");
    assert!(on_time.session_id.is_some());
    let missed = views.iter().find(|v| v.status == "missed").unwrap();
    assert_eq!(missed.scheduled_for, "2026-12-01T11:00:00.000Z");
    assert!(
        missed.reason.as_deref().unwrap().contains("ran on time"),
        "{missed:?}"
    );
    // Both are in the history.
    let page = r.scheduler.runs(&owner(), &s.id, None, 10).await.unwrap();
    assert_eq!(page.total, 2);
}

fn plan_for(agent: &str, cron: &str, prompt: &str) -> ScheduleFields {
    ScheduleFields {
        name: Some(format!("{agent} plan")),
        prompt: Some(prompt.into()),
        cron: Some(cron.into()),
        timezone: Some("UTC".into()),
        agent_id: Some(agent.into()),
        ..Default::default()
    }
}

/// The schedule's Runs, oldest first, as views.
async fn history(r: &Rig, schedule_id: &str) -> Vec<RunView> {
    let mut runs = r
        .scheduler
        .runs(&owner(), schedule_id, None, 200)
        .await
        .unwrap()
        .runs;
    runs.reverse();
    runs
}

/// Declines the approval a shell Run waits for, waits for its task to end, and records it.
async fn end_shell_run(r: &Rig, run: &RunView) {
    let task_id = run.task_id.as_deref().expect("a started run");
    let task = r.runtime.journal().task(task_id).await.unwrap().unwrap();
    let fold = r.runtime.project(&task).await.unwrap();
    let i = fold
        .pending_interaction()
        .expect("waits for approval")
        .clone();
    let answered = r
        .runtime
        .answer(sextant_runtime::AnswerRequest {
            principal: owner(),
            task_id: task_id.into(),
            interaction_id: i.interaction_id.clone(),
            option: "decline".into(),
            reason: None,
            values: Default::default(),
            message_id: format!("decline-{}", run.id),
            digest: Some(i.action.as_ref().expect("a shell action").digest.clone()),
        })
        .await
        .unwrap();
    let fold = tokio::time::timeout(
        StdDuration::from_secs(10),
        r.runtime.wait_settled(&task, answered.last_seq),
    )
    .await
    .expect("ended in time")
    .unwrap();
    assert_eq!(fold.state, TaskState::Completed);
    r.scheduler.settle_ended().await.unwrap();
}

/// A shell schedule every minute under `policy`; its first Run (10:01) waits for approval.
async fn overlapping(r: &Rig, policy: sextant_core::OverlapPolicy) -> (String, RunView) {
    let mut f = plan_for("shell", "* * * * *", "uname -s");
    f.overlap_policy = Some(policy);
    let s = r
        .scheduler
        .create(&owner(), f, ScheduleSource::Api)
        .await
        .unwrap();
    assert_eq!(s.overlap_policy, policy);
    r.clock.set(utc("2026-12-01T10:01:00Z"));
    r.scheduler.run_due_now().await.unwrap();
    let runs = history(r, &s.id).await;
    assert_eq!(runs.len(), 1);
    let first = runs[0].clone();
    settle_waiting(r, &first).await;
    (s.id, first)
}

/// Waits until a shell Run's task waits for approval.
async fn settle_waiting(r: &Rig, run: &RunView) {
    let fold = settle(&r.runtime, run.task_id.as_deref().unwrap()).await;
    assert_eq!(fold.state, TaskState::AuthRequired);
}

async fn tick_at(r: &Rig, at: &str) {
    r.clock.set(utc(at));
    r.scheduler.run_due_now().await.unwrap();
}

#[tokio::test]
async fn overlap_skip_records_a_skipped_run_while_one_is_still_running() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(&dir).await;
    let (id, first) = overlapping(&r, sextant_core::OverlapPolicy::Skip).await;
    tick_at(&r, "2026-12-01T10:02:00Z").await;
    let runs = history(&r, &id).await;
    assert_eq!(runs.len(), 2);
    let skipped = &runs[1];
    assert_eq!(skipped.status, "skipped");
    assert_eq!(skipped.scheduled_for, "2026-12-01T10:02:00.000Z");
    assert_eq!(
        skipped.overlap_policy,
        Some(sextant_core::OverlapPolicy::Skip)
    );
    assert_eq!(skipped.session_id, None);
    let why = skipped.reason.as_deref().unwrap();
    assert!(why.contains("overlap policy skip"), "{why}");
    assert!(why.contains("waiting for your answer"), "{why}");
    assert!(why.contains(short_id(&first.id)), "{why}");
    // Once the first Run has ended, the next slot runs.
    end_shell_run(&r, &first).await;
    tick_at(&r, "2026-12-01T10:03:00Z").await;
    let runs = history(&r, &id).await;
    settle_waiting(&r, &runs[2]).await;
}

#[tokio::test]
async fn overlap_buffer_one_keeps_one_run_waiting_and_starts_it_after() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(&dir).await;
    let (id, first) = overlapping(&r, sextant_core::OverlapPolicy::BufferOne).await;
    tick_at(&r, "2026-12-01T10:02:00Z").await;
    tick_at(&r, "2026-12-01T10:03:00Z").await;
    let runs = history(&r, &id).await;
    let status: Vec<&str> = runs.iter().map(|v| v.status.as_str()).collect();
    assert_eq!(status, ["auth_required", "buffered", "skipped"]);
    assert!(
        runs[2]
            .reason
            .as_deref()
            .unwrap()
            .contains("already buffered")
    );
    // The first ends: the buffered one starts (a wake of the loop, no new slot needed).
    end_shell_run(&r, &first).await;
    tick_at(&r, "2026-12-01T10:03:10Z").await;
    let runs = history(&r, &id).await;
    settle_waiting(&r, &runs[1]).await;
    let runs = history(&r, &id).await;
    assert_eq!(runs[1].status, "auth_required", "{:?}", runs[1]);
    assert_eq!(runs[1].scheduled_for, "2026-12-01T10:02:00.000Z");
    assert!(runs[1].session_id.is_some());
}

#[tokio::test]
async fn overlap_buffer_all_runs_every_slot_one_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(&dir).await;
    let (id, first) = overlapping(&r, sextant_core::OverlapPolicy::BufferAll).await;
    tick_at(&r, "2026-12-01T10:02:00Z").await;
    tick_at(&r, "2026-12-01T10:03:00Z").await;
    let status = |runs: &[RunView]| runs.iter().map(|v| v.status.clone()).collect::<Vec<_>>();
    assert_eq!(
        status(&history(&r, &id).await),
        ["auth_required", "buffered", "buffered"]
    );
    end_shell_run(&r, &first).await;
    tick_at(&r, "2026-12-01T10:03:10Z").await;
    let runs = history(&r, &id).await;
    settle_waiting(&r, &runs[1]).await;
    let runs = history(&r, &id).await;
    assert_eq!(status(&runs), ["completed", "auth_required", "buffered"]);
    end_shell_run(&r, &runs[1]).await;
    tick_at(&r, "2026-12-01T10:03:20Z").await;
    let runs = history(&r, &id).await;
    settle_waiting(&r, &runs[2]).await;
    let runs = history(&r, &id).await;
    assert_eq!(status(&runs), ["completed", "completed", "auth_required"]);
    assert_eq!(runs[2].scheduled_for, "2026-12-01T10:03:00.000Z");
}

#[tokio::test]
async fn overlap_allow_all_starts_beside_the_running_one() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(&dir).await;
    let (id, _first) = overlapping(&r, sextant_core::OverlapPolicy::AllowAll).await;
    tick_at(&r, "2026-12-01T10:02:00Z").await;
    let runs = history(&r, &id).await;
    assert!(runs[1].session_id.is_some(), "{:?}", runs[1]);
    assert_ne!(runs[1].session_id, runs[0].session_id);
    assert!(runs[1].reason.as_deref().unwrap().contains("allow_all"));
}

#[tokio::test]
async fn overlap_cancel_previous_cancels_the_running_run_and_records_it() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(&dir).await;
    let (id, first) = overlapping(&r, sextant_core::OverlapPolicy::CancelPrevious).await;
    tick_at(&r, "2026-12-01T10:02:00Z").await;
    let runs = history(&r, &id).await;
    let new = &runs[1];
    assert!(new.session_id.is_some(), "{new:?}");
    let why = new.reason.as_deref().unwrap();
    assert!(why.contains("overlap policy cancel_previous"), "{why}");
    assert!(why.contains("canceled Run"), "{why}");
    let first_task = first.task_id.as_deref().unwrap();
    assert!(why.contains(first_task), "{why}");
    // The first Run's task is canceled, its approval card closed, saying who and why.
    let task = r.runtime.journal().task(first_task).await.unwrap().unwrap();
    let fold = r.runtime.project(&task).await.unwrap();
    assert_eq!(fold.state, TaskState::Canceled);
    assert!(fold.pending_interaction().is_none());
    let said = fold
        .status_message
        .as_ref()
        .map(sextant_core::projection::message_text)
        .unwrap_or_default();
    assert!(said.contains("Canceled by the scheduler"), "{said}");
    assert!(
        r.runtime
            .pending_interactions()
            .await
            .unwrap()
            .iter()
            .all(|i| i.task_id != first_task)
    );
    // A previous Run that has ended by then is not asked about.
    settle_waiting(&r, new).await;
    end_shell_run(&r, new).await;
    tick_at(&r, "2026-12-01T10:03:00Z").await;
    let runs = history(&r, &id).await;
    assert_eq!(runs[2].reason, None, "{:?}", runs[2]);
}

#[tokio::test]
async fn a_late_run_within_the_window_is_a_catchup_run() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(&dir).await;
    let mut f = plan_for("echo", "0 * * * *", "catch up");
    f.missed_run_policy = Some(MissedRunPolicy::RunOnce);
    f.missed_run_grace_secs = Some(1800);
    let s = r
        .scheduler
        .create(&owner(), f, ScheduleSource::Api)
        .await
        .unwrap();
    tick_at(&r, "2026-12-01T11:10:00Z").await;
    let runs = history(&r, &s.id).await;
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].trigger, RunTrigger::Catchup);
    assert!(
        runs[0]
            .reason
            .as_deref()
            .unwrap()
            .contains("catch-up window")
    );
    assert!(runs[0].session_id.is_some());
    // On time again: a cron Run.
    tick_at(&r, "2026-12-01T12:00:00Z").await;
    assert_eq!(history(&r, &s.id).await[1].trigger, RunTrigger::Cron);
}

#[tokio::test]
async fn backfill_runs_each_past_slot_under_its_own_policy() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(&dir).await;
    let s = r
        .scheduler
        .create(
            &owner(),
            plan_for("echo", "0 * * * *", "hourly"),
            ScheduleSource::Api,
        )
        .await
        .unwrap();
    let range = |from: &str, to: &str, p| Backfill {
        from: utc(from),
        to: utc(to),
        overlap_policy: p,
    };
    let done = r
        .scheduler
        .backfill(
            &owner(),
            &s.id,
            range("2026-12-01T07:00:00Z", "2026-12-01T10:00:00Z", None),
        )
        .await
        .unwrap();
    assert_eq!(done.overlap_policy, sextant_core::OverlapPolicy::BufferAll);
    let slots: Vec<&str> = done.runs.iter().map(|v| v.scheduled_for.as_str()).collect();
    assert_eq!(
        slots,
        [
            "2026-12-01T07:00:00.000Z",
            "2026-12-01T08:00:00.000Z",
            "2026-12-01T09:00:00.000Z"
        ]
    );
    assert!(done.runs.iter().all(|v| v.trigger == RunTrigger::Backfill));
    assert!(
        done.runs
            .iter()
            .all(|v| v.overlap_policy == Some(sextant_core::OverlapPolicy::BufferAll))
    );
    assert_eq!(done.runs[1].status, "buffered");
    assert!(done.runs[0].session_id.is_some());
    // One at a time, in slot order, as each ends.
    for n in 1..=3 {
        let runs = history(&r, &s.id).await;
        let started: Vec<&RunView> = runs.iter().filter(|v| v.session_id.is_some()).collect();
        assert_eq!(started.len(), n, "{runs:?}");
        settle(&r.runtime, started[n - 1].task_id.as_deref().unwrap()).await;
        r.scheduler.run_due_now().await.unwrap();
    }
    let runs = history(&r, &s.id).await;
    assert!(runs.iter().all(|v| v.status == "completed"), "{runs:?}");
    // The same range again: nothing new.
    let again = r
        .scheduler
        .backfill(
            &owner(),
            &s.id,
            range("2026-12-01T07:00:00Z", "2026-12-01T10:00:00Z", None),
        )
        .await
        .unwrap();
    assert_eq!((again.runs.len(), again.already_backfilled), (0, 3));
    // skip: the first slot runs, the others are recorded as skipped.
    let skip = r
        .scheduler
        .backfill(
            &owner(),
            &s.id,
            range(
                "2026-12-01T04:00:00Z",
                "2026-12-01T06:00:00Z",
                Some(sextant_core::OverlapPolicy::Skip),
            ),
        )
        .await
        .unwrap();
    let status: Vec<&str> = skip.runs.iter().map(|v| v.status.as_str()).collect();
    assert_ne!(status[0], "skipped");
    assert_eq!(status[1], "skipped");
    // Refusals name the field.
    let field = |e: Error| match e {
        Error::Invalid(f) => f.field,
        other => panic!("{other:?}"),
    };
    let e = r
        .scheduler
        .backfill(
            &owner(),
            &s.id,
            range("2026-12-01T09:00:00Z", "2026-12-01T12:00:00Z", None),
        )
        .await
        .unwrap_err();
    assert_eq!(field(e), "to");
    let e = r
        .scheduler
        .backfill(
            &owner(),
            &s.id,
            range("2026-11-01T00:00:00Z", "2026-12-01T00:00:00Z", None),
        )
        .await
        .unwrap_err();
    assert_eq!(field(e), "to");
    let e = r
        .scheduler
        .backfill(
            &owner(),
            &s.id,
            range(
                "2026-12-01T01:00:00Z",
                "2026-12-01T03:00:00Z",
                Some(sextant_core::OverlapPolicy::CancelPrevious),
            ),
        )
        .await
        .unwrap_err();
    assert_eq!(field(e), "overlap_policy");
    // Nobody else backfills it.
    assert!(matches!(
        r.scheduler
            .backfill(
                &Principal::anonymous_local(),
                &s.id,
                range("2026-12-01T01:00:00Z", "2026-12-01T03:00:00Z", None)
            )
            .await,
        Err(Error::NotFound)
    ));
}

#[tokio::test]
async fn a_jittered_slot_fires_at_its_fixed_delay() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(&dir).await;
    let mut f = plan_for("echo", "0 * * * *", "jitter");
    f.jitter_secs = Some(1800);
    let s = r
        .scheduler
        .create(&owner(), f, ScheduleSource::Api)
        .await
        .unwrap();
    assert_eq!(s.jitter_secs, 1800);
    let slot = utc("2026-12-01T11:00:00Z");
    assert_eq!(s.next_fire_at.as_deref(), Some("2026-12-01T11:00:00.000Z"));
    let delay = crate::timing::jitter(&s.id, slot, 1800);
    assert!(delay <= Duration::seconds(1800));
    if delay > Duration::zero() {
        tick_at(&r, &(slot + delay - Duration::seconds(1)).to_rfc3339()).await;
        assert!(history(&r, &s.id).await.is_empty());
    }
    tick_at(&r, &(slot + delay).to_rfc3339()).await;
    let runs = history(&r, &s.id).await;
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].scheduled_for, "2026-12-01T11:00:00.000Z");
    assert_eq!(runs[0].jitter_secs, Some(delay.num_seconds()));
    assert!(runs[0].session_id.is_some());
    // A jitter as long as the interval is refused.
    let mut f = plan_for("echo", "*/5 * * * *", "too much");
    f.jitter_secs = Some(300);
    let e = r.scheduler.create(&owner(), f, ScheduleSource::Api).await;
    assert!(matches!(e, Err(Error::Invalid(f)) if f.field == "jitter_secs"));
}

#[tokio::test]
async fn consecutive_failures_notify_pause_the_plan_and_recover() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(&dir).await;
    let mut notices = r.scheduler.notices();
    let mut f = plan_for("flaky", "0 * * * *", "please fail");
    f.pause_after_failures = Some(Some(2));
    let s = r
        .scheduler
        .create(&owner(), f, ScheduleSource::Api)
        .await
        .unwrap();
    assert_eq!(s.pause_after_failures, Some(2));
    // First failure: a notice.
    let one = r.scheduler.run_now(&owner(), &s.id).await.unwrap();
    settle(&r.runtime, one.task_id.as_deref().unwrap()).await;
    r.scheduler.settle_ended().await.unwrap();
    let n = notices.try_recv().expect("a failure notice");
    assert_eq!(n.kind, NoticeKind::Failed);
    assert_eq!(n.consecutive_failures, 1);
    assert!(n.message.contains("failed"), "{n:?}");
    let v = r.scheduler.get(&owner(), &s.id).await.unwrap();
    assert_eq!(v.consecutive_failures, 1);
    assert!(v.enabled);
    let one = r.scheduler.run(&owner(), &s.id, &one.id).await.unwrap();
    assert_eq!(one.outcome, Some(sextant_core::RunOutcome::Failed));
    assert!(one.duration_ms.is_some());
    // Second: still failing (no new failure notice), and paused, with why.
    let two = r.scheduler.run_now(&owner(), &s.id).await.unwrap();
    settle(&r.runtime, two.task_id.as_deref().unwrap()).await;
    r.scheduler.settle_ended().await.unwrap();
    let n = notices.try_recv().expect("a pause notice");
    assert_eq!(n.kind, NoticeKind::Paused);
    assert!(notices.try_recv().is_err());
    let v = r.scheduler.get(&owner(), &s.id).await.unwrap();
    assert!(!v.enabled);
    assert_eq!(v.next_fire_at, None);
    let paused = v.paused.expect("paused, with why");
    assert!(
        paused
            .reason
            .contains("paused after 2 failed Runs in a row"),
        "{paused:?}"
    );
    assert!(paused.reason.contains(short_id(&two.id)), "{paused:?}");
    assert_eq!((v.history.failed, v.history.succeeded), (2, 0));
    // No slot fires while paused.
    tick_at(&r, "2026-12-01T11:00:00Z").await;
    assert_eq!(history(&r, &s.id).await.len(), 2);
    // Enabled again: the pause and the count are gone; a failure, then a success: recovery.
    let on = r
        .scheduler
        .update(
            &owner(),
            &s.id,
            ScheduleFields {
                enabled: Some(true),
                pause_after_failures: Some(None),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!((on.paused.clone(), on.consecutive_failures), (None, 0));
    let three = r.scheduler.run_now(&owner(), &s.id).await.unwrap();
    settle(&r.runtime, three.task_id.as_deref().unwrap()).await;
    r.scheduler.settle_ended().await.unwrap();
    assert_eq!(notices.try_recv().unwrap().kind, NoticeKind::Failed);
    r.scheduler
        .update(
            &owner(),
            &s.id,
            ScheduleFields {
                prompt: Some("all good".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let four = r.scheduler.run_now(&owner(), &s.id).await.unwrap();
    settle(&r.runtime, four.task_id.as_deref().unwrap()).await;
    r.scheduler.settle_ended().await.unwrap();
    let n = notices.try_recv().expect("a recovery notice");
    assert_eq!(n.kind, NoticeKind::Recovered);
    assert!(n.message.contains("recovered"), "{n:?}");
    let four = r.scheduler.run(&owner(), &s.id, &four.id).await.unwrap();
    assert_eq!(four.outcome, Some(sextant_core::RunOutcome::Succeeded));
    assert_eq!(four.result.as_deref(), Some("ok"));
    let v = r.scheduler.get(&owner(), &s.id).await.unwrap();
    assert_eq!(v.consecutive_failures, 0);
    assert_eq!(
        v.history.recent[0].outcome,
        sextant_core::RunOutcome::Succeeded
    );
}

#[tokio::test]
async fn runs_show_their_result_and_duration() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(&dir).await;
    let s = r
        .scheduler
        .create(
            &owner(),
            every_minute("the result text"),
            ScheduleSource::Api,
        )
        .await
        .unwrap();
    let run = r.scheduler.run_now(&owner(), &s.id).await.unwrap();
    settle(&r.runtime, run.task_id.as_deref().unwrap()).await;
    // The next tick records it (the loop's watcher would, at once).
    r.scheduler.run_due_now().await.unwrap();
    let run = r.scheduler.run(&owner(), &s.id, &run.id).await.unwrap();
    assert_eq!(run.outcome, Some(sextant_core::RunOutcome::Succeeded));
    assert!(
        run.result.as_deref().unwrap().contains("the result text"),
        "{run:?}"
    );
    assert!(run.duration_ms.unwrap() >= 0);
    let v = r.scheduler.get(&owner(), &s.id).await.unwrap();
    assert_eq!(v.history.succeeded, 1);
    assert_eq!(v.history.recent[0].run_id, run.id);
    // The list carries the same record.
    let list = r.scheduler.list(&owner()).await.unwrap();
    assert_eq!(list[0].history, v.history);
}

#[tokio::test]
async fn the_watcher_records_a_run_as_soon_as_it_ends() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(&dir).await;
    let cancel = CancellationToken::new();
    let handle = r.scheduler.start(cancel.clone());
    let mut notices = r.scheduler.notices();
    let s = r
        .scheduler
        .create(
            &owner(),
            plan_for("flaky", "0 0 1 1 *", "fail now"),
            ScheduleSource::Api,
        )
        .await
        .unwrap();
    r.scheduler.run_now(&owner(), &s.id).await.unwrap();
    // No tick: the watcher sees the task end and sends the notice.
    let n = tokio::time::timeout(StdDuration::from_secs(10), notices.recv())
        .await
        .expect("a notice in time")
        .unwrap();
    assert_eq!(n.kind, NoticeKind::Failed);
    handle.shutdown().await;
}

#[tokio::test]
async fn one_shot_plans_fire_once() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(&dir).await;
    let f = ScheduleFields {
        name: Some("once".into()),
        prompt: Some("only once".into()),
        once_at: Some("2026-12-01 12:00".into()),
        timezone: Some("Europe/Berlin".into()),
        agent_id: Some("echo".into()),
        ..Default::default()
    };
    let s = r
        .scheduler
        .create(&owner(), f.clone(), ScheduleSource::Api)
        .await
        .unwrap();
    assert_eq!(s.cron, None);
    assert_eq!(s.once_at.as_deref(), Some("2026-12-01T12:00:00"));
    assert_eq!(s.next_runs.len(), 1);
    assert_eq!(s.next_runs[0].utc, "2026-12-01T11:00:00.000Z");
    assert_eq!(s.next_runs[0].words, "Tuesday 1 December 2026 at 12:00 CET");
    assert!(
        s.description
            .starts_with("Once, on Tuesday 1 December 2026"),
        "{}",
        s.description
    );
    assert!(!s.finished);
    tick_at(&r, "2026-12-01T11:00:00Z").await;
    tick_at(&r, "2026-12-02T11:00:00Z").await;
    let runs = history(&r, &s.id).await;
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].scheduled_for, "2026-12-01T11:00:00.000Z");
    let v = r.scheduler.get(&owner(), &s.id).await.unwrap();
    assert!(v.finished);
    assert_eq!(v.next_fire_at, None);
    assert!(v.next_runs.is_empty());
    // A time in the past is refused.
    let e = r.scheduler.create(&owner(), f, ScheduleSource::Api).await;
    assert!(
        matches!(&e, Err(Error::Invalid(f)) if f.field == "once_at"),
        "{e:?}"
    );
}

#[tokio::test]
async fn an_assistant_made_plan_is_the_owners_and_stops_when_the_assistant_is_revoked() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(&dir).await;
    let ws = "ws-test";
    let issue = |name: &str| sextant_journal::CredentialRow {
        credential_id: sextant_core::ids::new_id(),
        kind: "assistant".into(),
        name: name.into(),
        token_hash: sextant_core::ids::new_id(),
        workspace: Some(ws.into()),
        agent_id: None,
        owner: owner().caller_key(),
        created_at: sextant_core::ids::parse_time("2026-12-01T10:00:00.000Z").unwrap(),
        revoked_at: None,
        parent_id: None,
    };
    r.runtime
        .journal()
        .insert_credential(issue("hermes"))
        .await
        .unwrap();
    let actor = Actor::assistant(owner(), Principal::assistant(ws, "hermes"));
    let s = r
        .scheduler
        .create(
            &actor,
            every_minute("from the assistant"),
            ScheduleSource::Api,
        )
        .await
        .unwrap();
    assert_eq!(s.source, ScheduleSource::Assistant);
    assert_eq!(s.source_assistant.as_deref(), Some("hermes"));
    // The owner's plan: in the owner's list, running as the owner.
    assert_eq!(r.scheduler.list(&owner()).await.unwrap().len(), 1);
    tick_at(&r, "2026-12-01T10:01:00Z").await;
    let runs = history(&r, &s.id).await;
    assert_eq!(runs[0].executed_as, owner().key());
    assert!(runs[0].session_id.is_some());
    // The assistant is revoked: the next firing is blocked, and the plan says why.
    r.runtime
        .journal()
        .revoke_credential("assistant", "hermes", r.clock.now())
        .await
        .unwrap();
    settle(&r.runtime, runs[0].task_id.as_deref().unwrap()).await;
    tick_at(&r, "2026-12-01T10:02:00Z").await;
    let runs = history(&r, &s.id).await;
    assert_eq!(runs[1].status, "blocked", "{:?}", runs[1]);
    assert!(runs[1].reason.as_deref().unwrap().contains("was revoked"));
    let v = r.scheduler.get(&owner(), &s.id).await.unwrap();
    assert!(!v.access.allowed);
    // A revoked assistant cannot make plans either.
    let e = r
        .scheduler
        .create(&actor, every_minute("again"), ScheduleSource::Api)
        .await;
    assert!(matches!(e, Err(Error::Forbidden(_))), "{e:?}");
    // Issued again under its name: it may act again.
    r.runtime
        .journal()
        .insert_credential(issue("hermes"))
        .await
        .unwrap();
    tick_at(&r, "2026-12-01T10:03:00Z").await;
    assert!(history(&r, &s.id).await[2].session_id.is_some());
}

#[tokio::test]
async fn plain_words_are_read_and_echoed_back() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(&dir).await;
    let words = |w: &str| ScheduleFields {
        name: Some("words".into()),
        prompt: Some("p".into()),
        when: Some(w.into()),
        timezone: Some("Europe/Berlin".into()),
        agent_id: Some("echo".into()),
        ..Default::default()
    };
    let every = r
        .scheduler
        .create(&owner(), words("every weekday at 9"), ScheduleSource::Api)
        .await
        .unwrap();
    assert_eq!(every.cron.as_deref(), Some("0 9 * * 1-5"));
    let u = every.understood.clone().expect("the echo");
    assert_eq!(
        (u.input.as_str(), u.cron.as_deref()),
        ("every weekday at 9", Some("0 9 * * 1-5"))
    );
    // Read back later, the plan has no echo: it is only in the answer.
    assert_eq!(
        r.scheduler
            .get(&owner(), &every.id)
            .await
            .unwrap()
            .understood,
        None
    );
    let once = r
        .scheduler
        .create(&owner(), words("in 30 minutes"), ScheduleSource::Api)
        .await
        .unwrap();
    assert_eq!(once.cron, None);
    assert_eq!(once.once_at.as_deref(), Some("2026-12-01T11:30:30"));
    assert_eq!(once.next_runs[0].utc, "2026-12-01T10:30:30.000Z");
    // An update reads words in the plan's zone.
    let moved = r
        .scheduler
        .update(
            &owner(),
            &every.id,
            ScheduleFields {
                when: Some("every 30 minutes".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(moved.cron.as_deref(), Some("*/30 * * * *"));
    // Words and cron together, or words it cannot read, name the when field.
    let mut both = words("every day at 9");
    both.cron = Some("0 9 * * *".into());
    for f in [both, words("now and then")] {
        let e = r.scheduler.create(&owner(), f, ScheduleSource::Api).await;
        assert!(
            matches!(&e, Err(Error::Invalid(f)) if f.field == "when"),
            "{e:?}"
        );
    }
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

#[tokio::test]
async fn the_pause_is_stored_and_a_new_scheduler_restores_it() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(&dir).await;
    let mut seen = r.scheduler.pause_changes();
    r.scheduler.set_paused(true).await.unwrap();
    assert!(*seen.borrow_and_update());
    // Another Scheduler over the same journal (a restart) starts paused once it reads it.
    let again = Scheduler::new(r.runtime.clone());
    assert!(!again.is_paused());
    assert!(again.restore_pause().await.unwrap());
    assert!(again.is_paused());
    r.scheduler.set_paused(false).await.unwrap();
    assert!(
        !Scheduler::new(r.runtime.clone())
            .restore_pause()
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn a_run_of_a_paused_agent_is_blocked_not_failed() {
    let dir = tempfile::tempdir().unwrap();
    let r = rig(&dir).await;
    let s = r
        .scheduler
        .create(&owner(), every_minute("while paused"), ScheduleSource::Api)
        .await
        .unwrap();
    assert!(r.runtime.set_agent_paused(&s.agent_id, true).await.unwrap());
    let run = r.scheduler.run_now(&owner(), &s.id).await.unwrap();
    assert_eq!(run.status, "blocked", "{run:?}");
    assert!(
        run.reason.as_deref().unwrap_or_default().contains("paused"),
        "{run:?}"
    );
}
