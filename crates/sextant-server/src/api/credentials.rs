//! The owner's token API (`/api/v1/peer-tokens`, `/api/v1/assistant-tokens`, and
//! `/api/v1/assistant-tokens/{name}/peers`): issue, list and revoke the tokens
//! [`sextant_access::tokens`] mints, and an assistant's per-Agent peer credentials
//! ([`sextant_access::assistant_peers`]). A token is shown once, in the answer that created it;
//! the JSON never carries a hash.

use axum::Json;
use axum::extract::{OriginalUri, Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};
use sextant_access::assistant_peers;
use sextant_access::tokens::{self, IssueError, Issued, Kind};
use sextant_core::ids::format_time;
use sextant_core::{AgentSpec, Principal};
use sextant_journal::{CredentialRow, PeerCredentialRow};

use crate::AppState;
use crate::error::{ApiError, ApiResult};
use crate::extract::{ApiJson, Owner};

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

/// The JSON of a credential (never its hash).
pub fn credential_json(c: &CredentialRow) -> Value {
    let mut v = json!({
        "id": c.credential_id,
        "kind": c.kind,
        "name": c.name,
        "createdAt": format_time(c.created_at),
        "revokedAt": c.revoked_at.map(format_time),
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
        "createdAt": format_time(c.created_at),
        "revokedAt": c.revoked_at.map(format_time),
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
    (StatusCode::CREATED, Json(created_json(app, p, issued))).into_response()
}

/// The answer to a new token (audited as issued): the credential and the token, shown once.
fn created_json(app: &AppState, p: &Principal, issued: Issued) -> Value {
    crate::audited::token_issued(app, p, &issued.credential.kind, &issued.credential.name);
    let mut body = credential_json(&issued.credential);
    body["token"] = json!(issued.token);
    body["note"] = json!("Shown once: store it now. Sextant keeps only its SHA-256.");
    body
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
    crate::audited::token_revoked(app, p, kind.as_str(), name);
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `GET /api/v1/peer-tokens` (owner): every per-peer token, revoked ones too (never the
/// token).
pub async fn list_peers(State(app): State<AppState>, _: Owner) -> ApiResult<Json<Value>> {
    list(&app, Kind::Peer).await
}

/// The Agents `principal` may call right now (their access lists and the owner's
/// revocations), by id.
pub fn callable_agents(app: &AppState, principal: &Principal) -> Vec<String> {
    app.runtime
        .agents()
        .iter()
        .filter(|a| {
            app.runtime
                .authorize(principal, &a.id, sextant_core::Rights::Call)
                .is_ok()
        })
        .map(|a| a.id.clone())
        .collect()
}

/// What the answer to a new peer token says about the Agents it may call.
pub fn peer_agents_note(name: &str, agents: &[String]) -> String {
    let reach = if agents.is_empty() {
        "It may call no Agent yet".to_string()
    } else {
        format!("It may call: {}", agents.join(", "))
    };
    format!(
        "{reach}. An Agent is the peer's to call when its access list in agents.toml names \
         peer:{name} (or peer:*); for the built-in echo or shell, an entry with its id and \
         an access list is enough, e.g. [[agents]] id = \"echo\" access = {{ call = \
         [\"person\", \"peer:{name}\"] }}."
    )
}

/// `POST /api/v1/peer-tokens` (owner), body `{"name"}`: a new token, shown once (201), with
/// the Agents it may call now (`agents`) and how to let it call more (`agents_note`).
pub async fn create_peer(
    State(app): State<AppState>,
    Owner(p): Owner,
    ApiJson(obj): ApiJson<Map<String, Value>>,
) -> ApiResult<Response> {
    only_fields(&obj, &["name"])?;
    let name = field(&obj, "name")?;
    let issued = tokens::issue(
        app.runtime.journal(),
        Kind::Peer,
        name,
        None,
        None,
        &p,
        app.runtime.clock().now(),
    )
    .await?;
    let agents = callable_agents(&app, &Principal::peer(&issued.credential.name));
    let note = peer_agents_note(&issued.credential.name, &agents);
    let mut body = created_json(&app, &p, issued);
    body["agents"] = json!(agents);
    body["agents_note"] = json!(note);
    Ok((StatusCode::CREATED, Json(body)).into_response())
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
    let issued = tokens::issue(
        app.runtime.journal(),
        Kind::Assistant,
        name,
        agent,
        Some(&app.security.workspace),
        &p,
        app.runtime.clock().now(),
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

/// The Agents the runtime serves that the assistant `grant` (and its owner) may call now.
pub fn reachable(app: &AppState, assistant: &Principal, owner: &Principal) -> Vec<AgentSpec> {
    app.runtime
        .agents()
        .into_iter()
        .filter(|a| {
            app.runtime.check_access(assistant, &a.id).is_ok()
                && app.runtime.check_access(owner, &a.id).is_ok()
        })
        .map(|a| (*a).clone())
        .collect()
}

/// The peers of `parent` as JSON: reachable Agents and every credential issued under it.
pub async fn peers_json(app: &AppState, parent: &CredentialRow, base: &str) -> ApiResult<Value> {
    let assistant = assistant_peers::principal_of(parent)
        .ok_or_else(|| ApiError::Internal("assistant token without a workspace".into()))?;
    let active = assistant_peers::active_credentials(app.runtime.journal(), parent).await?;
    let agents = reachable(app, &assistant, &Principal::person());
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
/// call), audited as done by `by` (the caller, and the route it came in on: the owner over
/// REST, the assistant itself over MCP); the peers with their tokens and the Hermes block.
pub async fn issue_peers(
    app: &AppState,
    by: (&Principal, &str),
    parent: &CredentialRow,
    agent_ids: Option<Vec<String>>,
    base: &str,
) -> ApiResult<(Vec<assistant_peers::Peer>, String)> {
    let assistant = assistant_peers::principal_of(parent)
        .ok_or_else(|| ApiError::Internal("assistant token without a workspace".into()))?;
    let reachable = reachable(app, &assistant, &Principal::person());
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
    let ids: Vec<&str> = peers.iter().map(|p| p.agent_id.as_str()).collect();
    crate::audited::peers_issued(app, by.1, by.0, &parent.name, &ids);
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
    OriginalUri(uri): OriginalUri,
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
    let (peers, yaml) = issue_peers(&app, (&p, uri.path()), &parent, agent_ids, &base).await?;
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
    crate::audited::peer_credential_revoked(&app, &p, &name, &agent_id);
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

    /// Times go out in the journal's one format (milliseconds, `Z`), as they did when rows
    /// carried them as text: chrono's own serde would write a whole second as `…:00Z`.
    #[test]
    fn credential_times_keep_the_stored_format() {
        let at = sextant_core::ids::parse_time("2026-12-01T10:00:00.000Z").unwrap();
        let c = CredentialRow {
            credential_id: "c1".into(),
            kind: "peer".into(),
            name: "bob".into(),
            token_hash: "h".into(),
            workspace: None,
            agent_id: None,
            owner: Principal::person().caller_key(),
            created_at: at,
            revoked_at: Some(at),
            parent_id: None,
        };
        let v = credential_json(&c);
        assert_eq!(v["createdAt"], "2026-12-01T10:00:00.000Z");
        assert_eq!(v["revokedAt"], "2026-12-01T10:00:00.000Z");
        let p = PeerCredentialRow {
            credential_id: "p1".into(),
            parent_id: "c1".into(),
            agent_id: "shell".into(),
            token_hash: "h".into(),
            created_at: at,
            revoked_at: None,
        };
        let v = peer_credential_json(&p);
        assert_eq!(v["createdAt"], "2026-12-01T10:00:00.000Z");
        assert_eq!(v["revokedAt"], serde_json::Value::Null);
    }
}
