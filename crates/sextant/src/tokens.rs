//! The token commands of the CLI (`sextant peer-token …`, `sextant assistant-token …`): they
//! open the data dir's journal directly, so they work whether or not Sextant is running, and a
//! revocation takes effect on the running server's next request (it looks tokens up on every
//! request).

use std::path::Path;

use anyhow::{Context, Result, bail};
use sextant_core::{AgentSpec, Principal};
use sextant_journal::{CredentialRow, Journal};
use sextant_server::credentials::{self, Issued, Kind};

use crate::agents_file;

fn open(data_dir: &Path) -> Result<Journal> {
    std::fs::create_dir_all(data_dir)
        .with_context(|| format!("cannot create the data dir {}", data_dir.display()))?;
    Journal::open(data_dir.join("journal.db")).context("opening the journal")
}

/// Writes one audit record for a token command, to the data dir's `audit.jsonl` (the same
/// log the server writes, with `security.toml`'s rotation settings), and waits until it is
/// written: a token issued or revoked from the CLI is as visible there as one through the API.
async fn audit(data_dir: &Path, method: String, reason: String) -> Result<()> {
    use sextant_server::audit::{AuditLog, Outcome, Record};
    let settings = crate::security_file::load(&data_dir.join("security.toml"))?;
    let log = AuditLog::open(
        &data_dir.join("audit.jsonl"),
        settings.audit.max_bytes,
        settings.audit.keep,
    )
    .context("opening the audit log")?;
    log.record(
        Record::new(Some(&Principal::person()), Outcome::Ok)
            .method(method)
            .reason(reason)
            .route("sextant CLI"),
    );
    log.flush().await;
    Ok(())
}

/// A new workspace id candidate (kept only if the data dir has none yet).
pub fn workspace_candidate() -> String {
    let id = uuid::Uuid::new_v4().simple().to_string();
    format!("ws-{}", &id[..12])
}

/// Every Agent id this data dir serves (built-ins and `agents.toml`).
fn agent_ids(data_dir: &Path) -> Result<Vec<String>> {
    let file = agents_file::load(&data_dir.join("agents.toml"))?;
    let mut ids: Vec<String> = [
        AgentSpec::shell(),
        AgentSpec::echo(),
        AgentSpec::conformance(),
    ]
    .into_iter()
    .chain(file.agents)
    .map(|a| a.id)
    .collect();
    ids.sort();
    Ok(ids)
}

/// Issues a token (`agent` is required for assistant tokens).
pub async fn create(
    data_dir: &Path,
    kind: Kind,
    name: &str,
    agent: Option<&str>,
) -> Result<Issued> {
    if kind == Kind::Assistant {
        let Some(agent) = agent else {
            bail!("an assistant token reaches one Agent: pass --agent AGENT_ID");
        };
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
    let issued = credentials::issue(
        &journal,
        kind,
        name,
        agent,
        workspace.as_deref(),
        &Principal::person(),
    )
    .await?;
    audit(
        data_dir,
        format!("issue {} token", issued.credential.kind),
        format!("name {}", issued.credential.name),
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
        format!("revoke {} token", kind.as_str()),
        format!("name {name}"),
    )
    .await
}

/// One line per token, for `list`.
pub fn describe(c: &CredentialRow) -> String {
    let status = match &c.revoked_at {
        Some(at) => format!("revoked {at}"),
        None => "active".into(),
    };
    let target = c
        .agent_id
        .as_deref()
        .map(|a| format!("  agent {a}"))
        .unwrap_or_default();
    format!(
        "{}  {}  created {}  {status}{target}",
        c.name, c.credential_id, c.created_at
    )
}
