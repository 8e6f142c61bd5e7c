//! The journal's async API for outbound peers (the `peers` table) and outbound conversations
//! (Sessions with origin `outbound`). Writes go through the writer thread; reads run on the
//! read pool. Outbound exchanges themselves are journalled with the ordinary
//! [`Journal::admit`] / [`Journal::append`].

use chrono::{DateTime, Utc};
use sextant_core::ids::format_time;

use crate::queries::peers;
use crate::{Journal, PeerRow, Result, SessionRow};

impl Journal {
    /// Registers a peer; `false` if the name is taken.
    pub async fn create_peer(&self, row: PeerRow) -> Result<bool> {
        self.call(move |c| peers::insert(c, &row)).await
    }

    /// Replaces a peer's settings; whether it existed (a changed URL drops the pin).
    pub async fn update_peer(&self, row: PeerRow) -> Result<bool> {
        self.call(move |c| peers::update_settings(c, &row)).await
    }

    /// Removes a peer; whether it existed.
    pub async fn delete_peer(&self, name: &str) -> Result<bool> {
        let name = name.to_string();
        self.call(move |c| peers::delete(c, &name)).await
    }

    /// One peer.
    pub async fn peer(&self, name: &str) -> Result<Option<PeerRow>> {
        let name = name.to_string();
        self.read(move |c| peers::get(c, &name)).await
    }

    /// Every peer, by name.
    pub async fn peers(&self) -> Result<Vec<PeerRow>> {
        self.read(peers::list).await
    }

    /// Pins a card and the key it was signed with (`None`: unsigned) and enables the peer.
    /// With `expected_old` (`Some(None)`: still unpinned), only if the pin has not changed
    /// meanwhile; whether it was written.
    pub async fn pin_peer(
        &self,
        name: &str,
        hash: &str,
        parts: serde_json::Value,
        key: Option<serde_json::Value>,
        at: DateTime<Utc>,
        expected_old: Option<Option<String>>,
    ) -> Result<bool> {
        let (name, hash, at) = (name.to_string(), hash.to_string(), format_time(at));
        self.call(move |c| {
            peers::pin(
                c,
                &name,
                &hash,
                &parts,
                key.as_ref(),
                &at,
                expected_old.as_ref().map(|o| o.as_deref()),
            )
        })
        .await
    }

    /// Disables a peer with the reason; whether it existed.
    pub async fn disable_peer(
        &self,
        name: &str,
        why: serde_json::Value,
        at: DateTime<Utc>,
    ) -> Result<bool> {
        let (name, at) = (name.to_string(), format_time(at));
        self.call(move |c| peers::disable(c, &name, &why, &at))
            .await
    }

    /// Counts one call to a peer.
    pub async fn record_peer_call(
        &self,
        name: &str,
        latency_ms: i64,
        error: Option<String>,
        hop_limited: bool,
        at: DateTime<Utc>,
    ) -> Result<()> {
        let (name, at) = (name.to_string(), format_time(at));
        self.call(move |c| {
            peers::record_call(c, &name, latency_ms, error.as_deref(), hop_limited, &at)
        })
        .await
    }

    /// Makes sure an outbound target has an `agents` row.
    pub async fn ensure_outbound_agent(
        &self,
        agent_id: &str,
        name: &str,
        description: &str,
        at: DateTime<Utc>,
    ) -> Result<()> {
        let (a, n, d, at) = (
            agent_id.to_string(),
            name.to_string(),
            description.to_string(),
            format_time(at),
        );
        self.call(move |c| peers::ensure_outbound_agent(c, &a, &n, &d, &at))
            .await
    }

    /// A caller's outbound conversations, most recently active first.
    pub async fn outbound_sessions(&self, caller: &str, limit: u32) -> Result<Vec<SessionRow>> {
        let caller = caller.to_string();
        self.read(move |c| peers::outbound_sessions(c, &caller, limit))
            .await
    }

    /// A caller's outbound conversations with this contextId, most recent first.
    pub async fn outbound_by_context(
        &self,
        caller: &str,
        context_id: &str,
    ) -> Result<Vec<SessionRow>> {
        let (caller, ctx) = (caller.to_string(), context_id.to_string());
        self.read(move |c| peers::outbound_by_context(c, &caller, &ctx))
            .await
    }

    /// The outbound conversation with one target in one context.
    pub async fn outbound_session(
        &self,
        caller: &str,
        agent_id: &str,
        context_id: &str,
    ) -> Result<Option<SessionRow>> {
        let (caller, a, ctx) = (
            caller.to_string(),
            agent_id.to_string(),
            context_id.to_string(),
        );
        self.read(move |c| peers::outbound_session(c, &caller, &a, &ctx))
            .await
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde_json::json;
    use sextant_core::a2a::{Message, Part, Role};

    use crate::{Admission, Admitted, Journal, PeerRow};

    fn row(name: &str, url: &str) -> PeerRow {
        let at = sextant_core::ids::parse_time("2026-11-30T10:00:00.000Z").unwrap();
        PeerRow {
            capabilities: vec!["echo".into()],
            ..PeerRow::new(name, url, 30, at)
        }
    }

    #[tokio::test]
    async fn peers_pin_disable_count_and_hold_outbound_sessions() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::open(dir.path().join("journal.db")).unwrap();
        let time = |s: &str| sextant_core::ids::parse_time(s).unwrap();
        let at = time("2026-11-30T10:00:01.000Z");
        assert!(j.create_peer(row("p", "http://127.0.0.1:1")).await.unwrap());
        assert!(!j.create_peer(row("p", "http://127.0.0.1:2")).await.unwrap());

        // A pin guarded by the expected old pin.
        let parts = json!({"skills": []});
        assert!(
            j.pin_peer("p", "h1", parts.clone(), None, at, Some(None))
                .await
                .unwrap()
        );
        assert!(
            !j.pin_peer("p", "h2", parts.clone(), None, at, Some(None))
                .await
                .unwrap()
        );
        assert!(
            j.disable_peer("p", json!({"newHash": "h2"}), at)
                .await
                .unwrap()
        );
        let p = j.peer("p").await.unwrap().unwrap();
        assert_eq!(p.pinned_hash.as_deref(), Some("h1"));
        assert_eq!(p.disabled, Some(json!({"newHash": "h2"})));
        assert!(
            j.pin_peer("p", "h2", parts, None, at, Some(Some("h1".into())))
                .await
                .unwrap()
        );
        let p = j.peer("p").await.unwrap().unwrap();
        assert_eq!((p.pinned_hash.as_deref(), p.disabled), (Some("h2"), None));

        j.record_peer_call("p", 40, None, false, at).await.unwrap();
        j.record_peer_call("p", 60, Some("boom".into()), false, at)
            .await
            .unwrap();
        let p = j.peer("p").await.unwrap().unwrap();
        assert_eq!((p.calls, p.failures, p.latency_ms_total), (2, 1, 100));
        assert_eq!(p.last_error.as_deref(), Some("boom"));
        assert_eq!(p.hop_limited_at, None);
        // A refusal at the peer's hop limit is remembered past later calls.
        let (then, later) = (
            time("2026-11-30T10:00:02.000Z"),
            time("2026-11-30T10:00:03.000Z"),
        );
        j.record_peer_call("p", 5, Some("HTTP 403: A2A-Hop".into()), true, then)
            .await
            .unwrap();
        j.record_peer_call("p", 5, None, false, later)
            .await
            .unwrap();
        let p = j.peer("p").await.unwrap().unwrap();
        assert_eq!(p.hop_limited_at, Some(then));

        // The signing key is pinned with the card.
        let key = json!({"kid": "k1", "thumbprint": "t"});
        assert!(
            j.pin_peer(
                "p",
                "h2",
                json!({}),
                Some(key.clone()),
                at,
                Some(Some("h2".into()))
            )
            .await
            .unwrap()
        );
        assert_eq!(j.peer("p").await.unwrap().unwrap().pinned_key, Some(key));

        // Same URL keeps the pin and its key; a new URL drops both. The key set is a setting.
        let mut same = row("p", "http://127.0.0.1:1");
        same.timeout_secs = 5;
        same.card_jwks = Some(json!({"keys": []}));
        assert!(j.update_peer(same).await.unwrap());
        let p = j.peer("p").await.unwrap().unwrap();
        assert!(p.pinned_hash.is_some() && p.pinned_key.is_some());
        assert_eq!(p.card_jwks, Some(json!({"keys": []})));
        assert!(j.update_peer(row("p", "http://127.0.0.1:3")).await.unwrap());
        let p = j.peer("p").await.unwrap().unwrap();
        assert_eq!((p.pinned_hash, p.timeout_secs), (None, 30));
        assert_eq!((p.pinned_key, p.card_jwks), (None, None));

        // Outbound conversations are ordinary Sessions with origin 'outbound'.
        j.ensure_outbound_agent("peer:p", "p", "outbound peer", at)
            .await
            .unwrap();
        let mut m = Message::new(Role::User, vec![Part::text("hi")]);
        m.message_id = "m1".into();
        let admitted = j
            .admit(Admission {
                caller: sextant_core::Principal::person().caller_key(),
                caller_kind: sextant_core::PrincipalKind::Person,
                agent_id: "peer:p".into(),
                context_id: Some("ctx".into()),
                task_id: None,
                message: m,
                content_hash: "x".into(),
                input_key: "outbound:1".into(),
                origin: sextant_core::Origin::Outbound,
                max_active_tasks: None,
                max_context_inputs: None,
                push_config: None,
                at: chrono::Utc::now(),
            })
            .await
            .unwrap()
            .unwrap();
        assert!(matches!(
            admitted,
            Admitted::Created {
                session_created: true,
                ..
            }
        ));
        let found = j
            .outbound_by_context("person:sextant:owner", "ctx")
            .await
            .unwrap();
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].agent_id, "peer:p");
        assert!(
            j.outbound_sessions("someone-else", 10)
                .await
                .unwrap()
                .is_empty()
        );
        assert!(
            j.outbound_session("person:sextant:owner", "peer:p", "ctx")
                .await
                .unwrap()
                .is_some()
        );
        assert!(j.delete_peer("p").await.unwrap());
        assert!(j.peer("p").await.unwrap().is_none());
    }
}
