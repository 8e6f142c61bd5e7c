//! The assistant capability routes, `/api/v1/assistant-a2a/agents/{agent_id}/…`: the same A2A
//! surface as `/api/v1/agents/{agent_id}/…`, for assistant runtimes holding a capability token
//! (`sxa_…`) the person issued.
//!
//! - `GET …/.well-known/agent-card.json`: the Agent's full card, its interface on this route;
//! - `POST …/a2a`: A2A 1.0 JSON-RPC (+ SSE), exactly as `a2a` serves it;
//! - `…/message:send`, `…/tasks/{id}`, …: the HTTP+JSON binding (`a2a::rest`), the same.
//!
//! The bearer authorizes one workspace and one target Agent, nothing else: `auth` accepts only
//! an assistant's per-Agent credentials here (a token issued for one Agent: by `sextant
//! assistant-token create NAME --agent ID`, or on demand under the assistant's workspace token;
//! see `assistant_peers`), and this module answers any other `agent_id` as "no such agent". The token's record is read on every
//! request (the owner it acts for, its workspace, its Agent, whether it is revoked), so nothing
//! in a request can select another identity or target. The assistant is its own caller: its
//! tasks and contexts are scoped to `assistant:WORKSPACE:NAME`.

use axum::body::Bytes;
use axum::extract::{Extension, Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use sextant_a2a::RpcError;
use sextant_a2a::error::Code;
use sextant_a2a::rpc::failure;
use sextant_core::{Principal, Rights};

use crate::AppState;
use crate::a2a;
use crate::a2a::surface::RpcSurface;
use crate::auth::{AssistantGrant, Credential};
use crate::error::ApiError;
use crate::urls::base_url;

/// Whether the grant reaches `agent_id` and the Agent's access still lets the assistant in.
fn reaches(app: &AppState, p: &Principal, grant: &AssistantGrant, agent_id: &str) -> bool {
    grant.agent_id.as_deref() == Some(agent_id)
        && grant.workspace == app.security.workspace
        && app.runtime.authorize(p, agent_id, Rights::Read).is_ok()
}

/// `GET /api/v1/assistant-a2a/agents/{agent_id}/.well-known/agent-card.json`.
pub async fn card(
    State(app): State<AppState>,
    Path(agent_id): Path<String>,
    Extension(p): Extension<Principal>,
    Extension(grant): Extension<AssistantGrant>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
) -> Response {
    let agent = app.runtime.agent(&agent_id);
    match agent {
        Some(a) if reaches(&app, &p, &grant, &agent_id) => {
            let base = base_url(&app, &headers);
            let url = format!("{base}{}", RpcSurface::Assistant.agent_path(&agent_id));
            let card = crate::cards::card_at(&a, &base, &url);
            crate::cards::respond_card(&app, &headers, query.as_deref(), &card)
        }
        _ => {
            crate::audited::out_of_scope(
                &app,
                &p,
                &agent_id,
                Some("card"),
                grant.agent_id.as_deref(),
            );
            ApiError::NotFound(format!("no agent {agent_id:?}")).into_response()
        }
    }
}

/// Whether the grant names `agent_id` in this workspace; if not, the refusal is audited and
/// the caller is to be answered "no such agent" (both A2A bindings ask).
pub(crate) fn in_scope(
    app: &AppState,
    p: &Principal,
    grant: &AssistantGrant,
    agent_id: &str,
) -> bool {
    let ok =
        grant.agent_id.as_deref() == Some(agent_id) && grant.workspace == app.security.workspace;
    if !ok {
        crate::audited::out_of_scope(app, p, agent_id, None, grant.agent_id.as_deref());
    }
    ok
}

/// `POST /api/v1/assistant-a2a/agents/{agent_id}/a2a`.
#[allow(clippy::too_many_arguments)]
pub async fn rpc(
    State(app): State<AppState>,
    Path(agent_id): Path<String>,
    Extension(p): Extension<Principal>,
    Extension(credential): Extension<Credential>,
    Extension(grant): Extension<AssistantGrant>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !in_scope(&app, &p, &grant, &agent_id) {
        let id = sextant_a2a::rpc::request_id(&body);
        let err = RpcError::new(Code::InvalidRequest, format!("no agent {agent_id:?} here"));
        return (
            StatusCode::NOT_FOUND,
            [(axum::http::header::CONTENT_TYPE, "application/json")],
            failure(&id, &err),
        )
            .into_response();
    }
    a2a::jsonrpc::handle(
        app,
        agent_id,
        p,
        credential,
        query,
        headers,
        body,
        RpcSurface::Assistant,
    )
    .await
}
