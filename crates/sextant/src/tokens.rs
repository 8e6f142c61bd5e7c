//! The token commands of the CLI (`sextant peer-token …`, `sextant assistant-token …`): they
//! open the data dir's journal directly, so they work whether or not Sextant is running, and a
//! revocation takes effect on the running server's next request (it looks tokens up on every
//! request). `sextant assistant-token peers NAME` issues the assistant's per-Agent credentials
//! and prints the Hermes `a2a_agents:` block (see `sextant_access::assistant_peers`).

use std::path::Path;

use anyhow::{Context, Result, bail};
use sextant_access::assistant_peers;
use sextant_access::audit::Record;
use sextant_access::tokens::{self, Issued, Kind};
use sextant_core::ids::format_time;
use sextant_core::{AgentSpec, Principal, Rights};
use sextant_journal::{CredentialRow, Journal};
use sextant_runtime::access::AccessPolicy;

use crate::agents_file;

fn open(data_dir: &Path) -> Result<Journal> {
    crate::private_dir::create(data_dir)?;
    Journal::open(data_dir.join("journal.db")).context("opening the journal")
}

/// Writes one audit record for a token command, to the data dir's `audit.jsonl` (the same
/// log the server writes, with `security.toml`'s rotation settings), and waits until it is
/// written: a token issued or revoked from the CLI is as visible there as one through the API,
/// in the same shape ([`Record::token_issued`]), its route saying it came from the CLI.
async fn audit(data_dir: &Path, record: Record) -> Result<()> {
    use sextant_access::audit::AuditLog;
    let settings = crate::security_file::load(&data_dir.join("security.toml"))?;
    let log = AuditLog::open(
        &data_dir.join("audit.jsonl"),
        settings.audit.max_bytes,
        settings.audit.keep,
    )
    .context("opening the audit log")?;
    log.record(record.route(CLI_ROUTE));
    log.flush().await;
    Ok(())
}

/// The `route` of the CLI's audit records.
const CLI_ROUTE: &str = "sextant CLI";

/// A new workspace id candidate (kept only if the data dir has none yet).
pub fn workspace_candidate() -> String {
    let id = uuid::Uuid::new_v4().simple().to_string();
    format!("ws-{}", &id[..12])
}

/// Every Agent this data dir serves (built-ins and `agents.toml`; the conformance Agent too,
/// which only `sextant serve --conformance` serves).
fn agents(data_dir: &Path) -> Result<Vec<AgentSpec>> {
    let file = agents_file::load(&data_dir.join("agents.toml"))?;
    let mut all: Vec<AgentSpec> = file
        .built_ins()?
        .into_iter()
        .chain([AgentSpec::conformance()])
        .chain(file.agents)
        .collect();
    all.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(all)
}

/// The Agents `principal` may call on this data dir (their access lists and the owner's
/// revocations; not the conformance test Agent, which only `--conformance` serves).
pub async fn callable_by(data_dir: &Path, principal: &Principal) -> Result<Vec<String>> {
    let journal = open(data_dir)?;
    let policy = AccessPolicy::default();
    let mut denied: std::collections::HashMap<String, Vec<String>> = Default::default();
    for (agent, who) in journal.denials().await? {
        denied.entry(agent).or_default().push(who);
    }
    for (agent, list) in denied {
        policy.set_denied(&agent, list);
    }
    Ok(agents(data_dir)?
        .into_iter()
        .filter(|a| a.id != "conformance" && policy.authorize(principal, a, Rights::Call).is_ok())
        .map(|a| a.id)
        .collect())
}

/// Every Agent id this data dir serves.
fn agent_ids(data_dir: &Path) -> Result<Vec<String>> {
    Ok(agents(data_dir)?.into_iter().map(|a| a.id).collect())
}

/// Issues a token. An assistant token without `agent` is the assistant's workspace token (the
/// MCP bridge, the schedules API, and the owner's Agents as peers on demand); with it, a token
/// for that one Agent.
pub async fn create(
    data_dir: &Path,
    kind: Kind,
    name: &str,
    agent: Option<&str>,
) -> Result<Issued> {
    if let (Kind::Assistant, Some(agent)) = (kind, agent) {
        let ids = agent_ids(data_dir)?;
        if !ids.iter().any(|i| i == agent) {
            bail!("no agent {agent:?} here (agents: {})", ids.join(", "));
        }
    }
    let journal = open(data_dir)?;
    let workspace = match kind {
        Kind::Assistant => Some(journal.workspace_id(&workspace_candidate()).await?),
        Kind::Peer => None,
    };
    let issued = tokens::issue(
        &journal,
        kind,
        name,
        agent,
        workspace.as_deref(),
        &Principal::person(),
        // The CLI runs outside the server: its time is the wall clock's.
        chrono::Utc::now(),
    )
    .await?;
    audit(
        data_dir,
        Record::token_issued(
            &Principal::person(),
            &issued.credential.kind,
            &issued.credential.name,
        ),
    )
    .await?;
    Ok(issued)
}

/// The tokens of one kind, newest first.
pub async fn list(data_dir: &Path, kind: Kind) -> Result<Vec<CredentialRow>> {
    Ok(open(data_dir)?.credentials(Some(kind.as_str())).await?)
}

/// Revokes the active token named (or with the id) `name`.
pub async fn revoke(data_dir: &Path, kind: Kind, name: &str) -> Result<()> {
    let journal = open(data_dir)?;
    if !journal
        .revoke_credential(kind.as_str(), name, chrono::Utc::now())
        .await?
    {
        bail!("no active {} token {name:?}", kind.as_str());
    }
    audit(
        data_dir,
        Record::token_revoked(&Principal::person(), kind.as_str(), name),
    )
    .await
}

/// One line per token, for `list` (and, for an assistant's workspace token, one line per
/// per-Agent credential issued under it).
pub fn describe(c: &CredentialRow) -> String {
    let status = match c.revoked_at {
        Some(at) => format!("revoked {}", format_time(at)),
        None => "active".into(),
    };
    let target = match (c.kind.as_str(), c.agent_id.as_deref()) {
        (_, Some(a)) => format!("  agent {a}"),
        ("assistant", None) => "  workspace".to_string(),
        _ => String::new(),
    };
    format!(
        "{}  {}  created {}  {status}{target}",
        c.name,
        c.credential_id,
        format_time(c.created_at)
    )
}

/// The lines of an assistant's per-Agent credentials, for `list`.
pub async fn describe_peers(data_dir: &Path, c: &CredentialRow) -> Result<Vec<String>> {
    if c.kind != "assistant" || c.agent_id.is_some() {
        return Ok(Vec::new());
    }
    Ok(open(data_dir)?
        .peer_credentials(&c.credential_id)
        .await?
        .iter()
        .map(|p| {
            let status = match p.revoked_at {
                Some(at) => format!("revoked {}", format_time(at)),
                None => "active".into(),
            };
            format!(
                "  peer {}  {}  created {}  {status}",
                p.agent_id,
                p.credential_id,
                format_time(p.created_at)
            )
        })
        .collect())
}

/// Where the running Sextant listens: `url`, else the address its `sextant.lock` records,
/// else the default `http://127.0.0.1:9900`.
pub fn base_url(data_dir: &Path, url: Option<&str>) -> String {
    if let Some(u) = url {
        return u.trim_end_matches('/').to_string();
    }
    std::fs::read_to_string(data_dir.join(crate::data_dir_lock::LOCK_FILE))
        .ok()
        .and_then(|t| {
            t.split("listening on ")
                .nth(1)
                .map(|u| u.trim().trim_end_matches('/').to_string())
        })
        .filter(|u| u.starts_with("http://") || u.starts_with("https://"))
        .unwrap_or_else(|| "http://127.0.0.1:9900".into())
}

/// Issues per-Agent credentials for the assistant `name` (its workspace token) for `only` (or
/// every Agent it may call, but the conformance test Agent) and returns the Hermes block.
pub async fn peers(data_dir: &Path, name: &str, only: &[String], base: &str) -> Result<String> {
    let journal = open(data_dir)?;
    let Some(parent) = journal.active_credential("assistant", name).await? else {
        bail!("no active assistant token {name:?} (sextant assistant-token create {name})");
    };
    if parent.agent_id.is_some() {
        bail!(
            "assistant token {name:?} reaches one Agent; peers are issued under an assistant's \
             workspace token (sextant assistant-token create NAME, without --agent)"
        );
    }
    let Some(assistant) = assistant_peers::principal_of(&parent) else {
        bail!("assistant token {name:?} has no workspace");
    };
    let all = agents(data_dir)?;
    let policy = AccessPolicy::default();
    let mut denied: std::collections::HashMap<String, Vec<String>> = Default::default();
    for (agent, who) in journal.denials().await? {
        denied.entry(agent).or_default().push(who);
    }
    for (agent, list) in denied {
        policy.set_denied(&agent, list);
    }
    let may_call = |a: &AgentSpec| policy.authorize(&assistant, a, Rights::Call).is_ok();
    for id in only {
        match all.iter().find(|a| &a.id == id) {
            None => bail!("no agent {id:?} here"),
            Some(a) if !may_call(a) => bail!("assistant {name} may not call agent {id:?}"),
            Some(_) => {}
        }
    }
    let chosen = assistant_peers::targets(&all, |a| {
        may_call(a)
            && if only.is_empty() {
                a.id != "conformance"
            } else {
                only.contains(&a.id)
            }
    });
    if chosen.is_empty() {
        bail!("assistant {name} may call no Agent here");
    }
    let issued = assistant_peers::issue(&journal, &parent, &chosen, base, chrono::Utc::now())
        .await
        .map_err(anyhow::Error::msg)?;
    Ok(assistant_peers::hermes_block(name, &issued))
}

/// Revokes the assistant `name`'s credential for `agent`.
pub async fn revoke_peer(data_dir: &Path, name: &str, agent: &str) -> Result<()> {
    let journal = open(data_dir)?;
    let Some(parent) = journal.active_credential("assistant", name).await? else {
        bail!("no active assistant token {name:?}");
    };
    if !journal
        .revoke_peer_credential(&parent.credential_id, agent, chrono::Utc::now())
        .await?
    {
        bail!("assistant {name:?} has no active credential for {agent:?}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a record says, without its time.
    fn shape(mut v: serde_json::Value) -> serde_json::Value {
        v.as_object_mut().map(|o| o.remove("at"));
        v
    }

    /// A token issued and revoked with the CLI is recorded in the server's shape
    /// ([`Record::token_issued`] / [`Record::token_revoked`], what the API writes), its route
    /// saying it came from the CLI.
    #[tokio::test]
    async fn cli_token_commands_are_audited_in_the_servers_shape() {
        let dir = tempfile::tempdir().unwrap();
        create(dir.path(), Kind::Peer, "bob", None).await.unwrap();
        revoke(dir.path(), Kind::Peer, "bob").await.unwrap();
        let log = std::fs::read_to_string(dir.path().join("audit.jsonl")).unwrap();
        let got: Vec<serde_json::Value> = log
            .lines()
            .map(|l| shape(serde_json::from_str(l).unwrap()))
            .collect();
        let person = Principal::person();
        let want: Vec<serde_json::Value> = [
            Record::token_issued(&person, "peer", "bob"),
            Record::token_revoked(&person, "peer", "bob"),
        ]
        .into_iter()
        .map(|r| shape(serde_json::to_value(r.route("sextant CLI")).unwrap()))
        .collect();
        assert_eq!(got, want);
        assert_eq!(got[0]["method"], "issue peer token");
        assert_eq!(got[1]["reason"], "name bob");
    }
}
