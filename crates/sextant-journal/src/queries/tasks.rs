//! `tasks`: one row per Task with its identity and a cache of its projected state (state,
//! state_at, last_seq) for listing and filtering. The idempotency key and content hash of the
//! input that created it are in `inputs` (as every later input's are), and only there.

use a2a::TaskState;
use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::{Deserialize, Serialize};
use sextant_core::a2a;
use sextant_core::event::{is_terminal, parse_state, state_wire};
use sextant_core::ids::{AgentId, ContextId, SessionId, TaskId, format_time};
use sextant_core::projection::TaskFold;
use sextant_core::{CallerKey, EventBody, TaskOutcome};

use crate::error::{Error, Result};
use crate::queries::events;
use crate::stored::{self, Sql};

/// A stored Task (identity + cached state).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRow {
    pub task_id: TaskId,
    pub session_id: SessionId,
    pub caller: CallerKey,
    pub agent_id: AgentId,
    pub context_id: ContextId,
    pub message_id: String,
    #[serde(with = "crate::stored::time")]
    pub created_at: DateTime<Utc>,
    /// The seq of the task's first event in its Session (fixed at creation): its events are
    /// the Session's events from here to `last_seq` that carry its id.
    pub first_seq: i64,
    #[serde(serialize_with = "ser_state", deserialize_with = "de_state")]
    pub state: TaskState,
    #[serde(with = "crate::stored::time")]
    pub state_at: DateTime<Utc>,
    pub last_seq: i64,
    /// What happened, once the task ended (see [`outcome`]); `None` while it runs.
    pub outcome: Option<TaskOutcome>,
}

fn ser_state<S: serde::Serializer>(s: &TaskState, ser: S) -> Result<S::Ok, S::Error> {
    ser.serialize_str(&state_wire(s))
}

fn de_state<'de, D: serde::Deserializer<'de>>(de: D) -> Result<TaskState, D::Error> {
    let s = String::deserialize(de)?;
    parse_state(&s).ok_or_else(|| serde::de::Error::custom(format!("unknown task state {s:?}")))
}

/// The columns [`row`] reads, in its order; a macro so that the `const` statements below can
/// `concat!` it.
macro_rules! columns {
    () => {
        "task_id, session_id, caller, agent_id, context_id, message_id, created_at, state, \
         state_at, last_seq, first_seq, outcome"
    };
}

pub(crate) const COLUMNS: &str = columns!();
/// How many columns [`COLUMNS`] names: a statement's further columns start at this index.
pub(crate) const COLUMN_COUNT: usize = {
    let b = COLUMNS.as_bytes();
    let (mut n, mut i) = (1, 0);
    while i < b.len() {
        if b[i] == b',' {
            n += 1;
        }
        i += 1;
    }
    n
};

pub(crate) fn row(r: &Row<'_>) -> rusqlite::Result<TaskRow> {
    Ok(TaskRow {
        task_id: stored::get(r, 0)?,
        session_id: stored::get(r, 1)?,
        caller: stored::get(r, 2)?,
        agent_id: stored::get(r, 3)?,
        context_id: stored::get(r, 4)?,
        message_id: r.get(5)?,
        created_at: stored::get(r, 6)?,
        state: stored::get(r, 7)?,
        state_at: stored::get(r, 8)?,
        last_seq: r.get(9)?,
        first_seq: r.get(10)?,
        // A word this Sextant does not know (a newer one wrote it) reads as not recorded: the
        // column is a cache of what the events say, and the state still says the task ended.
        outcome: r
            .get::<_, Option<String>>(11)?
            .and_then(|o| TaskOutcome::parse(&o)),
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
        t.task_id.as_str(),
        t.session_id.as_str(),
        t.caller.as_str(),
        t.agent_id.as_str(),
        t.context_id.as_str(),
        t.message_id,
        Sql(t.created_at),
        Sql(t.state.clone()),
        Sql(t.state_at),
        t.last_seq,
        t.first_seq,
        t.outcome.map(TaskOutcome::as_str)
    ])?;
    Ok(())
}

/// The statements behind [`touch`]: the writer runs one per task and batch.
pub(crate) const TOUCH_STATE: &str =
    "UPDATE tasks SET state = ?2, state_at = ?3, last_seq = ?4, outcome = ?5 WHERE task_id = ?1";
pub(crate) const TOUCH: &str = "UPDATE tasks SET last_seq = ?2 WHERE task_id = ?1";

/// Updates the cache after an event of the task was appended (`outcome`: see [`outcome`],
/// for a state that ends the task).
pub fn touch(
    c: &Connection,
    task_id: &str,
    seq: i64,
    new_state: Option<(&TaskState, DateTime<Utc>, Option<TaskOutcome>)>,
) -> Result<()> {
    match new_state {
        Some((state, at, outcome)) => c.prepare_cached(TOUCH_STATE)?.execute(params![
            task_id,
            state_wire(state),
            Sql(at),
            seq,
            outcome.map(TaskOutcome::as_str)
        ])?,
        None => c.prepare_cached(TOUCH)?.execute(params![task_id, seq])?,
    };
    Ok(())
}

/// What a task's last answer or output was, as far as its outcome cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LastAct {
    /// An interaction was answered with this option (`expired`: by its default, at expiry).
    Answer { option: String, expired: bool },
    /// The agent produced output (an artifact or a reply) after any answer.
    Output,
}

impl LastAct {
    /// The act an event is, if it is one.
    pub fn of(body: &EventBody) -> Option<Self> {
        match body {
            EventBody::InteractionAnswered { answer } => Some(LastAct::Answer {
                option: answer.option.clone(),
                expired: answer.expired,
            }),
            EventBody::Artifact { .. } | EventBody::Reply { .. } => Some(LastAct::Output),
            _ => None,
        }
    }
}

/// What happened to a task that ended in `state`, from the journal: `canceled` and `rejected`
/// as the state says; a task that ended right after an answer (nothing produced since) ended
/// on that answer: `declined` for the `decline` option, `canceled` for `cancel` (the option ids
/// every Sextant approval declares, after Codex's), and `expired` when nobody answered and the
/// default applied. Otherwise `completed` or `failed`. `None` while the task runs.
pub fn outcome(state: &TaskState, last: Option<&LastAct>) -> Option<TaskOutcome> {
    let by_state = match state {
        TaskState::Completed => TaskOutcome::Completed,
        TaskState::Failed => TaskOutcome::Failed,
        TaskState::Canceled => return Some(TaskOutcome::Canceled),
        TaskState::Rejected => return Some(TaskOutcome::Rejected),
        _ => return None,
    };
    Some(match last {
        Some(LastAct::Answer { expired: true, .. }) => TaskOutcome::Expired,
        Some(LastAct::Answer { option, .. }) if option == "cancel" => TaskOutcome::Canceled,
        Some(LastAct::Answer { option, .. }) if option == "decline" => TaskOutcome::Declined,
        _ => by_state,
    })
}

/// Whether [`outcome`] looks at the task's last act for a task in `state`: only for the two
/// ends an answer can reword (`completed`, `failed`). For every other state (canceled and
/// rejected say themselves; a running task has no outcome) the act changes nothing, so the
/// writer need not read it.
pub fn outcome_reads_last_act(state: &TaskState) -> bool {
    matches!(state, TaskState::Completed | TaskState::Failed)
}

/// The task's last answer or output, read from its Session (for the writer, when it ends).
pub fn last_act(
    c: &Connection,
    session_id: &str,
    task_id: &str,
    first_seq: i64,
) -> Result<Option<LastAct>> {
    let body: Option<String> = c
        .prepare_cached(
            "SELECT body FROM events
             WHERE session_id = ?1 AND seq >= ?3 AND task_id = ?2
               AND kind IN ('interaction_answered', 'artifact', 'reply')
             ORDER BY seq DESC LIMIT 1",
        )?
        .query_row(params![session_id, task_id, first_seq], |r| r.get(0))
        .optional()?;
    let Some(body) = body else { return Ok(None) };
    let body: EventBody =
        serde_json::from_str(&body).map_err(|e| Error::Corrupt(format!("event body: {e}")))?;
    Ok(LastAct::of(&body))
}

/// What to list.
#[derive(Debug, Clone, Default)]
pub struct TaskFilter {
    /// Only this caller's tasks (`None`: every caller's, for the console owner).
    pub caller: Option<String>,
    /// One Agent.
    pub agent_id: Option<String>,
    /// Every Agent whose id starts with this (`peer:`: the outbound conversations with every
    /// peer), its characters taken literally.
    pub agent_prefix: Option<String>,
    pub context_id: Option<String>,
    pub state: Option<TaskState>,
    /// Where the task is in words (see [`TaskStatus`]).
    pub status: Option<TaskStatus>,
    /// Only the tasks of this schedule's Runs.
    pub schedule_id: Option<String>,
    /// Only the tasks of Sessions of this provenance (the person's, other agents', schedules').
    pub from: Option<super::sessions::Provenance>,
    /// Only tasks created at or after / before these times (to the millisecond, as stored).
    pub created_at_or_after: Option<DateTime<Utc>>,
    pub created_before: Option<DateTime<Utc>>,
    /// Only tasks whose text matches this FTS5 query (see `queries::search::fts_query`).
    pub text: Option<String>,
    /// Only tasks whose state changed at or after this time (to the millisecond, as stored).
    pub state_at_or_after: Option<DateTime<Utc>>,
    /// (state_at, task_id) of the last row of the previous page.
    pub cursor: Option<(String, String)>,
    pub limit: u32,
}

/// Where a task is, in the console's words: still going, waiting for a person, or how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskStatus {
    /// Not ended (submitted, working or waiting).
    Unfinished,
    /// Submitted or working.
    Active,
    /// Waiting for input or an approval.
    Waiting,
    /// Ended with this outcome.
    Ended(TaskOutcome),
}

impl TaskStatus {
    /// Parses `unfinished`, `active`, `waiting` or an outcome word.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "unfinished" => Some(TaskStatus::Unfinished),
            "active" => Some(TaskStatus::Active),
            "waiting" => Some(TaskStatus::Waiting),
            _ => TaskOutcome::parse(s).map(TaskStatus::Ended),
        }
    }
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

/// `LIKE` pattern of a prefix (its `%`, `_` and `\` taken literally, with `ESCAPE '\'`).
fn like_prefix(prefix: &str) -> String {
    let mut p = String::with_capacity(prefix.len() + 1);
    for ch in prefix.chars() {
        if matches!(ch, '%' | '_' | '\\') {
            p.push('\\');
        }
        p.push(ch);
    }
    p.push('%');
    p
}

/// The WHERE clause of a filter (without pagination) and its parameters.
pub(crate) fn filter_sql(f: &TaskFilter) -> (String, Vec<rusqlite::types::Value>) {
    use rusqlite::types::Value as V;
    let (mut w, mut p) = tally_terms(f);
    let mut bind = |w: &mut Vec<String>, sql: &str, v: String| {
        p.push(V::Text(v));
        w.push(sql.replace('?', &format!("?{}", p.len())));
    };
    if let Some(a) = &f.agent_prefix {
        bind(&mut w, "agent_id LIKE ? ESCAPE '\\'", like_prefix(a));
    }
    if let Some(v) = &f.context_id {
        bind(&mut w, "context_id = ?", v.clone());
    }
    if let Some(TaskStatus::Ended(o)) = &f.status {
        bind(&mut w, "outcome = ?", o.as_str().to_string());
    }
    if let Some(v) = &f.schedule_id {
        bind(
            &mut w,
            "session_id IN (SELECT session_id FROM runs WHERE schedule_id = ? \
             AND session_id IS NOT NULL)",
            v.clone(),
        );
    }
    if let Some(p) = f.from {
        w.push(format!(
            "session_id IN (SELECT session_id FROM sessions WHERE {})",
            p.sql()
        ));
    }
    if let Some(v) = f.created_at_or_after {
        bind(&mut w, "created_at >= ?", format_time(v));
    }
    if let Some(v) = f.created_before {
        bind(&mut w, "created_at < ?", format_time(v));
    }
    if let Some(v) = &f.text {
        bind(
            &mut w,
            "task_id IN (SELECT task_id FROM task_text WHERE task_text MATCH ?)",
            v.clone(),
        );
    }
    if let Some(v) = f.state_at_or_after {
        bind(&mut w, "state_at >= ?", format_time(v));
    }
    if live_only(f) && f.status != Some(TaskStatus::Unfinished) {
        // Implied by the state already, but SQLite reads the partial index `tasks_live` only
        // for a query whose WHERE has the index's own terms (see [`from`]).
        w.push(format!("({})", live_task!()));
    }
    (w.join(" AND "), p)
}

/// Whether a filter keeps to unfinished tasks (by its status, or a state that is not one of
/// the four terminal ones).
fn live_only(f: &TaskFilter) -> bool {
    matches!(
        f.status,
        Some(TaskStatus::Unfinished | TaskStatus::Active | TaskStatus::Waiting)
    ) || f.state.as_ref().is_some_and(|s| !is_terminal(s))
}

/// Whether a filter keeps to ended tasks (by its status, or one of the four terminal states).
fn ended_only(f: &TaskFilter) -> bool {
    matches!(f.status, Some(TaskStatus::Ended(_))) || (f.state.is_some() && !live_only(f))
}

/// What a count over tasks reads from. Unfinished tasks are a few among many, all in the
/// partial index `tasks_live`, which SQLite would otherwise pass over for an index in the
/// list's order, walked from the newest task to the oldest to find the few not done.
fn from(f: &TaskFilter) -> &'static str {
    if live_only(f) {
        "tasks INDEXED BY tasks_live"
    } else {
        "tasks"
    }
}

/// The terms of a filter on caller, Agent and state only: columns `task_tally` has too, so
/// the same SQL selects the tasks or their tally rows.
fn tally_terms(f: &TaskFilter) -> (Vec<String>, Vec<rusqlite::types::Value>) {
    use rusqlite::types::Value as V;
    let mut w: Vec<String> = vec!["1".into()];
    let mut p: Vec<V> = Vec::new();
    let mut bind = |w: &mut Vec<String>, sql: &str, v: String| {
        p.push(V::Text(v));
        w.push(sql.replace('?', &format!("?{}", p.len())));
    };
    if let Some(v) = &f.caller {
        bind(&mut w, "caller = ?", v.clone());
    }
    if let Some(a) = &f.agent_id {
        bind(&mut w, "agent_id = ?", a.clone());
    }
    if let Some(v) = &f.state {
        bind(&mut w, "state = ?", state_wire(v));
    }
    match &f.status {
        Some(TaskStatus::Unfinished) => w.push(format!("({})", live_task!())),
        Some(TaskStatus::Active) => {
            w.push("state IN ('TASK_STATE_SUBMITTED', 'TASK_STATE_WORKING')".into())
        }
        Some(TaskStatus::Waiting) => {
            w.push("state IN ('TASK_STATE_INPUT_REQUIRED', 'TASK_STATE_AUTH_REQUIRED')".into())
        }
        Some(TaskStatus::Ended(_)) | None => {}
    }
    (w, p)
}

/// Whether a filter is on caller, Agent and state only, so `task_tally` can count it.
pub(crate) fn tally_counts(f: &TaskFilter) -> bool {
    f.agent_prefix.is_none()
        && f.context_id.is_none()
        && !matches!(f.status, Some(TaskStatus::Ended(_)))
        && f.schedule_id.is_none()
        && f.from.is_none()
        && f.created_at_or_after.is_none()
        && f.created_before.is_none()
        && f.text.is_none()
        && f.state_at_or_after.is_none()
}

/// How many tasks match a filter: summed from `task_tally` (a few rows, whatever the history)
/// when the filter allows, else counted.
pub(crate) fn count(c: &Connection, f: &TaskFilter) -> Result<u64> {
    let (sql, params) = if tally_counts(f) {
        let (w, p) = tally_terms(f);
        (
            format!(
                "SELECT COALESCE(SUM(n), 0) FROM task_tally WHERE {}",
                w.join(" AND ")
            ),
            p,
        )
    } else {
        let (w, p) = filter_sql(f);
        (format!("SELECT COUNT(*) FROM {} WHERE {w}", from(f)), p)
    };
    let n: i64 = c
        .prepare_cached(&sql)?
        .query_row(rusqlite::params_from_iter(params), |r| r.get(0))?;
    Ok(n.max(0) as u64)
}

/// The statement of one page of [`list`]: a row more than the page, to know if another follows.
///
/// A caller's lists read the caller's indexes, as SQLite chooses. Lists of every caller's
/// tasks (the console's) read the two partial indexes that split the tasks in two: the
/// unfinished ones from `tasks_live` (a few, sorted), the ended ones newest first down
/// `tasks_ended`, stopping after the page; a list of both merges the two pages. Without this
/// such a page read every task and sorted them all (see the migration `tasks_ended`).
pub(crate) fn page_sql(f: &TaskFilter) -> (String, Vec<rusqlite::types::Value>) {
    use rusqlite::types::Value as V;
    let (mut page_where, mut params) = filter_sql(f);
    if let Some((at, id)) = &f.cursor {
        let n = params.len();
        page_where.push_str(&format!(
            " AND (state_at < ?{a} OR (state_at = ?{a} AND task_id < ?{b}))",
            a = n + 1,
            b = n + 2
        ));
        params.push(V::Text(at.clone()));
        params.push(V::Text(id.clone()));
    }
    params.push(V::Integer(i64::from(f.limit.max(1)) + 1));
    let order = format!(
        "ORDER BY state_at DESC, task_id DESC LIMIT ?{}",
        params.len()
    );
    let ended = || {
        format!(
            "SELECT {COLUMNS} FROM tasks INDEXED BY tasks_ended WHERE {page_where} AND ({}) {order}",
            ended_task!()
        )
    };
    let sql = if live_only(f) {
        // Its WHERE has the live terms already ([`filter_sql`]).
        format!(
            "SELECT {COLUMNS} FROM {} WHERE {page_where} {order}",
            from(f)
        )
    } else if f.caller.is_some() {
        format!("SELECT {COLUMNS} FROM tasks WHERE {page_where} {order}")
    } else if ended_only(f) {
        ended()
    } else {
        format!(
            "SELECT * FROM (SELECT {COLUMNS} FROM tasks INDEXED BY tasks_live WHERE {page_where} \
             AND ({}) {order}) UNION ALL SELECT * FROM ({}) {order}",
            live_task!(),
            ended()
        )
    };
    (sql, params)
}

/// Lists tasks.
pub fn list(c: &Connection, f: &TaskFilter) -> Result<TaskPage> {
    let limit = f.limit.max(1);
    let (sql, params) = page_sql(f);
    let mut tasks = c
        .prepare_cached(&sql)?
        .query_map(rusqlite::params_from_iter(params), row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let next = if tasks.len() > limit as usize {
        tasks.truncate(limit as usize);
        tasks
            .last()
            .map(|t| (format_time(t.state_at), t.task_id.to_string()))
    } else {
        None
    };
    Ok(TaskPage {
        tasks,
        total: count(c, f)?,
        next,
    })
}

/// How many tasks are unfinished, by state, across every caller (read from the `tasks_live`
/// index, so it costs what is in progress, not the journal's size).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TaskCounts {
    pub submitted: u64,
    pub working: u64,
    pub input_required: u64,
    pub auth_required: u64,
}

/// Counts tasks (see [`TaskCounts`]).
pub fn counts(c: &Connection) -> Result<TaskCounts> {
    let mut out = TaskCounts::default();
    let mut st = c.prepare_cached(concat!(
        "SELECT state, COUNT(*) FROM tasks WHERE ",
        live_task!(),
        " GROUP BY state"
    ))?;
    let rows = st.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?;
    for r in rows {
        let (state, n) = r?;
        let n = n as u64;
        match state.as_str() {
            "TASK_STATE_SUBMITTED" => out.submitted += n,
            "TASK_STATE_WORKING" => out.working += n,
            "TASK_STATE_INPUT_REQUIRED" => out.input_required += n,
            "TASK_STATE_AUTH_REQUIRED" => out.auth_required += n,
            // An unknown state still counts as in progress.
            _ => out.working += n,
        }
    }
    Ok(out)
}

/// The statement behind [`unfinished`]; its WHERE is the `tasks_live` index's condition.
pub(crate) const UNFINISHED: &str = concat!(
    "SELECT ",
    columns!(),
    " FROM tasks WHERE ",
    live_task!(),
    " ORDER BY created_at, task_id"
);

/// The Sessions of tasks not yet in a terminal state (retention keeps them); its WHERE is the
/// `tasks_live` index's condition.
pub(crate) const LIVE_SESSIONS: &str = concat!("SELECT session_id FROM tasks WHERE ", live_task!());

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
pub fn rebuild_check(c: &Connection) -> Result<Vec<TaskId>> {
    // One read transaction, so one snapshot: the tasks and then each task's events are read in
    // separate statements, and on a live journal a commit between them made a task's events
    // newer than its row read a moment before, which this reported as a difference.
    let tx = c.unchecked_transaction()?;
    let c: &Connection = &tx;
    let rows = c
        .prepare(&format!("SELECT {COLUMNS} FROM tasks ORDER BY task_id"))?
        .query_map([], row)?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let mut differing = Vec::new();
    for t in rows {
        let evs = events::in_session_for_task(c, &t.session_id, &t.task_id)?;
        let fold = TaskFold::from_events(&t.task_id, &t.context_id, &t.session_id, &evs);
        // Compared as stored: the row's time went through the stored text format.
        let at = fold.status_at.map(format_time);
        let last = evs.iter().rev().find_map(|e| LastAct::of(&e.body));
        let outcome = outcome(&fold.state, last.as_ref());
        if fold.state != t.state
            || at.as_deref() != Some(format_time(t.state_at).as_str())
            || fold.last_seq != t.last_seq
            || outcome != t.outcome
        {
            differing.push(t.task_id);
        }
    }
    Ok(differing)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every state whose outcome does not read the last act has the same outcome whatever
    /// that act was: what lets the writer skip the read.
    #[test]
    fn only_the_states_that_read_the_last_act_depend_on_it() {
        let acts = [
            None,
            Some(LastAct::Output),
            Some(LastAct::Answer {
                option: "decline".into(),
                expired: false,
            }),
            Some(LastAct::Answer {
                option: "cancel".into(),
                expired: false,
            }),
            Some(LastAct::Answer {
                option: "accept".into(),
                expired: true,
            }),
        ];
        let states = [
            TaskState::Unspecified,
            TaskState::Submitted,
            TaskState::Working,
            TaskState::InputRequired,
            TaskState::AuthRequired,
            TaskState::Completed,
            TaskState::Failed,
            TaskState::Canceled,
            TaskState::Rejected,
        ];
        for state in &states {
            let outcomes: Vec<_> = acts.iter().map(|a| outcome(state, a.as_ref())).collect();
            let varies = outcomes.iter().any(|o| *o != outcomes[0]);
            assert_eq!(
                outcome_reads_last_act(state),
                varies,
                "{state:?}: {outcomes:?}"
            );
        }
    }
}
