//! The shell engine: Sextant's built-in default Agent. Each message is a shell command; before
//! it runs, the task asks the person (`accept`, `acceptForSession`, `decline`, `cancel`). On
//! accept it runs `sh -c <command>` in the working directory with a time limit and returns
//! stdout, stderr and the exit code; decline completes the task saying so; cancel fails it.
//! `acceptForSession` remembers that exact command for the rest of the Session only. When the
//! task is a schedule's Run, the card also offers `acceptForSchedule`: that exact command runs
//! without asking in every later Run of the schedule (the runtime keeps the grant, bound to
//! the schedule's prompt and Agent; see [`super::ScheduledRun`]).
//!
//! The shell executes its input, so it gets the caller's raw text (never the untrusted-input
//! frame, which is for models). The card shows that exact command, escaped where invisible
//! characters hide in it, with its digest and who sent it; a command runs only if the answer
//! approved its digest.

use std::path::PathBuf;
use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use sextant_core::a2a::Part;
use sextant_core::ids::new_id;
use sextant_core::interaction::{
    ACCEPT_FOR_SCHEDULE, command_approval_options, schedule_approval_option,
};
use sextant_core::{Answer, ApprovedAction, Interaction, InteractionKind};
use tokio::process::Command;

use super::child::{Piped, Program, spawn_piped};
use super::{AskError, Engine, Outcome, Turn, TurnSink};
use sextant_core::parts::artifact;

/// Runs approved shell commands.
pub struct ShellEngine {
    pub working_dir: PathBuf,
    pub timeout: Duration,
    pub approval_timeout: chrono::Duration,
}

/// What an `acceptForSession` answer grants: this exact action (its digest), nothing else.
fn grant_key(action: &ApprovedAction) -> String {
    format!("shell:{}", action.digest)
}

impl ShellEngine {
    /// The exact action a command is: `sh -c <command>` in the working directory.
    fn action(&self, command: &str) -> ApprovedAction {
        ApprovedAction::shell(command, Some(&self.working_dir.display().to_string()))
    }

    /// The standard options, plus `acceptForSchedule` when the task is a schedule's Run.
    fn options(&self, turn: &Turn) -> Vec<sextant_core::InteractionOption> {
        let mut options = command_approval_options();
        if let Some(s) = &turn.schedule {
            options.insert(2, schedule_approval_option(&s.schedule_name));
        }
        options
    }

    fn approval(&self, turn: &Turn, action: &ApprovedAction, sink: &TurnSink) -> Interaction {
        let command = action.exact["command"].as_str().unwrap_or_default();
        let from = turn
            .from
            .as_deref()
            .map(|f| format!(" (sent by {f})"))
            .unwrap_or_default();
        Interaction {
            interaction_id: new_id(),
            task_id: turn.task_id.clone(),
            kind: InteractionKind::ToolApproval,
            title: "Run this shell command?".into(),
            description: Some(format!(
                "{} wants to run this shell command{from}.",
                turn.agent.name
            )),
            command: Some(command.to_string()),
            cwd: Some(self.working_dir.display().to_string()),
            action: Some(Box::new(action.clone())),
            from: turn.from.clone(),
            options: self.options(turn),
            fields: Vec::new(),
            reason_allowed: true,
            scope: "turn".into(),
            expires_at: Some(sink.now() + self.approval_timeout),
            default_option: "decline".into(),
            grant_key: Some(grant_key(action)),
            engine_ref: serde_json::Value::Null,
        }
    }

    /// Acts on an answer: runs the command only if the answer approved exactly this action.
    async fn decide(&self, command: &str, answer: &Answer, sink: &TurnSink) -> Outcome {
        let why = answer
            .reason
            .as_deref()
            .map(|r| format!(" Reason: {r}"))
            .unwrap_or_default();
        match answer.option.as_str() {
            "accept" | "acceptForSession" | ACCEPT_FOR_SCHEDULE => {
                let action = self.action(command);
                if !action.is(answer.digest.as_deref()) {
                    return Outcome::Failed(format!(
                        "Not run: the answer approved {}, but the command now asked for is {}.",
                        answer.digest.as_deref().unwrap_or("no action digest"),
                        action.digest
                    ));
                }
                self.run(&action, sink).await
            }
            "decline" => {
                let who = if answer.expired {
                    "the approval expired".to_string()
                } else {
                    format!("declined by {}", answer.answered_by)
                };
                Outcome::Completed(Some(format!("Not run: {who}.{why}")))
            }
            "cancel" => Outcome::Failed(format!(
                "Canceled by {}; the command was not run.{why}",
                answer.answered_by
            )),
            other => Outcome::Failed(format!("unexpected answer {other:?}")),
        }
    }

    /// Runs an approved action; its output's data part names the digest that ran.
    async fn run(&self, action: &ApprovedAction, sink: &TurnSink) -> Outcome {
        let command = action.exact["command"].as_str().unwrap_or_default();
        if let Err(why) = super::child::make_working_dir(&self.working_dir) {
            return Outcome::Failed(why);
        }
        // Gated: `sh -c GATE COMMAND` becomes `sh -c COMMAND` once let go (see
        // `Program::Command`), so a cancel that lands while it starts runs nothing of it.
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(super::child::GATE)
            .arg(command)
            .current_dir(&self.working_dir);
        // Its own process group, ended when the command is done (or stopped) and when
        // Sextant dies; see `crate::process`.
        let Piped {
            mut child,
            group,
            stdin,
            stdout,
            stderr,
        } = match spawn_piped(cmd, Program::Command, sink).await {
            Ok(c) => c,
            Err(e) => return Outcome::Failed(format!("cannot start sh: {e}")),
        };
        super::child::open_gate(stdin).await;
        let (out_id, err_id) = (new_id(), new_id());
        // Output is journalled while the command runs (a canceled or timed-out command keeps
        // what it printed), stdout into `output` and stderr into `stderr`.
        let work = async {
            let (out, err, status) = tokio::join!(
                super::output::pump(stdout, sink, &out_id, "output", None),
                super::output::pump(stderr, sink, &err_id, "stderr", None),
                child.wait()
            );
            (out, err, status)
        };
        let waited = tokio::time::timeout(self.timeout, work).await;
        group.finish().await;
        let (out_started, status) = match waited {
            Ok((Ok(started), Ok(_), Ok(status))) => (started, status),
            Ok((Err(e), _, _) | (_, Err(e), _)) => {
                return Outcome::Failed(format!("could not record the output: {e}"));
            }
            Ok((_, _, Err(e))) => {
                return Outcome::Failed(format!("running the command failed: {e}"));
            }
            Err(_) => {
                return Outcome::Failed(format!(
                    "the command ran longer than {} s and was stopped",
                    self.timeout.as_secs()
                ));
            }
        };
        let code = status.code();
        let mut parts = Vec::new();
        if !out_started {
            parts.push(Part::text(""));
        }
        parts.push(
            Part::data(serde_json::json!({ "exitCode": code, "digest": action.digest }))
                .with_media_type("application/json"),
        );
        if let Err(e) = sink
            .artifact(artifact(out_id, "output", parts), out_started, true)
            .await
        {
            return Outcome::Failed(format!("could not record the output: {e}"));
        }
        let status = match code {
            Some(c) => format!("exit code {c}"),
            None => "stopped by a signal".to_string(),
        };
        Outcome::Completed(Some(status))
    }
}

impl Engine for ShellEngine {
    /// A canceled turn's commands get SIGTERM, then SIGKILL after the grace period.
    fn stop_how(&self) -> super::StopHow {
        super::StopHow::Processes
    }

    fn uses_interactions(&self) -> bool {
        true
    }

    fn run_turn<'a>(&'a mut self, turn: Turn, sink: &'a TurnSink) -> BoxFuture<'a, Outcome> {
        async move {
            let command = turn.input_text().trim().to_string();
            if command.is_empty() {
                return Outcome::Rejected(Some("Send a shell command to run.".into()));
            }
            let action = self.action(&command);
            if turn.grants.contains(&grant_key(&action)) {
                if let Err(e) = sink
                    .status("Approved earlier in this session; running.")
                    .await
                {
                    return Outcome::Failed(format!("could not record output: {e}"));
                }
                return self.run(&action, sink).await;
            }
            if let Some(s) = turn
                .schedule
                .as_ref()
                .filter(|s| s.grants.contains(&grant_key(&action)))
            {
                let said = format!(
                    "Approved for every Run of schedule \u{201c}{}\u{201d}; running.",
                    s.schedule_name
                );
                if let Err(e) = sink.status(&said).await {
                    return Outcome::Failed(format!("could not record output: {e}"));
                }
                return self.run(&action, sink).await;
            }
            let ask = self.approval(&turn, &action, sink);
            let text = format!("Approval needed to run: {}", action.shown);
            match sink.ask(ask, &text).await {
                Ok(answer) => self.decide(&command, &answer, sink).await,
                Err(AskError::Suspended) => Outcome::Suspended,
                Err(AskError::Journal(e)) => {
                    Outcome::Failed(format!("could not record the request: {e}"))
                }
            }
        }
        .boxed()
    }

    fn cannot_resume(&self) -> Option<String> {
        None
    }

    fn resume<'a>(
        &'a mut self,
        turn: Turn,
        _interaction: Interaction,
        answer: Answer,
        sink: &'a TurnSink,
    ) -> BoxFuture<'a, Outcome> {
        async move {
            let command = turn.input_text().trim().to_string();
            self.decide(&command, &answer, sink).await
        }
        .boxed()
    }
}
