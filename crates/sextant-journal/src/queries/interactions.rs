//! `interactions`: a cache of raised and answered interactions for the approvals inbox.

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, Row, params};
use sextant_core::Interaction;
use sextant_core::ids::{SessionId, TaskId, format_time};

use crate::error::{Error, Result};
use crate::stored;

/// A stored interaction.
#[derive(Debug, Clone, PartialEq)]
pub struct InteractionRow {
    pub interaction: Interaction,
    pub task_id: TaskId,
    pub session_id: SessionId,
    /// `pending`, `answered`, `expired`, or `closed` (its task ended with the card open).
    pub state: String,
    pub raised_at: DateTime<Utc>,
    pub raised_seq: i64,
}

const COLUMNS: &str = "interaction_id, task_id, session_id, state, raised_at, raised_seq, body";

type Columns = (
    String,
    TaskId,
    SessionId,
    String,
    DateTime<Utc>,
    i64,
    String,
);

fn row(r: &Row<'_>) -> rusqlite::Result<Columns> {
    Ok((
        r.get(0)?,
        stored::get(r, 1)?,
        stored::get(r, 2)?,
        r.get(3)?,
        stored::get(r, 4)?,
        r.get(5)?,
        r.get(6)?,
    ))
}

fn decode(
    (id, task_id, session_id, state, raised_at, raised_seq, body): Columns,
) -> Result<InteractionRow> {
    let interaction: Interaction = serde_json::from_str(&body)
        .map_err(|e| Error::Corrupt(format!("interaction {id}: {e}")))?;
    Ok(InteractionRow {
        interaction,
        task_id,
        session_id,
        state,
        raised_at,
        raised_seq,
    })
}

/// Records a raised interaction.
pub fn insert(c: &Connection, i: &Interaction, session_id: &str, at: &str, seq: i64) -> Result<()> {
    let body = serde_json::to_string(i).map_err(|e| Error::Corrupt(e.to_string()))?;
    c.prepare_cached(
        "INSERT INTO interactions (interaction_id, task_id, session_id, state, raised_at,
                                   raised_seq, expires_at, body)
         VALUES (?1, ?2, ?3, 'pending', ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        i.interaction_id,
        i.task_id,
        session_id,
        at,
        seq,
        i.expires_at.map(format_time),
        body
    ])?;
    Ok(())
}

/// Marks a pending interaction answered; refuses (Conflict) if it is not pending any more, so
/// two answers can never both be recorded.
pub fn resolve(c: &Connection, interaction_id: &str, expired: bool, seq: i64) -> Result<()> {
    let n = c
        .prepare_cached(
            "UPDATE interactions SET state = ?2, answered_seq = ?3
             WHERE interaction_id = ?1 AND state = 'pending'",
        )?
        .execute(params![
            interaction_id,
            if expired { "expired" } else { "answered" },
            seq
        ])?;
    if n == 0 {
        return Err(Error::Conflict(format!(
            "interaction {interaction_id} is not pending"
        )));
    }
    Ok(())
}

/// Closes the cards a task left open when it ends: nobody can answer them any more, so they
/// leave the inbox at once (and an answer that comes later is refused, as for a second one).
pub fn close_for_task(c: &Connection, task_id: &str, seq: i64) -> Result<()> {
    c.prepare_cached(
        "UPDATE interactions SET state = 'closed', answered_seq = ?2
         WHERE task_id = ?1 AND state = 'pending'",
    )?
    .execute(params![task_id, seq])?;
    Ok(())
}

/// Whether an interaction's task has not ended: a journal written before ended tasks closed
/// their cards ([`close_for_task`]) still holds `pending` rows of ended tasks. In a subquery,
/// so `state` is the task's.
macro_rules! of_live_task {
    () => {
        concat!(
            "EXISTS (SELECT 1 FROM tasks WHERE tasks.task_id = interactions.task_id AND ",
            live_task!(),
            ")"
        )
    };
}

/// The Sessions with a card still waiting for an answer (retention keeps them).
pub(crate) const PENDING_SESSIONS: &str = concat!(
    "SELECT session_id FROM interactions WHERE state = 'pending' AND ",
    of_live_task!()
);

/// One interaction.
pub fn get(c: &Connection, interaction_id: &str) -> Result<Option<InteractionRow>> {
    c.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM interactions WHERE interaction_id = ?1"
    ))?
    .query_row([interaction_id], row)
    .optional()?
    .map(decode)
    .transpose()
}

/// Pending interactions of tasks that have not ended, newest first.
pub fn pending(c: &Connection) -> Result<Vec<InteractionRow>> {
    c.prepare_cached(concat!(
        "SELECT interaction_id, task_id, session_id, state, raised_at, raised_seq, body
         FROM interactions WHERE state = 'pending' AND ",
        of_live_task!(),
        " ORDER BY raised_at DESC, raised_seq DESC"
    ))?
    .query_map([], row)?
    .map(|r| decode(r?))
    .collect()
}
