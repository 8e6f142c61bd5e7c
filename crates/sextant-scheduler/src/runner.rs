//! The loop and one tick of it: find due schedules, plan each under its missed-run and
//! overlap policies, claim the slots in the database, start the Runs this process won, and
//! start buffered Runs whose schedule has nothing running any more.
//!
//! Exactly once: a claim is a compare-and-set of the schedule's cursor plus the insert of the
//! slot's Run(s), in one transaction (the journal's writer takes the database's write lock
//! first, so a second process waits and then sees the moved cursor). The unique index on
//! (schedule_id, scheduled_for) for cron and catch-up Runs is the last word. Only the winner
//! starts the Run. A buffered Run is started by whoever moves it from `buffered` to `pending`
//! first.
//!
//! A started Run is admitted with `messageId` = `contextId` = `run-<run_id>`: a retry after a
//! crash (a Run still `pending` at start-up) is an identical message in the same context, so
//! the runtime answers with the first attempt's task instead of running it twice.

use std::collections::HashMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use sextant_core::a2a::{Message, Part, Role};
use sextant_core::event::state_wire;
use sextant_core::ids::{RunId, ScheduleId, format_time, millis, parse_time};
use sextant_core::{OverlapPolicy, Principal, RunRecord, RunTrigger};
use sextant_journal::{Claim, RunRow, ScheduleRow};
use sextant_runtime::{AdmitError, CancelOutcome, CancelRequest, Input};
use tokio_util::sync::CancellationToken;

use crate::plan::{Decision, plan};
use crate::stored::{creator_of, timing_of};
use crate::timing::jitter;
use crate::view::short_id;
use crate::{MAX_NAP, Result, Scheduler};

/// Due schedules handled per database round trip.
const BATCH: u32 = 500;
/// After a tick that left something due (a failed claim), wait this long before the next.
const BACKOFF: Duration = Duration::from_secs(1);

/// What is running for one schedule when its slot comes due.
#[derive(Debug, Clone, Default)]
pub(crate) struct Overlap {
    /// Its Runs that have not ended, oldest first.
    pub active: Vec<RunRow>,
    /// How many of its Runs are buffered.
    pub buffered: u64,
}

/// Who cancels a Run that a newer one replaces, and why.
fn replaced(new: &RunRow) -> CancelRequest {
    CancelRequest {
        by: "the scheduler".into(),
        reason: Some(format!(
            "Run {} replaced it (overlap policy cancel_previous)",
            short_id(&new.run_id)
        )),
    }
}

/// A claim, and the running Runs its new Run asks to cancel (`cancel_previous`).
pub(crate) struct Planned {
    pub claim: Claim,
    pub cancel: Vec<RunRow>,
}

/// How a Run's status reads in a reason: `running`, `waiting for an approval`, ...
pub(crate) fn doing(run: &RunRow) -> String {
    match run.task_state.as_deref() {
        None => "starting".into(),
        Some("TASK_STATE_AUTH_REQUIRED" | "TASK_STATE_INPUT_REQUIRED") => {
            "waiting for your answer".into()
        }
        Some(_) => "running".into(),
    }
}

impl Scheduler {
    pub(crate) async fn run_loop(self, cancel: CancellationToken) {
        if let Err(e) = self.recover_pending().await {
            tracing::error!(error = %e, "scheduler: could not restart pending Runs");
        }
        loop {
            let wait = if self.is_paused() {
                MAX_NAP
            } else {
                if let Err(e) = self.run_due_now().await {
                    tracing::error!(error = %e, "scheduler tick failed");
                }
                self.time_to_next().await
            };
            tokio::select! {
                _ = cancel.cancelled() => break,
                _ = self.inner.changed.notified() => {}
                _ = tokio::time::sleep(wait) => {}
            }
        }
        tracing::debug!("scheduler loop stopped");
    }

    /// How long to sleep: until the earliest due cursor, at most [`MAX_NAP`].
    async fn time_to_next(&self) -> Duration {
        let next = match self.journal().next_due_slot().await {
            Ok(next) => next.as_deref().and_then(parse_time),
            Err(e) => {
                tracing::warn!(error = %e, "scheduler: cannot read the next slot");
                return BACKOFF;
            }
        };
        let Some(next) = next else {
            return MAX_NAP;
        };
        match (next - self.clock().now()).to_std() {
            // Slots are whole seconds; a few ms past the slot makes sure "now" has reached it.
            Ok(d) => (d + Duration::from_millis(5)).min(MAX_NAP),
            // Still due after a tick: a claim failed. Try again shortly, not in a spin.
            Err(_) => BACKOFF,
        }
    }

    /// Handles everything due at the clock's "now": records the outcome of Runs that ended,
    /// plans each due schedule under its missed-run and overlap policies, claims the slots,
    /// starts the Runs this process won (or records them as missed, skipped, buffered or
    /// blocked), then starts buffered Runs whose schedule has nothing running. Returns the
    /// Runs it claimed or started. The loop calls this; tests call it after moving a manual
    /// clock.
    pub async fn run_due_now(&self) -> Result<Vec<RunRow>> {
        let _one_at_a_time = self.inner.tick.lock().await;
        if let Err(e) = self.settle_ended().await {
            tracing::warn!(error = %e, "scheduler: could not record how Runs ended");
        }
        let now = self.clock().now();
        let mut claimed = Vec::new();
        // Each batch moves the cursors of the schedules it saw, so the next query returns
        // others; a schedule whose claim failed would come back, hence the bound.
        for _ in 0..64 {
            let due = self.journal().due_schedules(now, BATCH).await?;
            let full = due.len() as u32 == BATCH;
            if due.is_empty() {
                break;
            }
            let (active, buffered) = self.journal().overlap_of_due(now).await?;
            let mut overlaps: HashMap<String, Overlap> = HashMap::new();
            for run in active {
                overlaps
                    .entry(run.schedule_id.to_string())
                    .or_default()
                    .active
                    .push(run);
            }
            for (id, n) in buffered {
                overlaps.entry(id).or_default().buffered = n;
            }
            let none = Overlap::default();
            let mut planned = Vec::with_capacity(due.len());
            let mut by_id: HashMap<ScheduleId, ScheduleRow> = HashMap::with_capacity(due.len());
            for s in due {
                let overlap = overlaps.get(s.schedule_id.as_str()).unwrap_or(&none);
                planned.push(self.claim_for(&s, now, overlap));
                by_id.insert(s.schedule_id.clone(), s);
            }
            let claims: Vec<Claim> = planned.iter().map(|p| p.claim.clone()).collect();
            let won = self.journal().claim_slots(claims).await?;
            for (p, won) in planned.into_iter().zip(won) {
                if !won {
                    continue;
                }
                let Some(schedule) = by_id.get(&p.claim.schedule_id) else {
                    continue;
                };
                for run in p.claim.runs {
                    let run = if run.record == RunRecord::Pending {
                        if !p.cancel.is_empty() {
                            self.cancel_previous(&run, &p.cancel).await;
                        }
                        self.start_run(schedule, run).await
                    } else {
                        tracing::info!(schedule_id = %schedule.schedule_id,
                            slot = %format_time(run.scheduled_for), record = run.record.as_str(),
                            reason = ?run.reason, "scheduled slot not run");
                        run
                    };
                    claimed.push(run);
                }
            }
            if !full {
                break;
            }
        }
        claimed.extend(self.start_buffered().await?);
        Ok(claimed)
    }

    /// Starts a claimed Run; on an error it stays pending (retried at the next start).
    async fn start_run(&self, schedule: &ScheduleRow, run: RunRow) -> RunRow {
        match self.execute(schedule, run.clone()).await {
            Ok(run) => run,
            Err(e) => {
                tracing::error!(run_id = %run.run_id, error = %e,
                    "scheduled run could not be started");
                run
            }
        }
    }

    /// Starts the first buffered Run of each schedule that has none running any more.
    pub(crate) async fn start_buffered(&self) -> Result<Vec<RunRow>> {
        let mut started = Vec::new();
        for run in self.journal().startable_buffered(BATCH).await? {
            if !self.journal().take_buffered(&run.run_id).await? {
                continue;
            }
            let Some(schedule) = self.journal().schedule(&run.schedule_id).await? else {
                continue;
            };
            tracing::info!(run_id = %run.run_id, schedule_id = %run.schedule_id,
                "buffered run starting");
            let mut run = run;
            run.record = RunRecord::Pending;
            started.push(self.start_run(&schedule, run).await);
        }
        Ok(started)
    }

    /// Cancels the running Runs `new` replaces (`cancel_previous`), and records on `new` what
    /// came of each.
    async fn cancel_previous(&self, new: &RunRow, previous: &[RunRow]) {
        for old in previous {
            let note = match &old.task_id {
                None => format!(
                    "overlap policy cancel_previous: Run {} had not started its task yet; it \
                     was left to start",
                    short_id(&old.run_id)
                ),
                Some(task_id) => match self.runtime().cancel(task_id, &replaced(new)).await {
                    Ok(CancelOutcome::Canceled(_)) => format!(
                        "overlap policy cancel_previous: canceled Run {} (task {task_id})",
                        short_id(&old.run_id)
                    ),
                    Ok(CancelOutcome::AlreadyCanceled(_)) => format!(
                        "overlap policy cancel_previous: Run {} had already been canceled",
                        short_id(&old.run_id)
                    ),
                    Ok(CancelOutcome::AlreadyEnded(state)) => format!(
                        "overlap policy cancel_previous: Run {} had already ended ({})",
                        short_id(&old.run_id),
                        state_wire(&state)
                    ),
                    Ok(CancelOutcome::NotFound) => format!(
                        "overlap policy cancel_previous: Run {}'s task {task_id} was not found",
                        short_id(&old.run_id)
                    ),
                    Err(e) => format!(
                        "overlap policy cancel_previous: could not cancel Run {}: {e}",
                        short_id(&old.run_id)
                    ),
                },
            };
            tracing::info!(run_id = %new.run_id, previous = %old.run_id, %note, "cancel previous");
            if let Err(e) = self.journal().add_run_note(&new.run_id, &note).await {
                tracing::warn!(run_id = %new.run_id, error = %e, "could not note the cancellation");
            }
        }
    }

    /// The claim for one due schedule: where its cursor goes, and the Run(s) for the slot it
    /// decided on, after the overlap policy had its say.
    pub(crate) fn claim_for(
        &self,
        s: &ScheduleRow,
        now: DateTime<Utc>,
        overlap: &Overlap,
    ) -> Planned {
        // The claim names the cursor as stored (the journal compares it as text).
        let expected = s.next_fire_at.map(format_time).unwrap_or_default();
        let timing = timing_of(s);
        let (Ok(timing), Some(cursor)) = (timing, s.next_fire_at) else {
            // Stored values were validated on write; if one no longer parses (e.g. a time
            // zone dropped from the tz database), stop firing rather than fail every tick.
            tracing::error!(schedule_id = %s.schedule_id, cron = %s.cron, timezone = %s.timezone,
                "schedule cannot be evaluated; it will not fire until edited");
            return Planned {
                claim: Claim {
                    schedule_id: s.schedule_id.clone(),
                    expected,
                    next: None,
                    next_due: None,
                    runs: Vec::new(),
                },
                cancel: Vec::new(),
            };
        };
        let policy = s.missed_run_policy;
        let overlap_policy = s.overlap_policy;
        let delay = |slot: DateTime<Utc>| jitter(&s.schedule_id, slot, s.jitter_secs);
        let p = plan(&timing, cursor, now, policy, Self::grace(s), &delay);
        let mut cancel = Vec::new();
        let row = |record: RunRecord, trigger: RunTrigger, slot: DateTime<Utc>, reason| RunRow {
            run_id: RunId::new(),
            schedule_id: s.schedule_id.clone(),
            trigger,
            scheduled_for: millis(slot),
            prompt: s.prompt.clone(),
            agent_id: s.agent_id.clone(),
            executed_as: s.creator.clone(),
            record,
            reason,
            session_id: None,
            task_id: None,
            replay_of: None,
            created_at: millis(now),
            started_at: None,
            finished_at: matches!(record, RunRecord::Missed | RunRecord::Skipped)
                .then(|| millis(now)),
            task_state: None,
            task_state_at: None,
            overlap_policy: Some(overlap_policy),
            jitter_secs: Some(delay(slot).num_seconds()),
            outcome: None,
            result: None,
            settled_at: None,
        };
        let mut runs = Vec::new();
        if let Some(d) = &p.decision {
            runs.push(match d {
                Decision::Missed { slot, reason } => row(
                    RunRecord::Missed,
                    RunTrigger::Cron,
                    *slot,
                    Some(reason.clone()),
                ),
                Decision::Fire { slot, note } => {
                    let trigger = if note.is_some() {
                        RunTrigger::Catchup
                    } else {
                        RunTrigger::Cron
                    };
                    let (record, why) = overlap_decision(overlap_policy, overlap);
                    if record == RunRecord::Pending
                        && overlap_policy == OverlapPolicy::CancelPrevious
                    {
                        cancel = overlap.active.clone();
                    }
                    let reason = match (note, why) {
                        (Some(n), Some(w)) => Some(format!("{n}\n{w}")),
                        (n, w) => n.clone().or(w),
                    };
                    row(record, trigger, *slot, reason)
                }
            });
        }
        if let Some(Decision::Missed { slot, reason }) = &p.missed_before {
            runs.push(row(
                RunRecord::Missed,
                RunTrigger::Cron,
                *slot,
                Some(reason.clone()),
            ));
        }
        Planned {
            claim: Claim {
                schedule_id: s.schedule_id.clone(),
                expected,
                next: p.next.map(format_time),
                next_due: p.next.map(|t| format_time(t + delay(t))),
                runs,
            },
            cancel,
        }
    }

    /// Starts Runs that were claimed but never admitted (Sextant stopped in between). Safe to
    /// repeat: admission is idempotent on the Run's message id.
    pub(crate) async fn recover_pending(&self) -> Result<usize> {
        let pending = self.journal().pending_runs().await?;
        let mut n = 0;
        for run in pending {
            let Some(schedule) = self.journal().schedule(&run.schedule_id).await? else {
                continue;
            };
            self.execute(&schedule, run).await?;
            n += 1;
        }
        if n > 0 {
            tracing::info!(runs = n, "restarted Runs claimed before the last shutdown");
        }
        Ok(n)
    }

    /// Starts one claimed Run as the schedule's creator (see [`Scheduler::execute_as`]).
    pub(crate) async fn execute(&self, schedule: &ScheduleRow, run: RunRow) -> Result<RunRow> {
        self.execute_as(schedule, run, None).await
    }

    /// Starts one claimed Run as the schedule's creator: checks access (the creator's, the
    /// assistant's that made the plan, and `asked_by`'s, an assistant asking for it now; a
    /// refusal is recorded as `blocked` with the reason), admits the prompt to the runtime in
    /// a fresh context, and links the Run to the Session and task. Returns the Run as stored
    /// afterwards.
    pub(crate) async fn execute_as(
        &self,
        schedule: &ScheduleRow,
        run: RunRow,
        asked_by: Option<&Principal>,
    ) -> Result<RunRow> {
        let at = || self.clock().now();
        let creator = creator_of(schedule)?;
        let mut access = self.may_run(schedule, &run.agent_id).await;
        if let (Ok(()), Some(a)) = (&access, asked_by) {
            access = self.assistant_may_call(a, &run.agent_id).await;
        }
        if let Err(why) = access {
            tracing::info!(run_id = %run.run_id, schedule_id = %schedule.schedule_id, %why,
                "scheduled run blocked");
            self.journal()
                .mark_run_ended(&run.run_id, RunRecord::Blocked, &why, at())
                .await?;
            return self.ended(run).await;
        }
        let message = run_message(schedule, &run);
        let admitted = self
            .runtime()
            .admit(Input {
                principal: creator.clone(),
                agent_id: run.agent_id.to_string(),
                message,
                origin: sextant_core::Origin::Schedule,
                // Admission checks the schedule creator's rights at fire time.
                grant: None,
            })
            .await;
        match admitted {
            Ok(a) => {
                let task = a.task();
                self.journal()
                    .mark_run_started(&run.run_id, &task.session_id, &task.task_id, at())
                    .await?;
                tracing::info!(run_id = %run.run_id, schedule_id = %schedule.schedule_id,
                    session_id = %task.session_id, trigger = run.trigger.as_str(), "scheduled run started");
                // The task may have ended already: a quick turn that finished before the link
                // above committed (the watcher looked the Run up then and found no task on
                // it), or a task admitted before a crash whose Run is only linked now. Settle
                // it here; a task still running is left to the watcher.
                self.ended(run).await
            }
            Err(AdmitError::ShuttingDown) => {
                // Stays pending; the next start picks it up.
                Ok(run)
            }
            // The owner paused the Agent: the Run is blocked (not a failure of the plan).
            Err(e @ AdmitError::AgentPaused { .. }) => {
                self.journal()
                    .mark_run_ended(&run.run_id, RunRecord::Blocked, &e.to_string(), at())
                    .await?;
                self.ended(run).await
            }
            Err(AdmitError::UnknownAgent) => {
                // Access was revoked between the check and the admission, or the Agent is gone.
                let (record, why) = match self.runtime().check_access(&creator, &run.agent_id) {
                    Err(why) if self.runtime().agent(&run.agent_id).is_some() => {
                        (RunRecord::Blocked, why.to_string())
                    }
                    _ => (
                        RunRecord::Failed,
                        format!("agent {:?} is not configured", run.agent_id),
                    ),
                };
                self.journal()
                    .mark_run_ended(&run.run_id, record, &why, at())
                    .await?;
                self.ended(run).await
            }
            Err(e) => {
                tracing::warn!(run_id = %run.run_id, error = %e, "scheduled run could not start");
                self.journal()
                    .mark_run_ended(
                        &run.run_id,
                        RunRecord::Failed,
                        &format!("could not start: {e}"),
                        at(),
                    )
                    .await?;
                self.ended(run).await
            }
        }
    }

    /// A Run that ended, or whose task may have: its outcome is recorded at once if it has
    /// (a Run that ended without starting is a failure; a started one is settled from its
    /// task if that task has ended, and left alone otherwise).
    async fn ended(&self, run: RunRow) -> Result<RunRow> {
        let run = self.reread(run).await?;
        if let Err(e) = self.settle_run(&run).await {
            tracing::warn!(run_id = %run.run_id, error = %e, "could not record the Run's outcome");
        }
        self.reread(run).await
    }

    async fn reread(&self, run: RunRow) -> Result<RunRow> {
        Ok(self.journal().run(&run.run_id).await?.unwrap_or(run))
    }
}

/// The message a Run sends its Agent: the plan's prompt, keyed by the Run (so admitting it
/// again after a crash finds the same task) in a context of its own, with the Run's ids in
/// `metadata.sextant` (the Run watcher recognises Run tasks by `runId`).
pub(crate) fn run_message(schedule: &ScheduleRow, run: &RunRow) -> Message {
    let key = format!("run-{}", run.run_id);
    let mut message = Message::new(Role::User, vec![Part::text(run.prompt.clone())]);
    message.message_id = key.clone();
    message.context_id = Some(key);
    message.metadata = Some(
        [(
            "sextant".to_string(),
            serde_json::json!({
                "scheduleId": schedule.schedule_id,
                "runId": run.run_id,
                "trigger": run.trigger,
            }),
        )]
        .into_iter()
        .collect(),
    );
    message
}

/// What the overlap policy makes of a due slot, given what is running: the record of its Run
/// and a reason to put on it.
pub(crate) fn overlap_decision(
    policy: OverlapPolicy,
    overlap: &Overlap,
) -> (RunRecord, Option<String>) {
    let Some(running) = overlap.active.first() else {
        return (RunRecord::Pending, None);
    };
    let which = format!(
        "Run {} (for {}) was still {}",
        short_id(&running.run_id),
        format_time(running.scheduled_for),
        doing(running)
    );
    let others = match overlap.active.len() {
        1 => String::new(),
        n => format!(" ({} Runs of this schedule were running)", n),
    };
    match policy {
        OverlapPolicy::Skip => (
            RunRecord::Skipped,
            Some(format!("skipped: {which}{others}; overlap policy skip")),
        ),
        OverlapPolicy::BufferOne if overlap.buffered == 0 => (
            RunRecord::Buffered,
            Some(format!(
                "buffered: {which}; it starts when that one ends (overlap policy buffer_one)"
            )),
        ),
        OverlapPolicy::BufferOne => (
            RunRecord::Skipped,
            Some(format!(
                "skipped: {which}{others} and one Run is already buffered; overlap policy \
                 buffer_one"
            )),
        ),
        OverlapPolicy::BufferAll => (
            RunRecord::Buffered,
            Some(format!(
                "buffered: {which}; {} other Run(s) wait before this one (overlap policy \
                 buffer_all)",
                overlap.buffered
            )),
        ),
        OverlapPolicy::AllowAll => (
            RunRecord::Pending,
            Some(format!(
                "started beside it: {which}{others} (overlap policy allow_all)"
            )),
        ),
        OverlapPolicy::CancelPrevious => (
            RunRecord::Pending,
            Some(format!("{which}{others}; overlap policy cancel_previous")),
        ),
    }
}
