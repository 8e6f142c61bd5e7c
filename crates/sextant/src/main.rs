//! The `sextant` command: `sextant serve` runs the headless server; `sextant token` prints the
//! console owner's token; `sextant peer-token …` and `sextant assistant-token …` issue, list and
//! revoke the tokens of remote peers and of assistant runtimes, and `sextant assistant-token
//! peers NAME` an assistant's per-Agent credentials with a Hermes peers block
//! (docs/security.md); `sextant card-key show|rotate` shows and rotates the key cards are
//! signed with (docs/card-signing.md); `sextant backup|restore|export` save and bring back the
//! whole profile or write it as JSON lines (`sextant::backup`); `sextant retention` applies
//! `[retention]` once, or shows what it would delete (`sextant::retention`).

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};

// mimalloc rather than glibc's malloc: a request allocates and frees many small values across
// the runtime's threads and the journal writer, where glibc's arenas cost about a tenth of the
// request's CPU (measured with perf under bench/run.sh). Built without transparent huge pages
// (`no_thp`, in the workspace Cargo.toml), which cost RSS and bought nothing measurable.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "sextant",
    version,
    about = "A desktop console for your agents (A2A 1.0 server)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the A2A server (headless).
    Serve {
        /// Where the journal, token and agents.toml live.
        #[arg(long, env = "SEXTANT_DATA_DIR")]
        data_dir: Option<PathBuf>,
        /// Address to listen on: an IPv4 or IPv6 literal (bare or in brackets) or localhost.
        /// Anything beyond loopback needs a credential for remote callers (a peer or assistant
        /// token, or [jwt] in security.toml).
        #[arg(long, env = "SEXTANT_HOST", default_value = "127.0.0.1")]
        host: String,
        /// Port to bind (0 picks a free one; the chosen address is printed).
        #[arg(long, env = "SEXTANT_PORT", default_value_t = 9900)]
        port: u16,
        /// The URL callers reach Sextant at (for advertised URLs and links).
        #[arg(long, env = "SEXTANT_PUBLIC_URL")]
        public_url: Option<String>,
        /// Add the A2A conformance test agent and make it the default agent.
        #[arg(long)]
        conformance: bool,
        /// Seconds a canceled turn's processes get between SIGTERM and SIGKILL.
        #[arg(long, env = "SEXTANT_CANCEL_GRACE_SECS", default_value_t = 5)]
        cancel_grace_secs: u64,
        /// Seconds a blocking SendMessage waits before it answers with the task as it is (it
        /// runs on); 0 waits until the task ends or waits for someone.
        #[arg(long, env = "SEXTANT_REPLY_TIMEOUT_SECS", default_value_t = 300)]
        reply_timeout_secs: u64,
        /// Export traces over OTLP/HTTP (protobuf) to this collector base URL (`/v1/traces`
        /// is appended), e.g. http://127.0.0.1:4318. Without it the standard
        /// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / OTEL_EXPORTER_OTLP_ENDPOINT are read; with
        /// none of them traces are off.
        #[arg(long, env = "SEXTANT_OTLP_ENDPOINT")]
        otlp_endpoint: Option<String>,
    },
    /// Print the console owner's bearer token (creating it on first use).
    Token {
        #[arg(long, env = "SEXTANT_DATA_DIR")]
        data_dir: Option<PathBuf>,
    },
    /// Per-peer tokens: one named token for each remote agent that calls your Agents.
    PeerToken {
        #[arg(long, env = "SEXTANT_DATA_DIR", global = true)]
        data_dir: Option<PathBuf>,
        #[command(subcommand)]
        action: TokenAction,
    },
    /// Rebuild the console's full-text index of task text from the journal (while Sextant is
    /// not running: it holds the data dir).
    Reindex {
        #[arg(long, env = "SEXTANT_DATA_DIR")]
        data_dir: Option<PathBuf>,
    },
    /// Assistant capability tokens: an assistant's workspace token (the MCP bridge, the
    /// schedules API, your Agents as peers on demand), or a token for one Agent.
    AssistantToken {
        #[arg(long, env = "SEXTANT_DATA_DIR", global = true)]
        data_dir: Option<PathBuf>,
        #[command(subcommand)]
        action: AssistantAction,
    },
    /// Back up the whole profile (journal snapshot, settings, audit log and, unless
    /// --no-secrets, the secret files) into one tar file, while Sextant runs or not.
    Backup {
        #[arg(long, env = "SEXTANT_DATA_DIR")]
        data_dir: Option<PathBuf>,
        /// Leave out the owner token, peer tokens, push key and card keys (what the console's
        /// download leaves out); a restore then keeps the target dir's own.
        #[arg(long)]
        no_secrets: bool,
        /// The backup file to write (replaced if it exists).
        file: PathBuf,
    },
    /// Restore a backup into the data dir. Refused while a Sextant runs on it; the dir that
    /// was there is kept beside it as <dir>.replaced-<time>.
    Restore {
        #[arg(long, env = "SEXTANT_DATA_DIR")]
        data_dir: Option<PathBuf>,
        /// The backup file (from `sextant backup` or the console's download).
        file: PathBuf,
    },
    /// Write Sessions, tasks, transcripts (events), schedules, Runs and the audit log as JSON
    /// lines (one object per line with a "type"; see the README), while Sextant runs or not.
    Export {
        #[arg(long, env = "SEXTANT_DATA_DIR")]
        data_dir: Option<PathBuf>,
        /// Write to this file instead of stdout.
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
    /// Apply the retention policy ([retention] in security.toml) once: delete old Sessions
    /// (never ones with pending work, nor a schedule's latest Run), exporting them first if
    /// export_before_delete is set. A running Sextant does this by itself every hour; this
    /// command needs it stopped, except with --dry-run.
    Retention {
        #[arg(long, env = "SEXTANT_DATA_DIR")]
        data_dir: Option<PathBuf>,
        /// Only show what would be deleted (one line per Session on stdout); works while
        /// Sextant runs.
        #[arg(long)]
        dry_run: bool,
        /// Use this many days instead of keep_days from security.toml.
        #[arg(long)]
        keep_days: Option<u32>,
        /// Use this size (GB) instead of keep_gb from security.toml.
        #[arg(long)]
        keep_gb: Option<f64>,
        /// Then switch the journal to incremental auto-vacuum with one full VACUUM (rewrites
        /// the whole file; needs its size free on disk), so later runs give freed space back
        /// to the file system.
        #[arg(long, conflicts_with = "dry_run")]
        vacuum: bool,
    },
    /// The key Agent Cards are signed with (card-key.json in the data dir).
    CardKey {
        #[arg(long, env = "SEXTANT_DATA_DIR", global = true)]
        data_dir: Option<PathBuf>,
        #[command(subcommand)]
        action: CardKeyAction,
    },
}

#[derive(Subcommand)]
enum CardKeyAction {
    /// Print the signing key's id and algorithm, and the published JWKS.
    Show,
    /// Make a new signing key. A running Sextant signs with it from its next card on; the key
    /// it replaces stays published until the next rotation (peers that pinned the old key see
    /// a changed key and disable this Sextant until their owners re-pin it).
    Rotate {
        /// ES256 (default) or EdDSA.
        #[arg(long, default_value = "ES256")]
        alg: String,
        /// Stop publishing the replaced key at once (when it may have leaked).
        #[arg(long)]
        drop_previous: bool,
    },
}

fn card_key_command(data_dir: Option<PathBuf>, action: CardKeyAction) -> Result<()> {
    use sextant_server::card_keys;
    let dir = data_dir.unwrap_or_else(sextant::default_data_dir);
    sextant::private_dir::create(&dir)?;
    let path = dir.join(card_keys::FILE);
    let now = sextant_core::ids::format_time(chrono::Utc::now());
    let ring = match action {
        CardKeyAction::Show => {
            card_keys::CardKeys::open_or_create(&path, sextant_a2a::signing::SignAlg::Es256, &now)
                .map_err(|e| anyhow::anyhow!(e))?
                .keys()
        }
        CardKeyAction::Rotate { alg, drop_previous } => {
            let alg = sextant_a2a::signing::SignAlg::parse(&alg)
                .ok_or_else(|| anyhow::anyhow!("--alg {alg:?}: use ES256 or EdDSA"))?;
            let ring = card_keys::rotate(&path, alg, !drop_previous, &now)
                .map_err(|e| anyhow::anyhow!(e))?;
            eprintln!(
                "sextant: new card signing key {} ({}){}",
                ring.current.kid(),
                ring.current.alg().name(),
                if drop_previous {
                    "; earlier keys retired"
                } else {
                    ""
                }
            );
            std::sync::Arc::new(ring)
        }
    };
    println!(
        "kid {} alg {} created {}",
        ring.current.kid(),
        ring.current.alg().name(),
        ring.created_at
    );
    println!("{}", sextant_a2a::signing::jwks(ring.all()));
    Ok(())
}

#[derive(Subcommand)]
enum AssistantAction {
    /// Issue a token and print it once (Sextant keeps only its SHA-256). Without --agent it is
    /// the assistant's workspace token.
    Create {
        /// Lowercase letters, digits, '.', '_' or '-': the assistant's name in access lists
        /// (`assistant:NAME`).
        name: String,
        /// Make it a token for this one Agent (its A2A routes and its tasks on the MCP bridge).
        #[arg(long)]
        agent: Option<String>,
    },
    /// List tokens (never the tokens themselves), revoked ones too, with each assistant's
    /// per-Agent credentials.
    List,
    /// Revoke the active token with this name (or id), and with it every per-Agent credential
    /// issued under it; the next request with any of them is refused.
    Revoke { name: String },
    /// Issue the assistant's per-Agent credentials (fresh ones: each replaces the one before)
    /// and print a ready-to-paste `a2a_agents:` block for Hermes' config.yaml.
    Peers {
        /// The assistant (its workspace token's name).
        name: String,
        /// Only these Agents (repeatable); default: every Agent the assistant may call.
        #[arg(long = "agent")]
        agents: Vec<String>,
        /// The URL the assistant reaches Sextant at (default: the running Sextant's address
        /// from the data dir, else http://127.0.0.1:9900).
        #[arg(long, env = "SEXTANT_PUBLIC_URL")]
        url: Option<String>,
    },
    /// Revoke the assistant's credential for one Agent.
    RevokePeer { name: String, agent: String },
}

#[derive(Subcommand)]
enum TokenAction {
    /// Issue a token and print it once (Sextant keeps only its SHA-256).
    Create {
        /// Lowercase letters, digits, '.', '_' or '-': the peer's name in access lists
        /// (`peer:NAME`).
        name: String,
    },
    /// List tokens (never the tokens themselves), revoked ones too.
    List,
    /// Revoke the active token with this name (or id); the next request with it is refused.
    Revoke { name: String },
}

fn token_command(
    data_dir: Option<PathBuf>,
    kind: sextant_access::tokens::Kind,
    action: TokenAction,
) -> Result<()> {
    let dir = data_dir.unwrap_or_else(sextant::default_data_dir);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        match action {
            TokenAction::Create { name } => {
                let issued = sextant::tokens::create(&dir, kind, &name, None).await?;
                eprintln!(
                    "sextant: {} token {:?} created (shown once; Sextant keeps only its SHA-256):",
                    kind.as_str(),
                    name
                );
                println!("{}", issued.token);
                if kind == sextant_access::tokens::Kind::Peer {
                    let peer = sextant_core::Principal::peer(&name);
                    let agents = sextant::tokens::callable_by(&dir, &peer).await?;
                    eprintln!(
                        "sextant: {}; an Agent is its to call when the Agent's access list in \
                         agents.toml names peer:{name} (for the built-in echo or shell, an \
                         [[agents]] entry with its id and an access list is enough)",
                        if agents.is_empty() {
                            "it may call no Agent yet".to_string()
                        } else {
                            format!("it may call: {}", agents.join(", "))
                        }
                    );
                }
            }
            TokenAction::List => {
                for c in sextant::tokens::list(&dir, kind).await? {
                    println!("{}", sextant::tokens::describe(&c));
                }
            }
            TokenAction::Revoke { name } => {
                sextant::tokens::revoke(&dir, kind, &name).await?;
                eprintln!("sextant: {} token {name:?} revoked", kind.as_str());
            }
        }
        Ok(())
    })
}

fn assistant_command(data_dir: Option<PathBuf>, action: AssistantAction) -> Result<()> {
    use sextant_access::tokens::Kind;
    let dir = data_dir.unwrap_or_else(sextant::default_data_dir);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        match action {
            AssistantAction::Create { name, agent } => {
                let issued =
                    sextant::tokens::create(&dir, Kind::Assistant, &name, agent.as_deref()).await?;
                let scope = match &agent {
                    Some(a) => format!("for agent {a}"),
                    None => "(workspace token)".into(),
                };
                eprintln!(
                    "sextant: assistant token {name:?} {scope} created (shown once; Sextant \
                     keeps only its SHA-256):"
                );
                println!("{}", issued.token);
            }
            AssistantAction::List => {
                for c in sextant::tokens::list(&dir, Kind::Assistant).await? {
                    println!("{}", sextant::tokens::describe(&c));
                    for line in sextant::tokens::describe_peers(&dir, &c).await? {
                        println!("{line}");
                    }
                }
            }
            AssistantAction::Revoke { name } => {
                sextant::tokens::revoke(&dir, Kind::Assistant, &name).await?;
                eprintln!("sextant: assistant token {name:?} revoked, with its peer credentials");
            }
            AssistantAction::Peers { name, agents, url } => {
                let base = sextant::tokens::base_url(&dir, url.as_deref());
                let yaml = sextant::tokens::peers(&dir, &name, &agents, &base).await?;
                eprintln!(
                    "sextant: per-Agent credentials issued for assistant {name:?} (shown once; \
                     the ones before are revoked):"
                );
                print!("{yaml}");
            }
            AssistantAction::RevokePeer { name, agent } => {
                sextant::tokens::revoke_peer(&dir, &name, &agent).await?;
                eprintln!("sextant: assistant {name:?}'s credential for {agent:?} revoked");
            }
        }
        Ok(())
    })
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::PeerToken { data_dir, action } => {
            token_command(data_dir, sextant_access::tokens::Kind::Peer, action)
        }
        Command::AssistantToken { data_dir, action } => assistant_command(data_dir, action),
        Command::CardKey { data_dir, action } => card_key_command(data_dir, action),
        Command::Backup {
            data_dir,
            no_secrets,
            file,
        } => {
            let dir = data_dir.unwrap_or_else(sextant::default_data_dir);
            let secrets = if no_secrets {
                sextant_server::profile::Secrets::Leave
            } else {
                sextant_server::profile::Secrets::Include
            };
            let m = sextant::backup::backup(&dir, &file, secrets)?;
            eprintln!(
                "sextant: backed up {} Sessions, {} tasks and {} files to {}{}",
                m.sessions,
                m.tasks,
                m.files.len(),
                file.display(),
                if m.secrets_included {
                    " (with secrets: keep it private)"
                } else {
                    " (without secrets)"
                }
            );
            for l in &m.left_out {
                eprintln!("  not included: {l}");
            }
            Ok(())
        }
        Command::Restore { data_dir, file } => {
            let dir = data_dir.unwrap_or_else(sextant::default_data_dir);
            let r = sextant::backup::restore(&file, &dir)?;
            eprintln!(
                "sextant: restored {} Sessions and {} tasks (backup of {}) into {}",
                r.manifest.sessions,
                r.manifest.tasks,
                r.manifest.created_at,
                dir.display()
            );
            if let Some(old) = &r.replaced {
                eprintln!("  the data dir that was there is kept at {}", old.display());
            }
            if !r.kept_secrets.is_empty() {
                eprintln!(
                    "  secrets the backup leaves out, kept from that dir: {}",
                    r.kept_secrets.join(", ")
                );
            }
            Ok(())
        }
        Command::Export { data_dir, output } => {
            let dir = data_dir.unwrap_or_else(sextant::default_data_dir);
            let end = match &output {
                Some(file) => sextant::backup::export_to_file(&dir, file)?,
                None => {
                    let out = std::io::BufWriter::new(std::io::stdout().lock());
                    sextant::backup::export(&dir, out)?
                }
            };
            let counts: Vec<String> = end.counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
            eprintln!("sextant: exported {}", counts.join(", "));
            Ok(())
        }
        Command::Retention {
            data_dir,
            dry_run,
            keep_days,
            keep_gb,
            vacuum,
        } => {
            let dir = data_dir.unwrap_or_else(sextant::default_data_dir);
            let mut settings = sextant::security_file::load(&dir.join("security.toml"))?.retention;
            settings.keep_days = keep_days.or(settings.keep_days);
            settings.keep_gb = keep_gb.or(settings.keep_gb);
            settings.validate().map_err(|e| anyhow::anyhow!(e))?;
            if dry_run {
                return sextant::retention::dry_run(&dir, &settings, chrono::Utc::now());
            }
            sextant::retention::run_once(&dir, &settings, vacuum, chrono::Utc::now())
        }
        Command::Token { data_dir } => {
            let dir = data_dir.unwrap_or_else(sextant::default_data_dir);
            println!("{}", sextant::ensure_token(&dir)?);
            Ok(())
        }
        Command::Reindex { data_dir } => {
            let dir = data_dir.unwrap_or_else(sextant::default_data_dir);
            // A running Sextant holds the data dir; rebuilding under it would stall its writes.
            let _lock = sextant::data_dir_lock::DataDirLock::acquire(&dir)?;
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            rt.block_on(async {
                let journal = sextant_journal::Journal::open(dir.join("journal.db"))
                    .context("opening the journal")?;
                let rows = journal.rebuild_search().await?;
                eprintln!(
                    "sextant: the full-text index was rebuilt from the journal ({rows} rows)"
                );
                anyhow::Ok(())
            })
        }
        Command::Serve {
            data_dir,
            host,
            port,
            public_url,
            conformance,
            cancel_grace_secs,
            reply_timeout_secs,
            otlp_endpoint,
        } => {
            let endpoint = sextant::telemetry::traces_endpoint(otlp_endpoint.as_deref(), |k| {
                std::env::var(k).ok()
            })?;
            let telemetry = sextant::telemetry::init(endpoint.as_ref())?;
            let config = sextant::Config {
                data_dir: data_dir.unwrap_or_else(sextant::default_data_dir),
                host,
                port,
                public_url,
                conformance,
                turns: sextant::TurnSettings {
                    cancel_grace: std::time::Duration::from_secs(cancel_grace_secs),
                    reply_timeout: (reply_timeout_secs > 0)
                        .then(|| std::time::Duration::from_secs(reply_timeout_secs)),
                },
            };
            let served = server_runtime()?.block_on(serve(config));
            // After the runtime: the exporter's last batch is sent with a blocking client.
            telemetry.shutdown();
            served
        }
    }
}

/// The server's runtime. The journal's writer is a thread of its own, and under load it keeps
/// a core busy; tokio gets the other cores ([`tokio_workers`]). `TOKIO_WORKER_THREADS` still
/// decides when it is set.
fn server_runtime() -> std::io::Result<tokio::runtime::Runtime> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    builder.enable_all();
    if std::env::var_os("TOKIO_WORKER_THREADS").is_none() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        builder.worker_threads(tokio_workers(cores));
    }
    builder.build()
}

/// One tokio worker per core but the journal writer's (at least one). Measured on 2 cores
/// with the benchmark's 32 connections: one worker answered about 11% more requests per
/// second than two (a second worker only contends with the writer for its core).
fn tokio_workers(cores: usize) -> usize {
    cores.saturating_sub(1).max(1)
}

async fn serve(config: sextant::Config) -> Result<()> {
    let data_dir = config.data_dir.clone();
    let running = sextant::start(config).await?;
    tracing::info!(data_dir = %data_dir.display(), "journal and token in the data dir");
    // One machine-readable line on stdout: scripts wait for it instead of sleeping.
    let mut out = std::io::stdout().lock();
    writeln!(out, "sextant: listening on {}", running.url())?;
    out.flush()?;
    drop(out);
    wait_for_signal().await;
    tracing::info!("shutting down: draining running turns");
    running.shutdown().await?;
    tracing::info!("stopped");
    Ok(())
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

#[cfg(test)]
mod tests {
    use super::tokio_workers;

    #[test]
    fn tokio_leaves_the_journal_writer_a_core() {
        assert_eq!(tokio_workers(0), 1);
        assert_eq!(tokio_workers(1), 1);
        assert_eq!(tokio_workers(2), 1);
        assert_eq!(tokio_workers(8), 7);
    }
}
