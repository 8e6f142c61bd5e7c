//! The approvals inbox: `GET /api/v1/interactions` (pending across all Sessions, newest first)
//! and `POST /api/v1/interactions/{id}/answer` (the person's structured answer). Only the
//! console owner answers, with their own token; a text message is never an answer.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Extension, Path, State};
use axum::http::HeaderMap;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use sextant_core::Principal;
use sextant_core::interaction::AnswerRefusal;
use sextant_runtime::{AnswerError, AnswerRequest};

use crate::AppState;
use crate::error::{ApiError, ApiResult};
use crate::urls::base_url;

/// The answer body.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AnswerBody {
    pub task_id: String,
    /// Optional: must match the path when given.
    #[serde(default)]
    pub interaction_id: Option<String>,
    /// One of the declared option ids.
    pub option: String,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub values: Map<String, Value>,
    /// A retry with the same message_id and answer gets the same result.
    pub message_id: String,
}

/// `GET /api/v1/interactions`.
pub async fn list(
    State(app): State<AppState>,
    Extension(p): Extension<Principal>,
    headers: HeaderMap,
) -> ApiResult<Json<Value>> {
    if !p.is_owner() {
        return Err(ApiError::Unauthorized(
            "the approvals inbox needs the console token: Authorization: Bearer $(sextant token)"
                .into(),
        ));
    }
    let base = base_url(&app, &headers);
    let journal = app.runtime.journal();
    let mut out = Vec::new();
    for row in app.runtime.pending_interactions().await? {
        let Some(task) = journal.task(&row.task_id).await? else {
            continue;
        };
        let mut v = serde_json::to_value(row.interaction.public()).unwrap_or(Value::Null);
        let agent_name = app.runtime.agent(&task.agent_id).map(|a| a.name.clone());
        v["agentId"] = json!(task.agent_id);
        v["agentName"] = json!(agent_name);
        v["caller"] = json!(task.caller);
        v["contextId"] = json!(task.context_id);
        v["sessionId"] = json!(row.session_id);
        v["sessionUrl"] = json!(format!("{base}/sessions/{}", row.session_id));
        v["taskState"] = json!(sextant_core::event::state_wire(&task.state));
        v["raisedAt"] = json!(row.raised_at);
        v["answerUrl"] = json!(format!(
            "{base}{}",
            sextant_runtime::interactions::answer_path(&row.interaction.interaction_id)
        ));
        out.push(v);
    }
    Ok(Json(json!({ "interactions": out })))
}

/// `POST /api/v1/interactions/{id}/answer`.
pub async fn answer(
    State(app): State<AppState>,
    Extension(p): Extension<Principal>,
    Path(id): Path<String>,
    body: Bytes,
) -> ApiResult<Json<Value>> {
    let body: AnswerBody = serde_json::from_slice(&body)
        .map_err(|e| ApiError::BadRequest(format!("invalid answer body: {e}")))?;
    if body.interaction_id.as_deref().is_some_and(|i| i != id) {
        return Err(ApiError::Invalid {
            field: "interaction_id".into(),
            message: "interaction_id does not match the URL".into(),
        });
    }
    let result = app
        .runtime
        .answer(AnswerRequest {
            principal: p,
            task_id: body.task_id,
            interaction_id: id.clone(),
            option: body.option,
            reason: body.reason,
            values: body.values,
            message_id: body.message_id,
        })
        .await;
    let task = match result {
        Ok(t) => t,
        Err(e) => return Err(answer_error(e)),
    };
    Ok(Json(json!({
        "interactionId": id,
        "task": {
            "taskId": task.task_id,
            "sessionId": task.session_id,
            "agentId": task.agent_id,
            "contextId": task.context_id,
            "state": sextant_core::event::state_wire(&task.state),
            "stateAt": task.state_at,
        }
    })))
}

/// Maps an answer refusal to the REST error (shared with the MCP bridge's wording).
pub fn answer_error(e: AnswerError) -> ApiError {
    match e {
        AnswerError::NotOwner => ApiError::Forbidden(e.to_string()),
        AnswerError::TaskNotFound | AnswerError::InteractionNotFound => {
            ApiError::NotFound(e.to_string())
        }
        AnswerError::MissingMessageId => ApiError::Invalid {
            field: "message_id".into(),
            message: e.to_string(),
        },
        AnswerError::Refused(r @ AnswerRefusal::UnknownOption { .. }) => ApiError::Invalid {
            field: "option".into(),
            message: r.to_string(),
        },
        AnswerError::Refused(r @ AnswerRefusal::BadField(_)) => ApiError::Invalid {
            field: "values".into(),
            message: r.to_string(),
        },
        AnswerError::Refused(r) => ApiError::Conflict(r.to_string()),
        AnswerError::Journal(e) => ApiError::Internal(e.to_string()),
    }
}
