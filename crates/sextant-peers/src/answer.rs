//! The person's answer to an outbound card: a remote task reached through `a2a_call` or
//! `a2a_orchestrate` asked for a decision, which became an inbox card (see
//! [`Peers::conclude`]); the answer goes to the same remote task, and the exchange that
//! follows is journalled in the same outbound task (a new question becomes a new card). The
//! local `cancel` asks the remote task to stop. Answers after a restart work the same way:
//! everything needed is in the interaction's routing data.

use std::time::{Duration, Instant};

use crate::client::Accumulated;
use sextant_core::a2a::{Message, Part, Role, SendMessageRequest, TaskState};
use sextant_core::ids::new_id;
use sextant_core::{Answer, EventBody, Interaction};
use sextant_journal::{NewEvent, TaskRow};

use super::call::{Exchange, consume, open};
use super::{PeerError, Peers};
use crate::follow::{Follower, Unsettled};
use crate::questions::{CANCEL, follow_up};

impl Peers {
    /// Sends the person's `answer` to the remote task `interaction` is about, and journals what
    /// follows in `task` (the outbound task that holds the card).
    pub async fn answer_card(
        &self,
        task: &TaskRow,
        interaction: &Interaction,
        answer: &Answer,
    ) -> Result<(), PeerError> {
        let er = &interaction.engine_ref;
        let peer = er["peer"].as_str().unwrap_or_default().to_string();
        let conn = match self.connect(&peer).await {
            Ok(c) => c,
            Err(e) => {
                let why = format!("The answer could not be sent to {peer}: {e}");
                return self.end_card_task(task, TaskState::Failed, &why).await;
            }
        };
        if answer.option == CANCEL && er["localCancel"].as_bool().unwrap_or(false) {
            if let Some(id) = er["remoteTaskId"].as_str() {
                let mut ep = conn.endpoint.clone();
                ep.timeout = Duration::from_secs(10);
                if let Err(e) = self.client().cancel_task(&ep, id).await {
                    tracing::debug!(error = %e, "could not cancel a remote task");
                }
            }
            let why = format!(
                "Canceled by {}; {peer}'s task was asked to stop.",
                answer.answered_by
            );
            return self.end_card_task(task, TaskState::Canceled, &why).await;
        }
        let send = SendMessageRequest {
            message: follow_up(interaction, answer),
            configuration: None,
            metadata: None,
            tenant: None,
        };
        let started = Instant::now();
        let mut follower = Follower::new(&conn.name, Accumulated::default());
        follower.answering(er["remoteMark"].as_str().map(String::from));
        let mut streamed = false;
        let mut settled = false;
        let result = async {
            let (mut s, st) = open(self.client(), &conn.endpoint, &send, conn.streaming).await?;
            streamed = st;
            settled = consume(&mut s, &mut follower).await?;
            Ok::<(), crate::client::ClientError>(())
        }
        .await;
        let latency = started.elapsed();
        let failed = result.err().map(|e| e.to_string());
        if follower.acc.task_id.is_none()
            && let Some(why) = &failed
        {
            // The answer never reached the remote task (refused, or no connection): the
            // question stays, asked again with the reason; the task does not fail on it.
            self.record(&conn, latency, Some(why)).await;
            return self.ask_card_again(task, interaction, &peer, why).await;
        }
        self.record(&conn, latency, None).await;
        if !settled {
            let unsettled = Unsettled {
                follower: &follower,
                streamed,
            };
            self.follow_card_answer(&conn, task, unsettled, interaction.from.clone())
                .await?;
            return Ok(());
        }
        let ex = Exchange {
            acc: &follower.acc,
            canceled: false,
            failed,
            latency,
            streamed,
            from: interaction.from.clone(),
        };
        self.conclude(&conn, task, &task.context_id, &ex).await?;
        Ok(())
    }

    /// `asked` again as a fresh card of `task`, saying why its answer did not arrive.
    async fn ask_card_again(
        &self,
        task: &TaskRow,
        asked: &Interaction,
        peer: &str,
        why: &str,
    ) -> Result<(), PeerError> {
        let mut again = asked.clone();
        again.interaction_id = new_id();
        again.expires_at = Some(self.clock().now() + crate::call::CARD_EXPIRY);
        let question = asked.description.as_deref().unwrap_or_default();
        let prompt =
            format!("{peer} did not take the answer ({why}). Its question again: {question}");
        let text = sextant_runtime::interactions::pending_text(&again, &prompt);
        let mut m = Message::new(
            Role::Agent,
            vec![
                Part::text(text),
                Part::data(sextant_runtime::interactions::public_data(&again))
                    .with_media_type("application/json"),
            ],
        );
        m.message_id = new_id();
        m.context_id = Some(task.context_id.to_string());
        m.task_id = Some(task.task_id.to_string());
        let at = self.clock().now();
        let state = again.waiting_state();
        self.journal()
            .append(
                &task.session_id,
                vec![
                    NewEvent {
                        task_id: Some(task.task_id.to_string()),
                        body: EventBody::InteractionRaised { interaction: again },
                        at,
                    },
                    NewEvent {
                        task_id: Some(task.task_id.to_string()),
                        body: EventBody::TaskState {
                            state,
                            message: Some(m),
                        },
                        at,
                    },
                ],
            )
            .await?;
        Ok(())
    }

    pub(crate) async fn end_card_task(
        &self,
        task: &TaskRow,
        state: TaskState,
        why: &str,
    ) -> Result<(), PeerError> {
        let mut m = Message::new(Role::Agent, vec![Part::text(why)]);
        m.message_id = new_id();
        m.context_id = Some(task.context_id.to_string());
        m.task_id = Some(task.task_id.to_string());
        self.journal()
            .append(
                &task.session_id,
                vec![NewEvent {
                    task_id: Some(task.task_id.to_string()),
                    body: EventBody::TaskState {
                        state,
                        message: Some(m),
                    },
                    at: self.clock().now(),
                }],
            )
            .await?;
        Ok(())
    }
}
