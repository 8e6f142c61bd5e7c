//! Who is calling. A [`Principal`] is resolved by the server from credentials (never from request
//! content) and travels with every operation; contexts, tasks and reads are scoped to it.

use serde::{Deserialize, Serialize};

/// The kind of caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PrincipalKind {
    /// The console's owner, authenticated with the data-dir token.
    Person,
    /// A request without a credential, accepted only from a loopback peer.
    AnonymousLocal,
}

/// A resolved caller identity: kind + issuer + subject (+ actor, for delegated agents later).
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

    /// An unauthenticated caller on the loopback interface.
    pub fn anonymous_local() -> Self {
        Self {
            kind: PrincipalKind::AnonymousLocal,
            issuer: "loopback".into(),
            subject: "anonymous".into(),
            actor: None,
        }
    }

    /// The stable key stored with sessions and tasks. Two principals that differ in any part
    /// (including the actor) are different callers with separate conversations.
    pub fn key(&self) -> String {
        let kind = match self.kind {
            PrincipalKind::Person => "person",
            PrincipalKind::AnonymousLocal => "anonymous-local",
        };
        match &self.actor {
            Some(actor) => format!("{kind}:{}:{}:{actor}", self.issuer, self.subject),
            None => format!("{kind}:{}:{}", self.issuer, self.subject),
        }
    }

    /// A short label for people reading the console.
    pub fn display(&self) -> String {
        match self.kind {
            PrincipalKind::Person => "you".into(),
            PrincipalKind::AnonymousLocal => "local (no token)".into(),
        }
    }

    /// Whether this principal may use the console-owner APIs (sessions of every caller, etc).
    pub fn is_owner(&self) -> bool {
        self.kind == PrincipalKind::Person
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_separate_callers() {
        let p = Principal::person();
        let a = Principal::anonymous_local();
        assert_ne!(p.key(), a.key());
        let mut delegated = p.clone();
        delegated.actor = Some("agent-x".into());
        assert_ne!(delegated.key(), p.key());
    }
}
