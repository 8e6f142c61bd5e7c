//! How the runtime reaches the peers: [`Peers`] is the runtime's [`Outbound`] side (given to
//! `RuntimeBuilder::outbound`, in an `Arc` the server keeps a clone of).

use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use sextant_core::{AgentSpec, Answer, EngineSpec, Interaction};
use sextant_journal::TaskRow;
use sextant_runtime::engine::make::Unavailable;
use sextant_runtime::outbound::Fetched;
use sextant_runtime::{Engine, Outbound};

use crate::Peers;
use crate::client::NetPolicy;
use crate::engine::{A2aEngine, Budget};

/// How long a cancel waits for a peer to answer the cancel of its task.
const REMOTE_CANCEL_TIMEOUT: Duration = Duration::from_secs(10);

impl Outbound for Peers {
    fn a2a_engine(&self, agent: &AgentSpec) -> Box<dyn Engine> {
        let EngineSpec::A2a {
            peer,
            approval_timeout_secs,
            max_calls,
            max_outbound_secs,
        } = &agent.engine
        else {
            // The runtime asks for `a2a` Agents only.
            let kind = agent.engine.kind();
            return Box::new(Unavailable::new(format!(
                "a {kind} agent is not an a2a agent"
            )));
        };
        Box::new(A2aEngine {
            peer: peer.clone(),
            peers: self.clone(),
            approval_timeout: chrono::Duration::seconds(
                i64::try_from(*approval_timeout_secs).unwrap_or(i64::MAX / 1000),
            ),
            budget: Budget {
                calls: *max_calls,
                time: Duration::from_secs(*max_outbound_secs),
            },
        })
    }

    fn fetch_public<'a>(
        &'a self,
        url: &'a url::Url,
        limit: usize,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<Fetched, String>> {
        let policy = NetPolicy {
            allow_private: false,
            allow_loopback: false,
            loopback_only: false,
        };
        async move {
            self.client()
                .fetch_bytes(url, policy, limit, timeout)
                .await
                .map(|(bytes, content_type)| Fetched {
                    bytes: Vec::from(bytes),
                    content_type,
                })
                .map_err(|e| e.to_string())
        }
        .boxed()
    }

    fn answer_card(
        &self,
        task: TaskRow,
        interaction: Interaction,
        answer: Answer,
    ) -> BoxFuture<'static, Result<(), String>> {
        let peers = self.clone();
        async move {
            peers
                .answer_card(&task, &interaction, &answer)
                .await
                .map_err(|e| e.to_string())
        }
        .boxed()
    }

    fn cancel_remote<'a>(&'a self, peer: &'a str, remote_task_id: &'a str) -> BoxFuture<'a, Value> {
        async move {
            let answer = match self.connect(peer).await {
                Ok(conn) => {
                    let mut ep = conn.endpoint.clone();
                    ep.timeout = REMOTE_CANCEL_TIMEOUT;
                    self.client().cancel_task(&ep, remote_task_id).await
                }
                Err(e) => {
                    return json!({ "peer": peer, "remoteTaskId": remote_task_id, "error": e.to_string() });
                }
            };
            match answer {
                Ok(t) => json!({
                    "peer": peer,
                    "remoteTaskId": remote_task_id,
                    "state": sextant_core::event::state_wire(&t.status.state),
                }),
                Err(e) => {
                    json!({ "peer": peer, "remoteTaskId": remote_task_id, "error": e.to_string() })
                }
            }
        }
        .boxed()
    }

    fn resume_call(&self, task: TaskRow, note: Value) -> BoxFuture<'static, Result<(), String>> {
        let peers = self.clone();
        async move {
            peers
                .resume_call(task, note)
                .await
                .map_err(|e| e.to_string())
        }
        .boxed()
    }
}
