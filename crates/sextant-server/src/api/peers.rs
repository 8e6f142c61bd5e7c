//! Outbound peers, `/api/v1/peers` (owner only, like the rest of the console API): the
//! registry, card pinning, and the tools (discover, call, orchestrate, list, history). The
//! same tools are MCP tools on the agents MCP server (`mcp/peer_tools.rs`). The logic lives in
//! `sextant_peers`; these handlers parse, call and shape JSON. See `docs/peers.md`.
//!
//! | route | |
//! |---|---|
//! | `GET /api/v1/peers` | peers with metrics, saved conversations (`a2a_list`) |
//! | `POST /api/v1/peers` | register (checks the card and the peer, pins the card); 422 names every bad field, or says why the peer cannot work |
//! | `GET/PATCH/DELETE /api/v1/peers/{name}` | one peer |
//! | `POST /api/v1/peers/{name}/pin` | re-pin to the current card (`{"hash"}` optional) |
//! | `POST /api/v1/peers/discover` | `{"url"}` → card summary and problems |
//! | `POST /api/v1/peers/call` | `{"agent", "message", "context_id"?, "stream"?}` |
//! | `POST /api/v1/peers/orchestrate` | `{"capability", "message", "mode"}` |
//! | `GET /api/v1/peers/conversations/{context_id}` | `?peer&limit` → one conversation |

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Value, json};
use sextant_peers::{CallRequest, Mode, PeerError, PeerSettings};

use crate::AppState;
use crate::error::{ApiError, ApiResult};
use crate::extract::{ApiJson, Owner};

/// Names that are routes under `/api/v1/peers`, so no peer may take them.
pub const RESERVED_NAMES: &[&str] = &["discover", "call", "orchestrate", "conversations"];

impl From<PeerError> for ApiError {
    fn from(e: PeerError) -> Self {
        match e {
            PeerError::NotFound(m) => ApiError::NotFound(m),
            PeerError::Invalid { field, message } => ApiError::Invalid {
                field: field.to_string(),
                message,
            },
            e @ PeerError::Exists(_) => ApiError::Conflict(e.to_string()),
            PeerError::Disabled { message, .. }
            | PeerError::Paused(message)
            | PeerError::Conflict(message) => ApiError::Conflict(message),
            PeerError::Refused(m) => ApiError::Forbidden(m),
            PeerError::Remote(m) => ApiError::BadGateway(m),
            PeerError::Internal(m) => ApiError::Internal(m),
            PeerError::Unusable {
                code,
                message,
                problems,
            } => ApiError::Unusable {
                code,
                message,
                fields: problems,
            },
        }
    }
}

fn to_json<T: serde::Serialize>(v: &T) -> ApiResult<Json<Value>> {
    serde_json::to_value(v)
        .map(Json)
        .map_err(|e| ApiError::Internal(e.to_string()))
}

/// `GET /api/v1/peers`.
pub async fn list(State(app): State<AppState>, Owner(p): Owner) -> ApiResult<Json<Value>> {
    to_json(&app.peers.list(&p).await?)
}

/// `POST /api/v1/peers`.
pub async fn register(
    State(app): State<AppState>,
    _: Owner,
    ApiJson(settings): ApiJson<PeerSettings>,
) -> ApiResult<Response> {
    // Every bad field at once (a form shows them all), before the card is fetched.
    let mut errors: Vec<(String, String)> = sextant_peers::registration_errors(&settings)
        .into_iter()
        .map(|(field, message)| (field.to_string(), message))
        .collect();
    if let Some(n) = &settings.name
        && RESERVED_NAMES.contains(&n.as_str())
    {
        errors.retain(|(field, _)| field != "name");
        errors.insert(
            0,
            (
                "name".into(),
                format!("name {n:?} is reserved ({})", RESERVED_NAMES.join(", ")),
            ),
        );
    }
    if !errors.is_empty() {
        return Err(ApiError::InvalidFields(errors));
    }
    let view = app.peers.register(settings).await?;
    Ok((StatusCode::CREATED, to_json(&view)?).into_response())
}

/// `GET /api/v1/peers/{name}`.
pub async fn get(
    State(app): State<AppState>,
    _: Owner,
    Path(name): Path<String>,
) -> ApiResult<Json<Value>> {
    to_json(&app.peers.get(&name).await?)
}

/// `PATCH /api/v1/peers/{name}`.
pub async fn update(
    State(app): State<AppState>,
    _: Owner,
    Path(name): Path<String>,
    ApiJson(settings): ApiJson<PeerSettings>,
) -> ApiResult<Json<Value>> {
    to_json(&app.peers.update(&name, settings).await?)
}

/// `DELETE /api/v1/peers/{name}`.
pub async fn delete(
    State(app): State<AppState>,
    _: Owner,
    Path(name): Path<String>,
) -> ApiResult<StatusCode> {
    app.peers.remove(&name).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The body of `POST /api/v1/peers/{name}/pin`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PinBody {
    /// The pin the person reviewed; refused if the card now pins to something else.
    #[serde(default)]
    hash: Option<String>,
}

/// `POST /api/v1/peers/{name}/pin`.
pub async fn pin(
    State(app): State<AppState>,
    _: Owner,
    Path(name): Path<String>,
    ApiJson(b): ApiJson<PinBody>,
) -> ApiResult<Json<Value>> {
    to_json(&app.peers.pin(&name, b.hash.as_deref()).await?)
}

/// The body of `POST /api/v1/peers/discover`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiscoverBody {
    /// A URL, or a registered peer's name.
    url: String,
}

/// `POST /api/v1/peers/discover`.
pub async fn discover(
    State(app): State<AppState>,
    _: Owner,
    ApiJson(b): ApiJson<DiscoverBody>,
) -> ApiResult<Json<Value>> {
    to_json(&app.peers.discover(&b.url).await?)
}

/// `POST /api/v1/peers/call`.
pub async fn call(
    State(app): State<AppState>,
    Owner(p): Owner,
    ApiJson(req): ApiJson<CallRequest>,
) -> ApiResult<Json<Value>> {
    to_json(&app.peers.call(&p, req).await?)
}

/// The body of `POST /api/v1/peers/orchestrate`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OrchestrateBody {
    capability: String,
    message: String,
    /// `all`, `first` or `best` (default `all`).
    #[serde(default)]
    mode: Option<String>,
}

/// Parses an orchestration mode.
pub(crate) fn mode(s: Option<&str>) -> ApiResult<Mode> {
    match s {
        None => Ok(Mode::All),
        Some(m) => Mode::parse(m).ok_or_else(|| ApiError::Invalid {
            field: "mode".into(),
            message: format!("mode {m:?}: use all, first or best"),
        }),
    }
}

/// `POST /api/v1/peers/orchestrate`.
pub async fn orchestrate(
    State(app): State<AppState>,
    Owner(p): Owner,
    ApiJson(b): ApiJson<OrchestrateBody>,
) -> ApiResult<Json<Value>> {
    let mode = mode(b.mode.as_deref())?;
    to_json(
        &app.peers
            .orchestrate(&p, &b.capability, &b.message, mode)
            .await?,
    )
}

#[derive(Debug, Deserialize)]
pub struct HistoryQuery {
    #[serde(default)]
    peer: Option<String>,
    #[serde(default)]
    limit: Option<usize>,
}

/// `GET /api/v1/peers/conversations/{context_id}`.
pub async fn history(
    State(app): State<AppState>,
    Owner(p): Owner,
    Path(context_id): Path<String>,
    Query(q): Query<HistoryQuery>,
) -> ApiResult<Json<Value>> {
    let h = app
        .peers
        .history(&p, &context_id, q.peer.as_deref(), q.limit)
        .await?;
    let mut v = serde_json::to_value(&h).map_err(|e| ApiError::Internal(e.to_string()))?;
    v["session_url"] = json!(h.session_path);
    Ok(Json(v))
}
