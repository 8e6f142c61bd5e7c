//! The `sextant` command: `sextant serve` runs the headless server; `sextant token` prints the
//! console owner's token.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::{Parser, Subcommand};

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
        /// Interface to bind.
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
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Token { data_dir } => {
            let dir = data_dir.unwrap_or_else(sextant::default_data_dir);
            println!("{}", sextant::ensure_token(&dir)?);
            Ok(())
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
            tokio::runtime::Runtime::new()?.block_on(serve(config))
        }
    }
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
