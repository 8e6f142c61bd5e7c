//! A consistent copy of a live journal ([`snapshot`]) and the check a copy must pass before it
//! replaces anything ([`check`]).
//!
//! The copy uses SQLite's online backup API on a connection of its own, never the writer's:
//! the writer goes on committing while the copy is taken. It copies every page in **one**
//! `sqlite3_backup_step(-1)`, which reads the whole database inside one read transaction. Two
//! things follow:
//!
//! - the copy is the journal exactly as it was when that read began: every commit before it
//!   (every input answered "accepted" by then) is in it, nothing after it is;
//! - the copy always finishes. Stepping a few pages at a time (what `Connection::backup` does)
//!   starts again from the first page whenever another connection commits, so under steady
//!   load it would never end.
//!
//! In WAL mode that read transaction blocks no writer; it only keeps the writer's (passive)
//! checkpoints from going past the copy's snapshot until the copy is done, so the WAL grows by
//! what is committed meanwhile and is checkpointed afterwards.

use std::path::Path;
use std::time::Duration;

use rusqlite::backup::{Backup, StepResult};
use rusqlite::{Connection, OpenFlags};

use crate::error::{Error, Result};
use crate::migrate::MIGRATIONS;

/// What a copy holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    /// `PRAGMA user_version`: how many migrations the copy has.
    pub schema_version: usize,
    pub sessions: u64,
    pub tasks: u64,
    pub events: u64,
}

/// Copies the journal at `src` into a new file at `dest` (which must not exist; it is created
/// 0600), as one consistent snapshot, and leaves `dest` a self-contained file (rollback journal mode, no
/// `-wal` beside it). Blocking: run it on a blocking thread.
pub fn snapshot(src: &Path, dest: &Path) -> Result<Checked> {
    if dest.exists() {
        return Err(Error::File(format!(
            "{} exists already; a snapshot is only written to a new file",
            dest.display()
        )));
    }
    let source = crate::open_connection(src)?;
    // Created 0600 first: it holds every transcript, like the journal.
    crate::make_private(dest)?;
    let mut copy = Connection::open(dest)?;
    {
        let backup = Backup::new(&source, &mut copy)?;
        // Busy/Locked only when another connection holds an exclusive lock (a VACUUM, a
        // rollback-mode writer); give it a moment, a bounded number of times.
        let mut waits = 0;
        loop {
            match backup.step(-1)? {
                StepResult::Done => break,
                StepResult::More => continue,
                StepResult::Busy | StepResult::Locked if waits < 50 => {
                    waits += 1;
                    std::thread::sleep(Duration::from_millis(100));
                }
                StepResult::Busy | StepResult::Locked => {
                    return Err(Error::Unavailable(
                        "the journal stayed locked for 5 s; no snapshot was taken".into(),
                    ));
                }
                _ => {
                    return Err(Error::Failed(
                        "the journal snapshot stopped on an unknown step result".into(),
                    ));
                }
            }
        }
    }
    // The pages say WAL (the source's mode); a backup file is one file.
    let mode: String = copy.query_row("PRAGMA journal_mode = DELETE", [], |r| r.get(0))?;
    if !mode.eq_ignore_ascii_case("delete") {
        return Err(Error::File(format!(
            "the snapshot stayed in journal mode {mode}"
        )));
    }
    drop(copy);
    check(dest)
}

/// Checks a journal file before it is trusted: `PRAGMA integrity_check` passes, it is a
/// Sextant journal (its tables are there) and not newer than this binary. Opens it read-only
/// and changes nothing. Blocking.
pub fn check(path: &Path) -> Result<Checked> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    let problems: Vec<String> = conn
        .prepare("PRAGMA integrity_check")?
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<_>>()?;
    if problems != ["ok"] {
        return Err(Error::Corrupt(format!(
            "{} fails PRAGMA integrity_check: {}",
            path.display(),
            problems.join("; ")
        )));
    }
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    let version = usize::try_from(version).unwrap_or(usize::MAX);
    if version > MIGRATIONS.len() {
        return Err(Error::TooNew {
            found: version,
            known: MIGRATIONS.len(),
        });
    }
    let count = |table: &str| -> Result<u64> {
        conn.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| {
            r.get::<_, i64>(0)
        })
        .map(|n| n.max(0) as u64)
        .map_err(|e| {
            Error::Corrupt(format!(
                "{} is not a Sextant journal (table {table}: {e})",
                path.display()
            ))
        })
    };
    Ok(Checked {
        schema_version: version,
        sessions: count("sessions")?,
        tasks: count("tasks")?,
        events: count("events")?,
    })
}
