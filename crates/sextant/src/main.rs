//! The `sextant` command: `sextant serve` runs the headless server; `sextant token` prints the
//! console owner's token; `sextant peer-token …` and `sextant assistant-token …` issue, list and
//! revoke the tokens of remote peers and of assistant runtimes (docs/security.md).

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
    /// Assistant capability tokens: one per assistant runtime, reaching one Agent of this
    /// workspace only (its A2A routes and the MCP bridge).
    AssistantToken {
        #[arg(long, env = "SEXTANT_DATA_DIR", global = true)]
        data_dir: Option<PathBuf>,
        #[command(subcommand)]
        action: TokenAction,
    },
}

#[derive(Subcommand)]
enum TokenAction {
    /// Issue a token and print it once (Sextant keeps only its SHA-256).
    Create {
        /// Lowercase letters, digits, '.', '_' or '-': the peer's (or assistant's) name in
        /// access lists (`peer:NAME`, `assistant:NAME`).
        name: String,
        /// The one Agent an assistant token reaches (assistant tokens only).
        #[arg(long)]
        agent: Option<String>,
    },
    /// List tokens (never the tokens themselves), revoked ones too.
    List,
    /// Revoke the active token with this name (or id); the next request with it is refused.
    Revoke { name: String },
}

fn token_command(
    data_dir: Option<PathBuf>,
    kind: sextant_server::credentials::Kind,
    action: TokenAction,
) -> Result<()> {
    let dir = data_dir.unwrap_or_else(sextant::default_data_dir);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        match action {
            TokenAction::Create { name, agent } => {
                if kind == sextant_server::credentials::Kind::Peer && agent.is_some() {
                    anyhow::bail!(
                        "--agent is for assistant tokens; a peer's reach is set by access lists"
                    );
                }
                let issued = sextant::tokens::create(&dir, kind, &name, agent.as_deref()).await?;
                eprintln!(
                    "sextant: {} token {:?} created (shown once; Sextant keeps only its SHA-256):",
                    kind.as_str(),
                    name
                );
                println!("{}", issued.token);
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

fn main() -> Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::PeerToken { data_dir, action } => {
            token_command(data_dir, sextant_server::credentials::Kind::Peer, action)
        }
        Command::AssistantToken { data_dir, action } => token_command(
            data_dir,
            sextant_server::credentials::Kind::Assistant,
            action,
        ),
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
        } => {
            tracing_subscriber::fmt()
                .with_env_filter(
                    tracing_subscriber::EnvFilter::try_from_default_env()
                        .unwrap_or_else(|_| "info".into()),
                )
                .with_writer(std::io::stderr)
                .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
                .init();
            let config = sextant::Config {
                data_dir: data_dir.unwrap_or_else(sextant::default_data_dir),
                host,
                port,
                public_url,
                conformance,
            };
            server_runtime()?.block_on(serve(config))
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
