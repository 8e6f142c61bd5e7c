//! Agent cards: `GET /api/v1/agents/{id}/.well-known/agent-card.json` for every Agent and the
//! default Agent's card at `/.well-known/agent-card.json` (and the legacy `agent.json`).
//!
//! The card is written as plain JSON so its shape is exactly the 1.0 schema (strict
//! validators reject extra keys). It advertises the JSON-RPC URL for 1.0 first and the same URL
//! for 0.3 (the method aliases). Responses carry `Cache-Control`, a weak `ETag` over the card's
//! content and `Last-Modified` (the server start, when the card last changed); a matching
//! `If-None-Match` gets 304.

use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use sextant_core::AgentSpec;

use crate::AppState;
use crate::error::ApiError;
use crate::urls::base_url;

/// The card of one Agent, with URLs under `base`.
pub fn card(agent: &AgentSpec, base: &str) -> Value {
    let url = format!("{base}/api/v1/agents/{}/a2a", agent.id);
    let skills: Vec<Value> = agent
        .skills
        .iter()
        .map(|s| {
            let mut v = json!({
                "id": s.id, "name": s.name, "description": s.description, "tags": s.tags,
            });
            if !s.examples.is_empty() {
                v["examples"] = json!(s.examples);
            }
            v
        })
        .collect();
    let skills = if skills.is_empty() {
        vec![json!({
            "id": "chat",
            "name": agent.name,
            "description": agent.description,
            "tags": ["chat"],
        })]
    } else {
        skills
    };
    json!({
        "name": agent.name,
        "description": agent.description,
        "version": env!("CARGO_PKG_VERSION"),
        "supportedInterfaces": [
            { "url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0" },
            { "url": url, "protocolBinding": "JSONRPC", "protocolVersion": "0.3" },
        ],
        "provider": { "organization": "Sextant", "url": base },
        "capabilities": {
            "streaming": true,
            "pushNotifications": false,
            "extendedAgentCard": false,
        },
        "securitySchemes": {
            "bearer": { "httpAuthSecurityScheme": { "scheme": "Bearer",
                "description": "The console token (`sextant token`). Loopback callers may omit it." } }
        },
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": skills,
    })
}

fn respond(app: &AppState, headers: &HeaderMap, agent: &AgentSpec) -> Response {
    let body = card(agent, &base_url(app, headers));
    let text = body.to_string();
    let etag = format!(
        "W/\"{}\"",
        &sextant_core::ids::sha256_hex(text.as_bytes())[..32]
    );
    let mut resp = if headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"))
    {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        ([(header::CONTENT_TYPE, "application/json")], text).into_response()
    };
    let h = resp.headers_mut();
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=60"),
    );
    if let Ok(v) = HeaderValue::from_str(&etag) {
        h.insert(header::ETAG, v);
    }
    let modified = app.started.format("%a, %d %b %Y %H:%M:%S GMT").to_string();
    if let Ok(v) = HeaderValue::from_str(&modified) {
        h.insert(header::LAST_MODIFIED, v);
    }
    resp
}

/// `GET /.well-known/agent-card.json`: the default Agent's card.
pub async fn default_card(State(app): State<AppState>, headers: HeaderMap) -> Response {
    match app.runtime.agent(&app.config.default_agent) {
        Some(a) => respond(&app, &headers, &a),
        None => ApiError::NotFound("no default agent is configured".into()).into_response(),
    }
}

/// `GET /api/v1/agents/{agent_id}/.well-known/agent-card.json`.
pub async fn agent_card(
    State(app): State<AppState>,
    Path(agent_id): Path<String>,
    headers: HeaderMap,
) -> Response {
    match app.runtime.agent(&agent_id) {
        Some(a) => respond(&app, &headers, &a),
        None => ApiError::NotFound(format!("no agent {agent_id:?}")).into_response(),
    }
}
