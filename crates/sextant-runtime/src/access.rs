//! Who may call which Agent.
//!
//! The policy is deliberately small until Agents get real access lists: every principal may
//! call every configured Agent, except the principals the console owner has denied for that
//! Agent. It is consulted on every admission and every schedule operation, never cached by
//! callers, so a revocation takes effect on the very next input or Run.
//!
//! The deny lists live in memory: they are reset when Sextant restarts.

use std::collections::{BTreeSet, HashMap};
use std::sync::RwLock;

use sextant_core::Principal;

/// Per-Agent deny lists of principal keys. Default: allow.
#[derive(Debug, Default)]
pub struct AccessPolicy {
    denied: RwLock<HashMap<String, BTreeSet<String>>>,
}

impl AccessPolicy {
    /// Whether `principal` may call `agent_id`; the error says why not.
    pub fn check(&self, principal: &Principal, agent_id: &str) -> Result<(), String> {
        let key = principal.key();
        let denied = self.denied.read().unwrap_or_else(|e| e.into_inner());
        if denied.get(agent_id).is_some_and(|set| set.contains(&key)) {
            Err(format!(
                "{key} may no longer call agent {agent_id:?}: the console owner revoked its access"
            ))
        } else {
            Ok(())
        }
    }

    /// Replaces the deny list of one Agent.
    pub fn set_denied(&self, agent_id: &str, principals: impl IntoIterator<Item = String>) {
        let set: BTreeSet<String> = principals.into_iter().collect();
        let mut denied = self.denied.write().unwrap_or_else(|e| e.into_inner());
        if set.is_empty() {
            denied.remove(agent_id);
        } else {
            denied.insert(agent_id.to_string(), set);
        }
    }

    /// The deny list of one Agent, sorted.
    pub fn denied(&self, agent_id: &str) -> Vec<String> {
        self.denied
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(agent_id)
            .map(|set| set.iter().cloned().collect())
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn everyone_is_allowed_until_denied() {
        let p = AccessPolicy::default();
        let anon = Principal::anonymous_local();
        assert!(p.check(&anon, "echo").is_ok());
        p.set_denied("echo", [anon.key()]);
        let why = p.check(&anon, "echo").unwrap_err();
        assert!(why.contains("revoked"), "{why}");
        assert!(p.check(&Principal::person(), "echo").is_ok());
        assert!(p.check(&anon, "other").is_ok());
        assert_eq!(p.denied("echo"), vec![anon.key()]);
        p.set_denied("echo", []);
        assert!(p.check(&anon, "echo").is_ok());
        assert!(p.denied("echo").is_empty());
    }
}
