//! Pending interactions: engines waiting for answers, the person's answer, and expiry.
//!
//! An engine waits in [`crate::TurnSink::ask`] on a oneshot registered with the runtime's
//! waiters (`pending.rs`, with the waiting task's texts) *before* the interaction is
//! journalled, so an answer can never slip past it. [`Runtime::answer`] checks the answer
//! against the journal (the authority), journals it together with the task going back to
//! working, then hands it to the waiting engine — or, when no engine waits any more (Sextant
//! restarted), queues a resume on the Session's worker. The expiry loop applies each
//! interaction's default option when it expires, the same way.
//!
//! **Who answers: one rule, here, for every surface** ([`Runtime::may_answer`]). The console,
//! the REST answer API, the MCP bridge and anything later hand the runtime the principal of
//! the *credential* that made the request, never an identity derived from it:
//!
//! - the person (the console session, the owner token) answers any card;
//! - an assistant answers a card only when the person listed it in that Agent's
//!   `access.answer`, it may still read the Agent (not revoked), the card was not raised by its
//!   own request (the task's caller, or a schedule it created or rewrote), the option is not
//!   `acceptForSchedule` (a permanent grant is the person's alone), and the answer carries the
//!   digest of the exact action it was shown;
//! - nobody else (peers, JWT callers, the anonymous loopback caller) answers for the person.
//!
//! A refusal is an [`AnswerError::NotAllowed`] naming its [`Denied`] reason.

use std::time::Duration;

use serde_json::{Map, Value};
use sextant_core::a2a::TaskState;
use sextant_core::interaction::{ACCEPT_FOR_SCHEDULE, AnswerRefusal, check_answer};
use sextant_core::projection::TaskFold;
use sextant_core::{Answer, EventBody, Interaction, Principal, PrincipalKind};
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
    /// Required of assistants whenever the card has an action ([`Denied::DigestRequired`]).
    pub digest: Option<String>,
}

/// Why a principal may not answer a card (see the module docs). Each has a stable `code` for
/// REST and MCP error bodies.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Denied {
    /// Peers, JWT callers and the anonymous loopback caller never answer for the person.
    #[error(
        "only the person, or an assistant they allowed for this Agent, may answer its approvals"
    )]
    NotAnswerer,
    /// An assistant the person has not named in the Agent's `access.answer`.
    #[error(
        "assistant {assistant} may not answer agent {agent}'s approvals: the person has not listed \
         it in the Agent's access.answer (agents.toml)"
    )]
    AssistantNotAllowed { assistant: String, agent: String },
    /// The card was raised by the answering credential's own request.
    #[error("this card was raised by your own request; only the person answers it, in the console")]
    OwnRequest,
    /// An assistant may not give a permanent grant.
    #[error(
        "acceptForSchedule approves this action for every later Run; only the person gives it, in \
         the console"
    )]
    PermanentGrant,
    /// The card has an action and the answer named no digest.
    #[error(
        "send the digest of the action you were shown (digest, from get_agent_task); an answer \
         without it is not taken"
    )]
    DigestRequired,
}

impl Denied {
    /// The error code REST and MCP bodies carry.
    pub fn code(&self) -> &'static str {
        match self {
            Denied::NotAnswerer => "not_an_answerer",
            Denied::AssistantNotAllowed { .. } => "assistant_not_allowed",
            Denied::OwnRequest => "own_request",
            Denied::PermanentGrant => "permanent_grant",
            Denied::DigestRequired => "digest_required",
        }
    }
}

/// Why an answer was not taken.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    /// The answer rule refused this principal (see [`Denied`]).
    #[error("{0}")]
    NotAllowed(Denied),
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
        // Nobody but the person and assistants answers at all: refused before anything is
        // read, so such a caller learns nothing about the task.
        if !matches!(
            req.principal.kind,
            PrincipalKind::Person | PrincipalKind::Assistant
        ) {
            return Err(AnswerError::NotAllowed(Denied::NotAnswerer));
        }
        if req.message_id.trim().is_empty() {
            return Err(AnswerError::MissingMessageId);
        }
        let journal = &self.inner.journal;
        let task = journal
            .task(&req.task_id)
            .await?
            .ok_or(AnswerError::TaskNotFound)?;
        self.may_answer(&req.principal, &task)
            .await
            .map_err(AnswerError::NotAllowed)?;
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
        if req.principal.kind == PrincipalKind::Assistant {
            // What an assistant answers must be what it was shown: the exact action, by its
            // digest. A reader shown a masked action never had that digest to send.
            if asked.is_some() && req.digest.is_none() {
                return Err(AnswerError::NotAllowed(Denied::DigestRequired));
            }
            if req.option == ACCEPT_FOR_SCHEDULE {
                return Err(AnswerError::NotAllowed(Denied::PermanentGrant));
            }
        }
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
            answered_by: answered_by(&req.principal),
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

    /// Whether `principal` may answer the cards of `task` (the rule in the module docs, but for
    /// the per-answer digest and option checks). The MCP bridge asks this too, to decide
    /// whether a reader is shown the exact action (one who may answer) or a masked one.
    pub async fn may_answer(&self, principal: &Principal, task: &TaskRow) -> Result<(), Denied> {
        self.answers_for(principal, &task.agent_id)?;
        if principal.kind == PrincipalKind::Assistant && self.raised_by(principal, task).await {
            return Err(Denied::OwnRequest);
        }
        Ok(())
    }

    /// Whether `principal` answers approvals of `agent_id` at all: the person, or an assistant
    /// named in the Agent's `access.answer` that may still read it. Such a reader reads every
    /// caller's tasks of that Agent on the MCP bridge (it needs them to answer their cards).
    pub fn answers_for(&self, principal: &Principal, agent_id: &str) -> Result<(), Denied> {
        match principal.kind {
            PrincipalKind::Person => return Ok(()),
            PrincipalKind::Assistant => {}
            _ => return Err(Denied::NotAnswerer),
        }
        let allowed = self
            .agent(agent_id)
            .is_some_and(|a| a.access.may_answer(principal))
            && self
                .authorize(principal, agent_id, sextant_core::Rights::Read)
                .is_ok();
        if allowed {
            Ok(())
        } else {
            Err(Denied::AssistantNotAllowed {
                assistant: principal.subject.clone(),
                agent: agent_id.to_string(),
            })
        }
    }

    /// Whether `task`'s cards were raised by `principal`'s own request: it sent the task's
    /// input, or the task is a Run of a schedule it made or whose prompt or Agent it changed. When that cannot be read, the answer
    /// is yes (refusing an allowed answer is the safe mistake).
    async fn raised_by(&self, principal: &Principal, task: &TaskRow) -> bool {
        let key = principal.key();
        if task.caller.as_str() == key {
            return true;
        }
        let journal = &self.inner.journal;
        let scope = match journal.run_scope(task.clone()).await {
            Ok(Some(s)) => s,
            Ok(None) => return false,
            Err(e) => {
                tracing::warn!(error = %e, task_id = %task.task_id, "could not read the task's schedule");
                return true;
            }
        };
        match journal.schedule(scope.schedule_id.as_str()).await {
            Ok(Some(s)) => {
                s.editors.contains(&key)
                    || s.source_principal
                        .as_deref()
                        .and_then(|p| serde_json::from_str::<Principal>(p).ok())
                        .is_some_and(|p| p.key() == key)
            }
            Ok(None) => false,
            Err(e) => {
                tracing::warn!(error = %e, task_id = %task.task_id, "could not read the task's schedule");
                true
            }
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

/// Who an answer is recorded as: the person, or the person through the assistant that answered
/// for them (`you (via assistant claude)`).
fn answered_by(p: &Principal) -> String {
    match p.kind {
        PrincipalKind::Assistant => {
            Principal::person_via(format!("assistant {}", p.subject)).display()
        }
        _ => p.display(),
    }
}
