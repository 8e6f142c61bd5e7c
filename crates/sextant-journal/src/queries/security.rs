//! `credentials`, `agent_denials`, `settings`: issued tokens (hashed), the owner's revocations,
//! and instance settings; plus the counts the perimeter's caps read from `tasks` and `events`.

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::Serialize;

use sextant_core::CallerKey;
use sextant_core::ids::AgentId;

use crate::error::{Error, Result};
use crate::stored::{self, Sql};

/// An issued bearer credential (never the token itself: only its SHA-256).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CredentialRow {
    pub credential_id: String,
    /// `peer` or `assistant`.
    pub kind: String,
    pub name: String,
    #[serde(skip)]
    pub token_hash: String,
    /// Assistant tokens: the workspace they are scoped to.
    pub workspace: Option<String>,
    /// Assistant tokens: the one Agent they may reach (`None`: a workspace token, which
    /// reaches the MCP bridge and the schedules API, and asks for per-Agent credentials).
    pub agent_id: Option<AgentId>,
    /// Principal key of the owner who issued it (and, for assistants, acts through it).
    pub owner: CallerKey,
    #[serde(with = "crate::stored::time")]
    pub created_at: DateTime<Utc>,
    /// For a per-Agent credential, whether it or its assistant's token was revoked.
    #[serde(with = "crate::stored::time::opt")]
    pub revoked_at: Option<DateTime<Utc>>,
    /// A per-Agent credential's assistant token (its `credential_id`); `None` otherwise.
    pub parent_id: Option<String>,
}

/// A per-Agent credential issued under an assistant's workspace token.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PeerCredentialRow {
    pub credential_id: String,
    /// The assistant's workspace token.
    pub parent_id: String,
    pub agent_id: AgentId,
    #[serde(skip)]
    pub token_hash: String,
    #[serde(with = "crate::stored::time")]
    pub created_at: DateTime<Utc>,
    #[serde(with = "crate::stored::time::opt")]
    pub revoked_at: Option<DateTime<Utc>>,
}

const COLUMNS: &str = "credential_id, kind, name, token_hash, workspace, agent_id, owner, \
                       created_at, revoked_at";

fn row(r: &Row<'_>) -> rusqlite::Result<CredentialRow> {
    Ok(CredentialRow {
        credential_id: r.get(0)?,
        kind: r.get(1)?,
        name: r.get(2)?,
        token_hash: r.get(3)?,
        workspace: r.get(4)?,
        agent_id: stored::get_opt(r, 5)?,
        owner: stored::get(r, 6)?,
        created_at: stored::get(r, 7)?,
        revoked_at: stored::get_opt(r, 8)?,
        parent_id: None,
    })
}

fn peer_row(r: &Row<'_>) -> rusqlite::Result<PeerCredentialRow> {
    Ok(PeerCredentialRow {
        credential_id: r.get(0)?,
        parent_id: r.get(1)?,
        agent_id: stored::get(r, 2)?,
        token_hash: r.get(3)?,
        created_at: stored::get(r, 4)?,
        revoked_at: stored::get_opt(r, 5)?,
    })
}

/// Inserts a credential; an active one with the same kind and name is a conflict.
pub fn insert(c: &Connection, cred: &CredentialRow) -> Result<()> {
    let active: Option<String> = c
        .prepare_cached(
            "SELECT credential_id FROM credentials WHERE kind = ?1 AND name = ?2 \
             AND revoked_at IS NULL",
        )?
        .query_row(params![cred.kind, cred.name], |r| r.get(0))
        .optional()?;
    if active.is_some() {
        return Err(Error::Conflict(format!(
            "an active {} token named {:?} exists; revoke it first",
            cred.kind, cred.name
        )));
    }
    c.prepare_cached(&format!(
        "INSERT INTO credentials ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
    ))?
    .execute(params![
        cred.credential_id,
        cred.kind,
        cred.name,
        cred.token_hash,
        cred.workspace,
        cred.agent_id.as_deref(),
        cred.owner.as_str(),
        Sql(cred.created_at),
        cred.revoked_at.map(Sql),
    ])?;
    Ok(())
}

/// The credential whose token hashes to `hash` (revoked ones included: the caller decides).
/// A per-Agent credential reads as its assistant's token narrowed to that Agent: the same
/// name, workspace and owner, revoked if either it or the assistant's token is.
pub fn by_hash(c: &Connection, hash: &str) -> Result<Option<CredentialRow>> {
    let own = c
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM credentials WHERE token_hash = ?1"
        ))?
        .query_row([hash], row)
        .optional()?;
    if own.is_some() {
        return Ok(own);
    }
    Ok(c.prepare_cached(
        "SELECT a.credential_id, p.kind, p.name, a.token_hash, p.workspace, a.agent_id, p.owner,
                a.created_at, COALESCE(a.revoked_at, p.revoked_at), p.credential_id
         FROM assistant_peer_credentials a JOIN credentials p ON p.credential_id = a.parent_id
         WHERE a.token_hash = ?1",
    )?
    .query_row([hash], |r| {
        Ok(CredentialRow {
            credential_id: r.get(0)?,
            kind: r.get(1)?,
            name: r.get(2)?,
            token_hash: r.get(3)?,
            workspace: r.get(4)?,
            agent_id: stored::get_opt(r, 5)?,
            owner: stored::get(r, 6)?,
            created_at: stored::get(r, 7)?,
            revoked_at: stored::get_opt(r, 8)?,
            parent_id: r.get(9)?,
        })
    })
    .optional()?)
}

/// Issues a per-Agent credential under `cred.parent_id`, revoking the one that was active for
/// that Agent (rotation), in one transaction.
pub fn issue_peer(c: &Connection, cred: &PeerCredentialRow) -> Result<()> {
    c.prepare_cached(
        "UPDATE assistant_peer_credentials SET revoked_at = ?3
         WHERE parent_id = ?1 AND agent_id = ?2 AND revoked_at IS NULL",
    )?
    .execute(params![
        cred.parent_id,
        cred.agent_id.as_str(),
        Sql(cred.created_at)
    ])?;
    c.prepare_cached(
        "INSERT INTO assistant_peer_credentials
             (credential_id, parent_id, agent_id, token_hash, created_at, revoked_at)
         VALUES (?1, ?2, ?3, ?4, ?5, NULL)",
    )?
    .execute(params![
        cred.credential_id,
        cred.parent_id,
        cred.agent_id.as_str(),
        cred.token_hash,
        Sql(cred.created_at)
    ])?;
    Ok(())
}

/// The per-Agent credentials issued under `parent_id`, newest first, revoked ones too.
pub fn peers_of(c: &Connection, parent_id: &str) -> Result<Vec<PeerCredentialRow>> {
    let mut stmt = c.prepare_cached(
        "SELECT credential_id, parent_id, agent_id, token_hash, created_at, revoked_at
         FROM assistant_peer_credentials WHERE parent_id = ?1
         ORDER BY created_at DESC, credential_id DESC",
    )?;
    let rows = stmt.query_map([parent_id], peer_row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Revokes the active per-Agent credential of `parent_id` for `agent_id`; whether there was
/// one.
pub fn revoke_peer(c: &Connection, parent_id: &str, agent_id: &str, at: &str) -> Result<bool> {
    let n = c
        .prepare_cached(
            "UPDATE assistant_peer_credentials SET revoked_at = ?3
             WHERE parent_id = ?1 AND agent_id = ?2 AND revoked_at IS NULL",
        )?
        .execute(params![parent_id, agent_id, at])?;
    Ok(n > 0)
}

/// The active credential of `kind` named `name`, if there is one.
pub fn active_by_name(c: &Connection, kind: &str, name: &str) -> Result<Option<CredentialRow>> {
    Ok(c.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM credentials WHERE kind = ?1 AND name = ?2 AND revoked_at IS NULL"
    ))?
    .query_row([kind, name], row)
    .optional()?)
}

/// Credentials of one kind (or all), newest first, revoked ones included.
pub fn list(c: &Connection, kind: Option<&str>) -> Result<Vec<CredentialRow>> {
    let mut stmt = c.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM credentials WHERE (?1 IS NULL OR kind = ?1) \
         ORDER BY created_at DESC, credential_id DESC"
    ))?;
    let rows = stmt.query_map([kind], row)?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Revokes the active credential of `kind` named `name_or_id` (its name or its id); whether
/// one was revoked.
pub fn revoke(c: &Connection, kind: &str, name_or_id: &str, at: &str) -> Result<bool> {
    let n = c
        .prepare_cached(
            "UPDATE credentials SET revoked_at = ?1 WHERE kind = ?2 \
             AND (name = ?3 OR credential_id = ?3) AND revoked_at IS NULL",
        )?
        .execute(params![at, kind, name_or_id])?;
    Ok(n > 0)
}

/// How many credentials are active.
pub fn count_active(c: &Connection) -> Result<u64> {
    Ok(
        c.prepare_cached("SELECT COUNT(*) FROM credentials WHERE revoked_at IS NULL")?
            .query_row([], |r| r.get::<_, i64>(0))? as u64,
    )
}

/// Every deny-list entry, as (agent, principal).
pub fn denials(c: &Connection) -> Result<Vec<(String, String)>> {
    let mut stmt = c.prepare_cached(
        "SELECT agent_id, principal FROM agent_denials ORDER BY agent_id, principal",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Replaces one Agent's deny list.
pub fn set_denials(c: &Connection, agent_id: &str, principals: &[String], at: &str) -> Result<()> {
    c.prepare_cached("DELETE FROM agent_denials WHERE agent_id = ?1")?
        .execute([agent_id])?;
    let mut insert = c.prepare_cached(
        "INSERT OR IGNORE INTO agent_denials (agent_id, principal, at) VALUES (?1, ?2, ?3)",
    )?;
    for p in principals {
        insert.execute(params![agent_id, p, at])?;
    }
    Ok(())
}

/// A setting's stored value, if it is set.
pub fn setting(c: &Connection, key: &str) -> Result<Option<String>> {
    use rusqlite::OptionalExtension;
    Ok(
        c.prepare_cached("SELECT value FROM settings WHERE key = ?1")?
            .query_row([key], |r| r.get(0))
            .optional()?,
    )
}

/// Sets a setting.
pub fn set_setting(c: &Connection, key: &str, value: &str) -> Result<()> {
    c.prepare_cached(
        "INSERT INTO settings (key, value) VALUES (?1, ?2)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value",
    )?
    .execute([key, value])?;
    Ok(())
}

/// A setting, created with `default` if it is missing; the stored value.
pub fn setting_or_insert(c: &Connection, key: &str, default: &str) -> Result<String> {
    c.prepare_cached("INSERT OR IGNORE INTO settings (key, value) VALUES (?1, ?2)")?
        .execute([key, default])?;
    Ok(
        c.prepare_cached("SELECT value FROM settings WHERE key = ?1")?
            .query_row([key], |r| r.get(0))?,
    )
}

/// The statement behind [`active_tasks`]. It repeats the `tasks_live` index's condition, so
/// the planner may use that index.
pub(crate) const ACTIVE_TASKS: &str = concat!(
    "SELECT COUNT(*) FROM tasks WHERE caller = ?1 AND ",
    live_task!(),
    " AND state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING')"
);

/// Tasks of `caller` that are submitted or working (the concurrent-task cap).
pub fn active_tasks(c: &Connection, caller: &str) -> Result<u64> {
    Ok(c.prepare_cached(ACTIVE_TASKS)?
        .query_row([caller], |r| r.get::<_, i64>(0))? as u64)
}

/// Inputs accepted in one Session (the per-context turn cap).
pub fn session_inputs(c: &Connection, session_id: &str) -> Result<u64> {
    Ok(c.prepare_cached(
        "SELECT COUNT(*) FROM events WHERE session_id = ?1 \
         AND kind IN ('task_created', 'input_accepted')",
    )?
    .query_row([session_id], |r| r.get::<_, i64>(0))? as u64)
}
