//! Who may call which Agent.
//!
//! Two layers, consulted together on every admission, every read the server makes on a caller's
//! behalf, and every schedule operation; nothing caches a decision, so a change takes effect on
//! the very next operation:
//!
//! 1. the Agent's **access list** from `agents.toml` ([`sextant_core::access`]): who may call,
//!    who may only read (the person always calls; services only read; delegated principals get
//!    the lower of their user's and their actor's rights);
//! 2. the owner's **revocations** (the deny list, `PUT /api/v1/agents/{id}/access`): principal
//!    keys, or access patterns such as `peer:*`, denied one Agent outright. They are persisted
//!    in the journal (`agent_denials`) and loaded at start-up; this process keeps them in memory
//!    and writes through on every change.

use std::collections::{BTreeSet, HashMap};
use std::sync::RwLock;

use sextant_core::access::glob;
use sextant_core::{AgentSpec, Principal, Rights};

/// Why a principal may not do something with an Agent. Callers outside the console answer all
/// of these as "not found" (never "forbidden"); the variant is for logs and the audit record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AccessError {
    #[error("agent {0:?} is not configured")]
    UnknownAgent(String),
    #[error("{principal} is not on agent {agent:?}'s access list")]
    NotListed { principal: String, agent: String },
    #[error("{principal} may no longer call agent {agent:?}: the console owner revoked its access")]
    Revoked { principal: String, agent: String },
    #[error("{principal} may only read agent {agent:?}, not call it")]
    ReadOnly { principal: String, agent: String },
}

/// One request's access decision: what a principal may do with an Agent, as
/// [`crate::Runtime::grant`] found it. Only the runtime makes one (its fields are private), so
/// a server that checked a request's rights hands this to admission with the input
/// ([`crate::Input::grant`]) and the rights are checked once per request, not again inside
/// admission. Valid for the request it was made for only: never keep one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    principal: String,
    agent: String,
    rights: Rights,
}

impl Grant {
    pub(crate) fn new(principal: &Principal, agent: &str, rights: Rights) -> Self {
        Grant {
            principal: principal.key(),
            agent: agent.to_string(),
            rights,
        }
    }

    /// What the principal may do with the Agent.
    pub fn rights(&self) -> Rights {
        self.rights
    }

    /// Whether this decision lets `principal` do `need` with `agent`: it was made for exactly
    /// them, with at least those rights.
    pub fn allows(&self, principal: &Principal, agent: &str, need: Rights) -> bool {
        self.rights >= need && self.agent == agent && self.principal == principal.key()
    }
}

/// Per-Agent deny lists of principal keys or patterns. Default: nothing revoked.
#[derive(Debug, Default)]
pub struct AccessPolicy {
    denied: RwLock<HashMap<String, BTreeSet<String>>>,
}

/// Whether a deny-list entry names `principal`: its exact key, or a pattern matching one of its
/// access names (`peer:*` revokes every peer; for a delegated principal, its user's or its
/// actor's name).
fn names(entry: &str, principal: &Principal) -> bool {
    entry == principal.key() || principal.access_names().iter().any(|n| glob(entry, n))
}

impl AccessPolicy {
    /// What `principal` may do with `agent`, provided that is at least `need`.
    pub fn authorize(
        &self,
        principal: &Principal,
        agent: &AgentSpec,
        need: Rights,
    ) -> Result<Rights, AccessError> {
        let revoked = self
            .denied
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(&agent.id)
            .is_some_and(|set| set.iter().any(|e| names(e, principal)));
        let (who, what) = (principal.key(), agent.id.clone());
        if revoked {
            return Err(AccessError::Revoked {
                principal: who,
                agent: what,
            });
        }
        match agent.access.rights(principal) {
            Rights::None => Err(AccessError::NotListed {
                principal: who,
                agent: what,
            }),
            r if r < need => Err(AccessError::ReadOnly {
                principal: who,
                agent: what,
            }),
            r => Ok(r),
        }
    }

    /// Replaces the deny list of one Agent (memory only; see `Runtime::update_denied`).
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
    fn a_grant_allows_only_its_principal_agent_and_rights() {
        let (me, anon) = (Principal::person(), Principal::anonymous_local());
        let g = Grant::new(&me, "echo", Rights::Read);
        assert!(g.allows(&me, "echo", Rights::Read));
        assert!(!g.allows(&me, "echo", Rights::Call), "read rights only");
        assert!(!g.allows(&anon, "echo", Rights::Read), "another principal");
        assert!(!g.allows(&me, "other", Rights::Read), "another Agent");
        assert!(Grant::new(&me, "echo", Rights::Call).allows(&me, "echo", Rights::Call));
    }

    #[test]
    fn revocations_and_lists_combine() {
        let p = AccessPolicy::default();
        let echo = AgentSpec::echo();
        let anon = Principal::anonymous_local();
        assert_eq!(p.authorize(&anon, &echo, Rights::Call), Ok(Rights::Call));
        p.set_denied("echo", [anon.key()]);
        let why = p.authorize(&anon, &echo, Rights::Read).unwrap_err();
        assert!(why.to_string().contains("revoked"), "{why}");
        assert!(
            p.authorize(&Principal::person(), &echo, Rights::Call)
                .is_ok()
        );
        assert_eq!(p.denied("echo"), vec![anon.key()]);
        p.set_denied("echo", []);
        assert!(p.authorize(&anon, &echo, Rights::Call).is_ok());
        assert!(p.denied("echo").is_empty());

        // Peers are not on the default list; a listed reader may not call.
        let bob = Principal::peer("bob");
        assert!(matches!(
            p.authorize(&bob, &echo, Rights::Read),
            Err(AccessError::NotListed { .. })
        ));
        let mut open = AgentSpec::echo();
        open.access.read.push("peer:*".into());
        assert_eq!(p.authorize(&bob, &open, Rights::Read), Ok(Rights::Read));
        assert!(matches!(
            p.authorize(&bob, &open, Rights::Call),
            Err(AccessError::ReadOnly { .. })
        ));
        // A pattern revokes every principal it names.
        p.set_denied("echo", ["peer:*".to_string()]);
        assert!(matches!(
            p.authorize(&bob, &open, Rights::Read),
            Err(AccessError::Revoked { .. })
        ));
    }
}
