//! The codex engine's settings and the names of the approval requests it handles: what
//! `connection`, `approval` and `turn` all need, kept here so that none of them reaches back
//! into the engine (`super`) that uses them.

use std::path::PathBuf;
use std::time::Duration;

/// Server→client request: approve a command (v2).
pub const COMMAND_APPROVAL: &str = "item/commandExecution/requestApproval";
/// Server→client request: approve a file change (v2).
pub const FILE_APPROVAL: &str = "item/fileChange/requestApproval";

/// Settings from the Agent's [`sextant_core::EngineSpec::Codex`].
#[derive(Debug, Clone)]
pub struct CodexConfig {
    pub binary: PathBuf,
    pub args: Vec<String>,
    pub working_dir: PathBuf,
    /// The `CODEX_HOME` the app-server runs with.
    pub home: CodexHome,
    pub model: Option<String>,
    pub approval_policy: Option<String>,
    pub sandbox: Option<String>,
    pub approval_timeout: chrono::Duration,
    pub timeout: Duration,
}

/// Where an Agent's Codex keeps its state (`CODEX_HOME`: logins, config, rules, sessions).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodexHome {
    /// The Agent's own, made by Sextant (`<data dir>/codex/<agent id>`), with links to the
    /// person's `auth.json` and `config.toml` in `person` (when there is one and they exist).
    Own {
        dir: PathBuf,
        person: Option<PathBuf>,
    },
    /// One the Agent's configuration names: used as it is, shared on purpose.
    Named(PathBuf),
}

impl CodexHome {
    /// The directory passed as `CODEX_HOME`.
    pub fn dir(&self) -> &PathBuf {
        match self {
            CodexHome::Own { dir, .. } | CodexHome::Named(dir) => dir,
        }
    }
}
