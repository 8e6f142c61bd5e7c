//! `schedules`: personal schedules, each owned by its creator, with the scheduler's cursor
//! (`next_fire_at`: the next slot not handled yet; `due_at`: when the loop handles it, the
//! slot plus its jitter) and the state the scheduler keeps about it (consecutive failures, why
//! it paused the plan).

use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::{Deserialize, Serialize};

use chrono::{DateTime, Utc};
use sextant_core::ids::{AgentId, ScheduleId};
use sextant_core::schedule::{MissedRunPolicy, OverlapPolicy, ScheduleSource};
use sextant_core::{CallerKey, PrincipalKind};

use crate::error::Result;
use crate::stored::{self, Sql};

/// A stored schedule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScheduleRow {
    pub schedule_id: ScheduleId,
    /// `Principal::key()` of the creator: the only principal that sees or manages it.
    pub creator: CallerKey,
    pub creator_kind: PrincipalKind,
    /// The creator as JSON (a `Principal`): every Run executes as it.
    pub creator_principal: String,
    pub name: String,
    pub prompt: String,
    /// The cron expression; `''` for a one-shot plan (`once_at`).
    pub cron: String,
    /// IANA zone name.
    pub timezone: String,
    pub agent_id: AgentId,
    pub enabled: bool,
    /// What it does about slots it could not fire on time.
    pub missed_run_policy: MissedRunPolicy,
    pub missed_run_grace_secs: i64,
    /// Where it was created.
    pub source: ScheduleSource,
    #[serde(with = "crate::stored::time")]
    pub created_at: DateTime<Utc>,
    #[serde(with = "crate::stored::time")]
    pub updated_at: DateTime<Utc>,
    /// The next slot the scheduler has not handled; `None` when disabled.
    #[serde(default, with = "crate::stored::time::opt")]
    pub next_fire_at: Option<DateTime<Utc>>,
    /// What a slot does while a Run of the schedule is still running.
    pub overlap_policy: OverlapPolicy,
    /// Each slot fires up to this many seconds late (a fixed amount per slot).
    pub jitter_secs: i64,
    /// Disable the plan after this many consecutive failed Runs; `None`: never.
    pub pause_after_failures: Option<i64>,
    /// Failed Runs since the last successful one or since the plan was enabled. Written by
    /// [`settle_run`](crate::queries::runs::settle) only.
    pub consecutive_failures: i64,
    /// Why the scheduler disabled the plan (after consecutive failures); cleared on enable.
    pub paused_reason: Option<String>,
    #[serde(default, with = "crate::stored::time::opt")]
    pub paused_at: Option<DateTime<Utc>>,
    /// One-shot plans: the local wall-clock time of their one Run (`YYYY-MM-DDTHH:MM:SS`).
    pub once_at: Option<String>,
    /// The assistant principal (JSON) that made the plan for its owner.
    pub source_principal: Option<String>,
    /// When the loop handles the cursor: `next_fire_at` plus the slot's jitter.
    #[serde(default, with = "crate::stored::time::opt")]
    pub due_at: Option<DateTime<Utc>>,
    /// The assistants (`Principal::key()`) that changed the plan's prompt or Agent after it was
    /// made, each once. Like `source_principal`, they wrote what its Runs ask for.
    #[serde(default)]
    pub editors: Vec<String>,
}

pub(crate) const COLUMNS: &str = "schedule_id, creator, creator_kind, creator_principal, name, prompt, cron, \
                       timezone, agent_id, enabled, missed_run_policy, missed_run_grace_secs, \
                       source, created_at, updated_at, next_fire_at, overlap_policy, jitter_secs, \
                       pause_after_failures, consecutive_failures, paused_reason, paused_at, \
                       once_at, source_principal, due_at, editors";

pub(crate) fn row(r: &Row<'_>) -> rusqlite::Result<ScheduleRow> {
    Ok(ScheduleRow {
        schedule_id: stored::get(r, 0)?,
        creator: stored::get(r, 1)?,
        creator_kind: stored::get(r, 2)?,
        creator_principal: r.get(3)?,
        name: r.get(4)?,
        prompt: r.get(5)?,
        cron: r.get(6)?,
        timezone: r.get(7)?,
        agent_id: stored::get(r, 8)?,
        enabled: r.get(9)?,
        missed_run_policy: stored::get(r, 10)?,
        missed_run_grace_secs: r.get(11)?,
        source: stored::get(r, 12)?,
        created_at: stored::get(r, 13)?,
        updated_at: stored::get(r, 14)?,
        next_fire_at: stored::get_opt(r, 15)?,
        overlap_policy: stored::get(r, 16)?,
        jitter_secs: r.get(17)?,
        pause_after_failures: r.get(18)?,
        consecutive_failures: r.get(19)?,
        paused_reason: r.get(20)?,
        paused_at: stored::get_opt(r, 21)?,
        once_at: r.get(22)?,
        source_principal: r.get(23)?,
        due_at: stored::get_opt(r, 24)?,
        editors: editors(r, 25)?,
    })
}

/// The `editors` column: a JSON array of principal keys.
fn editors(r: &Row<'_>, i: usize) -> rusqlite::Result<Vec<String>> {
    let text: String = r.get(i)?;
    serde_json::from_str(&text).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e))
    })
}

/// One schedule by id, whoever owns it (the scheduler's view).
pub fn get(c: &Connection, schedule_id: &str) -> Result<Option<ScheduleRow>> {
    Ok(c.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM schedules WHERE schedule_id = ?1"
    ))?
    .query_row([schedule_id], row)
    .optional()?)
}

/// One schedule by id, only if `creator` owns it.
pub fn get_owned(c: &Connection, creator: &str, schedule_id: &str) -> Result<Option<ScheduleRow>> {
    Ok(c.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM schedules WHERE schedule_id = ?1 AND creator = ?2"
    ))?
    .query_row(params![schedule_id, creator], row)
    .optional()?)
}

/// A row with its id beside it, for [`super::skip_unreadable`].
fn row_with_id(r: &Row<'_>) -> rusqlite::Result<(String, rusqlite::Result<ScheduleRow>)> {
    Ok((r.get(0)?, row(r)))
}

/// Every schedule of `creator`, newest first; one whose stored values do not read is left out
/// (and logged).
pub fn list_owned(c: &Connection, creator: &str) -> Result<Vec<ScheduleRow>> {
    let mut stmt = c.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM schedules WHERE creator = ?1
         ORDER BY created_at DESC, schedule_id DESC"
    ))?;
    let rows = stmt.query_map([creator], row_with_id)?;
    Ok(super::skip_unreadable("schedule", rows)?)
}

/// Creates a schedule.
pub fn insert(c: &Connection, s: &ScheduleRow) -> Result<()> {
    c.prepare_cached(&format!(
        "INSERT INTO schedules ({COLUMNS})
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17,
                 ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26)"
    ))?
    .execute(params![
        s.schedule_id.as_str(),
        s.creator.as_str(),
        Sql(s.creator_kind),
        s.creator_principal,
        s.name,
        s.prompt,
        s.cron,
        s.timezone,
        s.agent_id.as_str(),
        s.enabled,
        Sql(s.missed_run_policy),
        s.missed_run_grace_secs,
        Sql(s.source),
        Sql(s.created_at),
        Sql(s.updated_at),
        s.next_fire_at.map(Sql),
        Sql(s.overlap_policy),
        s.jitter_secs,
        s.pause_after_failures,
        s.consecutive_failures,
        s.paused_reason,
        s.paused_at.map(Sql),
        s.once_at,
        s.source_principal,
        s.due_at.map(Sql),
        editors_json(&s.editors)?,
    ])?;
    Ok(())
}

/// Replaces the editable fields of a schedule owned by `s.creator`; returns whether it existed.
/// Identity, creator, source and creation time never change; `editors` is written as given. The failure count is reset to 0
/// when `reset_failures` (the plan was enabled again) and otherwise left as the scheduler
/// wrote it.
pub fn update(c: &Connection, s: &ScheduleRow, reset_failures: bool) -> Result<bool> {
    let n = c
        .prepare_cached(
            "UPDATE schedules SET name = ?3, prompt = ?4, cron = ?5, timezone = ?6,
                 agent_id = ?7, enabled = ?8, missed_run_policy = ?9,
                 missed_run_grace_secs = ?10, updated_at = ?11, next_fire_at = ?12,
                 overlap_policy = ?13, jitter_secs = ?14, pause_after_failures = ?15,
                 paused_reason = ?16, paused_at = ?17, once_at = ?18, due_at = ?19,
                 consecutive_failures = CASE WHEN ?20 THEN 0 ELSE consecutive_failures END,
                 editors = ?21
             WHERE schedule_id = ?1 AND creator = ?2",
        )?
        .execute(params![
            s.schedule_id.as_str(),
            s.creator.as_str(),
            s.name,
            s.prompt,
            s.cron,
            s.timezone,
            s.agent_id.as_str(),
            s.enabled,
            Sql(s.missed_run_policy),
            s.missed_run_grace_secs,
            Sql(s.updated_at),
            s.next_fire_at.map(Sql),
            Sql(s.overlap_policy),
            s.jitter_secs,
            s.pause_after_failures,
            s.paused_reason,
            s.paused_at.map(Sql),
            s.once_at,
            s.due_at.map(Sql),
            reset_failures,
            editors_json(&s.editors)?,
        ])?;
    Ok(n == 1)
}

/// Deletes a schedule owned by `creator` (its Runs go with it; their Sessions stay in the
/// journal). Returns whether it existed.
pub fn delete_owned(c: &Connection, creator: &str, schedule_id: &str) -> Result<bool> {
    let n = c
        .prepare_cached("DELETE FROM schedules WHERE schedule_id = ?1 AND creator = ?2")?
        .execute(params![schedule_id, creator])?;
    Ok(n == 1)
}

/// Enabled schedules whose cursor is due at or before `now`, earliest
/// first, at most `limit`. One whose stored values do not read is left out (and logged), so
/// the others still fire; it stays due (nothing moves its cursor) and counts against `limit`,
/// so a batch can come back shorter than `limit` with more due (the scheduler's next tick
/// takes them).
pub fn due(c: &Connection, now: DateTime<Utc>, limit: u32) -> Result<Vec<ScheduleRow>> {
    let mut stmt = c.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM schedules
         WHERE enabled = 1 AND due_at IS NOT NULL AND due_at <= ?1
         ORDER BY due_at, schedule_id LIMIT ?2"
    ))?;
    let rows = stmt.query_map(params![Sql(now), limit], row_with_id)?;
    Ok(super::skip_unreadable("schedule", rows)?)
}

/// When the earliest cursor of any enabled schedule is due.
pub fn next_due(c: &Connection) -> Result<Option<String>> {
    Ok(c.prepare_cached(
        "SELECT MIN(due_at) FROM schedules WHERE enabled = 1 AND due_at IS NOT NULL",
    )?
    .query_row([], |r| r.get(0))?)
}

/// Moves the cursor from `expected` to `next` (handled at `due`) if it is still `expected`
/// and the schedule is still enabled: the compare-and-set that makes a claim exclusive.
/// Returns whether it moved.
pub fn advance(
    c: &Connection,
    schedule_id: &str,
    expected: &str,
    next: Option<&str>,
    due: Option<&str>,
) -> Result<bool> {
    let n = c
        .prepare_cached(
            "UPDATE schedules SET next_fire_at = ?3, due_at = ?4
             WHERE schedule_id = ?1 AND enabled = 1 AND next_fire_at = ?2",
        )?
        .execute(params![schedule_id, expected, next, due])?;
    Ok(n == 1)
}

/// `editors` as its column holds it.
fn editors_json(editors: &[String]) -> Result<String> {
    serde_json::to_string(editors).map_err(|e| crate::Error::Corrupt(format!("editors: {e}")))
}
