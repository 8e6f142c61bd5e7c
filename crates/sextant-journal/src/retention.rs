//! Retention (#17): deleting whole old Sessions so the journal stops growing for good.
//!
//! A [`Policy`] names what may go: Sessions whose last activity is older than `keep_days`,
//! and, with `keep_bytes`, the oldest Sessions until the journal's used pages are under the
//! size. Never deleted, whatever the policy says:
//!
//! - a Session with pending work: a task that has not ended, a decision (interaction) still
//!   waiting for its answer, or push deliveries still being retried;
//! - each schedule's latest started Run and its Session (the plan's last result stays
//!   visible; Runs that never started have no Session and are never deleted), and a Run whose
//!   end the scheduler has not recorded yet;
//! - a Session active within the last [`MIN_AGE_SECS`] (a caller that just got its answer may
//!   still read the task);
//! - everything that is not a Session: Agents, schedules, grants, credentials, peers and their
//!   counters, and the audit log (a separate file this module never touches).
//!
//! A Session goes whole: its events, tasks, inputs (so an old messageId is no longer
//! recognised as a retry), interactions, push configs and outbox rows, full-text rows and the
//! Runs that started it. `task_tally` and `session_tally` follow through their triggers.
//!
//! **How.** [`plan`] reads, on a reader connection and in one snapshot, which Sessions go and
//! everything a delete needs that no index finds (the full-text rows and input keys of their
//! tasks: one scan of each table per pass, not one per Session). The deletes then run in the
//! journal's writer in batches of [`BATCH`] Sessions ([`delete_batch`]), each alone in a
//! transaction of its own between two group commits, so the writer is never held for long.
//! Foreign keys are not enforced in that transaction (SQLite would scan the unindexed child
//! tables for every deleted Session and task; see `Job::Alone` in the writer): the deletes
//! remove every child before its parent by construction, and the tests check
//! `PRAGMA foreign_key_check` after them. A batch deletes a Session only if it is
//! exactly as planned (same last seq and last activity, no push delivery re-enabled since):
//! anything that happened to it meanwhile made it recent, and it stays.
//!
//! **The append-only guarantee.** `events` refuses every DELETE unless `retention_marker`
//! names the row's Session (migration `20261202170000_retention`). [`delete_batch`] inserts
//! the marker, deletes one Session's events and removes the marker again inside its transaction,
//! so no committed state ever holds a marker and any other DELETE is refused as before.
//!
//! **Export before delete.** With an export file, each batch writes its Sessions (the same
//! JSON lines as `sextant export`: `session`, `task`, `event` and `run` lines, Session by
//! Session) to the file and syncs it before it deletes anything; a write that fails fails the
//! batch, which then deletes nothing, and a batch that does not commit has its lines cut off
//! the file again. So the file holds exactly what was deleted.
//!
//! **Space.** Deleted rows' pages go to SQLite's free list and new writes reuse them, so the
//! file stops growing. Giving them back to the file system needs `auto_vacuum = INCREMENTAL`
//! ([`reclaim`] then shrinks the file a step at a time in the writer); a journal created
//! without it is converted once, by a full `VACUUM`, with [`convert_to_incremental`]
//! (`sextant retention --vacuum`, while Sextant is stopped: it rewrites the whole file).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Utc};
use rusqlite::{Connection, params};
use serde::Serialize;
use sextant_core::ids::format_time;

use crate::Journal;
use crate::error::{Error, Result};
use crate::export::{self, Line};
use crate::queries::{events, inputs, runs, sessions, tasks};

/// Sessions one writer job deletes at most: a few milliseconds of the writer for echo-sized
/// Sessions, so the commits of live work queue behind it only briefly.
pub const BATCH: usize = 64;

/// Sessions one [`plan`] names at most; a run plans again after deleting them.
pub const PLAN_LIMIT: usize = 5_000;

/// A Session active this recently is never deleted, whatever the policy.
pub const MIN_AGE_SECS: i64 = 3600;

/// Free pages one [`reclaim`] step gives back to the file system (4 MiB of 4 KiB pages).
const VACUUM_STEP: i64 = 1024;

/// What may be deleted. Both limits may be set; a Session goes if either says so.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Policy {
    /// Sessions whose last activity is more than this many days old go.
    pub keep_days: Option<u32>,
    /// The oldest Sessions go until the journal's used pages are under this many bytes
    /// (estimated from each Session's share of the events while planning).
    pub keep_bytes: Option<u64>,
}

impl Policy {
    /// Whether the policy deletes anything at all.
    pub fn enabled(&self) -> bool {
        self.keep_days.is_some() || self.keep_bytes.is_some()
    }
}

/// One Session a plan would delete.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Candidate {
    pub session_id: String,
    pub caller: String,
    pub agent_id: String,
    /// As planned: a batch deletes the Session only if these have not changed.
    pub last_seq: i64,
    pub updated_at: String,
    pub tasks: Vec<String>,
    /// Its estimated share of the journal's used bytes.
    pub est_bytes: u64,
    /// The full-text rows (rowid, task) of its tasks.
    #[serde(skip)]
    text_rows: Vec<(i64, String)>,
    /// The input keys of its tasks (under the Session's caller and Agent), with their task.
    #[serde(skip)]
    inputs: Vec<(String, String)>,
}

/// What a policy would delete now.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Plan {
    /// Oldest first.
    pub candidates: Vec<Candidate>,
    /// Sessions the policy names but that are kept: pending work, a schedule's latest Run, or
    /// active within [`MIN_AGE_SECS`].
    pub kept: u64,
    /// The journal's used bytes (pages not on the free list) when planned.
    pub used_bytes: u64,
    /// Whether the plan stopped at [`PLAN_LIMIT`] (more would go).
    pub truncated: bool,
}

impl Plan {
    /// Tasks the plan would delete.
    pub fn tasks(&self) -> usize {
        self.candidates.iter().map(|c| c.tasks.len()).sum()
    }

    /// The estimated bytes the plan would free.
    pub fn est_bytes(&self) -> u64 {
        self.candidates.iter().map(|c| c.est_bytes).sum()
    }
}

/// What a retention run did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Report {
    pub sessions: u64,
    pub tasks: u64,
    pub events: u64,
    /// Sessions planned but kept because they changed before their batch ran.
    pub changed: u64,
    /// Sessions the policy names but that are kept (see [`Plan::kept`]), at the last plan.
    pub kept: u64,
    /// The export file, when asked for and something was deleted.
    pub export: Option<PathBuf>,
    /// Used bytes before and after.
    pub used_before: u64,
    pub used_after: u64,
    /// What [`reclaim`] did after the deletes.
    pub reclaimed: Option<Reclaimed>,
}

/// What [`reclaim`] did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Reclaimed {
    /// `PRAGMA auto_vacuum`: 0 none, 1 full, 2 incremental.
    pub auto_vacuum: i64,
    /// Free pages given back to the file system.
    pub pages: u64,
    /// Free pages left on the free list (reused by later writes).
    pub free_pages: u64,
}

/// The bytes the journal's pages hold, free ones left out.
pub fn used_bytes(c: &Connection) -> Result<u64> {
    let pages: i64 = c.pragma_query_value(None, "page_count", |r| r.get(0))?;
    let free: i64 = c.pragma_query_value(None, "freelist_count", |r| r.get(0))?;
    let size: i64 = c.pragma_query_value(None, "page_size", |r| r.get(0))?;
    Ok(u64::try_from((pages - free).max(0) * size).unwrap_or(0))
}

/// Sessions that are never deleted now: pending work, a schedule's latest started Run, or a
/// Run the scheduler has not settled.
pub(crate) fn protected(c: &Connection) -> Result<HashSet<String>> {
    let mut out = HashSet::new();
    let sql = [
        tasks::LIVE_SESSIONS,
        crate::queries::interactions::PENDING_SESSIONS,
        "SELECT t.session_id FROM push_configs p JOIN tasks t ON t.task_id = p.task_id
         WHERE p.pending > 0 AND p.failing_at IS NULL",
        // A Run whose end the scheduler has not recorded yet (its failure count and notices
        // read the task): after a stop, it settles them at its next start.
        "SELECT session_id FROM runs
         WHERE settled_at IS NULL AND record IN ('started', 'failed', 'blocked')",
        "SELECT (SELECT r.session_id FROM runs r
                 WHERE r.schedule_id = s.schedule_id AND r.session_id IS NOT NULL
                 ORDER BY r.created_at DESC, r.run_id DESC LIMIT 1)
         FROM schedules s",
    ];
    for q in sql {
        let mut st = c.prepare(q)?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            if let Some(id) = r.get::<_, Option<String>>(0)? {
                out.insert(id);
            }
        }
    }
    Ok(out)
}

/// What `policy` deletes at `now`, oldest Session first, at most `limit` Sessions. Reads in
/// one snapshot; writes nothing.
pub fn plan(c: &Connection, policy: &Policy, now: DateTime<Utc>, limit: usize) -> Result<Plan> {
    let tx = c.unchecked_transaction()?;
    let used = used_bytes(&tx)?;
    let mut plan = Plan {
        used_bytes: used,
        ..Plan::default()
    };
    if !policy.enabled() {
        return Ok(plan);
    }
    let keep = protected(&tx)?;
    let cutoff = policy
        .keep_days
        .map(|d| format_time(now - chrono::Duration::days(i64::from(d))));
    let floor = format_time(now - chrono::Duration::seconds(MIN_AGE_SECS));
    let events: i64 = tx.query_row("SELECT COALESCE(SUM(last_seq), 0) FROM sessions", [], |r| {
        r.get(0)
    })?;
    let mut remaining = used;
    {
        let mut st = tx.prepare(
            "SELECT session_id, caller, agent_id, last_seq, updated_at FROM sessions
             ORDER BY updated_at, session_id",
        )?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            let updated_at: String = r.get(4)?;
            let old = cutoff.as_ref().is_some_and(|c| updated_at < *c);
            let over = policy.keep_bytes.is_some_and(|k| remaining > k);
            // Sessions come oldest first: once one is neither old nor over the size, no later
            // one is.
            if !old && !over {
                break;
            }
            let session_id: String = r.get(0)?;
            if updated_at >= floor || keep.contains(&session_id) {
                plan.kept += 1;
                continue;
            }
            if plan.candidates.len() >= limit {
                plan.truncated = true;
                break;
            }
            let last_seq: i64 = r.get(3)?;
            let est = if events > 0 {
                let share = u128::from(used) * (last_seq.max(0) as u128) / (events as u128);
                u64::try_from(share).unwrap_or(u64::MAX)
            } else {
                0
            };
            remaining = remaining.saturating_sub(est);
            plan.candidates.push(Candidate {
                session_id,
                caller: r.get(1)?,
                agent_id: r.get(2)?,
                last_seq,
                updated_at,
                tasks: Vec::new(),
                est_bytes: est,
                text_rows: Vec::new(),
                inputs: Vec::new(),
            });
        }
    }
    if plan.candidates.is_empty() {
        return Ok(plan);
    }
    // A Session's tasks are named by its `task_created` events (no index maps a Session to
    // its tasks).
    let mut owner: HashMap<String, usize> = HashMap::new();
    {
        let mut st = tx.prepare_cached(
            "SELECT task_id FROM events WHERE session_id = ?1 AND kind = 'task_created'",
        )?;
        for (i, cand) in plan.candidates.iter_mut().enumerate() {
            let ids = st
                .query_map([&cand.session_id], |r| r.get::<_, Option<String>>(0))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            for id in ids.into_iter().flatten() {
                owner.insert(id.clone(), i);
                cand.tasks.push(id);
            }
        }
    }
    // The full-text rows and the inputs are found by task, which neither table indexes: one
    // scan each for the whole plan.
    {
        let mut st = tx.prepare("SELECT rowid, task_id FROM task_text")?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            let task: Option<String> = r.get(1)?;
            if let Some(i) = task.as_ref().and_then(|t| owner.get(t)) {
                let rowid: i64 = r.get(0)?;
                plan.candidates[*i]
                    .text_rows
                    .push((rowid, task.unwrap_or_default()));
            }
        }
    }
    {
        let pairs: HashSet<(String, String)> = plan
            .candidates
            .iter()
            .map(|c| (c.caller.clone(), c.agent_id.clone()))
            .collect();
        let mut st = tx
            .prepare("SELECT input_key, task_id FROM inputs WHERE caller = ?1 AND agent_id = ?2")?;
        for (caller, agent) in pairs {
            let mut rows = st.query(params![caller, agent])?;
            while let Some(r) = rows.next()? {
                let task: String = r.get(1)?;
                if let Some(i) = owner.get(&task) {
                    plan.candidates[*i].inputs.push((r.get(0)?, task));
                }
            }
        }
    }
    tx.finish()?;
    Ok(plan)
}

/// The export file of one retention run: JSON lines in the format of `sextant export`.
pub struct ExportFile {
    path: PathBuf,
    file: std::fs::File,
    /// The file's length after the last batch known to have committed.
    committed: u64,
    counts: BTreeMap<String, u64>,
    /// Lines per type written by the batch in progress (added to `counts` once it commits).
    batch: BTreeMap<String, u64>,
}

impl ExportFile {
    /// Creates the file (it must not exist) with its header line. Blocking.
    pub fn create(path: &Path, schema_version: i64, now: DateTime<Utc>) -> Result<Self> {
        if let Some(dir) = path.parent() {
            // 0700: the exports hold the deleted Sessions' transcripts.
            let mut b = std::fs::DirBuilder::new();
            b.recursive(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::DirBuilderExt;
                b.mode(0o700);
            }
            b.create(dir).map_err(io)?;
        }
        let mut file = private_new(path).map_err(io)?;
        let mut head = Vec::new();
        export::put(
            &mut head,
            &Line::Header(export::Header {
                format: export::FORMAT.into(),
                version: export::VERSION,
                schema_version,
                exported_at: now,
            }),
        )?;
        file.write_all(&head).map_err(io)?;
        file.sync_data().map_err(io)?;
        Ok(Self {
            path: path.to_path_buf(),
            file,
            committed: head.len() as u64,
            counts: BTreeMap::new(),
            batch: BTreeMap::new(),
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends a batch's lines and syncs them to disk: only then may the batch delete.
    fn append(&mut self, lines: &[u8], counts: BTreeMap<String, u64>) -> Result<()> {
        self.file.seek(std::io::SeekFrom::End(0)).map_err(io)?;
        self.file.write_all(lines).map_err(io)?;
        self.file.sync_data().map_err(io)?;
        self.batch = counts;
        Ok(())
    }

    /// The batch committed: its lines stay.
    fn commit(&mut self) -> Result<()> {
        self.committed = self.file.metadata().map_err(io)?.len();
        for (k, n) in std::mem::take(&mut self.batch) {
            *self.counts.entry(k).or_default() += n;
        }
        Ok(())
    }

    /// The batch did not commit: its lines are cut off again.
    fn undo(&mut self) -> Result<()> {
        self.batch.clear();
        self.file.set_len(self.committed).map_err(io)?;
        self.file.sync_data().map_err(io)
    }

    /// Writes the `end` line. Blocking.
    pub fn finish(mut self) -> Result<export::End> {
        let end = export::End {
            counts: std::mem::take(&mut self.counts),
        };
        let mut tail = Vec::new();
        export::put(&mut tail, &Line::End(end.clone()))?;
        self.file.seek(std::io::SeekFrom::End(0)).map_err(io)?;
        self.file.write_all(&tail).map_err(io)?;
        self.file.sync_all().map_err(io)?;
        Ok(end)
    }
}

#[cfg(unix)]
fn private_new(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
}

#[cfg(not(unix))]
fn private_new(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(path)
}

fn io(e: std::io::Error) -> Error {
    Error::File(format!("retention export: {e}"))
}

/// What one batch deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Deleted {
    pub sessions: u64,
    pub tasks: u64,
    pub events: u64,
    /// Sessions left alone because they changed after the plan.
    pub changed: u64,
}

/// Whether `cand` is still exactly as planned (see the module docs).
fn unchanged(c: &Connection, cand: &Candidate) -> Result<bool> {
    let Some(row) = sessions::get(c, &cand.session_id)? else {
        return Ok(false);
    };
    // The candidate holds the time as stored: compare the stored text.
    if row.last_seq != cand.last_seq || format_time(row.updated_at) != cand.updated_at {
        return Ok(false);
    }
    let mut st = c.prepare_cached(
        "SELECT 1 FROM push_configs WHERE task_id = ?1 AND pending > 0 AND failing_at IS NULL",
    )?;
    for t in &cand.tasks {
        if st.exists([t])? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The export lines of one Session: the Session, its tasks, its events and its Runs.
fn export_session(c: &Connection, cand: &Candidate) -> Result<Vec<Line>> {
    let mut lines = Vec::new();
    if let Some(s) = sessions::get(c, &cand.session_id)? {
        lines.push(Line::Session(s));
    }
    for t in &cand.tasks {
        if let Some(task) = tasks::get(c, t)? {
            // The creating input's key is among the Session's (one primary-key read each).
            let mut content_hash = None;
            for (key, _) in cand.inputs.iter().filter(|(_, of)| of == t) {
                content_hash =
                    inputs::hash_at(c, &cand.caller, &cand.agent_id, key, t, task.first_seq)?;
                if content_hash.is_some() {
                    break;
                }
            }
            lines.push(Line::Task(export::TaskLine { task, content_hash }));
        }
    }
    for ev in events::for_session(c, &cand.session_id, 0, u32::MAX)? {
        lines.push(Line::Event(ev));
    }
    let mut st = c.prepare_cached(&format!(
        "{} WHERE r.session_id = ?1 ORDER BY r.created_at, r.run_id",
        runs::SELECT
    ))?;
    for r in st.query_map([&cand.session_id], runs::row)? {
        lines.push(Line::Run(r?));
    }
    Ok(lines)
}

/// Deletes one Session and everything that hangs off it (the caller checked it may go).
/// Returns the events deleted.
fn delete_session(c: &Connection, cand: &Candidate) -> Result<u64> {
    let id = cand.session_id.as_str();
    for (rowid, task) in &cand.text_rows {
        c.prepare_cached("DELETE FROM task_text WHERE rowid = ?1 AND task_id = ?2")?
            .execute(params![rowid, task])?;
    }
    // Text still queued for the index ([`Journal::retain`] flushes the queue before it plans,
    // but a plan read without that has its tasks' text here). The queue is short.
    for task in &cand.tasks {
        c.prepare_cached("DELETE FROM task_text_pending WHERE task_id = ?1")?
            .execute(params![task])?;
    }

    for (key, task) in &cand.inputs {
        c.prepare_cached(
            "DELETE FROM inputs WHERE caller = ?1 AND agent_id = ?2 AND input_key = ?3
             AND task_id = ?4",
        )?
        .execute(params![cand.caller, cand.agent_id, key, task])?;
    }
    for t in &cand.tasks {
        for sql in [
            "DELETE FROM interactions WHERE task_id = ?1",
            "DELETE FROM push_outbox WHERE task_id = ?1",
            "DELETE FROM push_configs WHERE task_id = ?1",
        ] {
            c.prepare_cached(sql)?.execute([t])?;
        }
    }
    c.prepare_cached("DELETE FROM runs WHERE session_id = ?1")?
        .execute([id])?;
    // The one place a DELETE of events is let through: the marker names this Session, and it
    // is gone again before the transaction ends (migration 20261202170000_retention).
    c.prepare_cached("INSERT INTO retention_marker (one, session_id) VALUES (1, ?1)")?
        .execute([id])?;
    let events = c
        .prepare_cached("DELETE FROM events WHERE session_id = ?1")?
        .execute([id])?;
    c.prepare_cached("DELETE FROM retention_marker")?
        .execute([])?;
    for t in &cand.tasks {
        c.prepare_cached("DELETE FROM tasks WHERE task_id = ?1")?
            .execute([t])?;
    }
    c.prepare_cached("DELETE FROM sessions WHERE session_id = ?1")?
        .execute([id])?;
    Ok(events as u64)
}

/// Deletes the Sessions of `batch` that are still as planned, exporting them first to
/// `export` if given. Runs in the writer, alone in its own transaction with foreign keys off
/// (an error deletes nothing of the batch).
pub(crate) fn delete_batch(
    c: &Connection,
    batch: &[Candidate],
    export: Option<&Mutex<ExportFile>>,
) -> Result<Deleted> {
    let mut out = Deleted::default();
    let mut going = Vec::with_capacity(batch.len());
    for cand in batch {
        if unchanged(c, cand)? {
            going.push(cand);
        } else {
            out.changed += 1;
        }
    }
    if let Some(file) = export {
        let mut buf = Vec::new();
        let mut counts: BTreeMap<String, u64> = BTreeMap::new();
        for cand in &going {
            for line in export_session(c, cand)? {
                export::put(&mut buf, &line)?;
                *counts.entry(line.kind().to_string()).or_default() += 1;
            }
        }
        file.lock()
            .map_err(|_| Error::Failed("retention export: a writer panicked".into()))?
            .append(&buf, counts)?;
    }
    for cand in going {
        out.events += delete_session(c, cand)?;
        out.tasks += cand.tasks.len() as u64;
        out.sessions += 1;
    }
    Ok(out)
}

/// Gives free pages back to the file system when the journal is in incremental auto-vacuum
/// mode, a step at a time in the writer; otherwise they stay on the free list for later
/// writes. Returns what it did.
pub async fn reclaim(journal: &Journal) -> Result<Reclaimed> {
    let mut done = Reclaimed::default();
    loop {
        let step = journal
            .call(|c| {
                let mode: i64 = c.pragma_query_value(None, "auto_vacuum", |r| r.get(0))?;
                let before: i64 = c.pragma_query_value(None, "freelist_count", |r| r.get(0))?;
                if mode == 2 && before > 0 {
                    // A pragma that returns no row: run it as a statement.
                    c.execute_batch(&format!("PRAGMA incremental_vacuum({VACUUM_STEP})"))?;
                }
                let after: i64 = c.pragma_query_value(None, "freelist_count", |r| r.get(0))?;
                Ok((mode, before, after))
            })
            .await?;
        let (mode, before, after) = step;
        done.auto_vacuum = mode;
        done.pages += u64::try_from(before - after).unwrap_or(0);
        done.free_pages = u64::try_from(after).unwrap_or(0);
        if mode != 2 || after == 0 || after >= before {
            return Ok(done);
        }
    }
}

/// Switches the journal file at `path` to `auto_vacuum = INCREMENTAL`, which takes a full
/// `VACUUM` (the whole file rewritten; it needs about its size free on disk). For a journal no
/// Sextant has open. Blocking. Returns whether it converted (false: it already was).
pub fn convert_to_incremental(path: &Path) -> Result<bool> {
    let c = crate::open_connection(path)?;
    let mode: i64 = c.pragma_query_value(None, "auto_vacuum", |r| r.get(0))?;
    if mode == 2 {
        return Ok(false);
    }
    c.pragma_update(None, "auto_vacuum", "INCREMENTAL")?;
    c.execute_batch("VACUUM")?;
    c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
    Ok(true)
}

/// The export file name of a retention run at `now`: `retention/deleted-<time>.jsonl` under
/// the data dir.
pub fn export_path(data_dir: &Path, now: DateTime<Utc>) -> PathBuf {
    data_dir.join("retention").join(format!(
        "deleted-{}.jsonl",
        now.format("%Y%m%dT%H%M%S%.3fZ")
    ))
}

impl Journal {
    /// What `policy` would delete at `now` (at most [`PLAN_LIMIT`] Sessions). Reads only.
    pub async fn retention_plan(&self, policy: Policy, now: DateTime<Utc>) -> Result<Plan> {
        self.read(move |c| plan(c, &policy, now, PLAN_LIMIT)).await
    }

    /// Applies `policy` at `now`: plans, deletes in batches through the writer (exporting each
    /// batch to `export` first, if given), plans again until nothing more goes, then reclaims
    /// space ([`reclaim`]). A batch that fails deletes nothing, and the run stops there with the
    /// error; what earlier batches deleted stays deleted (and exported).
    pub async fn retain(
        &self,
        policy: Policy,
        now: DateTime<Utc>,
        export: Option<PathBuf>,
    ) -> Result<Report> {
        let mut report = Report::default();
        // The plan finds a Session's search text in the index; flushed first, that is all of
        // it (the deletes also clear any still queued, and text queued after this belongs to
        // a Session that changed since the plan, which `delete_batch` leaves alone).
        self.flush_search().await?;
        let first = self.retention_plan(policy.clone(), now).await?;
        report.used_before = first.used_bytes;
        report.kept = first.kept;
        if first.candidates.is_empty() {
            report.used_after = first.used_bytes;
            return Ok(report);
        }
        let file = match &export {
            Some(path) => {
                let path = path.clone();
                let version = self.read(export::schema_version).await?;
                let f =
                    tokio::task::spawn_blocking(move || ExportFile::create(&path, version, now))
                        .await
                        .map_err(|e| Error::Failed(format!("retention export: {e}")))??;
                Some(Arc::new(Mutex::new(f)))
            }
            None => None,
        };
        let run = self
            .retain_planned(first, &policy, now, file.clone(), &mut report)
            .await;
        if let Some(f) = file {
            let f = Arc::try_unwrap(f)
                .map_err(|_| Error::Failed("retention export still in use".into()))?
                .into_inner()
                .map_err(|_| Error::Failed("retention export: a writer panicked".into()))?;
            let path = f.path().to_path_buf();
            tokio::task::spawn_blocking(move || f.finish())
                .await
                .map_err(|e| Error::Failed(format!("retention export: {e}")))??;
            report.export = Some(path);
        }
        run?;
        if report.sessions > 0 {
            report.reclaimed = Some(reclaim(self).await?);
        }
        report.used_after = self.read(used_bytes).await?;
        Ok(report)
    }

    async fn retain_planned(
        &self,
        mut plan: Plan,
        policy: &Policy,
        now: DateTime<Utc>,
        file: Option<Arc<Mutex<ExportFile>>>,
        report: &mut Report,
    ) -> Result<()> {
        loop {
            let mut progressed = false;
            for chunk in plan.candidates.chunks(BATCH) {
                let batch = chunk.to_vec();
                let f = file.clone();
                let r = self
                    .call_alone(move |c| delete_batch(c, &batch, f.as_deref()))
                    .await;
                // The batch's export lines stay only if it committed (file work: off the runtime).
                if let Some(f) = file.clone() {
                    let committed = r.is_ok();
                    tokio::task::spawn_blocking(move || {
                        let mut f = f.lock().map_err(|_| {
                            Error::Failed("retention export: a writer panicked".into())
                        })?;
                        if committed { f.commit() } else { f.undo() }
                    })
                    .await
                    .map_err(|e| Error::Failed(format!("retention export: {e}")))??;
                }
                let d = r?;
                report.sessions += d.sessions;
                report.tasks += d.tasks;
                report.events += d.events;
                report.changed += d.changed;
                progressed |= d.sessions > 0;
            }
            if !progressed {
                return Ok(());
            }
            plan = self.retention_plan(policy.clone(), now).await?;
            report.kept = plan.kept;
            if plan.candidates.is_empty() {
                return Ok(());
            }
        }
    }
}
