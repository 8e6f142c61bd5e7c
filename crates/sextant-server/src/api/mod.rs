//! The console's REST API (`/api/v1`): Agents, Sessions with their public transcripts, tasks,
//! and live SSE streams of both. Only the console owner (the data-dir token) may use it: it
//! shows every caller's conversations.
//!
//! The room: [`interactions`] (the approvals inbox), [`schedules`] (personal schedules, and
//! the owner's Agent access switch), [`peers`] (outbound peers and the A2A client tools),
//! [`credentials`] (issuing and revoking peer and assistant tokens) and [`audit`] (reading the
//! audit log). Here: the owner-only guard, page cursors, and the Agents, Sessions and tasks
//! routes.

pub mod audit;
pub mod credentials;
pub mod interactions;
pub mod peers;
pub mod schedules;

use std::convert::Infallible;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde::Deserialize;
use serde_json::{Value, json};
use sextant_core::JournalEvent;
use sextant_core::event::state_wire;
use sextant_core::projection::blocks;
use sextant_journal::queries::sessions::Provenance;
use sextant_journal::{SessionRow, TaskFilter, TaskStatus};
use tokio::sync::broadcast::error::RecvError;

use crate::AppState;
use crate::cards::card;
use crate::error::{ApiError, ApiResult};
use crate::extract::{ApiJson, Owner};
use crate::urls::base_url;
use crate::wire::{
    AgentList, AgentSummary, AnswerDetail, InteractionChange, InteractionChangeKind, RunLink,
    SessionDetail, SessionSummary, SessionsPage, TaskChange, TaskCounts, TaskSummary, TasksPage,
};

/// `GET /api/v1/health`: liveness, for scripts and the desktop shell.
pub async fn health() -> Json<Value> {
    Json(json!({ "status": "ok", "version": env!("CARGO_PKG_VERSION") }))
}

/// `GET /api/v1/agents`: every Agent with its card.
pub async fn agents(
    State(app): State<AppState>,
    _: Owner,
    headers: HeaderMap,
) -> ApiResult<Json<Value>> {
    let base = base_url(&app, &headers);
    let agents = app
        .runtime
        .agents()
        .iter()
        .map(|a| AgentSummary {
            agent_id: a.id.clone(),
            name: a.name.clone(),
            description: a.description.clone(),
            engine: a.engine.kind().to_string(),
            default: a.id == app.config.default_agent,
            card_url: format!("{base}/api/v1/agents/{}/.well-known/agent-card.json", a.id),
            card: card(a, &base),
            paused: app.runtime.agent_paused(&a.id),
        })
        .collect();
    Ok(Json(json!(AgentList { agents })))
}

/// `PUT /api/v1/agents/{id}/paused` (`{"paused": bool}`): pauses or resumes an Agent. While
/// paused, new messages are refused (A2A -32004 saying so; a schedule's Run fails saying so)
/// and queued tasks wait; resuming starts them. Stored, so a restart keeps it.
pub async fn set_agent_paused(
    State(app): State<AppState>,
    _: Owner,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<Value>,
) -> ApiResult<Json<Value>> {
    let paused = paused_of(&body)?;
    if !app.runtime.set_agent_paused(&id, paused).await? {
        return Err(ApiError::NotFound(format!("no agent {id}")));
    }
    Ok(Json(json!({ "agentId": id, "paused": paused })))
}

/// `POST /api/v1/agents/{id}/stop-all` (`{"reason"?: string}`): cancels every unfinished task
/// of the Agent (queued, running, waiting), each as `POST /api/v1/tasks/{id}/cancel` does.
pub async fn stop_agent(
    State(app): State<AppState>,
    Owner(p): Owner,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<Value>,
) -> ApiResult<Json<Value>> {
    if app.runtime.agent(&id).is_none() {
        return Err(ApiError::NotFound(format!("no agent {id}")));
    }
    let reason = reason_of(&body)?;
    let request = sextant_runtime::CancelRequest {
        by: p.display(),
        reason,
    };
    let canceled = app.runtime.stop_all(&id, &request).await?;
    Ok(Json(json!({ "agentId": id, "canceled": canceled })))
}

/// An optional string field of a small write's body, at most `max` characters; trimmed, and
/// `None` when empty.
pub(crate) fn optional_text(body: &Value, field: &str, max: usize) -> ApiResult<Option<String>> {
    match body.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(r)) if r.chars().count() <= max => {
            Ok(Some(r.trim().to_string()).filter(|r| !r.is_empty()))
        }
        Some(_) => Err(ApiError::Invalid {
            field: field.into(),
            message: format!("{field} must be a string of at most {max} characters"),
        }),
    }
}

/// The optional `reason` of a cancel's body.
pub(crate) fn reason_of(body: &Value) -> ApiResult<Option<String>> {
    optional_text(body, "reason", 2000)
}

/// The `paused` flag of a pause's body (`{"paused": bool}`).
pub(crate) fn paused_of(body: &Value) -> ApiResult<bool> {
    body.get("paused")
        .and_then(Value::as_bool)
        .ok_or_else(|| ApiError::Invalid {
            field: "paused".into(),
            message: "paused must be true or false".into(),
        })
}

#[derive(Debug, Deserialize)]
pub struct PageQuery {
    #[serde(default)]
    cursor: Option<String>,
    #[serde(default)]
    limit: Option<u32>,
    #[serde(default)]
    agent: Option<String>,
    #[serde(default)]
    state: Option<String>,
    /// `unfinished`, `active`, `waiting`, or an outcome (`completed`, `declined`, …).
    #[serde(default)]
    status: Option<String>,
    /// Words to find in the tasks' text (inputs, outputs, questions, reasons).
    #[serde(default)]
    q: Option<String>,
    /// A caller's principal key.
    #[serde(default)]
    caller: Option<String>,
    /// A schedule id: the tasks of its Runs.
    #[serde(default)]
    schedule: Option<String>,
    /// Who the conversations are from: `mine`, `agents` or `schedules`.
    #[serde(default)]
    origin: Option<String>,
    /// Tasks created at or after / before these instants (RFC 3339).
    #[serde(default)]
    from: Option<String>,
    #[serde(default)]
    to: Option<String>,
}

/// An RFC 3339 instant of the query, in the journal's stored format.
fn instant(name: &str, v: &Option<String>) -> ApiResult<Option<chrono::DateTime<chrono::Utc>>> {
    let Some(v) = v.as_deref().filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    chrono::DateTime::parse_from_rfc3339(v)
        .map(|t| Some(t.to_utc()))
        .map_err(|_| {
            ApiError::BadRequest(format!(
                "{name} must be an RFC 3339 time, e.g. 2026-12-01T00:00:00Z"
            ))
        })
}

/// The query's `origin` (empty: any).
fn provenance(q: &PageQuery) -> ApiResult<Option<Provenance>> {
    let Some(v) = q.origin.as_deref().filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    Provenance::parse(v).map(Some).ok_or_else(|| {
        ApiError::BadRequest(format!(
            "origin {v:?} is not one of {}",
            Provenance::ALL.map(|p| p.as_str()).join(", ")
        ))
    })
}

fn nonempty(v: &Option<String>) -> Option<String> {
    v.clone().filter(|v| !v.is_empty())
}

fn limit(q: &PageQuery) -> ApiResult<u32> {
    match q.limit {
        None => Ok(50),
        Some(n @ 1..=200) => Ok(n),
        Some(_) => Err(ApiError::BadRequest(
            "limit must be between 1 and 200".into(),
        )),
    }
}

/// An opaque page cursor (ListTasks `pageToken` and the console's `cursor`): the last row's
/// (time, id), base64url.
pub(crate) fn encode_cursor(c: &(String, String)) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{}\n{}", c.0, c.1))
}

/// Reads a cursor made by [`encode_cursor`]; `None` for anything else.
pub(crate) fn parse_cursor(s: &str) -> Option<(String, String)> {
    use base64::Engine;
    let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(s)
        .ok()?;
    let s = String::from_utf8(raw).ok()?;
    let (a, b) = s.split_once('\n')?;
    Some((a.to_string(), b.to_string()))
}

pub(crate) fn decode_cursor(s: &str) -> ApiResult<(String, String)> {
    parse_cursor(s)
        .ok_or_else(|| ApiError::BadRequest("cursor is not one this server gave out".into()))
}

/// `GET /api/v1/sessions?origin&cursor&limit`: Sessions, most recently active first;
/// `origin` keeps the person's own (`mine`), other agents' (`agents`) or schedules' Runs'
/// (`schedules`).
pub async fn sessions(
    State(app): State<AppState>,
    _: Owner,
    Query(q): Query<PageQuery>,
    headers: HeaderMap,
) -> ApiResult<Json<Value>> {
    let limit = limit(&q)?;
    let from = provenance(&q)?;
    let cursor = q.cursor.as_deref().map(decode_cursor).transpose()?;
    let (rows, total) = app
        .runtime
        .journal()
        .list_sessions(None, from, cursor, limit + 1)
        .await?;
    let base = base_url(&app, &headers);
    let more = rows.len() > limit as usize;
    let rows = &rows[..rows.len().min(limit as usize)];
    let next = if more {
        rows.last().map(|s| {
            encode_cursor(&(
                sextant_core::ids::format_time(s.updated_at),
                s.session_id.to_string(),
            ))
        })
    } else {
        None
    };
    Ok(Json(json!(SessionsPage {
        sessions: rows.iter().map(|s| SessionSummary::new(s, &base)).collect(),
        total,
        next_cursor: next,
    })))
}

async fn session_or_404(app: &AppState, id: &str) -> ApiResult<SessionRow> {
    app.runtime
        .journal()
        .session(id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no session {id}")))
}

/// `GET /api/v1/sessions/{id}`: the public transcript of a Session, with its tasks.
pub async fn session(
    State(app): State<AppState>,
    _: Owner,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> ApiResult<Json<Value>> {
    let s = session_or_404(&app, &id).await?;
    let journal = app.runtime.journal();
    let tasks = journal.session_tasks(&id).await?;
    let mut transcript = Vec::new();
    let mut after = 0;
    loop {
        let page = journal.session_events(&id, after, 1000).await?;
        let Some(last) = page.last() else { break };
        after = last.seq;
        transcript.extend(page.iter().flat_map(blocks));
    }
    let base = base_url(&app, &headers);
    // A Session a schedule's Run created links back to that Run (the Run links to it too).
    let run = journal.run_by_session(&id).await?.map(|r| RunLink {
        url: format!(
            "{base}/api/v1/me/schedules/{}/runs/{}",
            r.schedule_id, r.run_id
        ),
        run_id: r.run_id.into(),
        schedule_id: r.schedule_id.into(),
        trigger: r.trigger,
    });
    Ok(Json(json!(SessionDetail {
        session: SessionSummary::new(&s, &base),
        tasks: tasks.iter().map(TaskSummary::from).collect(),
        transcript,
        run,
    })))
}

fn last_event_id(headers: &HeaderMap) -> i64 {
    headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// `GET /api/v1/sessions/{id}/events`: the transcript blocks as SSE, live, resumable with
/// `Last-Event-ID` (the journal seq). One SSE event per block; blocks of one journal event
/// share its seq.
pub async fn session_events(
    State(app): State<AppState>,
    _: Owner,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    session_or_404(&app, &id).await?;
    let after = last_event_id(&headers);
    let events = sextant_runtime::stream::session_events(app.runtime.journal(), &id, after);
    let sse = events.flat_map(|ev| {
        let out: Vec<Result<Event, Infallible>> = match ev {
            Ok(ev) => blocks(&ev)
                .into_iter()
                .map(|b| {
                    Ok(Event::default()
                        .id(ev.seq.to_string())
                        .event("block")
                        .data(json!(b).to_string()))
                })
                .collect(),
            Err(e) => {
                tracing::error!(error = %e, "session stream failed");
                vec![Ok(Event::default().event("error").data(
                    json!({"error": {"code": "internal", "message": "stream failed"}}).to_string(),
                ))]
            }
        };
        futures::stream::iter(out)
    });
    let sse = sse.take_until(app.shutdown.clone().cancelled_owned());
    Ok(Sse::new(sse)
        .keep_alive(KeepAlive::new().interval(crate::SSE_KEEP_ALIVE))
        .into_response())
}

/// `GET /api/v1/tasks?q&agent&state&status&caller&schedule&origin&from&to&cursor&limit`:
/// every caller's tasks, newest activity first, each with what it is (title, result, origin).
/// `origin` is who the task's Session is from: `mine`, `agents` or `schedules`.
/// `q` searches the tasks' text (every word, as a prefix; the match comes back in `matched`);
/// `agent` ending in `*` is a prefix (`peer:*`); `status` is where the task is in words
/// (`unfinished`, `active`, `waiting`) or how it ended (an outcome word).
pub async fn tasks(
    State(app): State<AppState>,
    _: Owner,
    Query(q): Query<PageQuery>,
) -> ApiResult<Json<Value>> {
    let limit = limit(&q)?;
    let state = match &q.state {
        Some(s) => Some(
            sextant_core::event::parse_state(s)
                .ok_or_else(|| ApiError::BadRequest(format!("state {s:?} is not a task state")))?,
        ),
        None => None,
    };
    let status = match &q.status {
        Some(s) => Some(TaskStatus::parse(s).ok_or_else(|| {
            ApiError::BadRequest(format!(
                "status {s:?} is not one of unfinished, active, waiting, {}",
                sextant_core::TaskOutcome::ALL
                    .map(|o| o.as_str())
                    .join(", ")
            ))
        })?),
        None => None,
    };
    let text =
        q.q.as_deref()
            .and_then(sextant_journal::queries::search::fts_query);
    let agent = nonempty(&q.agent);
    let (page, digests) = app
        .runtime
        .journal()
        .list_task_digests(
            TaskFilter {
                agent_id: agent.clone().filter(|a| !a.ends_with('*')),
                agent_prefix: agent
                    .as_deref()
                    .and_then(|a| a.strip_suffix('*'))
                    .map(String::from),
                state,
                status,
                caller: nonempty(&q.caller),
                schedule_id: nonempty(&q.schedule),
                from: provenance(&q)?,
                created_at_or_after: instant("from", &q.from)?,
                created_before: instant("to", &q.to)?,
                text: text.clone(),
                cursor: q.cursor.as_deref().map(decode_cursor).transpose()?,
                limit,
                ..Default::default()
            },
            text,
        )
        .await?;
    Ok(Json(json!(TasksPage {
        tasks: page
            .tasks
            .iter()
            .zip(digests)
            .map(|(t, (d, hit))| TaskSummary::with_digest(t, d, hit))
            .collect(),
        total: page.total,
        next_cursor: page.next.as_ref().map(encode_cursor),
    })))
}

/// `GET /api/v1/tasks/counts`: every caller's unfinished tasks, by state.
pub async fn task_counts(State(app): State<AppState>, _: Owner) -> ApiResult<Json<Value>> {
    let c = app.runtime.journal().task_counts().await?;
    Ok(Json(json!(TaskCounts {
        unfinished: c.submitted + c.working + c.input_required + c.auth_required,
        submitted: c.submitted,
        working: c.working,
        waiting: c.input_required + c.auth_required,
        input_required: c.input_required,
        auth_required: c.auth_required,
    })))
}

/// `GET /api/v1/tasks/{id}`: one task of any caller (the console's task page; it finds the
/// task's Session here, then reads and streams that Session's blocks of this task).
pub async fn task(
    State(app): State<AppState>,
    _: Owner,
    Path(id): Path<String>,
) -> ApiResult<Json<Value>> {
    let row = app
        .runtime
        .journal()
        .task(&id)
        .await?
        .ok_or_else(|| ApiError::NotFound(format!("no task {id}")))?;
    let digest = app.runtime.journal().task_digest(row.clone()).await?;
    Ok(Json(json!(TaskSummary::with_digest(&row, digest, None))))
}

/// `POST /api/v1/tasks/{id}/cancel` (`{"reason"?: string}`): the owner cancels any caller's
/// task, queued, running or waiting for a decision (see `Runtime::cancel`); the task as it is
/// then. Canceling a canceled task returns it again; an ended one is 409.
pub async fn cancel_task(
    State(app): State<AppState>,
    Owner(p): Owner,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<Value>,
) -> ApiResult<Json<Value>> {
    let reason = reason_of(&body)?;
    let request = sextant_runtime::CancelRequest {
        by: p.display(),
        reason,
    };
    use sextant_runtime::CancelOutcome;
    let row = match app.runtime.cancel(&id, &request).await? {
        CancelOutcome::Canceled(row) | CancelOutcome::AlreadyCanceled(row) => row,
        CancelOutcome::AlreadyEnded(state) => {
            return Err(ApiError::Conflict(format!(
                "task {id} has already ended ({}); it cannot be canceled",
                state_wire(&state)
            )));
        }
        CancelOutcome::NotFound => return Err(ApiError::NotFound(format!("no task {id}"))),
    };
    let digest = app.runtime.journal().task_digest(row.clone()).await?;
    Ok(Json(json!(TaskSummary::with_digest(&row, digest, None))))
}

/// `GET /api/v1/tasks/events`: SSE of every task's state changes (`event: task`), of
/// interactions raised and answered (`event: interaction`), and of schedule notices (`event:
/// schedule`: a plan started failing, recovered, or was paused after failures), for the live
/// views and the desktop's notifications. A consumer that falls behind gets a `resync` event
/// and should re-read `GET /api/v1/tasks`.
pub async fn task_events(State(app): State<AppState>, _: Owner) -> ApiResult<Response> {
    let mut rx = app.runtime.journal().hub().subscribe_all();
    let mut notices = app.scheduler.notices();
    let journal = app.runtime.journal().clone();
    let stream = async_stream::stream! {
        loop {
            let ev = tokio::select! {
                ev = rx.recv() => ev,
                notice = notices.recv() => {
                    match notice {
                        Ok(n) => yield Ok(Event::default().event("schedule").data(json!(n).to_string())),
                        // A missed notice is also on the plan and its Runs; nothing to resync.
                        Err(RecvError::Lagged(_)) => {}
                        Err(RecvError::Closed) => return,
                    }
                    continue;
                }
            };
            match ev {
                Ok(ev) => {
                    if let Some(data) = interaction_change(&ev) {
                        yield Ok(Event::default().event("interaction").data(data.to_string()));
                    }
                    if let Some(data) = state_change(&journal, &ev).await {
                        yield Ok::<_, Infallible>(Event::default().event("task").data(data.to_string()));
                    }
                }
                Err(RecvError::Lagged(n)) => {
                    yield Ok(Event::default().event("resync").data(json!({ "missed": n }).to_string()));
                }
                Err(RecvError::Closed) => return,
            }
        }
    };
    let stream = stream.take_until(app.shutdown.clone().cancelled_owned());
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(crate::SSE_KEEP_ALIVE))
        .into_response())
}

/// An interaction raised or answered (the inbox drops a card answered elsewhere at once).
fn interaction_change(ev: &JournalEvent) -> Option<Value> {
    let (change, id) = match &ev.body {
        sextant_core::EventBody::InteractionRaised { interaction } => (
            InteractionChangeKind::Raised {
                detail: Box::new(interaction.public()),
            },
            interaction.interaction_id.clone(),
        ),
        sextant_core::EventBody::InteractionAnswered { answer } => (
            InteractionChangeKind::Answered {
                detail: AnswerDetail {
                    option: answer.option.clone(),
                    answered_by: answer.answered_by.clone(),
                    expired: answer.expired,
                },
            },
            answer.interaction_id.clone(),
        ),
        _ => return None,
    };
    Some(json!(InteractionChange {
        change,
        interaction_id: id,
        task_id: ev.task_id.clone(),
        session_id: ev.session_id.clone(),
        seq: ev.seq,
    }))
}

async fn state_change(journal: &sextant_journal::Journal, ev: &JournalEvent) -> Option<Value> {
    let state = ev.body.new_state()?;
    let task_id = ev.task_id.as_deref()?;
    let row = journal.task(task_id).await.ok().flatten()?;
    // The Runs page follows its schedule's tasks by this (a Run's first task is news to it).
    let (schedule_id, schedule_name) = journal
        .session_schedule(&ev.session_id)
        .await
        .ok()
        .flatten()
        .unzip();
    let title = match &ev.body {
        sextant_core::EventBody::TaskCreated { message } => {
            sextant_journal::queries::search::first_line(&sextant_core::projection::message_text(
                message,
            ))
        }
        _ => None,
    };
    let result = if state.is_terminal() {
        journal
            .task_digest(row.clone())
            .await
            .ok()
            .and_then(|d| d.result)
    } else {
        None
    };
    Some(json!(TaskChange {
        task_id: task_id.to_string(),
        session_id: ev.session_id.clone(),
        agent_id: row.agent_id.into(),
        caller: row.caller.into(),
        context_id: row.context_id.into(),
        state: state.clone(),
        outcome: state.is_terminal().then_some(row.outcome).flatten(),
        schedule_id: schedule_id.map(String::from),
        schedule_name: schedule_name.flatten(),
        title,
        result,
        at: sextant_core::ids::format_time(ev.at),
        seq: ev.seq,
    }))
}
