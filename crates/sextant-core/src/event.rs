//! Session journal events.
//!
//! A Session's journal is an append-only sequence `(session_id, seq)` of [`EventBody`] values.
//! Everything a reader sees of a Task (state, history, artifacts, transcript) is folded from
//! these events by [`crate::projection`]. Bodies are stored as JSON; the `type` tag is also kept
//! in its own column so SQL can filter without parsing.

use a2a::{Artifact, Message, TaskState};

use crate::interaction::{Answer, Interaction};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// What happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventBody {
    /// A new Task was admitted with its first input (the commit point for "accepted").
    /// The task is `TASK_STATE_SUBMITTED` from here on.
    TaskCreated { message: Message },
    /// A further input for an existing, non-terminal Task (a follow-up with `taskId`).
    InputAccepted { message: Message },
    /// The Task's state changed. `message` is the agent's status message, if it sent one.
    TaskState {
        state: TaskState,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<Message>,
    },
    /// Output: a whole artifact, or a chunk of one (`append` continues the artifact with the
    /// same id; `last_chunk` marks its end).
    Artifact {
        artifact: Artifact,
        #[serde(default)]
        append: bool,
        #[serde(default)]
        last_chunk: bool,
    },
    /// The agent answered with a Message instead of task output (an A2A message response).
    Reply { message: Message },
    /// A turn began. It delivers the task's inputs up to seq `through` (inclusive) that no
    /// earlier turn delivered; without `through` (journals written before it existed), those
    /// journalled before this event.
    ///
    /// With `working`, the turn's start also moves the task to `TASK_STATE_WORKING`, as a
    /// `task_state` event without a message would: one journal row instead of two for what
    /// every turn begins with. Journals written before it have `turn_started` followed by that
    /// `task_state` event, and read the same.
    TurnStarted {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        through: Option<i64>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        working: bool,
    },
    /// The engine stopped for a decision. A `task_state` event (auth- or input-required)
    /// follows in the same transaction.
    InteractionRaised { interaction: Interaction },
    /// The decision was answered (by a person, or by expiry applying the default).
    InteractionAnswered { answer: Answer },
}

impl EventBody {
    /// The `type` tag, as stored in the journal's `kind` column.
    pub fn kind(&self) -> &'static str {
        match self {
            EventBody::TaskCreated { .. } => "task_created",
            EventBody::InputAccepted { .. } => "input_accepted",
            EventBody::TaskState { .. } => "task_state",
            EventBody::Artifact { .. } => "artifact",
            EventBody::Reply { .. } => "reply",
            EventBody::TurnStarted { .. } => "turn_started",
            EventBody::InteractionRaised { .. } => "interaction_raised",
            EventBody::InteractionAnswered { .. } => "interaction_answered",
        }
    }

    /// The state this event moves its task to, if it moves it.
    pub fn new_state(&self) -> Option<TaskState> {
        match self {
            EventBody::TaskCreated { .. } => Some(TaskState::Submitted),
            _ => self.status().map(|(state, _)| state.clone()),
        }
    }

    /// The status this event gives its task after it was created: its state and the agent's
    /// status message, if any (a `task_state` event, or a turn's start that sets `working`).
    pub fn status(&self) -> Option<(&TaskState, Option<&Message>)> {
        match self {
            EventBody::TaskState { state, message } => Some((state, message.as_ref())),
            EventBody::TurnStarted { working: true, .. } => Some((&TaskState::Working, None)),
            _ => None,
        }
    }
}

/// A committed journal event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JournalEvent {
    pub session_id: String,
    pub seq: i64,
    pub task_id: Option<String>,
    pub at: DateTime<Utc>,
    pub body: EventBody,
}

/// Whether a state ends a task for good.
pub fn is_terminal(state: &TaskState) -> bool {
    state.is_terminal()
}

/// Whether a state waits for someone (input or authorization) before the task can go on.
pub fn is_interrupted(state: &TaskState) -> bool {
    matches!(state, TaskState::InputRequired | TaskState::AuthRequired)
}

/// The short lowercase name of a state (`working`, `input-required`, ...), as 0.3 spelled it and
/// as the console shows it.
pub fn state_name(state: &TaskState) -> &'static str {
    match state {
        TaskState::Unspecified => "unknown",
        TaskState::Submitted => "submitted",
        TaskState::Working => "working",
        TaskState::Completed => "completed",
        TaskState::Failed => "failed",
        TaskState::Canceled => "canceled",
        TaskState::InputRequired => "input-required",
        TaskState::Rejected => "rejected",
        TaskState::AuthRequired => "auth-required",
    }
}

/// The wire name of a state (`TASK_STATE_WORKING`).
pub fn state_wire(state: &TaskState) -> String {
    match serde_json::to_value(state) {
        Ok(serde_json::Value::String(s)) => s,
        _ => "TASK_STATE_UNSPECIFIED".into(),
    }
}

/// Parses a wire state name.
pub fn parse_state(s: &str) -> Option<TaskState> {
    serde_json::from_value(serde_json::Value::String(s.to_string())).ok()
}

// `a2a-lf`'s `TaskState` has no ts-rs derive, and the orphan rule keeps one off it here. So a
// console API struct keeps its `TaskState` field (serde writes these same names) and tells
// ts-rs `#[ts(as = "sextant_core::event::TaskStateName")]`; the UI's bindings call it
// `TaskState`. `of`'s exhaustive match and a test keep the two in step.
/// A task's state as the console API sends it: the A2A 1.0 name [`state_wire`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[ts(export, rename = "TaskState")]
pub enum TaskStateName {
    #[serde(rename = "TASK_STATE_UNSPECIFIED")]
    Unspecified,
    #[serde(rename = "TASK_STATE_SUBMITTED")]
    Submitted,
    #[serde(rename = "TASK_STATE_WORKING")]
    Working,
    #[serde(rename = "TASK_STATE_COMPLETED")]
    Completed,
    #[serde(rename = "TASK_STATE_FAILED")]
    Failed,
    #[serde(rename = "TASK_STATE_CANCELED")]
    Canceled,
    #[serde(rename = "TASK_STATE_INPUT_REQUIRED")]
    InputRequired,
    #[serde(rename = "TASK_STATE_REJECTED")]
    Rejected,
    #[serde(rename = "TASK_STATE_AUTH_REQUIRED")]
    AuthRequired,
}

impl TaskStateName {
    /// The name of `state`. Exhaustive on purpose: a state `a2a-lf` adds fails to compile
    /// here instead of reaching the UI as a name its union lacks.
    pub fn of(state: &TaskState) -> Self {
        match state {
            TaskState::Unspecified => Self::Unspecified,
            TaskState::Submitted => Self::Submitted,
            TaskState::Working => Self::Working,
            TaskState::Completed => Self::Completed,
            TaskState::Failed => Self::Failed,
            TaskState::Canceled => Self::Canceled,
            TaskState::InputRequired => Self::InputRequired,
            TaskState::Rejected => Self::Rejected,
            TaskState::AuthRequired => Self::AuthRequired,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use a2a::{Part, Role};

    /// The TypeScript union names exactly what the wire carries for each state.
    #[test]
    fn task_state_names_are_the_wire_names() {
        use ts_rs::TS;
        let all = [
            TaskState::Unspecified,
            TaskState::Submitted,
            TaskState::Working,
            TaskState::Completed,
            TaskState::Failed,
            TaskState::Canceled,
            TaskState::InputRequired,
            TaskState::Rejected,
            TaskState::AuthRequired,
        ];
        let mut names = Vec::new();
        for s in &all {
            let name = serde_json::to_value(TaskStateName::of(s)).unwrap();
            assert_eq!(name, state_wire(s));
            names.push(format!("{name}"));
        }
        assert_eq!(
            TaskStateName::inline(&ts_rs::Config::default()),
            names.join(" | ")
        );
    }

    #[test]
    fn bodies_round_trip_with_a_type_tag() {
        let body = EventBody::TaskState {
            state: TaskState::Working,
            message: Some(Message::new(Role::Agent, vec![Part::text("thinking")])),
        };
        let v = serde_json::to_value(&body).unwrap();
        assert_eq!(v["type"], "task_state");
        assert_eq!(v["state"], "TASK_STATE_WORKING");
        let back: EventBody = serde_json::from_value(v).unwrap();
        assert_eq!(back, body);
        assert_eq!(body.kind(), "task_state");
    }

    /// A turn's start that sets `working` moves the task as a `task_state` event would, and
    /// is stored without the flag when it does not (as journals before it were).
    #[test]
    fn a_working_turn_start_is_a_state_change() {
        let start = EventBody::TurnStarted {
            through: Some(3),
            working: true,
        };
        assert_eq!(start.new_state(), Some(TaskState::Working));
        assert_eq!(start.status(), Some((&TaskState::Working, None)));
        let v = serde_json::to_value(&start).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"type": "turn_started", "through": 3, "working": true})
        );
        let legacy: EventBody =
            serde_json::from_value(serde_json::json!({"type": "turn_started", "through": 3}))
                .unwrap();
        assert_eq!(legacy.new_state(), None);
        assert_eq!(
            serde_json::to_value(&legacy).unwrap(),
            serde_json::json!({"type": "turn_started", "through": 3})
        );
    }

    #[test]
    fn state_names() {
        assert_eq!(
            state_wire(&TaskState::AuthRequired),
            "TASK_STATE_AUTH_REQUIRED"
        );
        assert_eq!(
            parse_state("TASK_STATE_COMPLETED"),
            Some(TaskState::Completed)
        );
        assert_eq!(parse_state("done"), None);
        assert_eq!(state_name(&TaskState::InputRequired), "input-required");
    }
}
