//! The fold from journal events to what readers see: an A2A [`Task`] and public transcript
//! [`Block`]s.
//!
//! This is the only place that decides what a Task looks like. The journal crate caches the
//! resulting state for listing, and its rebuild check runs this same fold.

use std::collections::HashMap;

use a2a::{Artifact, Message, Part, PartContent, Task, TaskState, TaskStatus};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::event::{EventBody, JournalEvent, is_terminal};
use crate::interaction::{Answer, Interaction};

/// A Task folded from its journal events.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskFold {
    pub task_id: String,
    pub context_id: String,
    pub session_id: String,
    pub state: TaskState,
    pub status_message: Option<Message>,
    pub status_at: Option<DateTime<Utc>>,
    pub history: Vec<Message>,
    /// For each `history` message, whether the Agent said it (a status message or reply)
    /// rather than a caller (an input, which keeps the role it was sent with, `ROLE_AGENT`
    /// included).
    pub history_from_agent: Vec<bool>,
    pub artifacts: Vec<Artifact>,
    /// Set when the agent answered with a Message rather than task output.
    pub reply: Option<Message>,
    /// Every interaction the task raised, in order, with its answer once given.
    pub interactions: Vec<(Interaction, Option<Answer>)>,
    /// The seq of the last event folded in.
    pub last_seq: i64,
}

impl TaskFold {
    /// An empty fold for a task; apply its events in seq order.
    pub fn new(task_id: &str, context_id: &str, session_id: &str) -> Self {
        Self {
            task_id: task_id.into(),
            context_id: context_id.into(),
            session_id: session_id.into(),
            state: TaskState::Unspecified,
            status_message: None,
            status_at: None,
            history: Vec::new(),
            history_from_agent: Vec::new(),
            artifacts: Vec::new(),
            reply: None,
            interactions: Vec::new(),
            last_seq: 0,
        }
    }

    /// The interaction waiting for an answer, if any.
    pub fn pending_interaction(&self) -> Option<&Interaction> {
        self.interactions
            .iter()
            .rev()
            .find(|(_, a)| a.is_none())
            .map(|(i, _)| i)
    }

    /// Folds a whole event list (events of other tasks are skipped).
    pub fn from_events<'a>(
        task_id: &str,
        context_id: &str,
        session_id: &str,
        events: impl IntoIterator<Item = &'a JournalEvent>,
    ) -> Self {
        let mut fold = Self::new(task_id, context_id, session_id);
        for ev in events {
            fold.apply(ev);
        }
        fold
    }

    /// Folds one event in. Events must come in seq order; an event already folded is ignored.
    pub fn apply(&mut self, ev: &JournalEvent) {
        if ev.task_id.as_deref() != Some(self.task_id.as_str()) || ev.seq <= self.last_seq {
            return;
        }
        self.last_seq = ev.seq;
        match &ev.body {
            EventBody::TaskCreated { message } => {
                self.state = TaskState::Submitted;
                self.status_message = None;
                self.status_at = Some(ev.at);
                self.history.push(message.clone());
                self.history_from_agent.push(false);
            }
            EventBody::InputAccepted { message } => {
                self.history.push(message.clone());
                self.history_from_agent.push(false);
            }
            EventBody::TaskState { .. } | EventBody::TurnStarted { working: true, .. } => {
                if let Some((state, message)) = ev.body.status() {
                    self.state = state.clone();
                    self.status_message = message.cloned();
                    self.status_at = Some(ev.at);
                    if let Some(m) = message {
                        self.history.push(m.clone());
                        self.history_from_agent.push(true);
                    }
                }
            }
            EventBody::Artifact {
                artifact, append, ..
            } => self.merge_artifact(artifact, *append),
            EventBody::Reply { message } => {
                self.reply = Some(message.clone());
                self.history.push(message.clone());
                self.history_from_agent.push(true);
            }
            EventBody::TurnStarted { .. } => {}
            EventBody::InteractionRaised { interaction } => {
                self.interactions.push((interaction.clone(), None));
            }
            EventBody::InteractionAnswered { answer } => {
                if let Some((_, slot)) = self
                    .interactions
                    .iter_mut()
                    .find(|(i, a)| i.interaction_id == answer.interaction_id && a.is_none())
                {
                    *slot = Some(answer.clone());
                }
            }
        }
    }

    fn merge_artifact(&mut self, chunk: &Artifact, append: bool) {
        let existing = self
            .artifacts
            .iter_mut()
            .find(|a| a.artifact_id == chunk.artifact_id);
        match existing {
            Some(a) if append => {
                for part in &chunk.parts {
                    // Text deltas join the previous text part instead of piling up parts.
                    match (a.parts.last_mut(), &part.content) {
                        (
                            Some(Part {
                                content: PartContent::Text(prev),
                                ..
                            }),
                            PartContent::Text(t),
                        ) if part.metadata.is_none() => prev.push_str(t),
                        _ => a.parts.push(part.clone()),
                    }
                }
            }
            Some(a) => *a = chunk.clone(),
            None => self.artifacts.push(chunk.clone()),
        }
    }

    /// Whether the task has reached a terminal state.
    pub fn is_terminal(&self) -> bool {
        is_terminal(&self.state)
    }

    /// The A2A Task as a reader with these options sees it.
    pub fn to_task(&self, opts: &ViewOptions) -> Task {
        let mut status_message = self.status_message.clone();
        let mut artifacts = self.artifacts.clone();
        if let Some(link) = &opts.session_link
            && self.state == TaskState::Completed
        {
            add_session_link(&mut artifacts, &mut status_message, link);
        }
        let convert = |parts: &mut Vec<Part>| convert_parts(parts, &opts.output_modes);
        for a in &mut artifacts {
            convert(&mut a.parts);
        }
        if let Some(m) = &mut status_message {
            convert(&mut m.parts);
        }
        let history = match opts.history_length {
            Some(0) => None,
            n => {
                let mut h: Vec<Message> = self.history.clone();
                // Only the Agent's output is rendered for the caller's output modes; inputs
                // stay as sent, whatever role they name.
                for (m, _) in h
                    .iter_mut()
                    .zip(&self.history_from_agent)
                    .filter(|(_, agent)| **agent)
                {
                    convert(&mut m.parts);
                }
                if let Some(n) = n {
                    let n = n as usize;
                    if h.len() > n {
                        h.drain(..h.len() - n);
                    }
                }
                Some(h)
            }
        };
        let mut metadata = HashMap::new();
        metadata.insert(
            "sessionId".to_string(),
            Value::String(self.session_id.clone()),
        );
        if let Some(url) = &opts.session_url {
            metadata.insert("sessionUrl".to_string(), Value::String(url.clone()));
        }
        Task {
            id: self.task_id.clone(),
            context_id: self.context_id.clone(),
            status: TaskStatus {
                state: self.state.clone(),
                message: status_message,
                timestamp: self.status_at,
            },
            artifacts: (opts.include_artifacts && !artifacts.is_empty()).then_some(artifacts),
            history,
            metadata: Some(metadata),
        }
    }
}

/// How a reader wants a Task rendered.
#[derive(Debug, Clone, Default)]
pub struct ViewOptions {
    /// `None` = everything; `Some(0)` = no history; `Some(n)` = the last n messages.
    pub history_length: Option<u32>,
    /// ListTasks leaves artifacts out unless asked.
    pub include_artifacts: bool,
    /// Output modes the caller accepts (empty = anything).
    pub output_modes: OutputModes,
    /// The Session's console URL, also written as a `Session: <url>` line at the end of a
    /// completed task's text result (the Agent's `session_link`, off by default): into the
    /// last artifact with text, else into a status message that has text; never a message of
    /// its own (a client that reads the status message first would show only the link).
    pub session_link: Option<String>,
    /// The Session's console URL, put into the task metadata (`sessionUrl`): where a reader
    /// finds the link, whatever `session_link` says.
    pub session_url: Option<String>,
}

/// Which result formats the caller accepts, from `acceptedOutputModes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputModes {
    /// No preference: parts are returned as the agent produced them.
    #[default]
    Any,
    /// Text only: data parts are rendered as JSON text.
    Text,
    /// JSON only: text parts become data parts holding the string.
    Json,
}

impl OutputModes {
    /// Reads `acceptedOutputModes`. `None` means the list names no format Sextant can produce.
    pub fn from_accepted(modes: &[String]) -> Option<Self> {
        if modes.is_empty() {
            return Some(Self::Any);
        }
        let has = |want: &str| {
            modes.iter().any(|m| {
                let m = m
                    .split(';')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .to_ascii_lowercase();
                m == want || m == "*/*"
            })
        };
        match (has("text/plain"), has("application/json")) {
            (true, true) => Some(Self::Any),
            (true, false) => Some(Self::Text),
            (false, true) => Some(Self::Json),
            (false, false) => None,
        }
    }
}

/// Converts result parts into the one format the caller accepts, keeping their content.
pub fn convert_parts(parts: &mut [Part], modes: &OutputModes) {
    for part in parts.iter_mut() {
        match (modes, &part.content) {
            (OutputModes::Text, PartContent::Data(v)) => {
                part.content = PartContent::Text(
                    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string()),
                );
                part.media_type = Some("text/plain".into());
            }
            (OutputModes::Json, PartContent::Text(t)) => {
                part.content = PartContent::Data(Value::String(t.clone()));
                part.media_type = Some("application/json".into());
            }
            _ => {}
        }
    }
}

/// See [`ViewOptions::session_link`].
fn add_session_link(artifacts: &mut [Artifact], status: &mut Option<Message>, link: &str) {
    let line = Part::text(format!("\n\nSession: {link}"));
    let text_artifact = artifacts.iter_mut().rev().find(|a| {
        a.parts
            .iter()
            .any(|p| matches!(p.content, PartContent::Text(_)))
    });
    if let Some(a) = text_artifact {
        a.parts.push(line);
    } else if let Some(m) = status
        && m.parts
            .iter()
            .any(|p| matches!(p.content, PartContent::Text(_)))
    {
        m.parts.push(line);
    }
}

/// The A2A `StreamResponse` an event is to a task's subscribers (SSE streams and push
/// notifications alike), if it is one: a status change (`statusUpdate`), an artifact or a
/// chunk of one (`artifactUpdate`), a direct answer (`message`). Parts are converted to the
/// caller's output `modes`. Inputs, a turn's start without a state change and interactions are
/// none (the state change that follows a raised interaction carries it).
pub fn stream_response(
    ev: &JournalEvent,
    task_id: &str,
    context_id: &str,
    modes: &OutputModes,
) -> Option<Value> {
    let field = |k: &str, v: Value| {
        let mut o = serde_json::Map::new();
        o.insert(k.into(), v);
        Value::Object(o)
    };
    match &ev.body {
        EventBody::TaskState { .. } | EventBody::TurnStarted { working: true, .. } => {
            let (state, message) = ev.body.status()?;
            let mut message = message.cloned();
            if let Some(m) = &mut message {
                convert_parts(&mut m.parts, modes);
            }
            let status = TaskStatus {
                state: state.clone(),
                message,
                timestamp: Some(ev.at),
            };
            Some(field(
                "statusUpdate",
                serde_json::json!({
                    "taskId": task_id, "contextId": context_id, "status": status,
                }),
            ))
        }
        EventBody::Artifact {
            artifact,
            append,
            last_chunk,
        } => {
            let mut artifact = artifact.clone();
            convert_parts(&mut artifact.parts, modes);
            let mut u = serde_json::json!({
                "taskId": task_id, "contextId": context_id, "artifact": artifact,
            });
            if *append {
                u["append"] = Value::Bool(true);
            }
            if *last_chunk {
                u["lastChunk"] = Value::Bool(true);
            }
            Some(field("artifactUpdate", u))
        }
        EventBody::Reply { message } => Some(field(
            "message",
            serde_json::to_value(message).unwrap_or(Value::Null),
        )),
        EventBody::TaskCreated { .. }
        | EventBody::InputAccepted { .. }
        | EventBody::TurnStarted { working: false, .. }
        | EventBody::InteractionRaised { .. }
        | EventBody::InteractionAnswered { .. } => None,
    }
}

/// One entry of a Session's public transcript. Keys are camelCase like the rest of the wire.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
#[serde(rename_all = "camelCase")]
pub struct Block {
    pub seq: i64,
    pub at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub task_id: Option<String>,
    #[serde(flatten)]
    pub kind: BlockKind,
}

/// What a transcript block shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
#[serde(
    tag = "kind",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum BlockKind {
    /// Something the caller sent.
    UserInput { message_id: String, text: String },
    /// Text the agent produced. `append` continues the previous agent_text block of the task.
    AgentText {
        text: String,
        append: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        artifact: Option<String>,
    },
    /// Non-text output (data, files), summarised.
    AgentOutput { artifact: String, parts: Vec<Value> },
    /// The engine asked for a decision (public view: no engine routing data).
    Interaction { interaction: Box<Interaction> },
    /// The decision was answered: which option, by whom, and why.
    Answer {
        interaction_id: String,
        option: String,
        answered_by: String,
        expired: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        reason: Option<String>,
    },
    /// The task changed state; `text` is the agent's status message, if any.
    State {
        #[ts(as = "crate::event::TaskStateName")]
        state: TaskState,
        #[serde(skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        text: Option<String>,
    },
}

/// The text of a message's text parts, joined.
pub fn message_text(m: &Message) -> String {
    parts_text(&m.parts)
}

fn parts_text(parts: &[Part]) -> String {
    parts
        .iter()
        .filter_map(|p| p.as_text())
        .collect::<Vec<_>>()
        .join("")
}

fn part_summary(p: &Part) -> Option<Value> {
    let mut v = match &p.content {
        PartContent::Text(_) => return None,
        PartContent::Data(d) => serde_json::json!({ "data": d }),
        PartContent::Url(u) => serde_json::json!({ "url": u }),
        PartContent::Raw(b) => serde_json::json!({ "bytes": b.len() }),
    };
    if let Some(f) = &p.filename {
        v["filename"] = Value::String(f.clone());
    }
    if let Some(m) = &p.media_type {
        v["mediaType"] = Value::String(m.clone());
    }
    Some(v)
}

/// The public transcript blocks of one event (an event may yield none or several).
pub fn blocks(ev: &JournalEvent) -> Vec<Block> {
    let mk = |kind| Block {
        seq: ev.seq,
        at: crate::ids::format_time(ev.at),
        task_id: ev.task_id.clone(),
        kind,
    };
    match &ev.body {
        EventBody::TaskCreated { message } | EventBody::InputAccepted { message } => {
            vec![mk(BlockKind::UserInput {
                message_id: message.message_id.clone(),
                text: message_text(message),
            })]
        }
        EventBody::TaskState { .. } | EventBody::TurnStarted { working: true, .. } => ev
            .body
            .status()
            .map(|(state, message)| {
                mk(BlockKind::State {
                    state: state.clone(),
                    text: message.map(message_text).filter(|t| !t.is_empty()),
                })
            })
            .into_iter()
            .collect(),
        EventBody::TurnStarted { .. } => Vec::new(),
        EventBody::InteractionRaised { interaction } => {
            vec![mk(BlockKind::Interaction {
                interaction: Box::new(interaction.public()),
            })]
        }
        EventBody::InteractionAnswered { answer } => vec![mk(BlockKind::Answer {
            interaction_id: answer.interaction_id.clone(),
            option: answer.option.clone(),
            answered_by: answer.answered_by.clone(),
            expired: answer.expired,
            reason: answer.reason.clone(),
        })],
        EventBody::Reply { message } => vec![mk(BlockKind::AgentText {
            text: message_text(message),
            append: false,
            artifact: None,
        })],
        EventBody::Artifact {
            artifact, append, ..
        } => {
            let mut out = Vec::new();
            let text = parts_text(&artifact.parts);
            if !text.is_empty() {
                out.push(mk(BlockKind::AgentText {
                    text,
                    append: *append,
                    artifact: artifact
                        .name
                        .clone()
                        .or_else(|| Some(artifact.artifact_id.clone())),
                }));
            }
            let others: Vec<Value> = artifact.parts.iter().filter_map(part_summary).collect();
            if !others.is_empty() {
                out.push(mk(BlockKind::AgentOutput {
                    artifact: artifact
                        .name
                        .clone()
                        .unwrap_or_else(|| artifact.artifact_id.clone()),
                    parts: others,
                }));
            }
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use a2a::Role;

    fn ev(seq: i64, body: EventBody) -> JournalEvent {
        JournalEvent {
            session_id: "s".into(),
            seq,
            task_id: Some("t".into()),
            at: DateTime::from_timestamp(1_700_000_000 + seq, 0).unwrap(),
            body,
        }
    }

    fn user(text: &str) -> Message {
        let mut m = Message::new(Role::User, vec![Part::text(text)]);
        m.message_id = format!("m-{text}");
        m
    }

    fn chunk(text: &str, append: bool) -> EventBody {
        EventBody::Artifact {
            artifact: Artifact {
                artifact_id: "a1".into(),
                name: Some("response".into()),
                description: None,
                parts: vec![Part::text(text)],
                metadata: None,
                extensions: None,
            },
            append,
            last_chunk: false,
        }
    }

    fn sample() -> TaskFold {
        let events = vec![
            ev(
                1,
                EventBody::TaskCreated {
                    message: user("hi"),
                },
            ),
            ev(
                2,
                EventBody::TaskState {
                    state: TaskState::Working,
                    message: None,
                },
            ),
            ev(3, chunk("hel", false)),
            ev(4, chunk("lo", true)),
            ev(
                5,
                EventBody::TaskState {
                    state: TaskState::Completed,
                    message: None,
                },
            ),
        ];
        TaskFold::from_events("t", "c", "s", &events)
    }

    #[test]
    fn folds_state_history_and_appended_text() {
        let f = sample();
        assert_eq!(f.state, TaskState::Completed);
        assert_eq!(f.last_seq, 5);
        assert_eq!(f.history.len(), 1);
        assert_eq!(f.artifacts.len(), 1);
        assert_eq!(parts_text(&f.artifacts[0].parts), "hello");
        let task = f.to_task(&ViewOptions {
            include_artifacts: true,
            ..Default::default()
        });
        assert_eq!(task.metadata.unwrap()["sessionId"], "s");
    }

    /// A turn's start that sets `working` reads as the two events journals before it have
    /// (`turn_started`, then `task_state` working, at the same time): the same Task and the
    /// same transcript blocks.
    #[test]
    fn a_working_turn_start_reads_as_start_and_state() {
        let created = ev(
            1,
            EventBody::TaskCreated {
                message: user("hi"),
            },
        );
        let start = |working| {
            ev(
                2,
                EventBody::TurnStarted {
                    through: Some(1),
                    working,
                },
            )
        };
        let mut state = ev(
            3,
            EventBody::TaskState {
                state: TaskState::Working,
                message: None,
            },
        );
        state.at = start(false).at;
        let legacy = [created.clone(), start(false), state];
        let folded = [created, start(true)];
        let view = ViewOptions {
            include_artifacts: true,
            ..Default::default()
        };
        let old = TaskFold::from_events("t", "c", "s", &legacy);
        let new = TaskFold::from_events("t", "c", "s", &folded);
        assert_eq!(new.state, TaskState::Working);
        assert_eq!(new.to_task(&view), old.to_task(&view));
        let kinds = |evs: &[JournalEvent]| -> Vec<(String, BlockKind)> {
            evs.iter()
                .flat_map(blocks)
                .map(|b| (b.at, b.kind))
                .collect()
        };
        assert_eq!(kinds(&folded), kinds(&legacy));
        assert!(matches!(
            kinds(&folded).last(),
            Some((
                _,
                BlockKind::State {
                    state: TaskState::Working,
                    text: None
                }
            ))
        ));
    }

    #[test]
    fn replayed_or_foreign_events_are_ignored() {
        let mut f = sample();
        let before = f.clone();
        f.apply(&ev(3, chunk("again", true)));
        let mut foreign = ev(9, chunk("x", true));
        foreign.task_id = Some("other".into());
        f.apply(&foreign);
        assert_eq!(f, before);
    }

    #[test]
    fn history_length_and_artifact_visibility() {
        let f = sample();
        let none = f.to_task(&ViewOptions {
            history_length: Some(0),
            ..Default::default()
        });
        assert!(none.history.is_none());
        assert!(none.artifacts.is_none());
        let one = f.to_task(&ViewOptions {
            history_length: Some(1),
            ..Default::default()
        });
        assert_eq!(one.history.unwrap().len(), 1);
    }

    #[test]
    fn session_link_ends_completed_text_results() {
        let f = sample();
        let t = f.to_task(&ViewOptions {
            include_artifacts: true,
            session_link: Some("http://x/sessions/s".into()),
            ..Default::default()
        });
        let parts = &t.artifacts.unwrap()[0].parts;
        assert_eq!(parts[0].as_text(), Some("hello"));
        assert!(parts[1].as_text().unwrap().ends_with("http://x/sessions/s"));
        // Without text to end, the link makes no status message of its own.
        let events = [
            ev(
                1,
                EventBody::TaskCreated {
                    message: user("hi"),
                },
            ),
            ev(
                2,
                EventBody::TaskState {
                    state: TaskState::Completed,
                    message: None,
                },
            ),
        ];
        let bare = TaskFold::from_events("t", "c", "s", &events).to_task(&ViewOptions {
            session_link: Some("http://x/sessions/s".into()),
            ..Default::default()
        });
        assert!(bare.status.message.is_none(), "{:?}", bare.status.message);
    }

    #[test]
    fn by_default_the_session_link_is_metadata_only() {
        let f = sample();
        let t = f.to_task(&ViewOptions {
            include_artifacts: true,
            session_url: Some("http://x/sessions/s".into()),
            ..Default::default()
        });
        let meta = t.metadata.unwrap();
        assert_eq!(meta["sessionUrl"], "http://x/sessions/s");
        let parts = &t.artifacts.unwrap()[0].parts;
        assert_eq!(parts.len(), 1, "the reply alone: {parts:?}");
        assert_eq!(parts[0].as_text(), Some("hello"));
        assert!(t.status.message.is_none(), "{:?}", t.status.message);
    }

    #[test]
    fn output_modes_convert_and_keep_content() {
        assert_eq!(OutputModes::from_accepted(&[]), Some(OutputModes::Any));
        assert_eq!(
            OutputModes::from_accepted(&["text/plain".into()]),
            Some(OutputModes::Text)
        );
        assert_eq!(
            OutputModes::from_accepted(&["application/json; charset=utf-8".into()]),
            Some(OutputModes::Json)
        );
        assert_eq!(OutputModes::from_accepted(&["image/png".into()]), None);
        let mut parts = vec![Part::data(serde_json::json!({"k": 1})), Part::text("t")];
        convert_parts(&mut parts, &OutputModes::Text);
        assert!(parts[0].as_text().unwrap().contains("\"k\": 1"));
        convert_parts(&mut parts, &OutputModes::Json);
        assert_eq!(
            parts[1].content,
            PartContent::Data(Value::String("t".into()))
        );
    }

    #[test]
    fn blocks_describe_events_publicly() {
        let b = blocks(&ev(
            1,
            EventBody::TaskCreated {
                message: user("hi"),
            },
        ));
        let v = serde_json::to_value(&b[0]).unwrap();
        assert_eq!(v["kind"], "user_input");
        assert_eq!(v["text"], "hi");
        assert_eq!(v["seq"], 1);
        let b = blocks(&ev(4, chunk("lo", true)));
        assert_eq!(
            b[0].kind,
            BlockKind::AgentText {
                text: "lo".into(),
                append: true,
                artifact: Some("response".into())
            }
        );
    }

    /// A caller's input that names ROLE_AGENT is still the caller's: kept as sent in the
    /// history, not rendered for output modes as the Agent's own messages are.
    #[test]
    fn an_input_sent_as_agent_stays_as_sent_in_the_history() {
        let mut input = user("ask");
        input.role = Role::Agent;
        let reply = Message::new(Role::Agent, vec![Part::text("answer")]);
        let f = TaskFold::from_events(
            "t",
            "c",
            "s",
            &[
                ev(1, EventBody::TaskCreated { message: input }),
                ev(2, EventBody::Reply { message: reply }),
            ],
        );
        assert_eq!(f.history_from_agent, [false, true]);
        let task = f.to_task(&ViewOptions {
            output_modes: OutputModes::Json,
            ..Default::default()
        });
        let h = task.history.unwrap();
        assert_eq!(h[0].role, Role::Agent, "the role as sent");
        assert_eq!(
            h[0].parts[0].as_text(),
            Some("ask"),
            "an input is not converted"
        );
        assert!(
            matches!(h[1].parts[0].content, PartContent::Data(_)),
            "the Agent's reply is"
        );
    }
}
