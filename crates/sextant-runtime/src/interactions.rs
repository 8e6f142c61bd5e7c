//! Pending interactions: engines waiting for answers, the person's answer, and expiry.
//!
//! An engine waits in [`crate::TurnSink::ask`] on a oneshot registered with the runtime's
//! waiters (`pending.rs`, with the waiting task's texts) *before* the interaction is
//! journalled, so an answer can never slip past it. [`Runtime::answer`] checks the answer
//! against the journal (the authority), journals it together with the task going back to
//! working, then hands it to the waiting engine — or, when no engine waits any more (Sextant
//! restarted), queues a resume on the Session's worker. The expiry loop applies each
//! interaction's default option when it expires, the same way.

use std::time::Duration;

use serde_json::{Map, Value};
use sextant_core::a2a::TaskState;
use sextant_core::interaction::{ACCEPT_FOR_SCHEDULE, AnswerRefusal, check_answer};
use sextant_core::projection::TaskFold;
use sextant_core::{Answer, EventBody, Interaction, Principal};
use sextant_journal::{GrantRow, InteractionRow, NewEvent, TaskRow};

use crate::Runtime;
use crate::worker::WorkItem;

pub use crate::pending::{answer_path, hide_paths, is_outbound_card, pending_text, public_data};

/// An answer as a caller sends it.
#[derive(Debug, Clone)]
pub struct AnswerRequest {
    pub principal: Principal,
    pub task_id: String,
    pub interaction_id: String,
    pub option: String,
    pub reason: Option<String>,
    pub values: Map<String, Value>,
    pub message_id: String,
    /// The digest of the action the answerer saw, when its client sends it: an answer whose
    /// digest is not the interaction's is refused (the card it was given for is not this one).
    pub digest: Option<String>,
}

/// Why an answer was not taken.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    /// Only the console owner answers, as themselves.
    #[error("only the console owner may answer interactions")]
    NotOwner,
    #[error("task not found")]
    TaskNotFound,
    #[error("interaction not found for this task")]
    InteractionNotFound,
    #[error("{0}")]
    Refused(AnswerRefusal),
    #[error("message_id must not be empty")]
    MissingMessageId,
    #[error(transparent)]
    Journal(#[from] sextant_journal::Error),
}

impl Runtime {
    /// Pending interactions across all Sessions, newest first.
    pub async fn pending_interactions(
        &self,
    ) -> Result<Vec<InteractionRow>, sextant_journal::Error> {
        self.inner.journal.pending_interactions().await
    }

    /// Takes the person's answer (see the module docs). Returns the task as it is right after
    /// the answer was journalled; execution goes on in the background.
    pub async fn answer(&self, req: AnswerRequest) -> Result<TaskRow, AnswerError> {
        if !req.principal.is_owner() {
            return Err(AnswerError::NotOwner);
        }
        if req.message_id.trim().is_empty() {
            return Err(AnswerError::MissingMessageId);
        }
        let journal = &self.inner.journal;
        let task = journal
            .task(&req.task_id)
            .await?
            .ok_or(AnswerError::TaskNotFound)?;
        let events = journal.task_events(&task.task_id, 0).await?;
        let fold =
            TaskFold::from_events(&task.task_id, &task.context_id, &task.session_id, &events);
        let (interaction, given) = fold
            .interactions
            .iter()
            .find(|(i, _)| i.interaction_id == req.interaction_id)
            .cloned()
            .ok_or(AnswerError::InteractionNotFound)?;
        if let Some(prior) = given {
            // An identical retry gets the same result; anything else is refused.
            let same = prior.message_id == req.message_id
                && prior.option == req.option
                && prior.reason == req.reason
                && prior.values == req.values;
            if same {
                return Ok(task);
            }
            let why = if prior.expired {
                AnswerRefusal::Expired
            } else {
                AnswerRefusal::AlreadyAnswered
            };
            return Err(AnswerError::Refused(why));
        }
        if task.state.is_terminal() {
            return Err(AnswerError::Refused(AnswerRefusal::TaskTerminal));
        }
        if interaction
            .expires_at
            .is_some_and(|t| t <= self.inner.clock.now())
        {
            self.expire(&task, &interaction).await?;
            return Err(AnswerError::Refused(AnswerRefusal::Expired));
        }
        check_answer(&interaction, &req.option, &req.values).map_err(AnswerError::Refused)?;
        let asked = interaction.action.as_ref().map(|a| a.digest.clone());
        if let Some(seen) = &req.digest
            && asked.as_deref() != Some(seen.as_str())
        {
            return Err(AnswerError::Refused(AnswerRefusal::ActionChanged {
                asked: asked.unwrap_or_else(|| "no action digest".into()),
            }));
        }
        let reason = req
            .reason
            .filter(|r| interaction.reason_allowed && !r.trim().is_empty());
        let answer = Answer {
            interaction_id: interaction.interaction_id.clone(),
            option: req.option,
            reason,
            values: req.values,
            message_id: req.message_id,
            answered_by: req.principal.display(),
            expired: false,
            digest: asked,
        };
        match self.record(&task, &interaction, answer).await {
            Err(sextant_journal::Error::Conflict(_)) => {
                Err(AnswerError::Refused(AnswerRefusal::AlreadyAnswered))
            }
            other => Ok(other?),
        }
    }

    /// Applies an interaction's default option because it expired.
    async fn expire(
        &self,
        task: &TaskRow,
        interaction: &Interaction,
    ) -> Result<(), sextant_journal::Error> {
        let answer = Answer {
            interaction_id: interaction.interaction_id.clone(),
            option: interaction.default_option.clone(),
            reason: Some("expired without an answer".into()),
            values: Map::new(),
            message_id: format!("expiry-{}", interaction.interaction_id),
            answered_by: "expiry".into(),
            expired: true,
            digest: interaction.action.as_ref().map(|a| a.digest.clone()),
        };
        match self.record(task, interaction, answer).await {
            // Answered meanwhile: nothing to apply.
            Err(sextant_journal::Error::Conflict(_)) => Ok(()),
            other => other.map(drop),
        }
    }

    /// Journals an answer (and the task working again), then delivers it.
    async fn record(
        &self,
        task: &TaskRow,
        interaction: &Interaction,
        answer: Answer,
    ) -> Result<TaskRow, sextant_journal::Error> {
        let now = self.inner.clock.now();
        self.inner
            .journal
            .append(
                &task.session_id,
                vec![
                    NewEvent {
                        task_id: Some(task.task_id.to_string()),
                        body: EventBody::InteractionAnswered {
                            answer: answer.clone(),
                        },
                        at: now,
                    },
                    NewEvent {
                        task_id: Some(task.task_id.to_string()),
                        body: EventBody::TaskState {
                            state: TaskState::Working,
                            message: None,
                        },
                        at: now,
                    },
                ],
            )
            .await?;
        // Remembered before the engine hears the answer, so the schedule's next Run finds it.
        if answer.option == ACCEPT_FOR_SCHEDULE && !answer.expired {
            self.grant_for_schedule(task, interaction, &answer).await;
        }
        // Read the task as answered before handing the answer over: a fast engine could
        // otherwise journal its final state first, and callers wait for states after this row.
        let row = self.inner.journal.task(&task.task_id).await?;
        // A card for a remote task reached through a2a_call: no engine waits for it; the
        // answer goes to the remote task.
        if is_outbound_card(interaction) {
            match self.outbound().cloned() {
                Some(outbound) => {
                    let (task, interaction) = (task.clone(), interaction.clone());
                    let task_id = task.task_id.clone();
                    let sent = outbound.answer_card(task, interaction, answer);
                    self.inner.tracker.spawn(async move {
                        if let Err(e) = sent.await {
                            tracing::warn!(error = %e, task_id = %task_id, "could not send an answer to a peer");
                        }
                    });
                }
                None => tracing::warn!("an outbound card was answered, but peers are not set up"),
            }
            return row.ok_or(sextant_journal::Error::NotFound);
        }
        match self.inner.waiters.take(&interaction.interaction_id) {
            Some(tx) => {
                if let Err(answer) = tx.send(answer) {
                    self.resume(task, interaction, answer);
                }
            }
            None => self.resume(task, interaction, answer),
        }
        row.ok_or(sextant_journal::Error::NotFound)
    }

    /// Records an `acceptForSchedule` answer's grant: this exact action (the interaction's
    /// grant key and action digest) for every later Run of the schedule the task is a Run of,
    /// bound to the fingerprint of the Run's prompt and Agent. The answer is journalled
    /// already and still approves this Run; a grant that cannot be recorded (the schedule was
    /// deleted or edited meanwhile) is only logged, and the next Run asks again.
    async fn grant_for_schedule(&self, task: &TaskRow, interaction: &Interaction, answer: &Answer) {
        let (Some(key), Some(action)) = (&interaction.grant_key, &interaction.action) else {
            return;
        };
        let journal = &self.inner.journal;
        let scope = match journal.run_scope(task.clone()).await {
            Ok(Some(s)) if s.current => s,
            Ok(_) => {
                tracing::info!(task_id = %task.task_id,
                    "acceptForSchedule: the task no longer runs its schedule's prompt and Agent; no grant kept");
                return;
            }
            Err(e) => {
                tracing::warn!(task_id = %task.task_id, error = %e, "could not read the task's schedule");
                return;
            }
        };
        let grant = GrantRow {
            grant_id: sextant_core::ids::new_id(),
            schedule_id: scope.schedule_id,
            grant_key: key.clone(),
            digest: action.digest.clone(),
            action: (**action).clone(),
            fingerprint: scope.fingerprint,
            granted_by: answer.answered_by.clone(),
            granted_at: self.inner.clock.now(),
            run_id: Some(scope.run_id),
            task_id: task.task_id.clone(),
            interaction_id: interaction.interaction_id.clone(),
            voided_at: None,
            void_reason: None,
        };
        if let Err(e) = journal.put_schedule_grant(grant).await {
            tracing::warn!(task_id = %task.task_id, error = %e, "could not record a schedule grant");
        }
    }

    fn resume(&self, task: &TaskRow, interaction: &Interaction, answer: Answer) {
        self.dispatch_item(
            &task.session_id,
            &task.agent_id,
            WorkItem::Resume {
                task_id: task.task_id.to_string(),
                interaction: Box::new(interaction.clone()),
                answer: Box::new(answer),
            },
        );
    }

    /// The expiry loop: applies defaults as interactions expire; wakes when one is raised.
    pub(crate) async fn expiry_loop(self) {
        const IDLE: Duration = Duration::from_secs(3600);
        loop {
            let mut next: Option<chrono::DateTime<chrono::Utc>> = None;
            match self.inner.journal.pending_interactions().await {
                Ok(rows) => {
                    let now = self.inner.clock.now();
                    for row in rows {
                        let Some(at) = row.interaction.expires_at else {
                            continue;
                        };
                        if at <= now {
                            if let Err(e) = self.expire_row(&row).await {
                                tracing::error!(error = %e, "could not apply an expired interaction's default");
                            }
                        } else if next.is_none_or(|n| at < n) {
                            next = Some(at);
                        }
                    }
                }
                Err(e) => tracing::error!(error = %e, "could not read pending interactions"),
            }
            let wait = next
                .map(|n| {
                    (n - self.inner.clock.now())
                        .to_std()
                        .unwrap_or(Duration::ZERO)
                })
                .unwrap_or(IDLE)
                .min(IDLE);
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = self.inner.waiters.expiry_notified() => {}
                _ = self.inner.stop_intake.cancelled() => return,
            }
        }
    }

    async fn expire_row(&self, row: &InteractionRow) -> Result<(), sextant_journal::Error> {
        let Some(task) = self.inner.journal.task(&row.task_id).await? else {
            return Ok(());
        };
        if task.state.is_terminal() {
            return Ok(());
        }
        self.expire(&task, &row.interaction).await
    }

    /// Wakes the expiry loop (after the clock was moved, in tests).
    pub fn check_expiries(&self) {
        self.inner.waiters.expiry_changed();
    }
}
