//! Interactions: decisions an engine stops for, answered by the person as themselves.
//!
//! An [`Interaction`] declares its options exactly as the engine gave them (ids, labels, order:
//! e.g. Codex's `accept`, `acceptForSession`, `decline`, `cancel`), never collapsed into a
//! generic approve. A binary tool approval puts its task in `TASK_STATE_AUTH_REQUIRED`; a
//! decision or form puts it in `TASK_STATE_INPUT_REQUIRED`. Raising and answering are journal
//! events; [`check_answer`] is the one rule that decides whether an answer is acceptable.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What kind of decision is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
#[serde(rename_all = "snake_case")]
pub enum InteractionKind {
    /// Approve or refuse a tool use (a command, a file change): `TASK_STATE_AUTH_REQUIRED`.
    ToolApproval,
    /// Pick one of several declared options: `TASK_STATE_INPUT_REQUIRED`.
    Decision,
    /// Fill in declared fields, then pick an option: `TASK_STATE_INPUT_REQUIRED`.
    Form,
}

/// One declared option.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
#[serde(rename_all = "camelCase")]
pub struct InteractionOption {
    /// The id sent back to the engine (e.g. `acceptForSession`).
    pub id: String,
    /// What a person reads.
    pub label: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// A single key the console binds to this option.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shortcut: Option<String>,
}

/// One declared form field.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
#[serde(rename_all = "camelCase")]
pub struct FormField {
    pub id: String,
    pub label: String,
    #[serde(default)]
    pub required: bool,
    /// Shown masked; never echoed in transcripts.
    #[serde(default)]
    pub secret: bool,
}

/// A pending decision, as journalled. Everything here is public except `engine_ref`, which
/// engines use to route the answer and which never leaves the server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ts_rs::TS)]
#[ts(export)]
#[serde(rename_all = "camelCase")]
pub struct Interaction {
    pub interaction_id: String,
    pub task_id: String,
    pub kind: InteractionKind,
    /// One line: what is being asked.
    pub title: String,
    /// The description (command, change, question), invisible characters escaped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The exact command a tool approval is about (never redacted: the person approves what
    /// runs; other readers get it through the outbound scrubber). Show [`Self::action`]'s
    /// `shown` form, which escapes invisible characters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The engine's working directory: for the person only (the task's status message, which
    /// remote callers read, leaves it out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Exactly what an answer approves, its digest and its escaped view. The engine runs only
    /// the action whose digest was approved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<Box<crate::action::ApprovedAction>>,
    /// Who sent the input this decision is about, when it is not the person (`peer alice`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// The options, in the engine's order and words.
    pub options: Vec<InteractionOption>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<FormField>,
    /// Whether a free-text reason may accompany the answer (it is returned to the engine).
    #[serde(default)]
    pub reason_allowed: bool,
    /// `turn` (this decision only) or `session` (the options include remembering it there).
    pub scope: String,
    /// After this, `default_option` is applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<DateTime<Utc>>,
    /// The option applied at expiry (e.g. `decline`).
    pub default_option: String,
    /// What an `acceptForSession` answer grants for the rest of the Session (e.g. the exact
    /// command), if the engine remembers such grants.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_key: Option<String>,
    /// Engine routing data (request ids). Server-side only.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    #[ts(skip)]
    pub engine_ref: Value,
}

impl Interaction {
    /// The option ids, in order.
    pub fn option_ids(&self) -> Vec<&str> {
        self.options.iter().map(|o| o.id.as_str()).collect()
    }

    /// The task state while this interaction waits.
    pub fn waiting_state(&self) -> crate::a2a::TaskState {
        match self.kind {
            InteractionKind::ToolApproval => crate::a2a::TaskState::AuthRequired,
            InteractionKind::Decision | InteractionKind::Form => {
                crate::a2a::TaskState::InputRequired
            }
        }
    }

    /// The public view (no `engine_ref`).
    pub fn public(&self) -> Interaction {
        Interaction {
            engine_ref: Value::Null,
            ..self.clone()
        }
    }
}

/// The person's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    pub interaction_id: String,
    /// One of the declared option ids.
    pub option: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Form values by field id.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub values: serde_json::Map<String, Value>,
    /// The answering request's id; a retry with the same id and answer is the same answer.
    pub message_id: String,
    /// Who answered (`Principal::display()`), or `expiry` when the default was applied.
    pub answered_by: String,
    /// Set when the expiry applied the default.
    #[serde(default)]
    pub expired: bool,
    /// The digest of the action this answer approves (the interaction's, when it had one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<String>,
}

/// Why an answer is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnswerRefusal {
    /// The option is not one the engine declared.
    UnknownOption { declared: Vec<String> },
    /// A required form field is missing, or a field that was not declared was sent.
    BadField(String),
    /// The interaction was answered already (by another request or by expiry).
    AlreadyAnswered,
    /// The interaction expired; its default was applied.
    Expired,
    /// The task is terminal.
    TaskTerminal,
    /// The answer names a digest that is not the one of the action asked about.
    ActionChanged { asked: String },
}

impl std::fmt::Display for AnswerRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AnswerRefusal::UnknownOption { declared } => {
                write!(
                    f,
                    "that option was not declared; choose one of: {}",
                    declared.join(", ")
                )
            }
            AnswerRefusal::BadField(why) => write!(f, "{why}"),
            AnswerRefusal::AlreadyAnswered => write!(f, "this interaction was already answered"),
            AnswerRefusal::Expired => {
                write!(
                    f,
                    "this interaction expired and its default option was applied"
                )
            }
            AnswerRefusal::TaskTerminal => write!(f, "the task has already ended"),
            AnswerRefusal::ActionChanged { asked } => write!(
                f,
                "the digest does not match the action asked about ({asked}); read the card again"
            ),
        }
    }
}

/// Checks an answer against its interaction (state checks are the caller's: pending, not
/// expired, task not terminal).
pub fn check_answer(
    i: &Interaction,
    option: &str,
    values: &serde_json::Map<String, Value>,
) -> Result<(), AnswerRefusal> {
    if !i.options.iter().any(|o| o.id == option) {
        return Err(AnswerRefusal::UnknownOption {
            declared: i.options.iter().map(|o| o.id.clone()).collect(),
        });
    }
    for f in &i.fields {
        let given = values.get(&f.id).is_some_and(|v| !v.is_null() && v != "");
        if f.required && !given {
            return Err(AnswerRefusal::BadField(format!(
                "field {:?} is required",
                f.id
            )));
        }
    }
    if let Some(k) = values
        .keys()
        .find(|k| !i.fields.iter().any(|f| f.id == **k))
    {
        return Err(AnswerRefusal::BadField(format!(
            "field {k:?} was not declared"
        )));
    }
    Ok(())
}

/// The option that approves an action for every future Run of the schedule whose Run asked
/// (see [`schedule_approval_option`]): offered only on the cards of a schedule's Runs.
pub const ACCEPT_FOR_SCHEDULE: &str = "acceptForSchedule";

/// The option a command approval adds when its task is a schedule's Run: run it, and run this
/// exact action (its digest) without asking in every later Run of that schedule, until the
/// schedule's prompt or Agent changes or the person revokes it. Its shortcut `s` is free of
/// the standard options' (`y`, `a`, `n`, `c`) and of the inbox's own keys.
pub fn schedule_approval_option(schedule_name: &str) -> InteractionOption {
    InteractionOption {
        id: ACCEPT_FOR_SCHEDULE.into(),
        label: format!(
            "Yes, and don't ask again for this command in any Run of schedule \u{201c}{schedule_name}\u{201d}"
        ),
        description: Some(
            "Until the schedule's prompt or Agent changes; revoke it on the schedule's page."
                .into(),
        ),
        shortcut: Some("s".into()),
    }
}

/// The standard options of a command approval, in Codex's order and words.
pub fn command_approval_options() -> Vec<InteractionOption> {
    let o = |id: &str, label: &str, key: &str| InteractionOption {
        id: id.into(),
        label: label.into(),
        description: None,
        shortcut: Some(key.into()),
    };
    vec![
        o("accept", "Yes, run it", "y"),
        o(
            "acceptForSession",
            "Yes, and don't ask again for this command in this session",
            "a",
        ),
        o(
            "decline",
            "No, and tell the agent what to do differently",
            "n",
        ),
        o("cancel", "No, and stop this task", "c"),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn approval() -> Interaction {
        Interaction {
            interaction_id: "i".into(),
            task_id: "t".into(),
            kind: InteractionKind::ToolApproval,
            title: "Run a command".into(),
            description: None,
            command: Some("ls".into()),
            cwd: None,
            action: None,
            from: None,
            options: command_approval_options(),
            fields: vec![],
            reason_allowed: true,
            scope: "turn".into(),
            expires_at: None,
            default_option: "decline".into(),
            grant_key: Some("ls".into()),
            engine_ref: serde_json::json!({"requestId": 7}),
        }
    }

    #[test]
    fn only_declared_options_are_accepted() {
        let i = approval();
        let none = serde_json::Map::new();
        assert!(check_answer(&i, "accept", &none).is_ok());
        let err = check_answer(&i, "approve", &none).unwrap_err();
        assert!(
            err.to_string()
                .contains("accept, acceptForSession, decline, cancel")
        );
        let mut extra = serde_json::Map::new();
        extra.insert("x".into(), Value::from(1));
        assert!(matches!(
            check_answer(&i, "accept", &extra),
            Err(AnswerRefusal::BadField(_))
        ));
    }

    #[test]
    fn the_schedule_option_has_its_own_shortcut() {
        let o = schedule_approval_option("Nightly");
        assert_eq!(o.id, ACCEPT_FOR_SCHEDULE);
        assert!(o.label.contains("\u{201c}Nightly\u{201d}"));
        let key = o.shortcut.expect("a shortcut");
        // Not another option's, nor one of the inbox's own keys (j/k move, x selects, u undoes).
        let taken: Vec<String> = command_approval_options()
            .into_iter()
            .filter_map(|o| o.shortcut)
            .chain(["j", "k", "x", "u", "g"].map(String::from))
            .collect();
        assert!(!taken.contains(&key), "{key} is taken");
    }

    #[test]
    fn public_view_hides_engine_routing_and_keys_are_camel_case() {
        let v = serde_json::to_value(approval().public()).unwrap();
        assert!(v.get("engineRef").is_none());
        assert_eq!(v["defaultOption"], "decline");
        assert_eq!(v["options"][1]["id"], "acceptForSession");
        assert_eq!(v["kind"], "tool_approval");
        assert_eq!(
            approval().waiting_state(),
            crate::a2a::TaskState::AuthRequired
        );
    }
}
