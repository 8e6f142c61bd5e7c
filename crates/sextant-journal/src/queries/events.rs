//! `events`: the append-only journal.

use rusqlite::{Connection, Row, params};
use sextant_core::ids::{format_time, parse_time};
use sextant_core::{EventBody, JournalEvent};

use crate::error::{Error, Result};

/// Appends one event row (the caller has taken `ev.seq` from the Session).
pub fn insert(c: &Connection, ev: &JournalEvent) -> Result<()> {
    let body = serde_json::to_string(&ev.body).map_err(|e| Error::Corrupt(e.to_string()))?;
    c.prepare_cached(
        "INSERT INTO events (session_id, seq, task_id, at, kind, body)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        ev.session_id,
        ev.seq,
        ev.task_id,
        format_time(ev.at),
        ev.body.kind(),
        body
    ])?;
    Ok(())
}

pub(crate) fn row(r: &Row<'_>) -> rusqlite::Result<(String, i64, Option<String>, String, String)> {
    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
}

pub(crate) fn decode(
    (session_id, seq, task_id, at, body): (String, i64, Option<String>, String, String),
) -> Result<JournalEvent> {
    let body: EventBody = serde_json::from_str(&body)
        .map_err(|e| Error::Corrupt(format!("event {session_id}/{seq}: {e}")))?;
    let at = parse_time(&at)
        .ok_or_else(|| Error::Corrupt(format!("event {session_id}/{seq}: bad time {at}")))?;
    Ok(JournalEvent {
        session_id,
        seq,
        task_id,
        at,
        body,
    })
}

/// The statement behind [`for_task`]: a range of the task's Session, read in the same snapshot
/// as the task row that bounds it.
pub(crate) const FOR_TASK: &str = "SELECT e.session_id, e.seq, e.task_id, e.at, e.body
         FROM tasks t JOIN events e ON e.session_id = t.session_id
         WHERE t.task_id = ?1 AND e.seq BETWEEN max(t.first_seq, ?2 + 1) AND t.last_seq
           AND e.task_id = ?1
         ORDER BY e.seq";

/// A task's events after `after_seq` (none for an unknown task).
pub fn for_task(c: &Connection, task_id: &str, after_seq: i64) -> Result<Vec<JournalEvent>> {
    c.prepare_cached(FOR_TASK)?
        .query_map(params![task_id, after_seq], row)?
        .map(|r| decode(r?))
        .collect()
}

/// A task's events found by scanning its whole Session, trusting no cached column: for
/// [`crate::queries::tasks::rebuild_check`].
pub fn in_session_for_task(
    c: &Connection,
    session_id: &str,
    task_id: &str,
) -> Result<Vec<JournalEvent>> {
    c.prepare_cached(
        "SELECT session_id, seq, task_id, at, body FROM events
         WHERE session_id = ?1 AND task_id = ?2 ORDER BY seq",
    )?
    .query_map(params![session_id, task_id], row)?
    .map(|r| decode(r?))
    .collect()
}

/// A Session's events after `after_seq`, at most `limit`.
pub fn for_session(
    c: &Connection,
    session_id: &str,
    after_seq: i64,
    limit: u32,
) -> Result<Vec<JournalEvent>> {
    c.prepare_cached(
        "SELECT session_id, seq, task_id, at, body FROM events
         WHERE session_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
    )?
    .query_map(params![session_id, after_seq, limit], row)?
    .map(|r| decode(r?))
    .collect()
}
