//! `tasks`: one row per Task with its identity, its idempotency key and a cache of its
//! projected state (state, state_at, last_seq) for listing and filtering.

use a2a::TaskState;
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::Serialize;
use sextant_core::a2a;
use sextant_core::event::{parse_state, state_wire};
use sextant_core::ids::format_time;
use sextant_core::projection::TaskFold;

use crate::error::{Error, Result};
use crate::queries::events;

/// A stored Task (identity + cached state).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskRow {
    pub task_id: String,
    pub session_id: String,
    pub caller: String,
    pub agent_id: String,
    pub context_id: String,
    pub message_id: String,
    pub content_hash: String,
    pub created_at: String,
    /// The seq of the task's first event in its Session (fixed at creation): its events are
    /// the Session's events from here to `last_seq` that carry its id.
    pub first_seq: i64,
    #[serde(serialize_with = "ser_state")]
    pub state: TaskState,
    pub state_at: String,
    pub last_seq: i64,
}

fn ser_state<S: serde::Serializer>(s: &TaskState, ser: S) -> Result<S::Ok, S::Error> {
    ser.serialize_str(&state_wire(s))
}

/// The columns [`row`] reads, in its order; a macro so that the `const` statements below can
/// `concat!` it.
macro_rules! columns {
    () => {
        "task_id, session_id, caller, agent_id, context_id, message_id, content_hash, \
         created_at, state, state_at, last_seq, first_seq"
    };
}

const COLUMNS: &str = columns!();

fn row(r: &Row<'_>) -> rusqlite::Result<TaskRow> {
    let state: String = r.get(8)?;
    Ok(TaskRow {
        task_id: r.get(0)?,
        session_id: r.get(1)?,
        caller: r.get(2)?,
        agent_id: r.get(3)?,
        context_id: r.get(4)?,
        message_id: r.get(5)?,
        content_hash: r.get(6)?,
        created_at: r.get(7)?,
        state: parse_state(&state).unwrap_or(TaskState::Unspecified),
        state_at: r.get(9)?,
        last_seq: r.get(10)?,
        first_seq: r.get(11)?,
    })
}

/// One task by id.
pub fn get(c: &Connection, task_id: &str) -> Result<Option<TaskRow>> {
    Ok(
        c.prepare_cached(&format!("SELECT {COLUMNS} FROM tasks WHERE task_id = ?1"))?
            .query_row([task_id], row)
            .optional()?,
    )
}

/// The statement behind [`insert`].
pub(crate) const INSERT: &str = concat!(
    "INSERT INTO tasks (",
    columns!(),
    ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"
);

/// Inserts a new task row.
pub fn insert(c: &Connection, t: &TaskRow) -> Result<()> {
    c.prepare_cached(INSERT)?.execute(params![
        t.task_id,
        t.session_id,
        t.caller,
        t.agent_id,
        t.context_id,
        t.message_id,
        t.content_hash,
        t.created_at,
        state_wire(&t.state),
        t.state_at,
        t.last_seq,
        t.first_seq
    ])?;
    Ok(())
}

/// The statements behind [`touch`]: the writer runs one per task and batch.
pub(crate) const TOUCH_STATE: &str =
    "UPDATE tasks SET state = ?2, state_at = ?3, last_seq = ?4 WHERE task_id = ?1";
pub(crate) const TOUCH: &str = "UPDATE tasks SET last_seq = ?2 WHERE task_id = ?1";

/// Updates the cache after an event of the task was appended.
pub fn touch(
    c: &Connection,
    task_id: &str,
    seq: i64,
    new_state: Option<(&TaskState, &str)>,
) -> Result<()> {
    match new_state {
        Some((state, at)) => {
            c.prepare_cached(TOUCH_STATE)?
                .execute(params![task_id, state_wire(state), at, seq])?
        }
        None => c.prepare_cached(TOUCH)?.execute(params![task_id, seq])?,
    };
    Ok(())
}

/// What to list.
#[derive(Debug, Clone, Default)]
pub struct TaskFilter {
    /// Only this caller's tasks (`None`: every caller's, for the console owner).
    pub caller: Option<String>,
    pub agent_id: Option<String>,
    pub context_id: Option<String>,
    pub state: Option<TaskState>,
    /// Only tasks whose state changed at or after this time (stored format).
    pub state_at_or_after: Option<String>,
    /// (state_at, task_id) of the last row of the previous page.
    pub cursor: Option<(String, String)>,
    pub limit: u32,
}

/// A page of tasks, most recently updated first.
#[derive(Debug, Clone)]
pub struct TaskPage {
    pub tasks: Vec<TaskRow>,
    /// Count of all matching tasks, before pagination.
    pub total: u64,
    /// The cursor for the next page, if there is one.
    pub next: Option<(String, String)>,
}

/// Lists tasks.
pub fn list(c: &Connection, f: &TaskFilter) -> Result<TaskPage> {
    let state = f.state.as_ref().map(state_wire);
    let filters = "(?1 IS NULL OR caller = ?1) AND (?2 IS NULL OR agent_id = ?2)
         AND (?3 IS NULL OR context_id = ?3) AND (?4 IS NULL OR state = ?4)
         AND (?5 IS NULL OR state_at >= ?5)";
    let (cur_at, cur_id) = f.cursor.clone().unwrap_or_default();
    let limit = f.limit.max(1);
    let mut tasks = c
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM tasks WHERE {filters}
               AND (?6 = 0 OR state_at < ?7 OR (state_at = ?7 AND task_id < ?8))
             ORDER BY state_at DESC, task_id DESC LIMIT ?9"
        ))?
        .query_map(
            params![
                f.caller,
                f.agent_id,
                f.context_id,
                state,
                f.state_at_or_after,
                f.cursor.is_some() as i64,
                cur_at,
                cur_id,
                limit + 1
            ],
            row,
        )?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let next = if tasks.len() > limit as usize {
        tasks.truncate(limit as usize);
        tasks
            .last()
            .map(|t| (t.state_at.clone(), t.task_id.clone()))
    } else {
        None
    };
    let total: i64 = c
        .prepare_cached(&format!("SELECT COUNT(*) FROM tasks WHERE {filters}"))?
        .query_row(
            params![
                f.caller,
                f.agent_id,
                f.context_id,
                state,
                f.state_at_or_after
            ],
            |r| r.get(0),
        )?;
    Ok(TaskPage {
        tasks,
        total: total as u64,
        next,
    })
}

/// The statement behind [`unfinished`]; its WHERE is the `tasks_live` index's condition.
pub(crate) const UNFINISHED: &str = concat!(
    "SELECT ",
    columns!(),
    " FROM tasks WHERE ",
    live_task!(),
    " ORDER BY created_at, task_id"
);

/// Tasks not yet in a terminal state, oldest first.
pub fn unfinished(c: &Connection) -> Result<Vec<TaskRow>> {
    c.prepare_cached(UNFINISHED)?
        .query_map([], row)?
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(Error::from)
}

/// The statement behind [`for_session`]: each task of a Session was created by a
/// `task_created` event in it, so the Session's events name them (there is no index of tasks
/// by Session to keep up on every admission).
pub(crate) const FOR_SESSION: &str = concat!(
    "SELECT ",
    columns!(),
    " FROM tasks
     WHERE task_id IN (SELECT task_id FROM events
                       WHERE session_id = ?1 AND kind = 'task_created')
     ORDER BY first_seq"
);

/// The tasks of a Session, oldest first.
pub fn for_session(c: &Connection, session_id: &str) -> Result<Vec<TaskRow>> {
    c.prepare_cached(FOR_SESSION)?
        .query_map([session_id], row)?
        .collect::<rusqlite::Result<Vec<_>>>()
        .map_err(Error::from)
}

/// Recomputes each task's cached state from its events; returns the ids whose cache differs.
/// The events are found without the cached `last_seq` (which [`events::for_task`] trusts).
pub fn rebuild_check(c: &Connection) -> Result<Vec<String>> {
    let rows = c
        .prepare(&format!("SELECT {COLUMNS} FROM tasks ORDER BY task_id"))?
        .query_map([], row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut differing = Vec::new();
    for t in rows {
        let evs = events::in_session_for_task(c, &t.session_id, &t.task_id)?;
        let fold = TaskFold::from_events(&t.task_id, &t.context_id, &t.session_id, &evs);
        let at = fold.status_at.map(format_time).unwrap_or_default();
        if fold.state != t.state || at != t.state_at || fold.last_seq != t.last_seq {
            differing.push(t.task_id);
        }
    }
    Ok(differing)
}
