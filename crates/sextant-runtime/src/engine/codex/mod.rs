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
//!
//! Here: the engine. `config`: its settings and the approval methods' names, which the others
//! share and which use none of them. `home`: the `CODEX_HOME` a process runs with (by
//! default the Agent's own). `connection`: the process (started through
//! `engine::child`, as the exec engine's command is) and JSON-RPC over its stdio. `approval`:
//! Codex's approval requests read and worded as interactions, and what withdraws them. `turn`:
//! one `turn/start` read to its `turn/completed`, asking the person when Codex requests
//! approval. Each uses only those before it, never this file (`scripts/import-cycles.py`).

mod approval;
mod config;
mod connection;
mod home;
mod turn;

use futures::FutureExt;
use futures::future::BoxFuture;
use sextant_core::a2a::{Message, Role};
use sextant_core::projection::message_text;

use super::{Engine, Outcome, Turn, TurnSink};
pub use config::{COMMAND_APPROVAL, CodexConfig, CodexHome, FILE_APPROVAL};
use connection::Conn;
use turn::TurnRun;

/// Earlier messages passed to a new thread, and how long each may be.
const HISTORY_MESSAGES: usize = 20;
const HISTORY_CHARS: usize = 4000;

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

#[cfg(test)]
mod tests;
