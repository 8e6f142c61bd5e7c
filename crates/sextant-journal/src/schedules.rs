//! The journal's async API for personal schedules and their Runs. Writes go through the
//! writer thread (so a claim and the cursor move commit together, serialised with every other
//! write of this process); reads run on the read pool.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use rusqlite::Connection;

use crate::error::{Error, Result};
use crate::queries::grants::{self, GrantRow, RunScope};
use crate::queries::{runs, schedules};
use crate::writer::Job;
use crate::{History, Journal, RunRow, ScheduleRow, Settled, TaskRow};
use sextant_core::ids::{ScheduleId, format_time};
use sextant_core::schedule::grant_fingerprint;

/// One cron slot to claim: move the schedule's cursor from `expected` to `next` and, if that
/// worked, record `runs` (the slot's Run, and any Run recorded beside it, such as the trace of
/// a missed slot before it).
#[derive(Debug, Clone)]
pub struct Claim {
    pub schedule_id: ScheduleId,
    /// The cursor the scheduler read (stored time format).
    pub expected: String,
    /// The cursor after this claim: the first slot after "now".
    pub next: Option<String>,
    /// When the loop handles `next`: the slot plus its jitter.
    pub next_due: Option<String>,
    /// The Runs to record (cron Runs: `pending`, `missed`, ...), the slot's own first; empty
    /// only moves the cursor.
    pub runs: Vec<RunRow>,
}

impl Journal {
    /// Runs `f` in the writer thread, inside the current group-commit transaction (in its own
    /// savepoint: an `Err` rolls back only its writes), and returns its result after commit.
    pub(crate) async fn call<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        self.run_in_writer(f, |f, reply| Job::Call { f, reply })
            .await
    }

    /// Runs `f` in the writer alone, in a transaction of its own with foreign keys off
    /// ([`Job::Alone`]: the retention job's deletes only), and returns its result after commit.
    pub(crate) async fn call_alone<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        self.run_in_writer(f, |f, reply| Job::Alone { f, reply })
            .await
    }

    /// Sends `f` to the writer as the job `job` makes of it, and unboxes its result.
    async fn run_in_writer<T, F>(
        &self,
        f: F,
        job: impl FnOnce(
            crate::writer::CallFn,
            tokio::sync::oneshot::Sender<Result<crate::writer::CallOut>>,
        ) -> Job,
    ) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        let out = self
            .write(|reply| {
                job(
                    Box::new(move |c| f(c).map(|v| Box::new(v) as crate::writer::CallOut)),
                    reply,
                )
            })
            .await?;
        out.downcast::<T>()
            .map(|b| *b)
            .map_err(|_| Error::Corrupt("writer returned an unexpected type".into()))
    }

    /// Creates a schedule.
    pub async fn create_schedule(&self, row: ScheduleRow) -> Result<()> {
        self.call(move |c| schedules::insert(c, &row)).await
    }

    /// Replaces a schedule's editable fields (only if `row.creator` owns it); whether it did.
    /// `reset_failures` (the plan was enabled again) sets its failure count back to 0.
    /// A change of its prompt or Agent voids the schedule's grants in the same transaction
    /// (see [`grants::void_changed`]).
    pub async fn update_schedule(&self, row: ScheduleRow, reset_failures: bool) -> Result<bool> {
        self.call(move |c| {
            let before = schedules::get(c, &row.schedule_id)?;
            if !schedules::update(c, &row, reset_failures)? {
                return Ok(false);
            }
            if let Some(before) = before {
                let reason = match (before.prompt != row.prompt, before.agent_id != row.agent_id) {
                    (true, true) => Some("the schedule's prompt and Agent changed"),
                    (true, false) => Some("the schedule's prompt changed"),
                    (false, true) => Some("the schedule's Agent changed"),
                    (false, false) => None,
                };
                if let Some(reason) = reason {
                    let now = grant_fingerprint(&row.prompt, &row.agent_id);
                    grants::void_changed(
                        c,
                        &row.schedule_id,
                        &now,
                        reason,
                        &format_time(row.updated_at),
                    )?;
                }
            }
            Ok(true)
        })
        .await
    }

    /// The schedule a task is a Run of, and the grants that apply to it
    /// ([`grants::run_scope`]).
    pub async fn run_scope(&self, task: TaskRow) -> Result<Option<RunScope>> {
        self.read(move |c| grants::run_scope(c, &task)).await
    }

    /// Records a schedule-scoped approval (replacing one for the same action).
    pub async fn put_schedule_grant(&self, grant: GrantRow) -> Result<()> {
        self.call(move |c| grants::put(c, &grant)).await
    }

    /// A schedule's grants, newest first, void ones included.
    pub async fn schedule_grants(&self, schedule_id: &str) -> Result<Vec<GrantRow>> {
        let id = schedule_id.to_string();
        self.read(move |c| grants::list(c, &id)).await
    }

    /// Revokes one grant of a schedule; whether it existed.
    pub async fn revoke_schedule_grant(&self, schedule_id: &str, grant_id: &str) -> Result<bool> {
        let (id, grant) = (schedule_id.to_string(), grant_id.to_string());
        self.call(move |c| grants::revoke(c, &id, &grant)).await
    }

    /// Deletes a schedule owned by `creator`, with its Runs; whether it existed.
    pub async fn delete_schedule(&self, creator: &str, schedule_id: &str) -> Result<bool> {
        let (creator, id) = (creator.to_string(), schedule_id.to_string());
        self.call(move |c| schedules::delete_owned(c, &creator, &id))
            .await
    }

    /// One schedule, whoever owns it.
    pub async fn schedule(&self, schedule_id: &str) -> Result<Option<ScheduleRow>> {
        let id = schedule_id.to_string();
        self.read(move |c| schedules::get(c, &id)).await
    }

    /// One schedule, only if `creator` owns it.
    pub async fn schedule_owned(
        &self,
        creator: &str,
        schedule_id: &str,
    ) -> Result<Option<ScheduleRow>> {
        let (creator, id) = (creator.to_string(), schedule_id.to_string());
        self.read(move |c| schedules::get_owned(c, &creator, &id))
            .await
    }

    /// Every schedule of `creator`, newest first.
    pub async fn schedules_owned(&self, creator: &str) -> Result<Vec<ScheduleRow>> {
        let creator = creator.to_string();
        self.read(move |c| schedules::list_owned(c, &creator)).await
    }

    /// Enabled schedules with a slot due at or before `now`.
    pub async fn due_schedules(&self, now: DateTime<Utc>, limit: u32) -> Result<Vec<ScheduleRow>> {
        self.read(move |c| schedules::due(c, now, limit)).await
    }

    /// The earliest pending slot of any enabled schedule.
    pub async fn next_due_slot(&self) -> Result<Option<String>> {
        self.read(schedules::next_due).await
    }

    /// Claims cron slots, all in one transaction. For each claim, `true` means this caller
    /// owns the slot (the cursor moved and its Runs were recorded); `false` means another
    /// scheduler got there first or the schedule changed meanwhile, and nothing was written
    /// for it.
    pub async fn claim_slots(&self, claims: Vec<Claim>) -> Result<Vec<bool>> {
        self.call(move |c| {
            claims
                .iter()
                .map(|claim| {
                    let moved = schedules::advance(
                        c,
                        &claim.schedule_id,
                        &claim.expected,
                        claim.next.as_deref(),
                        claim.next_due.as_deref(),
                    )?;
                    if !moved {
                        return Ok(false);
                    }
                    // The slot's own Run decides (the unique slot index has the last word);
                    // one beside it for a slot that already has a Run is not recorded twice.
                    let mut rows = claim.runs.iter();
                    if let Some(first) = rows.next()
                        && !runs::insert(c, first)?
                    {
                        return Ok(false);
                    }
                    for run in rows {
                        runs::insert(c, run)?;
                    }
                    Ok(true)
                })
                .collect()
        })
        .await
    }

    /// Records a run-now or replay Run.
    pub async fn insert_run(&self, run: RunRow) -> Result<()> {
        let inserted = self.call(move |c| runs::insert(c, &run)).await?;
        if inserted {
            Ok(())
        } else {
            Err(Error::Conflict("that Run already exists".into()))
        }
    }

    /// Records Runs (a backfill's), in one transaction; for each, whether it was recorded
    /// (`false`: its slot already has a Run of that trigger).
    pub async fn insert_runs(&self, runs: Vec<RunRow>) -> Result<Vec<bool>> {
        self.call(move |c| runs.iter().map(|r| runs::insert(c, r)).collect())
            .await
    }

    /// A schedule's Runs that are still running (pending, or a task that has not ended).
    pub async fn active_runs(&self, schedule_id: &str) -> Result<Vec<RunRow>> {
        let id = schedule_id.to_string();
        self.read(move |c| runs::active(c, &id)).await
    }

    /// For the schedules due at `now`: their running Runs, and how many buffered Runs each
    /// has.
    pub async fn overlap_of_due(
        &self,
        now: DateTime<Utc>,
    ) -> Result<(Vec<RunRow>, HashMap<String, u64>)> {
        self.read(move |c| Ok((runs::active_of_due(c, now)?, runs::buffered_of_due(c, now)?)))
            .await
    }

    /// How many of a schedule's Runs are buffered.
    pub async fn buffered_runs(&self, schedule_id: &str) -> Result<u64> {
        let id = schedule_id.to_string();
        self.read(move |c| runs::buffered_count(c, &id)).await
    }

    /// The first buffered Run of each schedule that has none running.
    pub async fn startable_buffered(&self, limit: u32) -> Result<Vec<RunRow>> {
        self.read(move |c| runs::startable_buffered(c, limit)).await
    }

    /// Takes a buffered Run to start it (it becomes `pending`); whether this caller did.
    pub async fn take_buffered(&self, run_id: &str) -> Result<bool> {
        let id = run_id.to_string();
        self.call(move |c| runs::take_buffered(c, &id)).await
    }

    /// Adds a line to a Run's reason.
    pub async fn add_run_note(&self, run_id: &str, note: &str) -> Result<()> {
        let (id, note) = (run_id.to_string(), note.to_string());
        self.call(move |c| runs::add_note(c, &id, &note)).await
    }

    /// The Run whose task is `task_id`.
    pub async fn run_by_task(&self, task_id: &str) -> Result<Option<RunRow>> {
        let id = task_id.to_string();
        self.read(move |c| runs::by_task(c, &id)).await
    }

    /// The Runs whose tasks are among `task_ids`, in one read.
    pub async fn runs_by_tasks(&self, task_ids: Vec<String>) -> Result<Vec<RunRow>> {
        self.read(move |c| runs::by_tasks(c, &task_ids)).await
    }

    /// The tasks of Runs started and not settled yet.
    pub async fn running_run_tasks(&self) -> Result<Vec<String>> {
        self.read(runs::running_tasks).await
    }

    /// Runs that ended without their outcome recorded.
    pub async fn unsettled_runs(&self, limit: u32) -> Result<Vec<RunRow>> {
        self.read(move |c| runs::unsettled_ended(c, limit)).await
    }

    /// Records how a Run ended, once, and moves its schedule's failure count (pausing the plan
    /// at its limit, with `pause_reason(failures)`); `None` when it was recorded before.
    pub async fn settle_run(
        &self,
        run_id: &str,
        outcome: sextant_core::RunOutcome,
        result: Option<String>,
        at: DateTime<Utc>,
        pause_reason: impl FnOnce(i64) -> String + Send + 'static,
    ) -> Result<Option<Settled>> {
        let (id, at) = (run_id.to_string(), format_time(at));
        self.call(move |c| runs::settle(c, &id, outcome, result.as_deref(), &at, pause_reason))
            .await
    }

    /// The recent record of `creator`'s schedules (or of one), `recent` outcomes each.
    pub async fn run_histories(
        &self,
        creator: &str,
        schedule_id: Option<&str>,
        recent: u32,
    ) -> Result<HashMap<String, History>> {
        let (creator, id) = (creator.to_string(), schedule_id.map(String::from));
        self.read(move |c| runs::histories(c, &creator, id.as_deref(), recent))
            .await
    }

    /// One Run.
    pub async fn run(&self, run_id: &str) -> Result<Option<RunRow>> {
        let id = run_id.to_string();
        self.read(move |c| runs::get(c, &id)).await
    }

    /// One Run of one schedule.
    pub async fn run_in(&self, schedule_id: &str, run_id: &str) -> Result<Option<RunRow>> {
        let (s, r) = (schedule_id.to_string(), run_id.to_string());
        self.read(move |c| runs::get_in(c, &s, &r)).await
    }

    /// The Run that created a Session, if any.
    pub async fn run_by_session(&self, session_id: &str) -> Result<Option<RunRow>> {
        let id = session_id.to_string();
        self.read(move |c| runs::by_session(c, &id)).await
    }

    /// A page of a schedule's Runs, newest first, and the total count.
    pub async fn runs(
        &self,
        schedule_id: &str,
        cursor: Option<(String, String)>,
        limit: u32,
    ) -> Result<(Vec<RunRow>, u64)> {
        let id = schedule_id.to_string();
        self.read(move |c| runs::list(c, &id, cursor, limit)).await
    }

    /// Runs claimed but never admitted.
    pub async fn pending_runs(&self) -> Result<Vec<RunRow>> {
        self.read(runs::pending).await
    }

    /// Links a Run to the Session and task it created.
    pub async fn mark_run_started(
        &self,
        run_id: &str,
        session_id: &str,
        task_id: &str,
        at: DateTime<Utc>,
    ) -> Result<()> {
        let (r, s, t, at) = (
            run_id.to_string(),
            session_id.to_string(),
            task_id.to_string(),
            format_time(at),
        );
        self.call(move |c| runs::mark_started(c, &r, &s, &t, &at))
            .await
    }

    /// Ends a pending Run that did not start (`blocked` or `failed`), with the reason.
    pub async fn mark_run_ended(
        &self,
        run_id: &str,
        record: sextant_core::RunRecord,
        reason: &str,
        at: DateTime<Utc>,
    ) -> Result<()> {
        let (r, rec, why, at) = (
            run_id.to_string(),
            record.as_str().to_string(),
            reason.to_string(),
            format_time(at),
        );
        self.call(move |c| runs::mark_ended(c, &r, &rec, &why, &at))
            .await
    }
}
