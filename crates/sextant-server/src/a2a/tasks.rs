//! What the A2A service shares with push delivery and the agents MCP bridge about a task:
//! whose task a principal may read ([`find_task`], by [`Visibility`]), and where the pending
//! interactions in a rendered task are answered ([`add_answer_urls`]). Push delivery reads
//! these here rather than from the service (which calls push: `scripts/import-cycles.py`);
//! this module imports nothing of the crate but its root's `AppState`.

use serde_json::Value;
use sextant_a2a::RpcError;
use sextant_a2a::error::Code;
use sextant_core::Principal;
use sextant_journal::TaskRow;

use crate::AppState;

/// Which callers' tasks a principal may read on a surface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visibility {
    /// The caller's own tasks only (A2A: tasks are scoped to the principal).
    Caller,
    /// The console owner reads every caller's tasks; anyone else only their own (the agents
    /// MCP bridge, used by the person's assistant to answer approvals for them).
    OwnerReadsAll,
}

/// The task `task_id` of Agent `agent_id` if `principal` may read it, else TaskNotFound
/// (another caller's task is "not found", never "forbidden").
pub async fn find_task(
    app: &AppState,
    principal: &Principal,
    agent_id: &str,
    task_id: &str,
    visibility: Visibility,
) -> Result<TaskRow, RpcError> {
    let row = app.runtime.journal().task(task_id).await.map_err(|e| {
        tracing::error!(error = %e, "A2A request failed");
        RpcError::of(Code::Internal)
    })?;
    let readable = |t: &TaskRow| {
        t.caller == principal.key()
            || (visibility == Visibility::OwnerReadsAll && principal.is_owner())
    };
    row.filter(|t| t.agent_id == agent_id && readable(t))
        .ok_or_else(|| RpcError::new(Code::TaskNotFound, format!("Task not found: {task_id}")))
}

/// Gives every pending-interaction data part of a result or stream item (a Task, `{task}`,
/// `{message}`, a `statusUpdate`) where to answer it: `answerPath` and the absolute
/// `answerUrl`, from its interaction id, and `answeredAt`, the console inbox where the
/// person answers it. The journal keeps ids, not HTTP paths or the URL
/// Sextant is reached at; an older journal's stored `answerPath` is rewritten the same. Only
/// the messages that can hold such a part are visited (the status message and history), not
/// the whole value.
pub fn add_answer_urls(v: &mut Value, base: &str) {
    link_task(v, base);
    if let Some(t) = v.get_mut("task") {
        link_task(t, base);
    }
    if let Some(m) = v.pointer_mut("/statusUpdate/status/message") {
        link_message(m, base);
    }
    if let Some(m) = v.get_mut("message") {
        link_message(m, base);
    }
}

fn link_task(t: &mut Value, base: &str) {
    if let Some(m) = t.pointer_mut("/status/message") {
        link_message(m, base);
    }
    if let Some(history) = t.get_mut("history").and_then(Value::as_array_mut) {
        for m in history {
            link_message(m, base);
        }
    }
}

fn link_message(m: &mut Value, base: &str) {
    let Some(parts) = m.get_mut("parts").and_then(Value::as_array_mut) else {
        return;
    };
    for part in parts {
        let Some(i) = part
            .pointer_mut("/data/interaction")
            .and_then(Value::as_object_mut)
        else {
            continue;
        };
        let Some(id) = i.get("interactionId").and_then(Value::as_str) else {
            continue;
        };
        let path = sextant_runtime::interactions::answer_path(id);
        i.insert("answerUrl".into(), Value::String(format!("{base}{path}")));
        i.insert("answerPath".into(), Value::String(path));
        // Where the person answers it: a Sextant takes no answer by message, and another
        // Sextant following this task waits for that person instead of asking its own.
        i.insert(
            sextant_peers::follow::ANSWERED_AT.into(),
            Value::String(format!("{base}/inbox")),
        );
    }
}
