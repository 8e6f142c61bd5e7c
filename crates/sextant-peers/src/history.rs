//! `a2a_list` and `a2a_history`: registered peers with their metrics, and the outbound
//! conversations read back from the journal (see [`super::call`] for how they are written).

use serde::Serialize;
use serde_json::Value;
#[cfg(test)]
use serde_json::json;
use sextant_core::event::state_wire;
use sextant_core::ids::format_time;
use sextant_core::projection::message_text;
use sextant_core::{EventBody, JournalEvent, Principal};
use sextant_journal::SessionRow;
use ts_rs::TS;

use super::{PeerError, PeerView, Peers};

/// Conversations `a2a_list` shows.
pub const LIST_CONVERSATIONS: u32 = 25;
/// Longest message text in a history.
pub const HISTORY_CHARS: usize = 2000;
/// Most messages a history returns.
pub const MAX_HISTORY: usize = 200;

/// One message of an outbound conversation.
#[derive(Debug, Clone, Serialize)]
pub struct HistoryMessage {
    /// `user` (sent by Sextant) or `agent` (the peer's reply).
    pub role: &'static str,
    pub text: String,
    pub truncated: bool,
    pub at: String,
    /// The remote task (agent messages; user messages that continued a waiting task).
    pub task_id: Option<String>,
    /// The remote task's state after the reply.
    pub task_state: Option<String>,
    /// Set when the call failed (the text says why).
    pub error: bool,
}

/// An outbound conversation.
#[derive(Debug, Clone, Serialize)]
pub struct History {
    pub context_id: String,
    pub peer: String,
    pub session_id: String,
    /// The Session's transcript in the console API.
    pub session_path: String,
    pub messages: Vec<HistoryMessage>,
    pub total_messages: usize,
    /// Other peers with a conversation under the same contextId.
    pub other_peers: Vec<String>,
}

/// One saved conversation in a listing (`PeerConversation` in the console's TypeScript).
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export, rename = "PeerConversation")]
pub struct Conversation {
    pub context_id: String,
    pub peer: String,
    pub session_id: String,
    /// Its exchanges (tasks) so far.
    pub exchanges: usize,
    pub created_at: String,
    pub updated_at: String,
}

/// What `a2a_list` (`GET /api/v1/peers`) returns (`PeerListing` in the console's TypeScript).
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export, rename = "PeerListing")]
pub struct Listing {
    pub peers: Vec<PeerView>,
    /// The caller's latest conversations (25, `LIST_CONVERSATIONS`), newest first.
    pub conversations: Vec<Conversation>,
    pub totals: PeerTotals,
}

/// The totals of a listing: peers, enabled peers, and their calls and failures.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct PeerTotals {
    pub peers: usize,
    pub enabled: usize,
    pub calls: i64,
    pub failures: i64,
}

/// The peer of an outbound Session (its agent id without the `peer:` / `url:` prefix).
pub fn peer_of(s: &SessionRow) -> String {
    s.agent_id
        .strip_prefix("peer:")
        .or_else(|| s.agent_id.strip_prefix("url:"))
        .unwrap_or(&s.agent_id)
        .to_string()
}

/// `s` cut to [`HISTORY_CHARS`] characters (with `…`), and whether it was cut.
fn cut(s: &str) -> (String, bool) {
    let c = sextant_core::text::cut(s, HISTORY_CHARS);
    (c.to_string(), c.cut)
}

fn meta_str(m: &Option<std::collections::HashMap<String, Value>>, k: &str) -> Option<String> {
    m.as_ref()
        .and_then(|m| m.get(k))
        .and_then(Value::as_str)
        .map(String::from)
}

/// Folds an outbound Session's events into its messages, oldest first.
pub fn fold_messages(events: &[JournalEvent]) -> Vec<HistoryMessage> {
    let mut out = Vec::new();
    let mut reply: Option<(String, String)> = None; // (local task, text)
    for ev in events {
        let at = sextant_core::ids::format_time(ev.at);
        match &ev.body {
            EventBody::TaskCreated { message } | EventBody::InputAccepted { message } => {
                let (text, truncated) = cut(&message_text(message));
                out.push(HistoryMessage {
                    role: "user",
                    text,
                    truncated,
                    at,
                    task_id: meta_str(&message.metadata, "remoteTaskId"),
                    task_state: None,
                    error: false,
                });
            }
            EventBody::Artifact { artifact, .. } => {
                let text: String = artifact.parts.iter().filter_map(|p| p.as_text()).collect();
                let task = ev.task_id.clone().unwrap_or_default();
                match &mut reply {
                    Some((t, acc)) if *t == task => acc.push_str(&text),
                    _ => reply = Some((task, text)),
                }
            }
            EventBody::TaskState {
                state,
                message: Some(m),
            } if state.is_terminal() => {
                let md = &m.metadata;
                let failed = *state == sextant_core::a2a::TaskState::Failed
                    && meta_str(md, "remoteTaskState").is_none();
                let text = match reply.take() {
                    Some((t, text)) if ev.task_id.as_deref() == Some(t.as_str()) && !failed => text,
                    _ => message_text(m),
                };
                let (text, truncated) = cut(&text);
                out.push(HistoryMessage {
                    role: "agent",
                    text,
                    truncated,
                    at,
                    task_id: meta_str(md, "remoteTaskId"),
                    task_state: meta_str(md, "remoteTaskState")
                        .or_else(|| failed.then(|| state_wire(state))),
                    error: failed,
                });
            }
            _ => {}
        }
    }
    out
}

impl Peers {
    /// `a2a_list`: the peers with their metrics, and the caller's latest conversations.
    pub async fn list(&self, caller: &Principal) -> Result<Listing, PeerError> {
        let peers = self.all().await?;
        let sessions = self
            .journal()
            .outbound_sessions(&caller.key(), LIST_CONVERSATIONS)
            .await?;
        let mut conversations = Vec::new();
        for s in sessions {
            let exchanges = self.journal().session_tasks(&s.session_id).await?.len();
            conversations.push(Conversation {
                context_id: s.context_id.to_string(),
                peer: peer_of(&s),
                session_id: s.session_id.to_string(),
                exchanges,
                created_at: format_time(s.created_at),
                updated_at: format_time(s.updated_at),
            });
        }
        let totals = PeerTotals {
            peers: peers.len(),
            enabled: peers.iter().filter(|p| p.enabled).count(),
            calls: peers.iter().map(|p| p.metrics.calls).sum(),
            failures: peers.iter().map(|p| p.metrics.failures).sum(),
        };
        Ok(Listing {
            peers,
            conversations,
            totals,
        })
    }

    /// `a2a_history`: one outbound conversation of the caller (the most recent one under this
    /// contextId, or the one with `peer`), its last `limit` messages.
    pub async fn history(
        &self,
        caller: &Principal,
        context_id: &str,
        peer: Option<&str>,
        limit: Option<usize>,
    ) -> Result<History, PeerError> {
        let limit = match limit {
            None => 50,
            Some(n @ 1..=MAX_HISTORY) => n,
            Some(_) => {
                return Err(PeerError::Invalid {
                    field: "limit",
                    message: format!("limit: between 1 and {MAX_HISTORY}"),
                });
            }
        };
        let sessions = self
            .journal()
            .outbound_by_context(&caller.key(), context_id.trim())
            .await?;
        let chosen = match peer {
            Some(p) => sessions.iter().find(|s| peer_of(s) == p),
            None => sessions.first(),
        };
        let Some(session) = chosen.cloned() else {
            return Err(PeerError::NotFound(format!(
                "no saved conversation with context_id {context_id:?}{}",
                peer.map(|p| format!(" and peer {p:?}")).unwrap_or_default()
            )));
        };
        let mut events = Vec::new();
        let mut after = 0;
        loop {
            let page = self
                .journal()
                .session_events(&session.session_id, after, 1000)
                .await?;
            let Some(last) = page.last() else { break };
            after = last.seq;
            events.extend(page);
        }
        let mut messages = fold_messages(&events);
        let total = messages.len();
        if messages.len() > limit {
            messages.drain(..messages.len() - limit);
        }
        Ok(History {
            context_id: session.context_id.to_string(),
            peer: peer_of(&session),
            session_path: format!("/api/v1/sessions/{}", session.session_id),
            session_id: session.session_id.to_string(),
            messages,
            total_messages: total,
            other_peers: sessions
                .iter()
                .filter(|s| s.session_id != session.session_id)
                .map(peer_of)
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use chrono::Utc;
    use sextant_core::a2a::{Message, Part, Role, TaskState};

    use super::*;
    use sextant_core::parts::artifact;

    fn ev(seq: i64, task: &str, body: EventBody) -> JournalEvent {
        JournalEvent {
            session_id: "s".into(),
            seq,
            task_id: Some(task.into()),
            at: Utc::now(),
            body,
        }
    }

    fn with_meta(text: &str, meta: Value) -> Message {
        let mut m = Message::new(Role::Agent, vec![Part::text(text)]);
        m.metadata = serde_json::from_value(meta).ok();
        m
    }

    #[test]
    fn exchanges_fold_into_messages() {
        let sent = |t: &str| EventBody::TaskCreated {
            message: Message::new(Role::User, vec![Part::text(t)]),
        };
        let events = vec![
            ev(1, "t1", sent("hello")),
            ev(
                2,
                "t1",
                EventBody::TurnStarted {
                    through: None,
                    working: false,
                },
            ),
            ev(
                3,
                "t1",
                EventBody::Artifact {
                    artifact: artifact("a", "reply", vec![Part::text("echo: hello")]),
                    append: false,
                    last_chunk: true,
                },
            ),
            ev(
                4,
                "t1",
                EventBody::TaskState {
                    state: TaskState::Completed,
                    message: Some(with_meta(
                        "p answered",
                        json!({"peer": "p", "remoteTaskId": "r1", "remoteTaskState": "TASK_STATE_INPUT_REQUIRED"}),
                    )),
                },
            ),
            ev(5, "t2", sent(&"x".repeat(HISTORY_CHARS + 5))),
            ev(
                6,
                "t2",
                EventBody::TaskState {
                    state: TaskState::Failed,
                    message: Some(with_meta("p: could not connect", json!({"peer": "p"}))),
                },
            ),
        ];
        let m = fold_messages(&events);
        assert_eq!(m.len(), 4);
        assert_eq!((m[0].role, m[0].text.as_str()), ("user", "hello"));
        assert_eq!(m[1].text, "echo: hello");
        assert_eq!(m[1].task_id.as_deref(), Some("r1"));
        assert_eq!(
            m[1].task_state.as_deref(),
            Some("TASK_STATE_INPUT_REQUIRED")
        );
        assert!(m[2].truncated);
        assert!(m[3].error);
        assert_eq!(m[3].text, "p: could not connect");
    }
}
