//! The composition root: reads the data dir (token, `agents.toml`, journal), builds the
//! journal, runtime, scheduler and server, and runs them until shutdown. The `sextant` binary
//! is a thin CLI over [`start`]; the end-to-end tests call [`start`] directly on a temp data
//! dir.
//!
//! Data dir layout: `journal.db` (the Session journal), `token` (the console owner's bearer
//! token, 0600), `agents.toml` (optional Agent declarations), `work/` (default working
//! directory for local engines).

pub mod agents_file;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use sextant_core::{AgentSpec, Clock, SystemClock};
use sextant_journal::Journal;
use sextant_runtime::{Runtime, RuntimeConfig};
use sextant_scheduler::{Scheduler, SchedulerHandle};
use sextant_server::{AppState, ServerConfig};
use tokio_util::sync::CancellationToken;

/// How long running turns get to finish at shutdown before they are interrupted.
pub const DRAIN: Duration = Duration::from_secs(10);

/// What to start.
#[derive(Debug, Clone)]
pub struct Config {
    pub data_dir: PathBuf,
    pub host: String,
    pub port: u16,
    pub public_url: Option<String>,
    /// Add the conformance test Agent and make it the default.
    pub conformance: bool,
}

/// The platform data dir (`$XDG_DATA_HOME/sextant`, else `~/.local/share/sextant`).
pub fn default_data_dir() -> PathBuf {
    if let Some(x) = std::env::var_os("XDG_DATA_HOME").filter(|v| !v.is_empty()) {
        return PathBuf::from(x).join("sextant");
    }
    match std::env::var_os("HOME") {
        Some(h) => PathBuf::from(h).join(".local/share/sextant"),
        None => PathBuf::from(".sextant"),
    }
}

/// Reads the owner token from the data dir, creating it (mode 0600) on first use.
pub fn ensure_token(data_dir: &Path) -> Result<String> {
    std::fs::create_dir_all(data_dir)
        .with_context(|| format!("cannot create the data dir {}", data_dir.display()))?;
    let path = data_dir.join("token");
    match std::fs::read_to_string(&path) {
        Ok(t) if !t.trim().is_empty() => return Ok(t.trim().to_string()),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
    // Two v4 UUIDs: 244 bits from the OS's secure random source.
    let token = format!(
        "sxt_{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    write_private(&path, &token).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(token)
}

#[cfg(unix)]
fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(contents.as_bytes())?;
    f.write_all(b"\n")
}

#[cfg(not(unix))]
fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    std::fs::write(path, format!("{contents}\n"))
}

/// A running Sextant.
pub struct Running {
    /// The bound address.
    pub addr: SocketAddr,
    /// The owner token.
    pub token: String,
    /// The runtime (tests use it to reach the journal).
    pub runtime: Runtime,
    /// Personal schedules (tests drive it with `run_due_now` after moving a manual clock).
    pub scheduler: Scheduler,
    scheduler_loop: SchedulerHandle,
    shutdown: CancellationToken,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl Running {
    /// `http://addr`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Drains running turns, closes streams and stops the server. Everything accepted is in
    /// the journal; inputs that did not run are delivered at the next start.
    pub async fn shutdown(self) -> Result<()> {
        // No new Runs first; a Run the scheduler claimed but could not start is started at
        // the next start.
        self.scheduler_loop.shutdown().await;
        self.runtime.shutdown(DRAIN).await;
        self.shutdown.cancel();
        self.server
            .await
            .context("server task")?
            .context("server")?;
        Ok(())
    }

    /// A future that resolves when shutdown starts (for streams and waits).
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }
}

/// Starts Sextant: opens the journal, recovers unfinished tasks, binds and serves.
pub async fn start(config: Config) -> Result<Running> {
    start_with_clock(config, Arc::new(SystemClock)).await
}

/// [`start`] with a chosen clock.
pub async fn start_with_clock(config: Config, clock: Arc<dyn Clock>) -> Result<Running> {
    let token = ensure_token(&config.data_dir)?;
    let file = agents_file::load(&config.data_dir.join("agents.toml"))?;
    let mut agents = vec![AgentSpec::shell(), AgentSpec::echo()];
    if config.conformance {
        agents.push(AgentSpec::conformance());
    }
    agents.extend(file.agents);
    agents_file::check_unique(&agents)?;
    let default_agent = match file.default_agent {
        Some(id) => id,
        None if config.conformance => "conformance".to_string(),
        None => "shell".to_string(),
    };
    if !agents.iter().any(|a| a.id == default_agent) {
        anyhow::bail!("default_agent {default_agent:?} in agents.toml names no agent");
    }

    let db = config.data_dir.join("journal.db");
    let journal = tokio::task::spawn_blocking(move || Journal::open(&db))
        .await
        .context("opening the journal")?
        .context("opening the journal")?;
    journal
        .upsert_agents(agents.clone(), clock.now())
        .await
        .context("recording agents")?;
    let runtime = Runtime::new(
        journal,
        clock.clone(),
        agents,
        RuntimeConfig {
            work_dir: config.data_dir.join("work"),
            idle_worker: Duration::from_secs(300),
        },
    );
    let recovered = runtime
        .recover()
        .await
        .context("recovering unfinished tasks")?;
    if recovered > 0 {
        tracing::info!(recovered, "re-delivering accepted inputs from the last run");
    }

    let listener = tokio::net::TcpListener::bind((config.host.as_str(), config.port))
        .await
        .with_context(|| format!("cannot listen on {}:{}", config.host, config.port))?;
    let addr = listener.local_addr()?;
    if !addr.ip().is_loopback() {
        tracing::warn!(%addr, "listening beyond loopback: every request needs the token");
    }
    let shutdown = CancellationToken::new();
    let scheduler = Scheduler::new(runtime.clone());
    let scheduler_loop = scheduler.start(shutdown.child_token());
    let state = AppState {
        runtime: runtime.clone(),
        scheduler: scheduler.clone(),
        config: Arc::new(ServerConfig {
            token: token.clone(),
            public_url: config.public_url.clone(),
            default_agent,
            bind: addr,
        }),
        started: clock.now(),
        shutdown: shutdown.clone(),
    };
    let stop = shutdown.clone();
    let server = tokio::spawn(sextant_server::serve(listener, state, async move {
        stop.cancelled().await
    }));
    Ok(Running {
        addr,
        token,
        runtime,
        scheduler,
        scheduler_loop,
        shutdown,
        server,
    })
}
