//! Who is calling. A [`Principal`] is resolved by the server from credentials (never from request
//! content) and travels with every operation; contexts, tasks and reads are scoped to it.
//!
//! | kind | credential | key |
//! |---|---|---|
//! | [`Person`](PrincipalKind::Person) | the data-dir token (or the console's owner session) | `person:sextant:owner` |
//! | [`AnonymousLocal`](PrincipalKind::AnonymousLocal) | none, loopback-only mode | `anonymous-local:loopback:anonymous` |
//! | [`Peer`](PrincipalKind::Peer) | a named per-peer token | `peer:sextant:NAME` |
//! | [`Assistant`](PrincipalKind::Assistant) | a capability token for one workspace and one Agent | `assistant:WORKSPACE:NAME` |
//! | [`Delegated`](PrincipalKind::Delegated) | a JWT with an RFC 8693 `act` claim | `delegated:ISS:SUB:ACTOR` |
//! | [`Service`](PrincipalKind::Service) | any other verified JWT | `service:ISS:SUB` |
//!
//! The key is what scopes Sessions, contexts and tasks: two principals that differ in any part
//! (the actor included) are two callers with separate conversations, so two agents acting for
//! the same user never see each other's tasks. Stored, it is a [`CallerKey`]: an issuer may
//! hold `:`, so a key does not parse back into a `Principal`, but its kind and a label for
//! people do.

use serde::{Deserialize, Serialize};

/// The kind of caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum PrincipalKind {
    /// The console's owner, authenticated with the data-dir token.
    Person,
    /// A request without a credential, accepted only from a loopback peer while Sextant is in
    /// loopback-only mode. Spelled `anonymous-local` everywhere (keys, access lists, JSON,
    /// `caller_kind`); JSON written before that said `anonymous_local`, which still reads.
    #[serde(rename = "anonymous-local")]
    AnonymousLocal,
    /// A remote agent holding a named per-peer token.
    Peer,
    /// An assistant runtime holding a capability token the person issued for one workspace and
    /// one target Agent.
    Assistant,
    /// An agent acting for a user: a verified JWT with an RFC 8693 `act` claim (`sub` is the
    /// user, `act.sub` the agent).
    Delegated,
    /// Any other verified JWT (a service account). Read-only, whatever access lists say.
    Service,
}

// Derived on a private copy that adds the old spelling (`alias`): ts-rs, deriving on
// `PrincipalKind`, cannot parse `alias` and would warn on every build. Named alike, so any
// serde error that names the type reads as before.
impl<'de> Deserialize<'de> for PrincipalKind {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(rename_all = "snake_case")]
        enum PrincipalKind {
            Person,
            #[serde(rename = "anonymous-local", alias = "anonymous_local")]
            AnonymousLocal,
            Peer,
            Assistant,
            Delegated,
            Service,
        }
        Ok(match PrincipalKind::deserialize(d)? {
            PrincipalKind::Person => Self::Person,
            PrincipalKind::AnonymousLocal => Self::AnonymousLocal,
            PrincipalKind::Peer => Self::Peer,
            PrincipalKind::Assistant => Self::Assistant,
            PrincipalKind::Delegated => Self::Delegated,
            PrincipalKind::Service => Self::Service,
        })
    }
}

impl PrincipalKind {
    /// Every kind.
    pub const ALL: [PrincipalKind; 6] = [
        PrincipalKind::Person,
        PrincipalKind::AnonymousLocal,
        PrincipalKind::Peer,
        PrincipalKind::Assistant,
        PrincipalKind::Delegated,
        PrincipalKind::Service,
    ];

    /// The kind as it starts a principal key, as it is stored (`caller_kind`) and as serde
    /// writes it: one spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            PrincipalKind::Person => "person",
            PrincipalKind::AnonymousLocal => "anonymous-local",
            PrincipalKind::Peer => "peer",
            PrincipalKind::Assistant => "assistant",
            PrincipalKind::Delegated => "delegated",
            PrincipalKind::Service => "service",
        }
    }
}

/// A resolved caller identity: kind + issuer + subject (+ actor, for delegated agents).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Principal {
    pub kind: PrincipalKind,
    pub issuer: String,
    pub subject: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<String>,
}

impl Principal {
    /// The console owner.
    pub fn person() -> Self {
        Self {
            kind: PrincipalKind::Person,
            issuer: "sextant".into(),
            subject: "owner".into(),
            actor: None,
        }
    }

    /// The console owner acting through one of their assistant runtimes (`via` names it). Used
    /// only where the owner's own rights apply (answering an interaction for them); it is
    /// never a scope for tasks.
    pub fn person_via(via: impl Into<String>) -> Self {
        Self {
            actor: Some(via.into()),
            ..Self::person()
        }
    }

    /// An unauthenticated caller on the loopback interface.
    pub fn anonymous_local() -> Self {
        Self {
            kind: PrincipalKind::AnonymousLocal,
            issuer: "loopback".into(),
            subject: "anonymous".into(),
            actor: None,
        }
    }

    /// The holder of the per-peer token named `name`. A rotated token (same name) is the same
    /// peer.
    pub fn peer(name: impl Into<String>) -> Self {
        Self {
            kind: PrincipalKind::Peer,
            issuer: "sextant".into(),
            subject: name.into(),
            actor: None,
        }
    }

    /// The holder of the assistant capability token `name`, issued in `workspace`.
    pub fn assistant(workspace: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            kind: PrincipalKind::Assistant,
            issuer: workspace.into(),
            subject: name.into(),
            actor: None,
        }
    }

    /// An agent (`actor`) acting for the user `subject` of `issuer` (a JWT with `act`).
    pub fn delegated(
        issuer: impl Into<String>,
        subject: impl Into<String>,
        actor: impl Into<String>,
    ) -> Self {
        Self {
            kind: PrincipalKind::Delegated,
            issuer: issuer.into(),
            subject: subject.into(),
            actor: Some(actor.into()),
        }
    }

    /// A service identified by a verified JWT without `act`.
    pub fn service(issuer: impl Into<String>, subject: impl Into<String>) -> Self {
        Self {
            kind: PrincipalKind::Service,
            issuer: issuer.into(),
            subject: subject.into(),
            actor: None,
        }
    }

    /// The stable key stored with sessions and tasks. Two principals that differ in any part
    /// (including the actor) are different callers with separate conversations.
    pub fn key(&self) -> String {
        let kind = self.kind.as_str();
        match &self.actor {
            Some(actor) => format!("{kind}:{}:{}:{actor}", self.issuer, self.subject),
            None => format!("{kind}:{}:{}", self.issuer, self.subject),
        }
    }

    /// A short label for people reading the console.
    pub fn display(&self) -> String {
        match (self.kind, &self.actor) {
            (PrincipalKind::Person, None) => "you".into(),
            (PrincipalKind::Person, Some(via)) => format!("you (via {via})"),
            (PrincipalKind::AnonymousLocal, _) => "local (no token)".into(),
            (PrincipalKind::Peer, _) => format!("peer {}", self.subject),
            (PrincipalKind::Assistant, _) => format!("assistant {}", self.subject),
            (PrincipalKind::Delegated, actor) => format!(
                "{} for {} ({})",
                actor.as_deref().unwrap_or("an agent"),
                self.subject,
                self.issuer
            ),
            (PrincipalKind::Service, _) => format!("service {} ({})", self.subject, self.issuer),
        }
    }

    /// [`Principal::key`] as the [`CallerKey`] rows store.
    pub fn caller_key(&self) -> CallerKey {
        CallerKey(self.key())
    }

    /// The names access lists match this principal by (see [`crate::access`]). A delegated
    /// principal has two: its user (`jwt:ISS:SUB`) and its actor (`actor:ISS:ACTOR`); its
    /// rights are the lower of the two.
    pub fn access_names(&self) -> Vec<String> {
        match self.kind {
            PrincipalKind::Person => vec!["person".into()],
            PrincipalKind::AnonymousLocal => vec!["anonymous-local".into()],
            PrincipalKind::Peer => vec![format!("peer:{}", self.subject)],
            PrincipalKind::Assistant => vec![format!("assistant:{}", self.subject)],
            PrincipalKind::Service => vec![format!("jwt:{}:{}", self.issuer, self.subject)],
            PrincipalKind::Delegated => vec![
                format!("jwt:{}:{}", self.issuer, self.subject),
                format!(
                    "actor:{}:{}",
                    self.issuer,
                    self.actor.as_deref().unwrap_or_default()
                ),
            ],
        }
    }

    /// Whether this principal may use the console-owner APIs (sessions of every caller, etc).
    pub fn is_owner(&self) -> bool {
        self.kind == PrincipalKind::Person
    }

    /// Whether this principal comes from outside the machine's own user: peers, assistants and
    /// JWT holders. Their text is framed as untrusted input, and they are rate-limited and
    /// capped; the person and the anonymous loopback caller are not.
    pub fn is_remote(&self) -> bool {
        matches!(
            self.kind,
            PrincipalKind::Peer
                | PrincipalKind::Assistant
                | PrincipalKind::Delegated
                | PrincipalKind::Service
        )
    }

    /// Whether this principal is another agent talking to ours without a person in the loop
    /// (peers and JWT holders): their turns in one context are capped (anti-loop). The person,
    /// the anonymous loopback caller and the person's assistant are never capped.
    pub fn is_agent(&self) -> bool {
        matches!(
            self.kind,
            PrincipalKind::Peer | PrincipalKind::Delegated | PrincipalKind::Service
        )
    }
}

/// A caller's [`Principal::key`] as stored with its Sessions, tasks, push configs and
/// schedules (`kind:issuer:subject[:actor]`). Made only from a principal
/// ([`Principal::caller_key`]) or from text the journal stored, so it always is some key;
/// since an issuer may hold `:`, it does not parse back into a `Principal`, and what can be
/// read from it is here: its [`kind`](Self::kind) (the text before the first `:`) and a
/// [`label`](Self::label) for people. Serde and the journal write its bare text.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CallerKey(String);

crate::ids::text_newtype!(CallerKey);

impl From<&Principal> for CallerKey {
    fn from(p: &Principal) -> Self {
        p.caller_key()
    }
}

impl CallerKey {
    /// A key as the journal stored it (it was written from a [`Principal::key`]).
    pub fn from_stored(text: impl Into<String>) -> Self {
        Self(text.into())
    }

    /// The kind of the caller; `None` when the key starts with no kind this Sextant knows.
    pub fn kind(&self) -> Option<PrincipalKind> {
        let (kind, _) = self.0.split_once(':')?;
        PrincipalKind::ALL.into_iter().find(|k| k.as_str() == kind)
    }

    /// [`Principal::display`] as far as the key tells it: `you`, `local (no token)`, `peer
    /// alice`, `assistant claude`. A JWT caller's issuer may hold `:`, so it is named by its
    /// whole key after the kind (`service https://idp:alice`); a key of no known kind is
    /// shown as it is.
    pub fn label(&self) -> String {
        let Some((kind, rest)) = self.0.split_once(':') else {
            return self.0.clone();
        };
        match self.kind() {
            Some(PrincipalKind::Person) => {
                // `person:sextant:owner`, or with the assistant it acted through after it.
                match rest.splitn(3, ':').nth(2) {
                    Some(via) => format!("you (via {via})"),
                    None => "you".into(),
                }
            }
            Some(PrincipalKind::AnonymousLocal) => "local (no token)".into(),
            Some(PrincipalKind::Peer | PrincipalKind::Assistant) => {
                let name = rest.split_once(':').map_or(rest, |(_, n)| n);
                format!("{kind} {name}")
            }
            Some(PrincipalKind::Delegated | PrincipalKind::Service) | None => {
                format!("{kind} {rest}")
            }
        }
    }

    /// The [`label`](Self::label) of a remote caller (`peer alice`), to name where a message
    /// came from; `None` for the person and the anonymous local caller, whose text is their
    /// own, and for a key without a kind.
    pub fn remote_label(&self) -> Option<String> {
        match self.kind() {
            Some(PrincipalKind::Person | PrincipalKind::AnonymousLocal) => None,
            _ if !self.0.contains(':') => None,
            _ => Some(self.label()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_keys_read_back_as_their_display() {
        for p in [
            Principal::peer("alice"),
            Principal::assistant("ws", "claude"),
        ] {
            assert_eq!(p.caller_key().remote_label(), Some(p.display()));
        }
        assert_eq!(Principal::person().caller_key().remote_label(), None);
        let who = Principal::service("https://i", "s")
            .caller_key()
            .remote_label();
        assert_eq!(who.as_deref(), Some("service https://i:s"));
    }

    /// Each kind reads back from its key, an issuer with `:` in it included, and labels as
    /// the principal displays (JWT callers by their whole key: the issuer's `:` make the
    /// key ambiguous).
    #[test]
    fn caller_keys_tell_their_kind_and_label() {
        let cases = [
            (Principal::person(), "you"),
            (
                Principal::person_via("assistant claude"),
                "you (via assistant claude)",
            ),
            (Principal::anonymous_local(), "local (no token)"),
            (Principal::peer("alice"), "peer alice"),
            (Principal::assistant("ws", "claude"), "assistant claude"),
            (
                Principal::delegated("https://idp:8443/realm", "alice", "agent-a"),
                "delegated https://idp:8443/realm:alice:agent-a",
            ),
            (
                Principal::service("https://idp:8443", "bot"),
                "service https://idp:8443:bot",
            ),
        ];
        for (p, label) in cases {
            let key = p.caller_key();
            assert_eq!(key, p.key());
            assert_eq!(key.kind(), Some(p.kind), "{key}");
            assert_eq!(key.label(), label, "{key}");
            // As the journal gives it back.
            let stored = CallerKey::from_stored(p.key());
            assert_eq!(
                (stored.kind(), stored.label()),
                (Some(p.kind), label.into())
            );
            let remote = key.remote_label();
            assert_eq!(remote.is_some(), p.is_remote(), "{key}");
            if matches!(p.kind, PrincipalKind::Peer | PrincipalKind::Assistant) {
                assert_eq!(remote, Some(p.display()));
            }
        }
        for odd in [
            "",
            "robot",
            "robot:x:y",
            "anonymous_local:loopback:anonymous",
        ] {
            let key = CallerKey::from_stored(odd);
            assert_eq!(key.kind(), None, "{odd:?}");
        }
        assert_eq!(CallerKey::from_stored("robot").label(), "robot");
        assert_eq!(CallerKey::from_stored("robot").remote_label(), None);
        assert_eq!(
            CallerKey::from_stored("robot:x:y")
                .remote_label()
                .as_deref(),
            Some("robot x:y")
        );
        // Serde writes the bare key, and reads it back.
        let key = Principal::peer("alice").caller_key();
        let json = serde_json::to_string(&key).unwrap();
        assert_eq!(json, "\"peer:sextant:alice\"");
        assert_eq!(serde_json::from_str::<CallerKey>(&json).unwrap(), key);
    }

    #[test]
    fn keys_separate_callers() {
        let p = Principal::person();
        let a = Principal::anonymous_local();
        assert_ne!(p.key(), a.key());
        let mut delegated = p.clone();
        delegated.actor = Some("agent-x".into());
        assert_ne!(delegated.key(), p.key());
        // Existing keys are stable (they are stored with every Session).
        assert_eq!(p.key(), "person:sextant:owner");
        assert_eq!(a.key(), "anonymous-local:loopback:anonymous");
    }

    #[test]
    fn two_agents_for_one_user_are_two_callers() {
        let a = Principal::delegated("https://idp", "alice", "agent-a");
        let b = Principal::delegated("https://idp", "alice", "agent-b");
        let user = Principal::service("https://idp", "alice");
        assert_ne!(a.key(), b.key());
        assert_ne!(a.key(), user.key());
        assert_eq!(a.key(), "delegated:https://idp:alice:agent-a");
        assert_eq!(
            a.access_names(),
            vec!["jwt:https://idp:alice", "actor:https://idp:agent-a"]
        );
        assert_eq!(user.access_names(), vec!["jwt:https://idp:alice"]);
        assert_eq!(a.display(), "agent-a for alice (https://idp)");
    }

    #[test]
    fn every_kind_has_one_spelling_and_the_old_one_still_reads() {
        for kind in PrincipalKind::ALL {
            let json = serde_json::to_value(kind).unwrap();
            assert_eq!(json, serde_json::json!(kind.as_str()));
            assert_eq!(serde_json::from_value::<PrincipalKind>(json).unwrap(), kind);
        }
        let old: PrincipalKind = serde_json::from_str("\"anonymous_local\"").unwrap();
        assert_eq!(old, PrincipalKind::AnonymousLocal);
        let err = serde_json::from_str::<PrincipalKind>("\"robot\"").unwrap_err();
        assert!(
            err.to_string().starts_with(
                "unknown variant `robot`, expected one of `person`, `anonymous-local`"
            ),
            "{err}"
        );
    }

    #[test]
    fn kinds_classify() {
        assert!(Principal::peer("bob").is_remote() && Principal::peer("bob").is_agent());
        assert!(Principal::assistant("ws", "claude").is_remote());
        assert!(!Principal::assistant("ws", "claude").is_agent());
        assert!(!Principal::anonymous_local().is_remote());
        assert!(Principal::person_via("assistant claude").is_owner());
        assert_eq!(
            Principal::person_via("assistant claude").display(),
            "you (via assistant claude)"
        );
        assert_eq!(Principal::peer("bob").key(), "peer:sextant:bob");
        assert_eq!(
            Principal::assistant("ws1", "claude").key(),
            "assistant:ws1:claude"
        );
    }
}
