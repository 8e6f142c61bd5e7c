//! Sextant's HTTP surface (axum 0.8).
//!
//! - [`a2a`]: the A2A 1.0 JSON-RPC + SSE endpoint of every Agent (with 0.3 aliases).
//! - [`cards`]: Agent cards, with cache headers.
//! - [`api`]: the console's REST API and its SSE streams.
//! - [`mcp`]: the agents MCP server (`/api/v1/assistant-mcp`).
//! - [`schedules`]: personal schedules and their Runs (`/api/v1/me/schedules`), and the
//!   owner's Agent access switch.
//! - [`auth`]: resolves the calling principal before any handler runs.
//! - [`error`]: the one REST error shape.
//!
//! [`router`] builds the app from an [`AppState`]; [`serve`] runs it on a bound listener until a
//! shutdown future resolves. Tests bind `127.0.0.1:0` and call both.

pub mod a2a;
pub mod api;
pub mod auth;
pub mod cards;
pub mod error;
pub mod interactions;
pub mod mcp;
pub mod schedules;
pub mod urls;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderValue, header};
use axum::middleware;
use axum::routing::{get, post};
use chrono::{DateTime, Utc};
use sextant_runtime::Runtime;
use tokio_util::sync::CancellationToken;
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::trace::TraceLayer;

/// Largest request body accepted (JSON-RPC or REST), as the official SDKs do.
pub const MAX_BODY: usize = 10 * 1024 * 1024;

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
}

/// Shared state: cheap handles only.
#[derive(Clone)]
pub struct AppState {
    pub runtime: Runtime,
    /// Personal schedules (shares the runtime).
    pub scheduler: sextant_scheduler::Scheduler,
    pub config: Arc<ServerConfig>,
    /// When this server started; the cards' `Last-Modified`.
    pub started: DateTime<Utc>,
    /// Fires at shutdown: open streams end and blocking waits return the task as it is.
    pub shutdown: CancellationToken,
}

/// The application router.
pub fn router(state: AppState) -> Router {
    let cards = Router::new()
        .route("/.well-known/agent-card.json", get(cards::default_card))
        .route("/.well-known/agent.json", get(cards::default_card))
        .route(
            "/api/v1/agents/{agent_id}/.well-known/agent-card.json",
            get(cards::agent_card),
        )
        .route(
            "/api/v1/agents/{agent_id}/.well-known/agent.json",
            get(cards::agent_card),
        )
        .route("/api/v1/health", get(api::health));
    let authed = Router::new()
        .route("/api/v1/agents/{agent_id}/a2a", post(a2a::rpc))
        .route("/api/v1/agents/{agent_id}/a2a/", post(a2a::rpc))
        .route("/api/v1/agents", get(api::agents))
        .route("/api/v1/sessions", get(api::sessions))
        .route("/api/v1/sessions/{id}", get(api::session))
        .route("/api/v1/sessions/{id}/events", get(api::session_events))
        .route("/api/v1/tasks", get(api::tasks))
        .route("/api/v1/tasks/events", get(api::task_events))
        .route("/api/v1/interactions", get(interactions::list))
        .route(
            "/api/v1/interactions/{id}/answer",
            post(interactions::answer),
        )
        .nest_service(mcp::PATH, mcp::service(&state))
        .route(
            "/api/v1/me/schedules",
            get(schedules::list).post(schedules::create),
        )
        .route(
            "/api/v1/me/schedules/{id}",
            get(schedules::get)
                .patch(schedules::update)
                .delete(schedules::delete),
        )
        .route("/api/v1/me/schedules/{id}/run", post(schedules::run_now))
        .route("/api/v1/me/schedules/{id}/runs", get(schedules::runs))
        .route(
            "/api/v1/me/schedules/{id}/runs/{run_id}",
            get(schedules::run),
        )
        .route(
            "/api/v1/me/schedules/{id}/runs/{run_id}/replay",
            post(schedules::replay),
        )
        .route(
            "/api/v1/agents/{agent_id}/access",
            get(schedules::get_access).put(schedules::put_access),
        )
        .route_layer(middleware::from_fn_with_state(state.clone(), auth::resolve));
    Router::new()
        .merge(cards)
        .merge(authed)
        .fallback(|| async { error::ApiError::NotFound("no such route".into()) })
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(SetResponseHeaderLayer::overriding(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

/// Serves `router(state)` on `listener` until `shutdown` resolves; open streams are closed
/// then (tasks go on: the journal keeps them).
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(
        listener,
        router(state).into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown)
    .await
}
