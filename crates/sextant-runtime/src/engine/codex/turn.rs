//! One Codex turn: `turn/start` with the input, then the app-server's messages until the turn
//! ends. Agent message deltas stream into the task's response, items' progress becomes status
//! notes, requests for approval become interactions (`approval`) whose answer goes back to Codex, and a time limit or a cancel ends
//! the turn with `turn/interrupt`.

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sextant_core::action::{Mode, escape};

use super::approval::{ApprovalRequest, ItemInfo, ends_request, withdrawn};
use super::config::{COMMAND_APPROVAL, CodexConfig, FILE_APPROVAL};
use super::connection::{Conn, Incoming};
use crate::engine::{AskError, Asked, Outcome, Turn, TurnSink};

/// How long Codex gets to end a turn after `turn/interrupt`.
const INTERRUPT_GRACE: Duration = Duration::from_secs(5);
/// JSON-RPC "method not found".
const METHOD_NOT_FOUND: i64 = -32601;

enum Next {
    Msg(Incoming),
    Closed,
    TimedOut,
    Canceled,
}

/// One turn on a connection: `turn/start`, then its notifications and requests until
/// `turn/completed` (or the time limit, a cancel, or the process's end).
pub(super) struct TurnRun<'a> {
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
    pub(super) discard: bool,
}

/// A journal failure, as a turn outcome.
fn not_recorded(e: sextant_journal::Error) -> Outcome {
    Outcome::Failed(format!("could not record Codex's output: {e}"))
}

impl<'a> TurnRun<'a> {
    pub(super) fn new(
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

    pub(super) async fn run(&mut self, input: String) -> Outcome {
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
