//! The `a2a` engine: Sextant as a gateway to a registered peer (docs/peers.md).
//!
//! Each turn's input text is forwarded to the peer (after the same checks as `a2a_call`: the
//! peer is enabled, its card matches its pin, the network guard allows it; credential-shaped
//! text is scrubbed) as one message whose contextId is the local Session's id, so one local
//! Session is one remote conversation. The reply streams into the turn: remote artifacts are
//! forwarded as they arrive, working-status messages become progress, and the remote task's
//! end becomes the turn's.
//!
//! A remote `TASK_STATE_INPUT_REQUIRED` / `TASK_STATE_AUTH_REQUIRED` becomes a local
//! interaction ([`TurnSink::ask`]), answered by the person in the inbox — never by a model;
//! its options, and the follow-up message that takes the answer back to the **same remote
//! task**, are [`crate::questions`]'. The local `cancel` sends `CancelTask` to the remote task
//! and fails the turn. After a restart the answer still reaches the remote task
//! ([`Engine::resume`]): the remote ids are in the interaction's engine routing data.

use std::time::Instant;

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use serde_json::{Value, json};
use sextant_core::a2a::{Message, Part, Role, SendMessageRequest, TaskState};
use sextant_core::event::state_wire;
use sextant_core::ids::new_id;
use sextant_core::{Answer, Interaction};
use sextant_runtime::engine::{AskError, Engine, FOLLOW_KEY, Outcome, SinkResult, Turn, TurnSink};

use crate::call::{open, valid_message};
use crate::client::Accumulated;
use crate::follow::{Follower, follow_until_settled};
use crate::questions::{CANCEL, follow_up, remote_interaction};
use crate::{PeerConnection, Peers};

/// Forwards turns to one registered peer.
pub struct A2aEngine {
    pub peer: String,
    pub peers: Peers,
    pub approval_timeout: chrono::Duration,
    /// What one task may spend on the peer.
    pub budget: Budget,
}

/// A task's outbound budget (as Orrery's run budgets): exchanges and seconds spent in them.
/// Counted per turn of the engine (an answer after a restart starts a fresh count).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub calls: u32,
    pub time: std::time::Duration,
}

impl A2aEngine {
    /// Connects to the peer for `turn`: calls made for a task that came through relays carry
    /// its inbound hop count + 1 (1 for a task started here), so chains of Sextants count
    /// their hops and the last one refuses at its limit.
    async fn connect(
        &self,
        peers: &Peers,
        turn: &Turn,
    ) -> Result<PeerConnection, crate::PeerError> {
        let mut conn = peers.connect(&self.peer).await?;
        let inbound = sextant_core::untrusted::inbound_hop(&turn.inputs);
        conn.endpoint.hop = inbound.saturating_add(1);
        Ok(conn)
    }

    /// Sends `message` and forwards what comes back into the turn, until the remote task
    /// settles ([`Follower::take`]: it ends, or waits for a decision this side answers).
    async fn forward(
        &self,
        peers: &Peers,
        conn: &PeerConnection,
        message: Message,
        turn: &Turn,
        sink: &TurnSink,
        follower: &mut Follower,
    ) -> Result<(), Failure> {
        let req = SendMessageRequest {
            message,
            configuration: None,
            metadata: None,
            tenant: None,
        };
        let started = Instant::now();
        let mut noted = false;
        let mut out = Into(sink);
        let work = async {
            let (mut stream, _) = open(peers.client(), &conn.endpoint, &req, conn.streaming)
                .await
                .map_err(|e| Failure::Unsent(format!("{}: {e}", conn.name)))?;
            loop {
                match stream.next().await {
                    None => break,
                    // The call's time limit only ends this observation: a remote task that
                    // exists is followed below.
                    Some(Err(e)) if follower.acc.task_id.is_some() => {
                        tracing::debug!(peer = %conn.name, error = %e, "stopped reading; following the remote task");
                        break;
                    }
                    Some(Err(e)) => return Err(Failure::Unsent(format!("{}: {e}", conn.name))),
                    Some(Ok(ev)) => {
                        let settled = follower.take(&ev, &mut out).await.map_err(|e| {
                            Failure::Failed(format!("could not record {}'s output: {e}", conn.name))
                        })?;
                        if !noted && let Some(id) = follower.acc.task_id.clone() {
                            noted = true;
                            note_remote(sink, conn, &id, follower.acc.context_id.as_deref())
                                .await
                                .map_err(|e| {
                                    Failure::Failed(format!(
                                        "could not record {}'s task: {e}",
                                        conn.name
                                    ))
                                })?;
                        }
                        if settled {
                            return Ok(());
                        }
                    }
                }
            }
            // The answer ended before the remote task settled (a time limit, a closed stream,
            // a non-streaming answer with a task that is not final, a wait the peer's own
            // person answers): follow the task.
            if follower.acc.task_id.is_some() && follower.acc.message.is_none() {
                follow(peers, conn, follower, sink)
                    .await
                    .map_err(Failure::Failed)?;
            }
            Ok(())
        };
        let result = tokio::select! {
            r = work => r,
            _ = turn.cancel.cancelled() => Err(Failure::Failed(STOPPING.to_string())),
        };
        let error = match &result {
            Err(Failure::Unsent(e) | Failure::Failed(e)) => Some(e.as_str()),
            Ok(()) => None,
        };
        peers.record(conn, started.elapsed(), error).await;
        result
    }

    /// Best effort: cancels the remote task.
    async fn cancel_remote(&self, peers: &Peers, conn: &PeerConnection, task_id: Option<&str>) {
        if let Some(id) = task_id {
            let mut ep = conn.endpoint.clone();
            ep.timeout = std::time::Duration::from_secs(10);
            if let Err(e) = peers.client().cancel_task(&ep, id).await {
                tracing::debug!(peer = %conn.name, error = %e, "could not cancel the remote task");
            }
        }
    }

    /// Runs exchanges until the remote task ends: each wait becomes a question for the person.
    async fn drive(
        &self,
        peers: &Peers,
        conn: &PeerConnection,
        turn: &Turn,
        sink: &TurnSink,
        message: Message,
    ) -> Outcome {
        let follower = Follower::new(&conn.name, Accumulated::default());
        self.drive_from(
            peers,
            conn,
            turn,
            sink,
            follower,
            Next::Send(Box::new((message, None))),
        )
        .await
    }

    /// [`drive`](Self::drive), starting either with a message to send (and the question it
    /// answers, if any) or with a remote task already followed to its settled state.
    async fn drive_from(
        &self,
        peers: &Peers,
        conn: &PeerConnection,
        turn: &Turn,
        sink: &TurnSink,
        mut follower: Follower,
        mut next: Next,
    ) -> Outcome {
        let (mut calls, mut spent) = (0u32, std::time::Duration::ZERO);
        loop {
            let (message, answering) = match next {
                Next::Settle => match self.settle_turn(peers, conn, sink, &follower).await {
                    Ok(step) => step,
                    Err(outcome) => return outcome,
                },
                Next::Send(sending) => *sending,
            };
            if calls >= self.budget.calls || spent >= self.budget.time {
                return Outcome::Failed(format!(
                    "This task used its budget for {} ({calls} exchanges, {} s; the limits \
                     are {} exchanges and {} s): nothing more was sent.",
                    conn.name,
                    spent.as_secs(),
                    self.budget.calls,
                    self.budget.time.as_secs()
                ));
            }
            calls += 1;
            if let Some(i) = &answering {
                follower.answering(i.engine_ref["remoteMark"].as_str().map(String::from));
            }
            let started = Instant::now();
            let mut conn_left = conn.clone();
            let left = self.budget.time.saturating_sub(spent);
            conn_left.endpoint.timeout = conn_left.endpoint.timeout.min(left);
            let sent = self
                .forward(peers, &conn_left, message, turn, sink, &mut follower)
                .await;
            spent += started.elapsed();
            next = match sent {
                Ok(()) => Next::Settle,
                // Sextant is stopping: the task stays working, and the next start follows
                // the remote task it recorded (`Engine::follow`).
                Err(Failure::Failed(why)) if why == STOPPING => return Outcome::Suspended,
                // The peer did not take the person's answer: say why and ask again, rather
                // than end the task on an answer that never arrived.
                Err(Failure::Unsent(why)) if let Some(asked) = answering => {
                    match self.ask_again(peers, conn, sink, &asked, &why).await {
                        Ok(sending) => Next::Send(Box::new(sending)),
                        Err(outcome) => return outcome,
                    }
                }
                Err(Failure::Unsent(why) | Failure::Failed(why)) => return Outcome::Failed(why),
            };
        }
    }

    /// What a settled remote task means for the turn: its outcome (`Err`), or — when it waits
    /// for a decision — the person's answer as the next message to send, with the question
    /// it answers (`Ok`).
    async fn settle_turn(
        &self,
        peers: &Peers,
        conn: &PeerConnection,
        sink: &TurnSink,
        follower: &Follower,
    ) -> Result<(Message, Option<Interaction>), Outcome> {
        let acc = &follower.acc;
        let status = acc.status_text();
        let status = status.trim();
        let said = |default: String| {
            if status.is_empty() {
                default
            } else {
                format!("{default}: {status}")
            }
        };
        let peer = &conn.name;
        match acc.state.clone() {
            None if acc.message.is_some() => Err(Outcome::Completed(None)),
            None => Err(Outcome::Failed(format!("{peer} sent no answer"))),
            Some(TaskState::Completed) => Err(Outcome::Completed(
                (!status.is_empty()).then(|| status.to_string()),
            )),
            Some(TaskState::Failed) => Err(Outcome::Failed(said(format!("{peer}'s task failed")))),
            Some(TaskState::Rejected) => Err(Outcome::Rejected(Some(said(format!(
                "{peer} rejected the task"
            ))))),
            Some(TaskState::Canceled) => {
                Err(Outcome::Failed(said(format!("{peer} canceled the task"))))
            }
            Some(TaskState::InputRequired | TaskState::AuthRequired) => {
                let (interaction, prompt) =
                    remote_interaction(peer, acc, sink.now() + self.approval_timeout);
                let answer = self.ask(sink, &interaction, &prompt).await?;
                let m = self
                    .answer_message(peers, conn, &interaction, &answer)
                    .await?;
                Ok((m, Some(interaction)))
            }
            Some(other) => Err(Outcome::Failed(format!(
                "{peer} stopped answering while its task was {}",
                state_wire(&other)
            ))),
        }
    }

    /// Puts `interaction` to the person and waits for the answer.
    async fn ask(
        &self,
        sink: &TurnSink,
        interaction: &Interaction,
        prompt: &str,
    ) -> Result<Answer, Outcome> {
        match sink.ask(interaction.clone(), prompt).await {
            Ok(a) => Ok(a),
            Err(AskError::Suspended) => Err(Outcome::Suspended),
            Err(AskError::Journal(e)) => Err(Outcome::Failed(format!(
                "could not record the question: {e}"
            ))),
        }
    }

    /// The question `asked` again, after the peer did not take its answer (`why`): the same
    /// options, a fresh card, the reason first in its text.
    async fn ask_again(
        &self,
        peers: &Peers,
        conn: &PeerConnection,
        sink: &TurnSink,
        asked: &Interaction,
        why: &str,
    ) -> Result<(Message, Option<Interaction>), Outcome> {
        let mut again = asked.clone();
        again.interaction_id = new_id();
        again.task_id = String::new();
        again.expires_at = Some(sink.now() + self.approval_timeout);
        let question = asked.description.as_deref().unwrap_or_default();
        let prompt = format!(
            "{} did not take the answer ({why}). Its question again: {question}",
            conn.name
        );
        let answer = self.ask(sink, &again, &prompt).await?;
        let m = self.answer_message(peers, conn, &again, &answer).await?;
        Ok((m, Some(again)))
    }

    /// The follow-up for an answer, or the outcome when the answer ends the turn (cancel).
    async fn answer_message(
        &self,
        peers: &Peers,
        conn: &PeerConnection,
        interaction: &Interaction,
        answer: &Answer,
    ) -> Result<Message, Outcome> {
        let local_cancel = interaction.engine_ref["localCancel"]
            .as_bool()
            .unwrap_or(true);
        if answer.option == CANCEL && local_cancel {
            self.cancel_remote(peers, conn, interaction.engine_ref["remoteTaskId"].as_str())
                .await;
            let why = if answer.expired {
                "the question expired without an answer".to_string()
            } else {
                format!("canceled by {}", answer.answered_by)
            };
            return Err(Outcome::Failed(format!(
                "Not continued: {why}; {}'s task was canceled.",
                conn.name
            )));
        }
        Ok(follow_up(interaction, answer))
    }
}

/// What [`A2aEngine::drive_from`] does next.
enum Next {
    /// Send this message; it answers this question, if any.
    Send(Box<(Message, Option<Interaction>)>),
    /// Act on the settled remote task.
    Settle,
}

/// Why an exchange did not settle.
enum Failure {
    /// The message did not reach the peer, or the peer refused it.
    Unsent(String),
    /// It was sent, and then reading or recording failed.
    Failed(String),
}

/// A turn's sink as where a followed task's output goes.
struct Into<'a>(&'a TurnSink);

impl crate::follow::Output for Into<'_> {
    async fn artifact(
        &mut self,
        artifact: sextant_core::a2a::Artifact,
        append: bool,
        last_chunk: bool,
    ) -> Result<(), String> {
        self.0
            .artifact(artifact, append, last_chunk)
            .await
            .map_err(|e| e.to_string())
    }

    async fn progress(&mut self, text: String) -> Result<(), String> {
        self.0.status(&text).await.map_err(|e| e.to_string())
    }
}

/// Forwards one remote event into the turn.
/// What `forward` returns when Sextant stops while a remote task is followed.
const STOPPING: &str = "Sextant is shutting down";

/// Journals which remote task this turn follows (a progress message with the remote ids in
/// its metadata), so a restart can go on following it.
async fn note_remote(
    sink: &TurnSink,
    conn: &PeerConnection,
    remote_task: &str,
    remote_context: Option<&str>,
) -> SinkResult {
    let mut m = sink.agent_message(vec![Part::text(format!(
        "{} is working on it (its task {remote_task}).",
        conn.name
    ))]);
    m.metadata = Some(
        [(
            FOLLOW_KEY.to_string(),
            json!({ "peer": conn.name, "remoteTaskId": remote_task, "remoteContextId": remote_context }),
        )]
        .into_iter()
        .collect(),
    );
    sink.status_message(m).await
}

/// Follows a remote task until it settles ([`crate::follow`]). Dropping the future (Sextant
/// stopping) stops following; the next start follows again.
async fn follow(
    peers: &Peers,
    conn: &PeerConnection,
    follower: &mut Follower,
    sink: &TurnSink,
) -> Result<(), String> {
    let Some(id) = follower.acc.task_id.clone() else {
        return Ok(());
    };
    // A wait the peer's person answers has said so already ([`Follower::take`]).
    if follower.waits_elsewhere().is_none() {
        sink.status(&format!(
            "{} has not answered yet; Sextant keeps following its task {id}, and its answer \
             will complete this task.",
            conn.name
        ))
        .await
        .map_err(|e| format!("could not record output: {e}"))?;
    }
    let stop = sink.stopping().clone();
    let mut out = Into(sink);
    let work = follow_until_settled(peers, conn, follower, &mut out);
    tokio::select! {
        r = work => r,
        // Safe to stop at once: the next start follows the recorded task again.
        _ = stop.cancelled() => Err(STOPPING.to_string()),
    }
}

impl Engine for A2aEngine {
    fn uses_interactions(&self) -> bool {
        true
    }

    fn run_turn<'a>(&'a mut self, turn: Turn, sink: &'a TurnSink) -> BoxFuture<'a, Outcome> {
        async move {
            let peers = self.peers.clone();
            let text = turn.input_text();
            if let Err(e) = valid_message(&text) {
                return Outcome::Rejected(Some(format!("Nothing forwarded: {e}.")));
            }
            let conn = match self.connect(&peers, &turn).await {
                Ok(c) => c,
                Err(e) => return Outcome::Failed(e.to_string()),
            };
            let text = sextant_core::redact::scrub_outbound(&text, false).into_owned();
            let mut message = Message::new(Role::User, vec![Part::text(text)]);
            message.message_id = new_id();
            // One local Session is one remote conversation.
            message.context_id = Some(turn.session_id.clone());
            self.drive(&peers, &conn, &turn, sink, message).await
        }
        .boxed()
    }

    fn cannot_resume(&self) -> Option<String> {
        None
    }

    fn follow<'a>(
        &'a mut self,
        turn: Turn,
        note: Value,
        sink: &'a TurnSink,
    ) -> Option<BoxFuture<'a, Outcome>> {
        let remote = note["remoteTaskId"].as_str()?.to_string();
        Some(
            async move {
                let peers = self.peers.clone();
                let conn = match self.connect(&peers, &turn).await {
                    Ok(c) => c,
                    Err(e) => return Outcome::Failed(e.to_string()),
                };
                let acc = Accumulated {
                    task_id: Some(remote),
                    context_id: note["remoteContextId"].as_str().map(String::from),
                    ..Accumulated::default()
                };
                let mut follower = Follower::new(&conn.name, acc);
                let followed = tokio::select! {
                    r = follow(&peers, &conn, &mut follower, sink) => r,
                    _ = turn.cancel.cancelled() => return Outcome::Suspended,
                };
                match followed {
                    Err(why) if why == STOPPING => return Outcome::Suspended,
                    Err(why) => return Outcome::Failed(why),
                    Ok(()) => {}
                }
                self.drive_from(&peers, &conn, &turn, sink, follower, Next::Settle)
                    .await
            }
            .boxed(),
        )
    }

    fn resume<'a>(
        &'a mut self,
        turn: Turn,
        interaction: Interaction,
        answer: Answer,
        sink: &'a TurnSink,
    ) -> BoxFuture<'a, Outcome> {
        async move {
            let peers = self.peers.clone();
            let conn = match self.connect(&peers, &turn).await {
                Ok(c) => c,
                Err(e) => return Outcome::Failed(e.to_string()),
            };
            match self
                .answer_message(&peers, &conn, &interaction, &answer)
                .await
            {
                Ok(message) => {
                    let er = &interaction.engine_ref;
                    let acc = Accumulated {
                        task_id: er["remoteTaskId"].as_str().map(String::from),
                        context_id: er["remoteContextId"].as_str().map(String::from),
                        ..Accumulated::default()
                    };
                    let follower = Follower::new(&conn.name, acc);
                    let next = Next::Send(Box::new((message, Some(interaction))));
                    self.drive_from(&peers, &conn, &turn, sink, follower, next)
                        .await
                }
                Err(outcome) => outcome,
            }
        }
        .boxed()
    }
}
