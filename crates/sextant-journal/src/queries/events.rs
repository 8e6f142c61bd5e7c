//! `events`: the append-only journal.

use rusqlite::{Connection, Row, params};
use sextant_core::ids::{format_time, parse_time};
use sextant_core::{EventBody, JournalEvent};

use crate::error::{Error, Result};

/// Appends one event row (the caller has taken `ev.seq` from the Session). `context_id` is the
/// Session's contextId where the caller has it at hand (admission), else `None`.
pub fn insert(c: &Connection, ev: &JournalEvent, context_id: Option<&str>) -> Result<()> {
    let body = encode(ev, context_id)?;
    c.prepare_cached(
        "INSERT INTO events (session_id, seq, task_id, at, kind, body)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        ev.session_id,
        ev.seq,
        ev.task_id,
        format_time(ev.at),
        ev.body.kind(),
        body
    ])?;
    Ok(())
}

/// An event's stored body: its JSON, except that an input's message (`task_created`,
/// `input_accepted`) leaves out the `taskId` and `contextId` the journal filled in when it
/// admitted the input. The row's `task_id` and its Session's `context_id` hold the same ids,
/// and [`decode`] puts them back, so each is stored once (about 100 of a `task_created`
/// body's 200 bytes). An id that differs from the row's, or a contextId the caller did not
/// pass, stays in the body.
fn encode(ev: &JournalEvent, context_id: Option<&str>) -> Result<String> {
    let json =
        |body: &EventBody| serde_json::to_string(body).map_err(|e| Error::Corrupt(e.to_string()));
    let (EventBody::TaskCreated { message } | EventBody::InputAccepted { message }) = &ev.body
    else {
        return json(&ev.body);
    };
    let same_task =
        message.task_id.is_some() && message.task_id.as_deref() == ev.task_id.as_deref();
    let same_context = message.context_id.is_some() && message.context_id.as_deref() == context_id;
    if !same_task && !same_context {
        return json(&ev.body);
    }
    let mut message = message.clone();
    if same_task {
        message.task_id = None;
    }
    if same_context {
        message.context_id = None;
    }
    json(&match ev.body {
        EventBody::TaskCreated { .. } => EventBody::TaskCreated { message },
        _ => EventBody::InputAccepted { message },
    })
}

/// An event row as the readers select it: `session_id, seq, task_id, at, body`, then the
/// Session's `context_id` (which [`decode`] gives back to an input's message).
pub(crate) type EventRow = (String, i64, Option<String>, String, String, Option<String>);

pub(crate) fn row(r: &Row<'_>) -> rusqlite::Result<EventRow> {
    Ok((
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
        r.get(5)?,
    ))
}

/// An event from its row. An input's message stored without its `taskId` or `contextId` (see
/// [`encode`]) gets them back from the row and its Session; one stored with them (journals
/// written before that) is read as it is, so both read the same. (Admission, which writes
/// every input, fills both ids in, so a message read back always has them.)
pub(crate) fn decode(
    (session_id, seq, task_id, at, body, context_id): EventRow,
) -> Result<JournalEvent> {
    let mut body: EventBody = serde_json::from_str(&body)
        .map_err(|e| Error::Corrupt(format!("event {session_id}/{seq}: {e}")))?;
    if let EventBody::TaskCreated { message } | EventBody::InputAccepted { message } = &mut body {
        if message.task_id.is_none() {
            message.task_id.clone_from(&task_id);
        }
        if message.context_id.is_none() {
            message.context_id = context_id;
        }
    }
    let at = parse_time(&at)
        .ok_or_else(|| Error::Corrupt(format!("event {session_id}/{seq}: bad time {at}")))?;
    Ok(JournalEvent {
        session_id,
        seq,
        task_id,
        at,
        body,
    })
}

/// The statement behind [`for_task`]: a range of the task's Session, read in the same snapshot
/// as the task row that bounds it. The task row also gives the contextId [`decode`] needs.
pub(crate) const FOR_TASK: &str =
    "SELECT e.session_id, e.seq, e.task_id, e.at, e.body, t.context_id
         FROM tasks t JOIN events e ON e.session_id = t.session_id
         WHERE t.task_id = ?1 AND e.seq BETWEEN max(t.first_seq, ?2 + 1) AND t.last_seq
           AND e.task_id = ?1
         ORDER BY e.seq";

/// A task's events after `after_seq` (none for an unknown task).
pub fn for_task(c: &Connection, task_id: &str, after_seq: i64) -> Result<Vec<JournalEvent>> {
    c.prepare_cached(FOR_TASK)?
        .query_map(params![task_id, after_seq], row)?
        .map(|r| decode(r?))
        .collect()
}

/// The Session's contextId, for a statement whose `?1` is the Session: a subquery that names
/// nothing of the outer row, so SQLite runs it once per statement, not once per event.
macro_rules! context {
    () => {
        "(SELECT context_id FROM sessions WHERE session_id = ?1)"
    };
}

/// A task's events found by scanning its whole Session, trusting no cached column: for
/// [`crate::queries::tasks::rebuild_check`].
pub fn in_session_for_task(
    c: &Connection,
    session_id: &str,
    task_id: &str,
) -> Result<Vec<JournalEvent>> {
    c.prepare_cached(concat!(
        "SELECT session_id, seq, task_id, at, body, ",
        context!(),
        " FROM events WHERE session_id = ?1 AND task_id = ?2 ORDER BY seq"
    ))?
    .query_map(params![session_id, task_id], row)?
    .map(|r| decode(r?))
    .collect()
}

/// A Session's events after `after_seq`, at most `limit`.
pub fn for_session(
    c: &Connection,
    session_id: &str,
    after_seq: i64,
    limit: u32,
) -> Result<Vec<JournalEvent>> {
    c.prepare_cached(concat!(
        "SELECT session_id, seq, task_id, at, body, ",
        context!(),
        " FROM events WHERE session_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3"
    ))?
    .query_map(params![session_id, after_seq, limit], row)?
    .map(|r| decode(r?))
    .collect()
}
