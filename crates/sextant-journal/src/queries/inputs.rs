//! `inputs`: every accepted input key per (caller, agent), for idempotent retries.

use rusqlite::{Connection, OptionalExtension, params};

use crate::error::Result;

/// The task and content hash an earlier input with this key went to.
pub fn find(
    c: &Connection,
    caller: &str,
    agent_id: &str,
    input_key: &str,
) -> Result<Option<(String, String)>> {
    Ok(c.prepare_cached(
        "SELECT task_id, content_hash FROM inputs
         WHERE caller = ?1 AND agent_id = ?2 AND input_key = ?3",
    )?
    .query_row(params![caller, agent_id, input_key], |r| {
        Ok((r.get(0)?, r.get(1)?))
    })
    .optional()?)
}

/// Records an accepted input.
pub fn insert(
    c: &Connection,
    caller: &str,
    agent_id: &str,
    input_key: &str,
    task_id: &str,
    hash: &str,
    seq: i64,
) -> Result<()> {
    c.prepare_cached(
        "INSERT INTO inputs (caller, agent_id, input_key, task_id, content_hash, seq)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![caller, agent_id, input_key, task_id, hash, seq])?;
    Ok(())
}

/// The content hash of the input with this key if it is the one at `seq` of `task_id` (the
/// task's first seq: the input that created it).
pub fn hash_at(
    c: &Connection,
    caller: &str,
    agent_id: &str,
    input_key: &str,
    task_id: &str,
    seq: i64,
) -> Result<Option<String>> {
    Ok(c.prepare_cached(
        "SELECT content_hash FROM inputs
         WHERE caller = ?1 AND agent_id = ?2 AND input_key = ?3 AND task_id = ?4 AND seq = ?5",
    )?
    .query_row(params![caller, agent_id, input_key, task_id, seq], |r| {
        r.get(0)
    })
    .optional()?)
}
