//! Sextant's outbound side: the peers it calls over A2A, and the client it calls them with.
//! The registry of remote A2A agents, card pinning, and the tools (discover, call, list,
//! history, orchestrate) that the REST API, the MCP server and the `a2a` engine share. See
//! `docs/peers.md`.
//!
//! - **Registry** ([`Peers::register`], [`Peers::update`], [`Peers::remove`]): name, URL,
//!   timeout, declared capabilities, allowed skills, `allow_private_network`; the bearer token
//!   in the 0600 token file ([`tokens`]), never returned.
//! - **Pinning** ([`Peers::connect`], [`Peers::pin`]): the card is fetched on every use; its
//!   pin (SHA-256 of the RFC 8785 canonical JSON of supportedInterfaces, securitySchemes and
//!   skills) is recorded at registration or first use. A card whose pin changed disables the
//!   peer (old and new hash and what changed are kept) until the person re-pins it. A signed
//!   card's key is pinned with it, and a changed key disables the peer the same way
//!   ([`signed`]).
//! - **Calls** ([`call`]): each exchange is journalled as a task of an outbound Session per
//!   (caller, peer, contextId), with the sent message and the reply as journal events;
//!   answers to a remote task's questions go back through [`answer`].
//! - **Extended cards** ([`extended`]): a peer Sextant holds a token for is matched and shown
//!   by the skills of its extended card, when its public card declares one.
//! - **History and listing** ([`history`]).
//! - **The `a2a` engine** ([`engine`]): an Agent that forwards its turns to one peer.
//! - **The client** ([`client`]): a reqwest-based A2A 1.0 client behind the network guard
//!   ([`client::guard`]; every connection goes through it), with card validation. The wire it
//!   speaks (SSE, trace context, card signatures) is `sextant-a2a`'s.
//!
//! The runtime does not depend on this crate: [`Peers`] is its `sextant_runtime::Outbound`,
//! given to `RuntimeBuilder::outbound` as an `Arc` whose clone the server keeps for its own
//! use. So the runtime, and the scheduler above it, build without an HTTP client.

pub mod answer;
mod background;
pub mod call;
pub mod client;
pub mod engine;
pub mod extended;
pub mod follow;
pub mod history;
pub mod questions;
pub mod registration;
mod runtime;
pub mod signed;
pub mod tokens;

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::client::card::{self, CardSummary};
use crate::client::{A2aClient, Bearer, ClientError, Endpoint, FetchedCard};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;
#[cfg(test)]
use serde_json::json;
use sextant_core::Clock;
use sextant_core::ids::format_time;
use sextant_journal::{Journal, PeerRow};
use ts_rs::TS;
use url::Url;

pub use call::{CallRequest, CallResult, Mode, Orchestration};
pub use history::{Conversation, History, HistoryMessage, Listing, PeerTotals};
pub use signed::PinnedKey;
pub use tokens::TokenStore;

/// Default per-peer timeout.
pub const DEFAULT_TIMEOUT_SECS: u64 = 120;
/// Longest per-peer timeout.
pub const MAX_TIMEOUT_SECS: u64 = 3600;
const MAX_LIST: usize = 50;
const MAX_ITEM: usize = 100;
const MAX_TOKEN: usize = 4096;

/// Why a peer operation failed. The texts are for people (and the models acting for them).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PeerError {
    #[error("{0}")]
    NotFound(String),
    #[error("{message}")]
    Invalid {
        field: &'static str,
        message: String,
    },
    #[error("a peer named {0:?} is already registered")]
    Exists(String),
    /// The peer is disabled (its card changed earlier); `details` says how.
    #[error("{message}")]
    Disabled { message: String, details: Value },
    /// The person paused the peer.
    #[error("{0}")]
    Paused(String),
    /// The network guard refused the target (nothing was sent to it).
    #[error("{0}")]
    Refused(String),
    /// The peer could not be reached or answered badly.
    #[error("{0}")]
    Remote(String),
    #[error("{0}")]
    Conflict(String),
    #[error("{0}")]
    Internal(String),
    /// A peer that cannot work, refused at registration ([`registration`]): `code` says
    /// what kind of trouble (`peer_unreachable`, `peer_a2a_0_3_only`, …), `problems` every
    /// field that is wrong (`url`, `card.skills[0].tags`, …) with its message.
    #[error("{message}")]
    Unusable {
        code: &'static str,
        message: String,
        problems: Vec<(String, String)>,
    },
}

impl From<sextant_journal::Error> for PeerError {
    fn from(e: sextant_journal::Error) -> Self {
        PeerError::Internal(e.to_string())
    }
}

impl PeerError {
    fn invalid(field: &'static str, message: impl Into<String>) -> Self {
        PeerError::Invalid {
            field,
            message: message.into(),
        }
    }

    /// A client error, worded with the peer's name.
    pub fn from_client(peer: &str, e: ClientError) -> Self {
        match e {
            ClientError::Refused(r) => PeerError::Refused(format!("{peer}: {r}")),
            other => PeerError::Remote(format!("{peer}: {other}")),
        }
    }
}

/// Reads `"field": null` as `Some(None)` and an absent field as `None`.
fn double_option<'de, D, T>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

/// A registration (POST) or a change (PATCH; absent fields stay as they are).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeerSettings {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub url: Option<String>,
    /// The bearer token; `null` in a change removes it.
    #[serde(default, deserialize_with = "double_option")]
    pub token: Option<Option<String>>,
    #[serde(default)]
    pub timeout_secs: Option<u64>,
    /// What the peer is good for (orchestrate matches these, and the card's skill ids and
    /// tags). Default at registration: the card's skill ids and tags.
    #[serde(default)]
    pub capabilities: Option<Vec<String>>,
    /// Skill ids orchestrate may route to (empty: all).
    #[serde(default)]
    pub allowed_skills: Option<Vec<String>>,
    #[serde(default)]
    pub allow_private_network: Option<bool>,
    /// Register without fetching the card; it is pinned at first use.
    #[serde(default)]
    pub pin_on_first_use: bool,
    /// Pause the peer (`true`: refused for calls and left out of orchestration, keeping its
    /// pin, token and metrics) or resume it (`false`).
    #[serde(default)]
    pub paused: Option<bool>,
    /// The key set (a JWKS, or one JWK) to check the peer's card signatures with, instead of
    /// the one its origin publishes; `null` in a change removes it.
    #[serde(default, deserialize_with = "double_option")]
    pub card_jwks: Option<Option<Value>>,
}

/// A peer as the API shows it (never the token).
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct PeerView {
    pub name: String,
    pub url: String,
    pub has_token: bool,
    pub timeout_secs: i64,
    pub capabilities: Vec<String>,
    pub allowed_skills: Vec<String>,
    pub allow_private_network: bool,
    /// Whether it may be called: neither paused nor disabled.
    pub enabled: bool,
    /// When the person paused it; `null` while it is not paused.
    pub paused_at: Option<String>,
    /// Why the peer is disabled (old and new hash, what changed); `null` unless its card changed.
    pub disabled: Option<PeerDisabled>,
    /// The pinned card; `null` until it is pinned (`pin_on_first_use`, or a new URL).
    pub pin: Option<PeerPin>,
    /// Whether its card signatures are checked with a key set given at registration
    /// (`card_jwks`) rather than the one its origin publishes.
    pub has_card_jwks: bool,
    pub metrics: PeerMetrics,
    pub created_at: String,
    pub updated_at: String,
}

/// Why a peer is disabled: its card no longer matches its pin, or its signature no longer
/// comes from the pinned key. `Peers::connect` writes it into the journal (`peers.disabled`,
/// as this JSON) and the view reads it back; a field missing from a stored row reads as empty.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, TS)]
#[serde(default)]
#[ts(export)]
pub struct PeerDisabled {
    /// `card_changed`, or for a signed card `signing_key_changed`, `signature_removed`,
    /// `signature_invalid` (the pin hash is then unchanged; `changes` says what happened).
    pub reason: String,
    /// The pin the peer had.
    pub old_hash: String,
    /// What the card pins to now (what a re-pin would pin).
    pub new_hash: String,
    /// What changed, in plain words (`skill added: x (X)`, …; `card::describe_changes`).
    pub changes: Vec<String>,
    /// Where the changed card was read.
    pub card_url: String,
    /// When the change was seen.
    pub seen_at: String,
}

/// A peer's pinned card.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct PeerPin {
    /// SHA-256 (hex) of the card's pinned parts (`card::pin_hash`).
    pub hash: String,
    pub pinned_at: Option<String>,
    /// The pinned card's skill ids, lowercased.
    pub skills: Vec<String>,
    /// The key the pinned card was signed with; `null` for an unsigned card.
    pub key: Option<PinnedKey>,
}

/// A peer's call counters (every exchange: tool calls, orchestrations, `a2a` engine turns; and
/// every call that failed because the peer could not be read, see [`Peers::connect`]).
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct PeerMetrics {
    pub calls: i64,
    /// Transport or protocol errors, and remote tasks that failed or were rejected.
    pub failures: i64,
    /// `null` before the first call.
    pub avg_latency_ms: Option<i64>,
    pub last_latency_ms: Option<i64>,
    pub last_call_at: Option<String>,
    /// The latest failure's reason (kept after later successes).
    pub last_error: Option<String>,
    /// When the peer last refused a call because of its A2A-Hop limit (kept after later
    /// successes): calls this console relays for tasks that came through other agents reach
    /// it with a hop count it does not accept.
    pub hop_limited_at: Option<String>,
}

/// Whether a failed call's error is the peer refusing it because of its A2A-Hop limit: an
/// HTTP 403 whose error names `A2A-Hop` (Sextant's perimeter answers `403 {"error": {"code":
/// "forbidden", "message": "A2A-Hop: 3 refused: …"}}`, reported as "the peer answered HTTP
/// 403: A2A-Hop: 3 refused: …").
pub fn is_hop_refusal(error: &str) -> bool {
    error.contains("HTTP 403") && error.to_ascii_lowercase().contains("a2a-hop")
}

/// Everything needed to call a checked, pinned peer.
#[derive(Debug, Clone)]
pub struct PeerConnection {
    /// The registered name, or the URL for a direct call.
    pub name: String,
    /// `peer:<name>` or `url:<url>`: the outbound Session's agent id.
    pub agent_id: String,
    pub registered: bool,
    pub endpoint: Endpoint,
    /// Whether the card says the peer streams.
    pub streaming: bool,
    /// The card's name.
    pub card_name: String,
}

/// The outbound peers service. Clones share everything.
#[derive(Clone)]
pub struct Peers {
    inner: Arc<Inner>,
}

struct Inner {
    journal: Journal,
    clock: Arc<dyn Clock>,
    client: A2aClient,
    tokens: TokenStore,
    /// The peers' extended cards as last read ([`extended`]).
    extended: extended::Cache,
    /// Where every outbound call is reported (the server's audit log).
    audit: std::sync::OnceLock<AuditHook>,
    /// The calls followed in the background ([`background`]), stopped by [`Peers::stop`].
    followers: tokio_util::task::TaskTracker,
    stopping: tokio_util::sync::CancellationToken,
}

/// One outbound call, as reported to the audit hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboundCall {
    /// The registered peer's name, or the URL of a direct call.
    pub peer: String,
    pub latency_ms: u64,
    /// Why the call failed, when it did.
    pub error: Option<String>,
}

/// Receives every [`OutboundCall`].
pub type AuditHook = Box<dyn Fn(OutboundCall) + Send + Sync>;

impl std::fmt::Debug for Peers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peers")
            .field("client", &self.inner.client)
            .finish_non_exhaustive()
    }
}

fn valid_name(name: &str) -> Result<(), PeerError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(PeerError::invalid(
            "name",
            format!("name {name:?}: use 1-64 lowercase letters, digits, '-' or '_'"),
        ))
    }
}

fn clean_list(field: &'static str, items: Vec<String>) -> Result<Vec<String>, PeerError> {
    if items.len() > MAX_LIST {
        return Err(PeerError::invalid(
            field,
            format!("{field}: at most {MAX_LIST} entries"),
        ));
    }
    let mut out: Vec<String> = Vec::new();
    for i in items {
        let i = i.trim().to_string();
        if i.is_empty() || i.len() > MAX_ITEM || i.chars().any(char::is_control) {
            return Err(PeerError::invalid(
                field,
                format!("{field}: each entry must be 1-{MAX_ITEM} printable characters"),
            ));
        }
        if !out.contains(&i) {
            out.push(i);
        }
    }
    Ok(out)
}

fn check_token(token: &str) -> Result<(), PeerError> {
    if token.is_empty() || token.len() > MAX_TOKEN || !token.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(PeerError::invalid(
            "token",
            format!("token: 1-{MAX_TOKEN} visible ASCII characters, no spaces"),
        ));
    }
    Ok(())
}

/// Parses a peer URL (http or https, with a host).
pub fn parse_url(field: &'static str, s: &str) -> Result<Url, PeerError> {
    let url = Url::parse(s.trim())
        .map_err(|e| PeerError::invalid(field, format!("{field}: {s:?} is not a URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
        return Err(PeerError::invalid(
            field,
            format!("{field}: use an https URL (or plain http to loopback)"),
        ));
    }
    Ok(url)
}

/// A key set given for a peer: a JWKS (or one JWK) with at least one key that has a `kid`.
fn check_jwks(set: Option<Value>) -> Result<Option<Value>, PeerError> {
    let Some(set) = set else {
        return Ok(None);
    };
    let keys = sextant_a2a::signing::jwks_keys(&set);
    if keys.is_empty()
        || keys
            .iter()
            .any(|k| k.get("kid").and_then(Value::as_str).is_none())
    {
        return Err(PeerError::invalid(
            "card_jwks",
            "card_jwks must be a JWKS ({\"keys\": [...]}) or a JWK, each key with a kid",
        ));
    }
    Ok(Some(serde_json::json!({ "keys": keys })))
}

/// Every field of a registration that is not acceptable, each with its message, checked
/// without I/O (no card fetch, no network guard), so a form can show them all at once.
/// `register` checks the same again, one at a time.
pub fn registration_errors(s: &PeerSettings) -> Vec<(&'static str, String)> {
    let mut checks: Vec<Result<(), PeerError>> = vec![
        match &s.name {
            None => Err(PeerError::invalid("name", "name is required")),
            Some(n) => valid_name(n),
        },
        match &s.url {
            None => Err(PeerError::invalid("url", "url is required")),
            Some(u) => parse_url("url", u).map(drop),
        },
        timeout_of(s.timeout_secs).map(drop),
        check_jwks(s.card_jwks.clone().flatten()).map(drop),
    ];
    if let Some(Some(t)) = &s.token {
        checks.push(check_token(t));
    }
    if let Some(c) = &s.capabilities {
        checks.push(clean_list("capabilities", c.clone()).map(drop));
    }
    if let Some(a) = &s.allowed_skills {
        checks.push(clean_list("allowed_skills", a.clone()).map(drop));
    }
    checks
        .into_iter()
        .filter_map(|r| match r {
            Err(PeerError::Invalid { field, message }) => Some((field, message)),
            _ => None,
        })
        .collect()
}

fn timeout_of(secs: Option<u64>) -> Result<u64, PeerError> {
    match secs {
        None => Ok(DEFAULT_TIMEOUT_SECS),
        Some(s @ 1..=MAX_TIMEOUT_SECS) => Ok(s),
        Some(_) => Err(PeerError::invalid(
            "timeout_secs",
            format!("timeout_secs: between 1 and {MAX_TIMEOUT_SECS}"),
        )),
    }
}

impl Peers {
    /// The service over `journal`, calling out with `client`, keeping tokens in `tokens`.
    pub fn new(
        journal: Journal,
        clock: Arc<dyn Clock>,
        client: A2aClient,
        tokens: TokenStore,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                journal,
                clock,
                client,
                tokens,
                extended: extended::Cache::default(),
                audit: std::sync::OnceLock::new(),
                followers: tokio_util::task::TaskTracker::new(),
                stopping: tokio_util::sync::CancellationToken::new(),
            }),
        }
    }

    /// Stops following calls in the background and waits until none runs: after it, this
    /// service writes nothing more (the next start goes on from the journalled notes).
    pub async fn stop(&self) {
        self.inner.stopping.cancel();
        self.inner.followers.close();
        self.inner.followers.wait().await;
    }

    /// Reports every outbound call to `hook` from now on (set once; later calls are ignored).
    pub fn set_audit(&self, hook: AuditHook) {
        if self.inner.audit.set(hook).is_err() {
            tracing::warn!("the outbound audit hook was already set");
        }
    }

    /// The outbound client.
    pub fn client(&self) -> &A2aClient {
        &self.inner.client
    }

    pub(crate) fn journal(&self) -> &Journal {
        &self.inner.journal
    }

    pub(crate) fn now(&self) -> String {
        format_time(self.inner.clock.now())
    }

    pub(crate) fn clock(&self) -> &Arc<dyn Clock> {
        &self.inner.clock
    }

    /// A peer as shown.
    pub fn view(&self, row: &PeerRow) -> PeerView {
        let skills: Vec<String> = row
            .pinned_parts
            .as_ref()
            .map(|p| card::advertised(p).0)
            .unwrap_or_default();
        let avg = (row.calls > 0).then(|| row.latency_ms_total / row.calls);
        PeerView {
            name: row.name.clone(),
            url: row.url.clone(),
            has_token: self.inner.tokens.get(&row.name).is_some(),
            timeout_secs: row.timeout_secs,
            capabilities: row.capabilities.clone(),
            allowed_skills: row.allowed_skills.clone(),
            allow_private_network: row.allow_private_network,
            enabled: row.disabled.is_none() && row.paused_at.is_none(),
            paused_at: row.paused_at.map(format_time),
            // Still disabled if the stored reason cannot be read (no code writes such a row).
            disabled: row
                .disabled
                .as_ref()
                .map(|v| PeerDisabled::deserialize(v).unwrap_or_default()),
            pin: row.pinned_hash.as_ref().map(|h| PeerPin {
                hash: h.clone(),
                pinned_at: row.pinned_at.map(format_time),
                skills,
                key: Self::pinned_key(row),
            }),
            has_card_jwks: row.card_jwks.is_some(),
            metrics: PeerMetrics {
                calls: row.calls,
                failures: row.failures,
                avg_latency_ms: avg,
                last_latency_ms: row.last_latency_ms,
                last_call_at: row.last_call_at.map(format_time),
                last_error: row.last_error.clone(),
                hop_limited_at: row.hop_limited_at.map(format_time),
            },
            created_at: format_time(row.created_at),
            updated_at: format_time(row.updated_at),
        }
    }

    /// One peer's row, or "not found".
    pub async fn row(&self, name: &str) -> Result<PeerRow, PeerError> {
        self.inner
            .journal
            .peer(name)
            .await?
            .ok_or_else(|| PeerError::NotFound(format!("no peer named {name:?} is registered")))
    }

    /// One peer.
    pub async fn get(&self, name: &str) -> Result<PeerView, PeerError> {
        Ok(self.view(&self.row(name).await?))
    }

    /// Every peer, by name.
    pub async fn all(&self) -> Result<Vec<PeerView>, PeerError> {
        Ok(self
            .inner
            .journal
            .peers()
            .await?
            .iter()
            .map(|r| self.view(r))
            .collect())
    }

    /// Fetches a card through the guard.
    pub async fn fetch_card(
        &self,
        url: &Url,
        allow_private: bool,
        timeout: Duration,
        who: &str,
    ) -> Result<FetchedCard, PeerError> {
        self.inner
            .client
            .fetch_card(url, allow_private, timeout)
            .await
            .map_err(|e| PeerError::from_client(who, e))
    }

    /// Registers a peer: validates, fetches and pins its card (unless `pin_on_first_use`),
    /// stores its token.
    pub async fn register(&self, s: PeerSettings) -> Result<PeerView, PeerError> {
        let name = s
            .name
            .clone()
            .ok_or_else(|| PeerError::invalid("name", "name is required"))?;
        valid_name(&name)?;
        let url_s = s
            .url
            .clone()
            .ok_or_else(|| PeerError::invalid("url", "url is required"))?;
        let url = parse_url("url", &url_s)?;
        let allow_private = s.allow_private_network.unwrap_or(false);
        self.inner
            .client
            .check(&url, allow_private)
            .map_err(|e| PeerError::from_client(&name, e))?;
        let timeout = timeout_of(s.timeout_secs)?;
        let token = s.token.clone().flatten();
        if let Some(t) = &token {
            check_token(t)?;
        }
        if self.inner.journal.peer(&name).await?.is_some() {
            return Err(PeerError::Exists(name));
        }
        let card_jwks = check_jwks(s.card_jwks.clone().flatten())?;
        let now = self.inner.clock.now();
        let (pin, parts, key, card_caps) = if s.pin_on_first_use {
            (None, None, None, Vec::new())
        } else {
            let wait = Duration::from_secs(timeout);
            let fetched = self
                .inner
                .client
                .fetch_card(&url, allow_private, wait)
                .await
                .map_err(|e| registration::fetch_failure(&name, &url, e))?;
            if let Some(refusal) = registration::card_refusal(&name, &fetched) {
                return Err(refusal);
            }
            let parts = card::pinned_parts(&fetched.raw);
            let hash = card::hash_parts(&parts).map_err(PeerError::Remote)?;
            let key = self
                .key_to_pin(&name, &fetched, card_jwks.as_ref(), allow_private, wait)
                .await?;
            self.probe(
                &name,
                &url,
                &fetched,
                token.as_deref(),
                allow_private,
                timeout,
            )
            .await?;
            let (ids, tags) = card::advertised(&parts);
            let mut caps = ids;
            caps.extend(tags);
            (Some(hash), Some(parts), key, caps)
        };
        let capabilities = clean_list("capabilities", s.capabilities.clone().unwrap_or(card_caps))?;
        let allowed_skills = clean_list("allowed_skills", s.allowed_skills.unwrap_or_default())?;
        let row = PeerRow {
            capabilities,
            allowed_skills,
            allow_private_network: allow_private,
            pinned_at: pin.as_ref().map(|_| now),
            pinned_hash: pin,
            pinned_parts: parts,
            pinned_key: key.map(|k| k.to_value()),
            card_jwks,
            paused_at: s.paused.unwrap_or(false).then_some(now),
            ..PeerRow::new(name.clone(), url.to_string(), timeout as i64, now)
        };
        if !self.inner.journal.create_peer(row.clone()).await? {
            return Err(PeerError::Exists(name));
        }
        if let Some(t) = token
            && let Err(e) = self.inner.tokens.set(&name, Some(t)).await
        {
            let _ = self.inner.journal.delete_peer(&name).await;
            return Err(PeerError::Internal(e));
        }
        tracing::info!(peer = %name, url = %row.url, "peer registered");
        Ok(self.view(&row))
    }

    /// The registration's one harmless call ([`registration`]): `GetTask` of a task that
    /// does not exist, over the card's JSON-RPC interface, with the token given; only
    /// TaskNotFound passes.
    async fn probe(
        &self,
        name: &str,
        url: &Url,
        fetched: &FetchedCard,
        token: Option<&str>,
        allow_private: bool,
        timeout: u64,
    ) -> Result<(), PeerError> {
        let bearer = token.map(|t| Bearer {
            token: t.to_string(),
            origin: url.origin(),
        });
        let row = PeerRow {
            allow_private_network: allow_private,
            ..PeerRow::new(
                name.to_string(),
                url.to_string(),
                timeout as i64,
                self.inner.clock.now(),
            )
        };
        let conn = self.endpoint_for(name, &format!("peer:{name}"), true, fetched, bearer, &row)?;
        let answer = self
            .inner
            .client
            .probe_get_task(&conn.endpoint, &registration::probe_task_id())
            .await;
        match registration::probe_refusal(name, &conn.endpoint.url, token.is_some(), answer) {
            Some(refusal) => Err(refusal),
            None => Ok(()),
        }
    }

    /// Changes a peer's settings. A new URL drops the pin (the next use pins the new card).
    pub async fn update(&self, name: &str, s: PeerSettings) -> Result<PeerView, PeerError> {
        let mut row = self.row(name).await?;
        if s.name.as_deref().is_some_and(|n| n != name) {
            return Err(PeerError::invalid(
                "name",
                "name cannot be changed; register the peer under the new name",
            ));
        }
        if let Some(u) = &s.url {
            row.url = parse_url("url", u)?.to_string();
        }
        if let Some(p) = s.allow_private_network {
            row.allow_private_network = p;
        }
        let url = parse_url("url", &row.url)?;
        self.inner
            .client
            .check(&url, row.allow_private_network)
            .map_err(|e| PeerError::from_client(name, e))?;
        if s.timeout_secs.is_some() {
            row.timeout_secs = timeout_of(s.timeout_secs)? as i64;
        }
        if let Some(c) = s.capabilities {
            row.capabilities = clean_list("capabilities", c)?;
        }
        if let Some(a) = s.allowed_skills {
            row.allowed_skills = clean_list("allowed_skills", a)?;
        }
        if let Some(Some(t)) = &s.token {
            check_token(t)?;
        }
        if let Some(set) = s.card_jwks.clone() {
            row.card_jwks = check_jwks(set)?;
        }
        row.updated_at = self.inner.clock.now();
        match s.paused {
            // Pausing a paused peer keeps the time it was first paused.
            Some(true) if row.paused_at.is_none() => row.paused_at = Some(row.updated_at),
            Some(false) => row.paused_at = None,
            _ => {}
        }
        if !self.inner.journal.update_peer(row).await? {
            return Err(PeerError::NotFound(format!("no peer named {name:?}")));
        }
        if let Some(t) = s.token {
            self.inner
                .tokens
                .set(name, t)
                .await
                .map_err(PeerError::Internal)?;
        }
        self.get(name).await
    }

    /// Removes a peer and its token (its conversations stay in the journal).
    pub async fn remove(&self, name: &str) -> Result<(), PeerError> {
        if !self.inner.journal.delete_peer(name).await? {
            return Err(PeerError::NotFound(format!(
                "no peer named {name:?} is registered"
            )));
        }
        self.inner
            .tokens
            .set(name, None)
            .await
            .map_err(PeerError::Internal)?;
        Ok(())
    }

    /// Re-pins a peer to its current card and enables it. With `expected_hash`, only if the
    /// card's pin is exactly that (the one the person reviewed).
    pub async fn pin(
        &self,
        name: &str,
        expected_hash: Option<&str>,
    ) -> Result<PeerView, PeerError> {
        let row = self.row(name).await?;
        let url = parse_url("url", &row.url)?;
        let fetched = self
            .fetch_card(
                &url,
                row.allow_private_network,
                Duration::from_secs(row.timeout_secs.max(1) as u64),
                name,
            )
            .await?;
        let parts = card::pinned_parts(&fetched.raw);
        let hash = card::hash_parts(&parts).map_err(PeerError::Remote)?;
        if let Some(want) = expected_hash
            && want != hash
        {
            return Err(PeerError::Conflict(format!(
                "{name}'s card now pins to {hash}, not {want}; review it again before pinning"
            )));
        }
        let key = self
            .key_to_pin(
                name,
                &fetched,
                row.card_jwks.as_ref(),
                row.allow_private_network,
                Duration::from_secs(row.timeout_secs.max(1) as u64),
            )
            .await?
            .map(|k| k.to_value());
        self.inner
            .journal
            .pin_peer(
                name,
                &hash,
                parts,
                key,
                self.inner.clock.now(),
                Some(row.pinned_hash.clone()),
            )
            .await?
            .then_some(())
            .ok_or_else(|| {
                PeerError::Conflict(format!("{name} was re-pinned meanwhile; try again"))
            })?;
        tracing::info!(peer = %name, %hash, "peer card pinned");
        self.get(name).await
    }

    /// Checks a registered peer before use: not paused, enabled, card fetched and matching its
    /// pin (pinning it on first use), a JSON-RPC 1.0 interface. A changed card disables the
    /// peer. A paused peer is refused before anything is fetched from it.
    ///
    /// A peer that cannot be read (unreachable, refused by the guard, no usable interface)
    /// counts as a failed call in its metrics: otherwise a peer nobody can reach would show
    /// no calls and no errors. A pause, a changed card or an unknown name count nothing.
    pub async fn connect(&self, name: &str) -> Result<PeerConnection, PeerError> {
        let started = Instant::now();
        let connected = self.check_and_connect(name).await;
        if let Err(e @ (PeerError::Remote(_) | PeerError::Refused(_))) = &connected {
            self.record_call(name, started.elapsed(), Some(&e.to_string()))
                .await;
        }
        connected
    }

    async fn check_and_connect(&self, name: &str) -> Result<PeerConnection, PeerError> {
        let row = self.row(name).await?;
        if let Some(at) = row.paused_at {
            return Err(PeerError::Paused(paused_message(name, &format_time(at))));
        }
        if let Some(why) = &row.disabled {
            return Err(PeerError::Disabled {
                message: disabled_message(name, why),
                details: why.clone(),
            });
        }
        let url = parse_url("url", &row.url)?;
        let timeout = Duration::from_secs(row.timeout_secs.max(1) as u64);
        let fetched = self
            .fetch_card(&url, row.allow_private_network, timeout, name)
            .await?;
        let parts = card::pinned_parts(&fetched.raw);
        let hash = card::hash_parts(&parts).map_err(PeerError::Remote)?;
        match &row.pinned_hash {
            None => {
                // Pinned at first use (only if nobody pinned it meanwhile), with its key.
                let key = self
                    .key_to_pin(
                        name,
                        &fetched,
                        row.card_jwks.as_ref(),
                        row.allow_private_network,
                        timeout,
                    )
                    .await?
                    .map(|k| k.to_value());
                let pinned = self
                    .inner
                    .journal
                    .pin_peer(
                        name,
                        &hash,
                        parts.clone(),
                        key,
                        self.inner.clock.now(),
                        Some(None),
                    )
                    .await?;
                if !pinned {
                    return Err(PeerError::Conflict(format!(
                        "{name} was pinned by another request meanwhile; try again"
                    )));
                }
                tracing::info!(peer = %name, %hash, "peer card pinned at first use");
            }
            Some(pinned) if *pinned != hash => {
                let old = row.pinned_parts.clone().unwrap_or(Value::Null);
                let why = PeerDisabled {
                    reason: "card_changed".into(),
                    old_hash: pinned.clone(),
                    new_hash: hash.clone(),
                    changes: card::describe_changes(&old, &parts),
                    card_url: fetched.url.as_str().to_string(),
                    seen_at: self.now(),
                };
                let why = serde_json::to_value(why)
                    .map_err(|e| PeerError::Internal(format!("{name}: {e}")))?;
                self.inner
                    .journal
                    .disable_peer(name, why.clone(), self.inner.clock.now())
                    .await?;
                tracing::warn!(peer = %name, old = %pinned, new = %hash, "peer card changed; peer disabled");
                return Err(PeerError::Disabled {
                    message: disabled_message(name, &why),
                    details: why,
                });
            }
            Some(pinned) => {
                self.check_key(name, &row, &fetched, pinned, timeout)
                    .await?
            }
        }
        let bearer = self.inner.tokens.get(name).map(|token| Bearer {
            token,
            origin: url.origin(),
        });
        let conn =
            self.endpoint_for(name, &format!("peer:{name}"), true, &fetched, bearer, &row)?;
        // The public card checked out: its extended card, if it has one (`extended`).
        self.refresh_extended(name, &hash, &fetched, &conn.endpoint)
            .await;
        Ok(conn)
    }

    /// A pinned card's signature: still by the pinned key (else the peer is disabled, as for
    /// a changed card); a card that starts being signed gets its key pinned if it verifies.
    async fn check_key(
        &self,
        name: &str,
        row: &PeerRow,
        fetched: &FetchedCard,
        hash: &str,
        timeout: Duration,
    ) -> Result<(), PeerError> {
        let problem = match Self::pinned_key(row) {
            Some(key) => match signed::check_pinned(&fetched.raw, &key) {
                Ok(()) => return Ok(()),
                Err(p) => (p.reason(), p.describe(&key)),
            },
            None if !sextant_a2a::signing::is_signed(&fetched.raw) => return Ok(()),
            None => match self
                .key_to_pin(
                    name,
                    fetched,
                    row.card_jwks.as_ref(),
                    row.allow_private_network,
                    timeout,
                )
                .await
            {
                Ok(key) => {
                    let key = key.map(|k| k.to_value());
                    let parts = card::pinned_parts(&fetched.raw);
                    self.inner
                        .journal
                        .pin_peer(
                            name,
                            hash,
                            parts,
                            key,
                            self.inner.clock.now(),
                            Some(Some(hash.to_string())),
                        )
                        .await?;
                    tracing::info!(peer = %name, "peer card is now signed; its key is pinned");
                    return Ok(());
                }
                Err(e) => ("signature_invalid", e.to_string()),
            },
        };
        let why = PeerDisabled {
            reason: problem.0.into(),
            old_hash: hash.to_string(),
            new_hash: hash.to_string(),
            changes: vec![problem.1],
            card_url: fetched.url.as_str().to_string(),
            seen_at: self.now(),
        };
        let why =
            serde_json::to_value(why).map_err(|e| PeerError::Internal(format!("{name}: {e}")))?;
        self.inner
            .journal
            .disable_peer(name, why.clone(), self.inner.clock.now())
            .await?;
        tracing::warn!(peer = %name, reason = problem.0, "peer card signature changed; peer disabled");
        Err(PeerError::Disabled {
            message: disabled_message(name, &why),
            details: why,
        })
    }

    /// Checks a direct URL (no registration, no pin, no token, public addresses only).
    pub async fn connect_url(&self, url: &Url) -> Result<PeerConnection, PeerError> {
        let shown = crate::client::guard::redacted(url);
        let fetched = self
            .fetch_card(
                url,
                false,
                Duration::from_secs(DEFAULT_TIMEOUT_SECS),
                &shown,
            )
            .await?;
        let row = PeerRow::new(
            shown.clone(),
            url.to_string(),
            DEFAULT_TIMEOUT_SECS as i64,
            self.inner.clock.now(),
        );
        self.endpoint_for(&shown, &format!("url:{shown}"), false, &fetched, None, &row)
    }

    fn endpoint_for(
        &self,
        name: &str,
        agent_id: &str,
        registered: bool,
        fetched: &FetchedCard,
        bearer: Option<Bearer>,
        row: &PeerRow,
    ) -> Result<PeerConnection, PeerError> {
        let typed = fetched
            .card()
            .map_err(|e| PeerError::Remote(format!("{name}: {e}")))?;
        let iface = card::select_interface(&typed).ok_or_else(|| {
            PeerError::Remote(format!(
                "{name}: the card offers no JSON-RPC interface for A2A 1.0"
            ))
        })?;
        let url = Url::parse(&iface.url).map_err(|e| {
            PeerError::Remote(format!(
                "{name}: the card's JSON-RPC URL {:?} is invalid: {e}",
                iface.url
            ))
        })?;
        Ok(PeerConnection {
            name: name.to_string(),
            agent_id: agent_id.to_string(),
            registered,
            endpoint: Endpoint {
                url,
                tenant: iface.tenant.clone().filter(|t| !t.is_empty()),
                bearer,
                allow_private: row.allow_private_network,
                timeout: Duration::from_secs(row.timeout_secs.max(1) as u64),
                hop: 1,
            },
            streaming: typed.capabilities.streaming == Some(true),
            card_name: typed.name.clone(),
        })
    }

    /// Counts one call to a registered peer (failures to count it are logged only), and
    /// reports every call, registered or not, to the audit hook.
    pub async fn record(&self, conn: &PeerConnection, latency: Duration, error: Option<&str>) {
        if let Some(hook) = self.inner.audit.get() {
            hook(OutboundCall {
                peer: conn.name.clone(),
                latency_ms: u64::try_from(latency.as_millis()).unwrap_or(u64::MAX),
                error: error.map(String::from),
            });
        }
        if conn.registered {
            self.record_call(&conn.name, latency, error).await;
        }
    }

    /// Counts one call to the registered peer `name`; a refusal at the peer's hop limit
    /// ([`is_hop_refusal`]) is also remembered as `hop_limited_at`.
    async fn record_call(&self, name: &str, latency: Duration, error: Option<&str>) {
        let ms = i64::try_from(latency.as_millis()).unwrap_or(i64::MAX);
        let hop_limited = error.is_some_and(is_hop_refusal);
        if hop_limited {
            tracing::warn!(peer = %name, "the peer refused a call at its A2A-Hop limit");
        }
        if let Err(e) = self
            .inner
            .journal
            .record_peer_call(
                name,
                ms,
                error.map(String::from),
                hop_limited,
                self.inner.clock.now(),
            )
            .await
        {
            tracing::warn!(peer = %name, error = %e, "could not record peer metrics");
        }
    }

    /// Fetches and summarises a card: a registered peer's (by name) or any URL's (public
    /// addresses only). Problems are reported in plain words, not as an error.
    pub async fn discover(&self, target: &str) -> Result<CardSummary, PeerError> {
        let target = target.trim();
        if target.is_empty() {
            return Err(PeerError::invalid("url", "url is required"));
        }
        let (url, allow_private, registered) = match self.inner.journal.peer(target).await? {
            Some(row) => (
                parse_url("url", &row.url)?,
                row.allow_private_network,
                Some(row),
            ),
            None => (parse_url("url", target)?, false, None),
        };
        let who = crate::client::guard::redacted(&url);
        let fetched = self
            .fetch_card(
                &url,
                allow_private,
                Duration::from_secs(DEFAULT_TIMEOUT_SECS),
                &who,
            )
            .await?;
        let mut summary = card::summary(&fetched.raw, &fetched.url);
        if summary.signature.signed {
            let pinned = registered.as_ref().and_then(Self::pinned_key);
            let jwks = registered.as_ref().and_then(|r| r.card_jwks.clone());
            let checked = match (pinned, jwks) {
                (Some(key), _) => signed::check_pinned(&fetched.raw, &key)
                    .map(|()| key.thumbprint.clone())
                    .map_err(|p| p.describe(&key)),
                (None, jwks) => self
                    .key_to_pin(
                        &who,
                        &fetched,
                        jwks.as_ref(),
                        allow_private,
                        Duration::from_secs(DEFAULT_TIMEOUT_SECS),
                    )
                    .await
                    .map(|k| k.map(|k| k.thumbprint).unwrap_or_default())
                    .map_err(|e| e.to_string()),
            };
            match checked {
                Ok(t) => {
                    summary.signature.verified = Some(true);
                    summary.signature.thumbprint = Some(t);
                }
                Err(why) => {
                    summary.signature.verified = Some(false);
                    summary.signature.problem = Some(why.clone());
                    summary.problems.push(why);
                    summary.valid = false;
                }
            }
        }
        let registered = match registered {
            Some(r) => Some(r),
            None => self
                .inner
                .journal
                .peers()
                .await?
                .into_iter()
                .find(|p| p.url == url.as_str()),
        };
        if let Some(r) = &registered {
            summary.matches_pin =
                Some(r.pinned_hash.is_some() && r.pinned_hash == summary.pin_hash);
            summary.registered_as = Some(r.name.clone());
            summary.pinned_hash = Some(r.pinned_hash.clone());
            summary.enabled = Some(r.disabled.is_none());
        }
        if summary.capabilities.extended_agent_card {
            let used = self
                .discover_extended(registered.as_ref(), &fetched, &mut summary)
                .await;
            summary.extended_card = Some(used);
        }
        Ok(summary)
    }

    /// `a2a_discover` of a card that declares an extended card: shows that card's skills when
    /// the card is a registered peer's, matches its pin (and its signature checked out), and
    /// Sextant holds a token for it ([`extended`]).
    async fn discover_extended(
        &self,
        registered: Option<&PeerRow>,
        fetched: &FetchedCard,
        summary: &mut CardSummary,
    ) -> card::ExtendedCardUse {
        let public = |why: &str| card::ExtendedCardUse {
            used: false,
            note: Some(format!("{why}; the skills shown are the public card's")),
        };
        let Some(row) = registered else {
            return public(
                "Sextant holds no token for this agent (register it as a peer with one to \
                 read its extended card)",
            );
        };
        let Some(token) = self.inner.tokens.get(&row.name) else {
            return public("Sextant holds no token for this peer");
        };
        let pinned = summary.matches_pin == Some(true) && summary.signature.verified != Some(false);
        let (Some(hash), true) = (row.pinned_hash.as_deref(), pinned) else {
            return public(
                "the card does not match its pin, so its extended card is not read (re-pin \
                 it after checking it)",
            );
        };
        // The token goes only to the registered URL's origin, as for calls.
        let bearer = parse_url("url", &row.url).ok().map(|u| Bearer {
            token,
            origin: u.origin(),
        });
        let agent_id = format!("peer:{}", row.name);
        let conn = match self.endpoint_for(&row.name, &agent_id, true, fetched, bearer, row) {
            Ok(c) => c,
            Err(e) => return public(&e.to_string()),
        };
        match self
            .refresh_extended(&row.name, hash, fetched, &conn.endpoint)
            .await
        {
            Some(extended::Outcome::Skills(skills)) => {
                summary.skills_total = skills.len();
                summary.skills = skills
                    .iter()
                    .take(card::SUMMARY_SKILLS)
                    .map(|s| card::CardSkill {
                        id: s["id"].as_str().unwrap_or("").to_string(),
                        name: s["name"].as_str().unwrap_or("").to_string(),
                        description: s["description"].as_str().unwrap_or("").to_string(),
                        tags: s["tags"].clone(),
                        examples: s["examples"].clone(),
                    })
                    .collect();
                card::ExtendedCardUse {
                    used: true,
                    note: None,
                }
            }
            Some(extended::Outcome::Failed(why)) => public(&why),
            Some(extended::Outcome::NotDeclared) | None => public("no extended card was read"),
        }
    }
}

/// The message for a paused peer.
fn paused_message(name: &str, at: &str) -> String {
    format!(
        "peer {name} is paused (since {at}); its owner resumes it on the console's Peers page \
         or with PATCH /api/v1/peers/{name} {{\"paused\": false}}"
    )
}

/// The message for a disabled peer.
fn disabled_message(name: &str, why: &Value) -> String {
    if let Some(reason @ ("signing_key_changed" | "signature_removed" | "signature_invalid")) =
        why["reason"].as_str()
    {
        let what = why["changes"][0].as_str().unwrap_or(reason);
        return format!(
            "peer {name} is disabled: {what}. Check the card and its key (a2a_discover), then \
             re-pin it: POST /api/v1/peers/{name}/pin"
        );
    }
    let changes: Vec<String> = why["changes"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|c| c.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    format!(
        "peer {name} is disabled: its card changed (pinned {}, now {}){}. Check the card \
         (a2a_discover), then re-pin it: POST /api/v1/peers/{name}/pin",
        why["old_hash"].as_str().unwrap_or("?"),
        why["new_hash"].as_str().unwrap_or("?"),
        if changes.is_empty() {
            String::new()
        } else {
            format!(": {}", changes.join("; "))
        }
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn settings_are_validated_plainly() {
        assert!(valid_name("my-peer_1").is_ok());
        assert!(valid_name("My Peer").is_err());
        assert!(valid_name("").is_err());
        assert!(parse_url("url", "ftp://x").is_err());
        assert!(parse_url("url", "not a url").is_err());
        assert!(parse_url("url", "http://127.0.0.1:9/").is_ok());
        assert_eq!(timeout_of(None).unwrap(), DEFAULT_TIMEOUT_SECS);
        assert!(timeout_of(Some(0)).is_err());
        assert!(timeout_of(Some(MAX_TIMEOUT_SECS + 1)).is_err());
        assert!(check_token("abc.def-123").is_ok());
        assert!(check_token("has space").is_err());
        assert!(check_token("").is_err());
        assert_eq!(
            clean_list("capabilities", vec![" echo ".into(), "echo".into()]).unwrap(),
            ["echo"]
        );
        assert!(clean_list("capabilities", vec!["".into()]).is_err());
        let s: PeerSettings =
            serde_json::from_value(json!({"token": null, "timeout_secs": 5})).unwrap();
        assert_eq!(s.token, Some(None));
        let s: PeerSettings = serde_json::from_value(json!({})).unwrap();
        assert_eq!(s.token, None);
        assert!(serde_json::from_value::<PeerSettings>(json!({"tokn": "x"})).is_err());
    }

    #[test]
    fn disabled_messages_name_both_hashes_and_the_changes() {
        let m = disabled_message(
            "p",
            &json!({"old_hash": "aa", "new_hash": "bb", "changes": ["skill added: x (X)"]}),
        );
        assert!(m.contains("(pinned aa, now bb): skill added: x (X)"), "{m}");
        assert!(m.contains("/api/v1/peers/p/pin"), "{m}");
    }
}
