//! `GET /api/v1/audit` (owner only): the newest records of the audit log, filtered.

use axum::Json;
use axum::extract::{Query, State};
use serde_json::Value;

use crate::AppState;
use crate::error::{ApiError, ApiResult};
use crate::extract::Owner;

/// Query of `GET /api/v1/audit`.
#[derive(Debug, Default, serde::Deserialize)]
pub struct AuditQuery {
    #[serde(default)]
    pub limit: Option<usize>,
    /// Only records of this principal key.
    #[serde(default)]
    pub principal: Option<String>,
    /// Only records of this Agent.
    #[serde(default)]
    pub agent: Option<String>,
    /// Only records with this outcome (`ok`, `refused`, `error`).
    #[serde(default)]
    pub outcome: Option<String>,
}

/// `GET /api/v1/audit?limit&principal&agent&outcome` (owner only): the newest records first
/// (default 100, at most 1000).
pub async fn list(
    State(app): State<AppState>,
    _: Owner,
    Query(q): Query<AuditQuery>,
) -> ApiResult<Json<Value>> {
    let limit = q.limit.unwrap_or(100).clamp(1, 1000);
    let records = app
        .security
        .audit
        .read(limit, move |v| {
            let is = |k: &str, want: &Option<String>| {
                want.as_deref().is_none_or(|w| v[k].as_str() == Some(w))
            };
            is("principal", &q.principal) && is("agent", &q.agent) && is("outcome", &q.outcome)
        })
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok(Json(serde_json::json!({ "records": records })))
}
