//! What a pending interaction looks like to those who wait for it: the [`Waiters`] registry
//! engines wait on ([`crate::interactions`] says how answers reach them), and the waiting
//! task's status message, a text ([`pending_text`]) and the public interaction
//! ([`public_data`], with paths on the person's machine hidden: [`hide_paths`]).
//!
//! Here, below the engines and the answer path, because both use it: the sink journals a
//! question with these texts, and `Runtime::answer` hands the answer to the waiter.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::{Value, json};
use sextant_core::action::{Mode, escape};
use sextant_core::{Answer, Interaction};
use tokio::sync::{Notify, oneshot};

/// Engines waiting for answers, by interaction id.
#[derive(Default)]
pub(crate) struct Waiters {
    map: Mutex<HashMap<String, oneshot::Sender<Answer>>>,
    expiry: Notify,
}

impl Waiters {
    pub(crate) fn wait_for(&self, id: &str) -> oneshot::Receiver<Answer> {
        let (tx, rx) = oneshot::channel();
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id.to_string(), tx);
        rx
    }

    /// Whether an engine in this process waits for the interaction's answer.
    pub(crate) fn is_waiting(&self, id: &str) -> bool {
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(id)
    }

    pub(crate) fn forget(&self, id: &str) {
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id);
    }

    /// The waiter of an interaction, taken to hand it the answer.
    pub(crate) fn take(&self, id: &str) -> Option<oneshot::Sender<Answer>> {
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id)
    }

    pub(crate) fn expiry_changed(&self) {
        self.expiry.notify_one();
    }

    /// Fires after [`Self::expiry_changed`] (the expiry loop then looks again).
    pub(crate) async fn expiry_notified(&self) {
        self.expiry.notified().await;
    }
}

/// Whether an interaction is an outbound card: a question of a remote task reached through
/// `a2a_call`, marked `outbound` in its engine routing data by `sextant-peers`. No engine
/// waits for its answer; the runtime hands it to [`crate::Outbound::answer_card`].
pub fn is_outbound_card(i: &Interaction) -> bool {
    i.engine_ref.get("outbound").and_then(Value::as_bool) == Some(true)
}

/// The path a person POSTs an answer to.
pub fn answer_path(interaction_id: &str) -> String {
    format!("/api/v1/interactions/{interaction_id}/answer")
}

/// The data part of a waiting task's status message, as journalled: the public interaction.
/// Where to answer it is not journalled: the server adds `answerPath` ([`answer_path`]) and
/// the absolute `answerUrl` from the interaction id when it renders the message (journals
/// written before kept an `answerPath`, which that rendering rewrites the same). Remote
/// callers read this message, so paths on the person's machine are left out
/// ([`hide_paths`]). The console's inbox shows them all.
pub fn public_data(i: &Interaction) -> Value {
    let mut v = serde_json::to_value(i.public()).unwrap_or(Value::Null);
    hide_paths(&mut v);
    json!({ "interaction": v })
}

/// Removes the paths on the person's machine from an interaction's JSON, for every reader but
/// the console's inbox: the engine's working directory (`cwd`, `action.exact.cwd`), Codex's
/// `grantRoot` (also from the description Sextant writes for Codex), and the directories of
/// Codex's `files` (relative to the working directory, or only their names, in
/// `action.exact.files`, `action.shown` and the description). The digest stays the one of the
/// full action the person approves.
pub fn hide_paths(v: &mut Value) {
    let hider = PathHider::of(v);
    if let Some(o) = v.as_object_mut() {
        o.remove("cwd");
        if let Some(h) = &hider
            && let Some(Value::String(d)) = o.get_mut("description")
        {
            *d = h.text(d);
        }
    }
    if let Some(action) = v.get_mut("action").and_then(Value::as_object_mut) {
        let is_command = action
            .get("exact")
            .is_some_and(|e| e.get("command").is_some());
        if let Some(h) = &hider
            && !is_command
            && let Some(Value::String(shown)) = action.get_mut("shown")
        {
            *shown = h.text(shown);
        }
        if let Some(exact) = action.get_mut("exact").and_then(Value::as_object_mut) {
            exact.remove("cwd");
            exact.remove("grantRoot");
            if let Some(h) = &hider
                && let Some(Value::Array(files)) = exact.get_mut("files")
            {
                for f in files.iter_mut() {
                    if let Value::String(path) = f {
                        *path = h.file(path);
                    }
                }
            }
            if let Some(h) = &hider
                && let Some(Value::Array(changes)) = exact.get_mut("changes")
            {
                for c in changes.iter_mut() {
                    if let Some(Value::String(path)) = c.get_mut("path") {
                        *path = h.file(path);
                    }
                }
            }
        }
    }
}

/// Hides the paths of a Codex approval from the readers of the task's status message, in the
/// texts Sextant writes for it: a file under the working directory (or the granted root)
/// becomes relative to it, any other file keeps only its name, and the granted root is not
/// named. Commands are left exactly as they are (they are what Codex asked to run).
struct PathHider {
    /// The directories files are made relative to (longest first).
    roots: Vec<String>,
    /// Codex's `grantRoot`, named in the description Sextant writes.
    grant_root: Option<String>,
    /// Each file as named, and as other readers see it (longest first).
    files: Vec<(String, String)>,
}

impl PathHider {
    /// For an interaction's JSON; `None` unless it is a Codex approval.
    fn of(i: &Value) -> Option<PathHider> {
        let exact = i.pointer("/action/exact")?;
        if exact.get("kind").and_then(Value::as_str) != Some("codex") {
            return None;
        }
        let s = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(String::from);
        let grant_root = s(exact, "grantRoot");
        let mut roots: Vec<String> = [s(i, "cwd"), s(exact, "cwd"), grant_root.clone()]
            .into_iter()
            .flatten()
            .map(|r| r.trim_end_matches('/').to_string())
            // `/` (or nothing) is not a directory to hide: every path is under it.
            .filter(|r| r.len() > 1)
            .collect();
        roots.sort_by_key(|r| std::cmp::Reverse(r.len()));
        roots.dedup();
        let mut hider = PathHider {
            roots,
            grant_root,
            files: Vec::new(),
        };
        let mut files: Vec<(String, String)> = exact
            .get("files")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(|f| (f.to_string(), hider.file(f)))
            .collect();
        files.sort_by_key(|(f, _)| std::cmp::Reverse(f.len()));
        hider.files = files;
        Some(hider)
    }

    /// A file as other readers see it (Codex names it `path` or `path (kind)`).
    fn file(&self, path: &str) -> String {
        for root in &self.roots {
            if let Some(rest) = path.strip_prefix(root.as_str())
                && let Some(rel) = rest.strip_prefix('/')
            {
                return rel.to_string();
            }
        }
        if path.starts_with('/') || path.starts_with('~') || path.contains(":\\") {
            let name = path.rsplit(['/', '\\']).next().unwrap_or_default();
            return format!("…/{name}");
        }
        path.to_string()
    }

    /// `text` with every file replaced as [`Self::file`] says (also in the escaped forms
    /// Sextant's texts use), and the granted root's clause without the root.
    fn text(&self, text: &str) -> String {
        use sextant_core::action::{Mode, escape};
        let mut out = text.to_string();
        if let Some(root) = &self.grant_root {
            out = out.replace(&grant_clause(root), PUBLIC_GRANT_CLAUSE);
        }
        for (file, public) in &self.files {
            for form in [
                file.clone(),
                escape(file, Mode::Command).text,
                escape(file, Mode::Text).text,
            ] {
                out = out.replace(&form, public);
            }
        }
        out
    }
}

/// The text of a waiting task's status message: the engine's `headline`, then what a
/// text-only client needs to have the person answer — the task id, the interaction id, the
/// declared options, the action's digest — and that only the person answers.
pub fn pending_text(i: &Interaction, headline: &str) -> String {
    // Every reader of the task reads this text, remote callers included: Codex's paths are
    // hidden as in the data part.
    let json = serde_json::to_value(i).unwrap_or(Value::Null);
    let mut out = match PathHider::of(&json) {
        Some(h) => h.text(headline.trim_end()),
        None => headline.trim_end().to_string(),
    };
    if let Some(from) = &i.from {
        out.push_str(&format!("\nSent by: {from}"));
    }
    out.push_str(&format!(
        "\n\nWaiting for the person's decision.\nTask: {}\nInteraction: {}\nOptions:",
        i.task_id, i.interaction_id
    ));
    for o in &i.options {
        out.push_str(&format!("\n- {}: {}", o.id, o.label));
    }
    if let Some(a) = &i.action {
        out.push_str(&format!("\nAction digest: {}", a.digest));
        for f in &a.flags {
            out.push_str(&format!("\nWarning: {}", f.message));
        }
    }
    out.push_str(&format!(
        "\nDefault if unanswered: {}\nThe person answers in the Sextant console (or their \
         assistant with answer_agent_task); a message sent to this task is not an answer.",
        i.default_option
    ));
    out
}

/// The description's clause naming Codex's `grantRoot` (a path on the person's machine: the
/// status message other readers see says [`PUBLIC_GRANT_CLAUSE`] instead).
pub(crate) fn grant_clause(root: &str) -> String {
    format!(
        ", and to write under {} for the rest of the session",
        escape(root, Mode::Command).text
    )
}

/// [`grant_clause`] without the path.
pub(crate) const PUBLIC_GRANT_CLAUSE: &str =
    ", and to write under a directory it names for the rest of the session";

#[cfg(test)]
mod tests {
    use sextant_core::action::{ApprovedAction, Mode, escape};
    use sextant_core::interaction::command_approval_options;
    use sextant_core::{Interaction, InteractionKind};

    use super::*;

    /// A Codex file-change approval as the engine raises it: files under the working
    /// directory and one outside, and a granted root.
    fn codex_files() -> Interaction {
        let files = ["/home/me/proj/src/a.rs (update)", "/etc/hosts (add)"];
        let exact = json!({ "kind": "codex", "method": "item/fileChange/requestApproval",
                            "cwd": "/home/me/proj", "files": files,
                            "grantRoot": "/home/me/proj" });
        let shown = escape(&files.join("\n"), Mode::Text);
        let description = format!(
            "Coder (Codex) wants to change {}{}. Reason: tidy up",
            files.join(", "),
            grant_clause("/home/me/proj")
        );
        Interaction {
            interaction_id: "i".into(),
            task_id: "t".into(),
            kind: InteractionKind::ToolApproval,
            title: "Apply these file changes?".into(),
            description: Some(description),
            command: None,
            cwd: Some("/home/me/proj".into()),
            action: Some(Box::new(ApprovedAction::new(exact, shown))),
            from: None,
            options: command_approval_options(),
            fields: vec![],
            reason_allowed: false,
            scope: "session".into(),
            expires_at: None,
            default_option: "decline".into(),
            grant_key: None,
            engine_ref: Value::Null,
        }
    }

    #[test]
    fn other_readers_get_no_codex_paths() {
        let i = codex_files();
        let data = public_data(&i);
        let v = &data["interaction"];
        let text = data.to_string()
            + &pending_text(
                &i,
                "Approval needed: change /home/me/proj/src/a.rs (update)",
            );
        assert!(!text.contains("/home/me"), "{text}");
        assert!(!text.contains("/etc"), "{text}");
        assert!(v["action"]["exact"].get("grantRoot").is_none(), "{v}");
        assert!(v["action"]["exact"].get("cwd").is_none(), "{v}");
        assert!(v.get("cwd").is_none(), "{v}");
        assert_eq!(
            v["action"]["exact"]["files"],
            json!(["src/a.rs (update)", "…/hosts (add)"])
        );
        assert_eq!(v["action"]["shown"], "src/a.rs (update)\n…/hosts (add)");
        assert_eq!(
            v["description"],
            "Coder (Codex) wants to change src/a.rs (update), …/hosts (add), and to write \
             under a directory it names for the rest of the session. Reason: tidy up"
        );
        // The digest is the one the person approves (over the exact, full request).
        assert_eq!(
            v["action"]["digest"],
            json!(i.action.as_ref().map(|a| &a.digest))
        );
    }

    #[test]
    fn hide_paths_works_on_a_transcript_block_too() {
        let i = codex_files();
        let mut v = serde_json::to_value(i.public()).unwrap();
        hide_paths(&mut v);
        assert_eq!(v, public_data(&i)["interaction"]);
    }

    #[test]
    fn commands_and_exec_texts_are_left_as_written() {
        let mut i = codex_files();
        if let Some(a) = i.action.as_mut() {
            a.exact["command"] = json!("cat /home/me/proj/x");
            a.shown = "cat /home/me/proj/x".into();
        }
        let v = public_data(&i);
        assert_eq!(v["interaction"]["action"]["shown"], "cat /home/me/proj/x");
        // An exec agent's own description is its words: not rewritten.
        let mut e = codex_files();
        if let Some(a) = e.action.as_mut() {
            a.exact["kind"] = json!("exec");
        }
        let v = public_data(&e);
        assert!(
            v["interaction"]["description"]
                .as_str()
                .is_some_and(|d| d.contains("/etc/hosts")),
            "{v}"
        );
    }
}
