//! The `exec` engine: runs a configured local command per turn and speaks the JSON-lines engine
//! protocol with it (documented in `docs/engine-protocol.md`).
//!
//! In short: Sextant writes one `{"type":"turn",...}` line to the command's stdin; the command
//! writes `text`, `status`, `artifact` and `final` lines to stdout. A stdout line that is not a
//! protocol object is taken as plain text, so an ordinary CLI that prints its answer works as is.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use serde::Deserialize;
use serde_json::{Value, json};
use sextant_core::a2a::{Part, Role};
use sextant_core::ids::new_id;
use sextant_core::projection::message_text;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;
use tokio_util::codec::{FramedRead, LinesCodec};

use super::{Engine, Outcome, Turn, TurnSink, artifact};

/// Protocol version written in the turn line.
pub const PROTOCOL_VERSION: u32 = 1;
/// Longest stdout line accepted (longer lines fail the turn rather than eat memory).
const MAX_LINE: usize = 1 << 20;
/// How much of stderr is kept to explain a failure.
const STDERR_TAIL: usize = 4096;
/// How long a command may take to exit after its `final` line.
const EXIT_GRACE: Duration = Duration::from_secs(5);

/// Runs a local command per turn.
pub struct ExecEngine {
    pub command: Vec<String>,
    pub working_dir: PathBuf,
    pub env: BTreeMap<String, String>,
    pub timeout: Duration,
}

/// One stdout line of the protocol.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Line {
    Text {
        text: String,
    },
    Status {
        text: String,
    },
    Artifact {
        #[serde(default)]
        name: Option<String>,
        parts: Vec<Value>,
    },
    Final {
        status: FinalStatus,
        #[serde(default)]
        text: Option<String>,
    },
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum FinalStatus {
    Completed,
    Failed,
    Rejected,
    InputRequired,
}

impl Engine for ExecEngine {
    fn wants_history(&self) -> bool {
        true
    }

    fn run_turn<'a>(&'a mut self, turn: Turn, sink: &'a TurnSink) -> BoxFuture<'a, Outcome> {
        async move {
            let cancel = turn.cancel.clone();
            let timeout = self.timeout;
            tokio::select! {
                out = self.run(&turn, sink) => out,
                _ = tokio::time::sleep(timeout) => {
                    Outcome::Failed(format!("the agent's command timed out after {} s", timeout.as_secs()))
                }
                _ = cancel.cancelled() => {
                    Outcome::Failed("Sextant shut down while this turn was running".into())
                }
            }
        }
        .boxed()
    }
}

impl ExecEngine {
    fn turn_line(turn: &Turn) -> String {
        let inputs: Vec<Value> = turn
            .inputs
            .iter()
            .map(|m| json!({ "message_id": m.message_id, "text": message_text(m) }))
            .collect();
        let history: Vec<Value> = turn
            .history
            .iter()
            .map(|m| {
                let role = if m.role == Role::Agent {
                    "agent"
                } else {
                    "user"
                };
                json!({ "role": role, "text": message_text(m) })
            })
            .collect();
        let mut line = json!({
            "type": "turn",
            "protocol": PROTOCOL_VERSION,
            "agent_id": turn.agent.id,
            "session_id": turn.session_id,
            "context_id": turn.context_id,
            "task_id": turn.task_id,
            "inputs": inputs,
            "history": history,
        })
        .to_string();
        line.push('\n');
        line
    }

    /// Runs the command; the process is killed when this future is dropped (timeout, shutdown).
    async fn run(&self, turn: &Turn, sink: &TurnSink) -> Outcome {
        let Some((program, args)) = self.command.split_first() else {
            return Outcome::Failed("the agent has no command configured".into());
        };
        if let Err(e) = std::fs::create_dir_all(&self.working_dir) {
            return Outcome::Failed(format!(
                "cannot create working directory {}: {e}",
                self.working_dir.display()
            ));
        }
        let mut child = match Command::new(program)
            .args(args)
            .current_dir(&self.working_dir)
            .envs(&self.env)
            .env("SEXTANT_AGENT_ID", &turn.agent.id)
            .env("SEXTANT_SESSION_ID", &turn.session_id)
            .env("SEXTANT_TASK_ID", &turn.task_id)
            .env("SEXTANT_CONTEXT_ID", &turn.context_id)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
        {
            Ok(c) => c,
            Err(e) => return Outcome::Failed(format!("cannot start {program:?}: {e}")),
        };
        let mut stdin = child.stdin.take();
        if let Some(w) = stdin.as_mut()
            && let Err(e) = w.write_all(Self::turn_line(turn).as_bytes()).await
        {
            // A command that ignores stdin may close it early; that is not an error.
            tracing::debug!(error = %e, "exec engine: stdin closed before the turn line");
        }
        let stderr_tail = child.stderr.take().map(|mut err| {
            tokio::spawn(async move {
                let mut tail: Vec<u8> = Vec::new();
                let mut buf = [0u8; 4096];
                while let Ok(n) = err.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    tail.extend_from_slice(&buf[..n]);
                    if tail.len() > STDERR_TAIL {
                        tail.drain(..tail.len() - STDERR_TAIL);
                    }
                }
                String::from_utf8_lossy(&tail).trim().to_string()
            })
        });
        let Some(stdout) = child.stdout.take() else {
            return Outcome::Failed("the agent's stdout is not available".into());
        };
        let mut lines = FramedRead::new(stdout, LinesCodec::new_with_max_length(MAX_LINE));
        let mut outcome = None;
        while let Some(line) = lines.next().await {
            let line = match line {
                Ok(l) => l,
                Err(e) => {
                    outcome = Some(Outcome::Failed(format!(
                        "unreadable output from the agent: {e}"
                    )));
                    break;
                }
            };
            match self.handle_line(&line, sink).await {
                Ok(Some(end)) => {
                    outcome = Some(end);
                    break;
                }
                Ok(None) => {}
                Err(e) => {
                    outcome = Some(Outcome::Failed(format!("could not record output: {e}")));
                    break;
                }
            }
        }
        drop(stdin);
        let status = tokio::time::timeout(EXIT_GRACE, child.wait()).await;
        let stderr = match stderr_tail {
            Some(h) => h.await.unwrap_or_default(),
            None => String::new(),
        };
        if let Some(end) = outcome {
            return end;
        }
        match status {
            Ok(Ok(s)) if s.success() => Outcome::Completed(None),
            Ok(Ok(s)) => {
                let code = s
                    .code()
                    .map_or_else(|| "a signal".to_string(), |c| c.to_string());
                let mut why = format!("the agent's command exited with {code}");
                if !stderr.is_empty() {
                    why.push_str(": ");
                    why.push_str(&stderr);
                }
                Outcome::Failed(why)
            }
            Ok(Err(e)) => Outcome::Failed(format!("waiting for the agent's command failed: {e}")),
            Err(_) => {
                Outcome::Failed("the agent's command did not exit after its output ended".into())
            }
        }
    }

    /// Handles one stdout line; returns the outcome when the line ends the turn.
    async fn handle_line(
        &self,
        line: &str,
        sink: &TurnSink,
    ) -> Result<Option<Outcome>, sextant_journal::Error> {
        let parsed = if line.trim_start().starts_with('{') {
            serde_json::from_str::<Line>(line).ok()
        } else {
            None
        };
        match parsed {
            None => {
                sink.text(&format!("{line}\n")).await?;
                Ok(None)
            }
            Some(Line::Text { text }) => {
                sink.text(&text).await?;
                Ok(None)
            }
            Some(Line::Status { text }) => {
                sink.status(&text).await?;
                Ok(None)
            }
            Some(Line::Artifact { name, parts }) => {
                let parts: Vec<Part> = parts
                    .into_iter()
                    .filter_map(|p| serde_json::from_value(p).ok())
                    .collect();
                if parts.is_empty() {
                    return Ok(Some(Outcome::Failed(
                        "the agent sent an artifact without valid parts".into(),
                    )));
                }
                let name = name.unwrap_or_else(|| "output".into());
                sink.artifact(artifact(new_id(), &name, parts), false, true)
                    .await?;
                Ok(None)
            }
            Some(Line::Final { status, text }) => Ok(Some(match status {
                FinalStatus::Completed => Outcome::Completed(text),
                FinalStatus::Failed => {
                    Outcome::Failed(text.unwrap_or_else(|| "the agent reported a failure".into()))
                }
                FinalStatus::Rejected => Outcome::Rejected(text),
                FinalStatus::InputRequired => Outcome::InputRequired(text),
            })),
        }
    }
}
