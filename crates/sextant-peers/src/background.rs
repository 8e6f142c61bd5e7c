//! `a2a_call`s and `a2a_orchestrate` calls that outlive their exchange: the remote task had
//! not settled when the reading ended (the peer's time limit cut it, the answer was not
//! final, or the remote task waits for its own person: [`crate::follow::answered_at`]).
//!
//! The outbound task stays working, with a progress message that names the remote task (the
//! same follow note the `a2a` engine journals, marked `outbound`), and a background follower
//! reads the remote task until it settles, then concludes the exchange as if it had ended
//! then ([`Peers::conclude`]: the reply, the final state, or a card for the person). A restart
//! goes on from the note ([`Peers::resume_call`], called by the runtime's recovery), and a
//! new call in the same conversation is refused while one is followed, so the conversation
//! keeps one order.

use std::time::Instant;

use serde_json::{Value, json};
use sextant_core::a2a::{Message, Role, TaskState};
use sextant_core::ids::new_id;
use sextant_core::{EventBody, Principal};
use sextant_journal::{NewEvent, TaskRow};
use sextant_runtime::engine::FOLLOW_KEY;

use crate::call::Exchange;
use crate::client::Accumulated;
use crate::follow::{Follower, Quiet, Unsettled, answered_at, follow_until_settled, waiting_text};
use crate::{PeerConnection, PeerError, Peers};

impl Peers {
    /// Journals that Sextant follows the remote task of `task`'s exchange, starts following
    /// it, and returns the hint `a2a_call` gives its caller.
    pub(crate) async fn follow_call(
        &self,
        conn: &PeerConnection,
        task: &TaskRow,
        ex: Unsettled<'_>,
        caller: &Principal,
    ) -> Result<String, PeerError> {
        let from = (!caller.is_owner()).then(|| caller.display());
        let text = self.note_following(conn, task, &ex, from.clone()).await?;
        self.spawn_follower(
            conn.clone(),
            task.clone(),
            ex.follower.clone(),
            ex.streamed,
            from,
        );
        Ok(format!(
            "{text} Read the answer later with a2a_history (context_id={}); a new a2a_call in \
             this conversation waits until then.",
            task.context_id
        ))
    }

    /// [`follow_call`](Self::follow_call) for the exchange an answer to an outbound card
    /// started (`from`: who made the call the card belongs to).
    pub(crate) async fn follow_card_answer(
        &self,
        conn: &PeerConnection,
        task: &TaskRow,
        ex: Unsettled<'_>,
        from: Option<String>,
    ) -> Result<(), PeerError> {
        self.note_following(conn, task, &ex, from.clone()).await?;
        self.spawn_follower(
            conn.clone(),
            task.clone(),
            ex.follower.clone(),
            ex.streamed,
            from,
        );
        Ok(())
    }

    /// After a restart: follows the remote task a journalled note (`note`, marked
    /// `outbound`) names, as [`follow_call`](Self::follow_call) started it.
    pub async fn resume_call(&self, task: TaskRow, note: Value) -> Result<(), PeerError> {
        let peer = note["peer"].as_str().unwrap_or_default().to_string();
        let conn = match self.connect(&peer).await {
            Ok(c) => c,
            Err(e) => {
                let why = format!("{peer} could not be reached to go on following its task: {e}");
                return self.end_card_task(&task, TaskState::Failed, &why).await;
            }
        };
        let acc = Accumulated {
            task_id: note["remoteTaskId"].as_str().map(String::from),
            context_id: note["remoteContextId"].as_str().map(String::from),
            ..Accumulated::default()
        };
        let follower = Follower::new(&peer, acc);
        let from = note["from"].as_str().map(String::from);
        let streamed = note["streamed"].as_bool().unwrap_or(false);
        self.spawn_follower(conn, task, follower, streamed, from);
        Ok(())
    }

    /// Journals the progress message that says Sextant follows the remote task, with the
    /// follow note a restart goes on from; its text.
    async fn note_following(
        &self,
        conn: &PeerConnection,
        task: &TaskRow,
        ex: &Unsettled<'_>,
        from: Option<String>,
    ) -> Result<String, PeerError> {
        let acc = &ex.follower.acc;
        let remote = acc.task_id.clone().unwrap_or_default();
        let peer = &conn.name;
        let text = match answered_at(acc).filter(|_| acc.is_interrupted()) {
            Some(at) => waiting_text(peer, acc, &at),
            None => format!(
                "{peer} has not answered yet; Sextant keeps following its task {remote}, and \
                 its answer will complete this task."
            ),
        };
        let note = json!({
            "peer": peer,
            "remoteTaskId": remote,
            "remoteContextId": acc.context_id,
            "outbound": true,
            "streamed": ex.streamed,
            "from": from,
        });
        let mut m = Message::new(Role::Agent, vec![sextant_core::a2a::Part::text(&text)]);
        m.message_id = new_id();
        m.context_id = Some(task.context_id.to_string());
        m.task_id = Some(task.task_id.to_string());
        m.metadata = Some(
            [
                ("peer".to_string(), json!(peer)),
                ("remoteTaskId".to_string(), json!(remote)),
                (FOLLOW_KEY.to_string(), note),
            ]
            .into_iter()
            .collect(),
        );
        self.journal()
            .append(
                &task.session_id,
                vec![NewEvent {
                    task_id: Some(task.task_id.to_string()),
                    body: EventBody::TaskState {
                        state: TaskState::Working,
                        message: Some(m),
                    },
                    at: self.clock().now(),
                }],
            )
            .await?;
        Ok(text)
    }

    fn spawn_follower(
        &self,
        conn: PeerConnection,
        task: TaskRow,
        mut follower: Follower,
        streamed: bool,
        from: Option<String>,
    ) {
        let peers = self.clone();
        let stopping = self.inner.stopping.clone();
        self.inner.followers.spawn(async move {
            let started = Instant::now();
            let mut quiet = Quiet;
            let followed = tokio::select! {
                r = follow_until_settled(&peers, &conn, &mut follower, &mut quiet) => r,
                // Sextant is stopping: the note stays, and the next start follows again.
                () = stopping.cancelled() => return,
            };
            let ex = Exchange {
                acc: &follower.acc,
                canceled: false,
                failed: followed.err(),
                latency: started.elapsed(),
                streamed,
                from,
            };
            if let Err(e) = peers
                .conclude(&conn, &task, task.context_id.as_ref(), &ex)
                .await
            {
                tracing::warn!(peer = %conn.name, error = %e, "could not journal a followed call's answer");
            }
        });
    }
}
