//! The `exec` engine: runs a configured local command per turn and speaks the JSON-lines engine
//! protocol with it (documented in `docs/engine-protocol.md`).
//!
//! In short: Sextant writes one `{"type":"turn",...}` line to the command's stdin; the command
//! writes `text`, `status`, `artifact` and `final` lines to stdout. A stdout line that is not a
//! protocol object is taken as plain text, so an ordinary CLI that prints its answer works as is.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use serde::Deserialize;
use serde_json::{Value, json};
use sextant_core::a2a::{Part, Role};
use sextant_core::ids::new_id;
use sextant_core::projection::message_text;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;

use sextant_core::action::{Escaped, Mode, escape, escape_argv};
use sextant_core::interaction::{FormField, InteractionOption, command_approval_options};
use sextant_core::{Answer, ApprovedAction, Interaction, InteractionKind};
use tokio::process::ChildStdin;

use super::child::{Piped, Program, Tail, lines, spawn_piped};
use super::{AskError, Engine, Outcome, Turn, TurnSink};
use sextant_core::parts::artifact;

/// The turn's time limit: it counts working time only, so it stops while the turn waits for
/// a person (the approval's own expiry governs that wait). A watch, so that the timer that
/// enforces it re-arms when the turn starts or stops waiting.
struct Deadline {
    limit: Duration,
    spent: tokio::sync::watch::Sender<Spent>,
}

#[derive(Clone, Copy)]
struct Spent {
    /// Working time before the current stretch.
    before: Duration,
    /// When the current working stretch began; `None` while a person is asked.
    since: Option<tokio::time::Instant>,
}

impl Deadline {
    fn new(limit: Duration) -> Self {
        let spent = Spent {
            before: Duration::ZERO,
            since: Some(tokio::time::Instant::now()),
        };
        Self {
            limit,
            spent: tokio::sync::watch::Sender::new(spent),
        }
    }

    /// When the limit is reached if the turn goes on working; `None` while it waits.
    fn due(&self, spent: Spent) -> Option<tokio::time::Instant> {
        spent
            .since
            .map(|t| t + self.limit.saturating_sub(spent.before))
    }

    /// Stops the clock until the guard is dropped (the answer came, or the turn ended).
    fn pause(&self) -> Paused<'_> {
        self.spent.send_modify(|s| {
            if let Some(t) = s.since.take() {
                s.before += t.elapsed();
            }
        });
        Paused(self)
    }
}

/// The clock of a [`Deadline`] stopped while a person is asked.
struct Paused<'a>(&'a Deadline);

impl Drop for Paused<'_> {
    fn drop(&mut self) {
        self.0.spent.send_modify(|s| {
            s.since.get_or_insert_with(tokio::time::Instant::now);
        });
    }
}

/// Protocol version written in the turn line.
pub const PROTOCOL_VERSION: u32 = 1;
/// Longest stdout line accepted (longer lines fail the turn rather than eat memory).
const MAX_LINE: usize = 1 << 20;
/// How long a command may take to exit after its `final` line.
const EXIT_GRACE: Duration = Duration::from_secs(5);

/// Runs a local command per turn.
pub struct ExecEngine {
    pub command: Vec<String>,
    pub working_dir: PathBuf,
    pub env: BTreeMap<String, String>,
    pub timeout: Duration,
    /// Where each turn's input files go (`<root>/<task id>`, see `engine::files`).
    pub turns_root: PathBuf,
    /// Fetches URL parts for an Agent with `fetch_url_parts` (`None`: not set up).
    pub outbound: Option<std::sync::Arc<dyn crate::outbound::Outbound>>,
    /// Largest file an `artifact` line's `path` part may name (the Agent's `max_part_bytes`).
    pub max_part_bytes: u64,
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
    /// The agent stops for a decision; Sextant answers with an `answer` line on stdin.
    Interaction(Box<AskLine>),
}

/// An `interaction` line.
#[derive(Debug, Deserialize)]
struct AskLine {
    #[serde(default = "tool_approval")]
    kind: InteractionKind,
    title: String,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    command: Option<String>,
    /// The argument list a tool approval is about (program first), when it runs no shell.
    #[serde(default)]
    argv: Option<Vec<String>>,
    /// The patch (or other text) a file-change approval is about.
    #[serde(default)]
    patch: Option<String>,
    /// Declared options in order; a tool approval without options gets accept,
    /// acceptForSession, decline, cancel.
    #[serde(default)]
    options: Vec<InteractionOption>,
    #[serde(default)]
    fields: Vec<FormField>,
    #[serde(default)]
    default_option: Option<String>,
    #[serde(default)]
    expires_in_secs: Option<u64>,
    #[serde(default)]
    reason_allowed: Option<bool>,
    /// What an `acceptForSession` answer grants (the turn line's `grants` lists them later).
    #[serde(default)]
    grant_key: Option<String>,
}

/// The exact action an `interaction` line asks about: the command, argument list or patch it
/// names, or else its question and options (so a changed question is another action).
fn exec_action(ask: &AskLine, options: &[InteractionOption]) -> ApprovedAction {
    let mut exact = serde_json::Map::new();
    exact.insert("kind".into(), json!("exec"));
    let mut shown = Escaped::default();
    if let Some(c) = &ask.command {
        exact.insert("command".into(), json!(c));
        shown.push(escape(c, Mode::Command));
    }
    if let Some(argv) = &ask.argv {
        exact.insert("argv".into(), json!(argv));
        if !shown.text.is_empty() {
            shown.push_plain("\n");
        }
        shown.push(escape_argv(argv));
    }
    if let Some(p) = &ask.patch {
        exact.insert("patch".into(), json!(p));
        if !shown.text.is_empty() {
            shown.push_plain("\n");
        }
        shown.push(escape(p, Mode::Text));
    }
    if ask.command.is_none() && ask.argv.is_none() && ask.patch.is_none() {
        exact.insert("title".into(), json!(ask.title));
        if let Some(d) = &ask.description {
            exact.insert("description".into(), json!(d));
        }
        let ids: Vec<&str> = options.iter().map(|o| o.id.as_str()).collect();
        exact.insert("options".into(), json!(ids));
        shown.push(escape(&ask.title, Mode::Text));
    }
    ApprovedAction::new(Value::Object(exact), shown)
}

fn tool_approval() -> InteractionKind {
    InteractionKind::ToolApproval
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
    /// A canceled turn's commands get SIGTERM, then SIGKILL after the grace period.
    fn stop_how(&self) -> super::StopHow {
        super::StopHow::Processes
    }

    fn wants_history(&self) -> bool {
        true
    }

    fn uses_interactions(&self) -> bool {
        true
    }

    fn run_turn<'a>(&'a mut self, turn: Turn, sink: &'a TurnSink) -> BoxFuture<'a, Outcome> {
        async move { self.run_limited(&turn, None, sink).await }.boxed()
    }

    fn cannot_resume(&self) -> Option<String> {
        None
    }

    fn resume<'a>(
        &'a mut self,
        turn: Turn,
        interaction: Interaction,
        answer: Answer,
        sink: &'a TurnSink,
    ) -> BoxFuture<'a, Outcome> {
        async move {
            self.run_limited(&turn, Some((&interaction, &answer)), sink)
                .await
        }
        .boxed()
    }
}

fn answer_json(a: &Answer) -> Value {
    json!({
        "interaction_id": a.interaction_id,
        "option": a.option,
        "reason": a.reason,
        "values": a.values,
        "answered_by": a.answered_by,
        "expired": a.expired,
        "digest": a.digest,
    })
}

impl ExecEngine {
    /// Runs a turn under the time limit (which stops while a person is being asked).
    async fn run_limited(
        &self,
        turn: &Turn,
        resume: Option<(&Interaction, &Answer)>,
        sink: &TurnSink,
    ) -> Outcome {
        let deadline = Deadline::new(self.timeout);
        let mut changed = deadline.spent.subscribe();
        let run = self.run(turn, resume, sink, &deadline);
        futures::pin_mut!(run);
        loop {
            let due = deadline.due(*changed.borrow_and_update());
            let now = tokio::time::Instant::now();
            tokio::select! {
                out = &mut run => return out,
                // The turn may have started waiting in this same poll, after `due` was read.
                _ = tokio::time::sleep_until(due.unwrap_or(now)), if due.is_some() => {
                    if deadline
                        .due(*deadline.spent.borrow())
                        .is_some_and(|d| d <= tokio::time::Instant::now())
                    {
                        return Outcome::Failed(format!(
                            "the agent's command timed out after {} s",
                            self.timeout.as_secs()
                        ));
                    }
                }
                // The sender lives as long as `deadline`, so this never ends in an error.
                _ = changed.changed() => {}
                _ = turn.cancel.cancelled() => {
                    return Outcome::Failed("Sextant shut down while this turn was running".into());
                }
            }
        }
    }

    fn turn_line(turn: &Turn, inputs: &[Value], resume: Option<(&Interaction, &Answer)>) -> String {
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
            "grants": turn.grants,
        });
        if let Some((i, a)) = resume {
            line["resume"] = json!({
                "interaction": serde_json::to_value(i.public()).unwrap_or(Value::Null),
                "answer": answer_json(a),
            });
        }
        let mut line = line.to_string();
        line.push('\n');
        line
    }

    /// Runs the command; the process is killed when this future is dropped (timeout, shutdown).
    async fn run(
        &self,
        turn: &Turn,
        resume: Option<(&Interaction, &Answer)>,
        sink: &TurnSink,
        deadline: &Deadline,
    ) -> Outcome {
        let Some((program, args)) = self.command.split_first() else {
            return Outcome::Failed("the agent has no command configured".into());
        };
        if let Err(why) = super::child::make_working_dir(&self.working_dir) {
            return Outcome::Failed(why);
        }
        let files = match super::files::prepare(turn, &self.turns_root, self.outbound.as_deref())
            .await
        {
            Ok(f) => f,
            Err(e) => return Outcome::Failed(format!("cannot hand the turn's files over: {e}")),
        };
        let outcome = self
            .run_command(program, args, turn, &files, resume, sink, deadline)
            .await;
        files.remove();
        outcome
    }

    /// Runs the command once its files are in place.
    #[allow(clippy::too_many_arguments)]
    async fn run_command(
        &self,
        program: &str,
        args: &[String],
        turn: &Turn,
        files: &super::files::TurnFiles,
        resume: Option<(&Interaction, &Answer)>,
        sink: &TurnSink,
        deadline: &Deadline,
    ) -> Outcome {
        let mut cmd = Command::new(program);
        cmd.args(args)
            .current_dir(&self.working_dir)
            .envs(&self.env)
            .env("SEXTANT_TASK_ID", &turn.task_id)
            .env("SEXTANT_CONTEXT_ID", &turn.context_id)
            .env("SEXTANT_TURN_DIR", &files.dir);
        // Its own process group: ended with the turn (the guard), and with Sextant.
        let Piped {
            mut child,
            group,
            mut stdin,
            stdout,
            stderr,
        } = match spawn_piped(cmd, Program::Agent(turn), sink).await {
            Ok(c) => c,
            Err(e) => return Outcome::Failed(format!("cannot start {program:?}: {e}")),
        };
        if let Some(w) = stdin.as_mut()
            && let Err(e) = w
                .write_all(Self::turn_line(turn, &files.inputs, resume).as_bytes())
                .await
        {
            // A command that ignores stdin may close it early; that is not an error.
            tracing::debug!(error = %e, "exec engine: stdin closed before the turn line");
        }
        // stderr is journalled while the command runs (an `stderr` artifact), and its end kept
        // to explain a failure; stdout is the protocol, read line by line beside it.
        let (err_id, tail) = (new_id(), Tail::default());
        let Some(stdout) = stdout else {
            return Outcome::Failed("the agent's stdout is not available".into());
        };
        let read_stdout = async {
            let mut lines = lines(stdout, MAX_LINE);
            let mut outcome = None;
            // Text lines gather for a moment (see `output`): a chatty agent makes a few appends
            // a second, and at most MAX_TEXT of text is kept per turn.
            let mut text = TextBuffer::default();
            loop {
                let next = match text.due {
                    Some(at) => tokio::select! {
                        l = lines.next() => Some(l),
                        _ = tokio::time::sleep_until(at) => None,
                    },
                    None => Some(lines.next().await),
                };
                let Some(next) = next else {
                    if let Err(e) = text.flush(sink).await {
                        outcome = Some(Outcome::Failed(format!("could not record output: {e}")));
                        break;
                    }
                    continue;
                };
                let Some(line) = next else { break };
                let line = match line {
                    Ok(l) => l,
                    Err(e) => {
                        outcome = Some(Outcome::Failed(format!(
                            "unreadable output from the agent: {e}"
                        )));
                        break;
                    }
                };
                let flushed = match text_of(&line) {
                    Some(t) => text.add(&t, sink).await,
                    // Anything else follows the text before it.
                    None => text.flush(sink).await,
                };
                if let Err(e) = flushed {
                    outcome = Some(Outcome::Failed(format!("could not record output: {e}")));
                    break;
                }
                if text_of(&line).is_some() {
                    continue;
                }
                match self
                    .handle_line(&line, sink, &mut stdin, deadline, turn)
                    .await
                {
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
            if outcome.is_none()
                && let Err(e) = text.flush(sink).await
            {
                outcome = Some(Outcome::Failed(format!("could not record output: {e}")));
            }
            drop(stdin);
            outcome
        };
        let mut read_stderr = std::pin::pin!(super::output::pump(
            stderr,
            sink,
            &err_id,
            "stderr",
            Some(&tail)
        ));
        let mut read_stdout = std::pin::pin!(read_stdout);
        let mut stderr_read = None;
        let outcome = loop {
            tokio::select! {
                o = &mut read_stdout => break o,
                r = &mut read_stderr, if stderr_read.is_none() => stderr_read = Some(r),
            }
        };
        let status = tokio::time::timeout(EXIT_GRACE, child.wait()).await;
        group.finish().await;
        // A process the command left behind may hold stderr open: the group is ended now, so
        // its pipe closes and the rest is read (bounded, in case something outside holds it).
        if stderr_read.is_none() {
            stderr_read = tokio::time::timeout(EXIT_GRACE, &mut read_stderr)
                .await
                .ok();
        }
        if let Some(Err(e)) = stderr_read {
            tracing::debug!(error = %e, "exec engine: stderr not fully recorded");
        }
        let stderr = tail.text();
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

    /// Builds the interaction an `interaction` line asks for (declared options kept as sent).
    fn interaction(&self, mut ask: AskLine, turn: &Turn, sink: &TurnSink) -> Interaction {
        let options = if ask.options.is_empty() && ask.kind == InteractionKind::ToolApproval {
            command_approval_options()
        } else {
            std::mem::take(&mut ask.options)
        };
        let default_option = ask
            .default_option
            .take()
            .filter(|d| options.iter().any(|o| o.id == *d))
            .or_else(|| {
                options
                    .iter()
                    .find(|o| o.id == "decline")
                    .map(|o| o.id.clone())
            })
            .or_else(|| options.last().map(|o| o.id.clone()))
            .unwrap_or_default();
        let expires = ask.expires_in_secs.unwrap_or(3600).clamp(1, 7 * 24 * 3600);
        let action = exec_action(&ask, &options);
        let one_line = |t: &str| escape(t, Mode::Command).text;
        Interaction {
            interaction_id: new_id(),
            task_id: String::new(),
            kind: ask.kind,
            title: one_line(&ask.title),
            description: ask.description.map(|d| escape(&d, Mode::Text).text),
            command: ask.command,
            cwd: Some(self.working_dir.display().to_string()),
            action: Some(Box::new(action)),
            from: turn.from.clone(),
            options,
            fields: ask.fields,
            reason_allowed: ask.reason_allowed.unwrap_or(true),
            scope: if ask.grant_key.is_some() {
                "session".into()
            } else {
                "turn".into()
            },
            expires_at: Some(sink.now() + chrono::Duration::seconds(expires as i64)),
            default_option,
            grant_key: ask.grant_key,
            engine_ref: Value::Null,
        }
    }

    /// Handles one stdout line; returns the outcome when the line ends the turn.
    async fn handle_line(
        &self,
        line: &str,
        sink: &TurnSink,
        stdin: &mut Option<ChildStdin>,
        deadline: &Deadline,
        turn: &Turn,
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
                let mut read = Vec::with_capacity(parts.len());
                for p in parts {
                    // A file the command wrote: its bytes become a raw part. One that cannot
                    // be read fails the turn, saying why, rather than vanishing.
                    if p.get("path").is_some() {
                        match super::files::read_path_part(
                            &p,
                            &self.working_dir,
                            self.max_part_bytes,
                        )
                        .await
                        {
                            Ok(part) => read.push(part),
                            Err(e) => {
                                return Ok(Some(Outcome::Failed(format!(
                                    "the agent's artifact names a file Sextant cannot take: {e}"
                                ))));
                            }
                        }
                    } else if let Ok(part) = serde_json::from_value::<Part>(p) {
                        read.push(part);
                    }
                }
                let parts = read;
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
            Some(Line::Interaction(ask)) => {
                let interaction = self.interaction(*ask, turn, sink);
                let text = match &interaction.action {
                    Some(a) if interaction.command.is_some() || a.exact.get("argv").is_some() => {
                        format!("{}: {}", interaction.title, a.shown)
                    }
                    _ => interaction.title.clone(),
                };
                let paused = deadline.pause();
                let answer = sink.ask(interaction, &text).await;
                drop(paused);
                match answer {
                    Ok(answer) => {
                        let mut line = json!({ "type": "answer" })
                            .as_object()
                            .cloned()
                            .unwrap_or_default();
                        if let Value::Object(a) = answer_json(&answer) {
                            line.extend(a);
                        }
                        let mut text = Value::Object(line).to_string();
                        text.push('\n');
                        let written = match stdin.as_mut() {
                            Some(w) => w.write_all(text.as_bytes()).await.is_ok(),
                            None => false,
                        };
                        if !written {
                            return Ok(Some(Outcome::Failed(
                                "the agent closed its stdin and cannot receive the answer".into(),
                            )));
                        }
                        Ok(None)
                    }
                    Err(AskError::Suspended) => Ok(Some(Outcome::Suspended)),
                    Err(AskError::Journal(e)) => Err(e),
                }
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

/// Text an agent's stdout line is: a plain line (with its newline), or a `{"type": "text"}`
/// line's text; `None` for any other protocol line.
fn text_of(line: &str) -> Option<String> {
    if !line.trim_start().starts_with('{') {
        return Some(format!("{line}\n"));
    }
    match serde_json::from_str::<Line>(line) {
        Ok(Line::Text { text }) => Some(text),
        Ok(_) => None,
        Err(_) => Some(format!("{line}\n")),
    }
}

/// Most text one turn's stdout journals; the rest is read and dropped, with a note.
const MAX_TEXT: usize = 1024 * 1024;

/// Text lines gathered before they are journalled together (see [`super::output`]).
#[derive(Default)]
struct TextBuffer {
    pending: String,
    kept: usize,
    cut: bool,
    /// When the pending text is due to be journalled.
    due: Option<tokio::time::Instant>,
}

impl TextBuffer {
    async fn add(&mut self, text: &str, sink: &TurnSink) -> Result<(), sextant_journal::Error> {
        let end = sextant_core::text::cut_bytes(text, MAX_TEXT.saturating_sub(self.kept))
            .kept
            .len();
        self.pending.push_str(&text[..end]);
        self.kept += end;
        if end < text.len() && !self.cut {
            self.cut = true;
            self.pending.push_str("\n[output cut at 1 MiB]\n");
        }
        if self.pending.len() >= super::output::CHUNK_BYTES {
            return self.flush(sink).await;
        }
        if self.due.is_none() && !self.pending.is_empty() {
            self.due = Some(tokio::time::Instant::now() + super::output::CHUNK_DELAY);
        }
        Ok(())
    }

    async fn flush(&mut self, sink: &TurnSink) -> Result<(), sextant_journal::Error> {
        self.due = None;
        if self.pending.is_empty() {
            return Ok(());
        }
        let text = std::mem::take(&mut self.pending);
        sink.text(&text).await
    }
}
