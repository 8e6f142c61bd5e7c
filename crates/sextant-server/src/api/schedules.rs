//! Personal schedules, `/api/v1/me/schedules`: the calling principal's own plans and their
//! Runs. "me" is whoever the credentials say: the console owner (token) or the anonymous
//! loopback caller each have their own schedules, and neither sees the other's (404). An
//! assistant's workspace token acts for its owner ([`actor`]): it sees and manages the owner's
//! plans, and the plans it creates record it as their source. Every operation is scoped in
//! `sextant-scheduler`; these handlers parse, call and shape JSON. The changes (create, update,
//! delete, run now, replay, cancel a Run) go through [`crate::audited`], which records each as
//! it records the same MCP tool.
//!
//! Also here: the owner-only access endpoint, `/api/v1/agents/{agent_id}/access`, that revokes
//! and restores a principal's access to an Agent.
//!
//! Bodies are JSON objects with the snake_case field names of the API; a field error answers
//! 422 `{"error": {"code": "invalid_field", "message", "field"}}`. Requests that change
//! something (POST, PATCH, PUT) must say `Content-Type: application/json`, bodies or not.

use axum::Json;
use axum::extract::{Extension, OriginalUri, Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use sextant_core::{MissedRunPolicy, OverlapPolicy, Principal, ScheduleSource};
use sextant_scheduler::{Actor, Error as SchedError, RunView, ScheduleFields, ScheduleView};

use crate::AppState;
use crate::api::{decode_cursor, encode_cursor};
use crate::audited;
use crate::auth::AssistantGrant;
use crate::error::{ApiError, ApiResult};
use crate::extract::{ApiJson, JsonContentType, Owner};
use crate::urls::base_url;

impl From<SchedError> for ApiError {
    fn from(e: SchedError) -> Self {
        match e {
            SchedError::Invalid(f) => ApiError::Invalid {
                field: f.field.to_string(),
                message: format!("{}: {}", f.field, f.message),
            },
            SchedError::NotFound => ApiError::NotFound("no such schedule or run".into()),
            SchedError::Forbidden(why) => ApiError::Forbidden(why),
            SchedError::Conflict(why) => ApiError::Conflict(why),
            SchedError::Journal(e) => ApiError::Internal(e.to_string()),
        }
    }
}

/// Whom a schedules request acts for: the caller itself, or, for an assistant's workspace
/// token, the assistant acting for its owner.
pub fn actor(p: &Principal, grant: Option<&AssistantGrant>) -> ApiResult<Actor> {
    match grant {
        None => Ok(Actor::itself(p)),
        Some(g) if g.is_workspace_token() => g
            .owner_principal()
            .map(|owner| Actor::assistant(owner, p.clone()))
            .ok_or_else(|| ApiError::Unauthorized("this assistant acts for nobody here".into())),
        Some(_) => Err(ApiError::Unauthorized(
            "this credential reaches one Agent's A2A surface; schedules take the assistant's \
             workspace token"
                .into(),
        )),
    }
}

/// Refuses a write with every field error at once (a form shows them all), if there is one.
fn every_field(errors: Vec<sextant_scheduler::cron::FieldError>) -> ApiResult<()> {
    if errors.is_empty() {
        return Ok(());
    }
    Err(ApiError::InvalidFields(
        errors
            .into_iter()
            .map(|f| (f.field.to_string(), format!("{}: {}", f.field, f.message)))
            .collect(),
    ))
}

fn invalid(field: &str, message: impl std::fmt::Display) -> ApiError {
    ApiError::Invalid {
        field: field.to_string(),
        message: format!("{field}: {message}"),
    }
}

/// Fields a client may send.
const WRITABLE: &[&str] = &[
    "name",
    "prompt",
    "cron",
    "once_at",
    "when",
    "timezone",
    "agent_id",
    "enabled",
    "missed_run_policy",
    "missed_run_grace_secs",
    "overlap_policy",
    "jitter_secs",
    "pause_after_failures",
];
/// Fields of a schedule as shown, ignored on input so a client can send back what it read.
const READ_ONLY: &[&str] = &[
    "id",
    "description",
    "next_runs",
    "next_fire_at",
    "finished",
    "access",
    "history",
    "consecutive_failures",
    "paused",
    "source_assistant",
    "understood",
    "created_at",
    "updated_at",
    "url",
    "runs_url",
];

fn overlap_policy(k: &str, v: &Value) -> ApiResult<OverlapPolicy> {
    v.as_str().and_then(OverlapPolicy::parse).ok_or_else(|| {
        invalid(
            k,
            "must be \"skip\", \"buffer_one\", \"buffer_all\", \"allow_all\" or \
             \"cancel_previous\"",
        )
    })
}

/// Reads the schedule fields of a body (and, on create, `source`).
fn parse_fields(
    obj: &Map<String, Value>,
    creating: bool,
) -> ApiResult<(ScheduleFields, Option<ScheduleSource>)> {
    let mut f = ScheduleFields::default();
    let mut source = None;
    let string = |k: &str, v: &Value| -> ApiResult<String> {
        v.as_str()
            .map(String::from)
            .ok_or_else(|| invalid(k, "must be a string"))
    };
    for (k, v) in obj {
        match k.as_str() {
            "name" => f.name = Some(string(k, v)?),
            "prompt" => f.prompt = Some(string(k, v)?),
            // A client sending back what it read sends `null` for the kind it is not.
            "cron" | "once_at" if v.is_null() => {}
            "cron" => f.cron = Some(string(k, v)?),
            "once_at" => f.once_at = Some(string(k, v)?),
            "when" => f.when = Some(string(k, v)?),
            "overlap_policy" => f.overlap_policy = Some(overlap_policy(k, v)?),
            "jitter_secs" => {
                f.jitter_secs = Some(
                    v.as_i64()
                        .ok_or_else(|| invalid(k, "must be a whole number of seconds"))?,
                )
            }
            "pause_after_failures" => {
                f.pause_after_failures = Some(match v {
                    Value::Null => None,
                    v => Some(v.as_i64().ok_or_else(|| {
                        invalid(k, "must be a whole number of failed Runs, or null (never)")
                    })?),
                })
            }
            "timezone" => f.timezone = Some(string(k, v)?),
            "agent_id" => f.agent_id = Some(string(k, v)?),
            "enabled" => {
                f.enabled = Some(
                    v.as_bool()
                        .ok_or_else(|| invalid(k, "must be true or false"))?,
                )
            }
            "missed_run_policy" => {
                let s = string(k, v)?;
                f.missed_run_policy = Some(
                    MissedRunPolicy::parse(&s)
                        .ok_or_else(|| invalid(k, "must be \"skip\" or \"run_once\""))?,
                );
            }
            "missed_run_grace_secs" => {
                f.missed_run_grace_secs = Some(
                    v.as_i64()
                        .ok_or_else(|| invalid(k, "must be a whole number of seconds"))?,
                )
            }
            "source" if creating => {
                source = match v.as_str() {
                    Some("console") => Some(ScheduleSource::Console),
                    Some("api") => Some(ScheduleSource::Api),
                    _ => {
                        return Err(invalid(
                            k,
                            "must be \"console\" or \"api\" (assistant runtimes are recognised \
                             by their credentials)",
                        ));
                    }
                };
            }
            k if READ_ONLY.contains(&k) || k == "source" => {}
            k => {
                return Err(invalid(
                    k,
                    format!("is not a schedule field; use {}", WRITABLE.join(", ")),
                ));
            }
        }
    }
    Ok((f, source))
}

fn schedule_json(v: &ScheduleView, base: &str) -> Value {
    let mut j = serde_json::to_value(v).unwrap_or(Value::Null);
    j["url"] = json!(format!("{base}/api/v1/me/schedules/{}", v.id));
    j["runs_url"] = json!(format!("{base}/api/v1/me/schedules/{}/runs", v.id));
    j
}

fn run_json(r: &RunView, base: &str) -> Value {
    let mut j = serde_json::to_value(r).unwrap_or(Value::Null);
    j["url"] = json!(format!(
        "{base}/api/v1/me/schedules/{}/runs/{}",
        r.schedule_id, r.id
    ));
    j["session_url"] = json!(
        r.session_id
            .as_ref()
            .map(|s| format!("{base}/sessions/{s}"))
    );
    j["session_api_url"] = json!(
        r.session_id
            .as_ref()
            .map(|s| format!("{base}/api/v1/sessions/{s}"))
    );
    j
}

/// `GET /api/v1/me/schedules`: the caller's schedules, newest first.
pub async fn list(
    State(app): State<AppState>,
    Extension(p): Extension<Principal>,
    grant: Option<Extension<AssistantGrant>>,
    headers: HeaderMap,
) -> ApiResult<Json<Value>> {
    let base = base_url(&app, &headers);
    let me = actor(&p, grant.as_deref())?;
    let list = app.scheduler.list(&me.owner).await?;
    Ok(Json(json!({
        "schedules": list.iter().map(|s| schedule_json(s, &base)).collect::<Vec<_>>(),
    })))
}

/// `POST /api/v1/me/schedules`: creates a schedule owned by, and executing as, the caller.
pub async fn create(
    State(app): State<AppState>,
    Extension(p): Extension<Principal>,
    grant: Option<Extension<AssistantGrant>>,
    headers: HeaderMap,
    OriginalUri(uri): OriginalUri,
    ApiJson(body): ApiJson<Map<String, Value>>,
) -> ApiResult<Response> {
    let me = actor(&p, grant.as_deref())?;
    let (fields, source) = parse_fields(&body, true)?;
    every_field(app.scheduler.field_errors(&fields, true))?;
    let v = audited::create_schedule(
        &app,
        uri.path(),
        &me,
        fields,
        source.unwrap_or(ScheduleSource::Api),
    )
    .await?;
    let base = base_url(&app, &headers);
    let location = format!("/api/v1/me/schedules/{}", v.id);
    Ok((
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        Json(schedule_json(&v, &base)),
    )
        .into_response())
}

/// `GET /api/v1/me/schedules/{id}`.
pub async fn get(
    State(app): State<AppState>,
    Extension(p): Extension<Principal>,
    grant: Option<Extension<AssistantGrant>>,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> ApiResult<Json<Value>> {
    let me = actor(&p, grant.as_deref())?;
    let v = app.scheduler.get(&me.owner, &id).await?;
    Ok(Json(schedule_json(&v, &base_url(&app, &headers))))
}

/// `PATCH /api/v1/me/schedules/{id}`: changes the fields sent; the others keep their value.
pub async fn update(
    State(app): State<AppState>,
    Extension(p): Extension<Principal>,
    grant: Option<Extension<AssistantGrant>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    OriginalUri(uri): OriginalUri,
    ApiJson(body): ApiJson<Map<String, Value>>,
) -> ApiResult<Json<Value>> {
    let me = actor(&p, grant.as_deref())?;
    let (fields, _) = parse_fields(&body, false)?;
    every_field(app.scheduler.field_errors(&fields, false))?;
    let v = audited::update_schedule(&app, uri.path(), &me, &id, fields).await?;
    Ok(Json(schedule_json(&v, &base_url(&app, &headers))))
}

/// `DELETE /api/v1/me/schedules/{id}`: the schedule and its Run history (the Sessions stay).
pub async fn delete(
    State(app): State<AppState>,
    Extension(p): Extension<Principal>,
    grant: Option<Extension<AssistantGrant>>,
    Path(id): Path<String>,
    OriginalUri(uri): OriginalUri,
) -> ApiResult<StatusCode> {
    let me = actor(&p, grant.as_deref())?;
    audited::delete_schedule(&app, uri.path(), &me, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `GET /api/v1/me/schedules/{id}/grants`: its "Always allow for this schedule" approvals,
/// newest first, each with the exact action it approves, who gave it, when, and whether it
/// still applies (`active` is false once the schedule's prompt or Agent changed).
pub async fn grants(
    State(app): State<AppState>,
    Extension(p): Extension<Principal>,
    grant: Option<Extension<AssistantGrant>>,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    let me = actor(&p, grant.as_deref())?;
    let grants = app.scheduler.grants(&me.owner, &id).await?;
    Ok(Json(json!({ "grants": grants })))
}

/// `DELETE /api/v1/me/schedules/{id}/grants/{grant_id}`: revokes one; the next Run whose
/// card it would have skipped asks again.
pub async fn revoke_grant(
    State(app): State<AppState>,
    Extension(p): Extension<Principal>,
    grant: Option<Extension<AssistantGrant>>,
    Path((id, grant_id)): Path<(String, String)>,
) -> ApiResult<StatusCode> {
    let me = actor(&p, grant.as_deref())?;
    app.scheduler
        .revoke_grant(&me.owner, &id, &grant_id)
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /api/v1/me/schedules/{id}/run` (`{"prompt"?: string}`): a Run now (201 with the Run;
/// `blocked` if the caller may no longer call the Agent). With a `prompt`, that Run sends it
/// instead of the plan's (the plan is unchanged, and the Run says so).
pub async fn run_now(
    State(app): State<AppState>,
    Extension(p): Extension<Principal>,
    grant: Option<Extension<AssistantGrant>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    OriginalUri(uri): OriginalUri,
    ApiJson(body): ApiJson<Value>,
) -> ApiResult<Response> {
    // The scheduler checks the prompt itself (empty, too long), naming the field.
    let prompt = match body.get("prompt") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => {
            return Err(ApiError::Invalid {
                field: "prompt".into(),
                message: "prompt must be a string".into(),
            });
        }
    };
    let me = actor(&p, grant.as_deref())?;
    let run = audited::run_schedule_now(&app, uri.path(), &me, &id, prompt.as_deref()).await?;
    Ok(created_run(&app, &headers, &run))
}

/// `POST /api/v1/me/schedules/{id}/runs/{run_id}/replay`: a new Run with the earlier Run's
/// exact prompt and Agent.
pub async fn replay(
    State(app): State<AppState>,
    Extension(p): Extension<Principal>,
    grant: Option<Extension<AssistantGrant>>,
    Path((id, run_id)): Path<(String, String)>,
    headers: HeaderMap,
    OriginalUri(uri): OriginalUri,
    _: JsonContentType,
) -> ApiResult<Response> {
    let me = actor(&p, grant.as_deref())?;
    let run = audited::replay_schedule_run(&app, uri.path(), &me, &id, &run_id).await?;
    Ok(created_run(&app, &headers, &run))
}

fn created_run(app: &AppState, headers: &HeaderMap, run: &RunView) -> Response {
    let location = format!("/api/v1/me/schedules/{}/runs/{}", run.schedule_id, run.id);
    (
        StatusCode::CREATED,
        [(header::LOCATION, location)],
        Json(run_json(run, &base_url(app, headers))),
    )
        .into_response()
}

#[derive(Debug, Deserialize)]
pub struct RunsQuery {
    #[serde(default)]
    cursor: Option<String>,
    #[serde(default)]
    limit: Option<u32>,
}

/// `GET /api/v1/me/schedules/{id}/runs?cursor&limit`: Runs, newest first.
pub async fn runs(
    State(app): State<AppState>,
    Extension(p): Extension<Principal>,
    grant: Option<Extension<AssistantGrant>>,
    Path(id): Path<String>,
    Query(q): Query<RunsQuery>,
    headers: HeaderMap,
) -> ApiResult<Json<Value>> {
    let limit = match q.limit {
        None => 50,
        Some(n @ 1..=200) => n,
        Some(_) => return Err(invalid("limit", "must be between 1 and 200")),
    };
    let cursor = q.cursor.as_deref().map(decode_cursor).transpose()?;
    let me = actor(&p, grant.as_deref())?;
    let page = app.scheduler.runs(&me.owner, &id, cursor, limit).await?;
    let base = base_url(&app, &headers);
    Ok(Json(json!({
        "runs": page.runs.iter().map(|r| run_json(r, &base)).collect::<Vec<_>>(),
        "total": page.total,
        "next_cursor": page.next.as_ref().map(encode_cursor),
    })))
}

/// `GET /api/v1/me/schedules/{id}/runs/{run_id}`.
pub async fn run(
    State(app): State<AppState>,
    Extension(p): Extension<Principal>,
    grant: Option<Extension<AssistantGrant>>,
    Path((id, run_id)): Path<(String, String)>,
    headers: HeaderMap,
) -> ApiResult<Json<Value>> {
    let me = actor(&p, grant.as_deref())?;
    let run = app.scheduler.run(&me.owner, &id, &run_id).await?;
    Ok(Json(run_json(&run, &base_url(&app, &headers))))
}

/// `POST /api/v1/me/schedules/preview`, body `{"cron" | "once_at" | "when", "timezone"}`: what the
/// timing means before it is saved (the console's schedule dialog calls it as the person
/// types): its plain-words description and next fire times, or the same field error a save
/// would get. Changes nothing.
pub async fn preview(
    State(app): State<AppState>,
    ApiJson(obj): ApiJson<Map<String, Value>>,
) -> ApiResult<Json<crate::wire::SchedulePreview>> {
    let field = |k: &str| -> ApiResult<Option<String>> {
        match obj.get(k) {
            Some(Value::String(s)) => Ok(Some(s.clone())),
            None | Some(Value::Null) => Ok(None),
            Some(_) => Err(invalid(k, "must be a string")),
        }
    };
    let timezone = field("timezone")?;
    // Every bad field at once, as a save would name them.
    every_field(app.scheduler.field_errors(
        &ScheduleFields {
            cron: field("cron")?,
            once_at: field("once_at")?,
            when: field("when")?,
            timezone: timezone.clone(),
            ..Default::default()
        },
        false,
    ))?;
    let timezone = timezone.ok_or_else(|| invalid("timezone", "is required"))?;
    let now = app.runtime.clock().now();
    let mut cron = field("cron")?;
    let mut once_at = field("once_at")?;
    let mut understood = None;
    if let Some(words) = field("when")? {
        if cron.is_some() || once_at.is_some() {
            return Err(invalid(
                "when",
                "send when (plain words), cron or once_at, one of them",
            ));
        }
        let tz = sextant_scheduler::cron::parse_timezone(&timezone).map_err(SchedError::from)?;
        let u = sextant_scheduler::words::understand(&words, tz, now).map_err(SchedError::from)?;
        cron = u.cron.clone();
        once_at = u.once_at.clone();
        understood = Some(u);
    }
    let (cron, once_at, timing) = match (cron, once_at) {
        (Some(cron), None) => {
            let t = sextant_scheduler::Timing::validate_cron(&cron, &timezone, now)
                .map_err(SchedError::from)?;
            (Some(cron), None, t)
        }
        (None, Some(at)) => {
            let t = sextant_scheduler::Timing::validate_once(&at, &timezone, now)
                .map_err(SchedError::from)?;
            (None, Some(at), t)
        }
        (Some(_), Some(_)) => return Err(invalid("once_at", "send cron or once_at, not both")),
        (None, None) => return Err(invalid("cron", "is required (or once_at)")),
    };
    let next_runs = timing
        .upcoming(now, sextant_scheduler::view::NEXT_RUNS)
        .into_iter()
        .map(|t| sextant_scheduler::view::NextRun::at(t.with_timezone(&chrono::Utc), t.timezone()))
        .collect();
    Ok(Json(crate::wire::SchedulePreview {
        description: timing.describe(),
        cron,
        once_at,
        understood,
        timezone,
        next_runs,
    }))
}

/// `POST /api/v1/me/schedules/{id}/backfill`, body `{"from", "to"[, "overlap_policy"]}`
/// (RFC 3339 times): one `backfill` Run for each slot in `[from, to)`, at most 100, under the
/// backfill's own overlap policy (default `buffer_all`: one at a time, in slot order). 201
/// with the Runs it recorded; slots backfilled before are counted, not run again.
pub async fn backfill(
    State(app): State<AppState>,
    Extension(p): Extension<Principal>,
    grant: Option<Extension<AssistantGrant>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    ApiJson(obj): ApiJson<Map<String, Value>>,
) -> ApiResult<Response> {
    if let Some(k) = obj
        .keys()
        .find(|k| !["from", "to", "overlap_policy"].contains(&k.as_str()))
    {
        return Err(invalid(
            k,
            "is not a backfill field; send from, to, overlap_policy",
        ));
    }
    let time = |k: &str| -> ApiResult<chrono::DateTime<chrono::Utc>> {
        obj.get(k)
            .and_then(Value::as_str)
            .and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok())
            .map(|t| t.to_utc())
            .ok_or_else(|| {
                invalid(
                    k,
                    "is required: an RFC 3339 time, e.g. \"2026-12-01T00:00:00Z\"",
                )
            })
    };
    let (from, to) = (time("from"), time("to"));
    let policy = obj
        .get("overlap_policy")
        .map(|v| overlap_policy("overlap_policy", v))
        .transpose();
    // Every bad field at once, as a form shows them.
    let errors: Vec<(String, String)> = [
        from.as_ref().err(),
        to.as_ref().err(),
        policy.as_ref().err(),
    ]
    .into_iter()
    .flatten()
    .filter_map(|e| match e {
        ApiError::Invalid { field, message } => Some((field.clone(), message.clone())),
        _ => None,
    })
    .collect();
    if errors.len() > 1 {
        return Err(ApiError::InvalidFields(errors));
    }
    let request = sextant_scheduler::Backfill {
        from: from?,
        to: to?,
        overlap_policy: policy?,
    };
    let me = actor(&p, grant.as_deref())?;
    let done = app.scheduler.backfill(&me, &id, request).await?;
    let base = base_url(&app, &headers);
    Ok((
        StatusCode::CREATED,
        Json(json!({
            "runs": done.runs.iter().map(|r| run_json(r, &base)).collect::<Vec<_>>(),
            "already_backfilled": done.already_backfilled,
            "overlap_policy": done.overlap_policy.as_str(),
        })),
    )
        .into_response())
}

/// Most principals one deny list may name.
const MAX_DENIED: usize = 1000;

fn access_json(app: &AppState, agent_id: &str) -> Value {
    let known = [Principal::person(), Principal::anonymous_local()];
    let list = app.runtime.agent(agent_id).map(|a| a.access.clone());
    json!({
        "agent_id": agent_id,
        "default": "allow",
        "access": list,
        "denied": app.runtime.denied(agent_id),
        "principals": known
            .iter()
            .map(|p| json!({ "key": p.key(), "display": p.display() }))
            .collect::<Vec<_>>(),
    })
}

fn known_agent(app: &AppState, agent_id: &str) -> ApiResult<()> {
    if app.runtime.agent(agent_id).is_some() {
        Ok(())
    } else {
        Err(ApiError::NotFound(format!("no agent {agent_id}")))
    }
}

/// `GET /api/v1/agents/{agent_id}/access` (owner only): who is denied this Agent.
pub async fn get_access(
    State(app): State<AppState>,
    _: Owner,
    Path(agent_id): Path<String>,
) -> ApiResult<Json<Value>> {
    known_agent(&app, &agent_id)?;
    Ok(Json(access_json(&app, &agent_id)))
}

/// `PUT /api/v1/agents/{agent_id}/access` (owner only), body `{"denied": [principal keys or
/// access patterns]}`: replaces the Agent's deny list, persisted in the journal. Takes effect
/// on the next operation (input, read, stream re-check, Run).
pub async fn put_access(
    State(app): State<AppState>,
    Owner(p): Owner,
    Path(agent_id): Path<String>,
    ApiJson(obj): ApiJson<Map<String, Value>>,
) -> ApiResult<Json<Value>> {
    known_agent(&app, &agent_id)?;
    if let Some(k) = obj.keys().find(|k| *k != "denied") {
        return Err(invalid(
            k,
            "is not an access field; send {\"denied\": [...]}",
        ));
    }
    let list = obj
        .get("denied")
        .ok_or_else(|| invalid("denied", "is required: a list of principal keys"))?
        .as_array()
        .ok_or_else(|| invalid("denied", "must be a list of principal keys"))?;
    if list.len() > MAX_DENIED {
        return Err(invalid(
            "denied",
            format!("names more than {MAX_DENIED} principals"),
        ));
    }
    let mut keys = Vec::with_capacity(list.len());
    for v in list {
        match v.as_str().map(str::trim) {
            Some(k) if !k.is_empty() && k.len() <= 512 => keys.push(k.to_string()),
            _ => {
                return Err(invalid(
                    "denied",
                    "each entry must be a principal key (1-512 characters)",
                ));
            }
        }
    }
    // Persisted in the journal (it survives restarts), then in force for the next operation.
    app.runtime.update_denied(&agent_id, keys).await?;
    audited::access_changed(&app, &p, &agent_id, &app.runtime.denied(&agent_id));
    tracing::info!(%agent_id, denied = ?app.runtime.denied(&agent_id), "agent access changed");
    // Blocked Runs are decided when they come due; nothing to wake. A change can only make
    // the next one start or be blocked.
    Ok(Json(access_json(&app, &agent_id)))
}

/// `GET /api/v1/me/schedules/pause`: whether every schedule is paused (`{"paused": bool}`).
pub async fn pause_state(State(app): State<AppState>, _: Owner) -> ApiResult<Json<Value>> {
    Ok(Json(json!({ "paused": app.scheduler.is_paused() })))
}

/// `PUT /api/v1/me/schedules/pause` (`{"paused": bool}`): pauses or resumes every schedule.
/// Stored in the journal, so the desktop tray, the console and a restart agree; while paused
/// no slot fires (run now and replay still work), and on resume missed slots follow each
/// plan's missed-run policy.
pub async fn set_pause(
    State(app): State<AppState>,
    _: Owner,
    ApiJson(body): ApiJson<Value>,
) -> ApiResult<Json<Value>> {
    let paused = crate::api::paused_of(&body)?;
    app.scheduler.set_paused(paused).await?;
    Ok(Json(json!({ "paused": app.scheduler.is_paused() })))
}

/// `POST /api/v1/me/schedules/{id}/runs/{run_id}/cancel` (`{"reason"?: string}`): cancels the
/// Run's task (queued, running or waiting); the Run (409 when its task has ended or it started
/// none).
pub async fn cancel_run(
    State(app): State<AppState>,
    Extension(p): Extension<Principal>,
    grant: Option<Extension<AssistantGrant>>,
    Path((id, run_id)): Path<(String, String)>,
    OriginalUri(uri): OriginalUri,
    ApiJson(body): ApiJson<Value>,
) -> ApiResult<Json<RunView>> {
    let reason = crate::api::reason_of(&body)?;
    let me = actor(&p, grant.as_deref())?;
    let run = audited::cancel_schedule_run(&app, uri.path(), &me, &id, &run_id, reason).await?;
    Ok(Json(run))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(body: &str) -> Map<String, Value> {
        crate::extract::parse(body.as_bytes()).unwrap()
    }

    #[test]
    fn fields_are_parsed_by_name_with_field_errors() {
        let body = object(
            r#"{"name":"n","prompt":"p","cron":"* * * * *","timezone":"UTC",
                 "agent_id":"echo","enabled":false,"missed_run_policy":"run_once",
                 "missed_run_grace_secs":120,"source":"console","id":"ignored"}"#,
        );
        let (f, source) = parse_fields(&body, true).unwrap();
        assert_eq!(f.name.as_deref(), Some("n"));
        assert_eq!(f.enabled, Some(false));
        assert_eq!(f.missed_run_policy, Some(MissedRunPolicy::RunOnce));
        assert_eq!(f.missed_run_grace_secs, Some(120));
        assert_eq!(source, Some(ScheduleSource::Console));

        let field = |b: &str| match parse_fields(&object(b), true) {
            Err(ApiError::Invalid { field, .. }) => field,
            other => panic!("expected a field error: {other:?}"),
        };
        assert_eq!(field(r#"{"cron": 5}"#), "cron");
        assert_eq!(field(r#"{"enabled": "yes"}"#), "enabled");
        assert_eq!(
            field(r#"{"missed_run_policy": "later"}"#),
            "missed_run_policy"
        );
        assert_eq!(field(r#"{"source": "assistant"}"#), "source");
        assert_eq!(field(r#"{"schedule": "x"}"#), "schedule");
        assert!(matches!(
            crate::extract::parse::<Map<String, Value>>(b"[1]"),
            Err(ApiError::BadRequest(_))
        ));
        assert!(parse_fields(&object(""), false).is_ok());
    }
}
