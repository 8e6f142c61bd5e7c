//! The agents MCP server at `/api/v1/assistant-mcp` (rmcp, streamable HTTP): the bridge an
//! assistant runtime uses to read an Agent's task and answer its pending interaction on the
//! person's behalf. Tools:
//!
//! - `get_agent_task(agent_id, task_id)`: the task exactly as A2A `GetTask` renders it (same
//!   code path: [`a2a::task_view`]), after a plain-text summary naming the pending interaction,
//!   its ids and its declared options.
//! - `answer_agent_task(agent_id, task_id, interaction_id, answer, message_id[, reason,
//!   values])`: [`Runtime::answer`](sextant_runtime::Runtime::answer) as the caller; returns
//!   the task as it was right after the answer was journalled, without waiting for execution.
//!
//! **Who is calling.** The route sits behind [`crate::auth::resolve`]; each tool reads the
//! [`Principal`] from the `http::request::Parts` of *its own* POST (rmcp hands them over as a
//! request extension) and never caches it. The server is stateless (no `Mcp-Session-Id`), so
//! nothing a client holds can carry one caller's identity into another caller's request.
//!
//! **Visibility.** The console owner (`Principal::person()`) reads every task of the Agent,
//! whichever caller started it (the bridge serves the person's assistant, which answers
//! approvals for them); any other principal reads only its own tasks. A task the caller may
//! not read, or of another Agent, is "not found". Only the owner may answer (the runtime
//! enforces it).
//!
//! **Assistant capability tokens** (`sxa_…`, see `credentials`) work here too: such a token
//! reaches one Agent of this workspace only (any other `agent_id` is "not found"), reads that
//! Agent's tasks as the owner it was issued by would, and answers as that owner "via
//! assistant NAME". The owner, the workspace and the Agent come from Sextant's record of the
//! token, read on every request; nothing in the tool arguments can change them. The Agent's
//! access list and revocations apply to every caller (`assistant:NAME`, `anonymous-local`).
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
use sextant_runtime::{AnswerError, AnswerRequest};

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
    /// The action digest get_agent_task showed (`sha256:…`). When given, the answer is
    /// refused unless it is the digest of the action the interaction asks about.
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

/// Whom a tool call reads and answers as, for `agent_id`: an assistant token's owner (acting
/// through it) when it reaches that Agent, else the caller; TaskNotFound when the caller may not
/// read that Agent at all (the same answer as for a task it cannot see).
fn scope(
    app: &AppState,
    parts: &http::request::Parts,
    agent_id: &str,
    task_id: &str,
) -> Result<Principal, Result<CallToolResult, ErrorData>> {
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
        None => Ok(who),
        Some(g) if g.reaches(agent_id) && g.workspace == app.security.workspace => {
            g.acting_owner().ok_or_else(not_found)
        }
        Some(_) => Err(not_found()),
    }
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

/// The plain-text summary put before the task JSON.
pub fn summary(agent_id: &str, fold: &TaskFold, task: &Value) -> String {
    let mut out = format!(
        "Task {} (agent {agent_id}): {}",
        fold.task_id,
        state_wire(&fold.state)
    );
    if let Some(i) = fold.pending_interaction() {
        let kind = serde_json::to_value(i.kind)
            .ok()
            .and_then(|v| v.as_str().map(String::from))
            .unwrap_or_default();
        // The action as a person reads it (exact, invisible characters escaped) whenever there
        // is one: an exec agent's argv or patch and Codex's file and network approvals have no
        // `command` but run exactly this. A plain question's action is only its title: then
        // the description says more.
        let what = i
            .action
            .as_ref()
            .map(|a| a.shown.as_str())
            .filter(|shown| *shown != i.title)
            .or(i.description.as_deref())
            .map(|c| format!(" — {c}"))
            .unwrap_or_default();
        out.push_str(&format!(
            "\nPending interaction {} ({kind}): {}{what}. Answer with answer_agent_task using \
             task_id={}, interaction_id={} and one of: {}",
            i.interaction_id,
            i.title,
            fold.task_id,
            i.interaction_id,
            i.option_ids().join(", ")
        ));
        let labels: Vec<String> = i
            .options
            .iter()
            .map(|o| format!("{} = {}", o.id, o.label))
            .collect();
        out.push_str(&format!("\nOptions: {}", labels.join("; ")));
        if let Some(from) = &i.from {
            out.push_str(&format!("\nSent by {from}."));
        }
        if let Some(a) = &i.action {
            out.push_str(&format!(
                "\nAction digest: {} (pass it as digest to answer exactly this action)",
                a.digest
            ));
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
                    format!("{} ({}{req})", f.id, f.label)
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
    } else if let Some(text) = parts_text(&task["status"]["message"]["parts"]) {
        out.push_str(&format!("\nStatus: {text}"));
    }
    if let Some(text) = parts_text(&task["artifacts"][0]["parts"]) {
        out.push_str(&format!("\nResult:\n{text}"));
    }
    out
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
        let view = a2a::task_view(
            &self.app,
            &who,
            &args.agent_id,
            &args.task_id,
            &base,
            Visibility::OwnerReadsAll,
        )
        .await;
        match view {
            Ok(TaskView { fold, mut task, .. }) => {
                let mut text = summary(&args.agent_id, &fold, &task);
                // What leaves for a runtime other than the owner's own console is scrubbed of
                // credentials (an assistant reads as the owner, but it is remote).
                if parts.extensions.get::<AssistantGrant>().is_some() || !who.is_owner() {
                    let emails = self.app.security.redact_emails;
                    sextant_core::redact::scrub_json(&mut task, emails);
                    text = sextant_core::redact::scrub_outbound(&text, emails).into_owned();
                    // An `a2a` Agent's output is a peer's words, read here by a model.
                    let relayed =
                        self.app.runtime.agent(&args.agent_id).is_some_and(|a| {
                            matches!(a.engine, sextant_core::EngineSpec::A2a { .. })
                        });
                    if relayed {
                        sextant_core::untrusted::filter_json(&mut task);
                        text = sextant_core::untrusted::filter_inbound(&text);
                    }
                }
                crate::audited::task_read(
                    &self.app,
                    &who,
                    &args.agent_id,
                    &args.task_id,
                    Ok(&fold.context_id),
                );
                Ok(success(text, task))
            }
            Err(e) => {
                crate::audited::task_read(
                    &self.app,
                    &who,
                    &args.agent_id,
                    &args.task_id,
                    Err(&e.message),
                );
                rpc_refusal(e)
            }
        }
    }

    #[tool(
        description = "Answer a pending interaction (approval) of a Sextant agent task, as the \
                       console owner. Name the exact task_id and interaction_id from \
                       get_agent_task and one of the declared options (e.g. accept, \
                       acceptForSession, decline, cancel); a new message_id per answer. \
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
        if let Err(e) = a2a::tasks::find_task(
            &self.app,
            &who,
            &args.agent_id,
            &args.task_id,
            Visibility::OwnerReadsAll,
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
            principal: who,
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
            summary(&args.agent_id, &view.fold, &view.task)
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
