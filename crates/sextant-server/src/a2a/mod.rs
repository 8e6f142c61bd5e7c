//! The A2A 1.0 service behind every binding, and its bindings: JSON-RPC + SSE
//! ([`jsonrpc`], `POST /api/v1/agents/{agent_id}/a2a`), HTTP+JSON + SSE ([`rest`],
//! `/api/v1/agents/{agent_id}/message:send`, `…/tasks/{id}`, …) and gRPC ([`grpc`],
//! `/lf.a2a.v1.A2AService/{Method}`, the Agent named by the request's `tenant`). A binding
//! reads its wire (envelope, URL or protobuf message, Content-Type, query) into an
//! [`Inbound`] call: the method and its params as ProtoJSON. [`serve`] does the rest, the same for every binding, and answers [`Served`]:
//! a result, a stream of `StreamResponse`s, or an error the binding renders its own way.
//!
//! Order of checks in [`serve`], before any task is looked up: the Agent and the caller's read
//! rights (an unknown Agent and one the caller may not read are the same 404), the method
//! (-32601), `A2A-Version` (-32009), the extended card's credentials (401), call rights for
//! the methods that send or cancel, push-config methods of an Agent without push (-32003),
//! then params (-32602: every field's JSON type first, see `params`, then its value). The
//! push-config methods themselves are `crate::push`'s. Streams carry journal seqs as SSE ids,
//! so `Last-Event-ID` resumes. Pre-1.0 method aliases (JSON-RPC only) are answered in 0.3
//! JSON (see `sextant_a2a::compat`).
//!
//! **Access.** Every request is checked against the Agent's access for the calling principal
//! (`Runtime::authorize`, never cached): without read rights the Agent does not exist for the
//! caller (the same 404 answer as an unknown Agent); sending needs call rights (a read-only
//! caller gets -32004). Another caller's task is TaskNotFound (-32001), never "forbidden".
//! Open streams re-check the caller's credential and access every few seconds and end once
//! either is revoked. Replies to anyone but the console owner are scrubbed of
//! credential-shaped strings (`sextant_core::redact::scrub_outbound`). Every call is audited.
//!
//! **Traces.** `SendMessage` and `SendStreamingMessage` run in an `a2a_inbound_call` span whose
//! parent is the caller's `traceparent` when it is valid W3C (`sextant_a2a::trace`); a
//! malformed one is ignored. Exported only when traces are on (README "Traces").
//!
//! [`assistant`]: the same service on the assistant capability routes
//! (`/api/v1/assistant-a2a/agents/{agent_id}/…`), for assistant runtimes holding an `sxa_` token.
//!
//! **Layers.** The bindings import the service, never the reverse (the router names
//! `jsonrpc::rpc` itself). What others need from here without the service lives in two
//! leaves that import nothing of it: [`surface`] (the surfaces, their route prefixes,
//! `A2A-Version`) and [`tasks`] (who may read a task, answer URLs), so push and cards, which
//! the service calls, do not call back into it (`scripts/import-cycles.py`).

pub mod assistant;
pub mod grpc;
pub mod jsonrpc;
pub mod params;
pub mod parts;
pub mod rest;
pub mod surface;
pub mod tasks;

use std::sync::Arc;
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use futures::{Stream, StreamExt};
use serde_json::{Value, json};
use sextant_a2a::error::Code;
use sextant_a2a::trace::TraceParent;
use sextant_a2a::version::{self, Requested};
use sextant_a2a::{Method, RpcError, compat};
use sextant_core::a2a::{self, Message, Role, TaskState};
use sextant_core::agent::PublicCard;
use sextant_core::event::is_terminal;
use sextant_core::projection::{OutputModes, TaskFold, ViewOptions, blocks};
use sextant_core::{AgentSpec, EventBody, JournalEvent, Principal, PrincipalKind, Rights};
use sextant_journal::{Admitted, Refusal, TaskFilter, TaskRow};
use sextant_runtime::stream::{StopAt, task_events};
use sextant_runtime::{AccessError, AdmitError, Grant, Input};
use tracing::Instrument;

use crate::AppState;
use crate::auth::Credential;
use crate::urls::base_url;
use surface::{RpcSurface, version_param};
use tasks::{Visibility, add_answer_urls, find_task};

/// How often an open stream re-checks its caller's credential and access.
const REVALIDATE: Duration = Duration::from_secs(5);

const LIST_DEFAULT: u32 = 50;
const LIST_MAX: i64 = 100;

/// One A2A call as a binding hands it to [`serve`].
pub(crate) struct Inbound {
    pub app: AppState,
    pub agent_id: String,
    pub principal: Principal,
    pub credential: Credential,
    pub surface: RpcSurface,
    pub headers: HeaderMap,
    pub query: Option<String>,
    /// The route the call came in on (audit).
    pub route: String,
    /// The method as the caller named it (audit, and the "method not found" message).
    pub named: String,
    /// The method, and whether it was named by its 0.3 alias; `None`: no such method.
    pub method: Option<(Method, bool)>,
    /// The params as ProtoJSON (a JSON-RPC `params`, or a REST body with the URL's fields).
    pub params: Value,
}

/// What [`serve`] answers.
pub(crate) enum Served {
    /// A result. `push_extension`: say the push-delivery extension is active.
    Json {
        result: Value,
        push_extension: bool,
    },
    /// `StreamResponse`s, until the task settles, the caller's access ends or Sextant stops.
    Stream(Frames),
    Failed(Failure),
}

/// An error, with what the binding needs beyond it.
pub(crate) struct Failure {
    pub error: RpcError,
    /// The HTTP status when it is not the binding's usual one for the error: 404 for an Agent
    /// the caller cannot see, 401 for a credential the call needs.
    pub status: Option<StatusCode>,
}

impl From<RpcError> for Failure {
    fn from(error: RpcError) -> Self {
        Failure {
            error,
            status: None,
        }
    }
}

pub(crate) type Frames = std::pin::Pin<Box<dyn Stream<Item = Frame> + Send>>;

/// Everything a method handler needs about the call.
struct Call {
    app: AppState,
    principal: Principal,
    surface: RpcSurface,
    agent: Arc<AgentSpec>,
    base: String,
    /// Answer in 0.3 JSON (the method was a pre-1.0 alias).
    legacy: bool,
    /// The inbound `A2A-Hop` count (0 without the header): outbound calls made for this
    /// call's task send it + 1.
    hop: u32,
    last_event_id: Option<i64>,
    /// The caller activated the push-delivery extension (`crate::push::EXTENSION`).
    push_health: bool,
    /// The caller's W3C trace context (`traceparent`), if it sent one that parses.
    trace: Option<TraceParent>,
    /// What the caller may do with the Agent, decided once for this request.
    grant: Grant,
}

/// What a method produced.
enum Reply {
    Json(Value),
    Stream(Frames),
}

/// One SSE frame: a seq (the SSE id) and a `StreamResponse`, or an error that ends the stream.
pub(crate) enum Frame {
    Item(Option<i64>, Value),
    Error(RpcError),
}

/// Says on a response that the push-delivery extension is active (`A2A-Extensions`), for a
/// push-config result asked for with it.
pub(crate) fn say_push_extension(resp: &mut axum::response::Response) {
    resp.headers_mut().insert(
        "a2a-extensions",
        axum::http::HeaderValue::from_static(crate::push::EXTENSION),
    );
}

/// Whether `A2A-Extensions` activates the push-delivery extension (comma-separated URIs, in
/// one header or several).
fn wants_push_health(headers: &HeaderMap) -> bool {
    headers
        .get_all("a2a-extensions")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|u| u.trim() == crate::push::EXTENSION)
}

fn requested_version(headers: &HeaderMap, query: Option<&str>) -> Requested {
    version::parse(version_param(headers, query).as_deref())
}

/// Serves one call, whatever binding carried it (see the module docs for the order of checks).
pub(crate) async fn serve(inbound: Inbound) -> Served {
    let Inbound {
        app,
        agent_id,
        principal,
        credential,
        surface,
        headers,
        query,
        route,
        named,
        method,
        params,
    } = inbound;
    // Without read rights the Agent does not exist for this caller: the same answer as an
    // unknown Agent, so access lists reveal nothing.
    // The request's one access decision: admission takes it with the input instead of
    // checking again.
    let rights = app.runtime.grant(&principal, &agent_id, Rights::Read);
    let (agent, grant) = match (app.runtime.agent(&agent_id), rights) {
        (Some(a), Ok(g)) => (a, g),
        (_, r) => {
            let why = match r {
                Err(e) => e.to_string(),
                Ok(_) => format!("agent {agent_id:?} is not configured"),
            };
            crate::audited::a2a_refused(&app, &principal, &agent_id, &named, &why);
            return Served::Failed(Failure {
                error: RpcError::new(Code::InvalidRequest, format!("no agent {agent_id:?} here")),
                status: Some(StatusCode::NOT_FOUND),
            });
        }
    };
    let Some((method, legacy)) = method else {
        let err = RpcError::new(Code::MethodNotFound, format!("Method not found: {named}"));
        return Served::Failed(err.into());
    };
    if !legacy && let Requested::Other(v) = requested_version(&headers, query.as_deref()) {
        let err = RpcError::new(
            Code::VersionNotSupported,
            format!(
                "A2A version {v:?} is not supported; this server speaks 1.0 (any patch, ASCII digits) \
                 and 0.3 method names"
            ),
        );
        return Served::Failed(err.into());
    }
    if method == Method::GetExtendedAgentCard
        && agent.public_card == PublicCard::Minimal
        && principal.kind == PrincipalKind::AnonymousLocal
    {
        crate::audited::a2a_refused(
            &app,
            &principal,
            &agent_id,
            &named,
            "extended card without credentials",
        );
        let err = RpcError::new(
            Code::InvalidRequest,
            "GetExtendedAgentCard needs authentication with a scheme from the public card \
             (Authorization: Bearer <token>)",
        );
        return Served::Failed(Failure {
            error: err,
            status: Some(StatusCode::UNAUTHORIZED),
        });
    }
    // Canceling stops work, so it needs the right to call, as sending does.
    if matches!(
        method,
        Method::SendMessage | Method::SendStreamingMessage | Method::CancelTask
    ) && grant.rights() < Rights::Call
    {
        let why = AccessError::ReadOnly {
            principal: principal.key(),
            agent: agent_id.clone(),
        };
        crate::audited::a2a_refused(&app, &principal, &agent_id, &named, &why.to_string());
        return Served::Failed(access_refusal(&why).into());
    }
    let last_event_id = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<i64>().ok());
    let scrub = !principal.is_owner();
    // An `a2a` Agent's output is a peer's words: other readers get them filtered for
    // injection markup too, as inbound text is (the person's console keeps them raw).
    let relayed = scrub && matches!(agent.engine, sextant_core::EngineSpec::A2a { .. });
    let emails = app.security.redact_emails;
    let audit = crate::audited::A2aCall::start(&principal, &agent_id, &named, &route);
    let (task_id, context_id) = ids_of(&params);
    let call = Call {
        base: base_url(&app, &headers),
        // The perimeter refused a hop header that is not a number below the limit.
        hop: crate::auth::perimeter::inbound_hop(&headers).unwrap_or(0),
        app,
        principal,
        surface,
        agent,
        legacy,
        last_event_id,
        push_health: wants_push_health(&headers),
        trace: TraceParent::from_headers(&headers),
        grant,
    };
    match dispatch(&call, method, params).await {
        Ok(Reply::Json(result)) => {
            let (t, c) = result_ids(&result);
            audit.answered(&call.app, t.or(task_id), c.or(context_id));
            let mut result = if legacy {
                legacy_result(method, result)
            } else {
                result
            };
            if scrub {
                sextant_core::redact::scrub_json(&mut result, emails);
            }
            if relayed {
                sextant_core::untrusted::filter_json(&mut result);
            }
            Served::Json {
                result,
                push_extension: call.push_health && method.is_push_config(),
            }
        }
        Ok(Reply::Stream(frames)) => {
            audit.stream_opened(&call.app, task_id, context_id);
            let frames: Frames = if scrub || legacy {
                Box::pin(frames.map(move |f| match f {
                    Frame::Item(seq, mut v) => {
                        if scrub {
                            sextant_core::redact::scrub_json(&mut v, emails);
                        }
                        if relayed {
                            sextant_core::untrusted::filter_json(&mut v);
                        }
                        if legacy {
                            v = compat::result_to_v03(v);
                        }
                        Frame::Item(seq, v)
                    }
                    other => other,
                }))
            } else {
                frames
            };
            let frames = Box::pin(frames.take_until(call.app.shutdown.clone().cancelled_owned()));
            let frames: Frames = if call.principal.is_owner() {
                frames
            } else {
                let (app, who, agent) = (
                    call.app.clone(),
                    call.principal.clone(),
                    call.agent.id.clone(),
                );
                Box::pin(frames.take_until(async move {
                    loop {
                        tokio::time::sleep(REVALIDATE).await;
                        if !crate::auth::still_valid(&app, &who, &credential, &agent).await {
                            tracing::debug!(principal = %who.key(), agent, "stream ended: access revoked");
                            return;
                        }
                    }
                }))
            };
            Served::Stream(frames)
        }
        Err(err) => {
            let internal = err.code == Code::Internal;
            audit.failed(&call.app, internal, task_id, context_id, &err.message);
            Served::Failed(err.into())
        }
    }
}

/// The task and context ids a request names (`id`, `message.taskId`, `contextId`, …).
fn ids_of(params: &Value) -> (Option<String>, Option<String>) {
    let s = |v: &Value| v.as_str().map(String::from);
    let task = s(&params["id"])
        .or_else(|| s(&params["message"]["taskId"]))
        .or_else(|| s(&params["message"]["task_id"]));
    let ctx = s(&params["contextId"])
        .or_else(|| s(&params["message"]["contextId"]))
        .or_else(|| s(&params["message"]["context_id"]));
    (task, ctx)
}

/// The task and context ids of a result (a Task, `{task}`, or `{message}`).
fn result_ids(result: &Value) -> (Option<String>, Option<String>) {
    let s = |v: &Value| v.as_str().map(String::from);
    for t in [&result["task"], result] {
        if let Some(id) = s(&t["id"]) {
            return (Some(id), s(&t["contextId"]));
        }
    }
    let m = &result["message"];
    (s(&m["taskId"]), s(&m["contextId"]))
}

/// How a refused access is answered: a read-only caller is told it may not send; anything
/// else is "not found", as for an unknown Agent.
fn access_refusal(e: &AccessError) -> RpcError {
    match e {
        AccessError::ReadOnly { agent, .. } => RpcError::new(
            Code::UnsupportedOperation,
            format!(
                "your access to agent {agent:?} is read-only: you may read your tasks, not send"
            ),
        ),
        AccessError::UnknownAgent(agent)
        | AccessError::NotListed { agent, .. }
        | AccessError::Revoked { agent, .. } => {
            RpcError::new(Code::InvalidRequest, format!("no agent {agent:?} here"))
        }
    }
}

fn legacy_result(method: Method, result: Value) -> Value {
    match method {
        Method::SendMessage => compat::result_to_v03(result),
        Method::GetTask | Method::CancelTask => compat::task_to_v03(result),
        Method::ListTasks => {
            let mut r = result;
            if let Some(tasks) = r.get_mut("tasks").and_then(Value::as_array_mut) {
                for t in tasks.iter_mut() {
                    *t = compat::task_to_v03(t.take());
                }
            }
            r
        }
        Method::CreatePushConfig
        | Method::GetPushConfig
        | Method::ListPushConfigs
        | Method::DeletePushConfig => compat::push_result_to_v03(method, result),
        _ => result,
    }
}

async fn dispatch(call: &Call, method: Method, params: Value) -> Result<Reply, RpcError> {
    // Push configuration of an Agent without push is refused before anything else is read,
    // whatever the params say.
    if method.is_push_config() {
        crate::push::require_push(&call.agent)?;
    }
    let params = params::prepare(method, call.legacy, params)?;
    match method {
        Method::SendMessage | Method::SendStreamingMessage => {
            send(call, params, method == Method::SendStreamingMessage).await
        }
        _ => dispatch_read(call, method, params).await,
    }
}

/// The methods that read tasks (and the extended card), their params type-checked.
async fn dispatch_read(call: &Call, method: Method, params: Value) -> Result<Reply, RpcError> {
    match method {
        Method::GetTask => get_task(call, params).await,
        Method::ListTasks => list_tasks(call, params).await,
        Method::CancelTask => cancel_task(call, params).await,
        Method::SubscribeToTask => subscribe(call, params).await,
        Method::GetExtendedAgentCard => extended_card(call),
        Method::SendMessage | Method::SendStreamingMessage => Err(RpcError::of(Code::Internal)),
        Method::CreatePushConfig
        | Method::GetPushConfig
        | Method::ListPushConfigs
        | Method::DeletePushConfig => push_config(call, method, params).await,
    }
}

/// The push-notification config methods (`crate::push`, shared by every binding).
async fn push_config(call: &Call, method: Method, params: Value) -> Result<Reply, RpcError> {
    let (app, who, agent) = (&call.app, &call.principal, &call.agent);
    let health = call.push_health;
    let result = match method {
        Method::CreatePushConfig => crate::push::create(app, who, agent, &params, health).await,
        // 0.3's `get` may name only the task: it answers with the task's first config.
        Method::GetPushConfig if call.legacy && params.get("id").is_none_or(Value::is_null) => {
            let first = json!({ "taskId": params.get("taskId"), "pageSize": 1 });
            let page = crate::push::list(app, who, agent, &first, health).await?;
            page["configs"].get(0).cloned().ok_or_else(|| {
                RpcError::new(
                    Code::TaskNotFound,
                    "the task has no push notification config",
                )
            })
        }
        Method::GetPushConfig => crate::push::get(app, who, agent, &params, health).await,
        Method::ListPushConfigs => crate::push::list(app, who, agent, &params, health).await,
        _ => crate::push::delete(app, who, agent, &params).await,
    };
    result.map(Reply::Json)
}

/// `GetExtendedAgentCard`: the full card (real skills) for an authenticated caller with read
/// rights (checked before dispatch); an Agent with a full public card has none.
fn extended_card(call: &Call) -> Result<Reply, RpcError> {
    if call.agent.public_card == PublicCard::Full {
        return Err(RpcError::new(
            Code::UnsupportedOperation,
            "this agent has no extended card (capabilities.extendedAgentCard is false)",
        ));
    }
    let card = match call.surface {
        RpcSurface::Public => crate::cards::card(&call.agent, &call.base),
        RpcSurface::Assistant => crate::cards::card_at(
            &call.agent,
            &call.base,
            &format!(
                "{}{}",
                call.base,
                RpcSurface::Assistant.agent_path(&call.agent.id)
            ),
        ),
    };
    // The 0.3 alias answers with the card a 0.3 client can read (`compat::card_with_v03`).
    let card = if call.legacy {
        compat::card_with_v03(&card)
    } else {
        card
    };
    Ok(Reply::Json(crate::cards::signed(&call.app, &card)))
}

fn internal(e: impl std::fmt::Display) -> RpcError {
    tracing::error!(error = %e, "A2A request failed");
    RpcError::of(Code::Internal)
}

fn string_param(params: &Value, name: &str) -> Result<String, RpcError> {
    match params.get(name) {
        Some(Value::String(s)) if !s.is_empty() => Ok(s.clone()),
        _ => Err(RpcError::field(name, "is required")),
    }
}

fn history_length(params: &Value, name: &str) -> Result<Option<u32>, RpcError> {
    match params.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_i64() {
            Some(n) if n >= 0 => Ok(Some(n.min(u32::MAX as i64) as u32)),
            _ => Err(RpcError::field(name, "must be a non-negative integer")),
        },
    }
}

/// The caller's task on this Agent, or TaskNotFound (another caller's task is "not found").
async fn visible_task(call: &Call, params: &Value) -> Result<TaskRow, RpcError> {
    let id = string_param(params, "id")?;
    find_task(
        &call.app,
        &call.principal,
        &call.agent.id,
        &id,
        Visibility::Caller,
    )
    .await
}

/// A task as GetTask returns it, with the row and fold it was rendered from.
pub struct TaskView {
    pub row: TaskRow,
    pub fold: TaskFold,
    /// The A2A `Task` (with `answerUrl`s and the transcript in its metadata).
    pub task: Value,
}

/// Reads and renders a task the way GetTask does (full history), after the same visibility
/// check.
pub async fn task_view(
    app: &AppState,
    principal: &Principal,
    agent_id: &str,
    task_id: &str,
    base: &str,
    visibility: Visibility,
) -> Result<TaskView, RpcError> {
    let row = find_task(app, principal, agent_id, task_id, visibility).await?;
    render_task(app, row, base, None, None).await
}

/// Renders a task row as GetTask does (full artifacts, any output mode). With `upto`, only
/// events up to that seq are folded in (the task as it was then).
pub async fn render_task(
    app: &AppState,
    row: TaskRow,
    base: &str,
    history_length: Option<u32>,
    upto: Option<i64>,
) -> Result<TaskView, RpcError> {
    let agent = app.runtime.agent(&row.agent_id).ok_or_else(|| {
        RpcError::new(
            Code::TaskNotFound,
            format!("Task not found: {}", row.task_id),
        )
    })?;
    let (mut events, mut fold) = load_events(app, &row).await?;
    if let Some(upto) = upto.filter(|u| *u < fold.last_seq) {
        events.retain(|e| e.seq <= upto);
        fold = TaskFold::from_events(&row.task_id, &row.context_id, &row.session_id, &events);
    }
    let opts = view_options(base, &agent, &fold, history_length, true, OutputModes::Any);
    let task = task_json(base, &events, &fold, &opts);
    Ok(TaskView { row, fold, task })
}

impl Call {
    fn session_url(&self, session_id: &str) -> String {
        session_url(&self.base, session_id)
    }

    fn view(
        &self,
        fold: &TaskFold,
        history_length: Option<u32>,
        include_artifacts: bool,
        modes: OutputModes,
    ) -> ViewOptions {
        view_options(
            &self.base,
            &self.agent,
            fold,
            history_length,
            include_artifacts,
            modes,
        )
    }

    /// The task as JSON, with its transcript blocks in the metadata.
    fn task_json(&self, events: &[JournalEvent], fold: &TaskFold, opts: &ViewOptions) -> Value {
        task_json(&self.base, events, fold, opts)
    }
}

fn session_url(base: &str, session_id: &str) -> String {
    format!("{base}/sessions/{session_id}")
}

fn view_options(
    base: &str,
    agent: &AgentSpec,
    fold: &TaskFold,
    history_length: Option<u32>,
    include_artifacts: bool,
    modes: OutputModes,
) -> ViewOptions {
    let url = session_url(base, &fold.session_id);
    ViewOptions {
        history_length,
        include_artifacts,
        output_modes: modes,
        session_link: agent.session_link.then(|| url.clone()),
        session_url: Some(url),
    }
}

/// The task as JSON, with its transcript blocks in the metadata.
fn task_json(base: &str, events: &[JournalEvent], fold: &TaskFold, opts: &ViewOptions) -> Value {
    let mut task = to_json(&fold.to_task(opts));
    add_answer_urls(&mut task, base);
    let transcript: Vec<Value> = events
        .iter()
        .flat_map(blocks)
        .map(|b| {
            let mut v = to_json(&b);
            // An interaction block is read by the task's caller, who may be remote: the same
            // public view as the status message's data part (no paths on the person's
            // machine; the console's inbox has them).
            if let Some(i) = v.get_mut("interaction") {
                sextant_runtime::interactions::hide_paths(i);
            }
            v
        })
        .collect();
    task["metadata"]["transcript"] = Value::Array(transcript);
    task
}

/// `{ key: value }`. Not `json!`, which serialises a `Value` argument into a copy of itself.
fn field(key: &str, value: Value) -> Value {
    let mut object = serde_json::Map::new();
    object.insert(key.into(), value);
    Value::Object(object)
}

fn to_json<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

async fn load(call: &Call, task: &TaskRow) -> Result<(Vec<JournalEvent>, TaskFold), RpcError> {
    load_events(&call.app, task).await
}

async fn load_events(
    app: &AppState,
    task: &TaskRow,
) -> Result<(Vec<JournalEvent>, TaskFold), RpcError> {
    let events = app
        .runtime
        .journal()
        .task_events(&task.task_id, 0)
        .await
        .map_err(internal)?;
    let fold = TaskFold::from_events(&task.task_id, &task.context_id, &task.session_id, &events);
    Ok((events, fold))
}

fn validate_message(m: &Message, agent: &AgentSpec) -> Result<(), RpcError> {
    if m.message_id.trim().is_empty() {
        return Err(RpcError::field("message.messageId", "is required"));
    }
    // A caller's message is that caller's input whichever role it names: the official SDKs'
    // `new_text_message()` defaults to ROLE_AGENT, and both official servers accept it. It is
    // recorded with the role as sent; nothing reads the role to decide who spoke (the
    // transcript shows it as the caller's input, engines' history calls it the user's, and a
    // message never answers a decision).
    if m.role == Role::Unspecified {
        return Err(RpcError::field(
            "message.role",
            "is required (ROLE_USER, or ROLE_AGENT)",
        ));
    }
    if m.parts.is_empty() {
        return Err(RpcError::field(
            "message.parts",
            "must contain at least one part",
        ));
    }
    parts::check_message(m, agent)
}

fn refusal(r: AdmitError) -> RpcError {
    match r {
        AdmitError::Refused(Refusal::MessageIdReused { task_id }) => RpcError::field(
            "message.messageId",
            format!(
                "was already used for a different message (task {task_id}); a retry must \
                 repeat the message exactly, a new message needs a new messageId"
            ),
        ),
        AdmitError::Refused(Refusal::TaskNotFound) => RpcError::of(Code::TaskNotFound),
        AdmitError::Refused(Refusal::TaskTerminal { state }) => RpcError::new(
            Code::UnsupportedOperation,
            format!(
                "the task is {state} and takes no more messages; send a new message in the same contextId"
            ),
        ),
        AdmitError::Refused(Refusal::ContextMismatch { task_context }) => RpcError::field(
            "message.contextId",
            format!("does not match the task's context {task_context}"),
        ),
        AdmitError::SessionBusy => RpcError::new(
            Code::UnsupportedOperation,
            "this conversation is still being created by another message; retry",
        ),
        AdmitError::AwaitingDecision { interaction_id } => RpcError::new(
            Code::UnsupportedOperation,
            format!(
                "the task is waiting for a decision (interaction {interaction_id}); a message is \
                 never an approval: the console owner answers it with one of the declared options \
                 at /api/v1/interactions/{interaction_id}/answer"
            ),
        ),
        AdmitError::UnknownAgent => RpcError::new(Code::InvalidRequest, "unknown agent"),
        AdmitError::AccessDenied(e) => access_refusal(&e),
        AdmitError::Refused(Refusal::TurnCap { limit }) => RpcError::new(
            Code::UnsupportedOperation,
            format!(
                "this context has reached its limit of {limit} agent-to-agent turns \
                 (anti-loop); start a new context (send without contextId) to go on"
            ),
        ),
        AdmitError::Refused(Refusal::TooManyTasks { limit }) => RpcError::new(
            Code::UnsupportedOperation,
            format!(
                "{limit} of your tasks are already submitted or working; wait for one to \
                 finish (GetTask / SubscribeToTask) and send again"
            ),
        ),
        AdmitError::ShuttingDown => RpcError::new(Code::Internal, "Sextant is shutting down"),
        e @ AdmitError::AgentPaused { .. } => {
            RpcError::new(Code::UnsupportedOperation, e.to_string())
        }
        AdmitError::Journal(e) => internal(e),
    }
}

/// `SendMessage` / `SendStreamingMessage` in a server span of the caller's trace (a new trace
/// without a valid `traceparent`): admission's span is its child, and through the journal the
/// task's turns are too. Attributes are ids only, never message text.
async fn send(call: &Call, params: Value, streaming: bool) -> Result<Reply, RpcError> {
    let span = tracing::info_span!(
        target: sextant_a2a::trace::TARGET,
        "a2a_inbound_call",
        otel.kind = "server",
        otel.status_code = tracing::field::Empty,
        rpc.system = "a2a",
        rpc.method = if streaming { "SendStreamingMessage" } else { "SendMessage" },
        sextant.agent_id = %call.agent.id,
        sextant.task_id = tracing::field::Empty,
        sextant.task_state = tracing::field::Empty,
    );
    if let Some(parent) = &call.trace {
        sextant_a2a::trace::set_parent(&span, parent);
    }
    let reply = send_traced(call, params, streaming)
        .instrument(span.clone())
        .await;
    if reply.is_err() {
        span.record("otel.status_code", "ERROR");
    }
    reply
}

async fn send_traced(call: &Call, params: Value, streaming: bool) -> Result<Reply, RpcError> {
    if params.get("message").is_none_or(Value::is_null) {
        return Err(RpcError::field("message", "is required"));
    }
    // The push config as sent (its checks name its own fields).
    let push_param = params
        .get("configuration")
        .and_then(|c| c.get("taskPushNotificationConfig"))
        .filter(|v| !v.is_null())
        .cloned();
    let req: a2a::SendMessageRequest = params::typed("SendMessageRequest", params)?;
    validate_message(&req.message, &call.agent)?;
    let may_reply = call
        .app
        .runtime
        .may_reply_with_message(&call.agent.id, &req.message);
    let config = req.configuration.unwrap_or(a2a::SendMessageConfiguration {
        accepted_output_modes: None,
        task_push_notification_config: None,
        history_length: None,
        return_immediately: None,
    });
    let push = match &push_param {
        None => None,
        Some(v) => Some(crate::push::inline_config(
            &call.app,
            &call.principal,
            &call.agent,
            v,
            req.message.task_id.as_deref(),
        )?),
    };
    let history_length = match config.history_length {
        Some(n) if n < 0 => {
            return Err(RpcError::field(
                "configuration.historyLength",
                "must not be negative",
            ));
        }
        n => n.map(|n| n as u32),
    };
    let modes = OutputModes::from_accepted(config.accepted_output_modes.as_deref().unwrap_or(&[]))
        .ok_or_else(|| {
            RpcError::new(
                Code::ContentTypeNotSupported,
                "acceptedOutputModes names no format this agent produces (text/plain, application/json)",
            )
        })?;
    let mut message = req.message;
    sextant_core::untrusted::set_inbound_hop(&mut message, call.hop);
    let input = Input {
        principal: call.principal.clone(),
        agent_id: call.agent.id.clone(),
        message,
        origin: sextant_core::Origin::A2a,
        grant: Some(call.grant.clone()),
    };
    // A blocking caller hears nothing until its task settles, so its admission may commit
    // with the task's first turn (`Runtime::accept_early`); the others hear of the task at once.
    let blocking = !streaming && !config.return_immediately.unwrap_or(false);
    let runtime = &call.app.runtime;
    let accepted = match push {
        Some(push) => runtime.accept_with_push(input, push, blocking).await,
        None if blocking => runtime.accept_early(input).await,
        None => runtime.accept(input).await,
    }
    .map_err(refusal)?;
    let admitted = &accepted.admitted;
    let after = match admitted {
        Admitted::Created { event, .. } | Admitted::FollowUp { event, .. } => event.seq,
        Admitted::Duplicate { .. } => 0,
    };
    let task = admitted.task().clone();
    tracing::Span::current().record("sextant.task_id", task.task_id.as_str());
    if streaming {
        let lazy = matches!(admitted, Admitted::Created { .. }) && may_reply;
        let events = Box::pin(call.app.runtime.accepted_events(accepted, 0, StopAt::Never));
        return Ok(Reply::Stream(task_stream(
            call, task, events, after, lazy, modes,
        )));
    }
    let mut settled = None;
    if blocking {
        // At shutdown, or once the reply timeout passes, the wait ends and the caller gets the
        // task as journalled so far; the task runs on (a timeout observes, it never decides).
        let limit = call.app.config.reply_timeout;
        let timed_out = async move {
            match limit {
                Some(d) => tokio::time::sleep(d).await,
                None => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            r = call.app.runtime.wait_accepted(accepted) => {
                settled = Some(r.map_err(internal)?);
            }
            _ = call.app.shutdown.cancelled() => {}
            _ = timed_out => {}
        }
    }
    let (events, fold) = match settled {
        Some((fold, events)) => (events, fold),
        None => load(call, &task).await?,
    };
    if events.is_empty() {
        // Stopped waiting (shutdown) before an early admission committed: not a task yet, and
        // it may never be. A retry of the same message finds the task if it was recorded.
        return Err(RpcError::new(
            Code::Internal,
            "Sextant is shutting down and this message may not have been recorded; send it again \
             (with the same messageId, a recorded message is not run twice)",
        ));
    }
    tracing::Span::current().record(
        "sextant.task_state",
        sextant_core::event::state_name(&fold.state),
    );
    if let Some(reply) = &fold.reply {
        return Ok(Reply::Json(field("message", to_json(reply))));
    }
    let opts = call.view(&fold, history_length, true, modes);
    Ok(Reply::Json(field(
        "task",
        call.task_json(&events, &fold, &opts),
    )))
}

async fn get_task(call: &Call, params: Value) -> Result<Reply, RpcError> {
    let history_length = history_length(&params, "historyLength")?;
    let task = visible_task(call, &params).await?;
    let view = render_task(&call.app, task, &call.base, history_length, None).await?;
    Ok(Reply::Json(view.task))
}

/// `CancelTask`: the caller's own task, canceled (queued, running or waiting for a decision),
/// answered with the task as it is then. Canceling a canceled task returns it again.
async fn cancel_task(call: &Call, params: Value) -> Result<Reply, RpcError> {
    let task = visible_task(call, &params).await?;
    let reason = params
        .pointer("/metadata/reason")
        .and_then(Value::as_str)
        .map(String::from);
    let request = sextant_runtime::CancelRequest {
        by: call.principal.display(),
        reason,
    };
    let row = cancel(&call.app, &task, &request).await?;
    let view = render_task(&call.app, row, &call.base, None, None).await?;
    Ok(Reply::Json(view.task))
}

/// Cancels a task the caller may see, with A2A's errors: an ended task is
/// `TaskNotCancelable`, one that vanished `TaskNotFound`.
pub async fn cancel(
    app: &AppState,
    task: &TaskRow,
    request: &sextant_runtime::CancelRequest,
) -> Result<TaskRow, RpcError> {
    use sextant_runtime::CancelOutcome;
    match app
        .runtime
        .cancel(&task.task_id, request)
        .await
        .map_err(internal)?
    {
        CancelOutcome::Canceled(row) | CancelOutcome::AlreadyCanceled(row) => Ok(row),
        CancelOutcome::AlreadyEnded(state) => Err(RpcError::new(
            Code::TaskNotCancelable,
            format!(
                "task {} has already ended ({}); it cannot be canceled",
                task.task_id,
                sextant_core::event::state_wire(&state)
            ),
        )),
        CancelOutcome::NotFound => Err(RpcError::new(
            Code::TaskNotFound,
            format!("Task not found: {}", task.task_id),
        )),
    }
}

async fn list_tasks(call: &Call, params: Value) -> Result<Reply, RpcError> {
    let page_size = match params.get("pageSize") {
        None | Some(Value::Null) => LIST_DEFAULT,
        Some(v) => match v.as_i64() {
            Some(n) if (1..=LIST_MAX).contains(&n) => n as u32,
            _ => return Err(RpcError::field("pageSize", "must be between 1 and 100")),
        },
    };
    let cursor = match params
        .get("pageToken")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
    {
        Some(t) => Some(crate::api::parse_cursor(t).ok_or_else(|| {
            RpcError::field(
                "pageToken",
                "is not a token from a previous ListTasks response",
            )
        })?),
        None => None,
    };
    let state = match params.get("status").and_then(Value::as_str) {
        Some(s) => Some(
            sextant_core::event::parse_state(s)
                .filter(|s| *s != TaskState::Unspecified)
                .ok_or_else(|| RpcError::field("status", "is not a task state"))?,
        ),
        None => None,
    };
    let after =
        match params.get("statusTimestampAfter").and_then(Value::as_str) {
            Some(t) => Some(sextant_core::ids::parse_time(t).ok_or_else(|| {
                RpcError::field("statusTimestampAfter", "is not an RFC 3339 time")
            })?),
            None => None,
        };
    let history_length = history_length(&params, "historyLength")?;
    let include_artifacts = params
        .get("includeArtifacts")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let page = call
        .app
        .runtime
        .journal()
        .list_tasks(TaskFilter {
            caller: Some(call.principal.key()),
            agent_id: Some(call.agent.id.clone()),
            context_id: params
                .get("contextId")
                .and_then(Value::as_str)
                .map(String::from),
            state,
            state_at_or_after: after,
            cursor,
            limit: page_size,
            ..Default::default()
        })
        .await
        .map_err(internal)?;
    // One task's events are in memory at a time, and the page's JSON stays within
    // LIST_PAGE_BYTES: the page is cut before the task that would pass it (its token then
    // starts the next page there), and a task over LIST_TASK_BYTES is listed as a summary.
    let mut tasks = Vec::with_capacity(page.tasks.len());
    let mut used = 0;
    let mut next = page.next.clone();
    for (i, row) in page.tasks.iter().enumerate() {
        let (_, fold) = load(call, row).await?;
        let opts = call.view(&fold, history_length, include_artifacts, OutputModes::Any);
        let task = list_entry(&fold, opts);
        let size = json_size(&task);
        if i > 0 && used + size > LIST_PAGE_BYTES {
            let last = &page.tasks[i - 1];
            next = Some((
                sextant_core::ids::format_time(last.state_at),
                last.task_id.to_string(),
            ));
            break;
        }
        used += size;
        tasks.push(task);
    }
    let mut out = json!({
        "nextPageToken": next.as_ref().map(crate::api::encode_cursor).unwrap_or_default(),
        "pageSize": page_size,
        "totalSize": page.total,
    });
    out["tasks"] = Value::Array(tasks);
    Ok(Reply::Json(out))
}

/// The most JSON one ListTasks page holds (its tasks, before the envelope): a page of large
/// tasks is cut early, with a `nextPageToken`, rather than answered whole.
pub const LIST_PAGE_BYTES: usize = 1024 * 1024;

/// The most JSON one task may take in a ListTasks page; a larger one is listed without its
/// history and artifacts (and, if still too large, its status message), marked
/// `metadata.truncated`, for the caller to read whole with GetTask.
pub const LIST_TASK_BYTES: usize = 256 * 1024;

/// A task as a ListTasks page lists it, within [`LIST_TASK_BYTES`].
fn list_entry(fold: &TaskFold, mut opts: ViewOptions) -> Value {
    let task = to_json(&fold.to_task(&opts));
    if json_size(&task) <= LIST_TASK_BYTES {
        return task;
    }
    opts.history_length = Some(0);
    opts.include_artifacts = false;
    let mut task = to_json(&fold.to_task(&opts));
    if json_size(&task) > LIST_TASK_BYTES
        && let Some(status) = task.get_mut("status").and_then(Value::as_object_mut)
    {
        status.remove("message");
    }
    task["metadata"]["truncated"] = json!(format!(
        "this task is larger than a list entry ({LIST_TASK_BYTES} bytes): read it with GetTask"
    ));
    task
}

/// The length of `v` serialised, counted without building the bytes.
fn json_size(v: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

async fn subscribe(call: &Call, params: Value) -> Result<Reply, RpcError> {
    let task = visible_task(call, &params).await?;
    if is_terminal(&task.state) {
        return Err(RpcError::new(
            Code::UnsupportedOperation,
            format!(
                "Task {} is in terminal state: {}; read it with GetTask",
                task.task_id,
                sextant_core::event::state_wire(&task.state)
            ),
        ));
    }
    match call.last_event_id {
        Some(after) => Ok(Reply::Stream(resume_stream(call, task, after))),
        None => Ok(Reply::Stream(task_stream(
            call,
            task.clone(),
            Box::pin(task_events(
                call.app.runtime.journal(),
                &task,
                0,
                StopAt::Never,
            )),
            0,
            false,
            OutputModes::Any,
        ))),
    }
}

/// A task's journal events, live.
type EventStream = std::pin::Pin<
    Box<dyn Stream<Item = Result<std::sync::Arc<JournalEvent>, sextant_journal::Error>> + Send>,
>;

/// Maps a journal event to the `StreamResponse` a subscriber of the task `(task_id,
/// context_id)` sees, if it sees one.
fn stream_item(ev: &JournalEvent, ids: &(String, String), modes: &OutputModes) -> Option<Value> {
    sextant_core::projection::stream_response(ev, &ids.0, &ids.1, modes)
}

/// How a task's stream carries its Session link, on this call.
fn linker(call: &Call, task: &TaskRow, modes: OutputModes) -> SessionLinker {
    SessionLinker {
        url: call.session_url(&task.session_id),
        text: call.agent.session_link,
        modes,
        last_text_artifact: None,
    }
}

/// A stream's status updates carry the Session's URL (`metadata.sessionUrl`), as snapshots
/// do. When the Agent also wants it in text (`session_link`), a completed stream ends its
/// text result with the `Session: …` line where a snapshot has it
/// (`projection::ViewOptions::session_link`): a chunk appended to the last artifact with
/// text, sent just before the final status update, else the end of a status message that has
/// text. Never a status message of its own: a client that prefers the status message to the
/// artifacts (strands-agents) would show the link instead of the reply.
struct SessionLinker {
    url: String,
    text: bool,
    modes: OutputModes,
    /// The last artifact with a text part the stream has seen (from its snapshot on).
    last_text_artifact: Option<String>,
}

impl SessionLinker {
    /// Notes the artifacts of journal event `ev`, before the stream sends it.
    fn observe(&mut self, ev: &JournalEvent) {
        if let EventBody::Artifact { artifact, .. } = &ev.body
            && has_text(&artifact.parts)
        {
            self.last_text_artifact = Some(artifact.artifact_id.clone());
        }
    }

    /// The frames the stream item of the event at `seq` becomes ([`Self::items`]). Only the
    /// last carries the seq (the SSE id): a client resuming after it has seen them all.
    fn frames(&self, seq: i64, item: Value) -> Vec<Frame> {
        let items = self.items(item);
        let n = items.len();
        items
            .into_iter()
            .enumerate()
            .map(|(i, v)| Frame::Item((i + 1 == n).then_some(seq), v))
            .collect()
    }

    /// The stream items `item` becomes: itself with the link in its metadata, preceded, for
    /// the completed status update of an Agent that links in text, by the text chunk.
    fn items(&self, mut item: Value) -> Vec<Value> {
        let Some(update) = item.get_mut("statusUpdate").and_then(Value::as_object_mut) else {
            return vec![item];
        };
        let meta = update
            .entry("metadata")
            .or_insert_with(|| Value::Object(Default::default()));
        if let Some(m) = meta.as_object_mut() {
            m.insert("sessionUrl".into(), Value::String(self.url.clone()));
        }
        let completed = update
            .get("status")
            .and_then(|s| s.get("state"))
            .and_then(Value::as_str)
            == Some("TASK_STATE_COMPLETED");
        if !self.text || !completed {
            return vec![item];
        }
        let mut line = vec![a2a::Part::text(format!("\n\nSession: {}", self.url))];
        sextant_core::projection::convert_parts(&mut line, &self.modes);
        if let Some(id) = &self.last_text_artifact {
            let chunk = json!({ "artifactUpdate": {
                "taskId": update.get("taskId").cloned().unwrap_or(Value::Null),
                "contextId": update.get("contextId").cloned().unwrap_or(Value::Null),
                "artifact": { "artifactId": id, "parts": to_json(&line) },
                "append": true,
                "lastChunk": true,
            }});
            return vec![chunk, item];
        }
        if let Some(parts) = update
            .get_mut("status")
            .and_then(|s| s.pointer_mut("/message/parts"))
            .and_then(Value::as_array_mut)
            && parts.iter().any(|p| p.get("text").is_some())
        {
            parts.extend(line.iter().map(to_json));
        }
        vec![item]
    }
}

fn has_text(parts: &[a2a::Part]) -> bool {
    parts
        .iter()
        .any(|p| matches!(p.content, a2a::PartContent::Text(_)))
}

fn ends_stream(ev: &JournalEvent) -> bool {
    ev.body.new_state().is_some_and(|s| is_terminal(&s))
}

/// A task stream: the Task as of seq `after` (or now, when 0), then every later event until the
/// task is terminal. With `lazy`, the first output decides: a direct Message is sent alone.
/// `events` are the task's events from its first, live.
fn task_stream(
    call: &Call,
    task: TaskRow,
    events: EventStream,
    after: i64,
    lazy: bool,
    modes: OutputModes,
) -> Frames {
    let mut linked = linker(call, &task, modes);
    let (session_url, link_text) = (linked.url.clone(), linked.text);
    let base = call.base.clone();
    // An open stream keeps what it captures for as long as it is open (an idle subscription
    // can be open for hours), so it captures the ids it needs, not the task's row.
    let snapshot_at = if after > 0 {
        after
    } else {
        task.last_seq.max(1)
    };
    let session_id = task.session_id.to_string();
    let ids = (task.task_id.to_string(), task.context_id.to_string());
    drop(task);
    let frames = Box::pin(async_stream::stream! {
        let mut live = events;
        // The snapshot is made in a future of its own (boxed, so its fold and pending events
        // take no room in this stream's state, which an idle subscription keeps for hours).
        let opened = Box::pin(snapshot(&mut live, &ids, session_id, snapshot_at, lazy, modes, session_url, link_text)).await;
        let (pending, mut last) = match opened {
            Opened::Task { frame, seq, pending, terminal, last_text_artifact } => {
                yield frame;
                if terminal { return; }
                linked.last_text_artifact = last_text_artifact;
                (pending, seq)
            }
            Opened::Alone(frame) => { yield frame; return; }
            Opened::Ended => return,
        };
        for ev in pending {
            if ev.seq <= last { continue; }
            last = ev.seq;
            linked.observe(&ev);
            if let Some(item) = stream_item(&ev, &ids, &modes) {
                for f in linked.frames(ev.seq, item) { yield f; }
            }
            if ends_stream(&ev) { return; }
        }
        while let Some(ev) = live.next().await {
            let ev = match ev { Ok(ev) => ev, Err(e) => { yield Frame::Error(internal(e)); return; } };
            if ev.seq <= last { continue; }
            last = ev.seq;
            linked.observe(&ev);
            if let Some(item) = stream_item(&ev, &ids, &modes) {
                for f in linked.frames(ev.seq, item) { yield f; }
            }
            if ends_stream(&ev) { return; }
        }
    });
    with_answer_urls(frames, base)
}

/// How a task stream opens ([`snapshot`]).
enum Opened {
    /// The Task as of the snapshot (`seq`), the events read past it, whether it is over, and
    /// its last artifact with text ([`SessionLinker`]).
    Task {
        frame: Frame,
        seq: i64,
        pending: Vec<std::sync::Arc<JournalEvent>>,
        terminal: bool,
        last_text_artifact: Option<String>,
    },
    /// A frame that is the whole stream: a direct Message answer, or an error.
    Alone(Frame),
    /// The events ended before the snapshot.
    Ended,
}

/// A task stream's opening: the task's events folded up to `snapshot_at` into the Task frame.
/// With `lazy`, the first output decides: a direct Message is sent alone. `link_text`: the
/// Agent also puts the Session link into text (a task already completed shows it so).
#[allow(clippy::too_many_arguments)]
async fn snapshot(
    live: &mut EventStream,
    ids: &(String, String),
    session_id: String,
    snapshot_at: i64,
    lazy: bool,
    modes: OutputModes,
    session_url: String,
    link_text: bool,
) -> Opened {
    let mut fold = TaskFold::new(&ids.0, &ids.1, &session_id);
    let mut pending: Vec<std::sync::Arc<JournalEvent>> = Vec::new();
    loop {
        match live.next().await {
            Some(Ok(ev)) => {
                if ev.seq <= snapshot_at {
                    fold.apply(&ev);
                    if ev.seq == snapshot_at {
                        break;
                    }
                } else {
                    pending.push(ev);
                    break;
                }
            }
            Some(Err(e)) => return Opened::Alone(Frame::Error(internal(e))),
            None => return Opened::Ended,
        }
    }
    if lazy {
        // The turn's start (turn_started, working) decides nothing; the first output does:
        // a direct Message answer is sent alone, anything else starts the task stream.
        let mut seen = 0;
        loop {
            let next = match pending.get(seen) {
                Some(ev) => Some(Ok(ev.clone())),
                None => live.next().await,
            };
            match next {
                Some(Ok(ev)) => {
                    if let EventBody::Reply { message } = &ev.body {
                        return Opened::Alone(Frame::Item(
                            Some(ev.seq),
                            field("message", to_json(message)),
                        ));
                    }
                    let preamble = matches!(
                        &ev.body,
                        EventBody::TurnStarted { .. }
                            | EventBody::TaskState {
                                state: TaskState::Working,
                                message: None
                            }
                    );
                    if seen >= pending.len() {
                        pending.push(ev);
                    }
                    seen += 1;
                    if !preamble {
                        break;
                    }
                }
                Some(Err(e)) => return Opened::Alone(Frame::Error(internal(e))),
                None => return Opened::Ended,
            }
        }
    }
    let opts = ViewOptions {
        include_artifacts: true,
        output_modes: modes,
        session_link: link_text.then(|| session_url.clone()),
        session_url: Some(session_url),
        ..Default::default()
    };
    Opened::Task {
        frame: Frame::Item(
            Some(fold.last_seq),
            field("task", to_json(&fold.to_task(&opts))),
        ),
        seq: fold.last_seq,
        pending,
        terminal: fold.is_terminal(),
        last_text_artifact: fold
            .artifacts
            .iter()
            .rev()
            .find(|a| has_text(&a.parts))
            .map(|a| a.artifact_id.clone()),
    }
}

fn with_answer_urls(frames: Frames, base: String) -> Frames {
    Box::pin(frames.map(move |f| match f {
        Frame::Item(seq, mut v) => {
            add_answer_urls(&mut v, &base);
            Frame::Item(seq, v)
        }
        other => other,
    }))
}

/// A resumed stream (`Last-Event-ID`): the events after that seq, until the task is terminal.
fn resume_stream(call: &Call, task: TaskRow, after: i64) -> Frames {
    let journal = call.app.runtime.journal().clone();
    let base = call.base.clone();
    let mut linked = linker(call, &task, OutputModes::Any);
    let ids = (task.task_id.to_string(), task.context_id.to_string());
    let task_id = task.task_id.clone();
    let mut events = Box::pin(task_events(&journal, &task, after, StopAt::Terminal));
    drop(task);
    let frames = Box::pin(async_stream::stream! {
        if linked.text {
            // The artifacts sent before `after`, for the Session line at the end.
            match journal.task_events(&task_id, 0).await {
                Ok(before) => before.iter().filter(|e| e.seq <= after).for_each(|e| linked.observe(e)),
                Err(e) => tracing::debug!(error = %e, "cannot read a resumed task's earlier events"),
            }
        }
        while let Some(ev) = events.next().await {
            match ev {
                Ok(ev) => {
                    linked.observe(&ev);
                    if let Some(item) = stream_item(&ev, &ids, &OutputModes::Any) {
                        for f in linked.frames(ev.seq, item) { yield f; }
                    }
                }
                Err(e) => { yield Frame::Error(internal(e)); return; }
            }
        }
    });
    with_answer_urls(frames, base)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn waiting(interaction: Value) -> Value {
        json!({ "parts": [
            { "text": "waiting for you" },
            { "data": { "interaction": interaction }, "mediaType": "application/json" },
        ] })
    }

    #[test]
    fn answer_links_come_from_the_interaction_id_where_interactions_are() {
        let base = "http://127.0.0.1:9900";
        let url = format!("{base}/api/v1/interactions/i1/answer");
        // A journal that keeps only the id, and one written before that kept a path.
        for stored in [
            json!({ "interactionId": "i1" }),
            json!({ "interactionId": "i1", "answerPath": "/api/v1/interactions/i1/answer" }),
        ] {
            let mut task = json!({
                "id": "t", "status": { "message": waiting(stored.clone()) },
                "history": [waiting(stored.clone())],
            });
            add_answer_urls(&mut task, base);
            for m in [&task["status"]["message"], &task["history"][0]] {
                let i = &m["parts"][1]["data"]["interaction"];
                assert_eq!(i["answerUrl"], json!(url), "{task}");
                assert_eq!(i["answerPath"], "/api/v1/interactions/i1/answer");
            }
            let mut update =
                json!({ "statusUpdate": { "status": { "message": waiting(stored) } } });
            add_answer_urls(&mut update, base);
            assert_eq!(
                update["statusUpdate"]["status"]["message"]["parts"][1]["data"]["interaction"]["answerUrl"],
                json!(url)
            );
        }
    }

    #[test]
    fn answer_links_are_not_made_from_other_data() {
        // An engine's or a peer's artifact that says `answerPath` gets no link made of it.
        let base = "http://127.0.0.1:9900";
        let planted = json!({ "answerPath": "//evil.example/x" });
        let mut task = json!({
            "id": "t",
            "artifacts": [{ "parts": [{ "data": planted.clone() }] }],
            "status": { "message": { "parts": [{ "data": planted }] } },
        });
        let before = task.clone();
        add_answer_urls(&mut task, base);
        assert_eq!(task, before);
    }
}
