//! Sextant's HTTP surface (axum 0.8), in rooms:
//!
//! - [`a2a`]: the A2A 1.0 service of every Agent and its three bindings, JSON-RPC (with 0.3
//!   aliases; the default Agent's also at `POST /` and `POST /a2a`), HTTP+JSON and gRPC,
//!   streams over SSE (server-streaming RPCs for gRPC);
//!   `a2a::params`: the JSON type of every field of its methods' params; `a2a::parts`: the
//!   check of a message's file and data parts; `a2a::assistant`: the assistant capability
//!   routes (`/api/v1/assistant-a2a/agents/{id}/…`); `a2a::surface` (the surfaces, their
//!   route prefixes, `A2A-Version`) and `a2a::tasks` (who may read a task, answer URLs):
//!   leaves that cards, the perimeter and push read instead of the service, which calls them.
//! - [`api`]: the console's REST API and its SSE streams: Agents, Sessions and tasks, and
//!   `api::interactions` (the approvals inbox), `api::schedules` (personal schedules, and the
//!   owner's Agent access switch), `api::peers` (outbound peers and the A2A client tools; the
//!   same tools are MCP tools, `mcp/peer_tools.rs`), `api::credentials` (peer and assistant
//!   tokens), `api::audit` (reading the audit log).
//! - [`mcp`]: the agents MCP server (`/api/v1/assistant-mcp`).
//! - [`auth`]: resolves the calling principal before any handler runs (owner token, console
//!   cookie, per-peer and assistant tokens, JWTs via `auth::jwt`, or the anonymous loopback
//!   caller), then applies the per-identity rate limit (`auth::ratelimit`); `auth::perimeter`:
//!   what every request passes before authentication (header cap, `A2A-Hop`, and the Host /
//!   Origin / Sec-Fetch-Site / Content-Type rules for requests without a token) and the
//!   security headers of every response; `auth::console`: how the console page gets the
//!   owner's credential (a same-origin session cookie, never a URL); `auth::drain`: refusals
//!   that keep a keep-alive connection usable.
//! - [`push`]: push-notification configs (the service every binding calls) and the delivery
//!   worker that drains the journal's outbox.
//!
//! Not here, because it is not HTTP and the CLI uses it without a server: token issuing, the
//! `security.toml` format and the audit log writer (`sextant-access`).
//!
//! At the root, what several rooms share or the CLI runs without a server:
//!
//! - [`cards`]: Agent cards, signed ([`card_keys`]), with cache headers, and the JWKS.
//! - [`security`]: the services built from the security settings
//!   (`sextant_access::settings`, `security.toml`): JWT verifier, limits, exposure, audit log,
//!   rate limits, which every room reads.
//! - [`audited`]: every audit record the server writes, and the operations REST and MCP share
//!   (answering, schedule changes), each recorded once there whichever surface called it.
//! - [`profile`]: backup (one tar file) and export (JSON lines) of the person's profile,
//!   written by the CLI and by the owner-only downloads `GET /api/v1/backup` and
//!   `GET /api/v1/export`.
//! - [`ui`]: the web console (the built UI, embedded) at `/`.
//! - [`wire`]: typed console API shapes, exported to TypeScript for the UI.
//! - [`extract`]: what the REST handlers take instead of reading the request themselves (a
//!   JSON body, a JSON `Content-Type`, the console owner).
//! - [`error`]: the one REST error shape; [`urls`]: advertised URLs.
//!
//! [`router`] builds the app from an [`AppState`]; [`serve`] runs it on a bound listener until a
//! shutdown future resolves, through [`connections`] (connection limits, header and body
//! timeouts). Tests bind `127.0.0.1:0` and call both.

pub mod a2a;
pub mod api;
pub mod audited;
pub mod auth;
pub mod card_keys;
pub mod cards;
pub mod connections;
pub mod content_type;
pub mod error;
pub mod extract;
pub mod mcp;
pub mod profile;
pub mod push;
pub mod security;
pub mod ui;
pub mod urls;
pub mod wire;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::middleware;
use axum::routing::{any, delete, get, post, put};
use chrono::{DateTime, Utc};
use sextant_runtime::Runtime;
use tokio_util::sync::CancellationToken;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::trace::TraceLayer;

/// How often an idle SSE stream sends a keep-alive comment. Under the official Python SDK's
/// default 5 s read timeout, so a client whose task waits for the person's approval (or runs a
/// long command quietly) is not cut off by its own HTTP library.
pub const SSE_KEEP_ALIVE: std::time::Duration = std::time::Duration::from_secs(3);

/// Largest request body accepted (JSON-RPC or REST) by default (`[limits] max_body_bytes`).
pub use sextant_access::settings::MAX_BODY;

/// Server settings.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The console owner's bearer token.
    pub token: String,
    /// The URL Sextant is reached at, when it differs from the Host callers use.
    pub public_url: Option<String>,
    /// The Agent served at `/.well-known/agent-card.json`.
    pub default_agent: String,
    /// The bound address (fallback for advertised URLs).
    pub bind: SocketAddr,
    /// How long a blocking `SendMessage` waits before it answers with the task as it is;
    /// `None`: until the task ends or waits for someone. The task runs on either way.
    pub reply_timeout: Option<std::time::Duration>,
}

/// Shared state: one reference-counted handle, because axum clones the state for every
/// request and for each middleware it passes (field by field, that was a handful of atomic
/// operations and a cancellation-token lock per clone, about 2% of the CPU under load).
#[derive(Clone)]
pub struct AppState(Arc<App>);

impl AppState {
    pub fn new(app: App) -> Self {
        Self(Arc::new(app))
    }
}

impl std::ops::Deref for AppState {
    type Target = App;

    fn deref(&self) -> &App {
        &self.0
    }
}

/// What [`AppState`] shares: cheap handles only.
pub struct App {
    pub runtime: Runtime,
    /// The outbound peers service, the same one the runtime was built with
    /// (`RuntimeBuilder::outbound`): the peers API, the MCP peer tools and push delivery use it.
    pub peers: Arc<sextant_peers::Peers>,
    /// Personal schedules (shares the runtime).
    pub scheduler: sextant_scheduler::Scheduler,
    pub config: Arc<ServerConfig>,
    /// When this server started; the cards' `Last-Modified`.
    pub started: DateTime<Utc>,
    /// Fires at shutdown: open streams end and blocking waits return the task as it is.
    pub shutdown: CancellationToken,
    /// Security settings and services: JWT verifier, limits, exposure, audit log, rate limits.
    pub security: Arc<security::Security>,
    /// Push notifications: webhook settings and the sealer of their secrets.
    pub push: Arc<push::Push>,
    /// The keys cards are signed with (`card-key.json`, re-read after a rotation).
    pub card_keys: Arc<card_keys::CardKeys>,
}

/// The application router.
pub fn router(state: AppState) -> Router {
    let cards = Router::new()
        .route("/.well-known/agent-card.json", get(cards::default_card))
        .route("/.well-known/agent.json", get(cards::default_card))
        .route(sextant_a2a::signing::JWKS_PATH, get(cards::jwks))
        .route(
            "/api/v1/agents/{agent_id}/.well-known/agent-card.json",
            get(cards::agent_card),
        )
        .route(
            "/api/v1/agents/{agent_id}/.well-known/agent.json",
            get(cards::agent_card),
        )
        .route("/api/v1/health", get(api::health))
        .route("/api/v1/session/bootstrap", post(auth::console::bootstrap))
        .route("/api/v1/session/logout", post(auth::console::logout))
        .route("/api/v1/session", get(auth::console::session))
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            auth::optional,
        ));
    let authed = Router::new()
        .route("/api/v1/agents/{agent_id}/a2a", post(a2a::jsonrpc::rpc))
        .route("/api/v1/agents/{agent_id}/a2a/", post(a2a::jsonrpc::rpc))
        .merge(a2a_rest_routes("/api/v1/agents"))
        // The gRPC binding: one route for the service's methods (it dispatches on the path).
        .route_service(
            &format!("{}{{*method}}", a2a::surface::GRPC_PATH_PREFIX),
            a2a::grpc::service(&state),
        )
        .route("/api/v1/agents", get(api::agents))
        .route("/api/v1/agents/{id}/paused", put(api::set_agent_paused))
        .route("/api/v1/agents/{id}/stop-all", post(api::stop_agent))
        .route("/api/v1/sessions", get(api::sessions))
        .route("/api/v1/sessions/{id}", get(api::session))
        .route("/api/v1/sessions/{id}/events", get(api::session_events))
        .route("/api/v1/tasks", get(api::tasks))
        .route("/api/v1/tasks/events", get(api::task_events))
        .route("/api/v1/tasks/counts", get(api::task_counts))
        .route("/api/v1/tasks/{id}", get(api::task))
        .route("/api/v1/tasks/{id}/cancel", post(api::cancel_task))
        .route("/api/v1/interactions", get(api::interactions::list))
        .route(
            "/api/v1/interactions/answer",
            post(api::interactions::answer_many),
        )
        .route(
            "/api/v1/interactions/{id}/answer",
            post(api::interactions::answer),
        )
        .route(
            "/api/v1/peers",
            get(api::peers::list).post(api::peers::register),
        )
        .route("/api/v1/peers/discover", post(api::peers::discover))
        .route("/api/v1/peers/call", post(api::peers::call))
        .route("/api/v1/peers/orchestrate", post(api::peers::orchestrate))
        .route(
            "/api/v1/peers/conversations/{context_id}",
            get(api::peers::history),
        )
        .route(
            "/api/v1/peers/{name}",
            get(api::peers::get)
                .patch(api::peers::update)
                .delete(api::peers::delete),
        )
        .route("/api/v1/peers/{name}/pin", post(api::peers::pin))
        .route(
            "/api/v1/agents/{agent_id}/access",
            get(api::schedules::get_access).put(api::schedules::put_access),
        )
        .route(
            "/api/v1/peer-tokens",
            get(api::credentials::list_peers).post(api::credentials::create_peer),
        )
        .route(
            "/api/v1/peer-tokens/{name}",
            delete(api::credentials::revoke_peer),
        )
        .route(
            "/api/v1/assistant-tokens",
            get(api::credentials::list_assistants).post(api::credentials::create_assistant),
        )
        .route(
            "/api/v1/assistant-tokens/{name}",
            delete(api::credentials::revoke_assistant),
        )
        .route(
            "/api/v1/assistant-tokens/{name}/peers",
            get(api::credentials::list_assistant_peers)
                .post(api::credentials::issue_assistant_peers),
        )
        .route(
            "/api/v1/assistant-tokens/{name}/peers/{agent_id}",
            delete(api::credentials::revoke_assistant_peer),
        )
        .route("/api/v1/audit", get(api::audit::list))
        .route("/api/v1/backup", get(profile::backup))
        .route("/api/v1/export", get(profile::export))
        .route("/api/v1/push", get(push::api::list))
        .route(
            "/api/v1/push/{task_id}/{config_id}/resume",
            post(push::api::resume),
        )
        .route_layer(middleware::from_fn_with_state(state.clone(), auth::resolve));
    // Personal schedules: whoever the general routes take, plus an assistant's workspace
    // token (it manages its owner's plans).
    let schedules = Router::new()
        .route(
            "/api/v1/me/schedules",
            get(api::schedules::list).post(api::schedules::create),
        )
        .route(
            "/api/v1/me/schedules/preview",
            post(api::schedules::preview),
        )
        .route(
            "/api/v1/me/schedules/pause",
            get(api::schedules::pause_state).put(api::schedules::set_pause),
        )
        .route(
            "/api/v1/me/schedules/{id}",
            get(api::schedules::get)
                .patch(api::schedules::update)
                .delete(api::schedules::delete),
        )
        .route(
            "/api/v1/me/schedules/{id}/run",
            post(api::schedules::run_now),
        )
        .route("/api/v1/me/schedules/{id}/runs", get(api::schedules::runs))
        .route(
            "/api/v1/me/schedules/{id}/grants",
            get(api::schedules::grants),
        )
        .route(
            "/api/v1/me/schedules/{id}/grants/{grant_id}",
            delete(api::schedules::revoke_grant),
        )
        .route(
            "/api/v1/me/schedules/{id}/runs/{run_id}",
            get(api::schedules::run),
        )
        .route(
            "/api/v1/me/schedules/{id}/runs/{run_id}/replay",
            post(api::schedules::replay),
        )
        .route(
            "/api/v1/me/schedules/{id}/runs/{run_id}/cancel",
            post(api::schedules::cancel_run),
        )
        .route(
            "/api/v1/me/schedules/{id}/backfill",
            post(api::schedules::backfill),
        )
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            auth::resolve_schedules,
        ));
    // The agents MCP bridge: the owner, the anonymous loopback caller, assistant tokens.
    let mcp = Router::new()
        .nest_service(mcp::PATH, mcp::service(&state))
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            auth::resolve_mcp,
        ));
    // The assistant capability routes: assistant tokens only.
    let assistant = Router::new()
        .route(
            "/api/v1/assistant-a2a/agents/{agent_id}/.well-known/agent-card.json",
            get(a2a::assistant::card),
        )
        .route(
            "/api/v1/assistant-a2a/agents/{agent_id}/.well-known/agent.json",
            get(a2a::assistant::card),
        )
        .route(
            "/api/v1/assistant-a2a/agents/{agent_id}/a2a",
            post(a2a::assistant::rpc),
        )
        .route(
            "/api/v1/assistant-a2a/agents/{agent_id}/a2a/",
            post(a2a::assistant::rpc),
        )
        .merge(a2a_rest_routes(a2a::surface::ASSISTANT_PREFIX))
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            auth::resolve_assistant,
        ));
    // The default Agent's JSON-RPC at the server's own URL (`a2a::jsonrpc::default_rpc`),
    // with the general routes' credentials; any other verb (`GET /`: the console page) is the
    // UI's, without them, as before.
    let default_rpc = || {
        post(a2a::jsonrpc::default_rpc)
            .route_layer(middleware::from_fn_with_state(state.clone(), auth::resolve))
            .fallback(ui::fallback)
    };
    let root = Router::new()
        .route("/", default_rpc())
        .route("/a2a", default_rpc())
        .route("/a2a/", default_rpc());
    let max_body = state.security.limits.max_body_bytes;
    Router::new()
        .merge(cards)
        .merge(root)
        .merge(authed)
        .merge(schedules)
        .merge(mcp)
        .merge(assistant)
        .fallback(ui::fallback)
        .layer(DefaultBodyLimit::max(max_body))
        .layer(RequestBodyLimitLayer::new(max_body))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            auth::perimeter::guard,
        ))
        // Outside the perimeter and auth: their refusals on gRPC paths become gRPC statuses.
        .layer(middleware::from_fn(a2a::grpc::refusals))
        .layer(middleware::from_fn(auth::perimeter::headers))
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

/// The HTTP+JSON binding's routes under `prefix` (`a2a::rest`): every verb reaches the
/// handler, which answers a wrong one in the binding's error shape.
fn a2a_rest_routes(prefix: &str) -> Router<AppState> {
    let call = any(a2a::rest::call);
    Router::new()
        .route(&format!("{prefix}/{{agent_id}}/message:send"), call.clone())
        .route(
            &format!("{prefix}/{{agent_id}}/message:stream"),
            call.clone(),
        )
        .route(&format!("{prefix}/{{agent_id}}/tasks"), call.clone())
        .route(
            &format!("{prefix}/{{agent_id}}/tasks/{{*rest}}"),
            call.clone(),
        )
        .route(&format!("{prefix}/{{agent_id}}/extendedAgentCard"), call)
}

/// Serves `router(state)` on `listener` until `shutdown` resolves; open streams are closed
/// then (tasks go on: the journal keeps them). Connections are capped and timed as
/// [`connections`] says.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let limits = connections::ConnLimits::from_file(&state.security.limits);
    let owner_state = state.clone();
    let is_owner: connections::IsOwner =
        Arc::new(move |h| auth::console::carries_owner_credential(&owner_state, h));
    connections::serve(listener, router(state), limits, is_owner, shutdown).await
}

/// Turns off Nagle's algorithm on an accepted connection. An SSE stream writes each event as
/// its own small segment; with Nagle on, every event after the first waited for the client's
/// delayed ACK of the one before (about 40 ms on Linux), so a four-event SendStreamingMessage
/// took 44 ms instead of 2 (`STREAM=1 bench/run.sh`). A one-shot JSON answer is one write and
/// was never delayed.
fn no_delay(tcp: &tokio::net::TcpStream) {
    if let Err(e) = tcp.set_nodelay(true) {
        tracing::debug!(error = %e, "could not set TCP_NODELAY on a connection");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn accepted_connections_send_small_writes_at_once() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let client = tokio::spawn(tokio::net::TcpStream::connect(addr));
        let (server_side, _) = listener.accept().await.unwrap();
        no_delay(&server_side);
        assert!(
            server_side.nodelay().unwrap(),
            "TCP_NODELAY on the accepted socket"
        );
        client.await.unwrap().unwrap();
    }
}
