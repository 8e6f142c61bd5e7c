//! Engines: what executes a turn.
//!
//! A Session's worker owns one [`Engine`] instance (made by [`make::make_engine`] from the
//! Agent's [`EngineSpec`](sextant_core::EngineSpec)) and calls [`Engine::run_turn`] with the
//! inputs queued for a task. The engine reports output through the [`TurnSink`], which journals each event before returning (so a
//! crash never loses reported output), and ends the turn with an [`Outcome`].
//!
//! [`make`] picks an Agent's engine. The engines are here, but for `a2a` (a gateway to a
//! registered peer): that one is `sextant-peers`', got from the runtime's
//! [`Outbound`](crate::Outbound) side.

mod child;
pub mod codex;
pub mod conformance;
pub mod echo;
pub mod exec;
mod files;
pub mod make;
mod output;
pub mod shell;

use std::sync::Arc;

use futures::future::BoxFuture;
use sextant_core::a2a::{Artifact, Message, Part, Role, TaskState};
use sextant_core::ids::new_id;
use sextant_core::parts::artifact;
use sextant_core::{AgentSpec, Answer, Clock, EventBody, Interaction};
use sextant_journal::Journal;
use tokio::sync::Mutex;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

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
    /// What `acceptForSession` answers granted earlier in this Session (grant keys), for
    /// engines that raise interactions. Derived from the journal, so it survives restarts.
    pub grants: Vec<String>,
    /// The schedule this turn's task is a Run of, when the Run runs the schedule's current
    /// prompt and Agent (engines that raise interactions offer `acceptForSchedule` then).
    pub schedule: Option<ScheduledRun>,
    /// Cancelled when Sextant shuts down; engines stop promptly and report what they have.
    pub cancel: CancellationToken,
    /// Cancelled when the task is canceled (its `canceled` state is already in the journal,
    /// so nothing the turn reports from then on is recorded). How a turn reacts depends on
    /// the engine ([`Engine::stop_how`]).
    pub stop: CancellationToken,
    /// Who sent this task's input, when it is a remote caller (`peer alice`): engines put it
    /// on their cards beside the action, so the person sees whose text it is.
    pub from: Option<String>,
}

/// The schedule a turn's task is a Run of ([`Turn::schedule`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ScheduledRun {
    pub schedule_id: String,
    pub schedule_name: String,
    /// What `acceptForSchedule` answers granted for every Run of this schedule (grant keys),
    /// only those still bound to the schedule's prompt and Agent. Kept in the journal's
    /// `schedule_grants`, so they survive restarts.
    pub grants: Vec<String>,
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
    /// The turn stopped while a decision was pending (Sextant is shutting down); the task
    /// keeps waiting and the answer resumes it through [`Engine::resume`].
    Suspended,
}

impl Outcome {
    /// A short name of the outcome, for the turn's trace span (never its text).
    pub fn name(&self) -> &'static str {
        match self {
            Outcome::Completed(_) => "completed",
            Outcome::Failed(_) => "failed",
            Outcome::Rejected(_) => "rejected",
            Outcome::InputRequired(_) => "input-required",
            Outcome::Replied => "replied",
            Outcome::Suspended => "suspended",
        }
    }
}

/// How a running turn is stopped when its task is canceled ([`Turn::stop`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopHow {
    /// The turn's future is dropped at once: the engine leaves nothing half-done outside the
    /// journal (an `a2a` turn's remote task is canceled by the canceller itself).
    Drop,
    /// The turn's process groups get `SIGTERM`, then `SIGKILL` after the runtime's grace
    /// period; the turn ends when its processes exit, as they make it end.
    Processes,
    /// The engine watches [`Turn::stop`] itself (Codex interrupts the app-server's turn).
    Engine,
}

/// A turn executor. One instance per Session, used by that Session's worker only.
pub trait Engine: Send {
    /// Runs one turn to its end.
    fn run_turn<'a>(&'a mut self, turn: Turn, sink: &'a TurnSink) -> BoxFuture<'a, Outcome>;

    /// How a turn of this engine is stopped when its task is canceled.
    fn stop_how(&self) -> StopHow {
        StopHow::Drop
    }

    /// Whether this engine may answer `input` with a direct Message instead of a task (a
    /// stream then waits for the first output instead of sending the submitted Task first).
    fn may_reply_with_message(&self, input: &Message) -> bool {
        let _ = input;
        false
    }

    /// Whether turns should carry the Session's earlier messages ([`Turn::history`]).
    fn wants_history(&self) -> bool {
        false
    }

    /// Whether this engine keeps state between turns worth an idle worker (a running
    /// app-server process, say). Stateless engines let their worker stop as soon as the
    /// Session's queue is empty, so one-shot conversations leave nothing behind.
    fn keeps_state(&self) -> bool {
        false
    }

    /// Whether a turn may act outside the journal (run commands, call other agents, write
    /// files). A turn of such an engine starts only once its `turn_started` is durable, so a
    /// crash never runs those actions twice; a turn of an engine without side effects starts
    /// at once, its start and output sharing commits.
    fn has_side_effects(&self) -> bool {
        true
    }

    /// Whether this engine raises interactions (turns then carry [`Turn::grants`]).
    fn uses_interactions(&self) -> bool {
        false
    }

    /// Why an answer cannot continue a turn once the engine that asked for the decision is
    /// gone (Sextant restarted while the task waited), or `None` for an engine whose
    /// [`resume`](Self::resume) continues such a turn. At the next start a task waiting on such
    /// an engine's decision is failed with this reason and its card is closed, so no one is
    /// left answering a question whose answer cannot land.
    fn cannot_resume(&self) -> Option<String> {
        Some(
            "The engine that asked for this decision is gone (Sextant restarted), so no answer \
             can reach it. Send the message again."
                .into(),
        )
    }

    /// Goes on with a turn a restart interrupted while it followed remote work: `note` is the
    /// metadata the engine journalled under [`FOLLOW_KEY`] on a progress message. `None`:
    /// this engine cannot (the turn is then failed as interrupted).
    fn follow<'a>(
        &'a mut self,
        turn: Turn,
        note: serde_json::Value,
        sink: &'a TurnSink,
    ) -> Option<BoxFuture<'a, Outcome>> {
        let _ = (turn, note, sink);
        None
    }

    /// Continues a turn whose interaction was answered after the engine that asked was gone
    /// (Sextant restarted while the task waited). `turn.inputs` holds all of the task's inputs.
    /// Engines that cannot ([`cannot_resume`](Self::cannot_resume)) fail the task with the
    /// reason; this only happens when the answer raced the close at start.
    fn resume<'a>(
        &'a mut self,
        turn: Turn,
        interaction: sextant_core::Interaction,
        answer: sextant_core::Answer,
        sink: &'a TurnSink,
    ) -> BoxFuture<'a, Outcome> {
        let _ = (turn, interaction, answer, sink);
        let why = self.cannot_resume().unwrap_or_else(|| {
            "this engine did not say how to continue after a restart; send the message again".into()
        });
        Box::pin(async move { Outcome::Failed(why) })
    }
}

/// Where engines put their output. Every call is journalled (and published) before it returns.
pub struct TurnSink {
    journal: Journal,
    clock: Arc<dyn Clock>,
    waiters: Arc<crate::pending::Waiters>,
    /// Ends a wait for a person (shutdown started).
    cancel: CancellationToken,
    session_id: String,
    context_id: String,
    task_id: String,
    /// The id of the streaming text artifact, once text has been written.
    text_artifact: Mutex<Option<String>>,
    /// Output not yet sent to the journal (see [`TurnSink::put`]), oldest first.
    unsent: std::sync::Mutex<Vec<sextant_journal::NewEvent>>,
    /// Output sent to the journal and not yet confirmed, oldest first.
    in_flight: std::sync::Mutex<std::collections::VecDeque<sextant_journal::Submitted>>,
    /// Trips when an output of this turn fails to be recorded.
    guard: sextant_journal::TurnGuard,
    /// The runtime's list of running process groups (see [`crate::process::Running`]).
    running: crate::process::Running,
    /// The turn's stop token: fires when its task is canceled ([`TurnSink::spawn`] starts
    /// nothing after that).
    stop: CancellationToken,
}

/// Outputs of one turn that may be on their way to the journal at once; beyond this an output
/// waits for the oldest to commit (an engine cannot outrun the journal without bound).
const MAX_IN_FLIGHT: usize = 32;

/// Output events a turn holds back at most before it sends them (see [`TurnSink::put`]).
const MAX_UNSENT: usize = 32;

/// A journal failure while reporting output.
pub type SinkResult = Result<(), sextant_journal::Error>;

/// A turn's future that sends its held-back output ([`TurnSink::put`]) whenever it waits for
/// something: then nothing more comes from it until what it waits for happens, so the output
/// so far goes to the journal (and to the turn's watchers) now, not later.
pub(crate) struct SendWhenWaiting<'a, F> {
    turn: std::pin::Pin<&'a mut F>,
    sink: &'a TurnSink,
}

impl<'a, F> SendWhenWaiting<'a, F> {
    pub(crate) fn new(turn: std::pin::Pin<&'a mut F>, sink: &'a TurnSink) -> Self {
        Self { turn, sink }
    }
}

impl<F: std::future::Future> std::future::Future for SendWhenWaiting<'_, F> {
    type Output = F::Output;

    fn poll(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<F::Output> {
        let polled = self.turn.as_mut().poll(cx);
        if polled.is_pending() {
            // Past the in-flight bound the oldest job is let go unwaited (a poll cannot wait);
            // if it fails, the turn's guard still refuses the rest and `finish` says so.
            drop(self.sink.send_unsent());
        }
        polled
    }
}

impl TurnSink {
    /// `stopping` fires when Sextant starts shutting down: a turn waiting for a person stops
    /// waiting at once (the decision stays pending across the restart) instead of holding up
    /// the shutdown.
    pub(crate) fn new(
        journal: Journal,
        clock: Arc<dyn Clock>,
        waiters: Arc<crate::pending::Waiters>,
        turn: &Turn,
        stopping: CancellationToken,
        running: crate::process::Running,
    ) -> Self {
        Self {
            journal,
            clock,
            waiters,
            cancel: stopping,
            session_id: turn.session_id.clone(),
            context_id: turn.context_id.clone(),
            task_id: turn.task_id.clone(),
            text_artifact: Mutex::new(None),
            unsent: Default::default(),
            in_flight: Default::default(),
            guard: Default::default(),
            running,
            stop: turn.stop.clone(),
        }
    }

    /// Records one output event. It is held back until the turn next waits for something
    /// ([`SendWhenWaiting`]), the turn ends, or [`MAX_UNSENT`] wait, and then sent to the
    /// journal in one job with the others, without waiting for its commit: a short turn's
    /// start, outputs and final state reach the writer as one job (each job is a thread
    /// wake-up) and share a commit. The writer keeps their order, publishes each only once
    /// committed, and refuses the rest of the turn's outputs (and its final state, see
    /// [`TurnSink::finish`]) once one fails.
    async fn put(&self, body: EventBody) -> SinkResult {
        self.put_all(vec![body]).await
    }

    /// [`TurnSink::put`] for several events, appended together.
    pub(crate) async fn put_all(&self, bodies: Vec<EventBody>) -> SinkResult {
        let at = self.clock.now();
        let full = {
            let mut unsent = self.unsent.lock().unwrap_or_else(|e| e.into_inner());
            unsent.extend(bodies.into_iter().map(|body| sextant_journal::NewEvent {
                task_id: Some(self.task_id.clone()),
                body,
                at,
            }));
            unsent.len() >= MAX_UNSENT
        };
        if full && let Some(oldest) = self.send_unsent() {
            oldest.wait().await?;
        }
        Ok(())
    }

    /// Sends the held-back output to the journal as one job, without waiting. Returns the
    /// oldest job still on its way when more than [`MAX_IN_FLIGHT`] are: the caller waits for
    /// it, if it can.
    pub(crate) fn send_unsent(&self) -> Option<sextant_journal::Submitted> {
        let events = std::mem::take(&mut *self.unsent.lock().unwrap_or_else(|e| e.into_inner()));
        if events.is_empty() {
            return None;
        }
        let sent = self
            .journal
            .submit_append(&self.session_id, events, Some(self.guard.clone()));
        let mut q = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
        q.push_back(sent);
        if q.len() > MAX_IN_FLIGHT {
            q.pop_front()
        } else {
            None
        }
    }

    /// Sends the held-back output and waits for every output still on its way; the first
    /// failure, if any.
    pub(crate) async fn flush(&self) -> SinkResult {
        let oldest = self.send_unsent();
        let pending: Vec<_> = oldest
            .into_iter()
            .chain(
                self.in_flight
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .drain(..),
            )
            .collect();
        let mut first = Ok(());
        for s in pending {
            if let Err(e) = s.wait().await
                && first.is_ok()
            {
                first = Err(e);
            }
        }
        first
    }

    /// Journals the turn's final state behind its outputs (with those still held back, in one
    /// job, so a short turn commits once) and waits for all of them. If an output was not
    /// recorded the final state is refused, and the task fails instead, saying so.
    pub(crate) async fn finish(&self, state: TaskState, message: Option<Message>) -> SinkResult {
        let closing = self.close_text().await;
        let last = self
            .put(EventBody::TaskState { state, message })
            .await
            .and(closing);
        match last.and(self.flush().await) {
            Ok(()) => Ok(()),
            Err(e) if self.guard.tripped() => {
                let why = format!("Sextant could not record this turn's output: {e}");
                self.journal
                    .append_one(
                        &self.session_id,
                        &self.task_id,
                        EventBody::TaskState {
                            state: TaskState::Failed,
                            message: Some(self.agent_message(vec![Part::text(why)])),
                        },
                        self.clock.now(),
                    )
                    .await
                    .map(drop)
            }
            Err(e) => Err(e),
        }
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

    /// A progress message built by the engine (with metadata, say); the task stays working.
    pub async fn status_message(&self, message: Message) -> SinkResult {
        self.put(EventBody::TaskState {
            state: sextant_core::a2a::TaskState::Working,
            message: Some(message),
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

    /// Starts a command for this turn in its own process group, which dies with Sextant and
    /// is journalled until the guard finishes (see [`crate::process`]). Engines spawn every
    /// local process through this.
    ///
    /// **A canceled task starts nothing.** The process is refused when the turn's stop token
    /// has fired; and once it is listed among the running groups (where a cancel's stop finds
    /// it) and recorded, the token and the journal are read again: a cancel committed before
    /// that point — also one that found no running turn to tell, as when an answer's resume
    /// starts a turn just after the cancel — ends the group here. A program that must not run
    /// at all in that window is started gated ([`crate::engine::child`]'s gated commands
    /// wait on their stdin) and let go only after this returns.
    pub async fn spawn(
        &self,
        cmd: tokio::process::Command,
    ) -> std::io::Result<(tokio::process::Child, crate::process::GroupGuard)> {
        let canceled = || {
            std::io::Error::other(
                "the task was canceled before its command started; nothing was run",
            )
        };
        if self.stop.is_cancelled() {
            return Err(canceled());
        }
        let owner = crate::process::Owner {
            journal: &self.journal,
            session_id: &self.session_id,
            task_id: &self.task_id,
            now: self.clock.now(),
            running: Some(&self.running),
        };
        let (child, group) = crate::process::spawn(cmd, owner).await?;
        let ended = self.stop.is_cancelled()
            || match self.journal.task(&self.task_id).await {
                Ok(t) => t.is_none_or(|t| t.state.is_terminal()),
                // Unknown: it must not run unfenced.
                Err(e) => {
                    tracing::warn!(error = %e, task_id = %self.task_id, "could not read the task before starting its command");
                    true
                }
            };
        if ended {
            group.finish().await;
            drop(child);
            return Err(canceled());
        }
        Ok((child, group))
    }

    /// Fires when Sextant starts shutting down (before running turns are interrupted): work
    /// that is safe to resume at the next start (following a remote task) stops here.
    pub fn stopping(&self) -> &CancellationToken {
        &self.cancel
    }

    /// The current time (engines stamp expiries with it).
    pub fn now(&self) -> chrono::DateTime<chrono::Utc> {
        self.clock.now()
    }

    /// Stops for a decision: journals the interaction and the waiting state (auth-required for
    /// a tool approval, input-required otherwise) with `text` (followed by the task id, the
    /// interaction id, the declared options and the digest, for text-only clients:
    /// [`crate::pending::pending_text`]) and a data part describing the interaction, then
    /// waits for the person's answer (or the expiry's default).
    ///
    /// `Err(Suspended)` means Sextant is shutting down: return [`Outcome::Suspended`]; the task
    /// keeps waiting and the answer will come through [`Engine::resume`].
    pub async fn ask(&self, interaction: Interaction, text: &str) -> Result<Answer, AskError> {
        match self
            .ask_until(interaction, text, std::future::pending::<String>())
            .await?
        {
            Asked::Answered(answer) | Asked::Withdrawn(answer) => Ok(answer),
        }
    }

    /// [`ask`](Self::ask), for engines whose question can be withdrawn while it waits (Codex
    /// resolves an approval request itself, its process dies, its turn ends). If `withdrawn`
    /// finishes first, with the reason, the interaction is journalled as answered by
    /// [`WITHDRAWN_BY`] with its default option (the same events as a person's answer, so the
    /// card leaves the pending list and the task is working again), and the result is
    /// [`Asked::Withdrawn`]. If a person's answer or the expiry got recorded first, that answer
    /// wins and is returned as [`Asked::Answered`].
    ///
    /// The wait runs in an `interaction_wait` trace span, from the question's journalling to
    /// the answer (ids, the waiting state, the chosen option id and how the wait ended; never
    /// the question or an answer's text).
    pub async fn ask_until<W>(
        &self,
        mut interaction: Interaction,
        text: &str,
        withdrawn: W,
    ) -> Result<Asked, AskError>
    where
        W: std::future::Future<Output = String>,
    {
        interaction.task_id = self.task_id.clone();
        if interaction.interaction_id.is_empty() {
            interaction.interaction_id = new_id();
        }
        let span = tracing::info_span!(
            target: sextant_a2a::trace::TARGET,
            "interaction_wait",
            sextant.task_id = %self.task_id,
            sextant.interaction_id = %interaction.interaction_id,
            sextant.task_state = sextant_core::event::state_name(&interaction.waiting_state()),
            sextant.answer_option = tracing::field::Empty,
            sextant.outcome = tracing::field::Empty,
        );
        let asked = self
            .wait_for_answer(interaction, text, withdrawn)
            .instrument(span.clone())
            .await;
        let outcome = match &asked {
            Ok(Asked::Answered(a)) => {
                span.record("sextant.answer_option", a.option.as_str());
                "answered"
            }
            Ok(Asked::Withdrawn(_)) => "withdrawn",
            Err(AskError::Suspended) => "suspended",
            Err(AskError::Journal(_)) => "error",
        };
        span.record("sextant.outcome", outcome);
        asked
    }

    async fn wait_for_answer<W>(
        &self,
        interaction: Interaction,
        text: &str,
        withdrawn: W,
    ) -> Result<Asked, AskError>
    where
        W: std::future::Future<Output = String>,
    {
        let id = interaction.interaction_id.clone();
        let default_option = interaction.default_option.clone();
        let mut rx = self.waiters.wait_for(&id);
        let data = crate::pending::public_data(&interaction);
        let text = crate::pending::pending_text(&interaction, text);
        let message = self.agent_message(vec![
            Part::text(text),
            Part::data(data).with_media_type("application/json"),
        ]);
        let state = interaction.waiting_state();
        let now = self.clock.now();
        // The turn's output so far goes first (the journal keeps the order jobs are sent in).
        drop(self.send_unsent());
        let appended = self
            .journal
            .append(
                &self.session_id,
                vec![
                    sextant_journal::NewEvent {
                        task_id: Some(self.task_id.clone()),
                        body: EventBody::InteractionRaised { interaction },
                        at: now,
                    },
                    sextant_journal::NewEvent {
                        task_id: Some(self.task_id.clone()),
                        body: EventBody::TaskState {
                            state,
                            message: Some(message),
                        },
                        at: now,
                    },
                ],
            )
            .await;
        if let Err(e) = appended {
            self.waiters.forget(&id);
            return Err(AskError::Journal(e));
        }
        self.waiters.expiry_changed();
        let why = tokio::select! {
            answer = &mut rx => return answer.map(Asked::Answered).map_err(|_| AskError::Suspended),
            _ = self.cancel.cancelled() => {
                self.waiters.forget(&id);
                return Err(AskError::Suspended);
            }
            why = withdrawn => why,
        };
        self.withdraw(&id, default_option, why, rx).await
    }

    /// Closes a pending interaction on the engine's behalf (see [`ask_until`](Self::ask_until)):
    /// the same two events [`crate::Runtime::answer`] journals, so the journal's one-answer rule
    /// decides a race with the person.
    async fn withdraw(
        &self,
        id: &str,
        default_option: String,
        why: String,
        rx: tokio::sync::oneshot::Receiver<Answer>,
    ) -> Result<Asked, AskError> {
        let answer = withdrawal(id, default_option, why);
        let now = self.clock.now();
        drop(self.send_unsent());
        let appended = self
            .journal
            .append(
                &self.session_id,
                vec![
                    sextant_journal::NewEvent {
                        task_id: Some(self.task_id.clone()),
                        body: EventBody::InteractionAnswered {
                            answer: answer.clone(),
                        },
                        at: now,
                    },
                    sextant_journal::NewEvent {
                        task_id: Some(self.task_id.clone()),
                        body: EventBody::TaskState {
                            state: sextant_core::a2a::TaskState::Working,
                            message: None,
                        },
                        at: now,
                    },
                ],
            )
            .await;
        match appended {
            Ok(_) => {
                self.waiters.forget(id);
                Ok(Asked::Withdrawn(answer))
            }
            // Answered meanwhile (by the person or the expiry): that answer is on its way.
            Err(sextant_journal::Error::Conflict(_)) => tokio::select! {
                answer = rx => answer.map(Asked::Answered).map_err(|_| AskError::Suspended),
                _ = self.cancel.cancelled() => {
                    self.waiters.forget(id);
                    Err(AskError::Suspended)
                }
            },
            Err(e) => {
                self.waiters.forget(id);
                Err(AskError::Journal(e))
            }
        }
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

/// Who an interaction withdrawn by its engine is recorded as answered by.
pub const WITHDRAWN_BY: &str = "engine";

/// The answer that closes an interaction on its engine's behalf: its default option, answered
/// by [`WITHDRAWN_BY`], with the reason.
pub(crate) fn withdrawal(id: &str, default_option: String, why: String) -> Answer {
    Answer {
        interaction_id: id.to_string(),
        option: default_option,
        reason: Some(why),
        values: serde_json::Map::new(),
        message_id: format!("withdrawn-{id}"),
        answered_by: WITHDRAWN_BY.into(),
        expired: false,
        digest: None,
    }
}

/// How [`TurnSink::ask_until`] ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Asked {
    /// The person answered, or the expiry applied the default: act on it.
    Answered(Answer),
    /// The engine withdrew the question before an answer was recorded; the interaction is
    /// closed with its default option, answered by [`WITHDRAWN_BY`]. Nothing to act on.
    Withdrawn(Answer),
}

/// Why [`TurnSink::ask`] returned without an answer.
#[derive(Debug, thiserror::Error)]
pub enum AskError {
    /// Sextant is shutting down; the task keeps waiting for its answer.
    #[error("suspended until Sextant restarts")]
    Suspended,
    #[error(transparent)]
    Journal(#[from] sextant_journal::Error),
}

/// The key of the status-message metadata that records the remote task a turn follows (see
/// [`Engine::follow`]; the `a2a` engine writes it, the worker reads it after a restart).
pub const FOLLOW_KEY: &str = "a2aFollow";
