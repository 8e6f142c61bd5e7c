//! The owner's Agents as A2A **peers** of an assistant: what an assistant holding a workspace
//! token (`sxa_…` without a target Agent) may call, each with a credential scoped to this
//! workspace and that one Agent, issued on demand, listed and revoked by the owner.
//!
//! - [`targets`]: the Agents the assistant may call now (its own access, per the Agent's
//!   access list and the owner's revocations; the owner's access too).
//! - [`issue`]: a fresh per-Agent credential for each of them (rotating the one that was
//!   active), returned once with the URL to call.
//! - [`hermes_block`]: a ready-to-paste `a2a_agents:` block for Hermes' `config.yaml`, whose
//!   peer `url` is the base its A2A client reads the card under
//!   (`<url>/.well-known/agent-card.json`) and whose `auth` is the per-Agent token.
//!
//! Used by the MCP tools (the assistant asks), the owner's REST API and the CLI
//! (`sextant assistant-token peers NAME`).

use serde::Serialize;
use sextant_core::ids::{format_time, new_id};
use sextant_core::{AgentSpec, Principal};
use sextant_journal::{CredentialRow, Journal, PeerCredentialRow};

use crate::tokens::{Kind, new_token, token_hash};

/// Where the server serves the assistant capability routes (`sextant_server::a2a::assistant`):
/// an issued peer's URL is under it, so the CLI prints the same URLs the server answers on.
pub const ROUTE_PREFIX: &str = "/api/v1/assistant-a2a/agents";

/// Where an Agent's assistant A2A surface lives under `base`: the peer URL (its card is at
/// `…/.well-known/agent-card.json`, its JSON-RPC endpoint at `…/a2a`).
pub fn peer_url(base: &str, agent_id: &str) -> String {
    format!("{}{ROUTE_PREFIX}/{agent_id}", base.trim_end_matches('/'))
}

/// What an Agent offers, as capability words for a peer entry: its skills' ids and tags.
pub fn capabilities(agent: &AgentSpec) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in &agent.skills {
        for w in std::iter::once(&s.id).chain(&s.tags) {
            if !out.contains(w) {
                out.push(w.clone());
            }
        }
    }
    out
}

/// The assistant principal of an assistant token.
pub fn principal_of(cred: &CredentialRow) -> Option<Principal> {
    cred.workspace
        .as_deref()
        .map(|ws| Principal::assistant(ws, &cred.name))
}

/// The Agents among `agents` the assistant may call, per `may_call`.
pub fn targets(agents: &[AgentSpec], may_call: impl Fn(&AgentSpec) -> bool) -> Vec<&AgentSpec> {
    agents.iter().filter(|a| may_call(a)).collect()
}

/// One peer as listed or issued (camelCase, as the credentials API).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Peer {
    pub agent_id: String,
    pub name: String,
    pub description: String,
    /// The peer URL (see [`peer_url`]).
    pub url: String,
    pub card_url: String,
    pub capabilities: Vec<String>,
    /// The per-Agent credential that is active, if any (never its token).
    pub credential_id: Option<String>,
    pub credential_created_at: Option<String>,
    /// The token, only in the answer that issued it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
}

impl Peer {
    /// The peer entry for `agent` under `base`, with its active credential, if any.
    pub fn of(agent: &AgentSpec, base: &str, active: Option<&PeerCredentialRow>) -> Self {
        let url = peer_url(base, &agent.id);
        Self {
            agent_id: agent.id.clone(),
            name: agent.name.clone(),
            description: agent.description.clone(),
            card_url: format!("{url}/.well-known/agent-card.json"),
            url,
            capabilities: capabilities(agent),
            credential_id: active.map(|c| c.credential_id.clone()),
            credential_created_at: active.map(|c| format_time(c.created_at)),
            token: None,
        }
    }
}

/// The active per-Agent credential of `parent` for each Agent.
pub async fn active_credentials(
    journal: &Journal,
    parent: &CredentialRow,
) -> Result<Vec<PeerCredentialRow>, sextant_journal::Error> {
    Ok(journal
        .peer_credentials(&parent.credential_id)
        .await?
        .into_iter()
        .filter(|c| c.revoked_at.is_none())
        .collect())
}

/// Issues a fresh credential for each of `agents` under the assistant token `parent`
/// (rotating the one that was active for that Agent); the peers with their tokens.
pub async fn issue(
    journal: &Journal,
    parent: &CredentialRow,
    agents: &[&AgentSpec],
    base: &str,
    at: chrono::DateTime<chrono::Utc>,
) -> Result<Vec<Peer>, String> {
    let mut out = Vec::with_capacity(agents.len());
    for agent in agents {
        let token = new_token(Kind::Assistant)?;
        let row = PeerCredentialRow {
            credential_id: new_id(),
            parent_id: parent.credential_id.clone(),
            agent_id: agent.id.as_str().into(),
            token_hash: token_hash(&token),
            created_at: at,
            revoked_at: None,
        };
        journal
            .issue_peer_credential(row.clone())
            .await
            .map_err(|e| e.to_string())?;
        let mut peer = Peer::of(agent, base, Some(&row));
        peer.token = Some(token);
        out.push(peer);
    }
    Ok(out)
}

/// A YAML double-quoted scalar (JSON's string syntax is valid YAML).
fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// A YAML mapping key: the Agent id as it is when it is a plain word (Agent ids are lowercase
/// letters, digits, `-` and `_`), quoted otherwise.
fn key(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    if plain { s.to_string() } else { quoted(s) }
}

/// The `a2a_agents:` block for Hermes' `config.yaml`: one peer per issued credential, named by
/// its Agent id, with `url`, `auth: {type: bearer, token}`, `timeout` and `capabilities`.
pub fn hermes_block(assistant: &str, peers: &[Peer]) -> String {
    let mut out = format!(
        "# Sextant's Agents as A2A peers of assistant {assistant}: paste into Hermes' \
         config.yaml.\n# Each token reaches one Agent and is shown only here. Revoke one with\n# \
         `sextant assistant-token revoke-peer {assistant} AGENT`, all with `sextant \
         assistant-token revoke {assistant}`.\na2a_agents:\n"
    );
    for p in peers {
        let Some(token) = &p.token else { continue };
        let caps: Vec<String> = p.capabilities.iter().map(|c| quoted(c)).collect();
        out.push_str(&format!(
            "  {}:\n    url: {}\n    auth: {{ type: bearer, token: {} }}\n    timeout: 300\n    \
             capabilities: [{}]\n",
            key(&p.agent_id),
            quoted(&p.url),
            quoted(token),
            caps.join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hermes_block_is_yaml_hermes_reads() {
        let mut shell = AgentSpec::shell();
        shell.skills[0].tags = vec!["shell".into(), "ops \"quoted\"".into()];
        let mut p = Peer::of(&shell, "http://127.0.0.1:9900/", None);
        assert_eq!(
            p.url,
            "http://127.0.0.1:9900/api/v1/assistant-a2a/agents/shell"
        );
        assert_eq!(
            p.card_url,
            "http://127.0.0.1:9900/api/v1/assistant-a2a/agents/shell/.well-known/agent-card.json"
        );
        p.token = Some("sxa_abc".into());
        let unissued = Peer::of(&AgentSpec::echo(), "http://h", None);
        let yaml = hermes_block("hermes", &[p, unissued]);
        assert!(yaml.contains("a2a_agents:\n  shell:\n"), "{yaml}");
        assert!(
            yaml.contains("    url: \"http://127.0.0.1:9900/api/v1/assistant-a2a/agents/shell\"\n"),
            "{yaml}"
        );
        assert!(
            yaml.contains("    auth: { type: bearer, token: \"sxa_abc\" }\n"),
            "{yaml}"
        );
        // Hostile skill words stay inside their quotes.
        assert!(yaml.contains(r#""ops \"quoted\"""#), "{yaml}");
        // A peer without a token (not issued now) is not in the block.
        assert!(!yaml.contains("echo"), "{yaml}");
        assert_eq!(key("shell_2"), "shell_2");
        assert_eq!(key("a: b"), "\"a: b\"");
    }
}
