//! `outbound.toml`: settings for Sextant's outbound A2A calls (docs/peers.md), and the
//! peers service built from them.
//!
//! ```toml
//! allow_loopback = true            # peers on 127.0.0.0/8 and ::1 (default true)
//! ca_file = "ca.pem"               # extra CA certificates (PEM), trusted besides the
//!                                  # system roots; relative to the data dir
//!
//! [push]                           # push-notification webhooks (docs/push.md)
//! allow_loopback = false           # webhooks on 127.0.0.0/8 and ::1 (default false)
//! allow_private_network = false    # webhooks on 10/8, 172.16/12, 192.168/16, … (default false)
//! max_failures = 8                 # failed attempts in a row before a webhook stops
//! initial_backoff_ms = 1000        # first retry delay; doubles per failure, with jitter
//! max_backoff_secs = 600           # longest delay between attempts
//! timeout_secs = 10                # one attempt
//! ```
//!
//! Peer tokens live in `peer-tokens.json` (mode 0600) in the data dir.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use serde::Deserialize;
use sextant_core::Clock;
use sextant_journal::Journal;
use sextant_peers::client::{A2aClient, ClientSettings};
use sextant_peers::{Peers, TokenStore};
use sextant_server::push::{Push, PushSettings, seal::Sealer};

/// The parsed file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutboundFile {
    #[serde(default = "yes")]
    pub allow_loopback: bool,
    #[serde(default)]
    pub ca_file: Option<PathBuf>,
    #[serde(default)]
    pub push: PushSection,
}

impl Default for OutboundFile {
    fn default() -> Self {
        Self {
            allow_loopback: true,
            ca_file: None,
            push: PushSection::default(),
        }
    }
}

/// `[push]`: webhook deliveries (see `sextant_server::push::PushSettings`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PushSection {
    pub allow_loopback: bool,
    pub allow_private_network: bool,
    pub max_failures: u32,
    pub initial_backoff_ms: u64,
    pub max_backoff_secs: u64,
    pub timeout_secs: u64,
}

impl Default for PushSection {
    fn default() -> Self {
        let d = PushSettings::default();
        Self {
            allow_loopback: d.allow_loopback,
            allow_private_network: d.allow_private_network,
            max_failures: d.max_failures,
            initial_backoff_ms: d.initial_backoff.as_millis() as u64,
            max_backoff_secs: d.max_backoff.as_secs(),
            timeout_secs: d.timeout.as_secs(),
        }
    }
}

impl PushSection {
    /// The settings, or what is wrong with them.
    pub fn settings(&self) -> Result<PushSettings> {
        if self.max_failures == 0 {
            anyhow::bail!("[push] max_failures must be at least 1");
        }
        if self.initial_backoff_ms == 0 || self.timeout_secs == 0 || self.max_backoff_secs == 0 {
            anyhow::bail!(
                "[push] initial_backoff_ms, max_backoff_secs and timeout_secs must be > 0"
            );
        }
        Ok(PushSettings {
            allow_loopback: self.allow_loopback,
            allow_private_network: self.allow_private_network,
            max_failures: self.max_failures,
            initial_backoff: Duration::from_millis(self.initial_backoff_ms),
            max_backoff: Duration::from_secs(self.max_backoff_secs),
            timeout: Duration::from_secs(self.timeout_secs),
        })
    }
}

fn yes() -> bool {
    true
}

/// Reads the file; a missing file means the defaults.
pub fn load(path: &Path) -> Result<OutboundFile> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(OutboundFile::default()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    toml::from_str(&text).with_context(|| format!("{} is not valid", path.display()))
}

/// The peers service for a data dir: `outbound.toml`, `peer-tokens.json`, the journal.
pub fn start_peers(data_dir: &Path, journal: Journal, clock: Arc<dyn Clock>) -> Result<Peers> {
    let file = load(&data_dir.join("outbound.toml"))?;
    let settings = ClientSettings {
        allow_loopback: file.allow_loopback,
        ca_file: file.ca_file.map(|p| data_dir.join(p)),
        ..ClientSettings::default()
    };
    let client = A2aClient::new(settings)
        .map_err(|e| anyhow::anyhow!("{}: {e}", data_dir.join("outbound.toml").display()))?;
    let tokens =
        TokenStore::open(&data_dir.join("peer-tokens.json")).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(Peers::new(journal, clock, client, tokens))
}

/// The push service for a data dir: `outbound.toml` `[push]` and the secrets' key `push.key`.
pub fn start_push(data_dir: &Path) -> Result<Push> {
    let path = data_dir.join("outbound.toml");
    let settings = load(&path)?
        .push
        .settings()
        .with_context(|| format!("{} is not valid", path.display()))?;
    let sealer =
        Sealer::open_or_create(&data_dir.join("push.key")).map_err(|e| anyhow::anyhow!(e))?;
    Ok(Push::new(settings, sealer))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_mistakes() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = dir.path().join("outbound.toml");
        let d = load(&p).unwrap_or_else(|e| panic!("{e}"));
        assert!(d.allow_loopback && d.ca_file.is_none());
        std::fs::write(&p, "allow_loopback = false\nca_file = \"ca.pem\"\n")
            .unwrap_or_else(|e| panic!("{e}"));
        let f = load(&p).unwrap_or_else(|e| panic!("{e}"));
        assert!(!f.allow_loopback);
        assert_eq!(f.ca_file.as_deref(), Some(Path::new("ca.pem")));
        std::fs::write(&p, "allow_lopback = false\n").unwrap_or_else(|e| panic!("{e}"));
        assert!(load(&p).is_err());
        assert!(
            !d.push
                .settings()
                .unwrap_or_else(|e| panic!("{e}"))
                .allow_loopback
        );
        std::fs::write(
            &p,
            "[push]\nallow_loopback = true\ninitial_backoff_ms = 5\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let push = load(&p).unwrap_or_else(|e| panic!("{e}")).push;
        let s = push.settings().unwrap_or_else(|e| panic!("{e}"));
        assert!(s.allow_loopback && !s.allow_private_network);
        assert_eq!(s.initial_backoff, Duration::from_millis(5));
        std::fs::write(&p, "[push]\nmax_failures = 0\n").unwrap_or_else(|e| panic!("{e}"));
        assert!(
            load(&p)
                .unwrap_or_else(|e| panic!("{e}"))
                .push
                .settings()
                .is_err()
        );
        std::fs::write(&p, "[push]\nallow_loopbak = true\n").unwrap_or_else(|e| panic!("{e}"));
        assert!(load(&p).is_err());
    }
}
