//! The console's view of push notifications (`/api/v1/push`, the owner's): every webhook with
//! its delivery health, and re-enabling one that stopped.
//!
//! - `GET /api/v1/push?limit` — the most recently registered configs of every task (at most
//!   `limit`, default 100, up to 500), newest first ([`PushList`]).
//! - `POST /api/v1/push/{task_id}/{config_id}/resume` — re-enables a config whose delivery
//!   stopped after too many failures: what it owes is due at once, its attempts start over.
//!   404 for an unknown config.

use axum::Json;
use axum::extract::{Path, Query, State};
use serde::{Deserialize, Serialize};
use sextant_core::ids::format_time;
use ts_rs::TS;

use super::{DeliveryHealth, health};
use crate::AppState;
use crate::error::{ApiError, ApiResult};
use crate::extract::Owner;

/// One webhook, as the console shows it.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct PushConfigView {
    pub task_id: String,
    pub config_id: String,
    /// The Agent of the task (empty if the task is gone).
    pub agent_id: String,
    /// The task's state (`TASK_STATE_…`).
    pub task_state: String,
    /// Who registered it (the task's caller's principal key).
    pub caller: String,
    /// The webhook URL without credentials, query or fragment.
    pub url: String,
    pub created_at: String,
    pub updated_at: String,
    pub delivery: DeliveryHealth,
}

/// `GET /api/v1/push`.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct PushList {
    pub configs: Vec<PushConfigView>,
    /// How many of them stopped after failures (`delivery.state` = `failing`).
    pub failing: usize,
}

#[derive(Debug, Deserialize)]
pub struct ListQuery {
    #[serde(default)]
    limit: Option<u32>,
}

fn shown_url(url: &str) -> String {
    url::Url::parse(url)
        .map(|u| sextant_peers::client::guard::redacted(&u))
        .unwrap_or_else(|_| String::from("(invalid URL)"))
}

/// `GET /api/v1/push`.
pub async fn list(
    State(app): State<AppState>,
    _: Owner,
    Query(q): Query<ListQuery>,
) -> ApiResult<Json<PushList>> {
    let limit = q.limit.unwrap_or(100).clamp(1, 500);
    let journal = app.runtime.journal();
    let rows = journal
        .recent_push_configs(limit)
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    let mut configs = Vec::with_capacity(rows.len());
    for row in rows {
        let task = journal
            .task(&row.task_id)
            .await
            .map_err(|e| ApiError::Internal(e.to_string()))?;
        let (agent_id, state, terminal) = match &task {
            Some(t) => (
                t.agent_id.to_string(),
                sextant_core::event::state_wire(&t.state),
                t.state.is_terminal(),
            ),
            None => (String::new(), String::new(), true),
        };
        configs.push(PushConfigView {
            delivery: health(&row, terminal),
            task_id: row.task_id.into(),
            config_id: row.config_id,
            agent_id,
            task_state: state,
            caller: row.caller.into(),
            url: shown_url(&row.url),
            created_at: format_time(row.created_at),
            updated_at: format_time(row.updated_at),
        });
    }
    let failing = configs
        .iter()
        .filter(|c| c.delivery.state == "failing")
        .count();
    Ok(Json(PushList { configs, failing }))
}

/// `POST /api/v1/push/{task_id}/{config_id}/resume`.
pub async fn resume(
    State(app): State<AppState>,
    _: Owner,
    Path((task_id, config_id)): Path<(String, String)>,
) -> ApiResult<Json<PushConfigView>> {
    let journal = app.runtime.journal();
    let now = app.runtime.clock().now();
    let resumed = journal
        .resume_push_config(&task_id, &config_id, now)
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    if !resumed {
        return Err(ApiError::NotFound(format!(
            "task {task_id} has no push notification config {config_id:?}"
        )));
    }
    let row = journal
        .push_config(&task_id, &config_id)
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?
        .ok_or_else(|| ApiError::NotFound(format!("config {config_id:?} is gone")))?;
    let task = journal
        .task(&task_id)
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    let terminal = task.as_ref().is_none_or(|t| t.state.is_terminal());
    Ok(Json(PushConfigView {
        delivery: health(&row, terminal),
        agent_id: task
            .as_ref()
            .map(|t| t.agent_id.to_string())
            .unwrap_or_default(),
        task_state: task
            .as_ref()
            .map(|t| sextant_core::event::state_wire(&t.state))
            .unwrap_or_default(),
        task_id: row.task_id.into(),
        config_id: row.config_id,
        caller: row.caller.into(),
        url: shown_url(&row.url),
        created_at: format_time(row.created_at),
        updated_at: format_time(row.updated_at),
    }))
}
