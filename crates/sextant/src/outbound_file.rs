//! `outbound.toml`: settings for Sextant's outbound A2A calls (docs/peers.md), and the
//! peers service built from them.
//!
//! ```toml
//! allow_loopback = true            # peers on 127.0.0.0/8 and ::1 (default true)
//! ca_file = "ca.pem"               # extra CA certificates (PEM), trusted besides the
//!                                  # system roots; relative to the data dir
//! ```
//!
//! Peer tokens live in `peer-tokens.json` (mode 0600) in the data dir.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use serde::Deserialize;
use sextant_a2a::client::{A2aClient, ClientSettings};
use sextant_core::Clock;
use sextant_journal::Journal;
use sextant_runtime::peers::{Peers, TokenStore};

/// The parsed file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutboundFile {
    #[serde(default = "yes")]
    pub allow_loopback: bool,
    #[serde(default)]
    pub ca_file: Option<PathBuf>,
}

impl Default for OutboundFile {
    fn default() -> Self {
        Self {
            allow_loopback: true,
            ca_file: None,
        }
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
    }
}
