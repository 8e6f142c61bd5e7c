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
    pub model: Option<String>,
    pub approval_policy: Option<String>,
    pub sandbox: Option<String>,
    pub approval_timeout: chrono::Duration,
    pub timeout: Duration,
}
