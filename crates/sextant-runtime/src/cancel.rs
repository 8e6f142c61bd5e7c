//! Canceling a task: the decision is one journal append, then the work is stopped.
//!
//! A worker runs one task per turn ([`crate::worker`] builds each turn from a single task's
//! inputs), so stopping a turn never stops another task's work and no fencing is needed.
//!
//! [`Runtime::cancel`] first journals the task's `canceled` state, with who canceled and why
//! (and, for a pending decision, the card closed in the same append): from that commit on the
//! journal refuses everything the turn still reports, so output produced before the cancel is
//! kept and nothing after it is recorded. A crash right after the commit leaves a canceled task
//! (recovery leaves ended tasks alone, and ends leftover process groups). Then the running turn
//! is told through its [`crate::Turn::stop`] token; how it stops is the engine's
//! ([`crate::engine::StopHow`]): process groups get `SIGTERM` and, after the grace period,
//! `SIGKILL`; Codex gets `turn/interrupt`; other turns are dropped. An `a2a` turn's remote task
//! is canceled before the append, so the remote's answer is recorded with the cancel.

use serde_json::{Value, json};
use sextant_core::a2a::TaskState;
use sextant_core::projection::TaskFold;
use sextant_core::{Answer, EngineSpec, EventBody, Interaction};
use sextant_journal::{NewEvent, TaskRow};

use crate::{Runtime, worker};

/// What [`Runtime::cancel`] did.
#[derive(Debug, Clone, PartialEq)]
pub enum CancelOutcome {
    /// There is no such task.
    NotFound,
    /// The task is now canceled (this row is its state after the cancel).
    Canceled(TaskRow),
    /// The task had been canceled before; canceling again changes nothing.
    AlreadyCanceled(TaskRow),
    /// The task had already ended otherwise, in this state; it cannot be canceled.
    AlreadyEnded(TaskState),
}

/// Why and by whom a task is canceled.
#[derive(Debug, Clone, Default)]
pub struct CancelRequest {
    /// Who cancels, as answers name people (`Principal::display()`, or `schedule …`).
    pub by: String,
    /// Their reason, if they gave one.
    pub reason: Option<String>,
}

/// How many times a cancel is tried when the task moved between its read and its append (an
/// interaction raised or answered meanwhile).
const ATTEMPTS: usize = 5;

impl Runtime {
    /// Cancels a task: queued, running or waiting for a decision (see the module docs).
    /// Idempotent: a canceled task answers [`CancelOutcome::AlreadyCanceled`].
    pub async fn cancel(
        &self,
        task_id: &str,
        request: &CancelRequest,
    ) -> Result<CancelOutcome, sextant_journal::Error> {
        let journal = &self.inner.journal;
        let mut remote: Option<Value> = None;
        for _ in 0..ATTEMPTS {
            let Some(task) = journal.task(task_id).await? else {
                return Ok(CancelOutcome::NotFound);
            };
            match task.state {
                TaskState::Canceled => return Ok(CancelOutcome::AlreadyCanceled(task)),
                s if s.is_terminal() => return Ok(CancelOutcome::AlreadyEnded(s)),
                _ => {}
            }
            let events = journal.task_events(task_id, 0).await?;
            let fold =
                TaskFold::from_events(&task.task_id, &task.context_id, &task.session_id, &events);
            // The remote task of an `a2a` turn is asked once, before the decision is recorded.
            if remote.is_none() {
                remote = self.cancel_remote(&task, &events, &fold).await;
            }
            let pending = fold.pending_interaction().cloned();
            let mut bodies = Vec::new();
            if let Some(p) = &pending {
                bodies.push(EventBody::InteractionAnswered {
                    answer: closing_answer(p, request),
                });
            }
            bodies.push(EventBody::TaskState {
                state: TaskState::Canceled,
                message: Some(canceled_message(&task, request, remote.as_ref())),
            });
            let at = self.inner.clock.now();
            let appended = journal
                .append(
                    &task.session_id,
                    bodies
                        .into_iter()
                        .map(|body| NewEvent {
                            task_id: Some(task.task_id.to_string()),
                            body,
                            at,
                        })
                        .collect(),
                )
                .await;
            match appended {
                Ok(_) => {}
                // Answered, raised or ended meanwhile: read again.
                Err(sextant_journal::Error::Conflict(_)) => continue,
                Err(e) => return Err(e),
            }
            if let Some(p) = &pending {
                self.inner.waiters.forget(&p.interaction_id);
            }
            self.stop_turn(task_id);
            self.close_late_interactions(&task, request).await?;
            tracing::info!(task_id, by = %request.by, "task canceled");
            let task = journal.task(task_id).await?.unwrap_or(task);
            return Ok(CancelOutcome::Canceled(task));
        }
        Err(sextant_journal::Error::Conflict(format!(
            "task {task_id} kept changing while it was being canceled; try again"
        )))
    }

    /// Tells the task's running turn, if there is one, that its task is canceled.
    fn stop_turn(&self, task_id: &str) {
        let token = self
            .inner
            .turns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(task_id)
            .cloned();
        if let Some(t) = token {
            t.cancel();
        }
    }

    /// Closes a decision raised between the cancel's read and its commit (the card would
    /// otherwise wait in the inbox for a task that has ended).
    async fn close_late_interactions(
        &self,
        task: &TaskRow,
        request: &CancelRequest,
    ) -> Result<(), sextant_journal::Error> {
        let events = self.inner.journal.task_events(&task.task_id, 0).await?;
        let fold =
            TaskFold::from_events(&task.task_id, &task.context_id, &task.session_id, &events);
        let Some(p) = fold.pending_interaction().cloned() else {
            return Ok(());
        };
        let body = EventBody::InteractionAnswered {
            answer: closing_answer(&p, request),
        };
        match self
            .inner
            .journal
            .append_one(
                &task.session_id,
                &task.task_id,
                body,
                self.inner.clock.now(),
            )
            .await
        {
            Ok(_) | Err(sextant_journal::Error::Conflict(_)) => {
                self.inner.waiters.forget(&p.interaction_id);
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// For a task of an `a2a` Agent that has a remote task, asks the peer to cancel it and
    /// says what came of it (`None`: no remote task to cancel).
    async fn cancel_remote(
        &self,
        task: &TaskRow,
        events: &[sextant_core::JournalEvent],
        fold: &TaskFold,
    ) -> Option<Value> {
        let agent = self.agent(&task.agent_id)?;
        let EngineSpec::A2a { peer, .. } = &agent.engine else {
            return None;
        };
        let remote_id = worker::follow_note(events)
            .and_then(|n| n["remoteTaskId"].as_str().map(String::from))
            .or_else(|| {
                fold.pending_interaction()
                    .and_then(|i| i.engine_ref["remoteTaskId"].as_str().map(String::from))
            })?;
        let outbound = self.outbound()?;
        Some(outbound.cancel_remote(peer, &remote_id).await)
    }
}

/// The answer that closes a pending decision of a canceled task: its `cancel` option where the
/// engine declared one (else its default), answered by whoever canceled, saying so.
fn closing_answer(i: &Interaction, request: &CancelRequest) -> Answer {
    let option = if i.options.iter().any(|o| o.id == "cancel") {
        "cancel".to_string()
    } else {
        i.default_option.clone()
    };
    Answer {
        interaction_id: i.interaction_id.clone(),
        option,
        reason: Some(match &request.reason {
            Some(r) => format!("canceled by {}: {r}", request.by),
            None => format!("canceled by {}", request.by),
        }),
        values: serde_json::Map::new(),
        message_id: format!("canceled-{}", i.interaction_id),
        answered_by: request.by.clone(),
        expired: false,
        digest: None,
    }
}

/// The canceled task's status message: who canceled, why, and what a peer answered.
fn canceled_message(
    task: &TaskRow,
    request: &CancelRequest,
    remote: Option<&Value>,
) -> sextant_core::a2a::Message {
    let mut text = format!("Canceled by {}.", request.by);
    if let Some(r) = &request.reason {
        text.push_str(&format!(" Reason: {r}"));
    }
    if let Some(r) = remote {
        let peer = r["peer"].as_str().unwrap_or_default();
        let id = r["remoteTaskId"].as_str().unwrap_or_default();
        match (r["state"].as_str(), r["error"].as_str()) {
            (Some(state), _) => text.push_str(&format!(
                " {peer} was asked to cancel its task {id}: now {state}."
            )),
            (None, Some(e)) => text.push_str(&format!(
                " {peer} was asked to cancel its task {id} and did not: {e}"
            )),
            _ => {}
        }
    }
    let mut m = worker::agent_text(task, &text);
    let mut meta = std::collections::HashMap::new();
    meta.insert("canceledBy".into(), json!(request.by));
    if let Some(r) = &request.reason {
        meta.insert("reason".into(), json!(r));
    }
    if let Some(r) = remote {
        meta.insert("remoteCancel".into(), r.clone());
    }
    m.metadata = Some(meta);
    m
}
