//! `push_configs` and `push_outbox`: webhook configs with their delivery health, and the
//! deliveries still owed (see the migration `20261202100000_push.sql`).

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, Row, params};

use sextant_core::CallerKey;
use sextant_core::ids::{SessionId, TaskId};

use crate::error::Result;
use crate::stored::{self, Sql};

/// A stored push-notification config.
#[derive(Debug, Clone, PartialEq)]
pub struct PushConfigRow {
    pub task_id: TaskId,
    pub config_id: String,
    /// The task's caller, who owns the config.
    pub caller: CallerKey,
    pub url: String,
    /// The sealed token and authentication (opaque here).
    pub secrets: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Deliveries queued and not yet answered 2xx.
    pub pending: i64,
    /// Deliveries answered 2xx.
    pub delivered: i64,
    /// Failed attempts at the first pending delivery.
    pub attempts: i64,
    /// When the first pending delivery is due; `None` when nothing is pending.
    pub next_attempt_at: Option<DateTime<Utc>>,
    pub last_attempt_at: Option<DateTime<Utc>>,
    pub last_delivered_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    pub last_error_at: Option<DateTime<Utc>>,
    /// When delivery stopped after too many failures (until the owner re-enables it).
    pub failing_at: Option<DateTime<Utc>>,
}

impl PushConfigRow {
    /// A config as created: nothing delivered or pending.
    pub fn new(
        task_id: impl Into<TaskId>,
        config_id: impl Into<String>,
        caller: CallerKey,
        url: impl Into<String>,
        secrets: impl Into<String>,
        at: DateTime<Utc>,
    ) -> Self {
        Self {
            task_id: task_id.into(),
            config_id: config_id.into(),
            caller,
            url: url.into(),
            secrets: secrets.into(),
            created_at: at,
            updated_at: at,
            pending: 0,
            delivered: 0,
            attempts: 0,
            next_attempt_at: None,
            last_attempt_at: None,
            last_delivered_at: None,
            last_error: None,
            last_error_at: None,
            failing_at: None,
        }
    }
}

/// One delivery owed: the event `(session_id, seq)` of `task_id` for the config `config_id`.
#[derive(Debug, Clone, PartialEq)]
pub struct OutboxRow {
    pub delivery_id: i64,
    pub task_id: TaskId,
    pub config_id: String,
    pub session_id: SessionId,
    pub seq: i64,
    pub created_at: DateTime<Utc>,
}

const COLUMNS: &str = "task_id, config_id, caller, url, secrets, created_at, updated_at, \
                       pending, delivered, attempts, next_attempt_at, last_attempt_at, \
                       last_delivered_at, last_error, last_error_at, failing_at";

fn row(r: &Row<'_>) -> rusqlite::Result<PushConfigRow> {
    Ok(PushConfigRow {
        task_id: stored::get(r, 0)?,
        config_id: r.get(1)?,
        caller: stored::get(r, 2)?,
        url: r.get(3)?,
        secrets: r.get(4)?,
        created_at: stored::get(r, 5)?,
        updated_at: stored::get(r, 6)?,
        pending: r.get(7)?,
        delivered: r.get(8)?,
        attempts: r.get(9)?,
        next_attempt_at: stored::get_opt(r, 10)?,
        last_attempt_at: stored::get_opt(r, 11)?,
        last_delivered_at: stored::get_opt(r, 12)?,
        last_error: r.get(13)?,
        last_error_at: stored::get_opt(r, 14)?,
        failing_at: stored::get_opt(r, 15)?,
    })
}

/// Creates a config, or replaces one with the same (task, id): its URL and secrets change, and
/// a config that had stopped after failures is re-enabled (its queued deliveries are due now).
/// Returns whether it replaced one.
pub fn put(c: &Connection, p: &PushConfigRow) -> Result<bool> {
    let existed = get(c, &p.task_id, &p.config_id)?.is_some();
    c.prepare_cached(
        "INSERT INTO push_configs (task_id, config_id, caller, url, secrets, created_at, \
         updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) \
         ON CONFLICT (task_id, config_id) DO UPDATE SET url = excluded.url, \
         secrets = excluded.secrets, updated_at = excluded.updated_at, attempts = 0, \
         failing_at = NULL, \
         next_attempt_at = CASE WHEN pending > 0 THEN excluded.updated_at ELSE NULL END",
    )?
    .execute(params![
        p.task_id.as_str(),
        p.config_id,
        p.caller.as_str(),
        p.url,
        p.secrets,
        Sql(p.created_at),
        Sql(p.updated_at)
    ])?;
    Ok(existed)
}

/// One config.
pub fn get(c: &Connection, task_id: &str, config_id: &str) -> Result<Option<PushConfigRow>> {
    Ok(c.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM push_configs WHERE task_id = ?1 AND config_id = ?2"
    ))?
    .query_row(params![task_id, config_id], row)
    .optional()?)
}

/// A task's configs, oldest first.
pub fn for_task(c: &Connection, task_id: &str) -> Result<Vec<PushConfigRow>> {
    let mut st = c.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM push_configs WHERE task_id = ?1 ORDER BY created_at, config_id"
    ))?;
    let rows = st.query_map(params![task_id], row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The most recently created configs of every task, newest first (the console).
pub fn recent(c: &Connection, limit: u32) -> Result<Vec<PushConfigRow>> {
    let mut st = c.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM push_configs ORDER BY created_at DESC, config_id DESC LIMIT ?1"
    ))?;
    let rows = st.query_map(params![limit], row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Deletes a config and the deliveries it was still owed; whether it existed.
pub fn delete(c: &Connection, task_id: &str, config_id: &str) -> Result<bool> {
    c.prepare_cached("DELETE FROM push_outbox WHERE task_id = ?1 AND config_id = ?2")?
        .execute(params![task_id, config_id])?;
    let n = c
        .prepare_cached("DELETE FROM push_configs WHERE task_id = ?1 AND config_id = ?2")?
        .execute(params![task_id, config_id])?;
    Ok(n > 0)
}

/// The configs of tasks that have not ended: the ones new events can still be owed to.
pub fn live_index(c: &Connection) -> Result<Vec<(String, String)>> {
    let mut st = c.prepare_cached(concat!(
        "SELECT p.task_id, p.config_id FROM push_configs p JOIN tasks t ",
        "ON t.task_id = p.task_id WHERE ",
        live_task!(),
        " ORDER BY p.task_id, p.created_at, p.config_id"
    ))?;
    let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Queues the delivery of event `(session_id, seq)` to a config (inside the event's own
/// transaction); a config with nothing pending becomes due at `at`.
pub fn enqueue(
    c: &Connection,
    task_id: &str,
    config_id: &str,
    session_id: &str,
    seq: i64,
    at: &str,
) -> Result<()> {
    c.prepare_cached(
        "INSERT INTO push_outbox (task_id, config_id, session_id, seq, created_at) \
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![task_id, config_id, session_id, seq, at])?;
    c.prepare_cached(
        "UPDATE push_configs SET pending = pending + 1, \
         next_attempt_at = COALESCE(next_attempt_at, ?3) WHERE task_id = ?1 AND config_id = ?2",
    )?
    .execute(params![task_id, config_id, at])?;
    Ok(())
}

/// Sets a config's `pending` from its outbox rows (a config created in the same transaction
/// as the deliveries queued for it), due at `at` if any.
pub fn recount(c: &Connection, task_id: &str, config_id: &str, at: &str) -> Result<()> {
    c.prepare_cached(
        "UPDATE push_configs SET pending = (SELECT COUNT(*) FROM push_outbox o \
         WHERE o.task_id = ?1 AND o.config_id = ?2), \
         next_attempt_at = CASE WHEN EXISTS (SELECT 1 FROM push_outbox o \
         WHERE o.task_id = ?1 AND o.config_id = ?2) THEN ?3 ELSE NULL END \
         WHERE task_id = ?1 AND config_id = ?2",
    )?
    .execute(params![task_id, config_id, at])?;
    Ok(())
}

/// Configs with a delivery due at `now` (not stopped), earliest first.
pub fn due(c: &Connection, now: DateTime<Utc>, limit: u32) -> Result<Vec<PushConfigRow>> {
    let mut st = c.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM push_configs WHERE pending > 0 AND failing_at IS NULL \
         AND next_attempt_at <= ?1 ORDER BY next_attempt_at LIMIT ?2"
    ))?;
    let rows = st.query_map(params![Sql(now), limit], row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// When the next delivery is due, if any (stopped configs excluded).
pub fn next_due(c: &Connection) -> Result<Option<DateTime<Utc>>> {
    Ok(c.prepare_cached(
        "SELECT MIN(next_attempt_at) FROM push_configs WHERE pending > 0 \
             AND failing_at IS NULL",
    )?
    .query_row([], |r| stored::get_opt(r, 0))?)
}

/// A config's first pending delivery.
pub fn head(c: &Connection, task_id: &str, config_id: &str) -> Result<Option<OutboxRow>> {
    Ok(c.prepare_cached(
        "SELECT delivery_id, task_id, config_id, session_id, seq, created_at \
             FROM push_outbox WHERE task_id = ?1 AND config_id = ?2 \
             ORDER BY delivery_id LIMIT 1",
    )?
    .query_row(params![task_id, config_id], |r| {
        Ok(OutboxRow {
            delivery_id: r.get(0)?,
            task_id: stored::get(r, 1)?,
            config_id: r.get(2)?,
            session_id: stored::get(r, 3)?,
            seq: r.get(4)?,
            created_at: stored::get(r, 5)?,
        })
    })
    .optional()?)
}

/// Records a delivery answered 2xx: its row goes, the config's next one is due at once.
/// Whether the row was still there (a config deleted meanwhile owes nothing).
pub fn delivered(c: &Connection, d: &OutboxRow, at: &str) -> Result<bool> {
    let n = c
        .prepare_cached("DELETE FROM push_outbox WHERE delivery_id = ?1")?
        .execute(params![d.delivery_id])?;
    if n == 0 {
        return Ok(false);
    }
    c.prepare_cached(
        "UPDATE push_configs SET pending = MAX(pending - 1, 0), delivered = delivered + 1, \
         attempts = 0, last_attempt_at = ?3, last_delivered_at = ?3, \
         next_attempt_at = CASE WHEN pending > 1 THEN ?3 ELSE NULL END \
         WHERE task_id = ?1 AND config_id = ?2",
    )?
    .execute(params![d.task_id.as_str(), d.config_id, at])?;
    Ok(true)
}

/// Records a failed attempt: the error, and either when to try again or that delivery stops
/// (`next` = `None`) until the owner re-enables it.
pub fn failed(
    c: &Connection,
    task_id: &str,
    config_id: &str,
    at: &str,
    error: &str,
    next: Option<&str>,
) -> Result<()> {
    c.prepare_cached(
        "UPDATE push_configs SET attempts = attempts + 1, last_attempt_at = ?3, \
         last_error = ?4, last_error_at = ?3, \
         next_attempt_at = COALESCE(?5, next_attempt_at), \
         failing_at = CASE WHEN ?5 IS NULL THEN ?3 ELSE NULL END \
         WHERE task_id = ?1 AND config_id = ?2",
    )?
    .execute(params![task_id, config_id, at, error, next])?;
    Ok(())
}

/// Re-enables a config that stopped: its queued deliveries are due at `at`, attempts start
/// over. Whether it exists.
pub fn resume(c: &Connection, task_id: &str, config_id: &str, at: &str) -> Result<bool> {
    let n = c
        .prepare_cached(
            "UPDATE push_configs SET failing_at = NULL, attempts = 0, updated_at = ?3, \
             next_attempt_at = CASE WHEN pending > 0 THEN ?3 ELSE NULL END \
             WHERE task_id = ?1 AND config_id = ?2",
        )?
        .execute(params![task_id, config_id, at])?;
    Ok(n > 0)
}
