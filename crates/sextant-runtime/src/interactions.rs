//! Pending interactions: engines waiting for answers, the person's answer, and expiry.
//!
//! An engine waits in [`crate::TurnSink::ask`] on a oneshot registered here *before* the
//! interaction is journalled, so an answer can never slip past it. [`Runtime::answer`] checks
//! the answer against the journal (the authority), journals it together with the task going
//! back to working, then hands it to the waiting engine — or, when no engine waits any more
//! (Sextant restarted), queues a resume on the Session's worker. The expiry loop applies each
//! interaction's default option when it expires, the same way.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use serde_json::{Map, Value, json};
use sextant_core::a2a::TaskState;
use sextant_core::interaction::{ACCEPT_FOR_SCHEDULE, AnswerRefusal, check_answer};
use sextant_core::projection::TaskFold;
use sextant_core::{Answer, EventBody, Interaction, Principal};
use sextant_journal::{GrantRow, InteractionRow, NewEvent, TaskRow};
use tokio::sync::{Notify, oneshot};

use crate::Runtime;
use crate::worker::WorkItem;

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

    fn take(&self, id: &str) -> Option<oneshot::Sender<Answer>> {
        self.map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(id)
    }

    pub(crate) fn expiry_changed(&self) {
        self.expiry.notify_one();
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
            out = out.replace(
                &crate::engine::codex::grant_clause(root),
                crate::engine::codex::PUBLIC_GRANT_CLAUSE,
            );
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

/// An answer as a caller sends it.
#[derive(Debug, Clone)]
pub struct AnswerRequest {
    pub principal: Principal,
    pub task_id: String,
    pub interaction_id: String,
    pub option: String,
    pub reason: Option<String>,
    pub values: Map<String, Value>,
    pub message_id: String,
    /// The digest of the action the answerer saw, when its client sends it: an answer whose
    /// digest is not the interaction's is refused (the card it was given for is not this one).
    pub digest: Option<String>,
}

/// Why an answer was not taken.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    /// Only the console owner answers, as themselves.
    #[error("only the console owner may answer interactions")]
    NotOwner,
    #[error("task not found")]
    TaskNotFound,
    #[error("interaction not found for this task")]
    InteractionNotFound,
    #[error("{0}")]
    Refused(AnswerRefusal),
    #[error("message_id must not be empty")]
    MissingMessageId,
    #[error(transparent)]
    Journal(#[from] sextant_journal::Error),
}

impl Runtime {
    /// Pending interactions across all Sessions, newest first.
    pub async fn pending_interactions(
        &self,
    ) -> Result<Vec<InteractionRow>, sextant_journal::Error> {
        self.inner.journal.pending_interactions().await
    }

    /// Takes the person's answer (see the module docs). Returns the task as it is right after
    /// the answer was journalled; execution goes on in the background.
    pub async fn answer(&self, req: AnswerRequest) -> Result<TaskRow, AnswerError> {
        if !req.principal.is_owner() {
            return Err(AnswerError::NotOwner);
        }
        if req.message_id.trim().is_empty() {
            return Err(AnswerError::MissingMessageId);
        }
        let journal = &self.inner.journal;
        let task = journal
            .task(&req.task_id)
            .await?
            .ok_or(AnswerError::TaskNotFound)?;
        let events = journal.task_events(&task.task_id, 0).await?;
        let fold =
            TaskFold::from_events(&task.task_id, &task.context_id, &task.session_id, &events);
        let (interaction, given) = fold
            .interactions
            .iter()
            .find(|(i, _)| i.interaction_id == req.interaction_id)
            .cloned()
            .ok_or(AnswerError::InteractionNotFound)?;
        if let Some(prior) = given {
            // An identical retry gets the same result; anything else is refused.
            let same = prior.message_id == req.message_id
                && prior.option == req.option
                && prior.reason == req.reason
                && prior.values == req.values;
            if same {
                return Ok(task);
            }
            let why = if prior.expired {
                AnswerRefusal::Expired
            } else {
                AnswerRefusal::AlreadyAnswered
            };
            return Err(AnswerError::Refused(why));
        }
        if task.state.is_terminal() {
            return Err(AnswerError::Refused(AnswerRefusal::TaskTerminal));
        }
        if interaction
            .expires_at
            .is_some_and(|t| t <= self.inner.clock.now())
        {
            self.expire(&task, &interaction).await?;
            return Err(AnswerError::Refused(AnswerRefusal::Expired));
        }
        check_answer(&interaction, &req.option, &req.values).map_err(AnswerError::Refused)?;
        let asked = interaction.action.as_ref().map(|a| a.digest.clone());
        if let Some(seen) = &req.digest
            && asked.as_deref() != Some(seen.as_str())
        {
            return Err(AnswerError::Refused(AnswerRefusal::ActionChanged {
                asked: asked.unwrap_or_else(|| "no action digest".into()),
            }));
        }
        let reason = req
            .reason
            .filter(|r| interaction.reason_allowed && !r.trim().is_empty());
        let answer = Answer {
            interaction_id: interaction.interaction_id.clone(),
            option: req.option,
            reason,
            values: req.values,
            message_id: req.message_id,
            answered_by: req.principal.display(),
            expired: false,
            digest: asked,
        };
        match self.record(&task, &interaction, answer).await {
            Err(sextant_journal::Error::Conflict(_)) => {
                Err(AnswerError::Refused(AnswerRefusal::AlreadyAnswered))
            }
            other => Ok(other?),
        }
    }

    /// Applies an interaction's default option because it expired.
    async fn expire(
        &self,
        task: &TaskRow,
        interaction: &Interaction,
    ) -> Result<(), sextant_journal::Error> {
        let answer = Answer {
            interaction_id: interaction.interaction_id.clone(),
            option: interaction.default_option.clone(),
            reason: Some("expired without an answer".into()),
            values: Map::new(),
            message_id: format!("expiry-{}", interaction.interaction_id),
            answered_by: "expiry".into(),
            expired: true,
            digest: interaction.action.as_ref().map(|a| a.digest.clone()),
        };
        match self.record(task, interaction, answer).await {
            // Answered meanwhile: nothing to apply.
            Err(sextant_journal::Error::Conflict(_)) => Ok(()),
            other => other.map(drop),
        }
    }

    /// Journals an answer (and the task working again), then delivers it.
    async fn record(
        &self,
        task: &TaskRow,
        interaction: &Interaction,
        answer: Answer,
    ) -> Result<TaskRow, sextant_journal::Error> {
        let now = self.inner.clock.now();
        self.inner
            .journal
            .append(
                &task.session_id,
                vec![
                    NewEvent {
                        task_id: Some(task.task_id.clone()),
                        body: EventBody::InteractionAnswered {
                            answer: answer.clone(),
                        },
                        at: now,
                    },
                    NewEvent {
                        task_id: Some(task.task_id.clone()),
                        body: EventBody::TaskState {
                            state: TaskState::Working,
                            message: None,
                        },
                        at: now,
                    },
                ],
            )
            .await?;
        // Remembered before the engine hears the answer, so the schedule's next Run finds it.
        if answer.option == ACCEPT_FOR_SCHEDULE && !answer.expired {
            self.grant_for_schedule(task, interaction, &answer).await;
        }
        // Read the task as answered before handing the answer over: a fast engine could
        // otherwise journal its final state first, and callers wait for states after this row.
        let row = self.inner.journal.task(&task.task_id).await?;
        // A card for a remote task reached through a2a_call: no engine waits for it; the
        // answer goes to the remote task.
        if is_outbound_card(interaction) {
            match self.outbound().cloned() {
                Some(outbound) => {
                    let (task, interaction) = (task.clone(), interaction.clone());
                    let task_id = task.task_id.clone();
                    let sent = outbound.answer_card(task, interaction, answer);
                    self.inner.tracker.spawn(async move {
                        if let Err(e) = sent.await {
                            tracing::warn!(error = %e, task_id = %task_id, "could not send an answer to a peer");
                        }
                    });
                }
                None => tracing::warn!("an outbound card was answered, but peers are not set up"),
            }
            return row.ok_or(sextant_journal::Error::NotFound);
        }
        match self.inner.waiters.take(&interaction.interaction_id) {
            Some(tx) => {
                if let Err(answer) = tx.send(answer) {
                    self.resume(task, interaction, answer);
                }
            }
            None => self.resume(task, interaction, answer),
        }
        row.ok_or(sextant_journal::Error::NotFound)
    }

    /// Records an `acceptForSchedule` answer's grant: this exact action (the interaction's
    /// grant key and action digest) for every later Run of the schedule the task is a Run of,
    /// bound to the fingerprint of the Run's prompt and Agent. The answer is journalled
    /// already and still approves this Run; a grant that cannot be recorded (the schedule was
    /// deleted or edited meanwhile) is only logged, and the next Run asks again.
    async fn grant_for_schedule(&self, task: &TaskRow, interaction: &Interaction, answer: &Answer) {
        let (Some(key), Some(action)) = (&interaction.grant_key, &interaction.action) else {
            return;
        };
        let journal = &self.inner.journal;
        let scope = match journal.run_scope(task.clone()).await {
            Ok(Some(s)) if s.current => s,
            Ok(_) => {
                tracing::info!(task_id = %task.task_id,
                    "acceptForSchedule: the task no longer runs its schedule's prompt and Agent; no grant kept");
                return;
            }
            Err(e) => {
                tracing::warn!(task_id = %task.task_id, error = %e, "could not read the task's schedule");
                return;
            }
        };
        let grant = GrantRow {
            grant_id: sextant_core::ids::new_id(),
            schedule_id: scope.schedule_id,
            grant_key: key.clone(),
            digest: action.digest.clone(),
            action: (**action).clone(),
            fingerprint: scope.fingerprint,
            granted_by: answer.answered_by.clone(),
            granted_at: sextant_core::ids::format_time(self.inner.clock.now()),
            run_id: Some(scope.run_id),
            task_id: task.task_id.clone(),
            interaction_id: interaction.interaction_id.clone(),
            voided_at: None,
            void_reason: None,
        };
        if let Err(e) = journal.put_schedule_grant(grant).await {
            tracing::warn!(task_id = %task.task_id, error = %e, "could not record a schedule grant");
        }
    }

    fn resume(&self, task: &TaskRow, interaction: &Interaction, answer: Answer) {
        self.dispatch_item(
            &task.session_id,
            &task.agent_id,
            WorkItem::Resume {
                task_id: task.task_id.clone(),
                interaction: Box::new(interaction.clone()),
                answer: Box::new(answer),
            },
        );
    }

    /// The expiry loop: applies defaults as interactions expire; wakes when one is raised.
    pub(crate) async fn expiry_loop(self) {
        const IDLE: Duration = Duration::from_secs(3600);
        loop {
            let mut next: Option<chrono::DateTime<chrono::Utc>> = None;
            match self.inner.journal.pending_interactions().await {
                Ok(rows) => {
                    let now = self.inner.clock.now();
                    for row in rows {
                        let Some(at) = row.interaction.expires_at else {
                            continue;
                        };
                        if at <= now {
                            if let Err(e) = self.expire_row(&row).await {
                                tracing::error!(error = %e, "could not apply an expired interaction's default");
                            }
                        } else if next.is_none_or(|n| at < n) {
                            next = Some(at);
                        }
                    }
                }
                Err(e) => tracing::error!(error = %e, "could not read pending interactions"),
            }
            let wait = next
                .map(|n| {
                    (n - self.inner.clock.now())
                        .to_std()
                        .unwrap_or(Duration::ZERO)
                })
                .unwrap_or(IDLE)
                .min(IDLE);
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = self.inner.waiters.expiry.notified() => {}
                _ = self.inner.stop_intake.cancelled() => return,
            }
        }
    }

    async fn expire_row(&self, row: &InteractionRow) -> Result<(), sextant_journal::Error> {
        let Some(task) = self.inner.journal.task(&row.task_id).await? else {
            return Ok(());
        };
        if task.state.is_terminal() {
            return Ok(());
        }
        self.expire(&task, &row.interaction).await
    }

    /// Wakes the expiry loop (after the clock was moved, in tests).
    pub fn check_expiries(&self) {
        self.inner.waiters.expiry_changed();
    }
}

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
            crate::engine::codex::grant_clause("/home/me/proj")
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
