//! The approvals inbox: `GET /api/v1/interactions` (pending across all Sessions, newest first)
//! and `POST /api/v1/interactions/{id}/answer` (the person's structured answer). Only the
//! console owner answers, with their own token; a text message is never an answer.

use axum::Json;
use axum::extract::{Extension, OriginalUri, Path, State};
use axum::http::HeaderMap;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use sextant_core::Principal;
use sextant_core::interaction::AnswerRefusal;
use sextant_runtime::{AnswerError, AnswerRequest};

use crate::AppState;
use crate::error::{ApiError, ApiResult};
use crate::extract::{ApiJson, Owner};
use crate::urls::base_url;
use crate::wire::{
    AnswerReply, AnsweredTask, BulkAnswerError, BulkAnswerReply, BulkAnswerResult, InteractionList,
    PendingInteraction,
};

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
    /// The digest of the action the person saw (`sha256:…`, the card's `action.digest`);
    /// when given, an answer for any other action is refused (409).
    #[serde(default)]
    pub digest: Option<String>,
}

/// `GET /api/v1/interactions`.
pub async fn list(
    State(app): State<AppState>,
    _: Owner,
    headers: HeaderMap,
) -> ApiResult<Json<Value>> {
    // Anonymous: 401 (use the console token); another authenticated caller: 403.
    let base = base_url(&app, &headers);
    let journal = app.runtime.journal();
    let mut out = Vec::new();
    for row in app.runtime.pending_interactions().await? {
        let Some(task) = journal.task(&row.task_id).await? else {
            continue;
        };
        // Where it comes from: a card says its schedule, peer, assistant or caller, and what
        // its Session was started for.
        let labels = journal.session_labels(&row.session_id).await?;
        let (schedule_id, schedule_name) = journal.session_schedule(&row.session_id).await?.unzip();
        let first_message = journal.session_opening(&row.session_id).await?;
        out.push(PendingInteraction {
            caller_kind: labels.caller_kind,
            origin: labels.origin,
            schedule_id: schedule_id.map(String::from),
            schedule_name: schedule_name.flatten(),
            first_message,
            interaction: row.interaction.public(),
            agent_name: app.runtime.agent(&task.agent_id).map(|a| a.name.clone()),
            agent_id: task.agent_id.into(),
            caller: task.caller.into(),
            context_id: task.context_id.into(),
            session_url: format!("{base}/sessions/{}", row.session_id),
            session_id: row.session_id.into(),
            task_state: task.state,
            raised_at: sextant_core::ids::format_time(row.raised_at),
            answer_url: format!(
                "{base}{}",
                sextant_runtime::interactions::answer_path(&row.interaction.interaction_id)
            ),
        });
    }
    Ok(Json(json!(InteractionList { interactions: out })))
}

/// `POST /api/v1/interactions/{id}/answer`.
pub async fn answer(
    State(app): State<AppState>,
    Extension(p): Extension<Principal>,
    Path(id): Path<String>,
    OriginalUri(uri): OriginalUri,
    ApiJson(body): ApiJson<AnswerBody>,
) -> ApiResult<Json<Value>> {
    if body.interaction_id.as_deref().is_some_and(|i| i != id) {
        return Err(ApiError::Invalid {
            field: "interaction_id".into(),
            message: "interaction_id does not match the URL".into(),
        });
    }
    let task = answer_one(&app, p, id.clone(), body, uri.path()).await?;
    Ok(Json(json!(AnswerReply {
        interaction_id: id,
        task,
    })))
}

/// The most answers one bulk answer takes.
pub const MAX_BULK: usize = 200;

/// The bulk answer body: answers to several interactions, each as the single answer's body
/// with its `interaction_id`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BulkAnswerBody {
    pub answers: Vec<AnswerBody>,
}

/// `POST /api/v1/interactions/answer`: several answers in one request (the console's "answer
/// the selected"). Each is checked and journalled on its own, exactly as if it had been sent
/// alone (same checks, same audit record, same idempotency on its message_id), in the order
/// given; one refused answer does not stop the others. 200 with each one's result.
pub async fn answer_many(
    State(app): State<AppState>,
    Owner(p): Owner,
    OriginalUri(uri): OriginalUri,
    ApiJson(body): ApiJson<BulkAnswerBody>,
) -> ApiResult<Json<Value>> {
    if body.answers.is_empty() || body.answers.len() > MAX_BULK {
        return Err(ApiError::Invalid {
            field: "answers".into(),
            message: format!("answers: send between 1 and {MAX_BULK} answers"),
        });
    }
    let mut results = Vec::with_capacity(body.answers.len());
    for a in body.answers {
        let Some(id) = a.interaction_id.clone() else {
            results.push(BulkAnswerResult {
                interaction_id: String::new(),
                status: 422,
                task: None,
                error: Some(BulkAnswerError {
                    code: "invalid_field".into(),
                    message: "interaction_id: is required in a bulk answer".into(),
                }),
            });
            continue;
        };
        results.push(
            match answer_one(&app, p.clone(), id.clone(), a, uri.path()).await {
                Ok(task) => BulkAnswerResult {
                    interaction_id: id,
                    status: 200,
                    task: Some(task),
                    error: None,
                },
                Err(e) => {
                    let (status, code, message) = e.parts();
                    BulkAnswerResult {
                        interaction_id: id,
                        status: status.as_u16(),
                        task: None,
                        error: Some(BulkAnswerError {
                            code: code.into(),
                            message,
                        }),
                    }
                }
            },
        );
    }
    Ok(Json(json!(BulkAnswerReply { results })))
}

/// One answer: checked and journalled by the runtime, and audited ([`crate::audited`]).
async fn answer_one(
    app: &AppState,
    p: Principal,
    id: String,
    body: AnswerBody,
    route: &str,
) -> ApiResult<AnsweredTask> {
    let request = AnswerRequest {
        principal: p,
        task_id: body.task_id,
        interaction_id: id,
        option: body.option,
        reason: body.reason,
        values: body.values,
        message_id: body.message_id,
        digest: body.digest,
    };
    let task = crate::audited::answer(app, route, request)
        .await
        .map_err(answer_error)?;
    Ok(AnsweredTask {
        state: task.state,
        task_id: task.task_id.into(),
        session_id: task.session_id.into(),
        agent_id: task.agent_id.into(),
        context_id: task.context_id.into(),
        state_at: sextant_core::ids::format_time(task.state_at),
    })
}

/// Maps an answer refusal to the REST error (shared with the MCP bridge's wording).
pub fn answer_error(e: AnswerError) -> ApiError {
    match e {
        AnswerError::NotAllowed(d) => ApiError::Denied {
            code: d.code(),
            message: d.to_string(),
        },
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
