//! Agent cards: `GET /api/v1/agents/{id}/.well-known/agent-card.json` for every Agent and the
//! default Agent's card at `/.well-known/agent-card.json` (and the legacy `agent.json`).
//!
//! **Public cards are minimal**: name, description, endpoint, auth scheme and one generic skill;
//! `capabilities.extendedAgentCard` is true and the real skills are on the authenticated
//! extended card (`GetExtendedAgentCard`, see `a2a`). An Agent with `public_card = "full"` (the
//! conformance Agent: the TCK reads skills from the public card and calls GetExtendedAgentCard
//! without credentials) shows its real skills publicly and has no extended card.
//!
//! The 1.0 card is written as plain JSON so its shape is exactly the 1.0 schema (strict
//! validators reject extra keys). It advertises the JSON-RPC URL for 1.0 first and the same URL
//! for 0.3 (the method aliases), then HTTP+JSON and, on the public surface, gRPC (its
//! `tenant` the Agent's id, see [`card`]). Every card Sextant serves is signed (A2A 1.0 §8.4, see
//! `sextant_a2a::signing`) with the key in `card-key.json` ([`crate::card_keys`]); the public
//! keys are at `/.well-known/jwks.json` ([`jwks`]). Responses carry `Cache-Control`, a weak
//! `ETag` over the card's content and signing key, and `Last-Modified` (the server start, when
//! the card last changed); a matching `If-None-Match` gets 304.
//!
//! **Two shapes, by `A2A-Version`.** A 0.3 client (a2a-sdk 0.3.x, strands-agents, @a2a-js/sdk
//! 0.3, the ai-sdk A2A provider) fetches the card without `A2A-Version` and needs 0.3's
//! top-level `url`. So a card request without the header (or query parameter), or with a 0.3
//! one, gets the card with the 0.3 fields added beside the 1.0 ones
//! (`sextant_a2a::compat::card_with_v03`: `url`, `preferredTransport`, `protocolVersion`,
//! `supportsAuthenticatedExtendedCard`, 0.3 security schemes), which is what the official
//! Python SDK serves to everyone; a request naming `1.0` (as Sextant's own client, the
//! Python SDK's `create_client` and the JS SDK's resolver do) gets exactly the 1.0 card, its
//! bytes and pin hash as before. The added fields are all keys a 1.0 card does not have, so a
//! 1.0 client that fetches without the header still reads the whole 1.0 card (the Python
//! SDK's reader maps the 0.3 keys back; protobuf-JSON readers skip unknown keys). Only a
//! validator that rejects unknown keys objects: the A2A TCK fetches the card without
//! `A2A-Version`, so its card-schema check sees the 0.3 keys (it does on the Python SDK's
//! card too). Each shape is signed as served and has its own `ETag`; responses say
//! `Vary: A2A-Version`.

use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};
use sextant_core::AgentSpec;
use sextant_core::agent::PublicCard;

use crate::AppState;
use crate::a2a::surface::RpcSurface;
use crate::error::ApiError;
use crate::urls::base_url;

/// The full card of one Agent (its real skills), with URLs under `base`: what the owner's
/// console lists, and the extended card. Lists the gRPC binding after the others, at
/// [`grpc_target`] with the Agent's id as its `tenant` (`crate::a2a::grpc`).
pub fn card(agent: &AgentSpec, base: &str) -> Value {
    let mut c = card_at(
        agent,
        base,
        &format!("{base}{}", RpcSurface::Public.agent_path(&agent.id)),
    );
    if let Some(target) = grpc_target(base)
        && let Some(list) = c["supportedInterfaces"].as_array_mut()
    {
        list.push(json!({
            "url": target,
            "protocolBinding": "GRPC",
            "protocolVersion": "1.0",
            "tenant": agent.id,
        }));
    }
    c
}

/// The gRPC binding's address for a base URL: `host:port` (the port the scheme implies when
/// the URL names none), the form `a2a.proto` gives for gRPC and the one gRPC clients take as
/// a channel target (`grpc.insecure_channel("127.0.0.1:9900")`); a scheme or path would not
/// resolve. gRPC is served at the root of the host, so a base URL with a path prefix (a
/// proxy that mounts Sextant under one) still gets its bare host: the proxy must route
/// `/lf.a2a.v1.A2AService/` there too.
pub fn grpc_target(base: &str) -> Option<String> {
    let url = url::Url::parse(base).ok()?;
    let host = url.host_str()?;
    let port = url.port_or_known_default()?;
    Some(format!("{host}:{port}"))
}

/// The card anyone may fetch: minimal unless the Agent's `public_card` is `full`.
pub fn public_card(agent: &AgentSpec, base: &str) -> Value {
    let mut c = card(agent, base);
    if agent.public_card == PublicCard::Minimal {
        c["skills"] = json!([generic_skill(agent)]);
    }
    c
}

/// The extension every Sextant card declares: its waits are answered by its own person, in
/// its own inbox, never by message (docs/peers.md "Approvals across Sextants").
pub const ANSWERS_EXTENSION: &str = "urn:sextant:a2a:answered-in-place:v1";

/// The one skill a minimal card shows.
fn generic_skill(agent: &AgentSpec) -> Value {
    json!({
        "id": "chat",
        "name": agent.name,
        "description": agent.description,
        "tags": ["chat"],
    })
}

/// The full card with its interfaces under `agent_url` (the assistant routes use their own):
/// JSON-RPC at `{agent_url}/a2a` (1.0, and 0.3 by its method names), HTTP+JSON at
/// `agent_url` itself (1.0). JSON-RPC 1.0 is listed first, the binding a client without a
/// preference picks. No gRPC: [`card`] adds it where it is served (not on the assistant
/// surface, whose tokens are scoped by the Agent in the path).
pub fn card_at(agent: &AgentSpec, base: &str, agent_url: &str) -> Value {
    let url = format!("{agent_url}/a2a");
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
        vec![generic_skill(agent)]
    } else {
        skills
    };
    let mut capabilities = json!({
        "streaming": true,
        "pushNotifications": agent.features.push_notifications,
        "extendedAgentCard": agent.public_card == PublicCard::Minimal,
    });
    let mut extensions = vec![json!({
        "uri": ANSWERS_EXTENSION,
        "description": "A task that waits in TASK_STATE_AUTH_REQUIRED or \
            TASK_STATE_INPUT_REQUIRED waits for the person who runs this Sextant: they answer \
            it in their own inbox, whose URL the interaction's `answeredAt` gives, and a \
            message is never taken as the answer. Follow the task (SubscribeToTask or \
            GetTask) to its end instead.",
        "required": false,
    })];
    if agent.features.push_notifications {
        extensions.push(json!({
            "uri": crate::push::EXTENSION,
            "description": "Push-notification configs carry their delivery health (pending, \
                delivered, attempts, last error, stopped) in a `delivery` field when this \
                extension is activated (A2A-Extensions).",
            "required": false,
        }));
    }
    capabilities["extensions"] = json!(extensions);
    json!({
        "name": agent.name,
        "description": agent.description,
        "version": env!("CARGO_PKG_VERSION"),
        "supportedInterfaces": [
            { "url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0" },
            { "url": url, "protocolBinding": "JSONRPC", "protocolVersion": "0.3" },
            { "url": agent_url, "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0" },
        ],
        "provider": { "organization": "Sextant", "url": base },
        "capabilities": capabilities,
        "securitySchemes": {
            "bearer": { "httpAuthSecurityScheme": { "scheme": "Bearer",
                "description": "A per-peer token (`sextant peer-token create NAME`), a JWT from the \
                    configured issuer, or the console token. Loopback callers may omit it while \
                    Sextant is loopback-only." } }
        },
        "defaultInputModes": agent.features.modes(),
        "defaultOutputModes": ["text/plain", "application/json"],
        "skills": skills,
    })
}

/// `card` signed with the current card key (see `card_keys`); unsigned, with the reason in the
/// log, if signing fails.
pub fn signed(app: &AppState, card: &Value) -> Value {
    match app.card_keys.sign(card) {
        Ok(c) => (*c).clone(),
        Err(e) => {
            tracing::error!(error = %e, "cannot sign a card; serving it unsigned");
            card.clone()
        }
    }
}

/// A card response in the shape the request's `A2A-Version` asks for (see the module docs):
/// the card signed, `Cache-Control` with `max-age`, a weak `ETag` over the unsigned card as
/// served and the signing key, `Last-Modified`, `Vary: A2A-Version`; a matching
/// `If-None-Match` gets 304.
pub fn respond_card(
    app: &AppState,
    headers: &HeaderMap,
    query: Option<&str>,
    card: &Value,
) -> Response {
    let version = crate::a2a::surface::version_param(headers, query);
    let v03;
    let card = if sextant_a2a::version::wants_v03_card(version.as_deref()) {
        v03 = sextant_a2a::compat::card_with_v03(card);
        &v03
    } else {
        card
    };
    let kid = app.card_keys.keys().current.kid().to_string();
    let tag = format!("{card}\n{kid}");
    let body = signed(app, card).to_string();
    let mut resp = cached(app, headers, &tag, body, CARD_MAX_AGE);
    resp.headers_mut()
        .append(header::VARY, HeaderValue::from_static("A2A-Version"));
    resp
}

/// How long caches may keep a card or the JWKS.
const CARD_MAX_AGE: &str = "public, max-age=60";

/// A JSON response with cache headers: `ETag` from `tag`, 304 for a matching `If-None-Match`.
fn cached(
    app: &AppState,
    headers: &HeaderMap,
    tag: &str,
    body: String,
    control: &'static str,
) -> Response {
    let etag = format!(
        "W/\"{}\"",
        &sextant_core::ids::sha256_hex(tag.as_bytes())[..32]
    );
    let mut resp = if headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"))
    {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        ([(header::CONTENT_TYPE, "application/json")], body).into_response()
    };
    let h = resp.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(control));
    if let Ok(v) = HeaderValue::from_str(&etag) {
        h.insert(header::ETAG, v);
    }
    let modified = app.started.format("%a, %d %b %Y %H:%M:%S GMT").to_string();
    if let Ok(v) = HeaderValue::from_str(&modified) {
        h.insert(header::LAST_MODIFIED, v);
    }
    resp
}

fn respond(
    app: &AppState,
    headers: &HeaderMap,
    query: Option<&str>,
    agent: &AgentSpec,
) -> Response {
    respond_card(
        app,
        headers,
        query,
        &public_card(agent, &base_url(app, headers)),
    )
}

/// `GET /.well-known/jwks.json`: the public keys cards are signed with (the signing key first,
/// then the one a rotation kept), for anyone checking a card's signature.
pub async fn jwks(State(app): State<AppState>, headers: HeaderMap) -> Response {
    let keys = app.card_keys.keys();
    let body = sextant_a2a::signing::jwks(keys.all()).to_string();
    cached(&app, &headers, &body, body.clone(), "public, max-age=300")
}

/// `GET /.well-known/agent-card.json`: the default Agent's card.
pub async fn default_card(
    State(app): State<AppState>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    match app.runtime.agent(&app.config.default_agent) {
        Some(a) => respond(&app, &headers, query.as_deref(), &a),
        None => ApiError::NotFound("no default agent is configured".into()).into_response(),
    }
}

/// `GET /api/v1/agents/{agent_id}/.well-known/agent-card.json`.
pub async fn agent_card(
    State(app): State<AppState>,
    Path(agent_id): Path<String>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    match app.runtime.agent(&agent_id) {
        Some(a) => respond(&app, &headers, query.as_deref(), &a),
        None => ApiError::NotFound(format!("no agent {agent_id:?}")).into_response(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grpc_targets_are_host_and_port() {
        assert_eq!(
            grpc_target("http://127.0.0.1:9900").as_deref(),
            Some("127.0.0.1:9900")
        );
        assert_eq!(
            grpc_target("https://a2a.example.com").as_deref(),
            Some("a2a.example.com:443")
        );
        assert_eq!(
            grpc_target("https://a2a.example.com/sextant").as_deref(),
            Some("a2a.example.com:443")
        );
        assert_eq!(
            grpc_target("http://[::1]:9900").as_deref(),
            Some("[::1]:9900")
        );
        assert_eq!(grpc_target("not a url"), None);
    }
}
