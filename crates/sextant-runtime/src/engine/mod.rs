//! Engines: what executes a turn.
//!
//! A Session's worker owns one [`Engine`] instance (made by [`make_engine`] from the Agent's
//! [`EngineSpec`]) and calls [`Engine::run_turn`] with the inputs queued for a task. The engine
//! reports output through the [`TurnSink`], which journals each event before returning (so a
//! crash never loses reported output), and ends the turn with an [`Outcome`].

pub mod conformance;
pub mod echo;
pub mod exec;

use std::path::PathBuf;
use std::sync::Arc;

use futures::future::BoxFuture;
use sextant_core::a2a::{Artifact, Message, Part, Role};
use sextant_core::ids::new_id;
use sextant_core::{AgentSpec, Clock, EngineSpec, EventBody};
use sextant_journal::Journal;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;

/// What one turn works on.
#[derive(Debug, Clone)]
pub struct Turn {
    pub session_id: String,
    pub context_id: String,
    pub task_id: String,
    pub agent: Arc<AgentSpec>,
    /// The inputs delivered in this turn, oldest first (a follow-up turn may carry several).
    pub inputs: Vec<Message>,
    /// Earlier user and agent messages of the Session, oldest first, for stateless engines.
    pub history: Vec<Message>,
    /// Cancelled when Sextant shuts down; engines stop promptly and report what they have.
    pub cancel: CancellationToken,
}

impl Turn {
    /// The text of all inputs of this turn, joined by blank lines.
    pub fn input_text(&self) -> String {
        self.inputs
            .iter()
            .map(sextant_core::projection::message_text)
            .collect::<Vec<_>>()
            .join("\n\n")
    }
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Done; the optional text becomes the agent's final status message.
    Completed(Option<String>),
    /// The engine failed; the text says why (shown to the caller).
    Failed(String),
    /// The agent declined the task.
    Rejected(Option<String>),
    /// The agent needs more input; the task waits for a follow-up message.
    InputRequired(Option<String>),
    /// The agent answered with a Message (already journalled with [`TurnSink::reply`]).
    Replied,
}

/// A turn executor. One instance per Session, used by that Session's worker only.
pub trait Engine: Send {
    /// Runs one turn to its end.
    fn run_turn<'a>(&'a mut self, turn: Turn, sink: &'a TurnSink) -> BoxFuture<'a, Outcome>;

    /// Whether this engine may answer with a direct Message instead of a task (affects how a
    /// stream starts: it waits for the first output instead of sending the submitted Task).
    fn may_reply_with_message(&self) -> bool {
        false
    }

    /// Whether turns should carry the Session's earlier messages ([`Turn::history`]).
    fn wants_history(&self) -> bool {
        false
    }
}

/// Where engines put their output. Every call is journalled (and published) before it returns.
pub struct TurnSink {
    journal: Journal,
    clock: Arc<dyn Clock>,
    session_id: String,
    context_id: String,
    task_id: String,
    /// The id of the streaming text artifact, once text has been written.
    text_artifact: Mutex<Option<String>>,
}

/// A journal failure while reporting output.
pub type SinkResult = Result<(), sextant_journal::Error>;

impl TurnSink {
    pub(crate) fn new(journal: Journal, clock: Arc<dyn Clock>, turn: &Turn) -> Self {
        Self {
            journal,
            clock,
            session_id: turn.session_id.clone(),
            context_id: turn.context_id.clone(),
            task_id: turn.task_id.clone(),
            text_artifact: Mutex::new(None),
        }
    }

    async fn put(&self, body: EventBody) -> SinkResult {
        self.journal
            .append_one(&self.session_id, &self.task_id, body, self.clock.now())
            .await?;
        Ok(())
    }

    /// An agent message addressed to this task's conversation.
    pub fn agent_message(&self, parts: Vec<Part>) -> Message {
        let mut m = Message::new(Role::Agent, parts);
        m.message_id = new_id();
        m.context_id = Some(self.context_id.clone());
        m.task_id = Some(self.task_id.clone());
        m
    }

    /// Appends a text delta to the turn's `response` artifact.
    pub async fn text(&self, delta: &str) -> SinkResult {
        if delta.is_empty() {
            return Ok(());
        }
        let mut open = self.text_artifact.lock().await;
        let append = open.is_some();
        let id = open.get_or_insert_with(new_id).clone();
        self.put(EventBody::Artifact {
            artifact: artifact(id, "response", vec![Part::text(delta)]),
            append,
            last_chunk: false,
        })
        .await
    }

    /// Adds a whole artifact (or a chunk of one, with `append` / `last_chunk`).
    pub async fn artifact(&self, artifact: Artifact, append: bool, last_chunk: bool) -> SinkResult {
        self.put(EventBody::Artifact {
            artifact,
            append,
            last_chunk,
        })
        .await
    }

    /// A progress message; the task stays working.
    pub async fn status(&self, text: &str) -> SinkResult {
        let message = self.agent_message(vec![Part::text(text)]);
        self.put(EventBody::TaskState {
            state: sextant_core::a2a::TaskState::Working,
            message: Some(message),
        })
        .await
    }

    /// Answers with a Message instead of task output; end the turn with [`Outcome::Replied`].
    pub async fn reply(&self, parts: Vec<Part>) -> SinkResult {
        let mut message = self.agent_message(parts);
        // A message response belongs to no task on the wire.
        message.task_id = None;
        self.put(EventBody::Reply { message }).await
    }

    /// Closes the streaming text artifact, if one is open.
    pub(crate) async fn close_text(&self) -> SinkResult {
        let open = self.text_artifact.lock().await.take();
        match open {
            Some(id) => {
                self.put(EventBody::Artifact {
                    artifact: artifact(id, "response", vec![Part::text("")]),
                    append: true,
                    last_chunk: true,
                })
                .await
            }
            None => Ok(()),
        }
    }
}

/// Builds an artifact.
pub fn artifact(id: impl Into<String>, name: &str, parts: Vec<Part>) -> Artifact {
    Artifact {
        artifact_id: id.into(),
        name: Some(name.into()),
        description: None,
        parts,
        metadata: None,
        extensions: None,
    }
}

/// Settings engines need from the host.
#[derive(Debug, Clone)]
pub struct EngineEnv {
    /// Default working directory for local commands.
    pub work_dir: PathBuf,
}

/// Makes the engine for an Agent.
pub fn make_engine(agent: &AgentSpec, env: &EngineEnv) -> Box<dyn Engine> {
    match &agent.engine {
        EngineSpec::Echo => Box::new(echo::EchoEngine),
        EngineSpec::Conformance => Box::new(conformance::ConformanceEngine),
        EngineSpec::Exec {
            command,
            working_dir,
            env: vars,
            timeout_secs,
        } => Box::new(exec::ExecEngine {
            command: command.clone(),
            working_dir: working_dir.clone().unwrap_or_else(|| env.work_dir.clone()),
            env: vars.clone(),
            timeout: std::time::Duration::from_secs(*timeout_secs),
        }),
    }
}
