//! `runs`: one row per Run of a schedule: the trigger, the prompt and Agent it used (a
//! snapshot), the slot it was for, and, once started, its Session and task. A started Run's
//! status is read from its task (the journal), never copied here.

use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::Serialize;

use crate::error::Result;

/// A stored Run, with its task's cached state when it has one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRow {
    pub run_id: String,
    pub schedule_id: String,
    /// `cron`, `manual` or `replay`.
    pub trigger: String,
    /// The cron slot, or when run-now / replay was asked (stored time format).
    pub scheduled_for: String,
    pub prompt: String,
    pub agent_id: String,
    /// `Principal::key()` the Run executes as.
    pub executed_as: String,
    /// `pending`, `started`, `blocked`, `missed` or `failed` (see `RunRecord`).
    pub record: String,
    pub reason: Option<String>,
    pub session_id: Option<String>,
    pub task_id: Option<String>,
    pub replay_of: Option<String>,
    pub created_at: String,
    pub started_at: Option<String>,
    /// For Runs that never started.
    pub finished_at: Option<String>,
    /// The task's state (wire name) when the Run has started. Read-only: joined from `tasks`.
    pub task_state: Option<String>,
    /// When the task's state last changed. Read-only: joined from `tasks`.
    pub task_state_at: Option<String>,
}

const SELECT: &str = "SELECT r.run_id, r.schedule_id, r.trigger, r.scheduled_for, r.prompt, \
                      r.agent_id, r.executed_as, r.record, r.reason, r.session_id, r.task_id, \
                      r.replay_of, r.created_at, r.started_at, r.finished_at, t.state, t.state_at \
                      FROM runs r LEFT JOIN tasks t ON t.task_id = r.task_id";

fn row(r: &Row<'_>) -> rusqlite::Result<RunRow> {
    Ok(RunRow {
        run_id: r.get(0)?,
        schedule_id: r.get(1)?,
        trigger: r.get(2)?,
        scheduled_for: r.get(3)?,
        prompt: r.get(4)?,
        agent_id: r.get(5)?,
        executed_as: r.get(6)?,
        record: r.get(7)?,
        reason: r.get(8)?,
        session_id: r.get(9)?,
        task_id: r.get(10)?,
        replay_of: r.get(11)?,
        created_at: r.get(12)?,
        started_at: r.get(13)?,
        finished_at: r.get(14)?,
        task_state: r.get(15)?,
        task_state_at: r.get(16)?,
    })
}

/// Inserts a Run. Returns `false`, writing nothing, when it is a cron Run for a slot that
/// already has one (another scheduler claimed it first).
pub fn insert(c: &Connection, r: &RunRow) -> Result<bool> {
    let n = c
        .prepare_cached(
            "INSERT INTO runs (run_id, schedule_id, trigger, scheduled_for, prompt, agent_id,
                 executed_as, record, reason, session_id, task_id, replay_of, created_at,
                 started_at, finished_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)
             ON CONFLICT DO NOTHING",
        )?
        .execute(params![
            r.run_id,
            r.schedule_id,
            r.trigger,
            r.scheduled_for,
            r.prompt,
            r.agent_id,
            r.executed_as,
            r.record,
            r.reason,
            r.session_id,
            r.task_id,
            r.replay_of,
            r.created_at,
            r.started_at,
            r.finished_at
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
/// last Run of the previous page. Also returns the total count.
pub fn list(
    c: &Connection,
    schedule_id: &str,
    cursor: Option<(String, String)>,
    limit: u32,
) -> Result<(Vec<RunRow>, u64)> {
    let (cur_at, cur_id) = cursor.unwrap_or_default();
    let has_cursor = !cur_id.is_empty();
    let rows = c
        .prepare_cached(&format!(
            "{SELECT} WHERE r.schedule_id = ?1
               AND (?2 = 0 OR r.created_at < ?3 OR (r.created_at = ?3 AND r.run_id < ?4))
             ORDER BY r.created_at DESC, r.run_id DESC LIMIT ?5"
        ))?
        .query_map(
            params![schedule_id, has_cursor as i64, cur_at, cur_id, limit],
            row,
        )?
        .collect::<rusqlite::Result<Vec<_>>>()?;
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
