//! The journal as JSON lines a person can read or load elsewhere ([`write()`]), and the type
//! every line parses back into ([`Line`]).
//!
//! One JSON object per line, each with a `type`:
//!
//! | `type` | what | fields |
//! |---|---|---|
//! | `header` | first line | `format` (`"sextant-export"`), `version` (1), `schema_version`, `exported_at` |
//! | `session` | a Session | [`SessionRow`]'s fields |
//! | `task` | a Task and its cached state | [`TaskRow`]'s fields and `content_hash` ([`TaskLine`]) |
//! | `event` | one journal event: the transcripts | `session_id`, `seq`, `task_id`, `at`, `body` (the event, itself tagged by its own `type`) |
//! | `schedule` | a personal schedule | [`ScheduleRow`]'s fields |
//! | `run` | a Run of a schedule | [`RunRow`]'s fields |
//! | `audit` | an audit record (written by the caller, from the audit log) | the record's own fields |
//! | `end` | last line: the export is complete | `counts` (lines per type) |
//!
//! In that order: all Sessions, then all tasks, then all events (by Session, in `seq` order),
//! schedules, Runs. Everything the journal part holds is read in one read transaction, so it is
//! one consistent moment of the journal, and row by row: nothing is collected in memory, and
//! an export of a million tasks costs the memory of one row. A file without its `end` line was
//! cut short.

use std::collections::BTreeMap;
use std::io::Write;

use chrono::{DateTime, Utc};
use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sextant_core::JournalEvent;

use crate::error::{Error, Result};
use crate::queries::{events, runs, schedules, sessions, tasks};
use crate::{RunRow, ScheduleRow, SessionRow, TaskRow};

/// The `format` of the header line.
pub const FORMAT: &str = "sextant-export";
/// The `version` of the header line; bumped when a line's meaning changes.
pub const VERSION: u32 = 1;

/// The first line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub format: String,
    pub version: u32,
    /// The journal's schema version (`PRAGMA user_version`).
    pub schema_version: i64,
    pub exported_at: DateTime<Utc>,
}

/// The last line.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct End {
    /// How many lines of each `type` came before (the header not counted).
    pub counts: BTreeMap<String, u64>,
}

/// A `task` line: the task's row, and the content hash of the input that created it, which the
/// journal keeps with its inputs (`inputs`), not in the task's row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskLine {
    #[serde(flatten)]
    pub task: TaskRow,
    /// `None` only if the input's row is gone, which no journal this Sextant writes has.
    #[serde(default)]
    pub content_hash: Option<String>,
}

/// One line of an export.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Line {
    Header(Header),
    Session(SessionRow),
    Task(TaskLine),
    Event(JournalEvent),
    Schedule(ScheduleRow),
    Run(RunRow),
    /// An audit record as the audit log holds it (its fields are the audit log's).
    Audit(Map<String, Value>),
    End(End),
}

impl Line {
    /// The line's `type`.
    pub fn kind(&self) -> &'static str {
        match self {
            Line::Header(_) => "header",
            Line::Session(_) => "session",
            Line::Task(_) => "task",
            Line::Event(_) => "event",
            Line::Schedule(_) => "schedule",
            Line::Run(_) => "run",
            Line::Audit(_) => "audit",
            Line::End(_) => "end",
        }
    }
}

/// Writes lines and counts them: [`write()`] for the journal's part, then whatever the caller
/// adds (audit records), then [`Writer::finish`] for the `end` line.
pub struct Writer<W: Write> {
    out: W,
    counts: BTreeMap<String, u64>,
}

impl<W: Write> Writer<W> {
    /// Writes the header line.
    pub fn new(mut out: W, schema_version: i64, now: DateTime<Utc>) -> Result<Self> {
        put(
            &mut out,
            &Line::Header(Header {
                format: FORMAT.into(),
                version: VERSION,
                schema_version,
                exported_at: now,
            }),
        )?;
        Ok(Self {
            out,
            counts: BTreeMap::new(),
        })
    }

    /// Writes one line.
    pub fn line(&mut self, line: &Line) -> Result<()> {
        put(&mut self.out, line)?;
        *self.counts.entry(line.kind().to_string()).or_default() += 1;
        Ok(())
    }

    /// Writes the `end` line and hands back the sink (flushed).
    pub fn finish(mut self) -> Result<(W, End)> {
        let end = End {
            counts: self.counts,
        };
        put(&mut self.out, &Line::End(end.clone()))?;
        self.out.flush().map_err(io)?;
        Ok((self.out, end))
    }
}

fn io(e: std::io::Error) -> Error {
    Error::File(format!("cannot write the export: {e}"))
}

pub(crate) fn put(out: &mut impl Write, line: &Line) -> Result<()> {
    serde_json::to_writer(&mut *out, line)
        .map_err(|e| Error::File(format!("cannot write the export: {e}")))?;
    out.write_all(b"\n").map_err(io)
}

/// The schema version of the journal behind `c`.
pub fn schema_version(c: &Connection) -> Result<i64> {
    Ok(c.pragma_query_value(None, "user_version", |r| r.get(0))?)
}

/// The `task` lines' query: each task with the content hash of its creating input, the one at
/// the task's first seq. `inputs` has no index by task (nothing else reads it by task), and a
/// lookup per task by caller and Agent would walk all of their inputs for every task; for this
/// join SQLite builds a transient index of its own (an automatic index), once per export.
pub(crate) fn tasks_sql() -> String {
    format!(
        "SELECT {}, input_hash FROM tasks LEFT JOIN
           (SELECT task_id AS input_task, seq AS input_seq, content_hash AS input_hash FROM inputs)
           ON input_task = task_id AND input_seq = first_seq",
        tasks::COLUMNS
    )
}

/// Writes every Session, task, event, schedule and Run of the journal behind `c`, in one
/// read transaction, one row at a time. Blocking.
pub fn write<W: Write>(c: &Connection, w: &mut Writer<W>) -> Result<()> {
    // A deferred transaction: its first SELECT fixes the snapshot every later one reads.
    let tx = c.unchecked_transaction()?;
    rows(
        &tx,
        &format!(
            "SELECT {} FROM sessions ORDER BY created_at, session_id",
            sessions::COLUMNS
        ),
        |r| Ok(Line::Session(sessions::row(r)?)),
        w,
    )?;
    rows(
        &tx,
        &format!("{} ORDER BY created_at, task_id", tasks_sql()),
        |r| {
            Ok(Line::Task(TaskLine {
                task: tasks::row(r)?,
                content_hash: r.get(tasks::COLUMN_COUNT)?,
            }))
        },
        w,
    )?;
    {
        // Each Session's contextId is looked up once, for all its events (see `events::row`).
        let mut stmt = tx.prepare(
            "SELECT e.session_id, e.seq, e.task_id, e.at, e.body, s.context_id
             FROM sessions s JOIN events e ON e.session_id = s.session_id
             ORDER BY s.session_id, e.seq",
        )?;
        let mut it = stmt.query([])?;
        while let Some(r) = it.next()? {
            let ev = events::decode(events::row(r)?)?;
            w.line(&Line::Event(ev))?;
        }
    }
    rows(
        &tx,
        &format!(
            "SELECT {} FROM schedules ORDER BY created_at, schedule_id",
            schedules::COLUMNS
        ),
        |r| Ok(Line::Schedule(schedules::row(r)?)),
        w,
    )?;
    rows(
        &tx,
        &format!("{} ORDER BY r.created_at, r.run_id", runs::SELECT),
        |r| Ok(Line::Run(runs::row(r)?)),
        w,
    )?;
    tx.finish()?;
    Ok(())
}

fn rows<W: Write>(
    c: &Connection,
    sql: &str,
    line: impl Fn(&rusqlite::Row<'_>) -> rusqlite::Result<Line>,
    w: &mut Writer<W>,
) -> Result<()> {
    let mut stmt = c.prepare(sql)?;
    let mut it = stmt.query([])?;
    while let Some(r) = it.next()? {
        w.line(&line(r)?)?;
    }
    Ok(())
}

/// Opens the journal file at `path` for reading (it may be in use by a running Sextant: WAL
/// lets this read beside it) and checks it has this binary's schema. Blocking.
pub fn open_for_export(path: &std::path::Path) -> Result<Connection> {
    if !path.exists() {
        return Err(Error::NotFound);
    }
    let c = crate::open_connection(path)?;
    let version = schema_version(&c)?;
    let known = crate::migrate::MIGRATIONS.len() as i64;
    if version > known {
        return Err(Error::TooNew {
            found: version as usize,
            known: known as usize,
        });
    }
    if version < known {
        return Err(Error::TooOld {
            found: version as usize,
            known: known as usize,
        });
    }
    Ok(c)
}
