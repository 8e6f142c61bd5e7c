//! The `codex` engine: an adapter for the OpenAI Codex app-server protocol — JSON-RPC 2.0
//! (without the `"jsonrpc"` member), one JSON object per line over the process's stdio. The
//! message shapes relied on, with their sources in openai/codex, are in
//! `docs/codex-protocol.md`.
//!
//! One app-server process and one Codex thread per Session: the process starts lazily on the
//! Session's first turn (`initialize`, `initialized`, `thread/start`) and lives as long as the
//! Session's worker (this engine instance). Each turn sends `turn/start` with the turn's input
//! text and reads until `turn/completed`: agent message deltas stream into the task's
//! response; `item/commandExecution/requestApproval` and `item/fileChange/requestApproval`
//! become interactions whose options are the request's `availableDecisions`, in order (or
//! Codex's documented defaults), and the chosen decision goes back verbatim as the JSON-RPC
//! response. A request Codex resolves by itself (`serverRequest/resolved`), or that its turn or
//! process outlives, withdraws its card ([`TurnSink::ask_until`]).
//!
//! Codex remembers `acceptForSession` itself, in the app-server's session cache, so this engine
//! keeps no grants of its own. When the process is gone (the worker idled out, Sextant
//! restarted, Codex crashed) the next turn starts a new process and a new thread, and passes
//! the Session's earlier messages along with the input so the conversation carries on.

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use serde_json::{Value, json};
use sextant_core::ApprovedAction;
use sextant_core::a2a::{Message, Role};
use sextant_core::action::{Escaped, Mode, escape};
use sextant_core::ids::new_id;
use sextant_core::interaction::InteractionOption;
use sextant_core::projection::message_text;
use sextant_core::{Interaction, InteractionKind};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::codec::{FramedRead, LinesCodec};

use super::{AskError, Asked, Engine, Outcome, Turn, TurnSink};

/// Server→client request: approve a command (v2).
pub const COMMAND_APPROVAL: &str = "item/commandExecution/requestApproval";
/// Server→client request: approve a file change (v2).
pub const FILE_APPROVAL: &str = "item/fileChange/requestApproval";

/// Longest stdout line read; a longer one is skipped (and logged).
const MAX_LINE: usize = 8 << 20;
/// How much of stderr is kept to explain a failure.
const STDERR_TAIL: usize = 4096;
/// How long `initialize`, `thread/start` and `turn/start` may take to answer.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// How long Codex gets to end a turn after `turn/interrupt`.
const INTERRUPT_GRACE: Duration = Duration::from_secs(5);
/// Earlier messages passed to a new thread, and how long each may be.
const HISTORY_MESSAGES: usize = 20;
const HISTORY_CHARS: usize = 4000;
/// JSON-RPC "method not found".
const METHOD_NOT_FOUND: i64 = -32601;

/// Settings from the Agent's [`sextant_core::EngineSpec::Codex`].
#[derive(Debug, Clone)]
pub struct CodexConfig {
    pub binary: PathBuf,
    pub args: Vec<String>,
    pub working_dir: PathBuf,
    pub model: Option<String>,
    pub approval_policy: Option<String>,
    pub sandbox: Option<String>,
    pub approval_timeout: chrono::Duration,
    pub timeout: Duration,
}

/// Drives one Codex app-server process for one Session.
pub struct CodexEngine {
    config: CodexConfig,
    conn: Option<Conn>,
}

impl CodexEngine {
    /// An engine whose process starts on the first turn.
    pub fn new(config: CodexConfig) -> Self {
        Self { config, conn: None }
    }
}

impl Engine for CodexEngine {
    /// A canceled turn is interrupted through the app-server (`turn/interrupt`); its
    /// process stays up for the Session's next turn.
    fn stop_how(&self) -> super::StopHow {
        super::StopHow::Engine
    }

    /// The app-server process and its thread live between turns.
    fn keeps_state(&self) -> bool {
        true
    }

    /// Only used to restore the conversation when a new thread has to be started.
    fn wants_history(&self) -> bool {
        true
    }

    fn run_turn<'a>(&'a mut self, turn: Turn, sink: &'a TurnSink) -> BoxFuture<'a, Outcome> {
        async move {
            let text = turn.input_text();
            if text.trim().is_empty() {
                return Outcome::Rejected(Some("Send a message for Codex to work on.".into()));
            }
            let fresh = self.conn.is_none();
            if fresh {
                match Conn::start(&self.config, &turn, sink).await {
                    Ok(conn) => self.conn = Some(conn),
                    Err(why) => return Outcome::Failed(why),
                }
            }
            let Some(conn) = self.conn.as_mut() else {
                return Outcome::Failed("the Codex app-server is not running".into());
            };
            let input = if fresh {
                with_history(&turn.history, &text)
            } else {
                text
            };
            let mut run = TurnRun::new(conn, &self.config, &turn, sink);
            let outcome = run.run(input).await;
            let discard = run.discard || conn.is_dead();
            if discard {
                // A new process (and thread) serves the next turn.
                self.conn = None;
            }
            outcome
        }
        .boxed()
    }

    fn cannot_resume(&self) -> Option<String> {
        Some(
            "Sextant restarted while Codex waited for this decision, and the Codex app-server \
             that asked is gone, so no answer can reach it. Send the message again to start a \
             new Codex turn."
                .into(),
        )
    }
}

/// The input of a turn on a new thread: the Session's earlier messages, then the new text.
fn with_history(history: &[Message], text: &str) -> String {
    if history.is_empty() {
        return text.to_string();
    }
    let skip = history.len().saturating_sub(HISTORY_MESSAGES);
    let mut out = String::from(
        "[Earlier in this conversation (a new Codex session continues it; transcript kept by \
         Sextant):]\n",
    );
    for m in &history[skip..] {
        let who = if m.role == Role::Agent {
            "assistant"
        } else {
            "user"
        };
        let mut said = message_text(m);
        // Bytes, despite the name: the bound is on what goes into the prompt.
        let c = sextant_core::text::cut_bytes(&said, HISTORY_CHARS);
        if c.cut {
            let kept = c.kept.len();
            said.truncate(kept);
            said.push_str(" […]");
        }
        out.push_str(&format!("{who}: {said}\n"));
    }
    out.push_str("[End of the earlier conversation.]\n\n");
    out.push_str(text);
    out
}

// ---------------------------------------------------------------------------------------------
// The connection: process, line reader, JSON-RPC framing.

/// One message from the app-server.
#[derive(Debug, Clone, PartialEq)]
enum Incoming {
    /// A server→client request; it must get a response with the same id.
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
    /// A response to one of our requests (`Err` holds the error's text).
    Response {
        id: Value,
        result: Result<Value, String>,
    },
}

/// Sorts a line into a request, a notification or a response (JSON-RPC 2.0 shapes; the
/// `"jsonrpc"` member is neither required nor sent).
fn classify(line: &str) -> Result<Incoming, String> {
    let value: Value = serde_json::from_str(line).map_err(|e| format!("not JSON ({e})"))?;
    let Value::Object(mut m) = value else {
        return Err("not a JSON object".into());
    };
    let id = m.remove("id");
    let method = m.remove("method");
    let params = m.remove("params").unwrap_or(Value::Null);
    match (id, method) {
        (Some(id), Some(Value::String(method))) => Ok(Incoming::Request { id, method, params }),
        (None, Some(Value::String(method))) => Ok(Incoming::Notification { method, params }),
        (Some(id), None) => {
            if let Some(error) = m.remove("error") {
                let message = error
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown error");
                let code = error
                    .get("code")
                    .and_then(Value::as_i64)
                    .unwrap_or_default();
                Ok(Incoming::Response {
                    id,
                    result: Err(format!("{message} (code {code})")),
                })
            } else if let Some(result) = m.remove("result") {
                Ok(Incoming::Response {
                    id,
                    result: Ok(result),
                })
            } else {
                Err("a response with neither result nor error".into())
            }
        }
        _ => Err("neither a request, a notification nor a response".into()),
    }
}

/// A running app-server with its thread.
struct Conn {
    child: Child,
    stdin: ChildStdin,
    /// Parsed stdout messages; `None` from `recv` once stdout closed.
    rx: mpsc::UnboundedReceiver<Incoming>,
    /// Messages read ahead (while waiting for a response or an answer), in arrival order.
    backlog: VecDeque<Incoming>,
    stderr: Arc<Mutex<Vec<u8>>>,
    tasks: Vec<JoinHandle<()>>,
    next_id: i64,
    thread_id: String,
    /// The app-server's process group (it and the commands it runs), ended with the
    /// connection and with Sextant.
    _group: crate::process::GroupGuard,
}

impl Drop for Conn {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
        // The child is killed on drop (`kill_on_drop`), and its group with `_group`.
    }
}

impl Conn {
    /// Starts the process, initializes the connection and starts the thread.
    async fn start(config: &CodexConfig, turn: &Turn, sink: &TurnSink) -> Result<Conn, String> {
        if let Err(e) = std::fs::create_dir_all(&config.working_dir) {
            return Err(format!(
                "cannot create working directory {}: {e}",
                config.working_dir.display()
            ));
        }
        let mut cmd = Command::new(&config.binary);
        cmd.args(&config.args)
            .current_dir(&config.working_dir)
            .env("SEXTANT_AGENT_ID", &turn.agent.id)
            .env("SEXTANT_SESSION_ID", &turn.session_id)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let (mut child, group) = sink.spawn(cmd).await.map_err(|e| {
            format!(
                "cannot start the Codex app-server {}: {e}",
                config.binary.display()
            )
        })?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err("the Codex app-server's stdio is not available".into());
        };
        let (tx, rx) = mpsc::unbounded_channel();
        let reader = tokio::spawn(async move {
            let mut lines = FramedRead::new(stdout, LinesCodec::new_with_max_length(MAX_LINE));
            while let Some(line) = lines.next().await {
                match line {
                    Ok(line) if line.trim().is_empty() => {}
                    Ok(line) => match classify(&line) {
                        Ok(msg) => {
                            if tx.send(msg).is_err() {
                                break;
                            }
                        }
                        Err(why) => {
                            let shown: String = line.chars().take(200).collect();
                            tracing::warn!(%why, line = %shown, "codex engine: skipped a malformed line");
                        }
                    },
                    Err(tokio_util::codec::LinesCodecError::MaxLineLengthExceeded) => {
                        tracing::warn!("codex engine: skipped a line longer than {MAX_LINE} bytes");
                    }
                    Err(e) => {
                        tracing::warn!(error = %e, "codex engine: reading the app-server failed");
                        break;
                    }
                }
            }
        });
        let tail = Arc::new(Mutex::new(Vec::new()));
        let tail_w = tail.clone();
        let mut stderr = stderr;
        let stderr_task = tokio::spawn(async move {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                let mut t = tail_w.lock().unwrap_or_else(|e| e.into_inner());
                t.extend_from_slice(&buf[..n]);
                if t.len() > STDERR_TAIL {
                    let cut = t.len() - STDERR_TAIL;
                    t.drain(..cut);
                }
            }
        });
        let mut conn = Conn {
            child,
            stdin,
            rx,
            backlog: VecDeque::new(),
            stderr: tail,
            tasks: vec![reader, stderr_task],
            next_id: 0,
            thread_id: String::new(),
            _group: group,
        };
        let init = json!({
            "clientInfo": {
                "name": "sextant",
                "title": "Sextant",
                "version": env!("CARGO_PKG_VERSION"),
            }
        });
        conn.request("initialize", init, &turn.cancel).await?;
        conn.send(&json!({ "method": "initialized" })).await?;
        let mut params = json!({ "cwd": config.working_dir.display().to_string() });
        for (key, value) in [
            ("model", &config.model),
            ("approvalPolicy", &config.approval_policy),
            ("sandbox", &config.sandbox),
        ] {
            if let Some(v) = value {
                params[key] = Value::String(v.clone());
            }
        }
        let started = conn.request("thread/start", params, &turn.cancel).await?;
        conn.thread_id = started
            .pointer("/thread/id")
            .and_then(Value::as_str)
            .ok_or("the Codex app-server answered thread/start without a thread id")?
            .to_string();
        Ok(conn)
    }

    async fn send(&mut self, msg: &Value) -> Result<(), String> {
        let mut line = msg.to_string();
        line.push('\n');
        let written = async {
            self.stdin.write_all(line.as_bytes()).await?;
            self.stdin.flush().await
        };
        match written.await {
            Ok(()) => Ok(()),
            Err(e) => Err(format!(
                "cannot write to the Codex app-server ({e}); {}",
                self.exit_reason().await
            )),
        }
    }

    /// Sends a request and waits for its response; other messages meanwhile are kept.
    async fn request(
        &mut self,
        method: &str,
        params: Value,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<Value, String> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({ "id": id, "method": method, "params": params }))
            .await?;
        let deadline = tokio::time::sleep(REQUEST_TIMEOUT);
        tokio::pin!(deadline);
        loop {
            let msg = tokio::select! {
                m = self.rx.recv() => m,
                _ = &mut deadline => {
                    return Err(format!(
                        "the Codex app-server did not answer {method} within {} s",
                        REQUEST_TIMEOUT.as_secs()
                    ));
                }
                _ = cancel.cancelled() => {
                    return Err(format!("Sextant shut down while waiting for Codex to answer {method}"));
                }
            };
            match msg {
                None => return Err(self.exit_reason().await),
                Some(Incoming::Response { id: got, result }) if got == json!(id) => {
                    return result.map_err(|e| format!("Codex refused {method}: {e}"));
                }
                Some(Incoming::Response { .. }) => {}
                Some(other) => self.backlog.push_back(other),
            }
        }
    }

    async fn respond(&mut self, id: Value, result: Value) {
        if let Err(e) = self.send(&json!({ "id": id, "result": result })).await {
            tracing::warn!(error = %e, "codex engine: could not answer a request");
        }
    }

    async fn respond_error(&mut self, id: Value, code: i64, message: String) {
        let msg = json!({ "id": id, "error": { "code": code, "message": message } });
        if let Err(e) = self.send(&msg).await {
            tracing::warn!(error = %e, "codex engine: could not answer a request");
        }
    }

    /// The next message: read-ahead first, then the stream (`None` once it closed).
    async fn next(&mut self) -> Option<Incoming> {
        match self.backlog.pop_front() {
            Some(m) => Some(m),
            None => self.rx.recv().await,
        }
    }

    fn is_dead(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_))) || self.rx.is_closed() && self.rx.is_empty()
    }

    /// Why the process is gone: its exit status and the tail of its stderr.
    async fn exit_reason(&mut self) -> String {
        let status = tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await;
        // Let the stderr reader drain what the process wrote last.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let mut why = match status {
            Ok(Ok(s)) => match s.code() {
                Some(c) => format!("the Codex app-server exited with code {c}"),
                None => "the Codex app-server was stopped by a signal".to_string(),
            },
            _ => "the Codex app-server stopped talking".to_string(),
        };
        let tail = {
            let t = self.stderr.lock().unwrap_or_else(|e| e.into_inner());
            String::from_utf8_lossy(&t).trim().to_string()
        };
        if !tail.is_empty() {
            why.push_str(": ");
            why.push_str(&tail);
        }
        why
    }
}

// ---------------------------------------------------------------------------------------------
// One turn.

/// What an `item/started` told us about an item, for the approval card that follows it.
enum ItemInfo {
    Command(String),
    /// A file change: each file's label (`path (kind)`) and its change as Codex sent it
    /// (`path`, `kind`, `diff`).
    Files(Vec<String>, Vec<Value>),
}

enum Next {
    Msg(Incoming),
    Closed,
    TimedOut,
    Canceled,
}

struct TurnRun<'a> {
    conn: &'a mut Conn,
    config: &'a CodexConfig,
    turn: &'a Turn,
    sink: &'a TurnSink,
    /// Codex's turn id, from the `turn/start` response.
    turn_id: Option<String>,
    /// Time left for Codex to work (time spent waiting for the person is not counted).
    budget: Duration,
    items: HashMap<String, ItemInfo>,
    /// Agent message items whose text arrived as deltas.
    streamed: HashSet<String>,
    /// The agent message item text was last written for (a new one starts a new paragraph).
    text_item: Option<String>,
    /// Who chose `cancel`, if someone did.
    canceled_by: Option<String>,
    last_error: Option<String>,
    /// The process should not serve another turn.
    discard: bool,
}

/// A journal failure, as a turn outcome.
fn not_recorded(e: sextant_journal::Error) -> Outcome {
    Outcome::Failed(format!("could not record Codex's output: {e}"))
}

impl<'a> TurnRun<'a> {
    fn new(
        conn: &'a mut Conn,
        config: &'a CodexConfig,
        turn: &'a Turn,
        sink: &'a TurnSink,
    ) -> Self {
        Self {
            conn,
            config,
            turn,
            sink,
            turn_id: None,
            budget: config.timeout,
            items: HashMap::new(),
            streamed: HashSet::new(),
            text_item: None,
            canceled_by: None,
            last_error: None,
            discard: false,
        }
    }

    async fn run(&mut self, input: String) -> Outcome {
        let params = json!({
            "threadId": self.conn.thread_id,
            "input": [{ "type": "text", "text": input }],
        });
        match self
            .conn
            .request("turn/start", params, &self.turn.cancel)
            .await
        {
            Ok(started) => {
                self.turn_id = started
                    .pointer("/turn/id")
                    .and_then(Value::as_str)
                    .map(String::from);
            }
            Err(why) => {
                self.discard = true;
                return Outcome::Failed(why);
            }
        }
        loop {
            let msg = match self.next_within_budget().await {
                Next::Msg(m) => m,
                Next::Closed => {
                    self.discard = true;
                    return Outcome::Failed(self.conn.exit_reason().await);
                }
                Next::TimedOut => {
                    let why = format!(
                        "Codex worked longer than {} s on this turn; it was interrupted",
                        self.config.timeout.as_secs()
                    );
                    return self.interrupt(why).await;
                }
                Next::Canceled => {
                    return self
                        .interrupt("Sextant shut down while this turn was running".into())
                        .await;
                }
            };
            let ended = match msg {
                Incoming::Notification { method, params } => {
                    self.notification(&method, &params).await
                }
                Incoming::Request { id, method, params } => {
                    if method == COMMAND_APPROVAL || method == FILE_APPROVAL {
                        self.approval(id, &method, params).await
                    } else {
                        let why = format!("Sextant does not handle {method} requests");
                        self.conn.respond_error(id, METHOD_NOT_FOUND, why).await;
                        None
                    }
                }
                // A late response to an earlier request.
                Incoming::Response { .. } => None,
            };
            if let Some(outcome) = ended {
                return outcome;
            }
        }
    }

    async fn next_within_budget(&mut self) -> Next {
        let started = Instant::now();
        let next = tokio::select! {
            m = self.conn.next() => m.map_or(Next::Closed, Next::Msg),
            _ = tokio::time::sleep(self.budget) => Next::TimedOut,
            _ = self.turn.cancel.cancelled() => Next::Canceled,
            _ = self.turn.stop.cancelled() => Next::Canceled,
        };
        self.budget = self.budget.saturating_sub(started.elapsed());
        next
    }

    /// Asks Codex to stop the turn, waits briefly for it to end, and fails with `why`.
    async fn interrupt(&mut self, why: String) -> Outcome {
        if let Some(turn_id) = self.turn_id.clone() {
            let id = self.conn.next_id;
            self.conn.next_id += 1;
            let msg = json!({
                "id": id,
                "method": "turn/interrupt",
                "params": { "threadId": self.conn.thread_id, "turnId": turn_id },
            });
            if self.conn.send(&msg).await.is_err() {
                self.discard = true;
                return Outcome::Failed(why);
            }
        }
        let grace = tokio::time::sleep(INTERRUPT_GRACE);
        tokio::pin!(grace);
        loop {
            let msg = tokio::select! {
                m = self.conn.next() => m,
                _ = &mut grace => {
                    self.discard = true;
                    break;
                }
            };
            match msg {
                None => {
                    self.discard = true;
                    break;
                }
                Some(Incoming::Notification { method, .. }) if method == "turn/completed" => break,
                Some(Incoming::Request { id, method, .. }) => {
                    if method == COMMAND_APPROVAL || method == FILE_APPROVAL {
                        self.conn.respond(id, json!({ "decision": "cancel" })).await;
                    } else {
                        let why = format!("Sextant does not handle {method} requests");
                        self.conn.respond_error(id, METHOD_NOT_FOUND, why).await;
                    }
                }
                Some(_) => {}
            }
        }
        Outcome::Failed(why)
    }

    /// Handles a notification; returns the outcome when it ends the turn.
    async fn notification(&mut self, method: &str, params: &Value) -> Option<Outcome> {
        // Events of other threads on this connection (e.g. sub-agents) are not this turn's.
        if let Some(thread) = params.get("threadId").and_then(Value::as_str)
            && thread != self.conn.thread_id
        {
            return None;
        }
        let item_type = |p: &Value| {
            p.pointer("/item/type")
                .and_then(Value::as_str)
                .map(String::from)
        };
        let item_id = |p: &Value| {
            p.pointer("/item/id")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        match method {
            "item/agentMessage/delta" => {
                let delta = params.get("delta").and_then(Value::as_str).unwrap_or("");
                let id = params
                    .get("itemId")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                self.streamed.insert(id.clone());
                self.write_text(&id, delta).await.err()
            }
            "item/started" => {
                let id = item_id(params);
                match item_type(params).as_deref() {
                    Some("commandExecution") => {
                        let cmd = params
                            .pointer("/item/command")
                            .and_then(Value::as_str)
                            .unwrap_or("");
                        self.items.insert(id, ItemInfo::Command(cmd.to_string()));
                    }
                    Some("fileChange") => {
                        let changes = params.pointer("/item/changes").and_then(Value::as_array);
                        let (paths, exact) = changes
                            .into_iter()
                            .flatten()
                            .filter_map(|c| {
                                let path = c.get("path").and_then(Value::as_str)?;
                                let kind = c.pointer("/kind/type").and_then(Value::as_str);
                                let label = match kind {
                                    Some(k) => format!("{path} ({k})"),
                                    None => path.to_string(),
                                };
                                // The change itself is what is approved: its diff is shown
                                // and bound into the digest, not only its file's name.
                                let change = json!({
                                    "path": path,
                                    "kind": kind,
                                    "diff": c.get("diff").and_then(Value::as_str),
                                });
                                Some((label, change))
                            })
                            .unzip();
                        self.items.insert(id, ItemInfo::Files(paths, exact));
                    }
                    _ => {}
                }
                None
            }
            "item/completed" => {
                let id = item_id(params);
                let status = params
                    .pointer("/item/status")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let note = match item_type(params).as_deref() {
                    Some("agentMessage") if !self.streamed.contains(&id) => {
                        // No deltas came for this message (opted out or skipped): use the whole text.
                        let text = params
                            .pointer("/item/text")
                            .and_then(Value::as_str)
                            .unwrap_or("");
                        return self.write_text(&id, text).await.err();
                    }
                    Some("commandExecution") => {
                        let cmd = params
                            .pointer("/item/command")
                            .and_then(Value::as_str)
                            .unwrap_or("");
                        let code = params.pointer("/item/exitCode").and_then(Value::as_i64);
                        let code = code.map(|c| format!(", exit code {c}")).unwrap_or_default();
                        Some(format!(
                            "Command `{}`: {status}{code}",
                            escape(cmd, Mode::Command).text
                        ))
                    }
                    Some("fileChange") => Some(format!("File change: {status}")),
                    _ => None,
                };
                match note {
                    Some(n) if !status.is_empty() => {
                        self.sink.status(&n).await.map_err(not_recorded).err()
                    }
                    _ => None,
                }
            }
            "error" => {
                let message = params
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown error")
                    .to_string();
                if params.get("willRetry").and_then(Value::as_bool) == Some(true) {
                    let note = format!("Codex: {message} (retrying)");
                    return self.sink.status(&note).await.map_err(not_recorded).err();
                }
                self.last_error = Some(message);
                None
            }
            "turn/completed" => {
                let id = params.pointer("/turn/id").and_then(Value::as_str);
                if let (Some(ours), Some(id)) = (&self.turn_id, id)
                    && ours != id
                {
                    return None;
                }
                Some(self.completed(params))
            }
            _ => None,
        }
    }

    /// Appends agent text; a new agent message item starts a new paragraph.
    async fn write_text(&mut self, item: &str, text: &str) -> Result<(), Outcome> {
        if text.is_empty() {
            return Ok(());
        }
        if self.text_item.as_deref() != Some(item) {
            if self.text_item.is_some() {
                self.sink.text("\n\n").await.map_err(not_recorded)?;
            }
            self.text_item = Some(item.to_string());
        }
        self.sink.text(text).await.map_err(not_recorded)
    }

    /// The outcome a `turn/completed` notification reports.
    fn completed(&self, params: &Value) -> Outcome {
        let status = params
            .pointer("/turn/status")
            .and_then(Value::as_str)
            .unwrap_or("");
        match status {
            "completed" => Outcome::Completed(None),
            "interrupted" => match &self.canceled_by {
                Some(who) => Outcome::Failed(format!(
                    "Canceled by {who}: the action was not run and Codex stopped this turn. \
                     Send a new message to tell Codex what to do instead."
                )),
                None => Outcome::Failed("Codex interrupted this turn.".into()),
            },
            "failed" => {
                let message = params
                    .pointer("/turn/error/message")
                    .and_then(Value::as_str)
                    .map(String::from)
                    .or_else(|| self.last_error.clone())
                    .unwrap_or_else(|| "no reason given".into());
                Outcome::Failed(format!("Codex failed: {message}"))
            }
            other => Outcome::Failed(format!("Codex ended the turn with status {other:?}")),
        }
    }

    /// Turns an approval request into an interaction, waits, and sends the decision back.
    async fn approval(&mut self, id: Value, method: &str, params: Value) -> Option<Outcome> {
        // Resolved (or its turn over) before we got to it: nothing to ask.
        let thread = self.conn.thread_id.clone();
        let gone = self
            .conn
            .backlog
            .iter()
            .any(|m| ends_request(m, &id, &thread));
        if gone {
            return None;
        }
        let request = ApprovalRequest::new(method, &params, &self.items);
        let interaction = request.interaction(
            &id,
            self.turn,
            self.sink.now() + self.config.approval_timeout,
        );
        let text = request.prompt();
        let decisions = request.decisions.clone();
        let options = interaction.options.clone();
        let mut held = Vec::new();
        let asked = self
            .sink
            .ask_until(
                interaction,
                &text,
                withdrawn(&mut self.conn.rx, &mut held, &id, &thread),
            )
            .await;
        self.conn.backlog.extend(held);
        match asked {
            Ok(Asked::Answered(answer)) => {
                let chosen = options.iter().position(|o| o.id == answer.option);
                let Some(decision) = chosen.and_then(|i| decisions.get(i)).cloned() else {
                    // check_answer only lets declared options through; be safe anyway.
                    self.conn
                        .respond(id, json!({ "decision": "decline" }))
                        .await;
                    return None;
                };
                if decision == json!("cancel") {
                    self.canceled_by = Some(answer.answered_by.clone());
                }
                self.conn.respond(id, json!({ "decision": decision })).await;
                None
            }
            // Codex resolved it, its turn ended or its process died: nothing to send.
            Ok(Asked::Withdrawn(_)) => None,
            // The task was canceled while it waited: Codex is told no, and its turn stops.
            Err(AskError::Suspended) if self.turn.stop.is_cancelled() => {
                self.conn.respond(id, json!({ "decision": "cancel" })).await;
                Some(self.interrupt("the task was canceled".into()).await)
            }
            Err(AskError::Suspended) => Some(Outcome::Suspended),
            Err(AskError::Journal(e)) => Some(Outcome::Failed(format!(
                "could not record the approval request: {e}"
            ))),
        }
    }
}

/// Whether `msg` means the request no longer stands: Codex resolved it, or the thread's turn
/// ended (Codex clears pending requests then).
fn ends_request(msg: &Incoming, request_id: &Value, thread_id: &str) -> bool {
    let Incoming::Notification { method, params } = msg else {
        return false;
    };
    let this_thread = params
        .get("threadId")
        .and_then(Value::as_str)
        .is_none_or(|t| t == thread_id);
    match method.as_str() {
        "serverRequest/resolved" => params.get("requestId") == Some(request_id),
        "turn/completed" => this_thread,
        _ => false,
    }
}

/// Reads messages while a question waits, keeping them in `held`, until the request no longer
/// stands ([`ends_request`]) or the process's output closes. Returns why.
async fn withdrawn(
    rx: &mut mpsc::UnboundedReceiver<Incoming>,
    held: &mut Vec<Incoming>,
    request_id: &Value,
    thread_id: &str,
) -> String {
    loop {
        let Some(msg) = rx.recv().await else {
            return "the Codex app-server exited".into();
        };
        if ends_request(&msg, request_id, thread_id) {
            let resolved = matches!(&msg, Incoming::Notification { method, .. } if method == "serverRequest/resolved");
            if resolved {
                return "Codex resolved this request itself".into();
            }
            // The turn's end is handled after the question is closed.
            held.push(msg);
            return "the Codex turn ended".into();
        }
        held.push(msg);
    }
}

// ---------------------------------------------------------------------------------------------
// Approval requests → interactions.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ApprovalKind {
    Command,
    Files,
}

/// An approval request, read from its params.
struct ApprovalRequest {
    method: String,
    kind: ApprovalKind,
    /// The decisions offered, in order, exactly as received (object-shaped ones included).
    decisions: Vec<Value>,
    command: Option<String>,
    cwd: Option<String>,
    reason: Option<String>,
    network_host: Option<String>,
    files: Vec<String>,
    /// The file changes as Codex described them (path, kind, diff), when it did.
    changes: Vec<Value>,
    grant_root: Option<String>,
}

/// Codex's documented decisions when a request carries no `availableDecisions`.
fn default_decisions() -> Vec<Value> {
    ["accept", "acceptForSession", "decline", "cancel"]
        .iter()
        .map(|d| json!(d))
        .collect()
}

impl ApprovalRequest {
    fn new(method: &str, params: &Value, items: &HashMap<String, ItemInfo>) -> Self {
        let kind = if method == FILE_APPROVAL {
            ApprovalKind::Files
        } else {
            ApprovalKind::Command
        };
        let text = |k: &str| {
            params
                .get(k)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(String::from)
        };
        let decisions = match params.get("availableDecisions") {
            Some(Value::Array(a)) if !a.is_empty() => a.clone(),
            _ => default_decisions(),
        };
        let item = text("itemId").and_then(|i| items.get(&i));
        let command = text("command").or_else(|| match item {
            Some(ItemInfo::Command(c)) if kind == ApprovalKind::Command => Some(c.clone()),
            _ => None,
        });
        let (files, changes) = match item {
            Some(ItemInfo::Files(f, c)) => (f.clone(), c.clone()),
            _ => (Vec::new(), Vec::new()),
        };
        Self {
            method: method.to_string(),
            kind,
            decisions,
            command,
            cwd: text("cwd"),
            reason: text("reason"),
            network_host: params
                .pointer("/networkApprovalContext/host")
                .and_then(Value::as_str)
                .map(String::from),
            files,
            changes,
            grant_root: text("grantRoot"),
        }
    }

    /// What is asked, exact but escaped, in a line a person can judge.
    fn what(&self) -> String {
        let line = |t: &str| escape(t, Mode::Command).text;
        match (self.kind, &self.command, &self.network_host) {
            (ApprovalKind::Command, Some(cmd), _) => format!("run `{}`", line(cmd)),
            (ApprovalKind::Command, None, Some(host)) => {
                format!("reach {} over the network", line(host))
            }
            (ApprovalKind::Command, None, None) => "run a command".to_string(),
            (ApprovalKind::Files, ..) if self.files.is_empty() => "change files".to_string(),
            (ApprovalKind::Files, ..) => format!("change {}", line(&self.files.join(", "))),
        }
    }

    /// The exact request a decision answers: what Codex asked, field by field.
    fn action(&self) -> ApprovedAction {
        let mut exact = json!({ "kind": "codex", "method": self.method });
        let mut shown = Escaped::default();
        let mut put = |k: &str, v: Value| exact[k] = v;
        if let Some(c) = &self.command {
            put("command", json!(c));
            shown.push(escape(c, Mode::Command));
        }
        if let Some(c) = &self.cwd {
            put("cwd", json!(c));
        }
        if let Some(h) = &self.network_host {
            put("networkHost", json!(h));
            if shown.text.is_empty() {
                shown.push(escape(h, Mode::Command));
            }
        }
        if !self.files.is_empty() {
            put("files", json!(self.files));
            if !self.changes.is_empty() {
                put("changes", json!(self.changes));
            }
            if shown.text.is_empty() {
                // Each file, then its diff: the person sees the patch that will be written.
                let patch = self
                    .files
                    .iter()
                    .zip(self.changes.iter().map(|c| c["diff"].as_str()))
                    .map(|(label, diff)| match diff {
                        Some(d) => format!("--- {label}\n{d}"),
                        None => format!("--- {label}"),
                    })
                    .collect::<Vec<_>>();
                let text = if patch.is_empty() {
                    self.files.join("\n")
                } else {
                    patch.join("\n")
                };
                shown.push(escape(&text, Mode::Text));
            }
        }
        if let Some(r) = &self.grant_root {
            put("grantRoot", json!(r));
        }
        if shown.text.is_empty() {
            shown.push_plain(&self.what());
        }
        ApprovedAction::new(exact, shown)
    }

    fn prompt(&self) -> String {
        format!("Approval needed: Codex wants to {}.", self.what())
    }

    fn interaction(
        &self,
        request_id: &Value,
        turn: &Turn,
        expires_at: chrono::DateTime<chrono::Utc>,
    ) -> Interaction {
        let mut description = format!("{} (Codex) wants to {}", turn.agent.name, self.what());
        if let Some(root) = &self.grant_root {
            description.push_str(&grant_clause(root));
        }
        description.push('.');
        if let Some(reason) = &self.reason {
            description.push_str(&format!(" Reason: {}", escape(reason, Mode::Text).text));
        }
        let options = decision_options(self.kind, &self.decisions);
        let scope = if options.iter().any(|o| o.id == "acceptForSession") {
            "session"
        } else {
            "turn"
        };
        let default_option = default_option(&options);
        Interaction {
            interaction_id: new_id(),
            task_id: turn.task_id.clone(),
            kind: InteractionKind::ToolApproval,
            title: match (self.kind, &self.command, &self.network_host) {
                (ApprovalKind::Files, ..) => "Apply these file changes?".into(),
                (ApprovalKind::Command, None, Some(_)) => "Allow network access?".into(),
                (ApprovalKind::Command, ..) => "Run this command?".into(),
            },
            description: Some(description),
            command: self.command.clone(),
            cwd: self.cwd.clone(),
            action: Some(Box::new(self.action())),
            from: turn.from.clone(),
            options,
            fields: Vec::new(),
            // Codex's response carries the decision only; a reason would be dropped.
            reason_allowed: false,
            scope: scope.into(),
            expires_at: Some(expires_at),
            default_option,
            // Codex keeps acceptForSession in its own session cache.
            grant_key: None,
            engine_ref: json!({
                "method": self.method,
                "requestId": request_id,
                "decisions": self.decisions,
            }),
        }
    }
}

/// The description's clause naming Codex's `grantRoot` (a path on the person's machine: the
/// status message other readers see says [`PUBLIC_GRANT_CLAUSE`] instead).
pub(crate) fn grant_clause(root: &str) -> String {
    format!(
        ", and to write under {} for the rest of the session",
        escape(root, Mode::Command).text
    )
}

/// [`grant_clause`] without the path.
pub(crate) const PUBLIC_GRANT_CLAUSE: &str =
    ", and to write under a directory it names for the rest of the session";

/// The option applied at expiry: `decline`, else `cancel`, else the first that does not
/// approve, else the last.
fn default_option(options: &[InteractionOption]) -> String {
    ["decline", "cancel"]
        .iter()
        .find(|d| options.iter().any(|o| o.id == **d))
        .map(|d| d.to_string())
        .or_else(|| {
            options
                .iter()
                .find(|o| !o.id.starts_with("accept") && !o.id.starts_with("apply"))
                .map(|o| o.id.clone())
        })
        .or_else(|| options.last().map(|o| o.id.clone()))
        .unwrap_or_else(|| "decline".into())
}

/// One option per decision, in order: ids are the decision names (object-shaped decisions use
/// their key; repeats get `-2`, `-3`…), labels follow the Codex TUI's words.
fn decision_options(kind: ApprovalKind, decisions: &[Value]) -> Vec<InteractionOption> {
    let mut out: Vec<InteractionOption> = Vec::new();
    for (i, decision) in decisions.iter().enumerate() {
        let (base, label, shortcut) = describe_decision(kind, decision, i);
        let mut id = base.clone();
        let mut n = 1;
        while out.iter().any(|o| o.id == id) {
            n += 1;
            id = format!("{base}-{n}");
        }
        let shortcut = shortcut.filter(|s| !out.iter().any(|o| o.shortcut.as_deref() == Some(*s)));
        out.push(InteractionOption {
            id,
            label,
            description: None,
            shortcut: shortcut.map(String::from),
        });
    }
    out
}

/// (id, label, shortcut) for one decision.
fn describe_decision(
    kind: ApprovalKind,
    decision: &Value,
    index: usize,
) -> (String, String, Option<&'static str>) {
    match decision {
        Value::String(name) => {
            let (label, key) = match (name.as_str(), kind) {
                ("accept", _) => ("Yes, proceed".to_string(), Some("y")),
                ("acceptForSession", ApprovalKind::Command) => (
                    "Yes, and don't ask again for this command in this session".to_string(),
                    Some("a"),
                ),
                ("acceptForSession", ApprovalKind::Files) => (
                    "Yes, and don't ask again for these files in this session".to_string(),
                    Some("a"),
                ),
                ("decline", ApprovalKind::Command) => {
                    ("No, continue without running it".to_string(), Some("n"))
                }
                ("decline", ApprovalKind::Files) => {
                    ("No, continue without these changes".to_string(), Some("n"))
                }
                ("cancel", _) => (
                    "No, and stop this turn to tell Codex what to do differently".to_string(),
                    Some("c"),
                ),
                (other, _) => (humanize(other), None),
            };
            (name.clone(), label, key)
        }
        Value::Object(m) if m.len() == 1 => {
            let Some((key, inner)) = m.iter().next() else {
                return (
                    format!("option-{}", index + 1),
                    format!("Option {}", index + 1),
                    None,
                );
            };
            match key.as_str() {
                "acceptWithExecpolicyAmendment" => {
                    let prefix = match inner.get("execpolicy_amendment") {
                        Some(Value::Array(words)) => words
                            .iter()
                            .filter_map(Value::as_str)
                            .collect::<Vec<_>>()
                            .join(" "),
                        _ => String::new(),
                    };
                    let label = if prefix.is_empty() {
                        "Yes, and don't ask again for commands like this".to_string()
                    } else {
                        format!(
                            "Yes, and don't ask again for commands that start with `{}`",
                            escape(&prefix, Mode::Command).text
                        )
                    };
                    (key.clone(), label, Some("p"))
                }
                "applyNetworkPolicyAmendment" => {
                    let amendment = inner.get("network_policy_amendment");
                    let host = amendment
                        .and_then(|a| a.get("host"))
                        .and_then(Value::as_str)
                        .map(|h| escape(h, Mode::Command).text)
                        .unwrap_or_else(|| "this host".into());
                    let action = amendment
                        .and_then(|a| a.get("action"))
                        .and_then(Value::as_str);
                    let label = match action {
                        Some("deny") => format!("No, and block {host} in the future"),
                        _ => format!("Yes, and allow {host} in the future"),
                    };
                    (key.clone(), label, None)
                }
                other => (key.clone(), humanize(other), None),
            }
        }
        _ => (
            format!("option-{}", index + 1),
            format!("Option {}", index + 1),
            None,
        ),
    }
}

/// `acceptWithExecpolicyAmendment` → "Accept with execpolicy amendment".
fn humanize(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if out.is_empty() {
            if c.is_alphanumeric() {
                out.extend(c.to_uppercase());
            }
        } else if c.is_uppercase() {
            out.push(' ');
            out.extend(c.to_lowercase());
        } else if c == '_' || c == '-' {
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    if out.is_empty() { "Option".into() } else { out }
}

#[cfg(test)]
#[path = "codex_tests.rs"]
mod tests;
