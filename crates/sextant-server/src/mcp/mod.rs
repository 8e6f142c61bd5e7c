//! The agents MCP server at `/api/v1/assistant-mcp` (rmcp, streamable HTTP): the bridge an
//! assistant runtime uses to read an Agent's task and answer its pending interaction on the
//! person's behalf. Tools:
//!
//! - `get_agent_task(agent_id, task_id)`: the task exactly as A2A `GetTask` renders it (same
//!   code path: [`a2a::task_view`]), after a plain-text summary naming the pending interaction,
//!   its ids and its declared options.
//! - `answer_agent_task(agent_id, task_id, interaction_id, answer, message_id[, digest,
//!   reason, values])`: [`Runtime::answer`](sextant_runtime::Runtime::answer) as the caller; returns
//!   the task as it was right after the answer was journalled, without waiting for execution.
//!
//! **Who is calling.** The route sits behind [`crate::auth::resolve`]; each tool reads the
//! [`Principal`] from the `http::request::Parts` of *its own* POST (rmcp hands them over as a
//! request extension) and never caches it. The server is stateless (no `Mcp-Session-Id`), so
//! nothing a client holds can carry one caller's identity into another caller's request.
//!
//! **Who answers, and what each reader sees.** The runtime's one answer rule
//! ([`sextant_runtime::interactions`]) decides both, from the principal of the request's own
//! credential: the person (owner token) reads every task and answers any card; an assistant
//! token (`sxa_…`, its workspace token or a per-Agent credential) answers an Agent's cards only
//! when the person named it in that Agent's `access.answer`, never a card its own request
//! raised, never `acceptForSchedule`, and always with the action's digest. Such an assistant
//! reads every caller's tasks of that Agent; any other caller reads only its own. A reader who
//! may answer a card is shown its exact action (escaped and flagged as on the console); a
//! remote reader who may not is shown a redacted one marked `masked`, without a digest, and
//! told why it may not answer. A task the caller may not read, or of another Agent, is "not
//! found". An assistant's answer is recorded as `you (via assistant NAME)`.
//!
//! **Assistant capability tokens** reach one Agent (a per-Agent token) or every Agent the
//! assistant may call (its workspace token) of this workspace; the owner and the workspace come
//! from Sextant's record of the token, read on every request; nothing in the tool arguments can
//! change them. The Agent's access list and revocations apply to every caller
//! (`assistant:NAME`, `anonymous-local`).
//!
//! **Errors.** A refused call is a tool result with `isError: true` whose text is the same
//! message the REST answer API gives (e.g. an undeclared option lists the declared ones), and
//! whose `structuredContent` is the REST error object. Only an internal failure is a JSON-RPC
//! error. The wire shapes are documented in `docs/mcp.md`.

use std::sync::Arc;

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock, Implementation, ServerCapabilities};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, ServerHandler, tool, tool_handler, tool_router};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use sextant_a2a::RpcError;
use sextant_a2a::error::Code;
use sextant_core::Principal;
use sextant_core::event::state_wire;
use sextant_core::projection::TaskFold;
use sextant_runtime::{AnswerError, AnswerRequest, Denied};

use crate::AppState;
use crate::a2a::tasks::Visibility;
use crate::a2a::{self, TaskView};
use crate::api::interactions::answer_error;
use crate::auth::AssistantGrant;
use crate::error::ApiError;
use crate::urls::base_url;

/// The outbound A2A tools (`a2a_discover`, `a2a_call`, `a2a_list`, `a2a_history`,
/// `a2a_orchestrate`).
mod peer_tools;

/// The schedule tools and the assistant's peer tools.
pub mod schedule_tools;

/// Where the service is mounted.
pub const PATH: &str = "/api/v1/assistant-mcp";

/// Loopback names always accepted in `Host` (rmcp's DNS-rebinding guard).
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// `get_agent_task` arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct GetAgentTaskArgs {
    /// The Agent the task belongs to (e.g. `shell`).
    pub agent_id: String,
    /// The A2A task id.
    pub task_id: String,
}

/// `answer_agent_task` arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct AnswerAgentTaskArgs {
    /// The Agent the task belongs to.
    pub agent_id: String,
    /// The task waiting for the decision.
    pub task_id: String,
    /// The pending interaction's id, exactly as get_agent_task shows it.
    pub interaction_id: String,
    /// One of the interaction's declared option ids, e.g. `accept`, `acceptForSession`,
    /// `decline` or `cancel`.
    pub answer: String,
    /// A fresh id for this answer. Retrying with the same message_id and the same answer
    /// returns the same result; the same message_id with a different answer is refused.
    pub message_id: String,
    /// The action digest get_agent_task showed (`sha256:…`). Required of an assistant when the
    /// card has an action; the answer is refused unless it is the digest of the action the
    /// interaction asks about.
    #[serde(default)]
    pub digest: Option<String>,
    /// Optional free-text reason, returned to the engine when the interaction allows one.
    #[serde(default)]
    pub reason: Option<String>,
    /// Form values by field id, for interactions that declare fields.
    #[serde(default)]
    pub values: Option<Map<String, Value>>,
}

/// The tools; one clone serves each (stateless) request.
#[derive(Clone)]
pub struct AgentTools {
    app: AppState,
    tool_router: ToolRouter<Self>,
}

/// The caller of this POST, as the auth middleware resolved it.
fn principal(parts: &http::request::Parts) -> Result<Principal, ErrorData> {
    parts.extensions.get::<Principal>().cloned().ok_or_else(|| {
        tracing::error!("MCP request without a resolved principal");
        ErrorData::internal_error("no caller identity on this request", None)
    })
}

/// Who a tool call is, for `agent_id`: the principal of its own credential (the owner, an
/// assistant, the anonymous loopback caller), never an identity derived from it, and which
/// callers' tasks of that Agent it reads.
struct Reader {
    principal: Principal,
    /// The person, or an assistant the person allowed to answer this Agent's cards (it needs
    /// every caller's tasks to answer them); anyone else reads only its own tasks.
    reads_all: bool,
}

impl Reader {
    /// The principal and visibility to read a task with.
    fn view(&self) -> (Principal, Visibility) {
        if self.reads_all {
            (Principal::person(), Visibility::OwnerReadsAll)
        } else {
            (self.principal.clone(), Visibility::Caller)
        }
    }
}

/// The [`Reader`] of a tool call for `agent_id`; TaskNotFound when the caller may not read
/// that Agent at all (the same answer as for a task it cannot see).
fn scope(
    app: &AppState,
    parts: &http::request::Parts,
    agent_id: &str,
    task_id: &str,
) -> Result<Reader, Result<CallToolResult, ErrorData>> {
    let who = principal(parts).map_err(Err)?;
    let not_found = || {
        rpc_refusal(RpcError::new(
            Code::TaskNotFound,
            format!("Task not found: {task_id}"),
        ))
    };
    if app
        .runtime
        .authorize(&who, agent_id, sextant_core::Rights::Read)
        .is_err()
    {
        return Err(not_found());
    }
    match parts.extensions.get::<AssistantGrant>() {
        None => {}
        Some(g)
            if g.reaches(agent_id)
                && g.workspace == app.security.workspace
                && g.owner_principal().is_some() => {}
        Some(_) => return Err(not_found()),
    }
    let reads_all = app.runtime.answers_for(&who, agent_id).is_ok();
    Ok(Reader {
        principal: who,
        reads_all,
    })
}
/// A refusal as a tool error (the caller's client shows the text); internal failures are
/// protocol errors whose detail stays in the log.
fn rpc_refusal(err: RpcError) -> Result<CallToolResult, ErrorData> {
    if err.code == Code::Internal {
        return Err(ErrorData::internal_error("Something went wrong", None));
    }
    let mut result = CallToolResult::error(vec![ContentBlock::text(err.message.clone())]);
    result.structured_content = Some(json!({
        "error": { "code": err.code.code(), "message": err.message }
    }));
    Ok(result)
}

/// A REST-shaped refusal as a tool error, with the REST wording.
fn api_refusal(err: ApiError) -> Result<CallToolResult, ErrorData> {
    if let ApiError::Internal(detail) = &err {
        tracing::error!(%detail, "MCP answer failed");
        return Err(ErrorData::internal_error("Something went wrong", None));
    }
    let (_, code, message) = err.parts();
    let mut error = json!({ "code": code, "message": message });
    if let ApiError::Invalid { field, .. } = &err {
        error["field"] = json!(field);
    }
    let mut result = CallToolResult::error(vec![ContentBlock::text(message)]);
    result.structured_content = Some(json!({ "error": error }));
    Ok(result)
}

/// A successful result: the summary, then the JSON (also as structured content).
fn success(summary: String, body: Value) -> CallToolResult {
    let mut result = CallToolResult::success(vec![
        ContentBlock::text(summary),
        ContentBlock::text(body.to_string()),
    ]);
    result.structured_content = Some(body);
    result
}

/// The text parts of `parts`, joined and cut to a readable length (the JSON has it all).
fn parts_text(parts: &Value) -> Option<String> {
    const MAX: usize = 4000;
    let text: String = parts
        .as_array()?
        .iter()
        .filter_map(|p| p["text"].as_str())
        .collect();
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    Some(match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    })
}

/// How a summary shows the pending card.
#[derive(Debug, Clone, Copy)]
pub enum Card<'a> {
    /// Exactly (escaped and flagged): the reader may answer it.
    Exact,
    /// Exactly, to a reader on the owner's own machine who may not answer it (why).
    ExactNotYours(&'a Denied),
    /// Redacted for a remote reader who may not answer it (why); it says where it masked and
    /// gives no digest.
    Masked(&'a Denied),
}

/// The plain-text summary put before the task JSON. Its status and result lines come from
/// `task` (already scrubbed for remote readers); the card's lines from the fold, as `card` says.
pub fn summary(agent_id: &str, fold: &TaskFold, task: &Value, card: Card<'_>) -> String {
    let mut out = format!(
        "Task {} (agent {agent_id}): {}",
        fold.task_id,
        state_wire(&fold.state)
    );
    if let Some(i) = fold.pending_interaction() {
        match card {
            Card::Exact => out.push_str(&card_lines(i, true)),
            Card::ExactNotYours(why) => {
                out.push_str(&card_lines(i, false));
                out.push_str(&format!("\nYou may not answer this card: {why}"));
            }
            Card::Masked(why) => {
                let lines = card_lines(i, false);
                let scrubbed = sextant_core::redact::scrub_outbound(&lines, false);
                if scrubbed != lines {
                    out.push_str(&scrubbed);
                    out.push_str(
                        "\nMasked: parts of this card were redacted ([REDACTED…]); it is not \
                         exactly what would run.",
                    );
                } else {
                    out.push_str(&lines);
                }
                out.push_str(&format!("\nYou may not answer this card: {why}"));
            }
        }
    } else if let Some(text) = parts_text(&task["status"]["message"]["parts"]) {
        out.push_str(&format!("\nStatus: {text}"));
    }
    if let Some(text) = parts_text(&task["artifacts"][0]["parts"]) {
        out.push_str(&format!("\nResult:\n{text}"));
    }
    out
}

/// Text as a person reads it on the card: invisible and misleading characters escaped.
fn shown(text: &str) -> String {
    sextant_core::action::escape(text, sextant_core::action::Mode::Text).text
}

/// The lines a summary gives a pending card: what it asks (the action exactly as the console
/// shows it, invisible characters escaped), its ids and options, and, for a reader who may
/// answer (`answerable`), the digest to answer it with.
fn card_lines(i: &sextant_core::Interaction, answerable: bool) -> String {
    let mut out = String::new();
    let kind = serde_json::to_value(i.kind)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default();
    // The action as a person reads it (exact, invisible characters escaped) whenever there is
    // one: an exec agent's argv or patch and Codex's file and network approvals have no
    // `command` but run exactly this. A plain question's action is only its title: then the
    // description says more.
    let what = i
        .action
        .as_ref()
        .map(|a| a.shown.clone())
        .filter(|s| *s != i.title)
        .or(i.description.as_deref().map(shown))
        .map(|c| format!(" — {c}"))
        .unwrap_or_default();
    out.push_str(&format!(
        "\nPending interaction {} ({kind}): {}{what}. Answer with answer_agent_task using \
         task_id={}, interaction_id={} and one of: {}",
        i.interaction_id,
        shown(&i.title),
        i.task_id,
        i.interaction_id,
        i.option_ids().join(", ")
    ));
    let labels: Vec<String> = i
        .options
        .iter()
        .map(|o| format!("{} = {}", o.id, shown(&o.label)))
        .collect();
    out.push_str(&format!("\nOptions: {}", labels.join("; ")));
    if let Some(from) = &i.from {
        out.push_str(&format!("\nSent by {}.", shown(from)));
    }
    if let Some(a) = &i.action {
        if answerable {
            out.push_str(&format!(
                "\nAction digest: {} (pass it as digest: an answer without it is refused)",
                a.digest
            ));
        }
        for f in &a.flags {
            out.push_str(&format!("\nWarning: {}", f.message));
        }
    }
    if !i.fields.is_empty() {
        let fields: Vec<String> = i
            .fields
            .iter()
            .map(|f| {
                let req = if f.required { ", required" } else { "" };
                format!("{} ({}{req})", f.id, shown(&f.label))
            })
            .collect();
        out.push_str(&format!(
            "\nForm fields (pass as values): {}",
            fields.join("; ")
        ));
    }
    if i.reason_allowed {
        out.push_str("\nA reason may be given (reason); it is passed to the agent.");
    }
    if let Some(at) = i.expires_at {
        out.push_str(&format!(
            "\nExpires at {}; then {} is applied.",
            sextant_core::ids::format_time(at),
            i.default_option
        ));
    }
    out
}

/// Puts the pending card back exactly (paths on the person's machine still hidden) into a task
/// that was scrubbed for a remote reader who may answer it: the status message's data part
/// names the interaction, and this reader approves what it shows.
fn exact_card(task: &mut Value, i: &sextant_core::Interaction) {
    let exact = sextant_runtime::interactions::public_data(i)["interaction"].clone();
    let Some(parts) = task
        .pointer_mut("/status/message/parts")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for part in parts {
        let Some(card) = part.pointer_mut("/data/interaction") else {
            continue;
        };
        if card["interactionId"] == i.interaction_id.as_str() {
            // Keep what the server added when it rendered the part (where to answer it).
            let keep: Vec<(String, Value)> = ["answerPath", "answerUrl"]
                .iter()
                .filter_map(|k| card.get(*k).map(|v| (k.to_string(), v.clone())))
                .collect();
            *card = exact.clone();
            for (k, v) in keep {
                card[k] = v;
            }
        }
    }
}

#[tool_router]
impl AgentTools {
    pub fn new(app: AppState) -> Self {
        Self {
            app,
            tool_router: Self::tool_router()
                + Self::peer_tool_router()
                + Self::schedule_tool_router(),
        }
    }

    #[tool(
        description = "Read one task of a Sextant agent: its state, its result, and the pending \
                       interaction (approval) it waits for, with the exact task_id, \
                       interaction_id and declared options to pass to answer_agent_task. \
                       Returns a text summary, then the A2A Task as JSON.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn get_agent_task(
        &self,
        Extension(parts): Extension<http::request::Parts>,
        Parameters(args): Parameters<GetAgentTaskArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let who = match scope(&self.app, &parts, &args.agent_id, &args.task_id) {
            Ok(w) => w,
            Err(refused) => return refused,
        };
        let base = base_url(&self.app, &parts.headers);
        let (as_who, visibility) = who.view();
        let view = a2a::task_view(
            &self.app,
            &as_who,
            &args.agent_id,
            &args.task_id,
            &base,
            visibility,
        )
        .await;
        match view {
            Ok(TaskView {
                fold,
                mut task,
                row,
                ..
            }) => {
                // The one answer rule decides what this reader is shown: one who may answer
                // the card sees its exact action (escaped and flagged, as the console shows
                // it); anyone else a redacted one that says it was masked, with no digest to
                // approve it by.
                let may = self.app.runtime.may_answer(&who.principal, &row).await;
                let remote =
                    parts.extensions.get::<AssistantGrant>().is_some() || !who.principal.is_owner();
                if remote {
                    // What leaves for a runtime other than the owner's own console is scrubbed
                    // of credentials.
                    let emails = self.app.security.redact_emails;
                    sextant_core::redact::scrub_json(&mut task, emails);
                    // An `a2a` Agent's output is a peer's words, read here by a model.
                    let relayed =
                        self.app.runtime.agent(&args.agent_id).is_some_and(|a| {
                            matches!(a.engine, sextant_core::EngineSpec::A2a { .. })
                        });
                    if relayed {
                        sextant_core::untrusted::filter_json(&mut task);
                    }
                    if may.is_ok()
                        && let Some(i) = fold.pending_interaction()
                    {
                        exact_card(&mut task, i);
                    }
                }
                let card = match &may {
                    Ok(()) => Card::Exact,
                    Err(denied) if remote => Card::Masked(denied),
                    Err(denied) => Card::ExactNotYours(denied),
                };
                let text = summary(&args.agent_id, &fold, &task, card);
                crate::audited::task_read(
                    &self.app,
                    &who.principal,
                    &args.agent_id,
                    &args.task_id,
                    Ok(&fold.context_id),
                );
                Ok(success(text, task))
            }
            Err(e) => {
                crate::audited::task_read(
                    &self.app,
                    &who.principal,
                    &args.agent_id,
                    &args.task_id,
                    Err(&e.message),
                );
                rpc_refusal(e)
            }
        }
    }

    #[tool(
        description = "Answer a pending interaction (approval) of a Sextant agent task for the \
                       person, where the person allowed this assistant to. Name the exact \
                       task_id, interaction_id and action digest from get_agent_task and one \
                       of the declared options (e.g. accept, acceptForSession, decline, \
                       cancel); a new message_id per answer. A card raised by your own request \
                       is the person's to answer. \
                       Returns the task as it is right after the answer was recorded, without \
                       waiting for the agent to finish; read the result with get_agent_task.",
        annotations(
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn answer_agent_task(
        &self,
        Extension(parts): Extension<http::request::Parts>,
        Parameters(args): Parameters<AnswerAgentTaskArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let who = match scope(&self.app, &parts, &args.agent_id, &args.task_id) {
            Ok(w) => w,
            Err(refused) => {
                return match refused {
                    Ok(r) if r.is_error == Some(true) => {
                        self.answer_refused(&parts, &args.task_id, AnswerError::TaskNotFound)
                            .await
                    }
                    other => other,
                };
            }
        };
        let base = base_url(&self.app, &parts.headers);
        // The same scope as reads: a task the caller may not see, or of another Agent, is
        // "not found" (with the REST wording), before anything else is checked.
        let (as_who, visibility) = who.view();
        if let Err(e) = a2a::tasks::find_task(
            &self.app,
            &as_who,
            &args.agent_id,
            &args.task_id,
            visibility,
        )
        .await
        {
            return match e.code {
                Code::TaskNotFound => {
                    self.answer_refused(&parts, &args.task_id, AnswerError::TaskNotFound)
                        .await
                }
                _ => rpc_refusal(e),
            };
        }
        let answer = args.answer.clone();
        let request = AnswerRequest {
            principal: who.principal,
            task_id: args.task_id,
            interaction_id: args.interaction_id.clone(),
            option: args.answer,
            reason: args.reason,
            values: args.values.unwrap_or_default(),
            message_id: args.message_id,
            digest: args.digest,
        };
        let row = match crate::audited::answer(&self.app, PATH, request).await {
            Ok(row) => row,
            Err(e) => return api_refusal(answer_error(e)),
        };
        let upto = row.last_seq;
        let view = match a2a::render_task(&self.app, row, &base, None, Some(upto)).await {
            Ok(v) => v,
            Err(e) => return rpc_refusal(e),
        };
        let text = format!(
            "Answered interaction {} with {answer}. {}\nExecution goes on in the background; \
             call get_agent_task to follow the task to its result.",
            args.interaction_id,
            summary(&args.agent_id, &view.fold, &view.task, Card::Exact)
        );
        let body = json!({
            "interactionId": args.interaction_id,
            "answer": answer,
            "task": view.task,
        });
        Ok(success(text, body))
    }
}

impl AgentTools {
    /// `answer_agent_task` refused before the runtime saw the answer (a task this caller may
    /// not read, or of another Agent): recorded as the runtime's refusal would be, and worded
    /// as REST words it.
    async fn answer_refused(
        &self,
        parts: &http::request::Parts,
        task_id: &str,
        e: AnswerError,
    ) -> Result<CallToolResult, ErrorData> {
        let who = principal(parts)?;
        crate::audited::answer_refused(&self.app, PATH, &who, task_id, &e).await;
        api_refusal(answer_error(e))
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for AgentTools {
    fn get_info(&self) -> rmcp::model::ServerConfig {
        rmcp::model::ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("sextant", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Sextant's agents MCP server. get_agent_task reads a task of one of the \
                 person's agents; when it waits for a decision, the summary names the \
                 interaction and its declared options. answer_agent_task answers it with \
                 exactly one declared option; a text message is never an approval. \
                 a2a_discover, a2a_call, a2a_list, a2a_history and a2a_orchestrate talk to \
                 the person's registered remote A2A agents (peers). list_schedules, \
                 get_schedule, create_schedule, update_schedule, enable_schedule, \
                 disable_schedule, run_schedule_now, list_schedule_runs, \
                 replay_schedule_run, backfill_schedule and delete_schedule manage the \
                 person's schedules (plans that send a prompt to one of their agents at set \
                 times); results give the next fire times in words, in the plan's zone. With \
                 an assistant's workspace token, list_agent_peers and issue_agent_peers give \
                 the person's agents as A2A peers, a credential per agent.",
            )
    }
}

/// The `Host` names the service accepts: the loopback names, plus the configured public
/// URL's host.
fn allowed_hosts(public_url: Option<&str>) -> Vec<String> {
    let mut hosts: Vec<String> = LOOPBACK_HOSTS.iter().map(|h| h.to_string()).collect();
    let public = public_url
        .and_then(|u| u.parse::<http::Uri>().ok())
        .and_then(|u| {
            u.host()
                .map(|h| h.trim_matches(['[', ']']).to_ascii_lowercase())
        })
        .filter(|h| !h.is_empty());
    if let Some(h) = public
        && !hosts.contains(&h)
    {
        hosts.push(h);
    }
    hosts
}

/// The MCP service to mount at [`PATH`] inside the authenticated router.
pub fn service(app: &AppState) -> StreamableHttpService<AgentTools, NeverSessionManager> {
    let config = StreamableHttpServerConfig::default()
        // Stateless for every protocol version: no session can be bound to another caller.
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_allowed_hosts(allowed_hosts(app.config.public_url.as_deref()))
        .with_cancellation_token(app.shutdown.child_token());
    let tools = AgentTools::new(app.clone());
    StreamableHttpService::new(
        move || Ok(tools.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_keep_the_rest_wording() {
        let r = api_refusal(answer_error(AnswerError::Refused(
            sextant_core::interaction::AnswerRefusal::UnknownOption {
                declared: vec!["accept".into(), "decline".into()],
            },
        )))
        .expect("a tool error");
        assert_eq!(r.is_error, Some(true));
        let sc = r.structured_content.expect("structured");
        assert_eq!(sc["error"]["code"], "invalid_field");
        assert_eq!(sc["error"]["field"], "option");
        assert!(
            sc["error"]["message"]
                .as_str()
                .is_some_and(|m| m.ends_with("choose one of: accept, decline"))
        );
        assert!(api_refusal(ApiError::Internal("db".into())).is_err());
    }

    #[test]
    fn allowed_hosts_are_loopback_plus_the_public_host() {
        assert_eq!(allowed_hosts(None), ["localhost", "127.0.0.1", "::1"]);
        assert_eq!(
            allowed_hosts(Some("https://Sextant.example.com:8443/base/")),
            ["localhost", "127.0.0.1", "::1", "sextant.example.com"]
        );
        assert_eq!(
            allowed_hosts(Some("http://[::1]:9900")),
            ["localhost", "127.0.0.1", "::1"]
        );
        assert_eq!(
            allowed_hosts(Some("not a url")),
            ["localhost", "127.0.0.1", "::1"]
        );
    }
}
