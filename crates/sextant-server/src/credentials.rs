//! Tokens Sextant issues: **per-peer tokens** (`sxp_…`, one named remote agent each) and
//! **assistant capability tokens** (`sxa_…`, one assistant runtime, scoped to this workspace and
//! one target Agent). Issued, listed and revoked by the owner from the API
//! (`/api/v1/peer-tokens`, `/api/v1/assistant-tokens`) or the CLI (`sextant peer-token …`,
//! `sextant assistant-token …`); a token is shown once, when it is created.
//!
//! A token is `prefix` + 64 hex digits (256 bits from the OS's random source). Only its SHA-256
//! is stored: with that much entropy a fast hash cannot be inverted or brute-forced, so a salt
//! or a slow KDF (needed for low-entropy passwords) would add cost and nothing else, and the
//! lookup stays one indexed read. Lookups happen on every request, so a revocation (from the
//! API or from the CLI in another process) takes effect on the next call.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Extension, Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use sextant_core::Principal;
use sextant_journal::{CredentialRow, Journal};
use sha2::{Digest, Sha256};

use crate::AppState;
use crate::audit::{Outcome, Record};
use crate::error::{ApiError, ApiResult};

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

/// Issues a token. `agent` and `workspace` are required for assistant tokens (the caller
/// checks the Agent exists).
pub async fn issue(
    journal: &Journal,
    kind: Kind,
    name: &str,
    agent: Option<&str>,
    workspace: Option<&str>,
    owner: &Principal,
) -> Result<Issued, IssueError> {
    validate_name(name).map_err(IssueError::Invalid)?;
    if kind == Kind::Assistant && (agent.is_none() || workspace.is_none()) {
        return Err(IssueError::Invalid(
            "an assistant token names its workspace and its one target Agent".into(),
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
            v["workspace"] = json!(c.workspace);
            if let Some(ws) = &c.workspace {
                v["principal"] = json!(Principal::assistant(ws, &c.name).key());
            }
        }
    }
    v
}

fn owner(p: &Principal) -> ApiResult<()> {
    crate::api::owner_only(p)
}

fn parse_body(body: &[u8], allowed: &[&str]) -> ApiResult<serde_json::Map<String, Value>> {
    let v: Value = serde_json::from_slice(body)
        .map_err(|e| ApiError::BadRequest(format!("invalid JSON body: {e}")))?;
    let Value::Object(obj) = v else {
        return Err(ApiError::BadRequest(
            "the body must be a JSON object".into(),
        ));
    };
    if let Some(k) = obj.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(ApiError::Invalid {
            field: k.clone(),
            message: format!("{k} is not a field here (send {})", allowed.join(", ")),
        });
    }
    Ok(obj)
}

fn field<'a>(obj: &'a serde_json::Map<String, Value>, name: &str) -> ApiResult<&'a str> {
    obj.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| ApiError::Invalid {
            field: name.into(),
            message: format!("{name} is required (a string)"),
        })
}

async fn list(app: &AppState, kind: Kind) -> ApiResult<Json<Value>> {
    let rows = app
        .runtime
        .journal()
        .credentials(Some(kind.as_str()))
        .await?;
    let key = match kind {
        Kind::Peer => "peerTokens",
        Kind::Assistant => "assistantTokens",
    };
    Ok(Json(
        json!({ key: rows.iter().map(credential_json).collect::<Vec<_>>() }),
    ))
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
pub async fn list_peers(
    State(app): State<AppState>,
    Extension(p): Extension<Principal>,
) -> ApiResult<Json<Value>> {
    owner(&p)?;
    list(&app, Kind::Peer).await
}

/// `POST /api/v1/peer-tokens` (owner), body `{"name"}`: a new token, shown once (201).
pub async fn create_peer(
    State(app): State<AppState>,
    Extension(p): Extension<Principal>,
    body: Bytes,
) -> ApiResult<Response> {
    owner(&p)?;
    let obj = parse_body(&body, &["name"])?;
    let name = field(&obj, "name")?;
    let issued = issue(app.runtime.journal(), Kind::Peer, name, None, None, &p).await?;
    Ok(created(&app, &p, issued))
}

/// `DELETE /api/v1/peer-tokens/{name}` (owner): revokes it (by name or id); the next request
/// with it is refused.
pub async fn revoke_peer(
    State(app): State<AppState>,
    Extension(p): Extension<Principal>,
    Path(name): Path<String>,
) -> ApiResult<Response> {
    owner(&p)?;
    revoke(&app, &p, Kind::Peer, &name).await
}

/// `GET /api/v1/assistant-tokens` (owner).
pub async fn list_assistants(
    State(app): State<AppState>,
    Extension(p): Extension<Principal>,
) -> ApiResult<Json<Value>> {
    owner(&p)?;
    list(&app, Kind::Assistant).await
}

/// `POST /api/v1/assistant-tokens` (owner), body `{"name", "agent_id"}`: a capability token
/// for this workspace and that one Agent, shown once (201).
pub async fn create_assistant(
    State(app): State<AppState>,
    Extension(p): Extension<Principal>,
    body: Bytes,
) -> ApiResult<Response> {
    owner(&p)?;
    let obj = parse_body(&body, &["name", "agent_id"])?;
    let name = field(&obj, "name")?;
    let agent = field(&obj, "agent_id")?;
    if app.runtime.agent(agent).is_none() {
        return Err(ApiError::Invalid {
            field: "agent_id".into(),
            message: format!("agent_id: no agent {agent:?}"),
        });
    }
    let issued = issue(
        app.runtime.journal(),
        Kind::Assistant,
        name,
        Some(agent),
        Some(&app.security.workspace),
        &p,
    )
    .await?;
    Ok(created(&app, &p, issued))
}

/// `DELETE /api/v1/assistant-tokens/{name}` (owner).
pub async fn revoke_assistant(
    State(app): State<AppState>,
    Extension(p): Extension<Principal>,
    Path(name): Path<String>,
) -> ApiResult<Response> {
    owner(&p)?;
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
