//! `a2a_call` and `a2a_orchestrate`.
//!
//! **One exchange = one journalled task.** Before anything is sent, the outgoing message is
//! admitted to the journal as a task of the outbound Session for (caller, peer, contextId)
//! (created on first use; origin `outbound`), followed by `turn_started` / working. The reply
//! is journalled as a `reply` artifact (its text) and a final `task_state` whose message
//! carries the remote ids and state in its metadata (`peer`, `remoteTaskId`,
//! `remoteContextId`, `remoteTaskState`, `latencyMs`, `streamed`). The local task ends
//! `completed` when the peer answered (whatever the remote task's state), `failed` when the
//! call failed, or in the remote's own terminal state when that is failed / rejected /
//! canceled; a call canceled by `first` ends `canceled`.
//!
//! These are written straight to the journal (`Journal::admit`, `Journal::append`), not
//! through `Runtime::admit`: an outbound exchange is no input for a local Agent, so none of
//! the runtime's checks, caps or workers apply (the runtime's overview says the same).
//!
//! **Reading** is [`crate::follow`]'s, as for the `a2a` engine; an exchange that ends before
//! the remote task settles is followed in the background (`background.rs`).
//!
//! **Multi-turn.** A call without `context_id` starts a conversation with a fresh contextId
//! (Sextant's, sent to the peer); passing it back continues it. When the previous exchange in
//! that conversation left the remote task waiting for input, the next message carries that
//! remote `taskId`, so the answer goes to the waiting task.

use std::time::{Duration, Instant};

use crate::client::{A2aClient, Accumulated, ClientError, Endpoint, EventStream};
use a2a::{Message, Part, PartContent, Role, SendMessageRequest, SendMessageResponse};
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sextant_core::a2a;
use sextant_core::a2a::{StreamResponse, TaskState};
use sextant_core::event::state_wire;
use sextant_core::ids::{format_time, new_id};
use sextant_core::{EventBody, Principal};
use sextant_journal::{Admission, NewEvent};
use tokio_util::sync::CancellationToken;

use super::{PeerConnection, PeerError, Peers, parse_url};
use crate::follow::{Follower, Quiet, Unsettled};
use sextant_core::parts::artifact;

/// Longest message sent, in characters.
pub const MAX_MESSAGE_CHARS: usize = 32_000;
/// Longest reply returned by the tools, in characters (the journal keeps more).
pub const MAX_REPLY_CHARS: usize = 16_000;
/// Longest reply kept in the journal.
const JOURNAL_REPLY_CHARS: usize = 64_000;
/// Longest text of one part in `parts`.
const PART_CHARS: usize = 4_000;
/// Most parts returned.
const MAX_PARTS: usize = 20;
/// Largest data part returned inline (serialized bytes).
const DATA_BYTES: usize = 8 * 1024;
/// Calls an orchestration runs at once.
const FAN_OUT: usize = 6;

/// `a2a_call` arguments.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallRequest {
    /// A registered peer's name, or a URL (called unpinned, without a token, public
    /// addresses only).
    pub agent: String,
    pub message: String,
    /// Continue this conversation (from an earlier result).
    #[serde(default)]
    pub context_id: Option<String>,
    /// Force streaming on or off (default: streaming when the card says the peer streams).
    #[serde(default)]
    pub stream: Option<bool>,
}

/// What `a2a_call` returns.
#[derive(Debug, Clone, Serialize)]
pub struct CallResult {
    pub peer: String,
    /// `ok` (answered), `waiting_for_person` (the remote task asked for a decision: it is an
    /// inbox card for the person, `interaction_id`), `needs_input` (it waits for input),
    /// `working` (it had not settled when the reading ended: Sextant follows it in the
    /// background and journals its answer in the conversation, `background.rs`),
    /// `failed` (the remote task
    /// failed, was rejected or canceled), `canceled` (stopped by orchestrate's `first`).
    pub status: &'static str,
    /// The reply's text (artifacts, then the status message's question or reason).
    pub reply: String,
    pub reply_truncated: bool,
    /// The remote task's state (`TASK_STATE_…`), or null for a direct Message answer.
    pub task_state: Option<String>,
    /// The reply's parts: text (cut), data (inline when small), files (described).
    pub parts: Vec<Value>,
    /// The remote task id.
    pub task_id: Option<String>,
    /// Pass this back to continue the conversation.
    pub context_id: String,
    /// The outbound Session that journals this conversation.
    pub session_id: String,
    pub latency_ms: u64,
    pub streamed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    /// `waiting_for_person`: the inbox card the person answers (never the caller).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interaction_id: Option<String>,
}

/// How `a2a_orchestrate` combines the answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Every answer (and every failure), by peer name.
    All,
    /// The first successful answer, in completion order; the other calls are canceled.
    First,
    /// The best answer (see [`rank`]).
    Best,
}

impl Mode {
    pub fn parse(s: &str) -> Option<Mode> {
        match s.trim().to_ascii_lowercase().as_str() {
            "all" => Some(Mode::All),
            "first" => Some(Mode::First),
            "best" => Some(Mode::Best),
            _ => None,
        }
    }
}

/// What `a2a_orchestrate` returns.
#[derive(Debug, Clone, Serialize)]
pub struct Orchestration {
    pub capability: String,
    pub mode: Mode,
    /// The peers called, by name.
    pub peers: Vec<String>,
    /// Disabled peers that would have matched, with why.
    pub skipped: Vec<Value>,
    /// Every call's result (or error), by peer name.
    pub results: Vec<Value>,
    /// `first` / `best`: the chosen answer.
    pub winner: Option<Value>,
    /// Why the winner won (or why there is none).
    pub reason: String,
    /// Peers matched by their public card though they declare an extended card, and why.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// How one event stream was opened.
pub(crate) async fn open(
    client: &A2aClient,
    ep: &Endpoint,
    req: &SendMessageRequest,
    streaming: bool,
) -> Result<(EventStream, bool), ClientError> {
    if streaming {
        match client.send_streaming_message(ep, req).await {
            Ok(s) => return Ok((s, true)),
            Err(e) if e.streaming_unsupported() => {
                tracing::debug!(error = %e, "peer does not stream; using SendMessage");
            }
            Err(e) => return Err(e),
        }
    }
    let ev = match client.send_message(ep, req).await? {
        SendMessageResponse::Task(t) => StreamResponse::Task(t),
        SendMessageResponse::Message(m) => StreamResponse::Message(m),
    };
    Ok((Box::pin(futures::stream::iter([Ok(ev)])), false))
}

/// Reads a stream into `follower` until it settles ([`Follower::take`]), waits for the
/// peer's own person (then it is followed in the background: the call does not hold its
/// caller for as long as that person takes), or ends; whether it settled.
pub(crate) async fn consume(
    stream: &mut EventStream,
    follower: &mut Follower,
) -> Result<bool, ClientError> {
    while let Some(ev) = stream.next().await {
        let ev = ev?;
        // `Quiet` never fails.
        if follower.take(&ev, &mut Quiet).await.unwrap_or(true) {
            return Ok(true);
        }
        if follower.waits_elsewhere().is_some() {
            return Ok(false);
        }
    }
    Ok(false)
}

/// `s` cut to `max` characters (with `…`), and whether it was cut.
fn cut(s: &str, max: usize) -> (String, bool) {
    let c = sextant_core::text::cut(s, max);
    (c.to_string(), c.cut)
}

/// The parts as the tools show them.
fn parts_json(parts: &[Part]) -> Vec<Value> {
    parts
        .iter()
        .take(MAX_PARTS)
        .map(|p| {
            let mut v = match &p.content {
                PartContent::Text(t) => {
                    let (t, cut_) = cut(t, PART_CHARS);
                    let mut v = json!({ "text": t });
                    if cut_ {
                        v["truncated"] = json!(true);
                    }
                    v
                }
                PartContent::Data(d) => {
                    let size = d.to_string().len();
                    if size <= DATA_BYTES {
                        json!({ "data": d })
                    } else {
                        json!({ "data_omitted_bytes": size })
                    }
                }
                PartContent::Url(u) => json!({ "url": u }),
                PartContent::Raw(b) => json!({ "raw_bytes": b.len() }),
            };
            if let Some(f) = &p.filename {
                v["filename"] = json!(f);
            }
            if let Some(m) = &p.media_type {
                v["media_type"] = json!(m);
            }
            v
        })
        .collect()
}

fn status_of(acc: &Accumulated) -> &'static str {
    if acc.message.is_some() {
        return "ok";
    }
    match acc.state {
        Some(TaskState::Completed) => "ok",
        Some(TaskState::InputRequired | TaskState::AuthRequired) => "needs_input",
        Some(TaskState::Failed | TaskState::Rejected | TaskState::Canceled) => "failed",
        _ => "working",
    }
}

fn valid_context(ctx: &str) -> Result<(), PeerError> {
    if ctx.is_empty() || ctx.len() > 200 || ctx.chars().any(char::is_control) {
        return Err(PeerError::Invalid {
            field: "context_id",
            message: "context_id: 1-200 printable characters".into(),
        });
    }
    Ok(())
}

/// Checks a message to send.
pub(crate) fn valid_message(text: &str) -> Result<(), PeerError> {
    if text.trim().is_empty() {
        return Err(PeerError::Invalid {
            field: "message",
            message: "message must not be empty".into(),
        });
    }
    if text.chars().count() > MAX_MESSAGE_CHARS {
        return Err(PeerError::Invalid {
            field: "message",
            message: format!("message: at most {MAX_MESSAGE_CHARS} characters"),
        });
    }
    Ok(())
}

/// What one exchange with a peer came to, for [`Peers::conclude`].
pub(crate) struct Exchange<'a> {
    pub(crate) acc: &'a Accumulated,
    pub(crate) canceled: bool,
    /// The call failed (the client's error).
    pub(crate) failed: Option<String>,
    pub(crate) latency: Duration,
    pub(crate) streamed: bool,
    /// Who made the call, when it is not the person (shown on a card).
    pub(crate) from: Option<String>,
}

/// How long an outbound card waits for the person before its default (cancel) applies.
pub(crate) const CARD_EXPIRY: chrono::Duration = chrono::Duration::hours(24);

/// A peer's reply as a caller of the tools gets it: credential-shaped strings scrubbed and
/// prompt-injection markup filtered, as inbound text is (the journal keeps the raw reply for
/// the person). The MCP tools also frame it as untrusted ([`sextant_core::untrusted`]).
pub(crate) fn screen_reply(reply: &str, max: usize) -> (String, bool) {
    let scrubbed = sextant_core::redact::scrub_outbound(reply, false);
    let (kept, truncated) = cut(&scrubbed, max);
    (sextant_core::untrusted::filter_inbound(&kept), truncated)
}

/// The reply's parts likewise: every string scrubbed and filtered.
fn screen_parts(mut parts: Vec<Value>) -> Vec<Value> {
    for p in &mut parts {
        sextant_core::redact::scrub_json(p, false);
        screen_strings(p);
    }
    parts
}

fn screen_strings(v: &mut Value) {
    match v {
        Value::String(s) => *s = sextant_core::untrusted::filter_inbound(s),
        Value::Array(a) => a.iter_mut().for_each(screen_strings),
        Value::Object(o) => o.values_mut().for_each(screen_strings),
        _ => {}
    }
}

impl Peers {
    /// Journals how an exchange of `task` ended: the reply, then the final state — or, when
    /// the remote task waits for a decision, an inbox card for the person (returned), which
    /// the person's answer sends on to the same remote task ([`Peers::answer_card`]).
    pub(crate) async fn conclude(
        &self,
        conn: &PeerConnection,
        task: &sextant_journal::TaskRow,
        ctx: &str,
        ex: &Exchange<'_>,
    ) -> Result<Option<sextant_core::Interaction>, PeerError> {
        let acc = ex.acc;
        let remote_state = acc.state.as_ref().map(state_wire);
        let mut card = None;
        let (state, note) = if ex.canceled {
            (
                TaskState::Canceled,
                "Canceled: another peer answered first.".to_string(),
            )
        } else if let Some(e) = &ex.failed {
            (TaskState::Failed, format!("{}: {e}", conn.name))
        } else {
            match &acc.state {
                Some(s @ (TaskState::Failed | TaskState::Rejected | TaskState::Canceled)) => (
                    s.clone(),
                    format!("{}'s task ended {}.", conn.name, state_wire(s)),
                ),
                Some(TaskState::AuthRequired | TaskState::InputRequired) => {
                    let (mut i, prompt) = crate::questions::remote_interaction(
                        &conn.name,
                        acc,
                        self.clock().now() + CARD_EXPIRY,
                    );
                    i.task_id = task.task_id.to_string();
                    i.from = ex.from.clone();
                    i.engine_ref["outbound"] = json!(true);
                    let text = sextant_runtime::interactions::pending_text(&i, &prompt);
                    let state = i.waiting_state();
                    card = Some(i);
                    (state, text)
                }
                Some(s) => (
                    TaskState::Completed,
                    format!("{} answered ({}).", conn.name, state_wire(s)),
                ),
                None => (
                    TaskState::Completed,
                    format!("{} answered with a message.", conn.name),
                ),
            }
        };
        let reply = acc.reply_text();
        let mut events = Vec::new();
        let at = self.clock().now();
        if !reply.trim().is_empty() {
            let (kept, _) = cut(&reply, JOURNAL_REPLY_CHARS);
            events.push(NewEvent {
                task_id: Some(task.task_id.to_string()),
                body: EventBody::Artifact {
                    artifact: artifact(new_id(), "reply", vec![Part::text(kept)]),
                    append: false,
                    last_chunk: true,
                },
                at,
            });
        }
        let latency_ms = u64::try_from(ex.latency.as_millis()).unwrap_or(u64::MAX);
        let mut parts = vec![Part::text(note)];
        if let Some(i) = &card {
            parts.push(
                Part::data(sextant_runtime::interactions::public_data(i))
                    .with_media_type("application/json"),
            );
            events.push(NewEvent {
                task_id: Some(task.task_id.to_string()),
                body: EventBody::InteractionRaised {
                    interaction: i.clone(),
                },
                at,
            });
        }
        let mut status = Message::new(Role::Agent, parts);
        status.message_id = new_id();
        status.context_id = Some(ctx.to_string());
        status.task_id = Some(task.task_id.to_string());
        status.metadata = Some(
            [
                ("peer", json!(conn.name)),
                ("remoteTaskId", json!(acc.task_id)),
                ("remoteContextId", json!(acc.context_id)),
                ("remoteTaskState", json!(remote_state)),
                ("latencyMs", json!(latency_ms)),
                ("streamed", json!(ex.streamed)),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        );
        events.push(NewEvent {
            task_id: Some(task.task_id.to_string()),
            body: EventBody::TaskState {
                state,
                message: Some(status),
            },
            at,
        });
        self.journal().append(&task.session_id, events).await?;
        Ok(card)
    }

    /// The card a conversation's remote task waits on, if one is pending: (interaction id,
    /// remote task id).
    async fn pending_card(
        &self,
        caller: &str,
        agent_id: &str,
        ctx: &str,
    ) -> Result<Option<(String, Option<String>)>, PeerError> {
        let Some(session) = self
            .journal()
            .outbound_session(caller, agent_id, ctx)
            .await?
        else {
            return Ok(None);
        };
        let events = self
            .journal()
            .session_events(&session.session_id, 0, 100_000)
            .await?;
        let mut open: Vec<(String, Option<String>)> = Vec::new();
        for e in &events {
            match &e.body {
                EventBody::InteractionRaised { interaction } => open.push((
                    interaction.interaction_id.clone(),
                    interaction.engine_ref["remoteTaskId"]
                        .as_str()
                        .map(String::from),
                )),
                EventBody::InteractionAnswered { answer } => {
                    open.retain(|(id, _)| *id != answer.interaction_id)
                }
                _ => {}
            }
        }
        Ok(open.pop())
    }
}

enum Failure {
    Client(ClientError),
    Canceled,
}

/// One exchange with a peer, as [`Peers::call_with`] sent and read it.
struct Exchanged {
    outcome: Result<(), Failure>,
    follower: Follower,
    /// The reading reached a point where this side acts ([`Follower::take`]).
    settled: bool,
    streamed: bool,
    latency: Duration,
}

/// The message as sent to the peer (continuing the remote task that waits for input, if
/// any) and as journalled (naming the peer and that remote task).
fn outgoing_messages(
    conn: &PeerConnection,
    text: &str,
    ctx: &str,
    continuing: &Option<String>,
) -> (Message, Message) {
    let mut remote = Message::new(Role::User, vec![Part::text(text.to_string())]);
    remote.message_id = new_id();
    remote.context_id = Some(ctx.to_string());
    remote.task_id = continuing.clone();
    let mut local = remote.clone();
    local.task_id = None;
    local.metadata = Some(
        [
            ("peer".to_string(), json!(conn.name)),
            ("remoteTaskId".to_string(), json!(continuing)),
        ]
        .into_iter()
        .collect(),
    );
    (remote, local)
}

/// What `a2a_call` answers for an exchange that ended (not canceled, not failed): the reply
/// screened and bounded, its status, and a hint for what to do next.
fn call_result(
    conn: &PeerConnection,
    acc: &Accumulated,
    streamed: bool,
    card: Option<sextant_core::Interaction>,
    ctx: String,
    session_id: String,
    latency_ms: u64,
) -> CallResult {
    let (reply, reply_truncated) = screen_reply(&acc.reply_text(), MAX_REPLY_CHARS);
    let status = match &card {
        Some(_) => "waiting_for_person",
        None => status_of(acc),
    };
    let context_id = acc.context_id.clone().unwrap_or(ctx);
    let hint = call_hint(&conn.name, card.as_ref(), status, &context_id);
    CallResult {
        peer: conn.name.clone(),
        status,
        reply,
        reply_truncated,
        task_state: acc.state.as_ref().map(state_wire),
        parts: screen_parts(parts_json(&acc.parts())),
        task_id: acc.task_id.clone(),
        context_id,
        session_id,
        latency_ms,
        streamed,
        hint,
        interaction_id: card.map(|c| c.interaction_id),
    }
}

/// What the caller should do next: wait for the person's decision on `card`, send the input
/// the peer waits for, or know that the peer's task had not finished.
fn call_hint(
    peer: &str,
    card: Option<&sextant_core::Interaction>,
    status: &str,
    context_id: &str,
) -> Option<String> {
    match (card, status) {
        (Some(card), _) => Some(format!(
            "{peer} asked for a decision, which only the person makes: it is card {} in the \
             Sextant inbox (answer at {}). This call now waits for the person; a2a_call \
             cannot answer it. Tell the person, and read the conversation again later with \
             a2a_history (context_id={context_id}).",
            card.interaction_id,
            sextant_runtime::interactions::answer_path(&card.interaction_id)
        )),
        (None, "needs_input") => Some(format!(
            "{peer} is waiting for more input: call again with context_id={context_id} and \
             the answer; it goes to the same remote task."
        )),
        (None, "working") => Some(format!(
            "{peer}'s task had not finished when its answer ended."
        )),
        _ => None,
    }
}

impl Peers {
    /// `a2a_call`: one exchange with a registered peer (by name) or a URL.
    pub async fn call(
        &self,
        caller: &Principal,
        req: CallRequest,
    ) -> Result<CallResult, PeerError> {
        self.call_with(caller, req, None).await
    }

    async fn target(&self, agent: &str) -> Result<PeerConnection, PeerError> {
        let agent = agent.trim();
        if agent.is_empty() {
            return Err(PeerError::Invalid {
                field: "agent",
                message: "agent is required: a registered peer's name or a URL".into(),
            });
        }
        if agent.contains("://") {
            let url = parse_url("agent", agent)?;
            self.connect_url(&url).await
        } else {
            self.connect(agent).await
        }
    }

    /// The remote task a conversation's last exchange left waiting, if any.
    async fn waiting_remote_task(
        &self,
        caller: &str,
        agent_id: &str,
        ctx: &str,
    ) -> Result<Option<String>, PeerError> {
        let Some(session) = self
            .journal()
            .outbound_session(caller, agent_id, ctx)
            .await?
        else {
            return Ok(None);
        };
        let events = self
            .journal()
            .session_events(&session.session_id, 0, 100_000)
            .await?;
        let last = events.iter().rev().find_map(|e| match &e.body {
            EventBody::TaskState {
                message: Some(m), ..
            } => m.metadata.as_ref().filter(|md| md.contains_key("peer")),
            _ => None,
        });
        Ok(last.and_then(|md| {
            let waiting = matches!(
                md.get("remoteTaskState").and_then(Value::as_str),
                Some("TASK_STATE_INPUT_REQUIRED" | "TASK_STATE_AUTH_REQUIRED")
            );
            waiting
                .then(|| {
                    md.get("remoteTaskId")
                        .and_then(Value::as_str)
                        .map(String::from)
                })
                .flatten()
        }))
    }

    fn canceled_result(peer: &str, ctx: String) -> CallResult {
        CallResult {
            peer: peer.to_string(),
            status: "canceled",
            reply: String::new(),
            reply_truncated: false,
            task_state: None,
            parts: Vec::new(),
            task_id: None,
            context_id: ctx,
            session_id: String::new(),
            latency_ms: 0,
            streamed: false,
            hint: Some("another peer answered first".into()),
            interaction_id: None,
        }
    }

    /// [`call`](Self::call), stoppable by `cancel` (orchestrate's `first`).
    pub(crate) async fn call_with(
        &self,
        caller: &Principal,
        req: CallRequest,
        cancel: Option<CancellationToken>,
    ) -> Result<CallResult, PeerError> {
        valid_message(&req.message)?;
        if let Some(c) = &req.context_id {
            valid_context(c)?;
        }
        let ctx = req.context_id.clone().unwrap_or_else(new_id);
        let Some(conn) = self
            .target_unless_canceled(&req.agent, cancel.as_ref())
            .await?
        else {
            return Ok(Self::canceled_result(&req.agent, ctx));
        };
        let caller_key = caller.key();
        self.refuse_while_card_pending(&caller_key, &conn, &ctx)
            .await?;
        self.refuse_while_following(&caller_key, &conn, &ctx)
            .await?;
        let continuing = self
            .waiting_remote_task(&caller_key, &conn.agent_id, &ctx)
            .await?;
        let text = sextant_core::redact::scrub_outbound(&req.message, false).into_owned();

        // Journal the outgoing message first: accepted = durable.
        let (remote, local) = outgoing_messages(&conn, &text, &ctx, &continuing);
        let task = self
            .journal_outgoing(caller, &conn, &ctx, &text, local)
            .await?;

        let want_stream = req.stream.unwrap_or(conn.streaming);
        let sent = self
            .exchange(
                &conn,
                remote,
                want_stream,
                continuing.is_some(),
                cancel.as_ref(),
            )
            .await;

        let latency_ms = u64::try_from(sent.latency.as_millis()).unwrap_or(u64::MAX);
        // A remote task that has not settled (the time limit cut the reading, the answer was
        // not final, its own person decides) is followed in the background; the reply is
        // journalled in this task when it comes.
        if sent.follower.acc.task_id.is_some()
            && !sent.settled
            && !matches!(sent.outcome, Err(Failure::Canceled))
        {
            self.record(&conn, sent.latency, None).await;
            let unsettled = Unsettled {
                follower: &sent.follower,
                streamed: sent.streamed,
            };
            let hint = self.follow_call(&conn, &task, unsettled, caller).await?;
            let mut r = call_result(
                &conn,
                &sent.follower.acc,
                sent.streamed,
                None,
                ctx,
                task.session_id.into(),
                latency_ms,
            );
            r.status = "working";
            r.hint = Some(hint);
            return Ok(r);
        }
        // Journal the answer (or the failure, or the person's card).
        let card = self
            .journal_answer(caller, &conn, &task, &ctx, &sent)
            .await?;
        match sent.outcome {
            Err(Failure::Client(e)) => Err(PeerError::from_client(&conn.name, e)),
            Err(Failure::Canceled) => {
                self.cancel_remote_task(&conn, &sent.follower.acc);
                let mut r = Self::canceled_result(&conn.name, ctx);
                r.session_id = task.session_id.into();
                r.latency_ms = latency_ms;
                Ok(r)
            }
            Ok(()) => Ok(call_result(
                &conn,
                &sent.follower.acc,
                sent.streamed,
                card,
                ctx,
                task.session_id.into(),
                latency_ms,
            )),
        }
    }

    /// The peer to call, connected; `None` when `cancel` fired first.
    async fn target_unless_canceled(
        &self,
        agent: &str,
        cancel: Option<&CancellationToken>,
    ) -> Result<Option<PeerConnection>, PeerError> {
        let Some(tok) = cancel else {
            return self.target(agent).await.map(Some);
        };
        if tok.is_cancelled() {
            return Ok(None);
        }
        tokio::select! {
            c = self.target(agent) => c.map(Some),
            _ = tok.cancelled() => Ok(None),
        }
    }

    /// A remote task that waits for a decision waits for the person: its card is in the
    /// inbox, and a message from the caller (a model, usually) is never an answer.
    async fn refuse_while_card_pending(
        &self,
        caller_key: &str,
        conn: &PeerConnection,
        ctx: &str,
    ) -> Result<(), PeerError> {
        if let Some((id, remote)) = self.pending_card(caller_key, &conn.agent_id, ctx).await? {
            return Err(PeerError::Conflict(format!(
                "{}'s task {} waits for the person's decision (card {id} in the Sextant inbox); \
                 a message sent with a2a_call is not an answer. Ask the person to answer the \
                 card; the conversation goes on once they have.",
                conn.name,
                remote.as_deref().unwrap_or("?")
            )));
        }
        Ok(())
    }

    /// A conversation whose last call is still followed (`background.rs`) takes no new
    /// call until that one has its answer: the peer would get the new message first.
    async fn refuse_while_following(
        &self,
        caller_key: &str,
        conn: &PeerConnection,
        ctx: &str,
    ) -> Result<(), PeerError> {
        let Some(session) = self
            .journal()
            .outbound_session(caller_key, &conn.agent_id, ctx)
            .await?
        else {
            return Ok(());
        };
        let events = self
            .journal()
            .session_events(&session.session_id, 0, 100_000)
            .await?;
        // Each task's last state, and whether that state's message is a follow note.
        let mut last: Vec<(String, TaskState, Option<String>)> = Vec::new();
        for e in &events {
            let (Some(task), EventBody::TaskState { state, message }) = (&e.task_id, &e.body)
            else {
                continue;
            };
            let remote = message
                .as_ref()
                .and_then(|m| m.metadata.as_ref())
                .and_then(|md| md.get(sextant_runtime::engine::FOLLOW_KEY))
                .and_then(|n| n["remoteTaskId"].as_str().map(String::from));
            last.retain(|(t, _, _)| t != task.as_str());
            last.push((task.to_string(), state.clone(), remote));
        }
        match last
            .iter()
            .find(|(_, state, remote)| remote.is_some() && !state.is_terminal())
        {
            Some((_, _, remote)) => Err(PeerError::Conflict(format!(
                "Sextant is still following {}'s task {} from the last call in this \
                 conversation; its answer comes first. Read it with a2a_history \
                 (context_id={ctx}), then call again.",
                conn.name,
                remote.as_deref().unwrap_or("?")
            ))),
            None => Ok(()),
        }
    }

    /// Admits the outgoing message (`local`) as a task of the outbound Session for (caller,
    /// peer, `ctx`), then starts its turn (working): the call is durable before it is sent.
    async fn journal_outgoing(
        &self,
        caller: &Principal,
        conn: &PeerConnection,
        ctx: &str,
        text: &str,
        local: Message,
    ) -> Result<sextant_journal::TaskRow, PeerError> {
        let journal = self.journal();
        journal
            .ensure_outbound_agent(
                &conn.agent_id,
                &conn.name,
                &format!("Outbound A2A peer {}", conn.name),
                self.clock().now(),
            )
            .await?;
        let admitted = journal
            .admit(Admission {
                caller: caller.caller_key(),
                caller_kind: caller.kind,
                agent_id: conn.agent_id.as_str().into(),
                context_id: Some(ctx.into()),
                task_id: None,
                content_hash: sextant_core::ids::json_hash(&json!({ "text": text, "ctx": ctx })),
                message: local,
                input_key: format!("outbound:{}", new_id()),
                origin: sextant_core::Origin::Outbound,
                max_active_tasks: None,
                max_context_inputs: None,
                push_config: None,
                at: self.clock().now(),
            })
            .await?
            .map_err(|r| {
                PeerError::Internal(format!("the outbound call was not journalled: {r:?}"))
            })?;
        let task = admitted.task().clone();
        let at = self.clock().now();
        journal
            .append(
                &task.session_id,
                vec![NewEvent {
                    task_id: Some(task.task_id.to_string()),
                    body: EventBody::TurnStarted {
                        through: None,
                        working: true,
                    },
                    at,
                }],
            )
            .await?;
        Ok(task)
    }

    /// Sends `remote` to the peer and reads its answer (streamed when `want_stream` and the
    /// peer allows), until it settles, fails, or `cancel` fires.
    async fn exchange(
        &self,
        conn: &PeerConnection,
        remote: Message,
        want_stream: bool,
        followup: bool,
        cancel: Option<&CancellationToken>,
    ) -> Exchanged {
        let send = SendMessageRequest {
            message: remote,
            configuration: None,
            metadata: None,
            tenant: None,
        };
        let started = Instant::now();
        let mut follower = Follower::new(&conn.name, Accumulated::default());
        if followup {
            follower.answering(None);
        }
        let mut streamed = false;
        let mut settled = false;
        let outcome = {
            let client = self.client();
            let exchange = async {
                let (mut s, st) = open(client, &conn.endpoint, &send, want_stream).await?;
                streamed = st;
                settled = consume(&mut s, &mut follower).await?;
                Ok(())
            };
            tokio::pin!(exchange);
            match cancel {
                Some(tok) => tokio::select! {
                    r = &mut exchange => r.map_err(Failure::Client),
                    _ = tok.cancelled() => Err(Failure::Canceled),
                },
                None => exchange.await.map_err(Failure::Client),
            }
        };
        Exchanged {
            outcome,
            follower,
            settled,
            streamed,
            latency: started.elapsed(),
        }
    }

    /// Records the call on the peer (unless it was canceled) and journals how it ended
    /// ([`Peers::conclude`]); the person's card, when the remote task waits for a decision.
    async fn journal_answer(
        &self,
        caller: &Principal,
        conn: &PeerConnection,
        task: &sextant_journal::TaskRow,
        ctx: &str,
        sent: &Exchanged,
    ) -> Result<Option<sextant_core::Interaction>, PeerError> {
        let canceled = matches!(sent.outcome, Err(Failure::Canceled));
        let failed = match &sent.outcome {
            Err(Failure::Client(e)) => Some(e.to_string()),
            _ => None,
        };
        if !canceled {
            self.record(conn, sent.latency, failed.as_deref()).await;
        }
        let exchange = Exchange {
            acc: &sent.follower.acc,
            canceled,
            failed,
            latency: sent.latency,
            streamed: sent.streamed,
            from: (!caller.is_owner()).then(|| caller.display()),
        };
        self.conclude(conn, task, ctx, &exchange).await
    }

    /// Best effort: stop the remote task of a canceled call too, if it exists and still runs.
    fn cancel_remote_task(&self, conn: &PeerConnection, acc: &Accumulated) {
        if let Some(id) = acc.task_id.clone()
            && !acc.is_terminal()
        {
            let client_peers = self.clone();
            let mut ep = conn.endpoint.clone();
            ep.timeout = Duration::from_secs(10);
            tokio::spawn(async move {
                if let Err(e) = client_peers.client().cancel_task(&ep, &id).await {
                    tracing::debug!(error = %e, "could not cancel a remote task");
                }
            });
        }
    }

    /// `a2a_orchestrate`: sends `message` to every enabled peer advertising `capability` and
    /// combines the answers by `mode`. Paused and disabled peers are skipped, and say so.
    pub async fn orchestrate(
        &self,
        caller: &Principal,
        capability: &str,
        message: &str,
        mode: Mode,
    ) -> Result<Orchestration, PeerError> {
        let cap = capability.trim().to_lowercase();
        if cap.is_empty() {
            return Err(PeerError::Invalid {
                field: "capability",
                message: "capability is required (a skill id or tag, or * for every peer)".into(),
            });
        }
        valid_message(message)?;
        // The peers Sextant holds a token for route by their extended cards' skills: read
        // those first where none was read lately (`crate::extended`).
        let mut notes = self.read_extended_cards().await?;
        let rows = self.journal().peers().await?;
        let mut candidates = Vec::new();
        let mut skipped = Vec::new();
        // "name (why)" of each skipped peer, for the refusal when nobody is left.
        let mut unavailable = Vec::new();
        let mut known: Vec<String> = Vec::new();
        for row in &rows {
            let extended = self.extended_skills(row);
            let strength = match_strength(row, extended.as_deref(), &cap);
            known.extend(row.capabilities.iter().map(|c| c.to_lowercase()));
            let skills = extended.map(|s| json!({ "skills": s }));
            if let Some(p) = skills.as_ref().or(row.pinned_parts.as_ref()) {
                let (ids, tags) = crate::client::card::advertised(p);
                known.extend(ids);
                known.extend(tags);
            }
            if let Some(why) = self.extended_note(row) {
                notes.push(format!("{}: {why}; matched by its public card", row.name));
            }
            match (strength, &row.paused_at, &row.disabled) {
                (Some(_), Some(at), _) => {
                    unavailable.push(format!("{} (paused)", row.name));
                    skipped.push(json!({
                        "peer": row.name,
                        "reason": "paused by its owner; resume it to use it again",
                        "paused_at": format_time(*at),
                    }))
                }
                (Some(_), None, Some(why)) => {
                    unavailable.push(format!("{} (disabled: its card changed)", row.name));
                    skipped.push(json!({
                        "peer": row.name,
                        "reason": "disabled: its card changed; re-pin it to use it again",
                        "disabled": why,
                    }))
                }
                (Some(s), None, None) => candidates.push((row.name.clone(), s)),
                (None, ..) => {}
            }
        }
        if candidates.is_empty() && !unavailable.is_empty() {
            return Err(PeerError::Conflict(format!(
                "every peer that advertises the capability {cap:?} is paused or disabled: {}",
                unavailable.join(", ")
            )));
        }
        if candidates.is_empty() {
            known.sort();
            known.dedup();
            return Err(PeerError::NotFound(format!(
                "no enabled peer advertises the capability {cap:?}{}{}",
                if known.is_empty() {
                    String::new()
                } else {
                    format!("; known capabilities: {}", known.join(", "))
                },
                if notes.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", notes.join("; "))
                }
            )));
        }
        let mut peers: Vec<String> = candidates.iter().map(|(n, _)| n.clone()).collect();
        peers.sort();
        let token = CancellationToken::new();
        let calls = candidates.into_iter().map(|(name, strength)| {
            let token = token.clone();
            let req = CallRequest {
                agent: name.clone(),
                message: message.to_string(),
                context_id: None,
                stream: None,
            };
            async move {
                let r = self.call_with(caller, req, Some(token)).await;
                (name, strength, r)
            }
        });
        let mut running = futures::stream::iter(calls).buffer_unordered(FAN_OUT);
        let mut done: Vec<(String, u8, Result<CallResult, PeerError>)> = Vec::new();
        let mut first: Option<usize> = None;
        while let Some((name, strength, r)) = running.next().await {
            let ok = r
                .as_ref()
                .is_ok_and(|c| matches!(c.status, "ok" | "needs_input" | "waiting_for_person"));
            if mode == Mode::First && ok && first.is_none() {
                first = Some(done.len());
                token.cancel();
            }
            done.push((name, strength, r));
        }
        let as_json = |(name, strength, r): &(String, u8, Result<CallResult, PeerError>)| {
            let mut v = match r {
                Ok(c) => serde_json::to_value(c).unwrap_or(Value::Null),
                Err(e) => json!({ "peer": name, "status": "error", "error": e.to_string() }),
            };
            v["skill_match"] = json!(strength_name(*strength));
            v
        };
        let (winner, reason) = match mode {
            Mode::All => (
                None,
                format!(
                    "all: {} answers, by peer name",
                    done.iter().filter(|d| d.2.is_ok()).count()
                ),
            ),
            Mode::First => match first.and_then(|i| done.get(i)) {
                Some(d) => (
                    Some(as_json(d)),
                    format!(
                        "first: {} answered first ({} ms); the other calls were canceled",
                        d.0,
                        d.2.as_ref().map(|c| c.latency_ms).unwrap_or_default()
                    ),
                ),
                None => (None, "first: no peer answered successfully".into()),
            },
            Mode::Best => match rank(&done) {
                Some(i) => {
                    let d = &done[i];
                    let c = d.2.as_ref().ok();
                    (
                        Some(as_json(d)),
                        format!(
                            "best: {} — {}, skill match: {}, {} reply, {} ms (ranked by: \
                             completed before waiting-for-input before unfinished; then skill \
                             id over tag over declared capability; then a non-empty reply; \
                             then lower latency; failures never win)",
                            d.0,
                            c.map_or("?", |c| c.status),
                            strength_name(d.1),
                            if c.is_some_and(|c| !c.reply.trim().is_empty()) {
                                "non-empty"
                            } else {
                                "empty"
                            },
                            c.map(|c| c.latency_ms).unwrap_or_default()
                        ),
                    )
                }
                None => (None, "best: every call failed".into()),
            },
        };
        let mut results: Vec<Value> = done.iter().map(as_json).collect();
        results.sort_by(|a, b| a["peer"].as_str().cmp(&b["peer"].as_str()));
        Ok(Orchestration {
            capability: cap,
            mode,
            peers,
            skipped,
            results,
            winner,
            reason,
            notes,
        })
    }
}

/// How well a peer matches a capability: 3 = a pinned skill id, 2 = a pinned skill tag,
/// 1 = a declared capability, 0 = `*`; `None` = no match. Skills outside `allowed_skills`
/// (when set) do not count. The skills of the peer's `extended` card, when Sextant read it
/// (`crate::extended`), stand for the pinned public card's.
pub(crate) fn match_strength(
    row: &sextant_journal::PeerRow,
    extended: Option<&[Value]>,
    cap: &str,
) -> Option<u8> {
    if cap == "*" {
        return Some(0);
    }
    let mut best = None;
    let pinned = row
        .pinned_parts
        .as_ref()
        .map(|p| p["skills"].as_array().map(Vec::as_slice).unwrap_or(&[]));
    if let Some(skills) = extended.or(pinned) {
        let allowed: Vec<String> = row
            .allowed_skills
            .iter()
            .map(|s| s.to_lowercase())
            .collect();
        for skill in skills {
            let id = skill["id"].as_str().unwrap_or("").to_lowercase();
            if !allowed.is_empty() && !allowed.contains(&id) {
                continue;
            }
            if id == cap {
                return Some(3);
            }
            let tagged = skill["tags"].as_array().is_some_and(|t| {
                t.iter()
                    .any(|t| t.as_str().is_some_and(|t| t.to_lowercase() == cap))
            });
            if tagged {
                best = Some(2);
            }
        }
    }
    if best.is_none() && row.capabilities.iter().any(|c| c.to_lowercase() == cap) {
        best = Some(1);
    }
    best
}

fn strength_name(s: u8) -> &'static str {
    match s {
        3 => "skill id",
        2 => "skill tag",
        1 => "declared capability",
        _ => "any (*)",
    }
}

/// The best answer's index: completed (or a Message) before waiting-for-input before
/// unfinished; then the stronger skill match; then a non-empty reply; then lower latency;
/// then the peer name. Errors, failed and canceled calls never win.
pub(crate) fn rank(done: &[(String, u8, Result<CallResult, PeerError>)]) -> Option<usize> {
    let class = |c: &CallResult| match c.status {
        "ok" => Some(3u8),
        "needs_input" | "waiting_for_person" => Some(2),
        "working" => Some(1),
        _ => None,
    };
    done.iter()
        .enumerate()
        .filter_map(|(i, (name, strength, r))| {
            let c = r.as_ref().ok()?;
            let k = class(c)?;
            Some((
                i,
                k,
                *strength,
                !c.reply.trim().is_empty(),
                c.latency_ms,
                name,
            ))
        })
        .max_by(|a, b| {
            (a.1, a.2, a.3)
                .cmp(&(b.1, b.2, b.3))
                .then(b.4.cmp(&a.4))
                .then(b.5.cmp(a.5))
        })
        .map(|t| t.0)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn result(peer: &str, status: &'static str, reply: &str, ms: u64) -> CallResult {
        CallResult {
            peer: peer.into(),
            status,
            reply: reply.into(),
            reply_truncated: false,
            task_state: None,
            parts: vec![],
            task_id: None,
            context_id: "c".into(),
            session_id: "s".into(),
            latency_ms: ms,
            streamed: false,
            hint: None,
            interaction_id: None,
        }
    }

    #[test]
    fn best_prefers_completed_then_skill_then_reply_then_latency() {
        let d = |n: &str, s: u8, r: Result<CallResult, PeerError>| (n.to_string(), s, r);
        let long_failure = Err(PeerError::Remote("x".into()));
        let done = vec![
            d(
                "a-failed",
                3,
                Ok(result("a", "failed", &"long ".repeat(500), 1)),
            ),
            d("b-error", 3, long_failure),
            d("c-waiting", 3, Ok(result("c", "needs_input", "which?", 1))),
            d("d-tag-slow", 2, Ok(result("d", "ok", "fine", 900))),
            d("e-id-slow", 3, Ok(result("e", "ok", "fine", 800))),
            d("f-id-fast", 3, Ok(result("f", "ok", "ok", 20))),
            d("g-id-empty", 3, Ok(result("g", "ok", "", 1))),
        ];
        assert_eq!(
            rank(&done),
            Some(5),
            "completed, id match, non-empty, fastest"
        );
        let only_waiting = vec![
            d("c", 1, Ok(result("c", "needs_input", "q", 5))),
            d("x", 3, Ok(result("x", "working", "", 1))),
        ];
        assert_eq!(rank(&only_waiting), Some(0));
        assert_eq!(
            rank(&[d("z", 3, Err(PeerError::Remote("no".into())))]),
            None
        );
    }

    #[test]
    fn capabilities_match_skill_ids_tags_and_declarations() {
        let mut row = sextant_journal::PeerRow {
            capabilities: vec!["Summaries".into()],
            pinned_hash: Some("h".into()),
            pinned_parts: Some(json!({"skills": [
                {"id": "echo", "tags": ["repeat", "Test"]},
                {"id": "translate", "tags": ["language"]}
            ]})),
            ..sextant_journal::PeerRow::new(
                "p",
                "http://127.0.0.1:1",
                5,
                chrono::DateTime::UNIX_EPOCH,
            )
        };
        assert_eq!(match_strength(&row, None, "echo"), Some(3));
        assert_eq!(match_strength(&row, None, "test"), Some(2));
        assert_eq!(match_strength(&row, None, "summaries"), Some(1));
        assert_eq!(match_strength(&row, None, "*"), Some(0));
        assert_eq!(match_strength(&row, None, "cooking"), None);
        // An extended card's skills stand for the public card's.
        let extended = [json!({"id": "cooking", "tags": ["food"]})];
        assert_eq!(match_strength(&row, Some(&extended), "cooking"), Some(3));
        assert_eq!(match_strength(&row, Some(&extended), "food"), Some(2));
        assert_eq!(match_strength(&row, Some(&extended), "echo"), None);
        row.allowed_skills = vec!["translate".into()];
        assert_eq!(
            match_strength(&row, None, "echo"),
            None,
            "not an allowed skill"
        );
        assert_eq!(match_strength(&row, None, "language"), Some(2));
        assert_eq!(match_strength(&row, Some(&extended), "cooking"), None);
    }

    #[test]
    fn parts_are_shown_in_bounded_form() {
        let parts = vec![
            Part::text("x".repeat(PART_CHARS + 10)),
            Part::data(json!({"k": 1})).with_media_type("application/json"),
            Part::data(json!("y".repeat(DATA_BYTES + 1))),
            Part::url("https://example.com/f.pdf").with_filename("f.pdf"),
        ];
        let v = parts_json(&parts);
        assert_eq!(v[0]["truncated"], true);
        assert_eq!(v[1]["data"]["k"], 1);
        assert_eq!(v[1]["media_type"], "application/json");
        assert!(v[2]["data_omitted_bytes"].as_u64().unwrap() > DATA_BYTES as u64);
        assert_eq!(v[3]["filename"], "f.pdf");
        assert!(valid_message(" ").is_err());
        assert!(valid_message(&"z".repeat(MAX_MESSAGE_CHARS + 1)).is_err());
        assert!(valid_context("ok-1").is_ok());
        assert!(valid_context("bad\n").is_err());
        assert_eq!(Mode::parse(" Best "), Some(Mode::Best));
        assert_eq!(Mode::parse("longest"), None);
    }
}
