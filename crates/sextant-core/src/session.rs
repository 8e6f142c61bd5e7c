//! The labels the journal stores beside Sessions and tasks and the console shows: what started
//! a Session ([`Origin`]) and how a task ended ([`TaskOutcome`]). Each is stored as its word
//! (`as_str`), which is also its serde name, and derives ts-rs, so the UI's bindings get the
//! union of the words.

use serde::{Deserialize, Serialize};

/// What started a Session: the journal stores it when the Session is created and never
/// changes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum Origin {
    /// A message to one of Sextant's Agents, over any of its bindings (A2A JSON-RPC,
    /// HTTP+JSON, gRPC, MCP) or from the console.
    A2a,
    /// A Run of a personal schedule.
    Schedule,
    /// A conversation Sextant holds with a remote peer for its caller (the `a2a` engine or
    /// the peers API calling out).
    Outbound,
}

impl Origin {
    /// Every origin.
    pub const ALL: [Origin; 3] = [Origin::A2a, Origin::Schedule, Origin::Outbound];

    /// Its word, as stored and sent (`schedule`).
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::A2a => "a2a",
            Origin::Schedule => "schedule",
            Origin::Outbound => "outbound",
        }
    }

    /// The origin a word names; `None` for any other text.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|o| o.as_str() == s)
    }
}

/// What happened to an ended task, in the console's words: more than its A2A state says (a
/// declined shell command completes). The journal decides it when the task ends
/// (`sextant_journal::queries::tasks::outcome`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum TaskOutcome {
    Completed,
    Failed,
    Canceled,
    Rejected,
    /// A person answered no (`decline`), and the task ended on it.
    Declined,
    /// Nobody answered in time; the engine's default applied and the task ended on it.
    Expired,
}

impl TaskOutcome {
    /// Every outcome, in the order filters list them.
    pub const ALL: [TaskOutcome; 6] = [
        TaskOutcome::Completed,
        TaskOutcome::Failed,
        TaskOutcome::Canceled,
        TaskOutcome::Rejected,
        TaskOutcome::Declined,
        TaskOutcome::Expired,
    ];

    /// Its word, as stored and sent (`declined`).
    pub fn as_str(self) -> &'static str {
        match self {
            TaskOutcome::Completed => "completed",
            TaskOutcome::Failed => "failed",
            TaskOutcome::Canceled => "canceled",
            TaskOutcome::Rejected => "rejected",
            TaskOutcome::Declined => "declined",
            TaskOutcome::Expired => "expired",
        }
    }

    /// The outcome a word names; `None` for any other text.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|o| o.as_str() == s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ts_rs::TS;

    /// The union a binding names, from the words serde writes.
    fn union(words: impl IntoIterator<Item = &'static str>) -> String {
        words
            .into_iter()
            .map(|w| format!("\"{w}\""))
            .collect::<Vec<_>>()
            .join(" | ")
    }

    #[test]
    fn origins_round_trip_their_stored_word() {
        for o in Origin::ALL {
            assert_eq!(Origin::parse(o.as_str()), Some(o));
            assert_eq!(serde_json::to_value(o).unwrap(), o.as_str());
            assert_eq!(
                serde_json::from_value::<Origin>(o.as_str().into()).unwrap(),
                o
            );
        }
        assert_eq!(
            Origin::inline(&ts_rs::Config::default()),
            union(Origin::ALL.map(Origin::as_str))
        );
        // What a newer Sextant may write names no origin here: the journal leaves such a
        // Session out of its lists and labels it with none (`sextant_journal::stored`).
        assert_eq!(Origin::parse("mcp"), None);
        assert_eq!(Origin::parse("A2A"), None);
        assert!(serde_json::from_value::<Origin>("mcp".into()).is_err());
    }

    #[test]
    fn task_outcomes_round_trip_their_stored_word() {
        for o in TaskOutcome::ALL {
            assert_eq!(TaskOutcome::parse(o.as_str()), Some(o));
            assert_eq!(serde_json::to_value(o).unwrap(), o.as_str());
            assert_eq!(
                serde_json::from_value::<TaskOutcome>(o.as_str().into()).unwrap(),
                o
            );
        }
        assert_eq!(
            TaskOutcome::inline(&ts_rs::Config::default()),
            union(TaskOutcome::ALL.map(TaskOutcome::as_str))
        );
        // A word this Sextant does not know names no outcome (the journal reads the task as
        // one whose outcome is not recorded).
        assert_eq!(TaskOutcome::parse("abandoned"), None);
        assert_eq!(TaskOutcome::parse("Completed"), None);
    }
}
