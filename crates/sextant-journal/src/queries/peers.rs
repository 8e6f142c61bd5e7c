//! `peers`: remote A2A agents registered for outbound calls, their pinned card parts and
//! call metrics; plus the outbound-conversation lookups over `sessions` (origin `outbound`).

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::Serialize;

use sextant_core::Origin;

use crate::SessionRow;
use crate::error::{Error, Result};
use crate::queries::sessions;
use crate::stored::{self, Sql};

/// A stored peer (the token is not here: see the migration).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PeerRow {
    pub name: String,
    pub url: String,
    pub timeout_secs: i64,
    pub capabilities: Vec<String>,
    pub allowed_skills: Vec<String>,
    pub allow_private_network: bool,
    pub pinned_hash: Option<String>,
    /// The pinned card parts (JSON), when pinned.
    pub pinned_parts: Option<serde_json::Value>,
    #[serde(with = "crate::stored::time::opt")]
    pub pinned_at: Option<DateTime<Utc>>,
    /// Why the peer is disabled (JSON), when it is.
    pub disabled: Option<serde_json::Value>,
    pub calls: i64,
    pub failures: i64,
    pub latency_ms_total: i64,
    pub last_latency_ms: Option<i64>,
    #[serde(with = "crate::stored::time::opt")]
    pub last_call_at: Option<DateTime<Utc>>,
    pub last_error: Option<String>,
    #[serde(with = "crate::stored::time")]
    pub created_at: DateTime<Utc>,
    #[serde(with = "crate::stored::time")]
    pub updated_at: DateTime<Utc>,
    /// When the person paused the peer; `None` while it is not paused.
    #[serde(with = "crate::stored::time::opt")]
    pub paused_at: Option<DateTime<Utc>>,
    /// The key the pinned card was signed with (JSON), when it was signed.
    pub pinned_key: Option<serde_json::Value>,
    /// The key set (JWKS, JSON) the person gave to check the peer's card signatures.
    pub card_jwks: Option<serde_json::Value>,
    /// When the peer last refused a call because of its A2A-Hop limit.
    #[serde(with = "crate::stored::time::opt")]
    pub hop_limited_at: Option<DateTime<Utc>>,
}

impl PeerRow {
    /// A peer as it starts out at `at`: no capabilities or skill limit, public addresses only,
    /// not pinned, not disabled or paused, no calls counted. Callers set what differs (a
    /// registration its settings; an ad-hoc URL nothing more).
    pub fn new(
        name: impl Into<String>,
        url: impl Into<String>,
        timeout_secs: i64,
        at: DateTime<Utc>,
    ) -> PeerRow {
        PeerRow {
            name: name.into(),
            url: url.into(),
            timeout_secs,
            capabilities: Vec::new(),
            allowed_skills: Vec::new(),
            allow_private_network: false,
            pinned_hash: None,
            pinned_parts: None,
            pinned_at: None,
            disabled: None,
            calls: 0,
            failures: 0,
            latency_ms_total: 0,
            last_latency_ms: None,
            last_call_at: None,
            last_error: None,
            created_at: at,
            updated_at: at,
            paused_at: None,
            pinned_key: None,
            card_jwks: None,
            hop_limited_at: None,
        }
    }
}

const COLUMNS: &str = "name, url, timeout_secs, capabilities, allowed_skills, \
                       allow_private_network, pinned_hash, pinned_parts, pinned_at, disabled, \
                       calls, failures, latency_ms_total, last_latency_ms, last_call_at, \
                       last_error, created_at, updated_at, paused_at, pinned_key, card_jwks, \
                       hop_limited_at";

fn json_list(s: String) -> Vec<String> {
    serde_json::from_str(&s).unwrap_or_default()
}

fn json_value(s: Option<String>) -> Option<serde_json::Value> {
    s.and_then(|s| serde_json::from_str(&s).ok())
}

fn row(r: &Row<'_>) -> rusqlite::Result<PeerRow> {
    Ok(PeerRow {
        name: r.get(0)?,
        url: r.get(1)?,
        timeout_secs: r.get(2)?,
        capabilities: json_list(r.get(3)?),
        allowed_skills: json_list(r.get(4)?),
        allow_private_network: r.get(5)?,
        pinned_hash: r.get(6)?,
        pinned_parts: json_value(r.get(7)?),
        pinned_at: stored::get_opt(r, 8)?,
        disabled: json_value(r.get(9)?),
        calls: r.get(10)?,
        failures: r.get(11)?,
        latency_ms_total: r.get(12)?,
        last_latency_ms: r.get(13)?,
        last_call_at: stored::get_opt(r, 14)?,
        last_error: r.get(15)?,
        created_at: stored::get(r, 16)?,
        updated_at: stored::get(r, 17)?,
        paused_at: stored::get_opt(r, 18)?,
        pinned_key: json_value(r.get(19)?),
        card_jwks: json_value(r.get(20)?),
        hop_limited_at: stored::get_opt(r, 21)?,
    })
}

fn to_json<T: Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(|e| Error::Corrupt(e.to_string()))
}

/// One peer.
pub fn get(c: &Connection, name: &str) -> Result<Option<PeerRow>> {
    Ok(
        c.prepare_cached(&format!("SELECT {COLUMNS} FROM peers WHERE name = ?1"))?
            .query_row([name], row)
            .optional()?,
    )
}

/// Every peer, by name.
pub fn list(c: &Connection) -> Result<Vec<PeerRow>> {
    Ok(
        c.prepare_cached(&format!("SELECT {COLUMNS} FROM peers ORDER BY name"))?
            .query_map([], row)?
            .collect::<rusqlite::Result<Vec<_>>>()?,
    )
}

/// Registers a peer; `false` if the name is taken.
pub fn insert(c: &Connection, p: &PeerRow) -> Result<bool> {
    let n = c
        .prepare_cached(&format!(
            "INSERT INTO peers ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10,
                 ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22)
             ON CONFLICT (name) DO NOTHING"
        ))?
        .execute(params![
            p.name,
            p.url,
            p.timeout_secs,
            to_json(&p.capabilities)?,
            to_json(&p.allowed_skills)?,
            p.allow_private_network,
            p.pinned_hash,
            p.pinned_parts.as_ref().map(to_json).transpose()?,
            p.pinned_at.map(Sql),
            p.disabled.as_ref().map(to_json).transpose()?,
            p.calls,
            p.failures,
            p.latency_ms_total,
            p.last_latency_ms,
            p.last_call_at.map(Sql),
            p.last_error,
            Sql(p.created_at),
            Sql(p.updated_at),
            p.paused_at.map(Sql),
            p.pinned_key.as_ref().map(to_json).transpose()?,
            p.card_jwks.as_ref().map(to_json).transpose()?,
            p.hop_limited_at.map(Sql),
        ])?;
    Ok(n == 1)
}

/// Replaces a peer's settings, its pause and card key set included (not its pin, card state or
/// metrics); whether it existed. A changed URL drops the pin and its key: the next use pins the
/// new peer's card.
pub fn update_settings(c: &Connection, p: &PeerRow) -> Result<bool> {
    let n = c
        .prepare_cached(
            "UPDATE peers SET
                 pinned_hash = CASE WHEN url = ?2 THEN pinned_hash END,
                 pinned_parts = CASE WHEN url = ?2 THEN pinned_parts END,
                 pinned_at = CASE WHEN url = ?2 THEN pinned_at END,
                 pinned_key = CASE WHEN url = ?2 THEN pinned_key END,
                 disabled = CASE WHEN url = ?2 THEN disabled END,
                 url = ?2, timeout_secs = ?3, capabilities = ?4, allowed_skills = ?5,
                 allow_private_network = ?6, updated_at = ?7, paused_at = ?8, card_jwks = ?9
             WHERE name = ?1",
        )?
        .execute(params![
            p.name,
            p.url,
            p.timeout_secs,
            to_json(&p.capabilities)?,
            to_json(&p.allowed_skills)?,
            p.allow_private_network,
            Sql(p.updated_at),
            p.paused_at.map(Sql),
            p.card_jwks.as_ref().map(to_json).transpose()?,
        ])?;
    Ok(n == 1)
}

/// Removes a peer; whether it existed. Its outbound conversations stay in the journal.
pub fn delete(c: &Connection, name: &str) -> Result<bool> {
    Ok(c.prepare_cached("DELETE FROM peers WHERE name = ?1")?
        .execute([name])?
        == 1)
}

/// Pins a card and the key it was signed with (`None`: unsigned), and enables the peer. With
/// `expected_old`, only if the pin is still that (`None`: still unpinned); returns whether it
/// was written.
pub fn pin(
    c: &Connection,
    name: &str,
    hash: &str,
    parts: &serde_json::Value,
    key: Option<&serde_json::Value>,
    at: &str,
    expected_old: Option<Option<&str>>,
) -> Result<bool> {
    let parts = to_json(parts)?;
    let key = key.map(to_json).transpose()?;
    let n = match expected_old {
        None => c
            .prepare_cached(
                "UPDATE peers SET pinned_hash = ?2, pinned_parts = ?3, pinned_at = ?4,
                     pinned_key = ?5, disabled = NULL, updated_at = ?4 WHERE name = ?1",
            )?
            .execute(params![name, hash, parts, at, key])?,
        Some(old) => c
            .prepare_cached(
                "UPDATE peers SET pinned_hash = ?2, pinned_parts = ?3, pinned_at = ?4,
                     pinned_key = ?5, disabled = NULL, updated_at = ?4
                 WHERE name = ?1 AND pinned_hash IS ?6",
            )?
            .execute(params![name, hash, parts, at, key, old])?,
    };
    Ok(n == 1)
}

/// Disables a peer with the reason (JSON); whether it existed.
pub fn disable(c: &Connection, name: &str, why: &serde_json::Value, at: &str) -> Result<bool> {
    let n = c
        .prepare_cached("UPDATE peers SET disabled = ?2, updated_at = ?3 WHERE name = ?1")?
        .execute(params![name, to_json(why)?, at])?;
    Ok(n == 1)
}

/// Counts one call: its latency, the error when it failed, and the time when the failure was
/// the peer's A2A-Hop limit (kept after later calls, as `last_error` is).
pub fn record_call(
    c: &Connection,
    name: &str,
    latency_ms: i64,
    error: Option<&str>,
    hop_limited: bool,
    at: &str,
) -> Result<()> {
    c.prepare_cached(
        "UPDATE peers SET calls = calls + 1,
             failures = failures + (?3 IS NOT NULL),
             latency_ms_total = latency_ms_total + ?2,
             last_latency_ms = ?2, last_call_at = ?4,
             last_error = CASE WHEN ?3 IS NULL THEN last_error ELSE ?3 END,
             hop_limited_at = CASE WHEN ?5 THEN ?4 ELSE hop_limited_at END
         WHERE name = ?1",
    )?
    .execute(params![name, latency_ms, error, at, hop_limited])?;
    Ok(())
}

/// Makes sure an outbound target has an `agents` row (sessions reference it).
pub fn ensure_outbound_agent(
    c: &Connection,
    agent_id: &str,
    name: &str,
    description: &str,
    at: &str,
) -> Result<()> {
    let spec = serde_json::json!({ "kind": "outbound_peer", "target": name }).to_string();
    c.prepare_cached(
        "INSERT INTO agents (agent_id, name, description, engine, spec, created_at, updated_at)
         VALUES (?1, ?2, ?3, 'peer', ?4, ?5, ?5)
         ON CONFLICT (agent_id) DO NOTHING",
    )?
    .execute(params![agent_id, name, description, spec, at])?;
    Ok(())
}

/// A caller's outbound conversations, most recently active first; one whose stored values do
/// not read is left out (and logged).
pub fn outbound_sessions(c: &Connection, caller: &str, limit: u32) -> Result<Vec<SessionRow>> {
    Ok(c.prepare_cached(&format!(
        "SELECT {} FROM sessions
         WHERE origin = 'outbound' AND caller = ?1
         ORDER BY updated_at DESC, session_id DESC LIMIT ?2",
        sessions::COLUMNS
    ))?
    .query_map(params![caller, limit], sessions::row_with_id)
    .and_then(|rows| super::skip_unreadable("session", rows))?)
}

/// A caller's outbound conversations with this contextId (one per peer), most recent first;
/// one whose stored values do not read is left out (and logged).
pub fn outbound_by_context(
    c: &Connection,
    caller: &str,
    context_id: &str,
) -> Result<Vec<SessionRow>> {
    Ok(c.prepare_cached(&format!(
        "SELECT {} FROM sessions
         WHERE origin = 'outbound' AND caller = ?1 AND context_id = ?2
         ORDER BY updated_at DESC, session_id DESC",
        sessions::COLUMNS
    ))?
    .query_map(params![caller, context_id], sessions::row_with_id)
    .and_then(|rows| super::skip_unreadable("session", rows))?)
}

/// The outbound conversation with one target in one context, if any.
pub fn outbound_session(
    c: &Connection,
    caller: &str,
    agent_id: &str,
    context_id: &str,
) -> Result<Option<SessionRow>> {
    sessions::by_context(c, caller, agent_id, context_id)
        .map(|s| s.filter(|s| s.origin == Origin::Outbound))
}
