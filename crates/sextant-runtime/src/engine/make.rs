//! Which engine an Agent gets ([`make_engine`]), from its [`EngineSpec`] and what the host
//! provides ([`EngineEnv`]).

use std::path::PathBuf;
use std::sync::Arc;

use futures::FutureExt;
use futures::future::BoxFuture;
use sextant_core::{AgentSpec, Answer, EngineSpec};

use super::{Engine, Outcome, Turn, TurnSink, codex, conformance, echo, exec, shell};
use crate::outbound::Outbound;

/// Settings engines need from the host.
#[derive(Clone)]
pub struct EngineEnv {
    /// Default working directory for local commands.
    pub work_dir: PathBuf,
    /// The outbound side, for `a2a` engines and fetched URL parts (`None`: not set up).
    pub outbound: Option<Arc<dyn Outbound>>,
    /// Where each Codex Agent's own `CODEX_HOME` is made, one folder per Agent id.
    pub codex_homes: PathBuf,
    /// The person's own Codex home, whose login and settings an Agent's own home links to.
    pub person_codex_home: Option<PathBuf>,
}

impl std::fmt::Debug for EngineEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineEnv")
            .field("work_dir", &self.work_dir)
            .field("outbound", &self.outbound.is_some())
            .field("codex_homes", &self.codex_homes)
            .field("person_codex_home", &self.person_codex_home)
            .finish()
    }
}

/// Why an `a2a` Agent's turns fail in a runtime without an outbound side.
const NO_OUTBOUND: &str = "outbound peers are not set up in this Sextant";

/// An engine that cannot work: every turn fails with its reason, and so does every answer
/// and every remote task a restarted turn would follow. An `a2a` Agent has it in a runtime
/// without an outbound side, where the `a2a` engine would have no peers to call.
pub struct Unavailable {
    why: String,
}

impl Unavailable {
    /// An engine whose turns fail with `why`.
    pub fn new(why: impl Into<String>) -> Self {
        Self { why: why.into() }
    }

    fn fail<'a>(&self) -> BoxFuture<'a, Outcome> {
        let why = self.why.clone();
        async move { Outcome::Failed(why) }.boxed()
    }
}

impl Engine for Unavailable {
    // As the `a2a` engine it stands in for: its questions' answers go to `resume`.
    fn uses_interactions(&self) -> bool {
        true
    }

    fn run_turn<'a>(&'a mut self, _turn: Turn, _sink: &'a TurnSink) -> BoxFuture<'a, Outcome> {
        self.fail()
    }

    fn cannot_resume(&self) -> Option<String> {
        None
    }

    fn follow<'a>(
        &'a mut self,
        _turn: Turn,
        note: serde_json::Value,
        _sink: &'a TurnSink,
    ) -> Option<BoxFuture<'a, Outcome>> {
        note["remoteTaskId"].as_str()?;
        Some(self.fail())
    }

    fn resume<'a>(
        &'a mut self,
        _turn: Turn,
        _interaction: sextant_core::Interaction,
        _answer: Answer,
        _sink: &'a TurnSink,
    ) -> BoxFuture<'a, Outcome> {
        self.fail()
    }
}

/// Makes the engine for an Agent.
pub fn make_engine(agent: &AgentSpec, env: &EngineEnv) -> Box<dyn Engine> {
    match &agent.engine {
        EngineSpec::Echo => Box::new(echo::EchoEngine),
        EngineSpec::Conformance => Box::new(conformance::ConformanceEngine),
        EngineSpec::Shell {
            working_dir,
            timeout_secs,
            approval_timeout_secs,
        } => Box::new(shell::ShellEngine {
            working_dir: working_dir.clone().unwrap_or_else(|| env.work_dir.clone()),
            timeout: std::time::Duration::from_secs(*timeout_secs),
            approval_timeout: chrono::Duration::seconds(
                i64::try_from(*approval_timeout_secs).unwrap_or(i64::MAX / 1000),
            ),
        }),
        EngineSpec::Exec {
            command,
            working_dir,
            env: vars,
            timeout_secs,
            ..
        } => Box::new(exec::ExecEngine {
            command: command.clone(),
            working_dir: working_dir.clone().unwrap_or_else(|| env.work_dir.clone()),
            env: vars.clone(),
            timeout: std::time::Duration::from_secs(*timeout_secs),
            turns_root: env.work_dir.join("turns"),
            outbound: env.outbound.clone(),
            max_part_bytes: agent.features.max_part_bytes,
        }),
        EngineSpec::Codex {
            binary,
            args,
            working_dir,
            codex_home,
            model,
            approval_policy,
            sandbox,
            approval_timeout_secs,
            timeout_secs,
        } => Box::new(codex::CodexEngine::new(codex::CodexConfig {
            binary: binary.clone(),
            args: args.clone(),
            working_dir: working_dir.clone().unwrap_or_else(|| env.work_dir.clone()),
            home: match codex_home {
                Some(dir) => codex::CodexHome::Named(dir.clone()),
                None => codex::CodexHome::Own {
                    dir: env.codex_homes.join(&agent.id),
                    person: env.person_codex_home.clone(),
                },
            },
            model: model.clone(),
            approval_policy: approval_policy.clone(),
            sandbox: sandbox.clone(),
            approval_timeout: chrono::Duration::seconds(
                i64::try_from(*approval_timeout_secs).unwrap_or(i64::MAX / 1000),
            ),
            timeout: std::time::Duration::from_secs(*timeout_secs),
        })),
        EngineSpec::A2a { .. } => match &env.outbound {
            Some(outbound) => outbound.a2a_engine(agent),
            None => Box::new(Unavailable::new(NO_OUTBOUND)),
        },
    }
}
