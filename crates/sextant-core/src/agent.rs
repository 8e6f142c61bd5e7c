//! A managed Agent: its public description and the engine that executes its turns.
//!
//! Agents are declared in `agents.toml` in the data dir (plus the built-in ones) and mirrored into
//! the journal's `agents` table at start-up so Sessions can reference them.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// One skill as advertised on the Agent's card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillSpec {
    pub id: String,
    pub name: String,
    pub description: String,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub examples: Vec<String>,
}

/// A managed Agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentSpec {
    /// URL-safe id: lowercase letters, digits, `-` and `_`, at most 64 characters.
    pub id: String,
    pub name: String,
    pub description: String,
    #[serde(default)]
    pub skills: Vec<SkillSpec>,
    pub engine: EngineSpec,
    /// Whether text results end with a link to the Session in the console (default true).
    #[serde(default = "yes")]
    pub session_link: bool,
    /// Whether a messageId names one message (default true): an identical retry returns the
    /// first task and creates nothing, and different content under the same id is refused.
    /// The A2A TCK uses messageIds as behaviour keys and sends the same one for distinct
    /// messages (even identical ones it expects to create new tasks), so the conformance Agent
    /// turns this off: there every message is a new input.
    #[serde(default = "yes")]
    pub dedupe_message_ids: bool,
}

fn yes() -> bool {
    true
}

/// How an Agent's turns are executed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum EngineSpec {
    /// Replies with the input text. Built in; useful as a connectivity check and for benchmarks.
    Echo,
    /// The a2a-tck system-under-test behaviour contract (see `sextant-runtime`'s conformance engine).
    Conformance,
    /// Runs a local command per turn, speaking the JSON-lines engine protocol (docs/engine-protocol.md).
    Exec {
        /// Program and arguments; no shell is involved.
        command: Vec<String>,
        /// Working directory for the command (default: the data dir's `work/` folder).
        #[serde(default)]
        working_dir: Option<PathBuf>,
        /// Extra environment variables.
        #[serde(default)]
        env: BTreeMap<String, String>,
        /// A turn that runs longer than this is stopped and the task fails (default 300 s).
        #[serde(default = "default_timeout")]
        timeout_secs: u64,
    },
}

fn default_timeout() -> u64 {
    300
}

impl EngineSpec {
    /// The engine kind as stored and shown.
    pub fn kind(&self) -> &'static str {
        match self {
            EngineSpec::Echo => "echo",
            EngineSpec::Conformance => "conformance",
            EngineSpec::Exec { .. } => "exec",
        }
    }
}

impl AgentSpec {
    /// Checks the parts a user writes by hand; the message names the field.
    pub fn validate(&self) -> Result<(), String> {
        let id_ok = !self.id.is_empty()
            && self.id.len() <= 64
            && self
                .id
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
        if !id_ok {
            return Err(format!(
                "agent id {:?}: use 1-64 lowercase letters, digits, '-' or '_'",
                self.id
            ));
        }
        if self.name.trim().is_empty() {
            return Err(format!("agent {:?}: name must not be empty", self.id));
        }
        if self.description.trim().is_empty() {
            return Err(format!(
                "agent {:?}: description must not be empty",
                self.id
            ));
        }
        if let EngineSpec::Exec {
            command,
            timeout_secs,
            ..
        } = &self.engine
        {
            if command.first().is_none_or(|p| p.trim().is_empty()) {
                return Err(format!(
                    "agent {:?}: engine.command must name a program",
                    self.id
                ));
            }
            if *timeout_secs == 0 {
                return Err(format!(
                    "agent {:?}: engine.timeout_secs must be > 0",
                    self.id
                ));
            }
        }
        Ok(())
    }

    /// The built-in echo Agent.
    pub fn echo() -> Self {
        Self {
            id: "echo".into(),
            name: "Echo".into(),
            description: "Replies with the text it receives. Built into Sextant.".into(),
            skills: vec![SkillSpec {
                id: "echo".into(),
                name: "Echo".into(),
                description: "Returns the input text unchanged.".into(),
                tags: vec!["echo".into(), "test".into()],
                examples: vec!["hello".into()],
            }],
            engine: EngineSpec::Echo,
            session_link: true,
            dedupe_message_ids: true,
        }
    }

    /// The built-in conformance test Agent (enabled by `sextant serve --conformance`).
    pub fn conformance() -> Self {
        Self {
            id: "conformance".into(),
            name: "Sextant conformance agent".into(),
            description: "Implements the A2A TCK system-under-test behaviours.".into(),
            skills: vec![SkillSpec {
                id: "tck".into(),
                name: "TCK behaviours".into(),
                description: "Behaviour chosen by messageId prefix or first text part.".into(),
                tags: vec!["conformance".into(), "test".into()],
                examples: vec!["tck-complete-task".into()],
            }],
            engine: EngineSpec::Conformance,
            // The TCK compares result texts exactly; a trailing link would change them.
            session_link: false,
            dedupe_message_ids: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_agents_parse_from_toml_shape() {
        let v: AgentSpec = serde_json::from_value(serde_json::json!({
            "id": "coder", "name": "Coder", "description": "d",
            "engine": {"kind": "exec", "command": ["my-agent", "--json"]}
        }))
        .unwrap();
        assert!(v.validate().is_ok());
        assert!(matches!(
            v.engine,
            EngineSpec::Exec {
                timeout_secs: 300,
                ..
            }
        ));
        assert!(v.session_link);
    }

    #[test]
    fn validation_names_the_problem() {
        let mut a = AgentSpec::echo();
        a.id = "Bad Id".into();
        assert!(a.validate().unwrap_err().contains("agent id"));
        let mut b = AgentSpec::echo();
        b.engine = EngineSpec::Exec {
            command: vec![],
            working_dir: None,
            env: BTreeMap::new(),
            timeout_secs: 1,
        };
        assert!(b.validate().unwrap_err().contains("engine.command"));
    }
}
