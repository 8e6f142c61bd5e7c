//! The audit layer: what the server records in the audit log ([`sextant_access::audit`]) and
//! how. No handler builds a record itself; it calls one of these.
//!
//! - **Operations the person's surfaces share** (answering an interaction; creating, changing,
//!   deleting, running now, replaying and canceling a schedule's plan or Run): the REST handler
//!   and the MCP tool both call the operation here, which does it and writes exactly one record
//!   of it, with the same method, outcome and reason whichever surface it came through. Only
//!   the record's `route` says which: the REST path, or the MCP endpoint ([`crate::mcp::PATH`]).
//! - **Single-surface records** (credential, rate-limit and perimeter refusals, A2A calls and
//!   refusals, token issue and revoke, access changes, profile downloads, MCP task reads): one
//!   function each, so their shape is decided here too.
//!
//! A leaf: it calls the runtime and the scheduler, never a handler.

use std::net::SocketAddr;

use sextant_access::audit::{Outcome, Record};
use sextant_core::{Principal, ScheduleSource};
use sextant_journal::TaskRow;
use sextant_runtime::{AnswerError, AnswerRequest};
use sextant_scheduler::{Actor, Error as SchedError, RunView, ScheduleFields, ScheduleView};

use crate::AppState;

fn record(app: &AppState, r: Record) {
    app.security.audit.record(r);
}

// ---- Operations REST and MCP share ----

/// Answers an interaction (the console's inbox and `answer_agent_task`): `method: "answer"`,
/// the Agent, the task, and `interaction …, option …` — or the refusal's reason.
pub async fn answer(
    app: &AppState,
    route: &str,
    req: AnswerRequest,
) -> Result<TaskRow, AnswerError> {
    let who = req.principal.clone();
    let (task_id, detail) = (
        req.task_id.clone(),
        format!("interaction {}, option {}", req.interaction_id, req.option),
    );
    match app.runtime.answer(req).await {
        Ok(task) => {
            record(
                app,
                Record::new(Some(&who), Outcome::Ok)
                    .agent(task.agent_id.clone())
                    .method("answer")
                    .task(Some(task_id), None)
                    .reason(detail)
                    .route(route),
            );
            Ok(task)
        }
        Err(e) => {
            answer_refused(app, route, &who, &task_id, &e).await;
            Err(e)
        }
    }
}

/// Records an answer refused, also when a surface refuses it before the runtime sees it (MCP:
/// a task the caller may not read is "task not found", as the runtime says over REST). The
/// Agent is the task's, when the task exists.
pub async fn answer_refused(
    app: &AppState,
    route: &str,
    who: &Principal,
    task_id: &str,
    e: &AnswerError,
) {
    let agent = match app.runtime.journal().task(task_id).await {
        Ok(Some(t)) => Some(t.agent_id.into_string()),
        _ => None,
    };
    let mut r = Record::new(Some(who), Outcome::Refused)
        .method("answer")
        .task(Some(task_id.to_string()), None)
        .reason(e.to_string())
        .route(route);
    r.agent = agent;
    record(app, r);
}

/// The caller behind an actor: the assistant acting for its owner, or the owner.
fn caller(me: &Actor) -> &Principal {
    me.assistant.as_ref().unwrap_or(&me.owner)
}

/// A schedule operation that was done: `method` (the MCP tool's name, which REST shares) and
/// what it was done to (`schedule …` or `run …`).
fn schedule_done(app: &AppState, route: &str, me: &Actor, method: &str, what: String) {
    record(
        app,
        Record::new(Some(caller(me)), Outcome::Ok)
            .method(method)
            .reason(what)
            .route(route),
    );
}

/// A schedule operation refused to the caller: a plan or Run it cannot see (someone else's
/// is "not found" too) or an Agent its Runs may not call. Those are what an owner reading the
/// log looks for (an assistant probing plans, a plan aimed at a forbidden Agent). A malformed
/// request (a field error), a state conflict (canceling an ended Run) or a journal failure is
/// not a refusal of the caller and writes nothing.
fn schedule_refused(
    app: &AppState,
    route: &str,
    me: &Actor,
    method: &str,
    what: &str,
    e: &SchedError,
) {
    if matches!(e, SchedError::NotFound | SchedError::Forbidden(_)) {
        record(
            app,
            Record::new(Some(caller(me)), Outcome::Refused)
                .method(method)
                .reason(format!("{what}: {e}"))
                .route(route),
        );
    }
}

/// Creates a plan (`create_schedule`).
pub async fn create_schedule(
    app: &AppState,
    route: &str,
    me: &Actor,
    fields: ScheduleFields,
    source: ScheduleSource,
) -> Result<ScheduleView, SchedError> {
    let v = app
        .scheduler
        .create(me.clone(), fields, source)
        .await
        .inspect_err(|e| schedule_refused(app, route, me, "create_schedule", "new schedule", e))?;
    schedule_done(
        app,
        route,
        me,
        "create_schedule",
        format!("schedule {}", v.id),
    );
    Ok(v)
}

/// Changes a plan: `enable_schedule` or `disable_schedule` when `enabled` is all that is sent
/// (whether a tool or a PATCH sent it), else `update_schedule`.
pub async fn update_schedule(
    app: &AppState,
    route: &str,
    me: &Actor,
    schedule_id: &str,
    fields: ScheduleFields,
) -> Result<ScheduleView, SchedError> {
    let method = change_method(&fields);
    let v = app
        .scheduler
        .update(me.clone(), schedule_id, fields)
        .await
        .inspect_err(|e| {
            schedule_refused(
                app,
                route,
                me,
                method,
                &format!("schedule {schedule_id}"),
                e,
            )
        })?;
    schedule_done(app, route, me, method, format!("schedule {}", v.id));
    Ok(v)
}

/// The method a change is recorded as: sending only `enabled` enables or disables.
fn change_method(fields: &ScheduleFields) -> &'static str {
    let only = |enabled| ScheduleFields {
        enabled: Some(enabled),
        ..Default::default()
    };
    if *fields == only(true) {
        "enable_schedule"
    } else if *fields == only(false) {
        "disable_schedule"
    } else {
        "update_schedule"
    }
}

/// Deletes a plan and its Run history (`delete_schedule`).
pub async fn delete_schedule(
    app: &AppState,
    route: &str,
    me: &Actor,
    schedule_id: &str,
) -> Result<(), SchedError> {
    app.scheduler
        .delete(&me.owner, schedule_id)
        .await
        .inspect_err(|e| {
            let what = format!("schedule {schedule_id}");
            schedule_refused(app, route, me, "delete_schedule", &what, e)
        })?;
    schedule_done(
        app,
        route,
        me,
        "delete_schedule",
        format!("schedule {schedule_id}"),
    );
    Ok(())
}

/// A Run now, with the plan's prompt or `prompt` (`run_schedule_now`).
pub async fn run_schedule_now(
    app: &AppState,
    route: &str,
    me: &Actor,
    schedule_id: &str,
    prompt: Option<&str>,
) -> Result<RunView, SchedError> {
    let r = app
        .scheduler
        .run_now_with(me.clone(), schedule_id, prompt)
        .await
        .inspect_err(|e| {
            let what = format!("schedule {schedule_id}");
            schedule_refused(app, route, me, "run_schedule_now", &what, e)
        })?;
    schedule_done(app, route, me, "run_schedule_now", format!("run {}", r.id));
    Ok(r)
}

/// A new Run with an earlier Run's prompt and Agent (`replay_schedule_run`).
pub async fn replay_schedule_run(
    app: &AppState,
    route: &str,
    me: &Actor,
    schedule_id: &str,
    run_id: &str,
) -> Result<RunView, SchedError> {
    let r = app
        .scheduler
        .replay(me.clone(), schedule_id, run_id)
        .await
        .inspect_err(|e| {
            let what = format!("run {run_id}");
            schedule_refused(app, route, me, "replay_schedule_run", &what, e)
        })?;
    schedule_done(
        app,
        route,
        me,
        "replay_schedule_run",
        format!("run {}", r.id),
    );
    Ok(r)
}

/// Cancels a Run's task (`cancel_schedule_run`).
pub async fn cancel_schedule_run(
    app: &AppState,
    route: &str,
    me: &Actor,
    schedule_id: &str,
    run_id: &str,
    reason: Option<String>,
) -> Result<RunView, SchedError> {
    let r = app
        .scheduler
        .cancel_run(me.clone(), schedule_id, run_id, reason)
        .await
        .inspect_err(|e| {
            let what = format!("run {run_id}");
            schedule_refused(app, route, me, "cancel_schedule_run", &what, e)
        })?;
    schedule_done(
        app,
        route,
        me,
        "cancel_schedule_run",
        format!("run {}", r.id),
    );
    Ok(r)
}

/// Peer credentials issued to an assistant (by the owner over REST, or by the assistant
/// itself with `issue_agent_peers`): the assistant's name and the Agents.
pub fn peers_issued(
    app: &AppState,
    route: &str,
    who: &Principal,
    assistant: &str,
    agent_ids: &[&str],
) {
    record(
        app,
        Record::new(Some(who), Outcome::Ok)
            .method("issue assistant peer credentials")
            .reason(format!("assistant {assistant}: {}", agent_ids.join(", ")))
            .route(route),
    );
}

// ---- Single-surface records ----

/// A request refused before any handler: bad or missing credentials (`who` unknown), the
/// rate limit, the perimeter.
pub fn request_refused(
    app: &AppState,
    who: Option<&Principal>,
    reason: impl Into<String>,
    route: &str,
    peer: Option<SocketAddr>,
) {
    record(
        app,
        Record::new(who, Outcome::Refused)
            .reason(reason)
            .route(route)
            .peer(peer),
    );
}

/// An A2A request refused before its method ran (no such Agent for this caller, no right to
/// call, an extended card without credentials).
pub fn a2a_refused(app: &AppState, who: &Principal, agent_id: &str, method: &str, why: &str) {
    record(
        app,
        Record::new(Some(who), Outcome::Refused)
            .agent(agent_id)
            .method(method)
            .reason(why),
    );
}

/// An assistant's credential used for an Agent it is not scoped to; `method` when the route
/// names one (the card).
pub fn out_of_scope(
    app: &AppState,
    who: &Principal,
    agent_id: &str,
    method: Option<&str>,
    scope: Option<&str>,
) {
    let mut r = Record::new(Some(who), Outcome::Refused)
        .agent(agent_id)
        .reason(format!("assistant token scoped to {scope:?}"));
    if let Some(m) = method {
        r = r.method(m);
    }
    record(app, r);
}

/// An A2A call being served, recorded once when its outcome is known.
#[derive(Debug)]
#[must_use = "an A2A call is recorded by answered, stream_opened or failed"]
pub struct A2aCall(Record);

impl A2aCall {
    /// `method` as the caller named it, on `route`.
    pub fn start(who: &Principal, agent_id: &str, method: &str, route: &str) -> Self {
        Self(
            Record::new(Some(who), Outcome::Ok)
                .agent(agent_id)
                .method(method)
                .route(route),
        )
    }

    /// Answered with a result naming (or the request naming) this task and context.
    pub fn answered(self, app: &AppState, task_id: Option<String>, context_id: Option<String>) {
        record(app, self.0.task(task_id, context_id));
    }

    /// A stream opened.
    pub fn stream_opened(
        self,
        app: &AppState,
        task_id: Option<String>,
        context_id: Option<String>,
    ) {
        record(
            app,
            self.0.task(task_id, context_id).reason("stream opened"),
        );
    }

    /// Failed: `internal` is Sextant's own error, anything else a refusal.
    pub fn failed(
        self,
        app: &AppState,
        internal: bool,
        task_id: Option<String>,
        context_id: Option<String>,
        message: &str,
    ) {
        let mut r = self.0.task(task_id, context_id).reason(message);
        r.outcome = Some(if internal {
            Outcome::Error
        } else {
            Outcome::Refused
        });
        record(app, r);
    }
}

/// A task read with the MCP tool `get_agent_task`: the context when it was read, else the
/// refusal.
pub fn task_read(
    app: &AppState,
    who: &Principal,
    agent_id: &str,
    task_id: &str,
    read: Result<&str, &str>,
) {
    let r = Record::new(Some(who), Outcome::Ok)
        .agent(agent_id)
        .method("get_agent_task");
    record(
        app,
        match read {
            Ok(context_id) => r.task(Some(task_id.into()), Some(context_id.into())),
            Err(why) => {
                let mut r = r.task(Some(task_id.into()), None).reason(why);
                r.outcome = Some(Outcome::Refused);
                r
            }
        },
    );
}

/// A peer or assistant token issued (`kind` is the credential's kind).
pub fn token_issued(app: &AppState, who: &Principal, kind: &str, name: &str) {
    record(app, Record::token_issued(who, kind, name));
}

/// A peer or assistant token revoked.
pub fn token_revoked(app: &AppState, who: &Principal, kind: &str, name: &str) {
    record(app, Record::token_revoked(who, kind, name));
}

/// An assistant's credential for one Agent revoked.
pub fn peer_credential_revoked(app: &AppState, who: &Principal, assistant: &str, agent_id: &str) {
    record(
        app,
        Record::new(Some(who), Outcome::Ok)
            .agent(agent_id)
            .method("revoke assistant peer credential")
            .reason(format!("assistant {assistant}")),
    );
}

/// An Agent's deny list replaced; `denied` is the list now in force.
pub fn access_changed(app: &AppState, who: &Principal, agent_id: &str, denied: &[String]) {
    record(
        app,
        Record::new(Some(who), Outcome::Ok)
            .agent(agent_id)
            .method("set access")
            .reason(format!("denied: {denied:?}")),
    );
}

/// A profile download (`backup` or `export`), at `/api/v1/<what>`.
pub fn download(app: &AppState, who: &Principal, what: &str) {
    record(
        app,
        Record::new(Some(who), Outcome::Ok)
            .method(what)
            .route(format!("/api/v1/{what}")),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_enabled_is_enabling_or_disabling_anything_more_an_update() {
        let enabled = |on| ScheduleFields {
            enabled: Some(on),
            ..Default::default()
        };
        assert_eq!(change_method(&enabled(true)), "enable_schedule");
        assert_eq!(change_method(&enabled(false)), "disable_schedule");
        let renamed = ScheduleFields {
            name: Some("n".into()),
            ..enabled(false)
        };
        assert_eq!(change_method(&renamed), "update_schedule");
        assert_eq!(change_method(&ScheduleFields::default()), "update_schedule");
    }
}
