//! SQL, one module per table. Row mapping lives next to its query; every function takes a
//! plain `&Connection` so the writer's transactions and the read pool share them.

/// The condition of the partial index `tasks_live`: the task has not ended. A query must repeat
/// it term for term for the planner to use the index, hence one macro that the `const`
/// statements `concat!`. Comparisons, not `NOT IN (...)`: SQLite evaluates an index condition
/// on every insert and update of a row, and a list of more than two values costs an ephemeral
/// table (its own pager and page cache, built and freed) each time.
macro_rules! live_task {
    () => {
        "state <> 'TASK_STATE_COMPLETED' AND state <> 'TASK_STATE_FAILED' \
         AND state <> 'TASK_STATE_CANCELED' AND state <> 'TASK_STATE_REJECTED'"
    };
}

/// The condition of the partial index `tasks_ended`: the task has ended (the complement of
/// [`live_task!`]). Repeated term for term by the queries that read that index.
macro_rules! ended_task {
    () => {
        "state = 'TASK_STATE_COMPLETED' OR state = 'TASK_STATE_FAILED' \
         OR state = 'TASK_STATE_CANCELED' OR state = 'TASK_STATE_REJECTED'"
    };
}

/// Collects a list read's rows, leaving out (and logging) each row whose stored values this
/// Sextant cannot read: a name a newer Sextant wrote, a hand-edited time. One such row must not
/// hide every other row of a list, nor stop the scheduler's other schedules; read alone, it
/// is still the clear error [`crate::stored`] gives. Any other error (the database's) fails
/// the read as before. `rows` yields each row's id beside the row as mapped; `what` names
/// the kind of row for the log ("schedule").
pub(crate) fn skip_unreadable<T>(
    what: &'static str,
    rows: impl Iterator<Item = rusqlite::Result<(String, rusqlite::Result<T>)>>,
) -> rusqlite::Result<Vec<T>> {
    let mut out = Vec::new();
    for r in rows {
        let (id, row) = r?;
        match row {
            Ok(v) => out.push(v),
            Err(
                e @ (rusqlite::Error::FromSqlConversionFailure(..)
                | rusqlite::Error::InvalidColumnType(..)
                | rusqlite::Error::IntegralValueOutOfRange(..)),
            ) => report_unreadable(what, &id, &e),
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// A keyset page of up to `limit` readable rows, newest first, that reads on past rows
/// [`skip_unreadable`] leaves out, so a page is short only at the end of the list. `read`
/// runs the page's query after `cursor` (`(time, id)` as stored; empty: from the start) for
/// `want` rows and yields each row's id, its stored cursor time (text, so the cursor moves on
/// past a row whose time does not parse) and the row as mapped.
pub(crate) fn page_skipping_unreadable<T>(
    what: &'static str,
    limit: u32,
    cursor: (String, String),
    mut read: impl FnMut(
        &(String, String),
        u32,
    ) -> rusqlite::Result<Vec<(String, String, rusqlite::Result<T>)>>,
) -> rusqlite::Result<Vec<T>> {
    let mut cursor = cursor;
    let mut rows = Vec::new();
    loop {
        let want = limit.saturating_sub(rows.len() as u32);
        let read = read(&cursor, want)?;
        let full = read.len() as u32 == want;
        if let Some((id, at, _)) = read.last() {
            cursor = (at.clone(), id.clone());
        }
        rows.extend(skip_unreadable(
            what,
            read.into_iter().map(|(id, _, r)| Ok((id, r))),
        )?);
        // Short only when a row was left out: read on from the last row read.
        if !full || want == 0 || rows.len() as u32 >= limit {
            return Ok(rows);
        }
    }
}

/// Logs a row left out of a list. A due schedule that cannot be read stays due, so the
/// scheduler meets it on every tick (about once a second): the first sighting of each row and
/// reason is a warning, the rest are debug lines. The set grows only with distinct bad rows.
pub(crate) fn report_unreadable(what: &'static str, id: &str, e: &rusqlite::Error) {
    static REPORTED: std::sync::Mutex<std::collections::BTreeSet<String>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    let first = REPORTED
        .lock()
        .map(|mut seen| seen.insert(format!("{what} {id}: {e}")))
        // A poisoned lock only loses the de-duplication.
        .unwrap_or(true);
    if first {
        tracing::warn!(id, why = %e, "journal: left a {what} out of a list: it holds a value \
            this Sextant cannot read (fix or delete the row)");
    } else {
        tracing::debug!(id, why = %e, "journal: left a {what} out of a list again");
    }
}

pub mod agents;
pub mod events;
pub mod grants;
pub mod inputs;
pub mod interactions;
pub mod peers;
pub mod processes;
pub mod push;
pub mod runs;
pub mod schedules;
pub mod search;
pub mod security;
pub mod sessions;
pub mod tasks;
