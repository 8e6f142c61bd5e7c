//! `runs`: one row per Run of a schedule: the trigger, the prompt and Agent it used (a
//! snapshot), the slot it was for, and, once started, its Session and task. A started Run's
//! status is read from its task (the journal), never copied here; its outcome and result
//! snippet are recorded once it has ended ([`settle`]), a cache the scheduler rebuilds from the
//! journal at start-up.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::{Deserialize, Serialize};

use chrono::{DateTime, Utc};
use sextant_core::CallerKey;
use sextant_core::ids::{AgentId, RunId, ScheduleId, SessionId, TaskId};
use sextant_core::schedule::{OverlapPolicy, RunOutcome, RunRecord, RunTrigger};

use crate::error::{Error, Result};
use crate::stored::{self, Sql};

/// A stored Run, with its task's cached state when it has one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRow {
    pub run_id: RunId,
    pub schedule_id: ScheduleId,
    /// Why the Run exists.
    pub trigger: RunTrigger,
    /// The cron slot, or when run-now / replay was asked (stored time format).
    #[serde(with = "crate::stored::time")]
    pub scheduled_for: DateTime<Utc>,
    pub prompt: String,
    pub agent_id: AgentId,
    /// `Principal::key()` the Run executes as.
    pub executed_as: CallerKey,
    /// Where the Run is before (or instead of) its task.
    pub record: RunRecord,
    pub reason: Option<String>,
    pub session_id: Option<SessionId>,
    pub task_id: Option<TaskId>,
    pub replay_of: Option<RunId>,
    #[serde(with = "crate::stored::time")]
    pub created_at: DateTime<Utc>,
    #[serde(default, with = "crate::stored::time::opt")]
    pub started_at: Option<DateTime<Utc>>,
    /// For Runs that never started.
    #[serde(default, with = "crate::stored::time::opt")]
    pub finished_at: Option<DateTime<Utc>>,
    /// The task's state (wire name) when the Run has started. Read-only: joined from `tasks`.
    pub task_state: Option<String>,
    /// When the task's state last changed. Read-only: joined from `tasks`.
    #[serde(default, with = "crate::stored::time::opt")]
    pub task_state_at: Option<DateTime<Utc>>,
    /// The overlap policy that decided this Run (a backfill's own policy).
    pub overlap_policy: Option<OverlapPolicy>,
    /// How many seconds after its slot it fired (the schedule's jitter).
    pub jitter_secs: Option<i64>,
    /// How it ended, once it has.
    pub outcome: Option<RunOutcome>,
    /// A snippet of its result (the task's output or last status message), once it has ended.
    pub result: Option<String>,
    /// When the scheduler recorded its outcome.
    #[serde(default, with = "crate::stored::time::opt")]
    pub settled_at: Option<DateTime<Utc>>,
}

pub(crate) const SELECT: &str = "SELECT r.run_id, r.schedule_id, r.trigger, r.scheduled_for, r.prompt, \
                      r.agent_id, r.executed_as, r.record, r.reason, r.session_id, r.task_id, \
                      r.replay_of, r.created_at, r.started_at, r.finished_at, t.state, t.state_at, \
                      r.overlap_policy, r.jitter_secs, r.outcome, r.result, r.settled_at \
                      FROM runs r LEFT JOIN tasks t ON t.task_id = r.task_id";

pub(crate) fn row(r: &Row<'_>) -> rusqlite::Result<RunRow> {
    Ok(RunRow {
        run_id: stored::get(r, 0)?,
        schedule_id: stored::get(r, 1)?,
        trigger: stored::get(r, 2)?,
        scheduled_for: stored::get(r, 3)?,
        prompt: r.get(4)?,
        agent_id: stored::get(r, 5)?,
        executed_as: stored::get(r, 6)?,
        record: stored::get(r, 7)?,
        reason: r.get(8)?,
        session_id: stored::get_opt(r, 9)?,
        task_id: stored::get_opt(r, 10)?,
        replay_of: stored::get_opt(r, 11)?,
        created_at: stored::get(r, 12)?,
        started_at: stored::get_opt(r, 13)?,
        finished_at: stored::get_opt(r, 14)?,
        task_state: r.get(15)?,
        task_state_at: stored::get_opt(r, 16)?,
        overlap_policy: stored::get_opt(r, 17)?,
        jitter_secs: r.get(18)?,
        outcome: stored::get_opt(r, 19)?,
        result: r.get(20)?,
        settled_at: stored::get_opt(r, 21)?,
    })
}

/// Inserts a Run. Returns `false`, writing nothing, when it is a cron (or catch-up, or
/// backfill) Run for a slot that already has one (another scheduler claimed it first).
pub fn insert(c: &Connection, r: &RunRow) -> Result<bool> {
    let n = c
        .prepare_cached(
            "INSERT INTO runs (run_id, schedule_id, trigger, scheduled_for, prompt, agent_id,
                 executed_as, record, reason, session_id, task_id, replay_of, created_at,
                 started_at, finished_at, overlap_policy, jitter_secs)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)
             ON CONFLICT DO NOTHING",
        )?
        .execute(params![
            r.run_id.as_str(),
            r.schedule_id.as_str(),
            Sql(r.trigger),
            Sql(r.scheduled_for),
            r.prompt,
            r.agent_id.as_str(),
            r.executed_as.as_str(),
            Sql(r.record),
            r.reason,
            r.session_id.as_deref(),
            r.task_id.as_deref(),
            r.replay_of.as_deref(),
            Sql(r.created_at),
            r.started_at.map(Sql),
            r.finished_at.map(Sql),
            r.overlap_policy.map(Sql),
            r.jitter_secs,
        ])?;
    Ok(n == 1)
}

/// One Run by id.
pub fn get(c: &Connection, run_id: &str) -> Result<Option<RunRow>> {
    Ok(c.prepare_cached(&format!("{SELECT} WHERE r.run_id = ?1"))?
        .query_row([run_id], row)
        .optional()?)
}

/// One Run of one schedule.
pub fn get_in(c: &Connection, schedule_id: &str, run_id: &str) -> Result<Option<RunRow>> {
    Ok(c.prepare_cached(&format!(
        "{SELECT} WHERE r.run_id = ?1 AND r.schedule_id = ?2"
    ))?
    .query_row(params![run_id, schedule_id], row)
    .optional()?)
}

/// The Run that created a Session, if any (the Session → Run link).
pub fn by_session(c: &Connection, session_id: &str) -> Result<Option<RunRow>> {
    Ok(
        c.prepare_cached(&format!("{SELECT} WHERE r.session_id = ?1"))?
            .query_row([session_id], row)
            .optional()?,
    )
}

/// A page of a schedule's Runs, newest first; `cursor` is the (created_at, run_id) of the
/// last Run of the previous page. Also returns the total count. A Run whose stored values do
/// not read is left out (and logged), and the page reads on past it, so it still holds
/// `limit` Runs when there are that many after the cursor (a caller's look-ahead row
/// included).
pub fn list(
    c: &Connection,
    schedule_id: &str,
    cursor: Option<(String, String)>,
    limit: u32,
) -> Result<(Vec<RunRow>, u64)> {
    let mut stmt = c.prepare_cached(&format!(
        "{SELECT} WHERE r.schedule_id = ?1
           AND (?2 = 0 OR r.created_at < ?3 OR (r.created_at = ?3 AND r.run_id < ?4))
         ORDER BY r.created_at DESC, r.run_id DESC LIMIT ?5"
    ))?;
    let rows = super::page_skipping_unreadable(
        "run",
        limit,
        cursor.unwrap_or_default(),
        |(at, id), want| {
            stmt.query_map(
                params![schedule_id, !id.is_empty() as i64, at, id, want],
                |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(12)?, row(r))),
            )?
            .collect()
        },
    )?;
    let total: i64 = c
        .prepare_cached("SELECT COUNT(*) FROM runs WHERE schedule_id = ?1")?
        .query_row([schedule_id], |r| r.get(0))?;
    Ok((rows, total as u64))
}

/// Runs claimed but never admitted (a crash or shutdown in between), oldest first.
pub fn pending(c: &Connection) -> Result<Vec<RunRow>> {
    Ok(c.prepare_cached(&format!(
        "{SELECT} WHERE r.record = 'pending' ORDER BY r.created_at, r.run_id"
    ))?
    .query_map([], row)?
    .collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Records that a Run started: its Session and task.
pub fn mark_started(
    c: &Connection,
    run_id: &str,
    session_id: &str,
    task_id: &str,
    at: &str,
) -> Result<()> {
    c.prepare_cached(
        "UPDATE runs SET record = 'started', session_id = ?2, task_id = ?3,
             started_at = COALESCE(started_at, ?4)
         WHERE run_id = ?1",
    )?
    .execute(params![run_id, session_id, task_id, at])?;
    Ok(())
}

/// Records that a pending Run ended without starting (`blocked` or `failed`) and why. A Run
/// that already started is left alone.
pub fn mark_ended(
    c: &Connection,
    run_id: &str,
    record: &str,
    reason: &str,
    at: &str,
) -> Result<()> {
    c.prepare_cached(
        "UPDATE runs SET record = ?2, reason = ?3, finished_at = ?4
         WHERE run_id = ?1 AND record = 'pending'",
    )?
    .execute(params![run_id, record, reason, at])?;
    Ok(())
}

/// Adds `note` to a Run's reason (after what is there, on a new line).
pub fn add_note(c: &Connection, run_id: &str, note: &str) -> Result<()> {
    c.prepare_cached(
        "UPDATE runs SET reason = CASE WHEN reason IS NULL OR reason = '' THEN ?2
                                       ELSE reason || char(10) || ?2 END
         WHERE run_id = ?1",
    )?
    .execute(params![run_id, note])?;
    Ok(())
}

/// The Run whose task is `task_id`, if any.
pub fn by_task(c: &Connection, task_id: &str) -> Result<Option<RunRow>> {
    Ok(c.prepare_cached(&format!("{SELECT} WHERE r.task_id = ?1"))?
        .query_row([task_id], row)
        .optional()?)
}

/// The tasks of Runs that started and whose outcome is not recorded yet (the scheduler's
/// watcher follows these when it starts).
pub fn running_tasks(c: &Connection) -> Result<Vec<String>> {
    Ok(c.prepare_cached(
        "SELECT task_id FROM runs
         WHERE settled_at IS NULL AND record = 'started' AND task_id IS NOT NULL",
    )?
    .query_map([], |r| r.get(0))?
    .collect::<rusqlite::Result<Vec<_>>>()?)
}

/// The Runs whose tasks are among `task_ids` (one read for a burst of ended tasks: the
/// scheduler's watcher asks this for every task that ends, and nearly none of them are Runs).
pub fn by_tasks(c: &Connection, task_ids: &[String]) -> Result<Vec<RunRow>> {
    // A list of strings always serializes; the error arm only satisfies the type.
    let ids = serde_json::to_string(task_ids).map_err(|e| Error::Failed(e.to_string()))?;
    Ok(c.prepare_cached(&format!(
        "{SELECT} WHERE r.task_id IN (SELECT value FROM json_each(?1)) ORDER BY r.created_at, r.run_id"
    ))?
    .query_map([ids], row)?
    .collect::<rusqlite::Result<Vec<_>>>()?)
}

/// The condition of a Run that is still running: claimed and not yet admitted, or started
/// with a task that has not ended (working, or waiting for an approval).
const ACTIVE: &str = "(r.record = 'pending' OR (r.record = 'started' AND (t.state IS NULL OR (\
                      t.state <> 'TASK_STATE_COMPLETED' AND t.state <> 'TASK_STATE_FAILED' AND \
                      t.state <> 'TASK_STATE_CANCELED' AND t.state <> 'TASK_STATE_REJECTED'))))";

/// A schedule's Runs that are still running, oldest first.
pub fn active(c: &Connection, schedule_id: &str) -> Result<Vec<RunRow>> {
    Ok(c.prepare_cached(&format!(
        "{SELECT} WHERE r.schedule_id = ?1 AND r.record IN ('pending', 'started') AND {ACTIVE}
         ORDER BY r.created_at, r.run_id"
    ))?
    .query_map([schedule_id], row)?
    .collect::<rusqlite::Result<Vec<_>>>()?)
}

/// The running Runs of every schedule whose cursor is due at `now` (the overlap policy
/// decides what their due slot does), oldest first.
pub fn active_of_due(c: &Connection, now: DateTime<Utc>) -> Result<Vec<RunRow>> {
    Ok(c.prepare_cached(&format!(
        "{SELECT} WHERE r.schedule_id IN (
             SELECT schedule_id FROM schedules
             WHERE enabled = 1 AND due_at IS NOT NULL AND due_at <= ?1)
           AND r.record IN ('pending', 'started') AND {ACTIVE}
         ORDER BY r.created_at, r.run_id"
    ))?
    .query_map([Sql(now)], row)?
    .collect::<rusqlite::Result<Vec<_>>>()?)
}

/// How many buffered Runs each schedule whose cursor is due at `now` has.
pub fn buffered_of_due(c: &Connection, now: DateTime<Utc>) -> Result<HashMap<String, u64>> {
    let mut stmt = c.prepare_cached(
        "SELECT schedule_id, COUNT(*) FROM runs WHERE record = 'buffered' AND schedule_id IN (
             SELECT schedule_id FROM schedules
             WHERE enabled = 1 AND due_at IS NOT NULL AND due_at <= ?1)
         GROUP BY schedule_id",
    )?;
    let rows = stmt.query_map([Sql(now)], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
    })?;
    rows.map(|r| r.map(|(k, n)| (k, n as u64)).map_err(Into::into))
        .collect()
}

/// How many of a schedule's Runs wait for a running one to end (`buffered`).
pub fn buffered_count(c: &Connection, schedule_id: &str) -> Result<u64> {
    Ok(
        c.prepare_cached(
            "SELECT COUNT(*) FROM runs WHERE schedule_id = ?1 AND record = 'buffered'",
        )?
        .query_row([schedule_id], |r| r.get::<_, i64>(0))? as u64,
    )
}

/// For each schedule with a buffered Run and none running, its first buffered Run (slot
/// order), at most `limit`.
pub fn startable_buffered(c: &Connection, limit: u32) -> Result<Vec<RunRow>> {
    Ok(c.prepare_cached(&format!(
        "{SELECT} WHERE r.run_id IN (
             SELECT (SELECT b.run_id FROM runs b
                     WHERE b.schedule_id = w.schedule_id AND b.record = 'buffered'
                     ORDER BY b.scheduled_for, b.created_at, b.run_id LIMIT 1)
             FROM (SELECT DISTINCT schedule_id FROM runs WHERE record = 'buffered') w
             WHERE NOT EXISTS (
                 SELECT 1 FROM runs r LEFT JOIN tasks t ON t.task_id = r.task_id
                 WHERE r.schedule_id = w.schedule_id AND r.record IN ('pending', 'started')
                   AND {ACTIVE}))
         ORDER BY r.scheduled_for LIMIT ?1"
    ))?
    .query_map([limit], row)?
    .collect::<rusqlite::Result<Vec<_>>>()?)
}

/// Takes a buffered Run to start it: `buffered` becomes `pending` (the claim a Run starts
/// from), only once. Returns whether this caller took it.
pub fn take_buffered(c: &Connection, run_id: &str) -> Result<bool> {
    let n = c
        .prepare_cached(
            "UPDATE runs SET record = 'pending' WHERE run_id = ?1 AND record = 'buffered'",
        )?
        .execute([run_id])?;
    Ok(n == 1)
}

/// Runs that have ended (their task ended, or they could not start) whose outcome was not
/// recorded yet, oldest first.
pub fn unsettled_ended(c: &Connection, limit: u32) -> Result<Vec<RunRow>> {
    Ok(c.prepare_cached(&format!(
        "{SELECT} WHERE r.settled_at IS NULL AND r.record IN ('started', 'failed', 'blocked')
           AND (r.record <> 'started' OR t.state IN ('TASK_STATE_COMPLETED', 'TASK_STATE_FAILED',
                                                     'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED'))
         ORDER BY r.created_at, r.run_id LIMIT ?1"
    ))?
    .query_map([limit], row)?
    .collect::<rusqlite::Result<Vec<_>>>()?)
}

/// What recording a Run's outcome did to its schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settled {
    pub schedule_id: ScheduleId,
    pub schedule_name: String,
    /// Consecutive failures before and after this Run.
    pub failures_before: i64,
    pub failures_after: i64,
    /// Set when this Run's failure paused the plan: the reason recorded on it.
    pub paused: Option<String>,
}

/// Records that a Run ended (`outcome`, `result` snippet), once: a second call for the same
/// Run changes nothing and returns `None`. In the same transaction, the schedule's count of
/// consecutive failures moves (a success resets it, a failure adds one, a cancellation leaves
/// it), and if a failure reaches the schedule's `pause_after_failures` while it is enabled,
/// the plan is disabled with `pause_reason(failures)` as its reason.
pub fn settle(
    c: &Connection,
    run_id: &str,
    outcome: RunOutcome,
    result: Option<&str>,
    at: &str,
    pause_reason: impl FnOnce(i64) -> String,
) -> Result<Option<Settled>> {
    let n = c
        .prepare_cached(
            "UPDATE runs SET outcome = ?2, result = ?3, settled_at = ?4
             WHERE run_id = ?1 AND settled_at IS NULL",
        )?
        .execute(params![run_id, Sql(outcome), result, at])?;
    if n == 0 {
        return Ok(None);
    }
    let (schedule_id, name, enabled, before, pause_after): (
        String,
        String,
        bool,
        i64,
        Option<i64>,
    ) = c
        .prepare_cached(
            "SELECT s.schedule_id, s.name, s.enabled, s.consecutive_failures,
                    s.pause_after_failures
             FROM runs r JOIN schedules s ON s.schedule_id = r.schedule_id WHERE r.run_id = ?1",
        )?
        .query_row([run_id], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })?;
    let after = match outcome {
        RunOutcome::Succeeded => 0,
        RunOutcome::Failed => before + 1,
        RunOutcome::Canceled => before,
    };
    let paused =
        (outcome == RunOutcome::Failed && enabled && pause_after.is_some_and(|n| after >= n))
            .then(|| pause_reason(after));
    match &paused {
        Some(reason) => c
            .prepare_cached(
                "UPDATE schedules SET consecutive_failures = ?2, enabled = 0,
                     next_fire_at = NULL, due_at = NULL, paused_reason = ?3, paused_at = ?4
                 WHERE schedule_id = ?1",
            )?
            .execute(params![schedule_id, after, reason, at])?,
        None => c
            .prepare_cached(
                "UPDATE schedules SET consecutive_failures = ?2 WHERE schedule_id = ?1",
            )?
            .execute(params![schedule_id, after])?,
    };
    Ok(Some(Settled {
        schedule_id: schedule_id.into(),
        schedule_name: name,
        failures_before: before,
        failures_after: after,
        paused,
    }))
}

/// One schedule's recent record: the outcomes of its latest ended Runs (newest first) and the
/// count of each outcome over its whole history. A Run whose stored outcome this Sextant does
/// not know (a newer one wrote it) is left out of both (and logged), as lists leave out rows
/// they cannot read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct History {
    /// (outcome, run_id, scheduled_for), newest first.
    pub recent: Vec<(RunOutcome, String, String)>,
    pub succeeded: u64,
    pub failed: u64,
    pub canceled: u64,
}

/// The [`History`] of every schedule of `creator` (or of one schedule of theirs), keeping the
/// latest `recent` outcomes each. One schedule's is read through its own index, so showing a
/// schedule costs the same however many others its creator has.
pub fn histories(
    c: &Connection,
    creator: &str,
    schedule_id: Option<&str>,
    recent: u32,
) -> Result<HashMap<String, History>> {
    let mut out: HashMap<String, History> = HashMap::new();
    let scope = match schedule_id {
        Some(_) => {
            "r.schedule_id = ?2 AND EXISTS (SELECT 1 FROM schedules s \
                    WHERE s.schedule_id = r.schedule_id AND s.creator = ?1)"
        }
        None => {
            "r.schedule_id IN (SELECT schedule_id FROM schedules WHERE creator = ?1) \
                 AND ?2 IS NULL"
        }
    };
    let mut stmt = c.prepare_cached(&format!(
        "SELECT schedule_id, outcome, run_id, scheduled_for FROM (
             SELECT r.schedule_id, r.outcome, r.run_id, r.scheduled_for,
                    ROW_NUMBER() OVER (PARTITION BY r.schedule_id
                                       ORDER BY r.settled_at DESC, r.run_id DESC) AS n
             FROM runs r WHERE {scope} AND r.settled_at IS NOT NULL)
         WHERE n <= ?3 ORDER BY schedule_id, n"
    ))?;
    let rows = stmt.query_map(params![creator, schedule_id, recent], |r| {
        let run_id = r.get::<_, String>(2)?;
        let read = (|| -> rusqlite::Result<_> {
            Ok((
                r.get::<_, String>(0)?,
                stored::get::<RunOutcome>(r, 1)?,
                run_id.clone(),
                r.get::<_, String>(3)?,
            ))
        })();
        Ok((run_id, read))
    })?;
    for (sid, outcome, run_id, slot) in super::skip_unreadable("run", rows)? {
        out.entry(sid)
            .or_default()
            .recent
            .push((outcome, run_id, slot));
    }
    let mut stmt = c.prepare_cached(&format!(
        "SELECT r.schedule_id, r.outcome, COUNT(*) FROM runs r
         WHERE {scope} AND r.outcome IS NOT NULL
         GROUP BY r.schedule_id, r.outcome"
    ))?;
    let rows = stmt.query_map(params![creator, schedule_id], |r| {
        let schedule_id = r.get::<_, String>(0)?;
        let read = (|| -> rusqlite::Result<_> {
            Ok((
                schedule_id.clone(),
                stored::get::<RunOutcome>(r, 1)?,
                r.get::<_, i64>(2)?,
            ))
        })();
        // Logged under the schedule: a count has no one Run to name.
        Ok((schedule_id, read))
    })?;
    for (sid, outcome, n) in super::skip_unreadable("run", rows)? {
        let h = out.entry(sid).or_default();
        match outcome {
            RunOutcome::Succeeded => h.succeeded = n as u64,
            RunOutcome::Failed => h.failed = n as u64,
            RunOutcome::Canceled => h.canceled = n as u64,
        }
    }
    Ok(out)
}
