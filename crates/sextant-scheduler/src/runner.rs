//! The loop and one tick of it: find due schedules, plan each under its missed-run policy,
//! claim the slots in the database, and start the Runs this process won.
//!
//! Exactly once: a claim is a compare-and-set of the schedule's cursor plus the insert of the
//! cron Run, in one transaction (the journal's writer takes the database's write lock first,
//! so a second process waits and then sees the moved cursor). The unique index on
//! (schedule_id, scheduled_for) for cron Runs is the last word. Only the winner starts the Run.
//!
//! A started Run is admitted with `messageId` = `contextId` = `run-<run_id>`: a retry after a
//! crash (a Run still `pending` at start-up) is an identical message in the same context, so
//! the runtime answers with the first attempt's task instead of running it twice.

use std::collections::HashMap;
use std::time::Duration;

use chrono::{DateTime, Utc};
use sextant_core::a2a::{Message, Part, Role};
use sextant_core::ids::{format_time, new_id, parse_time};
use sextant_core::{MissedRunPolicy, RunRecord, RunTrigger};
use sextant_journal::{Claim, RunRow, ScheduleRow};
use sextant_runtime::{AdmitError, Input};
use tokio_util::sync::CancellationToken;

use crate::cron::CronSpec;
use crate::plan::{Decision, plan};
use crate::service::creator_of;
use crate::{MAX_NAP, Result, Scheduler};

/// Due schedules handled per database round trip.
const BATCH: u32 = 500;
/// After a tick that left something due (a failed claim), wait this long before the next.
const BACKOFF: Duration = Duration::from_secs(1);

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

    /// How long to sleep: until the earliest due slot, at most [`MAX_NAP`].
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

    /// Handles every slot due at the clock's "now": plans each due schedule under its
    /// missed-run policy, claims the slots, and starts the Runs this process won (or records
    /// them as missed or blocked). Returns the Runs it claimed. The loop calls this; tests
    /// call it after moving a manual clock.
    pub async fn run_due_now(&self) -> Result<Vec<RunRow>> {
        let _one_at_a_time = self.inner.tick.lock().await;
        let now = self.clock().now();
        let now_s = format_time(now);
        let mut claimed = Vec::new();
        // Each batch moves the cursors of the schedules it saw, so the next query returns
        // others; a schedule whose claim failed would come back, hence the bound.
        for _ in 0..64 {
            let due = self.journal().due_schedules(&now_s, BATCH).await?;
            let full = due.len() as u32 == BATCH;
            if due.is_empty() {
                break;
            }
            let mut claims = Vec::with_capacity(due.len());
            let mut by_id: HashMap<String, ScheduleRow> = HashMap::with_capacity(due.len());
            for s in due {
                claims.push(self.claim_for(&s, now, &now_s));
                by_id.insert(s.schedule_id.clone(), s);
            }
            let won = self.journal().claim_slots(claims.clone()).await?;
            for (claim, won) in claims.into_iter().zip(won) {
                if !won {
                    continue;
                }
                let Some(schedule) = by_id.get(&claim.schedule_id) else {
                    continue;
                };
                for run in claim.runs {
                    let run = if run.record == RunRecord::Pending.as_str() {
                        match self.execute(schedule, run.clone()).await {
                            Ok(run) => run,
                            Err(e) => {
                                // It stays pending and is retried at the next start.
                                tracing::error!(run_id = %run.run_id, error = %e,
                                    "scheduled run could not be started");
                                run
                            }
                        }
                    } else {
                        tracing::info!(schedule_id = %schedule.schedule_id,
                            slot = %run.scheduled_for, record = %run.record,
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
        Ok(claimed)
    }

    /// The claim for one due schedule: where its cursor goes, and the Run (if any) for the
    /// slot it decided on.
    pub(crate) fn claim_for(&self, s: &ScheduleRow, now: DateTime<Utc>, now_s: &str) -> Claim {
        let expected = s.next_fire_at.clone().unwrap_or_default();
        let parsed = CronSpec::parse(&s.cron, &s.timezone);
        let (Ok(spec), Some(cursor)) = (parsed, parse_time(&expected)) else {
            // Stored values were validated on write; if one no longer parses (e.g. a time
            // zone dropped from the tz database), stop firing rather than fail every tick.
            tracing::error!(schedule_id = %s.schedule_id, cron = %s.cron, timezone = %s.timezone,
                "schedule cannot be evaluated; it will not fire until edited");
            return Claim {
                schedule_id: s.schedule_id.clone(),
                expected,
                next: None,
                runs: Vec::new(),
            };
        };
        let policy = MissedRunPolicy::parse(&s.missed_run_policy).unwrap_or(MissedRunPolicy::Skip);
        let p = plan(&spec, cursor, now, policy, Self::grace(s));
        let row = |d: &Decision| {
            let (record, reason, finished_at) = match d {
                Decision::Fire { note, .. } => (RunRecord::Pending, note.clone(), None),
                Decision::Missed { reason, .. } => (
                    RunRecord::Missed,
                    Some(reason.clone()),
                    Some(now_s.to_string()),
                ),
            };
            RunRow {
                run_id: new_id(),
                schedule_id: s.schedule_id.clone(),
                trigger: RunTrigger::Cron.as_str().to_string(),
                scheduled_for: format_time(d.slot()),
                prompt: s.prompt.clone(),
                agent_id: s.agent_id.clone(),
                executed_as: s.creator.clone(),
                record: record.as_str().to_string(),
                reason,
                session_id: None,
                task_id: None,
                replay_of: None,
                created_at: now_s.to_string(),
                started_at: None,
                finished_at,
                task_state: None,
                task_state_at: None,
            }
        };
        // The slot's own Run first (it decides the claim), then the trace of a missed slot
        // before it.
        let runs = p
            .decision
            .iter()
            .chain(p.missed_before.iter())
            .map(row)
            .collect();
        Claim {
            schedule_id: s.schedule_id.clone(),
            expected,
            next: p.next.map(format_time),
            runs,
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

    /// Starts one claimed Run as the schedule's creator: checks access (a refusal is recorded
    /// as `blocked` with the reason), admits the prompt to the runtime in a fresh context, and
    /// links the Run to the Session and task. Returns the Run as stored afterwards.
    pub(crate) async fn execute(&self, schedule: &ScheduleRow, run: RunRow) -> Result<RunRow> {
        let at = || format_time(self.clock().now());
        let creator = creator_of(schedule)?;
        if let Err(why) = self.runtime().check_access(&creator, &run.agent_id) {
            tracing::info!(run_id = %run.run_id, schedule_id = %schedule.schedule_id, %why,
                "scheduled run blocked");
            self.journal()
                .mark_run_ended(&run.run_id, RunRecord::Blocked.as_str(), &why, &at())
                .await?;
            return self.reread(run).await;
        }
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
        let admitted = self
            .runtime()
            .admit(Input {
                principal: creator.clone(),
                agent_id: run.agent_id.clone(),
                message,
                origin: "schedule".into(),
            })
            .await;
        match admitted {
            Ok(a) => {
                let task = a.task();
                self.journal()
                    .mark_run_started(&run.run_id, &task.session_id, &task.task_id, &at())
                    .await?;
                tracing::info!(run_id = %run.run_id, schedule_id = %schedule.schedule_id,
                    session_id = %task.session_id, trigger = %run.trigger, "scheduled run started");
            }
            Err(AdmitError::ShuttingDown) => {
                // Stays pending; the next start picks it up.
                return Ok(run);
            }
            Err(AdmitError::UnknownAgent) => {
                // Access was revoked between the check and the admission, or the Agent is gone.
                let (record, why) = match self.runtime().check_access(&creator, &run.agent_id) {
                    Err(why) if self.runtime().agent(&run.agent_id).is_some() => {
                        (RunRecord::Blocked, why)
                    }
                    _ => (
                        RunRecord::Failed,
                        format!("agent {:?} is not configured", run.agent_id),
                    ),
                };
                self.journal()
                    .mark_run_ended(&run.run_id, record.as_str(), &why, &at())
                    .await?;
            }
            Err(e) => {
                tracing::warn!(run_id = %run.run_id, error = %e, "scheduled run could not start");
                self.journal()
                    .mark_run_ended(
                        &run.run_id,
                        RunRecord::Failed.as_str(),
                        &format!("could not start: {e}"),
                        &at(),
                    )
                    .await?;
            }
        }
        self.reread(run).await
    }

    async fn reread(&self, run: RunRow) -> Result<RunRow> {
        Ok(self.journal().run(&run.run_id).await?.unwrap_or(run))
    }
}
