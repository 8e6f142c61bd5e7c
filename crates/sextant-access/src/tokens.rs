//! Tokens Sextant issues: **per-peer tokens** (`sxp_…`, one named remote agent each) and
//! **assistant capability tokens** (`sxa_…`, one assistant runtime, scoped to this workspace:
//! either its workspace token, which reaches the MCP bridge and the schedules API, or a token
//! for one target Agent). Under a workspace token the assistant gets the owner's Agents as
//! peers, a credential per Agent issued on demand (`assistant_peers`). Issued, listed and
//! revoked by the owner from the API (`/api/v1/peer-tokens`, `/api/v1/assistant-tokens`, and
//! `/api/v1/assistant-tokens/{name}/peers`) or the CLI (`sextant peer-token …`, `sextant
//! assistant-token …`); a token is shown once, when it is created.
//!
//! A token is `prefix` + 64 hex digits (256 bits from the OS's random source). Only its SHA-256
//! is stored: with that much entropy a fast hash cannot be inverted or brute-forced, so a salt
//! or a slow KDF (needed for low-entropy passwords) would add cost and nothing else, and the
//! lookup stays one indexed read. Lookups happen on every request, so a revocation (from the
//! API or from the CLI in another process) takes effect on the next call.

use sextant_core::Principal;
use sextant_journal::{CredentialRow, Journal};
use sha2::{Digest, Sha256};

/// Prefix of per-peer tokens.
pub const PEER_PREFIX: &str = "sxp_";
/// Prefix of assistant capability tokens.
pub const ASSISTANT_PREFIX: &str = "sxa_";

/// A kind of issued credential.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Peer,
    Assistant,
}

impl Kind {
    /// As stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Peer => "peer",
            Kind::Assistant => "assistant",
        }
    }

    fn prefix(self) -> &'static str {
        match self {
            Kind::Peer => PEER_PREFIX,
            Kind::Assistant => ASSISTANT_PREFIX,
        }
    }
}

/// A fresh token: the prefix and 256 random bits in hex.
pub fn new_token(kind: Kind) -> Result<String, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| format!("no secure random source: {e}"))?;
    Ok(format!("{}{}", kind.prefix(), hex::encode(bytes)))
}

/// What is stored for a token.
pub fn token_hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Whether `token` has the shape of a token Sextant issues (so it is looked up, not treated as
/// a JWT).
pub fn is_issued_shape(token: &str) -> bool {
    (token.starts_with(PEER_PREFIX) || token.starts_with(ASSISTANT_PREFIX)) && token.len() <= 128
}

/// Checks a peer or assistant name: 1-64 characters, lowercase letters, digits, `.`, `_`, `-`,
/// starting with a letter or digit (it appears in principal keys and access patterns).
pub fn validate_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "name {name:?}: use 1-64 lowercase letters, digits, '.', '_' or '-', starting with a \
             letter or digit"
        ))
    }
}

/// A newly issued token (the only time it is shown) and its record.
#[derive(Debug, Clone)]
pub struct Issued {
    pub token: String,
    pub credential: CredentialRow,
}

/// Why a token was not issued.
#[derive(Debug, thiserror::Error)]
pub enum IssueError {
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Conflict(String),
    #[error(transparent)]
    Journal(sextant_journal::Error),
}

/// Issues a token at `at`. `workspace` is required for assistant tokens; `agent` makes one a
/// token for that one Agent, else it is the assistant's workspace token (the caller checks the
/// Agent exists).
pub async fn issue(
    journal: &Journal,
    kind: Kind,
    name: &str,
    agent: Option<&str>,
    workspace: Option<&str>,
    owner: &Principal,
    at: chrono::DateTime<chrono::Utc>,
) -> Result<Issued, IssueError> {
    validate_name(name).map_err(IssueError::Invalid)?;
    if kind == Kind::Assistant && workspace.is_none() {
        return Err(IssueError::Invalid(
            "an assistant token names its workspace".into(),
        ));
    }
    let token = new_token(kind).map_err(IssueError::Invalid)?;
    let credential = CredentialRow {
        credential_id: sextant_core::ids::new_id(),
        kind: kind.as_str().into(),
        name: name.into(),
        token_hash: token_hash(&token),
        workspace: workspace.map(String::from),
        agent_id: agent.map(Into::into),
        owner: owner.caller_key(),
        created_at: at,
        revoked_at: None,
        parent_id: None,
    };
    match journal.insert_credential(credential.clone()).await {
        Ok(()) => Ok(Issued { token, credential }),
        Err(sextant_journal::Error::Conflict(m)) => Err(IssueError::Conflict(m)),
        Err(e) => Err(IssueError::Journal(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_long_random_and_hashed() {
        let a = new_token(Kind::Peer).unwrap();
        let b = new_token(Kind::Peer).unwrap();
        assert_ne!(a, b);
        assert!(a.starts_with("sxp_") && a.len() == 4 + 64, "{a}");
        assert!(new_token(Kind::Assistant).unwrap().starts_with("sxa_"));
        assert_eq!(token_hash(&a).len(), 64);
        assert_ne!(token_hash(&a), token_hash(&b));
        assert!(is_issued_shape(&a));
        assert!(!is_issued_shape("eyJhbGciOi.x.y"));
        // The outbound scrubber recognises them.
        assert_eq!(
            sextant_core::redact::scrub_outbound(&format!("use {a} now"), false),
            "use [REDACTED] now"
        );
    }

    #[test]
    fn names_are_checked() {
        for ok in ["alice", "build-bot", "ci.runner_2", "0day"] {
            assert!(validate_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "Alice", "-x", "a b", "a:b", &"x".repeat(65)] {
            assert!(validate_name(bad).is_err(), "{bad}");
        }
    }
}
