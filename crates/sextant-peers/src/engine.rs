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

use std::collections::HashSet;
use std::time::Instant;

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use serde_json::{Value, json};
use sextant_core::a2a::{Message, Part, Role, SendMessageRequest, StreamResponse, TaskState};
use sextant_core::event::state_wire;
use sextant_core::ids::new_id;
use sextant_core::parts::artifact;
use sextant_core::{Answer, Interaction};
use sextant_runtime::engine::{AskError, Engine, FOLLOW_KEY, Outcome, SinkResult, Turn, TurnSink};

use crate::call::{open, settled, valid_message};
use crate::client::Accumulated;
use crate::questions::{CANCEL, follow_up, remote_interaction, texts};
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
    /// settles (ends, or waits for input).
    async fn forward(
        &self,
        peers: &Peers,
        conn: &PeerConnection,
        message: Message,
        turn: &Turn,
        sink: &TurnSink,
        seen: &mut HashSet<String>,
    ) -> Result<Accumulated, String> {
        let followup = message.task_id.is_some();
        let req = SendMessageRequest {
            message,
            configuration: None,
            metadata: None,
            tenant: None,
        };
        let mut acc = Accumulated::default();
        let started = Instant::now();
        let mut noted = false;
        let work = async {
            let (mut stream, streamed) = open(peers.client(), &conn.endpoint, &req, conn.streaming)
                .await
                .map_err(|e| format!("{}: {e}", conn.name))?;
            loop {
                match stream.next().await {
                    None => break,
                    // The call's time limit only ends this observation: a remote task that
                    // exists is followed below.
                    Some(Err(e)) if acc.task_id.is_some() => {
                        tracing::debug!(peer = %conn.name, error = %e, "stopped reading; following the remote task");
                        break;
                    }
                    Some(Err(e)) => return Err(format!("{}: {e}", conn.name)),
                    Some(Ok(ev)) => {
                        acc.apply(&ev);
                        if !noted && let Some(id) = acc.task_id.clone() {
                            noted = true;
                            note_remote(sink, conn, &id, acc.context_id.as_deref())
                                .await
                                .map_err(|e| {
                                    format!("could not record {}'s task: {e}", conn.name)
                                })?;
                        }
                        forward_event(&ev, sink, seen)
                            .await
                            .map_err(|e| format!("could not record {}'s output: {e}", conn.name))?;
                        if settled(&acc, &ev, followup) {
                            return Ok::<(), String>(());
                        }
                    }
                }
            }
            let _ = streamed;
            // The answer ended before the remote task settled (a time limit, a closed stream,
            // a non-streaming answer with a task that is not final): follow the task.
            if acc.task_id.is_some() && acc.message.is_none() {
                follow(peers, conn, &mut acc, sink, seen).await?;
            }
            Ok(())
        };
        let result = tokio::select! {
            r = work => r,
            _ = turn.cancel.cancelled() => Err(STOPPING.to_string()),
        };
        peers
            .record(
                conn,
                started.elapsed(),
                result.as_ref().err().map(String::as_str),
            )
            .await;
        result.map(|()| acc)
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
        self.drive_from(peers, conn, turn, sink, Err(message)).await
    }

    /// [`drive`](Self::drive), starting either with a message to send or with a remote task
    /// already followed to its settled state (after a restart).
    async fn drive_from(
        &self,
        peers: &Peers,
        conn: &PeerConnection,
        turn: &Turn,
        sink: &TurnSink,
        start: Result<Accumulated, Message>,
    ) -> Outcome {
        let mut seen = HashSet::new();
        let (mut calls, mut spent) = (0u32, std::time::Duration::ZERO);
        let (mut message, mut followed) = match start {
            Ok(acc) => (Message::new(Role::User, Vec::new()), Some(acc)),
            Err(m) => (m, None),
        };
        loop {
            if let Some(acc) = followed.take() {
                match self.settle_turn(peers, conn, sink, acc).await {
                    Ok(next) => {
                        message = next;
                        continue;
                    }
                    Err(outcome) => return outcome,
                }
            }
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
            let started = Instant::now();
            let mut conn_left = conn.clone();
            let left = self.budget.time.saturating_sub(spent);
            conn_left.endpoint.timeout = conn_left.endpoint.timeout.min(left);
            let acc = self
                .forward(peers, &conn_left, message, turn, sink, &mut seen)
                .await;
            spent += started.elapsed();
            let acc = match acc {
                Ok(acc) => acc,
                // Sextant is stopping: the task stays working, and the next start follows
                // the remote task it recorded (`Engine::follow`).
                Err(why) if why == STOPPING => return Outcome::Suspended,
                Err(why) => return Outcome::Failed(why),
            };
            match self.settle_turn(peers, conn, sink, acc).await {
                Ok(next) => message = next,
                Err(outcome) => return outcome,
            }
        }
    }

    /// What a settled remote task means for the turn: its outcome (`Err`), or — when it waits
    /// for a decision — the person's answer as the next message to send (`Ok`).
    async fn settle_turn(
        &self,
        peers: &Peers,
        conn: &PeerConnection,
        sink: &TurnSink,
        acc: Accumulated,
    ) -> Result<Message, Outcome> {
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
                    remote_interaction(peer, &acc, sink.now() + self.approval_timeout);
                let answer = match sink.ask(interaction.clone(), &prompt).await {
                    Ok(a) => a,
                    Err(AskError::Suspended) => return Err(Outcome::Suspended),
                    Err(AskError::Journal(e)) => {
                        return Err(Outcome::Failed(format!(
                            "could not record the question: {e}"
                        )));
                    }
                };
                self.answer_message(peers, conn, &interaction, &answer)
                    .await
            }
            Some(other) => Err(Outcome::Failed(format!(
                "{peer} stopped answering while its task was {}",
                state_wire(&other)
            ))),
        }
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

/// Longest pause between two reads of a followed remote task.
const FOLLOW_MAX_DELAY: std::time::Duration = std::time::Duration::from_secs(60);

/// Follows a remote task until it settles (ends, or waits for a decision): subscribes once
/// when the peer streams, then reads it with GetTask, waiting 1 s, 2 s, 4 s … (at most 60 s)
/// between reads. Network errors only make it wait; the task's answer, however late,
/// completes the local task. Dropping the future (Sextant stopping) stops following; the
/// next start follows again.
async fn follow(
    peers: &Peers,
    conn: &PeerConnection,
    acc: &mut Accumulated,
    sink: &TurnSink,
    seen: &mut HashSet<String>,
) -> Result<(), String> {
    let Some(id) = acc.task_id.clone() else {
        return Ok(());
    };
    sink.status(&format!(
        "{} has not answered yet; Sextant keeps following its task {id}, and its answer will \
         complete this task.",
        conn.name
    ))
    .await
    .map_err(|e| format!("could not record output: {e}"))?;
    let stop = sink.stopping().clone();
    let work = follow_until_settled(peers, conn, acc, sink, seen, &id);
    tokio::select! {
        r = work => r,
        // Safe to stop at once: the next start follows the recorded task again.
        _ = stop.cancelled() => Err(STOPPING.to_string()),
    }
}

async fn follow_until_settled(
    peers: &Peers,
    conn: &PeerConnection,
    acc: &mut Accumulated,
    sink: &TurnSink,
    seen: &mut HashSet<String>,
    id: &str,
) -> Result<(), String> {
    let mut delay = std::time::Duration::from_secs(1);
    let mut subscribed = false;
    loop {
        if conn.streaming && !subscribed {
            subscribed = true;
            if let Ok(mut s) = peers.client().subscribe_to_task(&conn.endpoint, id).await {
                while let Some(Ok(ev)) = s.next().await {
                    acc.apply(&ev);
                    forward_event(&ev, sink, seen)
                        .await
                        .map_err(|e| format!("could not record output: {e}"))?;
                    if settled(acc, &ev, true) {
                        return Ok(());
                    }
                }
            }
        }
        match peers.client().get_task(&conn.endpoint, id, Some(0)).await {
            Ok(task) => {
                let ev = StreamResponse::Task(task);
                acc.apply(&ev);
                forward_event(&ev, sink, seen)
                    .await
                    .map_err(|e| format!("could not record output: {e}"))?;
                if acc.is_terminal() || acc.is_interrupted() {
                    return Ok(());
                }
            }
            Err(e) => {
                tracing::debug!(peer = %conn.name, error = %e, "reading a followed task failed; trying again")
            }
        }
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(FOLLOW_MAX_DELAY);
    }
}

async fn forward_event(
    ev: &StreamResponse,
    sink: &TurnSink,
    seen: &mut HashSet<String>,
) -> SinkResult {
    match ev {
        StreamResponse::Task(t) => {
            for a in t.artifacts.iter().flatten() {
                if seen.insert(a.artifact_id.clone()) {
                    sink.artifact(a.clone(), false, true).await?;
                }
            }
        }
        StreamResponse::ArtifactUpdate(u) => {
            seen.insert(u.artifact.artifact_id.clone());
            sink.artifact(
                u.artifact.clone(),
                u.append == Some(true),
                u.last_chunk == Some(true),
            )
            .await?;
        }
        StreamResponse::StatusUpdate(s) if s.status.state == TaskState::Working => {
            if let Some(m) = &s.status.message {
                let text = texts(&m.parts);
                if !text.trim().is_empty() {
                    sink.status(&text).await?;
                }
            }
        }
        StreamResponse::Message(m) => {
            sink.artifact(artifact(new_id(), "response", m.parts.clone()), false, true)
                .await?;
        }
        StreamResponse::StatusUpdate(_) => {}
    }
    Ok(())
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
                let mut acc = Accumulated {
                    task_id: Some(remote),
                    context_id: note["remoteContextId"].as_str().map(String::from),
                    ..Accumulated::default()
                };
                let mut seen = HashSet::new();
                let followed = tokio::select! {
                    r = follow(&peers, &conn, &mut acc, sink, &mut seen) => r,
                    _ = turn.cancel.cancelled() => return Outcome::Suspended,
                };
                match followed {
                    Err(why) if why == STOPPING => return Outcome::Suspended,
                    Err(why) => return Outcome::Failed(why),
                    Ok(()) => {}
                }
                self.drive_from(&peers, &conn, &turn, sink, Ok(acc)).await
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
                Ok(message) => self.drive(&peers, &conn, &turn, sink, message).await,
                Err(outcome) => outcome,
            }
        }
        .boxed()
    }
}
