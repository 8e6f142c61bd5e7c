//! The outbound A2A tools on the agents MCP server: `a2a_discover`, `a2a_call`, `a2a_list`,
//! `a2a_history`, `a2a_orchestrate` — the same operations as `/api/v1/peers` (see
//! [`crate::api::peers`] and `docs/peers.md`), for any engine or assistant that speaks MCP. Only
//! the console owner may use them (they send messages with the owner's stored credentials);
//! anyone else gets a tool error. A result is a text summary, then the JSON (also as
//! structured content); a refusal is a tool error with the REST wording.

use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{ErrorData, tool, tool_router};
use serde::Deserialize;
use serde_json::Value;
use sextant_peers::{CallRequest, Mode};

use super::{AgentTools, api_refusal, principal, success};
use crate::error::ApiError;
use crate::extract::owner_only;

/// `a2a_discover` arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct DiscoverArgs {
    /// The agent's base URL (its card is read from `/.well-known/agent-card.json` under it),
    /// a card URL ending in `.json`, or a registered peer's name.
    pub url: String,
}

/// `a2a_call` arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct CallArgs {
    /// A registered peer's name (see a2a_list), or an https URL of an agent (called without
    /// credentials and without pinning).
    pub agent: String,
    /// The text to send (plain text; at most 32000 characters).
    pub message: String,
    /// Continue an earlier conversation: the context_id from a previous a2a_call result.
    #[serde(default)]
    pub context_id: Option<String>,
    /// Force streaming on or off (default: stream when the peer's card says it can).
    #[serde(default)]
    pub stream: Option<bool>,
}

/// `a2a_history` arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct HistoryArgs {
    /// The conversation's context_id (from a2a_call or a2a_list).
    pub context_id: String,
    /// The peer, when several peers share this context_id.
    #[serde(default)]
    pub peer: Option<String>,
    /// At most this many latest messages (1-200, default 50).
    #[serde(default)]
    pub limit: Option<usize>,
}

/// How `a2a_orchestrate` combines answers.
#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ModeArg {
    /// Every peer's answer (and failure).
    All,
    /// The first successful answer; the other calls are canceled.
    First,
    /// The best answer: completed first, then the closest skill match, then a non-empty
    /// reply, then the fastest.
    Best,
}

/// `a2a_orchestrate` arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct OrchestrateArgs {
    /// A skill id or tag the peers advertise (or a capability declared for them); `*` for
    /// every enabled peer.
    pub capability: String,
    /// The text to send to each of them.
    pub message: String,
    /// all, first or best (default all).
    #[serde(default)]
    pub mode: Option<ModeArg>,
}

fn owner(parts: &http::request::Parts) -> Result<Result<(), ApiError>, ErrorData> {
    let who = principal(parts)?;
    Ok(owner_only(&who).map_err(|e| match e {
        ApiError::Unauthorized(_) => ApiError::Unauthorized(
            "the a2a tools need the console token: Authorization: Bearer $(sextant token)".into(),
        ),
        other => other,
    }))
}

/// Runs `f` on the peers service as the owner, turning refusals into tool errors.
macro_rules! as_owner {
    ($self:ident, $parts:ident, |$peers:ident, $who:ident| $body:expr) => {{
        if let Err(e) = owner(&$parts)? {
            return api_refusal(e);
        }
        let $who = principal(&$parts)?;
        let $peers = &$self.app.peers;
        match $body {
            Ok(v) => v,
            Err(e) => return api_refusal(ApiError::from(e)),
        }
    }};
}

fn line(v: &Value, k: &str) -> String {
    v.get(k).and_then(Value::as_str).unwrap_or("").to_string()
}

/// `s` cut to `max` characters, with `…` when cut.
fn shorten(s: &str, max: usize) -> String {
    sextant_core::text::cut(s, max).to_string()
}

fn to_value<T: serde::Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}

/// The summary of a card (discover).
fn card_summary(s: &Value) -> String {
    let mut out = format!(
        "Card of {} ({}): {}",
        line(s, "name"),
        line(s, "cardUrl"),
        shorten(&line(s, "description"), 300)
    );
    out.push_str(&format!(
        "\nJSON-RPC: {}; streaming: {}; auth: {}",
        s["jsonrpcUrl"].as_str().unwrap_or("none"),
        if s["capabilities"]["streaming"] == true {
            "yes"
        } else {
            "no"
        },
        line(&s["auth"], "summary")
    ));
    let skills: Vec<String> = s["skills"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|k| format!("{} ({})", line(k, "id"), line(k, "name")))
                .collect()
        })
        .unwrap_or_default();
    out.push_str(&format!(
        "\nSkills ({}): {}",
        s["skillsTotal"],
        skills.join(", ")
    ));
    match s["problems"].as_array() {
        Some(p) if !p.is_empty() => {
            out.push_str("\nProblems:");
            for x in p {
                out.push_str(&format!("\n- {}", x.as_str().unwrap_or("")));
            }
        }
        _ => out.push_str("\nProblems: none"),
    }
    out.push_str(&format!("\nPin (sha-256): {}", line(s, "pinHash")));
    if let Some(name) = s["registeredAs"].as_str() {
        out.push_str(&format!(
            "\nRegistered as peer {name}; matches its pin: {}",
            s["matchesPin"]
        ));
    }
    out
}

/// The summary of one call result.
fn call_summary(c: &Value) -> String {
    let mut out = format!(
        "{} answered: {} ({})",
        line(c, "peer"),
        line(c, "status"),
        c["task_state"].as_str().unwrap_or("a message")
    );
    let reply = line(c, "reply");
    if !reply.trim().is_empty() {
        // A peer's words reach a model here: framed as untrusted, like inbound text (the
        // reply is already scrubbed and filtered).
        out.push_str(&format!(
            "\n{}\n{}\n{}",
            sextant_core::untrusted::reply_header(&line(c, "peer")),
            shorten(&reply, 4000),
            sextant_core::untrusted::FRAME_END
        ));
    }
    out.push_str(&format!(
        "\ncontext_id={} task_id={}",
        line(c, "context_id"),
        c["task_id"].as_str().unwrap_or("-")
    ));
    if let Some(h) = c["hint"].as_str() {
        out.push_str(&format!("\n{h}"));
    }
    out
}

#[tool_router(router = peer_tool_router, vis = "pub(super)")]
impl AgentTools {
    #[tool(
        description = "Fetch and check a remote A2A agent's card (through Sextant's network \
                       guard): name, description, skills, interfaces, capabilities, \
                       authentication, the pin hash, and plain-language validation problems. \
                       Takes a URL or a registered peer's name.",
        annotations(read_only_hint = true, open_world_hint = true)
    )]
    async fn a2a_discover(
        &self,
        Extension(parts): Extension<http::request::Parts>,
        Parameters(args): Parameters<DiscoverArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let s = as_owner!(self, parts, |peers, _who| peers.discover(&args.url).await);
        let v = to_value(&s);
        Ok(success(card_summary(&v), v))
    }

    #[tool(
        description = "Send a text message to a remote A2A agent and return its answer: \
                       {status, reply, task_state, parts, task_id, context_id}. agent is a \
                       registered peer's name (see a2a_list) or an agent URL. Pass the \
                       returned context_id to continue the conversation; when status is \
                       needs_input, the next call's message answers the waiting remote task.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = true
        )
    )]
    async fn a2a_call(
        &self,
        Extension(parts): Extension<http::request::Parts>,
        Parameters(args): Parameters<CallArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let req = CallRequest {
            agent: args.agent,
            message: args.message,
            context_id: args.context_id,
            stream: args.stream,
        };
        let r = as_owner!(self, parts, |peers, who| peers.call(&who, req).await);
        let v = to_value(&r);
        Ok(success(call_summary(&v), v))
    }

    #[tool(
        description = "List the registered remote A2A peers (URL, capabilities, enabled, \
                       paused by the owner or disabled after a card change, call metrics: \
                       calls, failures, latency) \
                       and the latest saved outbound conversations (context_id, peer).",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn a2a_list(
        &self,
        Extension(parts): Extension<http::request::Parts>,
    ) -> Result<CallToolResult, ErrorData> {
        let l = as_owner!(self, parts, |peers, who| peers.list(&who).await);
        let mut out = format!("{} peers:", l.peers.len());
        for p in &l.peers {
            out.push_str(&format!(
                "\n- {} ({}) {}: capabilities [{}]; {} calls, {} failures, avg {} ms",
                p.name,
                p.url,
                match (&p.paused_at, &p.disabled) {
                    (Some(_), _) => "PAUSED by its owner",
                    (None, Some(_)) => "DISABLED (card changed)",
                    (None, None) => "enabled",
                },
                p.capabilities.join(", "),
                p.metrics.calls,
                p.metrics.failures,
                p.metrics
                    .avg_latency_ms
                    .map_or_else(|| "null".to_string(), |ms| ms.to_string())
            ));
        }
        out.push_str(&format!("\n{} saved conversations:", l.conversations.len()));
        for c in &l.conversations {
            out.push_str(&format!(
                "\n- context_id={} with {} ({} exchanges, last {})",
                c.context_id, c.peer, c.exchanges, c.updated_at
            ));
        }
        Ok(success(out, to_value(&l)))
    }

    #[tool(
        description = "Read a saved outbound A2A conversation by context_id: the messages \
                       Sextant sent and the peer's replies, oldest first (long messages cut).",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn a2a_history(
        &self,
        Extension(parts): Extension<http::request::Parts>,
        Parameters(args): Parameters<HistoryArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let mut h = as_owner!(self, parts, |peers, who| peers
            .history(&who, &args.context_id, args.peer.as_deref(), args.limit)
            .await);
        // The peer's words come from the journal raw (the person reads them so in the
        // console); here a model reads them, in the summary and in the JSON (text block and
        // structured content) alike, so every copy is scrubbed of secrets and filtered for
        // injection markup first.
        for m in &mut h.messages {
            let text = sextant_core::redact::scrub_outbound(&m.text, false);
            m.text = sextant_core::untrusted::filter_inbound(&text);
        }
        let mut v = to_value(&h);
        sextant_core::untrusted::filter_json(&mut v);
        let mut out = format!(
            "Conversation {} with {} ({} of {} messages):",
            line(&v, "context_id"),
            line(&v, "peer"),
            h.messages.len(),
            h.total_messages
        );
        out.push_str(&format!(
            "\n{}",
            sextant_core::untrusted::reply_header(&line(&v, "peer"))
        ));
        for m in v["messages"].as_array().into_iter().flatten() {
            out.push_str(&format!(
                "\n{}: {}",
                line(m, "role"),
                shorten(&line(m, "text"), 1000)
            ));
        }
        out.push_str(&format!("\n{}", sextant_core::untrusted::FRAME_END));
        Ok(success(out, v))
    }

    #[tool(
        description = "Send the same text to every enabled peer advertising a capability (a \
                       skill id or tag, or * for all) and combine the answers: mode all (every \
                       answer), first (the first successful answer; the rest are canceled) or \
                       best (completed before waiting-for-input, then the closest skill match, \
                       then a non-empty reply, then the fastest; failures never win).",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            open_world_hint = true
        )
    )]
    async fn a2a_orchestrate(
        &self,
        Extension(parts): Extension<http::request::Parts>,
        Parameters(args): Parameters<OrchestrateArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let mode = match args.mode {
            None | Some(ModeArg::All) => Mode::All,
            Some(ModeArg::First) => Mode::First,
            Some(ModeArg::Best) => Mode::Best,
        };
        let o = as_owner!(self, parts, |peers, who| peers
            .orchestrate(&who, &args.capability, &args.message, mode)
            .await);
        let mut out = o.reason.clone();
        out.push_str(&format!(
            "\n{}",
            sextant_core::untrusted::reply_header("(each peer below)")
        ));
        if let Some(w) = &o.winner {
            out.push_str(&format!("\nWinner: {}", call_summary(w)));
        }
        for r in &o.results {
            let detail = match r["error"].as_str() {
                Some(e) => e.to_string(),
                None => shorten(&line(r, "reply"), 300),
            };
            out.push_str(&format!(
                "\n- {}: {} — {detail}",
                line(r, "peer"),
                line(r, "status")
            ));
        }
        out.push_str(&format!("\n{}", sextant_core::untrusted::FRAME_END));
        Ok(success(out, to_value(&o)))
    }
}
