//! `agents`: the configured Agents, mirrored so Sessions can reference them.

use rusqlite::{Connection, params};
use sextant_core::AgentSpec;

use crate::error::{Error, Result};

/// Inserts or updates one Agent.
pub fn upsert(c: &Connection, a: &AgentSpec, at: &str) -> Result<()> {
    let spec = serde_json::to_string(a).map_err(|e| Error::Corrupt(e.to_string()))?;
    c.prepare_cached(
        "INSERT INTO agents (agent_id, name, description, engine, spec, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)
         ON CONFLICT (agent_id) DO UPDATE SET name = ?2, description = ?3, engine = ?4,
             spec = ?5, updated_at = ?6",
    )?
    .execute(params![
        a.id,
        a.name,
        a.description,
        a.engine.kind(),
        spec,
        at
    ])?;
    Ok(())
}
