//! A runtime over a fresh journal, for tests (this crate's, and other crates' through the
//! `test-support` feature): the journal, its Agents and the runtime's settings that every
//! test used to write out again.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use sextant_core::{AgentSpec, Clock, SystemClock};
use sextant_journal::Journal;

use crate::{Limits, Recovery, Runtime, RuntimeConfig};

/// How a test's runtime is set up; [`TestRuntime::start`] opens it ([`TestRuntime::open`] with
/// its start-up recovery).
///
/// Defaults: the system clock, no Agents, workers idle for 60 s, 5 s between `SIGTERM` and
/// `SIGKILL` on cancel, the default [`Limits`].
pub struct TestRuntime {
    db: PathBuf,
    work_dir: PathBuf,
    clock: Arc<dyn Clock>,
    agents: Vec<AgentSpec>,
    idle_worker: Duration,
    limits: Limits,
    person_codex_home: Option<PathBuf>,
}

impl TestRuntime {
    /// A journal at `dir/j.db`, engines working in `dir/work`.
    pub fn in_dir(dir: &Path) -> Self {
        Self::new(dir.join("j.db"), dir.join("work"))
    }

    /// A journal at `db` (reopened if it exists), engines working in `db` with the extension
    /// `work`: two runtimes on one path share both, as two processes on one data dir would.
    pub fn at(db: &Path) -> Self {
        Self::new(db.to_path_buf(), db.with_extension("work"))
    }

    fn new(db: PathBuf, work_dir: PathBuf) -> Self {
        Self {
            db,
            work_dir,
            clock: Arc::new(SystemClock),
            agents: Vec::new(),
            idle_worker: Duration::from_secs(60),
            limits: Limits::default(),
            person_codex_home: None,
        }
    }

    /// The person's Codex home that Codex Agents' own homes link to (default: none, so a
    /// test never links the login of whoever runs it).
    pub fn person_codex_home(mut self, dir: &Path) -> Self {
        self.person_codex_home = Some(dir.to_path_buf());
        self
    }

    /// The clock the runtime (and the Agents' registration) reads.
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// The Agents, registered in the journal and given to the runtime.
    pub fn agents(mut self, agents: Vec<AgentSpec>) -> Self {
        self.agents = agents;
        self
    }

    /// How long a worker with nothing to do stays alive.
    pub fn idle_worker(mut self, idle: Duration) -> Self {
        self.idle_worker = idle;
        self
    }

    /// The per-principal caps.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Opens the journal, registers the Agents and starts the runtime without its start-up
    /// recovery (nothing from an earlier runtime on the journal is delivered).
    ///
    /// # Panics
    /// If the journal cannot be opened or written: a test cannot go on without it.
    pub async fn start(self) -> Runtime {
        self.open().await.0
    }

    /// [`TestRuntime::start`], handing back the runtime's start-up [`Recovery`] for the test
    /// to run when it means to.
    ///
    /// # Panics
    /// If the journal cannot be opened or written: a test cannot go on without it.
    pub async fn open(self) -> (Runtime, Recovery) {
        let journal = Journal::open(&self.db).expect("open the test journal");
        journal
            .upsert_agents(self.agents.clone(), self.clock.now())
            .await
            .expect("register the test Agents");
        Runtime::builder(
            journal,
            self.clock,
            self.agents,
            RuntimeConfig {
                codex_homes: self.work_dir.with_extension("codex"),
                person_codex_home: self.person_codex_home,
                work_dir: self.work_dir,
                idle_worker: self.idle_worker,
                cancel_grace: Duration::from_secs(5),
            },
        )
        .limits(self.limits)
        .build()
    }
}
