//! The connection to one Codex app-server: the process (started through `engine::child`), a
//! task that reads its stdout into messages ([`Incoming`]), another that keeps the end of its
//! stderr, and JSON-RPC 2.0 framing (without the `"jsonrpc"` member) over its stdin.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::config::CodexConfig;
use super::home;
use crate::engine::child::{Piped, Program, Tail, lines, make_working_dir, spawn_piped};
use crate::engine::{Turn, TurnSink};

/// Longest stdout line read; a longer one is skipped (and logged).
const MAX_LINE: usize = 8 << 20;
/// How long `initialize`, `thread/start` and `turn/start` may take to answer.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// One message from the app-server.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Incoming {
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
pub(super) fn classify(line: &str) -> Result<Incoming, String> {
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
pub(super) struct Conn {
    child: Child,
    stdin: ChildStdin,
    /// Parsed stdout messages; `None` from `recv` once stdout closed.
    pub(super) rx: mpsc::UnboundedReceiver<Incoming>,
    /// Messages read ahead (while waiting for a response or an answer), in arrival order.
    pub(super) backlog: VecDeque<Incoming>,
    stderr: Arc<Tail>,
    tasks: Vec<JoinHandle<()>>,
    pub(super) next_id: i64,
    pub(super) thread_id: String,
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
    pub(super) async fn start(
        config: &CodexConfig,
        turn: &Turn,
        sink: &TurnSink,
    ) -> Result<Conn, String> {
        make_working_dir(&config.working_dir)?;
        home::prepare(&config.home)?;
        let mut cmd = Command::new(&config.binary);
        cmd.args(&config.args)
            .current_dir(&config.working_dir)
            .env("CODEX_HOME", config.home.dir());
        let piped = spawn_piped(cmd, Program::Agent(turn), sink)
            .await
            .map_err(|e| {
                format!(
                    "cannot start the Codex app-server {}: {e}",
                    config.binary.display()
                )
            })?;
        let Piped {
            child,
            group,
            stdin: Some(stdin),
            stdout: Some(stdout),
            stderr: Some(stderr),
        } = piped
        else {
            return Err("the Codex app-server's stdio is not available".into());
        };
        let (tx, rx) = mpsc::unbounded_channel();
        let reader = tokio::spawn(async move {
            let mut lines = lines(stdout, MAX_LINE);
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
        let tail = Arc::new(Tail::default());
        let tail_w = tail.clone();
        let stderr_task = tokio::spawn(async move { tail_w.read_to_end(stderr).await });
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

    pub(super) async fn send(&mut self, msg: &Value) -> Result<(), String> {
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
    pub(super) async fn request(
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

    pub(super) async fn respond(&mut self, id: Value, result: Value) {
        if let Err(e) = self.send(&json!({ "id": id, "result": result })).await {
            tracing::warn!(error = %e, "codex engine: could not answer a request");
        }
    }

    pub(super) async fn respond_error(&mut self, id: Value, code: i64, message: String) {
        let msg = json!({ "id": id, "error": { "code": code, "message": message } });
        if let Err(e) = self.send(&msg).await {
            tracing::warn!(error = %e, "codex engine: could not answer a request");
        }
    }

    /// The next message: read-ahead first, then the stream (`None` once it closed).
    pub(super) async fn next(&mut self) -> Option<Incoming> {
        match self.backlog.pop_front() {
            Some(m) => Some(m),
            None => self.rx.recv().await,
        }
    }

    pub(super) fn is_dead(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(Some(_))) || self.rx.is_closed() && self.rx.is_empty()
    }

    /// Why the process is gone: its exit status and the tail of its stderr.
    pub(super) async fn exit_reason(&mut self) -> String {
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
        let tail = self.stderr.text();
        if !tail.is_empty() {
            why.push_str(": ");
            why.push_str(&tail);
        }
        why
    }
}
