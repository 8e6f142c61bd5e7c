//! The JSON-RPC 2.0 binding (spec §9): `POST /api/v1/agents/{agent_id}/a2a`, and the
//! default Agent's (the one `/.well-known/agent-card.json` describes) at `POST /` and
//! `POST /a2a` too ([`default_rpc`]), where clients that were given only the server's URL
//! send it. Those are the same endpoint behind the same perimeter and credentials; `GET /`
//! stays the console page.
//!
//! Before the service sees a call: the request's Content-Type (-32005), then the envelope
//! (-32700/-32600). Upfront errors are plain JSON with HTTP 200, as the SDKs do (404 for an
//! Agent the caller cannot see, 401 with `WWW-Authenticate` for an extended card asked for
//! without credentials); streams are `text/event-stream`, each event a JSON-RPC response
//! with the request's id, its SSE id the journal seq.
//!
//! A caller without a token must also send a JSON `Content-Type` (a missing one is -32005
//! too): see `perimeter` for how this combines with the perimeter's content-type rule.

use std::convert::Infallible;

use axum::body::Bytes;
use axum::extract::{Extension, Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use sextant_a2a::RpcError;
use sextant_a2a::error::Code;
use sextant_a2a::method;
use sextant_a2a::rpc::{RpcId, failure, parse_request, success};
use sextant_core::Principal;

use super::surface::RpcSurface;
use super::{Failure, Frame, Frames, Inbound, Served, serve};
use crate::AppState;
use crate::auth::Credential;

/// A JSON-RPC response (an envelope from `success` / `failure`, already serialised).
fn json_response(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

fn is_json_content_type(headers: &HeaderMap) -> bool {
    let Some(v) = headers.get(header::CONTENT_TYPE) else {
        // A caller without a token must say JSON (see `perimeter`); one with a token may omit it.
        return headers.contains_key(header::AUTHORIZATION);
    };
    // The perimeter's and the REST API's JSON rule, answered here in JSON-RPC.
    crate::content_type::is_json(v.to_str().ok())
}

/// `POST /api/v1/agents/{agent_id}/a2a` (and with a trailing slash).
pub async fn rpc(
    State(app): State<AppState>,
    Path(agent_id): Path<String>,
    Extension(principal): Extension<Principal>,
    credential: Option<Extension<Credential>>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let credential = credential.map_or(Credential::None, |c| c.0);
    handle(
        app,
        agent_id,
        principal,
        credential,
        query,
        headers,
        body,
        RpcSurface::Public,
    )
    .await
}

/// `POST /`, `POST /a2a` (and with a trailing slash): the default Agent's JSON-RPC, exactly
/// as at `POST /api/v1/agents/{default}/a2a`. The audit record names the route called.
pub async fn default_rpc(
    State(app): State<AppState>,
    Extension(principal): Extension<Principal>,
    credential: Option<Extension<Credential>>,
    uri: Uri,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let credential = credential.map_or(Credential::None, |c| c.0);
    let agent_id = app.config.default_agent.clone();
    let route = uri.path().to_string();
    handle_at(
        app,
        agent_id,
        principal,
        credential,
        query,
        headers,
        body,
        RpcSurface::Public,
        route,
    )
    .await
}

/// The JSON-RPC endpoint behind both A2A surfaces.
#[allow(clippy::too_many_arguments)]
pub(crate) async fn handle(
    app: AppState,
    agent_id: String,
    principal: Principal,
    credential: Credential,
    query: Option<String>,
    headers: HeaderMap,
    body: Bytes,
    surface: RpcSurface,
) -> Response {
    let route = format!("{}/a2a", surface.agent_path(&agent_id));
    handle_at(
        app, agent_id, principal, credential, query, headers, body, surface, route,
    )
    .await
}

/// [`handle`], called at `route` (audit).
#[allow(clippy::too_many_arguments)]
async fn handle_at(
    app: AppState,
    agent_id: String,
    principal: Principal,
    credential: Credential,
    query: Option<String>,
    headers: HeaderMap,
    body: Bytes,
    surface: RpcSurface,
    route: String,
) -> Response {
    if !is_json_content_type(&headers) {
        let err = RpcError::new(
            Code::ContentTypeNotSupported,
            "Content-Type must be application/json for JSON-RPC requests",
        );
        return json_response(StatusCode::OK, failure(&RpcId::null(), &err));
    }
    let req = match parse_request(&body) {
        Ok(r) => r,
        Err((id, err)) => return json_response(StatusCode::OK, failure(&id, &err)),
    };
    let served = serve(Inbound {
        method: method::lookup(&req.method),
        named: req.method,
        params: req.params,
        app,
        agent_id,
        principal,
        credential,
        surface,
        headers,
        query,
        route,
    })
    .await;
    match served {
        Served::Json {
            result,
            push_extension,
        } => {
            let mut resp = json_response(StatusCode::OK, success(&req.id, result));
            if push_extension {
                super::say_push_extension(&mut resp);
            }
            resp
        }
        Served::Stream(frames) => sse(req.id, frames),
        Served::Failed(Failure { error, status }) => {
            let status = status.unwrap_or(StatusCode::OK);
            let mut resp = json_response(status, failure(&req.id, &error));
            if status == StatusCode::UNAUTHORIZED {
                resp.headers_mut()
                    .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            resp
        }
    }
}

/// A stream as SSE: each item a JSON-RPC success with the request's id, an error an `error`
/// event carrying a JSON-RPC failure.
fn sse(id: RpcId, frames: Frames) -> Response {
    let events = frames.map(move |frame| {
        let event = match frame {
            Frame::Item(seq, result) => {
                let ev = Event::default().data(success(&id, result));
                match seq {
                    Some(s) => ev.id(s.to_string()),
                    None => ev,
                }
            }
            Frame::Error(err) => Event::default().event("error").data(failure(&id, &err)),
        };
        Ok::<_, Infallible>(event)
    });
    Sse::new(events)
        .keep_alive(KeepAlive::new().interval(crate::SSE_KEEP_ALIVE))
        .into_response()
}
