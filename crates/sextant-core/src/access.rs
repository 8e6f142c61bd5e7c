//! Agent access lists: which principals may call an Agent, and which may only read.
//!
//! An [`AccessList`] is declared per Agent in `agents.toml`:
//!
//! ```toml
//! [[agents]]
//! id = "coder"
//! # ...
//! access = { call = ["person", "peer:build-bot", "jwt:https://idp.example.com:*"],
//!            read = ["peer:*"],
//!            answer = ["assistant:claude"] }
//! ```
//!
//! Entries are **patterns** over a principal's access names
//! ([`Principal::access_names`]): `person`, `anonymous-local`, `peer:NAME`, `assistant:NAME`,
//! `jwt:ISSUER:SUBJECT` (a verified JWT's user), `actor:ISSUER:ACTOR` (the agent of a delegated
//! JWT) and `*`. A `*` inside a pattern matches any run of characters (`peer:*`,
//! `jwt:https://idp.example.com:*`). The whole name must match; case matters.
//!
//! Rights, lowest first: [`Rights::None`] (the Agent does not exist for the caller),
//! [`Rights::Read`] (its extended card, and reading / subscribing to the caller's own tasks),
//! [`Rights::Call`] (also sending messages). Rules on top of the list:
//!
//! - the person (the console owner) always has `Call`;
//! - a [`Service`](crate::PrincipalKind::Service) principal is capped at `Read`;
//! - a [`Delegated`](crate::PrincipalKind::Delegated) principal gets the lower of its user's
//!   rights (`jwt:ISS:SUB`) and its actor's rights (`actor:ISS:ACTOR`).
//!
//! The default list (no `access` key) is `call = ["person", "anonymous-local", "assistant:*"]`:
//! the owner, loopback callers in loopback-only mode, and assistant tokens the owner issued for
//! this Agent. Peers and JWT holders must be named.
//!
//! `answer` is separate from the rights: it names the person's **assistants** (`assistant:NAME`
//! patterns only) that may answer this Agent's pending approvals for the person, over the MCP
//! bridge. Empty by default: no assistant answers for the person unless the person wrote it
//! here. Such an assistant still never answers a card its own request raised
//! (`sextant_runtime`'s answer rule).
//!
//! Pure logic: the runtime combines this with the owner's revocations (the deny list).

use serde::{Deserialize, Serialize};

use crate::principal::{Principal, PrincipalKind};

/// What a principal may do with an Agent, lowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rights {
    /// Nothing: the Agent is "not found" for this caller.
    None,
    /// The extended card; GetTask, ListTasks and SubscribeToTask on the caller's own tasks.
    Read,
    /// Everything `Read` allows, plus sending messages.
    Call,
}

/// One Agent's access list (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccessList {
    /// Patterns of principals that may call the Agent.
    #[serde(default)]
    pub call: Vec<String>,
    /// Patterns of principals that may only read.
    #[serde(default)]
    pub read: Vec<String>,
    /// Patterns of the person's assistants (`assistant:NAME`) that may answer the Agent's
    /// pending approvals for the person. Nobody else is ever named here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub answer: Vec<String>,
}

impl Default for AccessList {
    fn default() -> Self {
        Self {
            call: vec![
                "person".into(),
                "anonymous-local".into(),
                "assistant:*".into(),
            ],
            read: Vec::new(),
            answer: Vec::new(),
        }
    }
}

/// Prefixes a pattern may start with (or be exactly, for the bare names).
const BARE: &[&str] = &["person", "anonymous-local", "*"];
const PREFIXES: &[&str] = &["peer:", "assistant:", "jwt:", "actor:"];

/// Checks one pattern; the error says what is wrong.
pub fn validate_pattern(p: &str) -> Result<(), String> {
    if p.is_empty() || p.len() > 512 {
        return Err(format!("access pattern {p:?}: use 1-512 characters"));
    }
    if p.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(format!(
            "access pattern {p:?}: no spaces or control characters"
        ));
    }
    if BARE.contains(&p) {
        return Ok(());
    }
    match PREFIXES.iter().find(|pre| p.starts_with(**pre)) {
        Some(pre) if p.len() > pre.len() => Ok(()),
        _ => Err(format!(
            "access pattern {p:?}: use person, anonymous-local, peer:NAME, assistant:NAME, \
             jwt:ISSUER:SUBJECT, actor:ISSUER:ACTOR or * (a * matches any characters)"
        )),
    }
}

/// Whether `name` matches `pattern`, where each `*` matches any run of characters.
pub fn glob(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() {
        return false;
    }
    let mut rest = &name[first.len()..];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(at) => rest = &rest[at + mid.len()..],
            None => return false,
        }
    }
    rest.ends_with(last)
}

impl AccessList {
    /// Checks every pattern; `answer` takes assistant patterns only.
    pub fn validate(&self) -> Result<(), String> {
        self.call
            .iter()
            .chain(&self.read)
            .chain(&self.answer)
            .try_for_each(|p| validate_pattern(p))?;
        match self.answer.iter().find(|p| !p.starts_with("assistant:")) {
            Some(p) => Err(format!(
                "access.answer pattern {p:?}: only the person's assistants answer for them; \
                 use assistant:NAME (a * matches any characters)"
            )),
            None => Ok(()),
        }
    }

    /// Whether the list lets `principal` answer the Agent's pending approvals for the person:
    /// an assistant named in `answer`. (The person answers everywhere; that is not this list's
    /// to say.)
    pub fn may_answer(&self, principal: &Principal) -> bool {
        principal.kind == PrincipalKind::Assistant
            && principal
                .access_names()
                .iter()
                .any(|n| self.answer.iter().any(|p| glob(p, n)))
    }

    /// The rights the list gives one access name.
    fn rights_of(&self, name: &str) -> Rights {
        if self.call.iter().any(|p| glob(p, name)) {
            Rights::Call
        } else if self.read.iter().any(|p| glob(p, name)) {
            Rights::Read
        } else {
            Rights::None
        }
    }

    /// The rights `principal` has on the Agent this list belongs to (before revocations).
    pub fn rights(&self, principal: &Principal) -> Rights {
        let names = principal.access_names();
        let listed = names
            .iter()
            .map(|n| self.rights_of(n))
            .min()
            .unwrap_or(Rights::None);
        match principal.kind {
            PrincipalKind::Person => Rights::Call,
            PrincipalKind::Service => listed.min(Rights::Read),
            _ => listed,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(call: &[&str], read: &[&str]) -> AccessList {
        AccessList {
            call: call.iter().map(|s| s.to_string()).collect(),
            read: read.iter().map(|s| s.to_string()).collect(),
            answer: Vec::new(),
        }
    }

    #[test]
    fn only_named_assistants_answer() {
        let mut l = AccessList::default();
        let claude = Principal::assistant("ws", "claude");
        assert!(!l.may_answer(&claude), "nobody by default");
        l.answer = vec!["assistant:claude".into()];
        assert!(l.validate().is_ok());
        assert!(l.may_answer(&claude));
        assert!(!l.may_answer(&Principal::assistant("ws", "other")));
        l.answer = vec!["*".into()];
        assert!(l.validate().is_err(), "only assistant patterns");
        assert!(!l.may_answer(&Principal::peer("claude")));
        l.answer = vec!["peer:bob".into()];
        let err = l.validate().unwrap_err();
        assert!(err.contains("assistant:NAME"), "{err}");
    }

    #[test]
    fn globs_match_whole_names() {
        assert!(glob("peer:*", "peer:alice"));
        assert!(!glob("peer:*", "assistant:alice"));
        assert!(glob("jwt:https://idp:*", "jwt:https://idp:bob"));
        assert!(!glob("jwt:https://idp:*", "jwt:https://idp.evil:bob"));
        assert!(glob("*", "anything"));
        assert!(glob("peer:a*e", "peer:alice"));
        assert!(!glob("peer:a*e", "peer:alicex"));
        assert!(!glob("peer:alice", "peer:alice2"));
        assert!(glob("a*a", "aa"));
        assert!(!glob("a*a", "a"));
    }

    #[test]
    fn the_default_lets_local_callers_and_assistants_call() {
        let d = AccessList::default();
        assert_eq!(d.rights(&Principal::person()), Rights::Call);
        assert_eq!(d.rights(&Principal::anonymous_local()), Rights::Call);
        assert_eq!(
            d.rights(&Principal::assistant("ws", "claude")),
            Rights::Call
        );
        assert_eq!(d.rights(&Principal::peer("bob")), Rights::None);
        assert_eq!(d.rights(&Principal::service("i", "s")), Rights::None);
    }

    #[test]
    fn the_person_always_calls_and_services_only_read() {
        let l = list(&["*"], &[]);
        assert_eq!(l.rights(&Principal::service("i", "s")), Rights::Read);
        let none = list(&[], &[]);
        assert_eq!(none.rights(&Principal::person()), Rights::Call);
        assert_eq!(none.rights(&Principal::anonymous_local()), Rights::None);
    }

    #[test]
    fn delegated_rights_are_the_lower_of_user_and_actor() {
        let p = Principal::delegated("https://idp", "alice", "agent-a");
        let both = list(&["jwt:https://idp:alice", "actor:https://idp:agent-a"], &[]);
        assert_eq!(both.rights(&p), Rights::Call);
        let user_only = list(&["jwt:https://idp:alice"], &[]);
        assert_eq!(user_only.rights(&p), Rights::None);
        let actor_reads = list(&["jwt:https://idp:alice"], &["actor:https://idp:*"]);
        assert_eq!(actor_reads.rights(&p), Rights::Read);
        let user_reads = list(&["actor:https://idp:agent-a"], &["jwt:https://idp:*"]);
        assert_eq!(user_reads.rights(&p), Rights::Read);
    }

    #[test]
    fn patterns_are_checked() {
        for ok in [
            "person",
            "anonymous-local",
            "*",
            "peer:bob",
            "peer:*",
            "assistant:*",
            "jwt:https://idp.example.com:alice",
            "actor:https://idp:*",
        ] {
            assert!(validate_pattern(ok).is_ok(), "{ok}");
        }
        for bad in ["", "peer:", "owner", "peer: bob", "jwt", "Person"] {
            assert!(validate_pattern(bad).is_err(), "{bad}");
        }
        let toml_like: AccessList =
            serde_json::from_value(serde_json::json!({ "call": ["peer:x"] })).unwrap();
        assert!(toml_like.read.is_empty());
        assert!(serde_json::from_value::<AccessList>(serde_json::json!({ "write": [] })).is_err());
    }
}
