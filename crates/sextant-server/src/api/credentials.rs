//! Tokens Sextant issues: **per-peer tokens** (`sxp_…`, one named remote agent each) and
//! **assistant capability tokens** (`sxa_…`, one assistant runtime, scoped to this workspace:
//! either its workspace token, which reaches the MCP bridge and the schedules API, or a token
//! for one target Agent). Under a workspace token the assistant gets the owner's Agents as
//! peers, a credential per Agent issued on demand (`assistant_peers`). Issued, listed and
//! revoked by the owner from the API (`/api/v1/peer-tokens`, `/api/v1/assistant-tokens`, and
//! `/api/v1/assistant-tokens/{name}/peers`) or the CLI (`sextant peer-token …`, `sextant
//! assistant-token …`); a token is shown once, when it is created.
//!
//! A token is `prefix` + 64 hex digits (256 bits from the OS's random source). Only its SHA-256
//! is stored: with that much entropy a fast hash cannot be inverted or brute-forced, so a salt
//! or a slow KDF (needed for low-entropy passwords) would add cost and nothing else, and the
//! lookup stays one indexed read. Lookups happen on every request, so a revocation (from the
//! API or from the CLI in another process) takes effect on the next call.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};
use sextant_core::Principal;
use sextant_journal::{CredentialRow, Journal, PeerCredentialRow};
use sha2::{Digest, Sha256};

use sextant_core::AgentSpec;

use crate::AppState;
use crate::assistant_peers;
use crate::audit::{Outcome, Record};
use crate::error::{ApiError, ApiResult};
use crate::extract::{ApiJson, Owner};

/// Prefix of per-peer tokens.
pub const PEER_PREFIX: &str = "sxp_";
/// Prefix of assistant capability tokens.
pub const ASSISTANT_PREFIX: &str = "sxa_";

/// A kind of issued credential.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Peer,
    Assistant,
}

impl Kind {
    /// As stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Peer => "peer",
            Kind::Assistant => "assistant",
        }
    }

    fn prefix(self) -> &'static str {
        match self {
            Kind::Peer => PEER_PREFIX,
            Kind::Assistant => ASSISTANT_PREFIX,
        }
    }
}

/// A fresh token: the prefix and 256 random bits in hex.
pub fn new_token(kind: Kind) -> Result<String, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| format!("no secure random source: {e}"))?;
    Ok(format!("{}{}", kind.prefix(), hex::encode(bytes)))
}

/// What is stored for a token.
pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Whether `token` has the shape of a token Sextant issues (so it is looked up, not treated as
/// a JWT).
pub fn is_issued_shape(token: &str) -> bool {
    (token.starts_with(PEER_PREFIX) || token.starts_with(ASSISTANT_PREFIX)) && token.len() <= 128
}

/// Checks a peer or assistant name: 1-64 characters, lowercase letters, digits, `.`, `_`, `-`,
/// starting with a letter or digit (it appears in principal keys and access patterns).
pub fn validate_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "name {name:?}: use 1-64 lowercase letters, digits, '.', '_' or '-', starting with a \
             letter or digit"
        ))
    }
}

/// A newly issued token (the only time it is shown) and its record.
#[derive(Debug, Clone)]
pub struct Issued {
    pub token: String,
    pub credential: CredentialRow,
}

/// Why a token was not issued.
#[derive(Debug, thiserror::Error)]
pub enum IssueError {
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Conflict(String),
    #[error(transparent)]
    Journal(sextant_journal::Error),
}

impl From<IssueError> for ApiError {
    fn from(e: IssueError) -> Self {
        match e {
            IssueError::Invalid(m) => ApiError::Invalid {
                field: "name".into(),
                message: m,
            },
            IssueError::Conflict(m) => ApiError::Conflict(m),
            IssueError::Journal(e) => ApiError::Internal(e.to_string()),
        }
    }
}

/// Issues a token. `workspace` is required for assistant tokens; `agent` makes one a token for
/// that one Agent, else it is the assistant's workspace token (the caller checks the Agent
/// exists).
pub async fn issue(
    journal: &Journal,
    kind: Kind,
    name: &str,
    agent: Option<&str>,
    workspace: Option<&str>,
    owner: &Principal,
) -> Result<Issued, IssueError> {
    validate_name(name).map_err(IssueError::Invalid)?;
    if kind == Kind::Assistant && workspace.is_none() {
        return Err(IssueError::Invalid(
            "an assistant token names its workspace".into(),
        ));
    }
    let token = new_token(kind).map_err(IssueError::Invalid)?;
    let credential = CredentialRow {
        credential_id: sextant_core::ids::new_id(),
        kind: kind.as_str().into(),
        name: name.into(),
        token_hash: token_hash(&token),
        workspace: workspace.map(String::from),
        agent_id: agent.map(String::from),
        owner: owner.key(),
        created_at: sextant_core::ids::format_time(chrono::Utc::now()),
        revoked_at: None,
        parent_id: None,
    };
    match journal.insert_credential(credential.clone()).await {
        Ok(()) => Ok(Issued { token, credential }),
        Err(sextant_journal::Error::Conflict(m)) => Err(IssueError::Conflict(m)),
        Err(e) => Err(IssueError::Journal(e)),
    }
}

/// The JSON of a credential (never its hash).
pub fn credential_json(c: &CredentialRow) -> Value {
    let mut v = json!({
        "id": c.credential_id,
        "kind": c.kind,
        "name": c.name,
        "createdAt": c.created_at,
        "revokedAt": c.revoked_at,
        "active": c.revoked_at.is_none(),
    });
    match c.kind.as_str() {
        "peer" => v["principal"] = json!(Principal::peer(&c.name).key()),
        _ => {
            v["agentId"] = json!(c.agent_id);
            v["scope"] = json!(if c.agent_id.is_some() {
                "agent"
            } else {
                "workspace"
            });
            v["workspace"] = json!(c.workspace);
            if let Some(ws) = &c.workspace {
                v["principal"] = json!(Principal::assistant(ws, &c.name).key());
            }
        }
    }
    v
}

/// Refuses a body field that is not one of `allowed`, naming it.
fn only_fields(obj: &Map<String, Value>, allowed: &[&str]) -> ApiResult<()> {
    if let Some(k) = obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(ApiError::Invalid {
            field: k.clone(),
            message: format!("{k} is not a field here (send {})", allowed.join(", ")),
        });
    }
    Ok(())
}

fn field<'a>(obj: &'a Map<String, Value>, name: &str) -> ApiResult<&'a str> {
    obj.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| ApiError::Invalid {
            field: name.into(),
            message: format!("{name} is required (a string)"),
        })
}

/// The JSON of a per-Agent credential (never its hash).
pub fn peer_credential_json(c: &PeerCredentialRow) -> Value {
    json!({
        "id": c.credential_id,
        "agentId": c.agent_id,
        "createdAt": c.created_at,
        "revokedAt": c.revoked_at,
        "active": c.revoked_at.is_none(),
    })
}

async fn list(app: &AppState, kind: Kind) -> ApiResult<Json<Value>> {
    let journal = app.runtime.journal();
    let rows = journal.credentials(Some(kind.as_str())).await?;
    let key = match kind {
        Kind::Peer => "peerTokens",
        Kind::Assistant => "assistantTokens",
    };
    let mut out = Vec::with_capacity(rows.len());
    for row in &rows {
        let mut v = credential_json(row);
        if kind == Kind::Assistant && row.agent_id.is_none() {
            let peers = journal.peer_credentials(&row.credential_id).await?;
            v["peers"] = json!(peers.iter().map(peer_credential_json).collect::<Vec<_>>());
        }
        out.push(v);
    }
    Ok(Json(json!({ key: out })))
}

fn created(app: &AppState, p: &Principal, issued: Issued) -> Response {
    app.security.audit.record(
        Record::new(Some(p), Outcome::Ok)
            .method(format!("issue {} token", issued.credential.kind))
            .reason(format!("name {}", issued.credential.name)),
    );
    let mut body = credential_json(&issued.credential);
    body["token"] = json!(issued.token);
    body["note"] = json!("Shown once: store it now. Sextant keeps only its SHA-256.");
    (StatusCode::CREATED, Json(body)).into_response()
}

async fn revoke(app: &AppState, p: &Principal, kind: Kind, name: &str) -> ApiResult<Response> {
    let now = app.runtime.clock().now();
    let done = app
        .runtime
        .journal()
        .revoke_credential(kind.as_str(), name, now)
        .await?;
    if !done {
        return Err(ApiError::NotFound(format!(
            "no active {} token {name:?}",
            kind.as_str()
        )));
    }
    app.security.audit.record(
        Record::new(Some(p), Outcome::Ok)
            .method(format!("revoke {} token", kind.as_str()))
            .reason(format!("name {name}")),
    );
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `GET /api/v1/peer-tokens` (owner): every per-peer token, revoked ones too (never the
/// token).
pub async fn list_peers(State(app): State<AppState>, _: Owner) -> ApiResult<Json<Value>> {
    list(&app, Kind::Peer).await
}

/// `POST /api/v1/peer-tokens` (owner), body `{"name"}`: a new token, shown once (201).
pub async fn create_peer(
    State(app): State<AppState>,
    Owner(p): Owner,
    ApiJson(obj): ApiJson<Map<String, Value>>,
) -> ApiResult<Response> {
    only_fields(&obj, &["name"])?;
    let name = field(&obj, "name")?;
    let issued = issue(app.runtime.journal(), Kind::Peer, name, None, None, &p).await?;
    Ok(created(&app, &p, issued))
}

/// `DELETE /api/v1/peer-tokens/{name}` (owner): revokes it (by name or id); the next request
/// with it is refused.
pub async fn revoke_peer(
    State(app): State<AppState>,
    Owner(p): Owner,
    Path(name): Path<String>,
) -> ApiResult<Response> {
    revoke(&app, &p, Kind::Peer, &name).await
}

/// `GET /api/v1/assistant-tokens` (owner).
pub async fn list_assistants(State(app): State<AppState>, _: Owner) -> ApiResult<Json<Value>> {
    list(&app, Kind::Assistant).await
}

/// `POST /api/v1/assistant-tokens` (owner), body `{"name"[, "agent_id"]}`: the assistant's
/// workspace token (without `agent_id`: the MCP bridge, the schedules API, and the owner's
/// Agents as peers on demand), or a token for that one Agent; shown once (201).
pub async fn create_assistant(
    State(app): State<AppState>,
    Owner(p): Owner,
    ApiJson(obj): ApiJson<Map<String, Value>>,
) -> ApiResult<Response> {
    only_fields(&obj, &["name", "agent_id"])?;
    let name = field(&obj, "name")?;
    let agent = match obj.get("agent_id") {
        None | Some(Value::Null) => None,
        Some(_) => Some(field(&obj, "agent_id")?),
    };
    if let Some(agent) = agent
        && app.runtime.agent(agent).is_none()
    {
        return Err(ApiError::Invalid {
            field: "agent_id".into(),
            message: format!("agent_id: no agent {agent:?}"),
        });
    }
    let issued = issue(
        app.runtime.journal(),
        Kind::Assistant,
        name,
        agent,
        Some(&app.security.workspace),
        &p,
    )
    .await?;
    Ok(created(&app, &p, issued))
}

/// The active workspace token of the assistant `name`, for the owner's peer routes.
async fn workspace_token(app: &AppState, name: &str) -> ApiResult<CredentialRow> {
    match app
        .runtime
        .journal()
        .active_credential(Kind::Assistant.as_str(), name)
        .await?
    {
        Some(c) if c.agent_id.is_none() => Ok(c),
        Some(_) => Err(ApiError::Invalid {
            field: "name".into(),
            message: format!(
                "assistant token {name:?} reaches one Agent; peers are issued under an \
                 assistant's workspace token (create one without agent_id)"
            ),
        }),
        None => Err(ApiError::NotFound(format!(
            "no active assistant token {name:?}"
        ))),
    }
}

/// `GET /api/v1/assistant-tokens/{name}/peers` (owner): the Agents the assistant may call as
/// peers, with their URLs and the per-Agent credential that is active (never a token).
pub async fn list_assistant_peers(
    State(app): State<AppState>,
    _: Owner,
    Path(name): Path<String>,
    headers: axum::http::HeaderMap,
) -> ApiResult<Json<Value>> {
    let parent = workspace_token(&app, &name).await?;
    let base = crate::urls::base_url(&app, &headers);
    Ok(Json(peers_json(&app, &parent, &base).await?))
}

/// The peers of `parent` as JSON: reachable Agents and every credential issued under it.
pub async fn peers_json(app: &AppState, parent: &CredentialRow, base: &str) -> ApiResult<Value> {
    let assistant = assistant_peers::principal_of(parent)
        .ok_or_else(|| ApiError::Internal("assistant token without a workspace".into()))?;
    let active = assistant_peers::active_credentials(app.runtime.journal(), parent).await?;
    let agents = assistant_peers::reachable(app, &assistant, &Principal::person());
    let peers: Vec<assistant_peers::Peer> = agents
        .iter()
        .map(|a| {
            let cred = active.iter().find(|c| c.agent_id == a.id);
            assistant_peers::Peer::of(a, base, cred)
        })
        .collect();
    let all = app
        .runtime
        .journal()
        .peer_credentials(&parent.credential_id)
        .await?;
    Ok(json!({
        "assistant": parent.name,
        "workspace": parent.workspace,
        "peers": peers,
        "credentials": all.iter().map(peer_credential_json).collect::<Vec<_>>(),
    }))
}

/// Issues per-Agent credentials under `parent` for `agent_ids` (default: every Agent it may
/// call); the peers with their tokens and the Hermes block.
pub async fn issue_peers(
    app: &AppState,
    parent: &CredentialRow,
    agent_ids: Option<Vec<String>>,
    base: &str,
) -> ApiResult<(Vec<assistant_peers::Peer>, String)> {
    let assistant = assistant_peers::principal_of(parent)
        .ok_or_else(|| ApiError::Internal("assistant token without a workspace".into()))?;
    let reachable = assistant_peers::reachable(app, &assistant, &Principal::person());
    let chosen: Vec<&AgentSpec> = match &agent_ids {
        None => reachable.iter().collect(),
        Some(ids) => {
            let mut out = Vec::new();
            for id in ids {
                match reachable.iter().find(|a| &a.id == id) {
                    Some(a) => out.push(a),
                    None => {
                        return Err(ApiError::Invalid {
                            field: "agent_ids".into(),
                            message: format!(
                                "agent_ids: assistant {} may not call an Agent {id:?} here",
                                parent.name
                            ),
                        });
                    }
                }
            }
            out
        }
    };
    if chosen.is_empty() {
        return Err(ApiError::Invalid {
            field: "agent_ids".into(),
            message: format!(
                "agent_ids: assistant {} may call no Agent here",
                parent.name
            ),
        });
    }
    let peers = assistant_peers::issue(
        app.runtime.journal(),
        parent,
        &chosen,
        base,
        app.runtime.clock().now(),
    )
    .await
    .map_err(ApiError::Internal)?;
    let yaml = assistant_peers::hermes_block(&parent.name, &peers);
    Ok((peers, yaml))
}

/// `POST /api/v1/assistant-tokens/{name}/peers` (owner), body `{"agent_ids"?: [...]}`: a
/// fresh per-Agent credential for each listed Agent (default: every Agent the assistant may
/// call), shown once, with the ready-to-paste Hermes `a2a_agents:` block (201).
pub async fn issue_assistant_peers(
    State(app): State<AppState>,
    Owner(p): Owner,
    Path(name): Path<String>,
    headers: axum::http::HeaderMap,
    ApiJson(obj): ApiJson<Map<String, Value>>,
) -> ApiResult<Response> {
    only_fields(&obj, &["agent_ids"])?;
    let agent_ids = match obj.get("agent_ids") {
        None | Some(Value::Null) => None,
        Some(Value::Array(a)) => Some(
            a.iter()
                .map(|v| v.as_str().map(String::from))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| ApiError::Invalid {
                    field: "agent_ids".into(),
                    message: "agent_ids: a list of Agent ids".into(),
                })?,
        ),
        Some(_) => {
            return Err(ApiError::Invalid {
                field: "agent_ids".into(),
                message: "agent_ids: a list of Agent ids".into(),
            });
        }
    };
    let parent = workspace_token(&app, &name).await?;
    let base = crate::urls::base_url(&app, &headers);
    let (peers, yaml) = issue_peers(&app, &parent, agent_ids, &base).await?;
    app.security.audit.record(
        Record::new(Some(&p), Outcome::Ok)
            .method("issue assistant peer credentials")
            .reason(format!(
                "assistant {name}: {}",
                peers
                    .iter()
                    .map(|p| p.agent_id.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
    );
    Ok((
        StatusCode::CREATED,
        Json(json!({
            "assistant": name,
            "peers": peers,
            "hermesConfig": yaml,
            "note": "Shown once: store the tokens now. Sextant keeps only their SHA-256.",
        })),
    )
        .into_response())
}

/// `DELETE /api/v1/assistant-tokens/{name}/peers/{agent_id}` (owner): revokes the assistant's
/// credential for that Agent; its next request is refused.
pub async fn revoke_assistant_peer(
    State(app): State<AppState>,
    Owner(p): Owner,
    Path((name, agent_id)): Path<(String, String)>,
) -> ApiResult<Response> {
    let parent = workspace_token(&app, &name).await?;
    let now = app.runtime.clock().now();
    if !app
        .runtime
        .journal()
        .revoke_peer_credential(&parent.credential_id, &agent_id, now)
        .await?
    {
        return Err(ApiError::NotFound(format!(
            "assistant {name:?} has no active credential for {agent_id:?}"
        )));
    }
    app.security.audit.record(
        Record::new(Some(&p), Outcome::Ok)
            .agent(agent_id.clone())
            .method("revoke assistant peer credential")
            .reason(format!("assistant {name}")),
    );
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `DELETE /api/v1/assistant-tokens/{name}` (owner).
pub async fn revoke_assistant(
    State(app): State<AppState>,
    Owner(p): Owner,
    Path(name): Path<String>,
) -> ApiResult<Response> {
    revoke(&app, &p, Kind::Assistant, &name).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_long_random_and_hashed() {
        let a = new_token(Kind::Peer).unwrap();
        let b = new_token(Kind::Peer).unwrap();
        assert_ne!(a, b);
        assert!(a.starts_with("sxp_") && a.len() == 4 + 64, "{a}");
        assert!(new_token(Kind::Assistant).unwrap().starts_with("sxa_"));
        assert_eq!(token_hash(&a).len(), 64);
        assert_ne!(token_hash(&a), token_hash(&b));
        assert!(is_issued_shape(&a));
        assert!(!is_issued_shape("eyJhbGciOi.x.y"));
        // The outbound scrubber recognises them.
        assert_eq!(
            sextant_core::redact::scrub_outbound(&format!("use {a} now"), false),
            "use [REDACTED] now"
        );
    }

    #[test]
    fn names_are_checked() {
        for ok in ["alice", "build-bot", "ci.runner_2", "0day"] {
            assert!(validate_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "Alice", "-x", "a b", "a:b", &"x".repeat(65)] {
            assert!(validate_name(bad).is_err(), "{bad}");
        }
    }
}
