//! The journal's async API for identity and access: issued credentials (hashed), the owner's
//! per-Agent revocations, the workspace id, and the counts behind the perimeter's caps.
//! Writes go through the writer thread; reads run on the read pool.

use chrono::{DateTime, Utc};
use sextant_core::ids::format_time;

use crate::error::Result;
use crate::queries::security;
use crate::{CredentialRow, Journal, PeerCredentialRow};

impl Journal {
    /// Records a new credential; an active one of the same kind and name is a conflict.
    pub async fn insert_credential(&self, row: CredentialRow) -> Result<()> {
        self.call(move |c| security::insert(c, &row)).await
    }

    /// The credential whose token hashes to `token_hash` (revoked ones too).
    pub async fn credential_by_hash(&self, token_hash: &str) -> Result<Option<CredentialRow>> {
        let hash = token_hash.to_string();
        self.read(move |c| security::by_hash(c, &hash)).await
    }

    /// The active credential of `kind` named `name` (a revoked name has none).
    pub async fn active_credential(&self, kind: &str, name: &str) -> Result<Option<CredentialRow>> {
        let (kind, name) = (kind.to_string(), name.to_string());
        self.read(move |c| security::active_by_name(c, &kind, &name))
            .await
    }

    /// Credentials of one kind (`peer`, `assistant`) or all, newest first, revoked ones too.
    pub async fn credentials(&self, kind: Option<&str>) -> Result<Vec<CredentialRow>> {
        let kind = kind.map(String::from);
        self.read(move |c| security::list(c, kind.as_deref())).await
    }

    /// Revokes the active credential of `kind` named (or with the id) `name_or_id`; whether
    /// there was one.
    pub async fn revoke_credential(
        &self,
        kind: &str,
        name_or_id: &str,
        at: DateTime<Utc>,
    ) -> Result<bool> {
        let (kind, name) = (kind.to_string(), name_or_id.to_string());
        self.call(move |c| security::revoke(c, &kind, &name, &format_time(at)))
            .await
    }

    /// Issues a per-Agent credential under an assistant's workspace token (rotating the one
    /// active for that Agent).
    pub async fn issue_peer_credential(&self, row: PeerCredentialRow) -> Result<()> {
        self.call(move |c| security::issue_peer(c, &row)).await
    }

    /// The per-Agent credentials issued under the assistant token `parent_id`.
    pub async fn peer_credentials(&self, parent_id: &str) -> Result<Vec<PeerCredentialRow>> {
        let id = parent_id.to_string();
        self.read(move |c| security::peers_of(c, &id)).await
    }

    /// Revokes the active per-Agent credential of `parent_id` for `agent_id`; whether there
    /// was one.
    pub async fn revoke_peer_credential(
        &self,
        parent_id: &str,
        agent_id: &str,
        at: DateTime<Utc>,
    ) -> Result<bool> {
        let (p, a) = (parent_id.to_string(), agent_id.to_string());
        self.call(move |c| security::revoke_peer(c, &p, &a, &format_time(at)))
            .await
    }

    /// How many credentials are active (exposure beyond loopback needs at least one, or JWT).
    pub async fn active_credentials(&self) -> Result<u64> {
        self.read(security::count_active).await
    }

    /// Every revocation, as (agent, principal key or pattern).
    pub async fn denials(&self) -> Result<Vec<(String, String)>> {
        self.read(security::denials).await
    }

    /// Replaces one Agent's revocations.
    pub async fn set_denials(
        &self,
        agent_id: &str,
        principals: Vec<String>,
        at: DateTime<Utc>,
    ) -> Result<()> {
        let agent = agent_id.to_string();
        self.call(move |c| security::set_denials(c, &agent, &principals, &format_time(at)))
            .await
    }

    /// An instance setting (`settings` table), if set.
    pub async fn setting(&self, key: &str) -> Result<Option<String>> {
        let key = key.to_string();
        self.read(move |c| security::setting(c, &key)).await
    }

    /// Sets an instance setting.
    pub async fn set_setting(&self, key: &str, value: &str) -> Result<()> {
        let (key, value) = (key.to_string(), value.to_string());
        self.call(move |c| security::set_setting(c, &key, &value))
            .await
    }

    /// This data dir's workspace id, created (from `candidate`) on first use.
    pub async fn workspace_id(&self, candidate: &str) -> Result<String> {
        let candidate = candidate.to_string();
        self.call(move |c| security::setting_or_insert(c, "workspace_id", &candidate))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cred(id: &str, name: &str, hash: &str) -> CredentialRow {
        CredentialRow {
            credential_id: id.into(),
            kind: "peer".into(),
            name: name.into(),
            token_hash: hash.into(),
            workspace: None,
            agent_id: None,
            owner: sextant_core::Principal::person().caller_key(),
            created_at: sextant_core::ids::parse_time("2026-12-01T10:00:00.000Z").unwrap(),
            revoked_at: None,
            parent_id: None,
        }
    }

    #[tokio::test]
    async fn per_agent_credentials_read_as_their_assistant_and_die_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open(dir.path().join("j.db")).unwrap();
        let mut a = cred("a1", "hermes", "ha");
        a.kind = "assistant".into();
        a.workspace = Some("ws".into());
        j.insert_credential(a).await.unwrap();
        let peer = |id: &str, hash: &str| PeerCredentialRow {
            credential_id: id.into(),
            parent_id: "a1".into(),
            agent_id: "shell".into(),
            token_hash: hash.into(),
            created_at: sextant_core::ids::parse_time("2026-12-01T11:00:00.000Z").unwrap(),
            revoked_at: None,
        };
        j.issue_peer_credential(peer("p1", "hp1")).await.unwrap();
        let got = j.credential_by_hash("hp1").await.unwrap().unwrap();
        assert_eq!(
            (
                got.kind.as_str(),
                got.name.as_str(),
                got.workspace.as_deref()
            ),
            ("assistant", "hermes", Some("ws"))
        );
        assert_eq!(got.agent_id.as_deref(), Some("shell"));
        assert_eq!(got.parent_id.as_deref(), Some("a1"));
        assert_eq!(got.revoked_at, None);
        // Issuing again for the same Agent rotates it.
        j.issue_peer_credential(peer("p2", "hp2")).await.unwrap();
        assert!(
            j.credential_by_hash("hp1")
                .await
                .unwrap()
                .unwrap()
                .revoked_at
                .is_some()
        );
        assert!(
            j.credential_by_hash("hp2")
                .await
                .unwrap()
                .unwrap()
                .revoked_at
                .is_none()
        );
        assert_eq!(j.peer_credentials("a1").await.unwrap().len(), 2);
        // Revoking the assistant revokes its per-Agent credential at once.
        let now = Utc::now();
        assert!(
            j.revoke_credential("assistant", "hermes", now)
                .await
                .unwrap()
        );
        assert!(
            j.credential_by_hash("hp2")
                .await
                .unwrap()
                .unwrap()
                .revoked_at
                .is_some()
        );
        // And one can be revoked on its own.
        assert!(j.revoke_peer_credential("a1", "shell", now).await.unwrap());
        assert!(!j.revoke_peer_credential("a1", "shell", now).await.unwrap());
    }

    #[tokio::test]
    async fn credentials_rotate_by_name_and_denials_persist() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j.db");
        let j = Journal::open(&path).unwrap();
        let now = Utc::now();
        j.insert_credential(cred("c1", "alice", "h1"))
            .await
            .unwrap();
        // One active token per name.
        assert!(matches!(
            j.insert_credential(cred("c2", "alice", "h2")).await,
            Err(crate::Error::Conflict(_))
        ));
        assert_eq!(j.active_credentials().await.unwrap(), 1);
        assert_eq!(
            j.credential_by_hash("h1").await.unwrap().unwrap().name,
            "alice"
        );
        assert!(j.revoke_credential("peer", "alice", now).await.unwrap());
        assert!(!j.revoke_credential("peer", "alice", now).await.unwrap());
        assert!(
            j.credential_by_hash("h1")
                .await
                .unwrap()
                .unwrap()
                .revoked_at
                .is_some()
        );
        // Rotation: the name can be issued again.
        j.insert_credential(cred("c3", "alice", "h3"))
            .await
            .unwrap();
        assert!(j.revoke_credential("peer", "c3", now).await.unwrap());
        assert_eq!(j.credentials(Some("peer")).await.unwrap().len(), 2);
        assert_eq!(j.active_credentials().await.unwrap(), 0);

        j.set_denials("echo", vec!["peer:sextant:bob".into()], now)
            .await
            .unwrap();
        let ws = j.workspace_id("ws-a").await.unwrap();
        drop(j);
        let j = Journal::open(&path).unwrap();
        assert_eq!(
            j.denials().await.unwrap(),
            vec![("echo".to_string(), "peer:sextant:bob".to_string())]
        );
        assert_eq!(j.workspace_id("ws-b").await.unwrap(), ws);
        j.set_denials("echo", vec![], now).await.unwrap();
        assert!(j.denials().await.unwrap().is_empty());
    }
}
