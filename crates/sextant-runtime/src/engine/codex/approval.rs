//! Codex's approval requests (`item/commandExecution/requestApproval`,
//! `item/fileChange/requestApproval`) as interactions: the card's options are the request's
//! `availableDecisions` in order (or Codex's documented defaults), the person's choice goes
//! back verbatim as the JSON-RPC response, and a request Codex resolves by itself, or that its
//! turn or process outlives, withdraws its card. The turn (`turn`) asks and answers; this
//! module reads the request and words the card.

use std::collections::HashMap;

use serde_json::{Value, json};
use sextant_core::ApprovedAction;
use sextant_core::action::{Escaped, Mode, escape};
use sextant_core::ids::new_id;
use sextant_core::interaction::InteractionOption;
use sextant_core::{Interaction, InteractionKind};
use tokio::sync::mpsc;

use super::config::FILE_APPROVAL;
use super::connection::Incoming;
use crate::engine::Turn;
use crate::pending::grant_clause;

/// Whether `msg` means the request no longer stands: Codex resolved it, or the thread's turn
/// ended (Codex clears pending requests then).
pub(super) fn ends_request(msg: &Incoming, request_id: &Value, thread_id: &str) -> bool {
    let Incoming::Notification { method, params } = msg else {
        return false;
    };
    let this_thread = params
        .get("threadId")
        .and_then(Value::as_str)
        .is_none_or(|t| t == thread_id);
    match method.as_str() {
        "serverRequest/resolved" => params.get("requestId") == Some(request_id),
        "turn/completed" => this_thread,
        _ => false,
    }
}

/// Reads messages while a question waits, keeping them in `held`, until the request no longer
/// stands ([`ends_request`]) or the process's output closes. Returns why.
pub(super) async fn withdrawn(
    rx: &mut mpsc::UnboundedReceiver<Incoming>,
    held: &mut Vec<Incoming>,
    request_id: &Value,
    thread_id: &str,
) -> String {
    loop {
        let Some(msg) = rx.recv().await else {
            return "the Codex app-server exited".into();
        };
        if ends_request(&msg, request_id, thread_id) {
            let resolved = matches!(&msg, Incoming::Notification { method, .. } if method == "serverRequest/resolved");
            if resolved {
                return "Codex resolved this request itself".into();
            }
            // The turn's end is handled after the question is closed.
            held.push(msg);
            return "the Codex turn ended".into();
        }
        held.push(msg);
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ApprovalKind {
    Command,
    Files,
}

/// What an `item/started` told us about an item, for the approval card that follows it.
pub(super) enum ItemInfo {
    Command(String),
    /// A file change: each file's label (`path (kind)`) and its change as Codex sent it
    /// (`path`, `kind`, `diff`).
    Files(Vec<String>, Vec<Value>),
}

/// An approval request, read from its params.
pub(super) struct ApprovalRequest {
    method: String,
    kind: ApprovalKind,
    /// The decisions offered, in order, exactly as received (object-shaped ones included).
    pub(super) decisions: Vec<Value>,
    command: Option<String>,
    /// A command approval's `kind` when it is not `command` (Codex's default): `writeStdin`
    /// asks to send input to a command already running in a terminal.
    request_kind: Option<String>,
    /// Codex's id for this one approval callback, when several can belong to one item (a
    /// subcommand of the item's command, an unsandboxed retry).
    approval_id: Option<String>,
    cwd: Option<String>,
    reason: Option<String>,
    network_host: Option<String>,
    files: Vec<String>,
    /// The file changes as Codex described them (path, kind, diff), when it did.
    changes: Vec<Value>,
    grant_root: Option<String>,
}

/// Whether a Codex decision writes a permanent rule (an exec-policy or network-policy
/// amendment), which Sextant does not offer.
pub(super) fn is_permanent(decision: &Value) -> bool {
    decision.as_object().is_some_and(|m| {
        m.contains_key("acceptWithExecpolicyAmendment")
            || m.contains_key("applyNetworkPolicyAmendment")
    })
}

/// Codex's documented decisions when a request carries no `availableDecisions`.
pub(super) fn default_decisions() -> Vec<Value> {
    ["accept", "acceptForSession", "decline", "cancel"]
        .iter()
        .map(|d| json!(d))
        .collect()
}

impl ApprovalRequest {
    pub(super) fn new(method: &str, params: &Value, items: &HashMap<String, ItemInfo>) -> Self {
        let kind = if method == FILE_APPROVAL {
            ApprovalKind::Files
        } else {
            ApprovalKind::Command
        };
        let text = |k: &str| {
            params
                .get(k)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(String::from)
        };
        let decisions = match params.get("availableDecisions") {
            Some(Value::Array(a)) if !a.is_empty() => a.clone(),
            _ => default_decisions(),
        };
        // Not offered: decisions that make Codex write a permanent rule into its own files
        // (`$CODEX_HOME/rules/…`, its network policy), which outlive this Session and this
        // Agent, and which Sextant can neither show as a grant nor revoke. acceptForSession
        // covers the Session.
        let decisions: Vec<Value> = decisions.into_iter().filter(|d| !is_permanent(d)).collect();
        let item = text("itemId").and_then(|i| items.get(&i));
        let request_kind = text("kind").filter(|k| k != "command");
        let approval_id = text("approvalId");
        // The item's command stands in for a missing `command` only when this request is that
        // command's own approval: a callback with an `approvalId` may be for a subcommand
        // of it, which the item's command line would misdescribe.
        let command = text("command").or_else(|| match item {
            Some(ItemInfo::Command(c))
                if kind == ApprovalKind::Command && approval_id.is_none() =>
            {
                Some(c.clone())
            }
            _ => None,
        });
        let (files, changes) = match item {
            Some(ItemInfo::Files(f, c)) => (f.clone(), c.clone()),
            _ => (Vec::new(), Vec::new()),
        };
        Self {
            method: method.to_string(),
            kind,
            decisions,
            command,
            request_kind,
            approval_id,
            cwd: text("cwd"),
            reason: text("reason"),
            network_host: params
                .pointer("/networkApprovalContext/host")
                .and_then(Value::as_str)
                .map(String::from),
            files,
            changes,
            grant_root: text("grantRoot"),
        }
    }

    /// What is asked, exact but escaped, in a line a person can judge.
    pub(super) fn what(&self) -> String {
        let line = |t: &str| escape(t, Mode::Command).text;
        if self.kind == ApprovalKind::Command {
            match (self.request_kind.as_deref(), &self.command) {
                (Some("writeStdin"), Some(cmd)) => {
                    return format!("send input to the running command `{}`", line(cmd));
                }
                (Some("writeStdin"), None) => return "send input to a running command".into(),
                (Some(other), Some(cmd)) => {
                    return format!("make a `{}` request about `{}`", line(other), line(cmd));
                }
                (Some(other), None) => return format!("make a `{}` request", line(other)),
                (None, _) => {}
            }
        }
        match (self.kind, &self.command, &self.network_host) {
            (ApprovalKind::Command, Some(cmd), _) => format!("run `{}`", line(cmd)),
            (ApprovalKind::Command, None, Some(host)) => {
                format!("reach {} over the network", line(host))
            }
            (ApprovalKind::Command, None, None) => "run a command".to_string(),
            (ApprovalKind::Files, ..) if self.files.is_empty() => "change files".to_string(),
            (ApprovalKind::Files, ..) => format!("change {}", line(&self.files.join(", "))),
        }
    }

    /// The exact request a decision answers: what Codex asked, field by field.
    pub(super) fn action(&self) -> ApprovedAction {
        let mut exact = json!({ "kind": "codex", "method": self.method });
        let mut shown = Escaped::default();
        let mut put = |k: &str, v: Value| exact[k] = v;
        // Part of what is approved: input to a running command is not the command's start,
        // and one callback of an item is not another.
        if let Some(k) = &self.request_kind {
            put("requestKind", json!(k));
        }
        if let Some(a) = &self.approval_id {
            put("approvalId", json!(a));
        }
        if let Some(c) = &self.command {
            put("command", json!(c));
            shown.push(escape(c, Mode::Command));
        }
        if let Some(c) = &self.cwd {
            put("cwd", json!(c));
        }
        if let Some(h) = &self.network_host {
            put("networkHost", json!(h));
            if shown.text.is_empty() {
                shown.push(escape(h, Mode::Command));
            }
        }
        if !self.files.is_empty() {
            put("files", json!(self.files));
            if !self.changes.is_empty() {
                put("changes", json!(self.changes));
            }
            if shown.text.is_empty() {
                // Each file, then its diff: the person sees the patch that will be written.
                let patch = self
                    .files
                    .iter()
                    .zip(self.changes.iter().map(|c| c["diff"].as_str()))
                    .map(|(label, diff)| match diff {
                        Some(d) => format!("--- {label}\n{d}"),
                        None => format!("--- {label}"),
                    })
                    .collect::<Vec<_>>();
                let text = if patch.is_empty() {
                    self.files.join("\n")
                } else {
                    patch.join("\n")
                };
                shown.push(escape(&text, Mode::Text));
            }
        }
        if let Some(r) = &self.grant_root {
            put("grantRoot", json!(r));
        }
        if shown.text.is_empty() {
            shown.push_plain(&self.what());
        }
        ApprovedAction::new(exact, shown)
    }

    /// The card's title.
    pub(super) fn title(&self) -> &'static str {
        match (self.kind, self.request_kind.as_deref()) {
            (ApprovalKind::Files, _) => "Apply these file changes?",
            (ApprovalKind::Command, Some("writeStdin")) => "Send input to a running command?",
            (ApprovalKind::Command, Some(_)) => "Allow this Codex request?",
            (ApprovalKind::Command, None)
                if self.command.is_none() && self.network_host.is_some() =>
            {
                "Allow network access?"
            }
            (ApprovalKind::Command, None) => "Run this command?",
        }
    }

    pub(super) fn prompt(&self) -> String {
        format!("Approval needed: Codex wants to {}.", self.what())
    }

    pub(super) fn interaction(
        &self,
        request_id: &Value,
        turn: &Turn,
        expires_at: chrono::DateTime<chrono::Utc>,
    ) -> Interaction {
        let mut description = format!("{} (Codex) wants to {}", turn.agent.name, self.what());
        if let Some(root) = &self.grant_root {
            description.push_str(&grant_clause(root));
        }
        description.push('.');
        if let Some(reason) = &self.reason {
            description.push_str(&format!(" Reason: {}", escape(reason, Mode::Text).text));
        }
        let options = decision_options(self.kind, &self.decisions);
        let scope = if options.iter().any(|o| o.id == "acceptForSession") {
            "session"
        } else {
            "turn"
        };
        let default_option = default_option(&options);
        Interaction {
            interaction_id: new_id(),
            task_id: turn.task_id.clone(),
            kind: InteractionKind::ToolApproval,
            title: self.title().into(),
            description: Some(description),
            command: self.command.clone(),
            cwd: self.cwd.clone(),
            action: Some(Box::new(self.action())),
            from: turn.from.clone(),
            options,
            fields: Vec::new(),
            // Codex's response carries the decision only; a reason would be dropped.
            reason_allowed: false,
            scope: scope.into(),
            expires_at: Some(expires_at),
            default_option,
            // Codex keeps acceptForSession in its own session cache.
            grant_key: None,
            engine_ref: json!({
                "method": self.method,
                "requestId": request_id,
                "approvalId": self.approval_id,
                "decisions": self.decisions,
            }),
        }
    }
}

/// The option applied at expiry: `decline`, else `cancel`, else the first that does not
/// approve, else the last.
pub(super) fn default_option(options: &[InteractionOption]) -> String {
    ["decline", "cancel"]
        .iter()
        .find(|d| options.iter().any(|o| o.id == **d))
        .map(|d| d.to_string())
        .or_else(|| {
            options
                .iter()
                .find(|o| !o.id.starts_with("accept") && !o.id.starts_with("apply"))
                .map(|o| o.id.clone())
        })
        .or_else(|| options.last().map(|o| o.id.clone()))
        .unwrap_or_else(|| "decline".into())
}

/// One option per decision, in order: ids are the decision names (object-shaped decisions use
/// their key; repeats get `-2`, `-3`…), labels follow the Codex TUI's words.
pub(super) fn decision_options(kind: ApprovalKind, decisions: &[Value]) -> Vec<InteractionOption> {
    let mut out: Vec<InteractionOption> = Vec::new();
    for (i, decision) in decisions.iter().enumerate() {
        let (base, label, shortcut) = describe_decision(kind, decision, i);
        let mut id = base.clone();
        let mut n = 1;
        while out.iter().any(|o| o.id == id) {
            n += 1;
            id = format!("{base}-{n}");
        }
        let shortcut = shortcut.filter(|s| !out.iter().any(|o| o.shortcut.as_deref() == Some(*s)));
        out.push(InteractionOption {
            id,
            label,
            description: None,
            shortcut: shortcut.map(String::from),
        });
    }
    out
}

/// (id, label, shortcut) for one decision.
fn describe_decision(
    kind: ApprovalKind,
    decision: &Value,
    index: usize,
) -> (String, String, Option<&'static str>) {
    match decision {
        Value::String(name) => {
            let (label, key) = match (name.as_str(), kind) {
                ("accept", _) => ("Yes, proceed".to_string(), Some("y")),
                ("acceptForSession", ApprovalKind::Command) => (
                    "Yes, and don't ask again for this command in this session".to_string(),
                    Some("a"),
                ),
                ("acceptForSession", ApprovalKind::Files) => (
                    "Yes, and don't ask again for these files in this session".to_string(),
                    Some("a"),
                ),
                ("decline", ApprovalKind::Command) => {
                    ("No, continue without running it".to_string(), Some("n"))
                }
                ("decline", ApprovalKind::Files) => {
                    ("No, continue without these changes".to_string(), Some("n"))
                }
                ("cancel", _) => (
                    "No, and stop this turn to tell Codex what to do differently".to_string(),
                    Some("c"),
                ),
                (other, _) => (humanize(other), None),
            };
            (name.clone(), label, key)
        }
        Value::Object(m) if m.len() == 1 => {
            let Some((key, inner)) = m.iter().next() else {
                return (
                    format!("option-{}", index + 1),
                    format!("Option {}", index + 1),
                    None,
                );
            };
            match key.as_str() {
                "acceptWithExecpolicyAmendment" => {
                    let prefix = match inner.get("execpolicy_amendment") {
                        Some(Value::Array(words)) => words
                            .iter()
                            .filter_map(Value::as_str)
                            .collect::<Vec<_>>()
                            .join(" "),
                        _ => String::new(),
                    };
                    let label = if prefix.is_empty() {
                        "Yes, and don't ask again for commands like this".to_string()
                    } else {
                        format!(
                            "Yes, and don't ask again for commands that start with `{}`",
                            escape(&prefix, Mode::Command).text
                        )
                    };
                    (key.clone(), label, Some("p"))
                }
                "applyNetworkPolicyAmendment" => {
                    let amendment = inner.get("network_policy_amendment");
                    let host = amendment
                        .and_then(|a| a.get("host"))
                        .and_then(Value::as_str)
                        .map(|h| escape(h, Mode::Command).text)
                        .unwrap_or_else(|| "this host".into());
                    let action = amendment
                        .and_then(|a| a.get("action"))
                        .and_then(Value::as_str);
                    let label = match action {
                        Some("deny") => format!("No, and block {host} in the future"),
                        _ => format!("Yes, and allow {host} in the future"),
                    };
                    (key.clone(), label, None)
                }
                other => (key.clone(), humanize(other), None),
            }
        }
        _ => (
            format!("option-{}", index + 1),
            format!("Option {}", index + 1),
            None,
        ),
    }
}

/// `acceptWithExecpolicyAmendment` → "Accept with execpolicy amendment".
pub(super) fn humanize(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if out.is_empty() {
            if c.is_alphanumeric() {
                out.extend(c.to_uppercase());
            }
        } else if c.is_uppercase() {
            out.push(' ');
            out.extend(c.to_lowercase());
        } else if c == '_' || c == '-' {
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    if out.is_empty() { "Option".into() } else { out }
}
