//! The composition root: reads the data dir (token, `agents.toml`, journal), builds the
//! journal, runtime, scheduler and server, and runs them until shutdown. The `sextant` binary
//! is a thin CLI over [`start`]; the end-to-end tests call [`start`] directly on a temp data
//! dir.
//!
//! Data dir layout (the dir 0700, every file Sextant writes in it 0600; see [`private_dir`]):
//! `journal.db` (the Session journal, 0600 like its `-wal` and `-shm`), `token` (the console owner's bearer
//! token, 0600), `agents.toml` (optional Agent declarations), `security.toml` (optional: JWT,
//! limits, perimeter; see `docs/security.md`), `audit.jsonl` (the audit log, 0600, rotated),
//! `work/` (default working directory for local engines), `outbound.toml` (optional: outbound
//! A2A call settings), `peer-tokens.json` (outbound peers' bearer tokens, 0600; see
//! `docs/peers.md`), `push.key` (the key push-notification secrets are sealed with, 0600),
//! `card-key.json` (the keys cards are signed with, 0600; `sextant card-key rotate`),
//! `retention/` (what the retention job deleted, when it exports before deleting) and
//! `sextant.lock` (held while a Sextant runs on the dir, so a second one is refused; see
//! [`data_dir_lock`]).
//!
//! **Backup, restore, export** ([`backup`]): the whole profile in one tar file taken beside a
//! running Sextant, restored only into a data dir no Sextant holds, or written as JSON lines.
//!
//! **Retention** ([`retention`]): with `[retention]` in `security.toml`, a background job deletes
//! old Sessions (never ones with pending work, nor a schedule's latest Run) at start-up and then
//! hourly, exporting them to `retention/` first when asked; off by default.
//!
//! **Perimeter at start-up** ([`check_exposure`]): with no credential for remote callers
//! configured (a peer or assistant token, or `[jwt]`), Sextant binds loopback only; binding
//! beyond loopback needs such a credential and an explicit `--host`. A plain-http public URL
//! outside loopback, or `[jwt]` without an audience, stops the start with a clear message.

pub mod agents_file;
pub mod backup;
pub mod data_dir_lock;
pub mod outbound_file;
pub mod private_dir;
pub mod retention;
pub mod security_file;
pub mod telemetry;
pub mod tokens;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use data_dir_lock::DataDirLock;
use sextant_access::settings::SecurityFile;
use sextant_core::{AgentSpec, Clock, SystemClock};
use sextant_journal::Journal;
use sextant_runtime::{Runtime, RuntimeConfig};
use sextant_scheduler::{Scheduler, SchedulerHandle};
use sextant_server::security::{Exposure, Security, is_loopback_name, url_host};
use sextant_server::{App, AppState, ServerConfig};
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
    /// How turns are stopped and waited for.
    pub turns: TurnSettings,
}

/// How turns are stopped and how long a blocking caller waits for one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TurnSettings {
    /// Between `SIGTERM` and `SIGKILL` for a canceled turn's processes.
    pub cancel_grace: Duration,
    /// How long a blocking `SendMessage` waits before it answers with the task as it is
    /// (still running); `None`: until the task ends or waits for someone.
    pub reply_timeout: Option<Duration>,
}

impl Default for TurnSettings {
    fn default() -> Self {
        Self {
            cancel_grace: Duration::from_secs(5),
            reply_timeout: Some(Duration::from_secs(300)),
        }
    }
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

/// The person's own Codex home, as Codex finds it: `$CODEX_HOME`, else `~/.codex`. A Codex
/// Agent's own home links its `auth.json` and `config.toml` (docs/codex-protocol.md).
fn person_codex_home() -> Option<PathBuf> {
    if let Some(h) = std::env::var_os("CODEX_HOME").filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(h));
    }
    std::env::var_os("HOME")
        .filter(|v| !v.is_empty())
        .map(|h| PathBuf::from(h).join(".codex"))
}

/// Reads the owner token from the data dir, creating it (mode 0600) on first use.
pub fn ensure_token(data_dir: &Path) -> Result<String> {
    private_dir::create(data_dir)?;
    let path = data_dir.join("token");
    match std::fs::read_to_string(&path) {
        Ok(t) if !t.trim().is_empty() => return Ok(t.trim().to_string()),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
    let token = new_token();
    write_private(&path, &token).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(token)
}

/// A fresh owner token: two v4 UUIDs, 244 bits from the OS's secure random source.
pub fn new_token() -> String {
    format!(
        "sxt_{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
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
    /// The outbound side (stopped with the runtime: its background followers write too).
    peers: Arc<sextant_peers::Peers>,
    /// The push delivery worker (ends with `shutdown`; what it owes stays in the journal).
    push_loop: tokio::task::JoinHandle<()>,
    /// The retention job, when `[retention]` is configured (tests run it with `run_now`
    /// after moving a manual clock).
    pub retention: Option<retention::Retention>,
    retention_loop: Option<tokio::task::JoinHandle<()>>,
    shutdown: CancellationToken,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
    /// Held until the server has stopped ([`data_dir_lock`]).
    lock: DataDirLock,
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
        self.peers.stop().await;
        self.shutdown.cancel();
        if let Some(job) = self.retention_loop {
            // A run in progress stops between two of its batches: each batch committed or
            // deleted nothing, and an export file it was writing ends without its `end` line.
            job.abort();
            let _ = job.await;
        }
        let _ = self.push_loop.await;
        let served = self.server.await;
        // Only now may another Sextant take the data dir: nothing of this one runs any more.
        drop(self.lock);
        served.context("server task")?.context("server")?;
        Ok(())
    }

    /// A future that resolves when shutdown starts (for streams and waits).
    pub fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }
}

/// The address `--host` names: an IPv4 or IPv6 literal (bare or in brackets) or `localhost`.
pub fn parse_host(host: &str) -> Result<IpAddr> {
    let h = host.trim();
    let bare = h
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .unwrap_or(h);
    if bare.eq_ignore_ascii_case("localhost") {
        return Ok(IpAddr::V4(Ipv4Addr::LOCALHOST));
    }
    bare.parse::<IpAddr>().map_err(|_| {
        anyhow::anyhow!(
            "--host {host:?}: give an IP address to listen on (IPv4 like 127.0.0.1 or 0.0.0.0, \
             IPv6 like ::1 or [::], bare or in brackets) or localhost"
        )
    })
}

/// Checks the public URL: http(s) only, and https outside loopback.
pub fn check_public_url(url: &str) -> Result<()> {
    let host = url_host(url)
        .ok_or_else(|| anyhow::anyhow!("--public-url {url:?} is not a URL with a host"))?;
    let scheme = url.split_once("://").map(|(s, _)| s.to_ascii_lowercase());
    match scheme.as_deref() {
        Some("https") => Ok(()),
        Some("http") if is_loopback_name(&host) => Ok(()),
        Some("http") => bail!(
            "--public-url {url:?} is plain http outside loopback: callers' tokens would cross \
             the network in clear. Put a TLS-terminating reverse proxy in front and give its \
             https:// URL"
        ),
        _ => bail!("--public-url {url:?} must start with https:// (or http:// on loopback)"),
    }
}

/// Whether Sextant may listen on `ip`: loopback always; beyond loopback only with a credential
/// for remote callers configured (`remote_credentials`: active peer or assistant tokens, or
/// `[jwt]`). The owner token alone does not widen the bind.
pub fn check_exposure(ip: IpAddr, host: &str, remote_credentials: bool) -> Result<()> {
    if ip.is_loopback() || remote_credentials {
        return Ok(());
    }
    bail!(
        "refusing to listen on {host}: no credential for remote callers is configured, so \
         anyone who can reach that address would be refused anyway, or worse. Create one first \
         (`sextant peer-token create NAME`, `sextant assistant-token create NAME`, \
         or [jwt] in security.toml), or listen on 127.0.0.1. See docs/security.md"
    )
}

/// Starts Sextant: checks the settings and the perimeter, opens the journal, binds, and only
/// then recovers unfinished tasks and serves. A start that fails (a port in use, a refused
/// bind beyond loopback, unreadable JWT keys, a bad setting) has run no recovery: the queued
/// inputs it found are still queued for the next start.
pub async fn start(config: Config) -> Result<Running> {
    start_with_clock(config, Arc::new(SystemClock)).await
}

/// [`start`] with a chosen clock.
pub async fn start_with_clock(config: Config, clock: Arc<dyn Clock>) -> Result<Running> {
    start_inner(config, clock, None).await
}

/// [`start`] with a **per-launch owner token** instead of the data dir's `token` file (which
/// is then neither read nor created): the desktop shell's mode. The shell hands this token to
/// its own window only, so a token leaked from the page dies with the process, and the
/// long-lived file token is never given to a web view. The file token is not accepted by this
/// server; peer, assistant and JWT credentials work as usual.
pub async fn start_with_owner_token(config: Config, owner_token: String) -> Result<Running> {
    if owner_token.trim().is_empty() {
        bail!("the per-launch owner token is empty");
    }
    private_dir::create(&config.data_dir)?;
    start_inner(config, Arc::new(SystemClock), Some(owner_token)).await
}

async fn start_inner(
    config: Config,
    clock: Arc<dyn Clock>,
    owner_token: Option<String>,
) -> Result<Running> {
    let ip = parse_host(&config.host)?;
    if let Some(url) = &config.public_url {
        check_public_url(url)?;
    }
    // Before anything reads the journal: recovery below assumes no other Sextant is live on it.
    let mut lock = DataDirLock::acquire(&config.data_dir)?;
    // A dir an older Sextant made (0755, a 0644 journal) is made private before anything is
    // read from it or written to it.
    private_dir::tighten(&config.data_dir)?;
    let token = match owner_token {
        Some(t) => t,
        None => ensure_token(&config.data_dir)?,
    };
    let security_file: SecurityFile = security_file::load(&config.data_dir.join("security.toml"))?;
    let file = agents_file::load(&config.data_dir.join("agents.toml"))?;
    let mut agents = file.built_ins()?;
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
    let peers = Arc::new(outbound_file::start_peers(
        &config.data_dir,
        journal.clone(),
        clock.clone(),
    )?);
    let (runtime, recovery) = Runtime::builder(
        journal,
        clock.clone(),
        agents,
        RuntimeConfig {
            work_dir: config.data_dir.join("work"),
            codex_homes: config.data_dir.join("codex"),
            person_codex_home: person_codex_home(),
            idle_worker: Duration::from_secs(300),
            cancel_grace: config.turns.cancel_grace,
        },
    )
    .outbound(peers.clone())
    .limits(sextant_runtime::Limits {
        max_concurrent_tasks: security_file.limits.max_concurrent_tasks,
        max_agent_turns_per_context: security_file.limits.max_agent_turns_per_context,
    })
    .build();

    let remote_credentials = security_file.has_jwt()
        || runtime
            .journal()
            .active_credentials()
            .await
            .context("reading credentials")?
            > 0;
    check_exposure(ip, &config.host, remote_credentials)?;
    let workspace = runtime
        .journal()
        .workspace_id(&tokens::workspace_candidate())
        .await
        .context("reading the workspace id")?;

    let listener = tokio::net::TcpListener::bind((ip, config.port))
        .await
        .with_context(|| format!("cannot listen on {}:{}", config.host, config.port))?;
    let addr = listener.local_addr()?;
    lock.record_address(&format!("http://{addr}"))?;
    if !addr.ip().is_loopback() {
        tracing::warn!(%addr, "listening beyond loopback: every request needs the token");
    }
    let public_host = config.public_url.as_deref().and_then(url_host);
    let mut extra_hosts: Vec<String> = security_file
        .perimeter
        .allowed_hosts
        .iter()
        .map(|h| h.to_ascii_lowercase())
        .collect();
    extra_hosts.extend(public_host.clone());
    if !addr.ip().is_loopback() && !addr.ip().is_unspecified() {
        extra_hosts.push(addr.ip().to_string());
    }
    let exposure = Exposure {
        loopback_only: addr.ip().is_loopback()
            && public_host.as_deref().is_none_or(is_loopback_name)
            && security_file.perimeter.anonymous_local,
        extra_hosts,
    };
    let security =
        Security::build(&security_file, &config.data_dir, workspace, exposure).map_err(|why| {
            anyhow::anyhow!("{}: {why}", config.data_dir.join("security.toml").display())
        })?;
    let push = outbound_file::start_push(&config.data_dir)?;
    let card_keys = sextant_server::card_keys::CardKeys::open_or_create(
        &config.data_dir.join(sextant_server::card_keys::FILE),
        sextant_a2a::signing::SignAlg::Es256,
        &sextant_core::ids::format_time(clock.now()),
    )
    .map_err(|e| anyhow::anyhow!(e))?;
    let security = Arc::new(security);
    // Every outbound A2A call (a2a_call, orchestrate, the a2a engine, answers to cards) is
    // an exchange too: it goes to the audit log.
    let audit = security.clone();
    peers.set_audit(Box::new(move |call| {
        audit
            .audit
            .record(sextant_access::audit::Record::outbound_call(
                &call.peer,
                call.latency_ms,
                call.error.as_deref(),
            ));
    }));
    // Every check has passed and the port is ours: only now may recovery run. It dispatches
    // queued inputs (their turns are journalled and their commands spawned), so a start that
    // fails after it would leave those inputs to be marked failed by the next start instead of
    // delivered.
    let recovered = recovery
        .run()
        .await
        .context("recovering unfinished tasks")?;
    if recovered > 0 {
        tracing::info!(recovered, "re-delivering accepted inputs from the last run");
    }
    let shutdown = CancellationToken::new();
    let scheduler = Scheduler::new(runtime.clone());
    scheduler
        .restore_pause()
        .await
        .context("reading whether schedules are paused")?;
    let scheduler_loop = scheduler.start(shutdown.child_token());
    let peers_handle = peers.clone();
    let state = AppState::new(App {
        runtime: runtime.clone(),
        peers,
        scheduler: scheduler.clone(),
        config: Arc::new(ServerConfig {
            token: token.clone(),
            public_url: config.public_url.clone(),
            default_agent,
            bind: addr,
            reply_timeout: config.turns.reply_timeout,
        }),
        started: clock.now(),
        shutdown: shutdown.clone(),
        security,
        push: Arc::new(push),
        card_keys: Arc::new(card_keys),
    });
    let push_loop = tokio::spawn(sextant_server::push::deliver::run(
        state.clone(),
        shutdown.child_token(),
    ));
    let retention = retention::Retention::new(
        runtime.journal().clone(),
        clock.clone(),
        security_file.retention.clone(),
        &config.data_dir,
    );
    let retention_loop = retention
        .clone()
        .map(|job| job.start(shutdown.child_token()));
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
        peers: peers_handle,
        push_loop,
        retention,
        retention_loop,
        shutdown,
        server,
        lock,
    })
}

#[cfg(test)]
mod perimeter_tests {
    use super::*;

    #[test]
    fn hosts_are_ip_literals_bare_or_bracketed() {
        assert_eq!(
            parse_host("127.0.0.1").unwrap(),
            IpAddr::V4(Ipv4Addr::LOCALHOST)
        );
        assert_eq!(
            parse_host("localhost").unwrap(),
            IpAddr::V4(Ipv4Addr::LOCALHOST)
        );
        assert!(parse_host("::1").unwrap().is_loopback());
        assert!(parse_host("[::1]").unwrap().is_loopback());
        assert!(parse_host("[::]").unwrap().is_unspecified());
        assert!(parse_host("0.0.0.0").unwrap().is_unspecified());
        for bad in ["example.com", "[::1", "1.2.3.4:80", ""] {
            assert!(parse_host(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn public_urls_need_https_beyond_loopback() {
        assert!(check_public_url("https://sextant.example.com").is_ok());
        assert!(check_public_url("http://127.0.0.1:9900").is_ok());
        assert!(check_public_url("http://localhost:9900/").is_ok());
        assert!(check_public_url("http://[::1]:9900").is_ok());
        let e = check_public_url("http://sextant.example.com").unwrap_err();
        assert!(e.to_string().contains("plain http"), "{e}");
        assert!(check_public_url("ftp://x.example").is_err());
        assert!(check_public_url("not a url").is_err());
    }

    #[test]
    fn exposure_needs_a_remote_credential() {
        let any: IpAddr = "0.0.0.0".parse().unwrap();
        let lo: IpAddr = "127.0.0.1".parse().unwrap();
        assert!(check_exposure(lo, "127.0.0.1", false).is_ok());
        assert!(check_exposure(any, "0.0.0.0", true).is_ok());
        let e = check_exposure(any, "0.0.0.0", false).unwrap_err();
        assert!(
            e.to_string().contains("refusing to listen on 0.0.0.0"),
            "{e}"
        );
    }
}
