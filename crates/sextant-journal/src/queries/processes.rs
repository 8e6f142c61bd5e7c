//! `turn_processes`: the process group of each running turn's command (see the migration
//! `20261202001000_turn_processes.sql`).

use chrono::{DateTime, Utc};
use rusqlite::{Connection, Row, params};

use sextant_core::ids::{SessionId, TaskId};

use crate::error::Result;
use crate::stored::{self, Sql};

/// One running turn's process group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessRow {
    /// Set by the journal on insert.
    pub process_id: i64,
    pub pgid: i32,
    /// The leader's start time, in clock ticks since boot.
    pub leader_start: u64,
    pub boot_id: String,
    pub session_id: SessionId,
    pub task_id: TaskId,
    pub started_at: DateTime<Utc>,
}

fn row(r: &Row<'_>) -> rusqlite::Result<ProcessRow> {
    Ok(ProcessRow {
        process_id: r.get(0)?,
        pgid: r.get(1)?,
        leader_start: u64::try_from(r.get::<_, i64>(2)?).unwrap_or_default(),
        boot_id: r.get(3)?,
        session_id: stored::get(r, 4)?,
        task_id: stored::get(r, 5)?,
        started_at: stored::get(r, 6)?,
    })
}

/// Records a group; its `process_id`.
pub fn insert(c: &Connection, p: &ProcessRow) -> Result<i64> {
    c.prepare_cached(
        "INSERT INTO turn_processes (pgid, leader_start, boot_id, session_id, task_id, started_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        p.pgid,
        i64::try_from(p.leader_start).unwrap_or(i64::MAX),
        p.boot_id,
        p.session_id.as_str(),
        p.task_id.as_str(),
        Sql(p.started_at)
    ])?;
    Ok(c.last_insert_rowid())
}

/// Forgets a group (its process ended, or it was ended at start-up).
pub fn delete(c: &Connection, process_id: i64) -> Result<()> {
    c.prepare_cached("DELETE FROM turn_processes WHERE process_id = ?1")?
        .execute(params![process_id])?;
    Ok(())
}

/// Every recorded group, oldest first.
pub fn list(c: &Connection) -> Result<Vec<ProcessRow>> {
    let mut st = c.prepare_cached(
        "SELECT process_id, pgid, leader_start, boot_id, session_id, task_id, started_at
         FROM turn_processes ORDER BY process_id",
    )?;
    let rows = st
        .query_map([], row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(rows)
}
