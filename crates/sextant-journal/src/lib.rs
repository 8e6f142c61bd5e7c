//! The Session journal: all of Sextant's SQL.
//!
//! [`Journal`] is a cheap, cloneable async handle over one SQLite file:
//!
//! - **Writes** go to one dedicated writer thread over a channel. The thread takes every job that is
//!   waiting, runs them in one transaction, commits, and only then answers the callers (early
//!   admissions, below, excepted) and publishes the new events on the [`Hub`], both from one task on
//!   the async runtime when there is a multi-thread one (one wake-up per batch instead of one per
//!   caller and event; `writer::Deliver`). That is group commit: concurrent Sessions share a commit,
//!   and an "accepted" answer always means "durable". One refused job does not sink the others:
//!   admissions and appends check everything that can refuse them before they write; other jobs run
//!   in their own savepoint. A write that fails half-way (a database error) abandons the whole batch.
//!   The retention job's deletes are the exception: each runs alone between two batches, in a
//!   transaction of its own (see [`retention`]). The writer caches each Session's last seq and each
//!   live task's state (dropped when another process writes the file), so an append reads nothing,
//!   and writes the `tasks` / `sessions` cache columns once per batch. Search text is queued and
//!   indexed in bulk ([`queries::search`]); a search flushes the queue first. Checkpoints run in the
//!   writer between batches, every few thousand WAL pages, which keeps the WAL bounded; a thread
//!   beside it writes the WAL back to disk as it grows, so the checkpoint's sync finds little to do
//!   ([`wal`]).
//! - **Pipelined appends** ([`Journal::submit_append`]) let a turn send its outputs and final
//!   state without waiting for each commit; a [`TurnGuard`] refuses the rest of the turn once
//!   one of them failed.
//! - **Early admissions** ([`Journal::admit_early`]), for a caller that says nothing until the
//!   task's events arrive (a blocking SendMessage): the new task is handed back before its
//!   commit, and the writer takes the jobs its turn sends meanwhile into the same batch, so a
//!   short task commits once. What the caller hears is still committed: the events come only
//!   after the commit, and a batch that fails ends the subscription empty.
//! - **Reads** run on [`READERS`] dedicated reader threads, each owning one read connection (WAL
//!   lets them proceed while the writer commits). No SQL ever runs on the async runtime's worker
//!   threads. Not tokio's blocking pool: under load it grew to about 25 threads for 4 read
//!   connections (a thread that just finished a read is not idle yet when the next read
//!   arrives), and every one kept its own allocator caches, so memory under sustained load grew
//!   with the thread count; a fixed set also keeps each connection's statement cache on one
//!   thread.
//!
//! The `events` table is append-only (enforced by triggers; [`retention`] alone may delete whole
//! Sessions). `tasks` caches each task's state;
//! [`Journal::rebuild_check`] recomputes the cache from the events with the same projection the
//! readers use, and reports any difference.
//!
//! **Backup and export.** [`backup`] copies the live journal as one consistent snapshot (SQLite's
//! online backup API, beside the writer) and checks a copy before it is restored; [`export`]
//! writes it as JSON lines, one row at a time, and parses them back.
//!
//! **Retention.** [`retention`] deletes whole old Sessions on a policy (never ones with
//! pending work, nor a schedule's latest Run), through the writer in small batches, exporting
//! them first when asked. It is the one thing that deletes events: the append-only triggers
//! let a DELETE through only for the Session a retention marker row names, inside the
//! retention job's own transaction.
//!
//! Layout: [`migrate`] (embedded migrations), [`queries`] (one module per table), [`writer`]
//! (the writer thread and the admission transaction), [`wal`] (checkpoints), [`hub`] (live
//! fan-out). Personal schedules and their Runs (`schedules`, `runs` tables) have their async
//! methods in `schedules.rs`; issued credentials, revocations and settings theirs in
//! `security.rs`; outbound peers and outbound conversations theirs in `peers.rs`; push
//! notification configs and their outbox theirs in `push.rs`. Rows carry domain types (a task's
//! state and outcome, a Session's origin and caller kind, a Run's trigger, record, overlap
//! policy and outcome, a schedule's missed-run and overlap policies, source and creator kind,
//! the ids as `TaskId`, `SessionId`, `ContextId`, `AgentId`, `ScheduleId`, `RunId`, a caller as
//! its `CallerKey`, every time as `DateTime<Utc>`), and the methods that record a time take
//! one; `stored.rs` says how each is stored as text, the same text as before rows were typed. A stored text that does not parse is an error for a read of that row; the
//! scheduler's due read, the schedules list, a schedule's Runs list and history, the Sessions
//! list and the outbound conversations leave such a row out (with a warning) instead, so one
//! bad row does not stop the others, and a Session's labels on a task or a decision
//! (`queries::sessions::labels`) read as none. (A task's cached outcome in a word this Sextant
//! does not know reads as not recorded.)
//!
//! **The push outbox.** The writer knows which live tasks have push-notification configs, and
//! an append queues one `push_outbox` row per config for every event a config covers, in the
//! event's own transaction ([`Journal::push_due`] and friends serve the delivery worker).

pub mod backup;
pub mod error;
pub mod export;
pub mod hub;
pub mod migrate;
mod peers;
mod processes;
mod push;
pub mod queries;
pub mod retention;
mod schedules;
mod security;
mod stored;
mod wal;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use rusqlite::Connection;
use rusqlite::config::DbConfig;
use sextant_core::{AgentSpec, EventBody, JournalEvent};
use tokio::sync::oneshot;

pub use error::{Error, Result};
pub use hub::{Hub, Live};
pub use queries::grants::{GrantRow, RunScope};
pub use queries::interactions::InteractionRow;
pub use queries::peers::PeerRow;
pub use queries::processes::ProcessRow;
pub use queries::push::{OutboxRow, PushConfigRow};
pub use queries::runs::{History, RunRow, Settled};

pub use queries::schedules::ScheduleRow;
pub use queries::security::{CredentialRow, PeerCredentialRow};
pub use queries::sessions::SessionRow;
pub use queries::tasks::{TaskCounts, TaskFilter, TaskPage, TaskRow, TaskStatus};
pub use schedules::Claim;
pub use writer::{Admission, Admitted, NewEvent, PushPut, Refusal, TurnGuard};

use writer::Job;

/// Reader threads, each with one read connection. Reads beyond this wait in the queue rather
/// than open throwaway connections: each connection caches its prepared statements, so reuse
/// matters.
pub const READERS: usize = 4;

/// A read handed to the reader threads: called with the thread's connection, or with the error
/// that kept it from opening one.
type ReadJob = Box<dyn FnOnce(Result<&Connection>) + Send>;

/// An append handed to the writer ([`Journal::submit_append`]).
#[must_use = "an append's outcome is only known by waiting for it"]
pub struct Submitted(Option<oneshot::Receiver<Result<Vec<Arc<JournalEvent>>>>>);

impl Submitted {
    /// The appended events, once committed.
    pub async fn wait(self) -> Result<Vec<Arc<JournalEvent>>> {
        match self.0 {
            Some(rx) => rx.await.map_err(|_| Error::Closed)?,
            None => Err(Error::Closed),
        }
    }
}

/// The async handle to the journal. Clones share the same writer thread, pool and hub.
#[derive(Clone)]
pub struct Journal {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    jobs: std::sync::mpsc::Sender<Job>,
    /// The reader threads' queue; they stop when the last handle (and so this sender) drops.
    reads: std::sync::mpsc::Sender<ReadJob>,
    hub: Hub,
    /// Notified after a commit that queued push deliveries ([`Journal::push_ready`]).
    push_ready: Arc<tokio::sync::Notify>,
    /// Kept by the writer: queued search text ([`Journal::flush_search`]), commits.
    shared: Arc<writer::Shared>,
}

/// Makes the database file at `path` private to its owner before SQLite opens it: a new file
/// is created empty with mode 0600 (SQLite would create it with the umask's mode, 0644), and
/// an existing one loses its group and other permissions, with its `-wal` and `-shm`. SQLite
/// gives the `-wal` and `-shm` it creates the main file's mode, so they are 0600 too. No-op
/// off Unix.
pub(crate) fn make_private(path: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let file_error = |e: std::io::Error| Error::File(format!("{}: {e}", path.display()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
        {
            Ok(_) => return Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(file_error(e)),
        }
        let mut changed = Vec::new();
        for suffix in ["", "-wal", "-shm"] {
            let mut name = path.as_os_str().to_owned();
            name.push(suffix);
            let file = PathBuf::from(name);
            let Ok(meta) = std::fs::symlink_metadata(&file) else {
                continue;
            };
            let mode = meta.permissions().mode() & 0o7777;
            if meta.is_file() && mode & 0o077 != 0 {
                std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode & !0o077))
                    .map_err(file_error)?;
                changed.push(format!("{} {mode:o}->{:o}", file.display(), mode & !0o077));
            }
        }
        if !changed.is_empty() {
            tracing::warn!(
                changed = %changed.join(", "),
                "journal: the database was readable by other local users; made it owner-only"
            );
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

/// Opens a connection with the pragmas every connection needs.
pub(crate) fn open_connection(path: &Path) -> Result<Connection> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(Duration::from_secs(5))?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    // After a checkpoint that lets the WAL start again, the file is cut back to this size
    // (the writer's checkpoint threshold, `wal::WAL_PAGES_PER_CHECKPOINT` pages of 4 KiB):
    // a WAL that once grew (long readers holding old snapshots) does not keep its high-water
    // size on disk for good.
    conn.pragma_update(None, "journal_size_limit", wal::WAL_SIZE_LIMIT)?;
    conn.set_prepared_statement_cache_capacity(64);
    // Query-planner stability: without it SQLite re-prepares a cached statement whenever a
    // parameter flips between NULL (rusqlite clears bindings when a statement goes back to the
    // cache) and a small integer, which cost a full re-parse on every journal read.
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
    Ok(conn)
}

/// A reader thread: takes reads off the shared queue and runs them on its own connection,
/// opened at the first read (and again after a failure) so that a journal nobody reads costs
/// no connections. Returns when every handle is gone.
fn reader(path: &Path, queue: &Mutex<std::sync::mpsc::Receiver<ReadJob>>) {
    let mut conn: Option<Connection> = None;
    loop {
        // The lock is held only while waiting for the next job; the read runs after it drops.
        let next = queue.lock().unwrap_or_else(|e| e.into_inner()).recv();
        let Ok(job) = next else { return };
        if conn.is_none() {
            match open_connection(path) {
                Ok(c) => conn = Some(c),
                Err(e) => {
                    job(Err(e));
                    continue;
                }
            }
        }
        let Some(c) = conn.as_ref() else { continue };
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(Ok(c))));
        if ran.is_err() {
            // The read stopped half-way, maybe inside a statement or a transaction: start the
            // next one on a fresh connection rather than trust this one.
            tracing::error!("journal: a read panicked; its reader opens a new connection");
            conn = None;
        }
    }
}

impl Journal {
    /// Opens (creating if needed) the journal at `path`, applies migrations and starts the
    /// writer thread. Blocking: call it from start-up code or `spawn_blocking`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        make_private(&path)?;
        let mut conn = open_connection(&path)?;
        let mut rewrote = migrate::migrate(&mut conn)? > 0;
        if queries::search::needs_rebuild(&conn)? {
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let rows = queries::search::rebuild(&tx)?;
            tx.commit()?;
            tracing::info!(rows, "journal: built the full-text index of task text");
            rewrote = true;
        }
        if queries::search::queued(&conn)? > 0 {
            // Text queued for the search index when the last run stopped.
            let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            queries::search::flush(&tx)?;
            tx.commit()?;
        }
        if rewrote {
            // A migration or rebuild over a large journal leaves its pages in the WAL (150 MB
            // for the indexes of a million tasks), where every reader would search them and
            // the writer's checkpoints would not start before the first write. No reader is
            // open yet, so copying them back and truncating the WAL cannot wait on one.
            conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        }
        let wal = wal::Wal::watch(&mut conn)?;
        let hub = Hub::default();
        let (tx, rx) = std::sync::mpsc::channel();
        let writer_hub = hub.clone();
        let push_ready = Arc::new(tokio::sync::Notify::new());
        let writer_push = push_ready.clone();
        let deliver = writer::Deliver::start();
        let shared = Arc::new(writer::Shared::default());
        let writer_shared = shared.clone();
        std::thread::Builder::new()
            .name("sextant-journal-writer".into())
            .spawn(move || {
                writer::run(
                    conn,
                    wal,
                    rx,
                    writer_hub,
                    writer_push,
                    deliver,
                    writer_shared,
                )
            })
            .map_err(|source| Error::Spawn {
                what: "writer",
                source,
            })?;
        let (reads, queue) = std::sync::mpsc::channel::<ReadJob>();
        let queue = Arc::new(Mutex::new(queue));
        for n in 0..READERS {
            let (queue, path) = (queue.clone(), path.clone());
            std::thread::Builder::new()
                .name(format!("sextant-journal-read-{n}"))
                .spawn(move || reader(&path, &queue))
                .map_err(|source| Error::Spawn {
                    what: "reader",
                    source,
                })?;
        }
        Ok(Self {
            inner: Arc::new(Inner {
                path,
                jobs: tx,
                reads,
                hub,
                push_ready,
                shared,
            }),
        })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The live fan-out of committed events.
    pub fn hub(&self) -> &Hub {
        &self.inner.hub
    }

    async fn write<T: Send + 'static>(
        &self,
        job: impl FnOnce(oneshot::Sender<Result<T>>) -> Job,
    ) -> Result<T> {
        let (tx, rx) = oneshot::channel();
        self.inner.jobs.send(job(tx)).map_err(|_| Error::Closed)?;
        rx.await.map_err(|_| Error::Closed)?
    }

    /// Runs `f` on a reader thread's connection.
    ///
    /// Crate-private: the SQL stays in this crate, and other crates get typed queries. Their
    /// tests reach it through `Journal::read_for_tests`.
    pub(crate) async fn read<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel();
        let job: ReadJob = Box::new(move |conn| {
            // The caller may have gone (a dropped request): nobody to tell.
            let _ = tx.send(conn.and_then(f));
        });
        self.inner.reads.send(job).map_err(|_| Error::Closed)?;
        // A closed reply means the read panicked: the reader dropped it while unwinding.
        rx.await
            .map_err(|_| Error::Failed("a journal read panicked".into()))?
    }

    /// The crate-private `read` for other crates' tests (feature `test-support`): a raw connection,
    /// to set up or inspect what no typed query does.
    #[cfg(feature = "test-support")]
    pub async fn read_for_tests<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> Result<T> + Send + 'static,
    {
        self.read(f).await
    }

    /// Mirrors the configured Agents into the `agents` table (insert or update).
    pub async fn upsert_agents(&self, agents: Vec<AgentSpec>, at: DateTime<Utc>) -> Result<()> {
        self.write(|reply| Job::UpsertAgents { agents, at, reply })
            .await
    }

    /// Admits one input: idempotency check, Session lookup or creation, and the `task_created` /
    /// `input_accepted` event, all in one transaction. When this returns `Ok(Ok(_))` the input
    /// is durable.
    pub async fn admit(&self, admission: Admission) -> Result<Result<Admitted, Refusal>> {
        Ok(self.admit_watched(admission, false).await?.0)
    }

    /// [`Journal::admit`], and with `watch`, for a created task, a subscription to its Session
    /// taken before the task's first event was published: it yields that event and every
    /// later one, so a caller that waits for the task need not read the journal.
    pub async fn admit_watched(
        &self,
        admission: Admission,
        watch: bool,
    ) -> Result<(Result<Admitted, Refusal>, Option<Live>)> {
        self.admit_job(admission, watch, false).await
    }

    /// [`Journal::admit_watched`] for a caller that tells nobody anything until the task's
    /// later events arrive: a created task is handed back **before its transaction commits**.
    /// The writer goes on with its batch and, before committing, takes the jobs sent meanwhile,
    /// so the task's first turn usually commits with its admission: one commit, not two.
    ///
    /// The subscription still yields only committed events, the task's `task_created` first.
    /// If the batch fails, it ends without yielding anything (the Session's live channel is
    /// closed), and the task, which was never committed, does not exist. So the caller may
    /// start the task's turn, as long as what the turn does outside the journal waits for a
    /// commit of its own (engines with side effects wait for `turn_started`), and it must not
    /// tell its own caller about the task before an event of it arrives. Anything other than
    /// a created task is answered after the commit, as by [`Journal::admit_watched`].
    pub async fn admit_early(
        &self,
        admission: Admission,
    ) -> Result<(Result<Admitted, Refusal>, Option<Live>)> {
        self.admit_job(admission, true, true).await
    }

    async fn admit_job(
        &self,
        admission: Admission,
        watch: bool,
        early: bool,
    ) -> Result<(Result<Admitted, Refusal>, Option<Live>)> {
        let out = self
            .write(|reply| Job::Admit {
                admission: Box::new(admission),
                watch,
                early,
                reply,
            })
            .await?;
        Ok((out.outcome, out.live))
    }

    /// Appends events to one Session, in order, in one transaction.
    pub async fn append(
        &self,
        session_id: &str,
        events: Vec<NewEvent>,
    ) -> Result<Vec<Arc<JournalEvent>>> {
        self.submit_append(session_id, events, None).wait().await
    }

    /// Sends an append to the writer now and returns without waiting for it, so that several
    /// appends of one turn can share a commit. Appends are applied in the order they are sent;
    /// with a `guard`, one failing makes the writer refuse the later ones under that guard.
    pub fn submit_append(
        &self,
        session_id: &str,
        events: Vec<NewEvent>,
        guard: Option<TurnGuard>,
    ) -> Submitted {
        let (reply, rx) = oneshot::channel();
        let job = Job::Append {
            session_id: session_id.to_string(),
            events,
            guard,
            reply,
        };
        match self.inner.jobs.send(job) {
            Ok(()) => Submitted(Some(rx)),
            Err(_) => Submitted(None),
        }
    }

    /// Appends one event for a task.
    pub async fn append_one(
        &self,
        session_id: &str,
        task_id: &str,
        body: EventBody,
        at: DateTime<Utc>,
    ) -> Result<Arc<JournalEvent>> {
        let mut evs = self
            .append(
                session_id,
                vec![NewEvent {
                    task_id: Some(task_id.to_string()),
                    body,
                    at,
                }],
            )
            .await?;
        evs.pop()
            .ok_or_else(|| Error::Failed("an append returned no event".into()))
    }

    /// One task's row (cached state included).
    pub async fn task(&self, task_id: &str) -> Result<Option<TaskRow>> {
        let id = task_id.to_string();
        self.read(move |c| queries::tasks::get(c, &id)).await
    }

    /// A task's events after `after_seq`, in seq order.
    pub async fn task_events(&self, task_id: &str, after_seq: i64) -> Result<Vec<JournalEvent>> {
        let id = task_id.to_string();
        self.read(move |c| queries::events::for_task(c, &id, after_seq))
            .await
    }

    /// A page of tasks.
    pub async fn list_tasks(&self, filter: TaskFilter) -> Result<TaskPage> {
        if filter.text.is_some() {
            self.flush_search().await?;
        }
        self.read(move |c| queries::tasks::list(c, &filter)).await
    }

    /// How many jobs the writer has run in its batches: each is a hand-off to its thread, so
    /// tests and benchmarks count them (a short turn's output should be one).
    pub fn writer_jobs(&self) -> u64 {
        self.inner
            .shared
            .jobs
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Has the writer index the search text it queued, if any ([`queries::search::flush`]),
    /// so a search that follows sees the text of every event committed before this call.
    pub async fn flush_search(&self) -> Result<()> {
        use std::sync::atomic::Ordering;
        if self.inner.shared.unindexed.load(Ordering::Relaxed) == 0 {
            return Ok(());
        }
        self.write(|reply| Job::FlushSearch { reply }).await
    }

    /// Drops the full-text index of task text and builds it again from the events; returns
    /// how many rows it holds. Runs in the writer, so no event is appended meanwhile.
    pub async fn rebuild_search(&self) -> Result<u64> {
        self.call(queries::search::rebuild).await
    }

    /// A page of tasks with what each one is ([`queries::search::TaskDigest`]), and, for a
    /// text search, where it matched.
    pub async fn list_task_digests(
        &self,
        filter: TaskFilter,
        query: Option<String>,
    ) -> Result<(TaskPage, Vec<(queries::search::TaskDigest, Option<String>)>)> {
        if filter.text.is_some() || query.is_some() {
            self.flush_search().await?;
        }
        self.read(move |c| {
            let page = queries::tasks::list(c, &filter)?;
            let mut out = Vec::with_capacity(page.tasks.len());
            for t in &page.tasks {
                let d = queries::search::digest(c, t)?;
                let hit = match &query {
                    Some(q) => queries::search::snippet(c, q, &t.task_id)?,
                    None => None,
                };
                out.push((d, hit));
            }
            Ok((page, out))
        })
        .await
    }

    /// The schedule (id, and name) whose Run created a Session, if one did.
    pub async fn session_schedule(
        &self,
        session_id: &str,
    ) -> Result<Option<(sextant_core::ids::ScheduleId, Option<String>)>> {
        let id = session_id.to_string();
        self.read(move |c| queries::search::session_schedule(c, &id))
            .await
    }

    /// The text of a Session's first message, shortened.
    pub async fn session_opening(&self, session_id: &str) -> Result<Option<String>> {
        let id = session_id.to_string();
        self.read(move |c| queries::search::session_opening(c, &id))
            .await
    }

    /// What one task is ([`queries::search::TaskDigest`]).
    pub async fn task_digest(&self, task: TaskRow) -> Result<queries::search::TaskDigest> {
        self.read(move |c| queries::search::digest(c, &task)).await
    }

    /// How many tasks are unfinished, by state, across every caller.
    pub async fn task_counts(&self) -> Result<queries::tasks::TaskCounts> {
        self.read(queries::tasks::counts).await
    }

    /// Tasks that are not in a terminal state (for recovery at start-up).
    pub async fn unfinished_tasks(&self) -> Result<Vec<TaskRow>> {
        self.read(queries::tasks::unfinished).await
    }

    /// One Session.
    pub async fn session(&self, session_id: &str) -> Result<Option<SessionRow>> {
        let id = session_id.to_string();
        self.read(move |c| queries::sessions::get(c, &id)).await
    }

    /// Where a Session came from and who started it, for a label
    /// ([`queries::sessions::labels`]: never an error for a stored value it cannot read).
    pub async fn session_labels(&self, session_id: &str) -> Result<queries::sessions::Labels> {
        let id = session_id.to_string();
        self.read(move |c| queries::sessions::labels(c, &id)).await
    }

    /// The Session of a context key (caller, agent, contextId), if it exists.
    pub async fn session_by_context(
        &self,
        caller: &str,
        agent_id: &str,
        context_id: &str,
    ) -> Result<Option<SessionRow>> {
        let (c, a, x) = (
            caller.to_string(),
            agent_id.to_string(),
            context_id.to_string(),
        );
        self.read(move |conn| queries::sessions::by_context(conn, &c, &a, &x))
            .await
    }

    /// A page of Sessions, most recently active first (of one provenance, if given).
    pub async fn list_sessions(
        &self,
        caller: Option<String>,
        from: Option<queries::sessions::Provenance>,
        cursor: Option<(String, String)>,
        limit: u32,
    ) -> Result<(Vec<SessionRow>, u64)> {
        self.read(move |c| queries::sessions::list(c, caller.as_deref(), from, cursor, limit))
            .await
    }

    /// A Session's events after `after_seq`, at most `limit`.
    pub async fn session_events(
        &self,
        session_id: &str,
        after_seq: i64,
        limit: u32,
    ) -> Result<Vec<JournalEvent>> {
        let id = session_id.to_string();
        self.read(move |c| queries::events::for_session(c, &id, after_seq, limit))
            .await
    }

    /// The tasks of a Session, oldest first.
    pub async fn session_tasks(&self, session_id: &str) -> Result<Vec<TaskRow>> {
        let id = session_id.to_string();
        self.read(move |c| queries::tasks::for_session(c, &id))
            .await
    }

    /// Pending interactions across all Sessions, newest first.
    pub async fn pending_interactions(&self) -> Result<Vec<InteractionRow>> {
        self.read(queries::interactions::pending).await
    }

    /// One interaction (any state).
    pub async fn interaction(&self, interaction_id: &str) -> Result<Option<InteractionRow>> {
        let id = interaction_id.to_string();
        self.read(move |c| queries::interactions::get(c, &id)).await
    }

    /// Copies the journal, as one consistent snapshot taken now, into the new file `dest`
    /// ([`backup::snapshot`]): on a connection of its own, so the writer goes on committing.
    pub async fn snapshot(&self, dest: PathBuf) -> Result<backup::Checked> {
        let src = self.inner.path.clone();
        tokio::task::spawn_blocking(move || backup::snapshot(&src, &dest))
            .await
            .map_err(|e| Error::Failed(format!("the snapshot task: {e}")))?
    }

    /// Recomputes every task's cached state from the events and returns the tasks whose cache
    /// differs (empty = the cache is exactly what the journal says).
    pub async fn rebuild_check(&self) -> Result<Vec<sextant_core::ids::TaskId>> {
        self.read(queries::tasks::rebuild_check).await
    }
}

#[cfg(test)]
mod tests;
