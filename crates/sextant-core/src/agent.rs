//! A managed Agent: its public description and the engine that executes its turns.
//!
//! Agents are declared in `agents.toml` in the data dir (plus the built-in ones) and mirrored into
//! the journal's `agents` table at start-up so Sessions can reference them.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::access::AccessList;
use crate::parts::Features;

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
    /// Whether a completed task's text result also ends with a `Session: <url>` line (default
    /// false). The link to the Session in the console is always in the task's and its status
    /// updates' `metadata.sessionUrl`; this puts it into the text too, for a reader that shows
    /// only text. Off by default because a client that prefers the status message to the
    /// artifacts (strands-agents does) would show the link instead of the reply.
    #[serde(default)]
    pub session_link: bool,
    /// Whether a messageId names one message (default true): an identical retry returns the
    /// first task and creates nothing, and different content under the same id is refused.
    /// The A2A TCK uses messageIds as behaviour keys and sends the same one for distinct
    /// messages (even identical ones it expects to create new tasks), so the conformance Agent
    /// turns this off: there every message is a new input.
    #[serde(default = "yes")]
    pub dedupe_message_ids: bool,
    /// Who may call this Agent and who may only read (see [`crate::access`]). Default: the
    /// person, the anonymous loopback caller and the owner's assistant tokens may call.
    #[serde(default)]
    pub access: AccessList,
    /// What the unauthenticated card shows (see [`PublicCard`]).
    #[serde(default)]
    pub public_card: PublicCard,
    /// What the Agent takes besides text (input modes and their caps) and whether it sends
    /// push notifications; flattened, so `agents.toml` writes `input_modes = [...]` and
    /// `push_notifications = true` beside the other fields (see [`crate::parts`]).
    #[serde(flatten)]
    pub features: Features,
}

/// What an Agent's public (unauthenticated) card shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PublicCard {
    /// Name, description, endpoint, auth scheme and one generic skill; the real skills are on
    /// the authenticated extended card (`GetExtendedAgentCard`, `extendedAgentCard: true`).
    #[default]
    Minimal,
    /// The real skills on the public card and no extended card. The conformance Agent uses it:
    /// the A2A TCK reads skills from the public card and calls GetExtendedAgentCard without
    /// credentials.
    Full,
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
    /// The built-in shell runner: each message is a shell command, run after the person
    /// approves it (accept, acceptForSession, decline, cancel).
    Shell {
        /// Where commands run (default: the data dir's `work/` folder).
        #[serde(default)]
        working_dir: Option<PathBuf>,
        /// A command running longer than this is killed (default 60 s).
        #[serde(default = "default_shell_timeout")]
        timeout_secs: u64,
        /// An approval not answered within this applies its default: `decline` where Codex
        /// offers it, else `cancel` (default 1 h).
        #[serde(default = "default_approval_timeout")]
        approval_timeout_secs: u64,
    },
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
        /// What a remote caller's text looks like to the command: `framed` (default) for an
        /// agent that hands it to a model, `raw` for one that executes it (see [`InputForm`]).
        #[serde(default)]
        input: InputForm,
    },
    /// An OpenAI Codex app-server (JSON-RPC over stdio, docs/codex-protocol.md): one process
    /// and one Codex thread per Session; command and file-change approvals become interactions.
    Codex {
        /// The `codex` binary (or any program speaking the app-server protocol).
        binary: PathBuf,
        /// Its arguments (default `["app-server"]`).
        #[serde(default = "default_codex_args")]
        args: Vec<String>,
        /// The thread's working directory, `cwd` in `thread/start` (default: the data dir's
        /// `work/` folder). The process is started there too.
        #[serde(default)]
        working_dir: Option<PathBuf>,
        /// The `CODEX_HOME` the app-server runs with, named to share one on purpose (several
        /// Agents, or the person's own `~/.codex`: Codex's rules, sessions and logins are then
        /// shared too). Omitted: the Agent's own home in the data dir (`codex/<agent id>/`),
        /// which links the person's `auth.json` and `config.toml` so Codex logs in and is
        /// configured as it is for them, while what Codex writes there (its rules file above
        /// all) belongs to this Agent alone (docs/codex-protocol.md).
        #[serde(default)]
        codex_home: Option<PathBuf>,
        /// `model` in `thread/start`; omitted: Codex's own configuration decides.
        #[serde(default)]
        model: Option<String>,
        /// `approvalPolicy` in `thread/start`, passed as is (e.g. `on-request`, `untrusted`;
        /// the real app-server refuses `on-failure`); omitted: Codex's own configuration
        /// decides.
        #[serde(default)]
        approval_policy: Option<String>,
        /// `sandbox` in `thread/start`, passed as is (e.g. `workspace-write`); omitted: Codex's
        /// own configuration decides.
        #[serde(default)]
        sandbox: Option<String>,
        /// An approval not answered within this applies its default: `decline` where Codex
        /// offers it, else `cancel` (default 1 h).
        #[serde(default = "default_approval_timeout")]
        approval_timeout_secs: u64,
        /// How long a turn may run, not counting time spent waiting for approvals; then it is
        /// interrupted and the task fails (default 1 h).
        #[serde(default = "default_codex_timeout")]
        timeout_secs: u64,
    },
    /// A remote A2A agent registered as an outbound peer (docs/peers.md): each turn is
    /// forwarded to it and its reply streamed back, so Sextant acts as a gateway. A remote
    /// input-required / auth-required becomes an interaction the person answers; the answer is
    /// sent back to the remote task.
    A2a {
        /// The registered peer's name (`/api/v1/peers`).
        peer: String,
        /// An interaction not answered within this applies its default, `cancel` (default 1 h).
        #[serde(default = "default_approval_timeout")]
        approval_timeout_secs: u64,
        /// Budget: the most exchanges with the peer one task may make (default 20).
        #[serde(default = "default_max_calls")]
        max_calls: u32,
        /// Budget: the most seconds one task may spend in exchanges with the peer, time
        /// waiting for the person excepted (default 3600).
        #[serde(default = "default_outbound_secs")]
        max_outbound_secs: u64,
    },
}

fn default_max_calls() -> u32 {
    20
}

fn default_outbound_secs() -> u64 {
    3600
}

fn default_timeout() -> u64 {
    300
}

fn default_shell_timeout() -> u64 {
    60
}

fn default_approval_timeout() -> u64 {
    3600
}

fn default_codex_timeout() -> u64 {
    3600
}

fn default_codex_args() -> Vec<String> {
    vec!["app-server".into()]
}

/// How an engine receives text from remote callers (peers, assistants, JWT holders).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InputForm {
    /// Filtered for prompt-injection markup and framed as untrusted input (the frame warns a
    /// model; see [`crate::untrusted`]).
    #[default]
    Framed,
    /// The caller's exact text: for engines that execute their input (a frame would become
    /// part of the command). The person's card says who sent it.
    Raw,
}

impl EngineSpec {
    /// How this engine receives remote callers' text: the shell executes it (raw); an exec
    /// agent says so with `input = "raw"`; every other engine hands text to a model or a
    /// peer, so it gets the framed form.
    pub fn input_form(&self) -> InputForm {
        match self {
            EngineSpec::Shell { .. } => InputForm::Raw,
            EngineSpec::Exec { input, .. } => *input,
            _ => InputForm::Framed,
        }
    }

    /// Whether the engine is handed file and data parts (the others take text only).
    pub fn takes_files(&self) -> bool {
        matches!(self, EngineSpec::Exec { .. } | EngineSpec::Conformance)
    }

    /// The engine kind as stored and shown.
    pub fn kind(&self) -> &'static str {
        match self {
            EngineSpec::Echo => "echo",
            EngineSpec::Conformance => "conformance",
            EngineSpec::Shell { .. } => "shell",
            EngineSpec::Exec { .. } => "exec",
            EngineSpec::Codex { .. } => "codex",
            EngineSpec::A2a { .. } => "a2a",
        }
    }
}

impl AgentSpec {
    /// Checks a message's parts against what this Agent takes (see [`crate::parts`]).
    pub fn check_parts(&self, parts: &[crate::a2a::Part]) -> Result<(), crate::parts::PartRefusal> {
        self.features.check(parts, self.engine.takes_files())
    }

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
        if let Err(why) = self.access.validate() {
            return Err(format!("agent {:?}: {why}", self.id));
        }
        if self.description.trim().is_empty() {
            return Err(format!(
                "agent {:?}: description must not be empty",
                self.id
            ));
        }
        if let Err(why) = self.features.validate() {
            return Err(format!("agent {:?}: {why}", self.id));
        }
        if self.features.accepts_more_than_text() && !self.engine.takes_files() {
            return Err(format!(
                "agent {:?}: input_modes {:?} take more than text, which only exec agents hand \
                 to their engine (the {} engine takes text only)",
                self.id,
                self.features.modes(),
                self.engine.kind()
            ));
        }
        if self.features.fetch_url_parts && !matches!(self.engine, EngineSpec::Exec { .. }) {
            return Err(format!(
                "agent {:?}: fetch_url_parts is for exec agents (the {} engine takes text only)",
                self.id,
                self.engine.kind()
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
        if let EngineSpec::A2a { peer, .. } = &self.engine
            && peer.trim().is_empty()
        {
            return Err(format!(
                "agent {:?}: engine.peer must name a registered peer",
                self.id
            ));
        }
        if let EngineSpec::Codex {
            binary,
            timeout_secs,
            codex_home,
            ..
        } = &self.engine
        {
            if binary.as_os_str().is_empty() {
                return Err(format!(
                    "agent {:?}: engine.binary must name the codex program",
                    self.id
                ));
            }
            if codex_home
                .as_ref()
                .is_some_and(|h| h.as_os_str().is_empty())
            {
                return Err(format!(
                    "agent {:?}: engine.codex_home must name a directory (omit it for the \
                     Agent's own)",
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
            session_link: false,
            dedupe_message_ids: true,
            access: AccessList::default(),
            public_card: PublicCard::Minimal,
            features: Features::default(),
        }
    }

    /// The built-in shell Agent: Sextant's default, useful with no model configured.
    pub fn shell() -> Self {
        Self {
            id: "shell".into(),
            name: "Shell".into(),
            description:
                "Runs each message as a shell command on this machine, after you approve it.".into(),
            skills: vec![SkillSpec {
                id: "shell".into(),
                name: "Shell command".into(),
                description: "Runs one shell command (sh -c) once the console owner approves it; \
                              returns stdout, stderr and the exit code."
                    .into(),
                tags: vec!["shell".into(), "approval".into()],
                examples: vec!["ls -la".into(), "git status".into()],
            }],
            engine: EngineSpec::Shell {
                working_dir: None,
                timeout_secs: default_shell_timeout(),
                approval_timeout_secs: default_approval_timeout(),
            },
            session_link: false,
            dedupe_message_ids: true,
            access: AccessList::default(),
            public_card: PublicCard::Minimal,
            features: Features::default(),
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
            // The TCK compares result texts exactly: no link in them.
            session_link: false,
            dedupe_message_ids: false,
            access: AccessList::default(),
            public_card: PublicCard::Full,
            // The TCK sends file and data parts and registers webhooks. It also sends a part of
            // an unsupported type and expects ContentTypeNotSupported, so not `*/*`.
            features: Features {
                input_modes: Some(
                    [
                        "text/plain",
                        "text/*",
                        "application/json",
                        "application/octet-stream",
                        "application/pdf",
                        "image/*",
                    ]
                    .map(String::from)
                    .to_vec(),
                ),
                push_notifications: true,
                ..Features::default()
            },
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
        assert!(
            !v.session_link,
            "the Session link is in text only when asked for"
        );
    }

    #[test]
    fn codex_agents_parse_with_defaults() {
        let v: AgentSpec = serde_json::from_value(serde_json::json!({
            "id": "codex", "name": "Codex", "description": "d",
            "engine": {"kind": "codex", "binary": "/usr/local/bin/codex"}
        }))
        .unwrap();
        assert!(v.validate().is_ok());
        assert_eq!(v.engine.kind(), "codex");
        let EngineSpec::Codex {
            args,
            approval_timeout_secs,
            timeout_secs,
            model,
            ..
        } = &v.engine
        else {
            panic!("not a codex engine");
        };
        assert_eq!(args, &vec!["app-server".to_string()]);
        assert_eq!((*approval_timeout_secs, *timeout_secs), (3600, 3600));
        assert!(model.is_none());

        let empty: AgentSpec = serde_json::from_value(serde_json::json!({
            "id": "codex", "name": "Codex", "description": "d",
            "engine": {"kind": "codex", "binary": ""}
        }))
        .unwrap();
        assert!(empty.validate().unwrap_err().contains("engine.binary"));
    }

    #[test]
    fn a2a_agents_name_a_peer() {
        let v: AgentSpec = serde_json::from_value(serde_json::json!({
            "id": "remote", "name": "Remote", "description": "d",
            "engine": {"kind": "a2a", "peer": "helper"}
        }))
        .unwrap();
        assert!(v.validate().is_ok());
        assert_eq!(v.engine.kind(), "a2a");
        assert_eq!(
            v.engine,
            EngineSpec::A2a {
                peer: "helper".into(),
                approval_timeout_secs: 3600,
                max_calls: 20,
                max_outbound_secs: 3600,
            }
        );
        let mut empty = v.clone();
        empty.engine = EngineSpec::A2a {
            peer: " ".into(),
            approval_timeout_secs: 1,
            max_calls: 1,
            max_outbound_secs: 1,
        };
        assert!(empty.validate().unwrap_err().contains("engine.peer"));
    }

    #[test]
    fn input_modes_flatten_into_the_entry_and_files_need_an_exec_engine() {
        let v: AgentSpec = serde_json::from_value(serde_json::json!({
            "id": "coder", "name": "Coder", "description": "d",
            "engine": {"kind": "exec", "command": ["my-agent"]},
            "input_modes": ["text/plain", "image/*"], "max_part_bytes": 1024,
            "push_notifications": true
        }))
        .unwrap();
        assert!(v.validate().is_ok());
        assert_eq!(v.features.modes(), ["text/plain", "image/*"]);
        assert_eq!(v.features.max_part_bytes, 1024);
        assert!(v.features.push_notifications);
        let back = serde_json::to_value(&v).unwrap();
        assert_eq!(back["input_modes"][1], "image/*", "{back}");

        let mut echo = AgentSpec::echo();
        echo.features.input_modes = Some(vec!["image/png".into()]);
        assert!(echo.validate().unwrap_err().contains("only exec agents"));
        let mut echo = AgentSpec::echo();
        echo.features.fetch_url_parts = true;
        assert!(echo.validate().unwrap_err().contains("fetch_url_parts"));
        let mut bad = v.clone();
        bad.features.input_modes = Some(vec!["png".into()]);
        assert!(bad.validate().unwrap_err().contains("not a media type"));
        assert!(AgentSpec::conformance().validate().is_ok());
        assert!(AgentSpec::echo().validate().is_ok());
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
            input: InputForm::Framed,
        };
        assert!(b.validate().unwrap_err().contains("engine.command"));
    }
}
