//! Explicit backfill: one Run for each slot of a past range, with its own overlap policy
//! (default `buffer_all`: they run one at a time, in slot order), recorded as `backfill` Runs.
//! A slot that was backfilled before is not backfilled again (a unique index, as for cron
//! slots).

use chrono::{DateTime, Duration, Utc};
use sextant_core::ids::{RunId, format_time, millis};
use sextant_core::{OverlapPolicy, RunRecord, RunTrigger};
use sextant_journal::RunRow;

use crate::cron::FieldError;
use crate::service::Actor;
use crate::stored::timing_of;
use crate::view::RunView;
use crate::{Error, Result, Scheduler};

/// The most slots one backfill may cover.
pub const MAX_SLOTS: usize = 100;

/// A backfill request: the slots in `[from, to)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backfill {
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    /// `None`: `buffer_all`. `cancel_previous` is refused (each Run would cancel the one
    /// before it).
    pub overlap_policy: Option<OverlapPolicy>,
}

/// What a backfill did.
#[derive(Debug, Clone, PartialEq)]
pub struct BackfillResult {
    /// The Runs it recorded, in slot order (started, buffered or skipped).
    pub runs: Vec<RunView>,
    /// Slots in the range that had been backfilled before (no new Run).
    pub already_backfilled: usize,
    pub overlap_policy: OverlapPolicy,
}

impl Scheduler {
    /// Backfills one of the owner's schedules over a past range (see the module docs).
    pub async fn backfill(
        &self,
        actor: impl Into<Actor>,
        schedule_id: &str,
        b: Backfill,
    ) -> Result<BackfillResult> {
        let actor = &actor.into();
        let schedule = self
            .journal()
            .schedule_owned(&actor.owner.key(), schedule_id)
            .await?
            .ok_or(Error::NotFound)?;
        let now = self.clock().now();
        if b.from >= b.to {
            return Err(FieldError::new("to", "must be after from").into());
        }
        if b.to > now {
            return Err(FieldError::new(
                "to",
                format!(
                    "must not be in the future (it is now {}); backfill runs past slots",
                    format_time(now)
                ),
            )
            .into());
        }
        let policy = b.overlap_policy.unwrap_or(OverlapPolicy::BufferAll);
        if policy == OverlapPolicy::CancelPrevious {
            return Err(FieldError::new(
                "overlap_policy",
                "cancel_previous is not a backfill policy (each Run would cancel the one \
                 before it); use buffer_all, buffer_one, skip or allow_all",
            )
            .into());
        }
        let timing = timing_of(&schedule)?;
        let mut slots = Vec::new();
        let mut t = b.from - Duration::seconds(1);
        while let Some(next) = timing.next_after(t) {
            if next >= b.to {
                break;
            }
            if slots.len() == MAX_SLOTS {
                return Err(FieldError::new(
                    "to",
                    format!(
                        "that range has more than {MAX_SLOTS} slots; backfill at most \
                         {MAX_SLOTS} at a time"
                    ),
                )
                .into());
            }
            slots.push(next);
            t = next;
        }
        if slots.is_empty() {
            return Err(FieldError::new(
                "from",
                format!(
                    "the schedule has no slot from {} to {}",
                    format_time(b.from),
                    format_time(b.to)
                ),
            )
            .into());
        }
        // Refused up front rather than recorded as blocked Runs, slot after slot.
        if let Err(why) = self.may_run(&schedule, &schedule.agent_id).await {
            return Err(Error::Forbidden(why));
        }
        if let Some(a) = &actor.assistant
            && let Err(why) = self.assistant_may_call(a, &schedule.agent_id).await
        {
            return Err(Error::Forbidden(why));
        }
        let running = !self.journal().active_runs(schedule_id).await?.is_empty();
        let range = format!(
            "backfill of {} to {} ({} slot(s)), overlap policy {}",
            format_time(b.from),
            format_time(b.to),
            slots.len(),
            policy.as_str()
        );
        let rows: Vec<RunRow> = slots
            .iter()
            .enumerate()
            .map(|(i, slot)| {
                let (record, note) = backfill_decision(policy, i, running);
                RunRow {
                    run_id: RunId::new(),
                    schedule_id: schedule.schedule_id.clone(),
                    trigger: RunTrigger::Backfill,
                    scheduled_for: millis(*slot),
                    prompt: schedule.prompt.clone(),
                    agent_id: schedule.agent_id.clone(),
                    executed_as: schedule.creator.clone(),
                    record,
                    reason: Some(match note {
                        Some(n) => format!("{range}; {n}"),
                        None => range.clone(),
                    }),
                    session_id: None,
                    task_id: None,
                    replay_of: None,
                    created_at: millis(now),
                    started_at: None,
                    finished_at: (record == RunRecord::Skipped).then(|| millis(now)),
                    task_state: None,
                    task_state_at: None,
                    overlap_policy: Some(policy),
                    jitter_secs: Some(0),
                    outcome: None,
                    result: None,
                    settled_at: None,
                }
            })
            .collect();
        let inserted = self.journal().insert_runs(rows.clone()).await?;
        let mut runs = Vec::new();
        let mut already = 0;
        for (row, inserted) in rows.into_iter().zip(inserted) {
            if !inserted {
                already += 1;
                continue;
            }
            let row = if row.record == RunRecord::Pending {
                self.execute_as(&schedule, row, actor.assistant.as_ref())
                    .await?
            } else {
                row
            };
            runs.push(RunView::from(&row));
        }
        tracing::info!(
            schedule_id,
            runs = runs.len(),
            already,
            policy = policy.as_str(),
            "backfill recorded"
        );
        self.changed();
        Ok(BackfillResult {
            runs,
            already_backfilled: already,
            overlap_policy: policy,
        })
    }
}

/// What a backfill's overlap policy makes of its `i`-th slot, `running` saying whether a Run
/// of the schedule was running when it was asked for.
fn backfill_decision(
    policy: OverlapPolicy,
    i: usize,
    running: bool,
) -> (RunRecord, Option<&'static str>) {
    let waits = if running { 0 } else { 1 };
    match policy {
        OverlapPolicy::AllowAll | OverlapPolicy::CancelPrevious => (RunRecord::Pending, None),
        OverlapPolicy::BufferAll if i < waits => (RunRecord::Pending, None),
        OverlapPolicy::BufferAll => (
            RunRecord::Buffered,
            Some("buffered: starts when the Run before it ends"),
        ),
        OverlapPolicy::BufferOne if i < waits => (RunRecord::Pending, None),
        OverlapPolicy::BufferOne if i == waits => (
            RunRecord::Buffered,
            Some("buffered: starts when the Run before it ends"),
        ),
        OverlapPolicy::BufferOne => (
            RunRecord::Skipped,
            Some("skipped: one Run is already buffered"),
        ),
        OverlapPolicy::Skip if i < waits => (RunRecord::Pending, None),
        OverlapPolicy::Skip => (
            RunRecord::Skipped,
            Some("skipped: another Run of the schedule was running"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_backfill_policy_decides_each_slot() {
        use OverlapPolicy::*;
        use RunRecord::*;
        let records = |p, running| {
            (0..4)
                .map(|i| backfill_decision(p, i, running).0)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            records(BufferAll, false),
            [Pending, Buffered, Buffered, Buffered]
        );
        assert_eq!(records(BufferAll, true), [Buffered; 4]);
        assert_eq!(
            records(BufferOne, false),
            [Pending, Buffered, Skipped, Skipped]
        );
        assert_eq!(
            records(BufferOne, true),
            [Buffered, Skipped, Skipped, Skipped]
        );
        assert_eq!(records(Skip, false), [Pending, Skipped, Skipped, Skipped]);
        assert_eq!(records(Skip, true), [Skipped; 4]);
        assert_eq!(records(AllowAll, true), [Pending; 4]);
    }
}
