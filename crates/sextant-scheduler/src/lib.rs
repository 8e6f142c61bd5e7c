//! Personal schedules: when Runs happen, and what a Run is.
//!
//! - [`cron`] (pure): cron expression + IANA zone → next fire times, with defined
//!   daylight-saving behaviour. [`timing`] (pure): a cron expression or a one-shot time, and
//!   the deterministic jitter of a slot. [`plan`] (pure): what to do with a due schedule under
//!   its missed-run policy. All take "now" as an argument and are unit-tested without a clock.
//! - [`Scheduler`]: the handle the server and the composition root share. Its schedule
//!   operations (create, update, delete, run now, replay, backfill, list Runs) are scoped to
//!   the calling principal ([`Actor`]: a principal for itself, or an assistant for its owner):
//!   a schedule is visible to its owner only, everyone else gets "not found". They check the
//!   current access to the target Agent on every create, enable, run now and replay.
//! - The loop ([`Scheduler::start`]) sleeps until the earliest due slot (or a schedule change,
//!   or shutdown), then [`Scheduler::run_due_now`] claims each due slot in the database and
//!   starts its Run, or records what the overlap policy made of it (`skipped`, `buffered`,
//!   started beside a running one, or started after asking to cancel it). A claim moves the
//!   schedule's cursor with a compare-and-set and records the Run in the same transaction, so
//!   two processes on one data dir never run a slot twice.
//! - [`settle`]: once a Run has ended, its outcome and result snippet are recorded; that
//!   counts consecutive failures, pauses a plan at its limit, starts a buffered Run, and sends
//!   [`ScheduleNotice`]s ([`Scheduler::notices`]).
//!
//! A Run is an ordinary input to the runtime (origin `schedule`), admitted as the schedule's
//! creator in a fresh context, so every Run gets its own Session: the same runtime, journal,
//! transcript, live stream and pending interactions as an A2A task. There is no second
//! execution path.
//!
//! Not here: HTTP (sextant-server), SQL (sextant-journal).

mod backfill;
pub mod cron;
pub mod plan;
mod runner;
mod service;
pub mod settle;
pub mod timing;
pub mod view;
pub mod words;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use sextant_core::Clock;
use sextant_journal::Journal;
use sextant_runtime::Runtime;
use tokio::sync::{Notify, broadcast};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub use backfill::{Backfill, BackfillResult};
/// The time zone type schedules use (chrono-tz's), for callers that show their times.
pub use chrono_tz::Tz;
pub use cron::{CronSpec, FieldError};
pub use service::{Actor, RunsPage, ScheduleFields};
pub use timing::Timing;
pub use view::{NoticeKind, RunView, ScheduleNotice, ScheduleView};

/// Why a schedule operation failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A field of the request is wrong; the error names it.
    #[error(transparent)]
    Invalid(#[from] FieldError),
    /// No such schedule or Run for this principal (someone else's is "not found" too).
    #[error("not found")]
    NotFound,
    /// The creator may not call the target Agent.
    #[error("{0}")]
    Forbidden(String),
    #[error(transparent)]
    Journal(#[from] sextant_journal::Error),
}

/// Scheduler result.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The longest the loop sleeps without looking at the database and the wall clock again. Tokio
/// sleeps on a monotonic clock that stops while the machine is suspended; waking at least this
/// often notices a resume (and schedules changed by another process) soon after.
pub const MAX_NAP: Duration = Duration::from_secs(30);

/// The scheduler handle. Clones share everything.
#[derive(Clone)]
pub struct Scheduler {
    inner: Arc<Inner>,
}

struct Inner {
    runtime: Runtime,
    /// Wakes the loop when a schedule changed.
    changed: Notify,
    /// One tick at a time in this process (the loop's and [`Scheduler::run_due_now`]'s).
    tick: tokio::sync::Mutex<()>,
    /// Set by [`Scheduler::pause`]: the loop claims no slot while it is set.
    paused: AtomicBool,
    /// Failures, recoveries and pauses, for whoever listens ([`Scheduler::notices`]).
    notices: broadcast::Sender<ScheduleNotice>,
}

/// Notices a slow listener may fall behind by before it misses some.
const NOTICES: usize = 256;

/// The running loop; [`SchedulerHandle::shutdown`] stops it.
pub struct SchedulerHandle {
    cancel: CancellationToken,
    tracker: TaskTracker,
}

impl SchedulerHandle {
    /// Stops the loop and waits for it (a tick in progress finishes first).
    pub async fn shutdown(self) {
        self.cancel.cancel();
        self.tracker.close();
        if tokio::time::timeout(Duration::from_secs(30), self.tracker.wait())
            .await
            .is_err()
        {
            tracing::warn!("scheduler loop did not stop within 30 s");
        }
    }
}

impl Scheduler {
    /// A scheduler over the runtime (and its journal and clock). Nothing runs until
    /// [`Scheduler::start`].
    pub fn new(runtime: Runtime) -> Self {
        Self {
            inner: Arc::new(Inner {
                runtime,
                changed: Notify::new(),
                tick: tokio::sync::Mutex::new(()),
                paused: AtomicBool::new(false),
                notices: broadcast::channel(NOTICES).0,
            }),
        }
    }

    fn runtime(&self) -> &Runtime {
        &self.inner.runtime
    }

    fn journal(&self) -> &Journal {
        self.inner.runtime.journal()
    }

    fn clock(&self) -> &Arc<dyn Clock> {
        self.inner.runtime.clock()
    }

    /// The failure, recovery and pause notices from now on (the console's task-events stream
    /// and the desktop shell follow them).
    pub fn notices(&self) -> broadcast::Receiver<ScheduleNotice> {
        self.inner.notices.subscribe()
    }

    /// Wakes the loop to look at the schedules again (after a change, or after a test moved
    /// its manual clock).
    pub fn changed(&self) {
        self.inner.changed.notify_one();
    }

    /// Pauses (`true`) or resumes (`false`) this process's loop, e.g. from the desktop tray.
    /// While paused the loop claims no due slot; run now and replay still work, since the
    /// person asks for those. On resume, slots that came due meanwhile are handled under each
    /// schedule's missed-run policy, exactly as after the machine slept. Not persisted: a
    /// restart resumes, and another process on the same data dir is not paused.
    pub fn pause(&self, paused: bool) {
        self.inner.paused.store(paused, Ordering::SeqCst);
        self.changed();
    }

    /// Whether [`Scheduler::pause`] paused the loop.
    pub fn is_paused(&self) -> bool {
        self.inner.paused.load(Ordering::SeqCst)
    }

    /// Starts the loop: first it starts Runs that were claimed but never started (a crash or
    /// shutdown in between), then it handles due slots (missed ones per their policy) and
    /// sleeps until the next one; beside it, a watcher records how each Run ends as soon as it
    /// does. Both stop when `cancel` fires or the handle is shut down.
    pub fn start(&self, cancel: CancellationToken) -> SchedulerHandle {
        let tracker = TaskTracker::new();
        let this = self.clone();
        let token = cancel.clone();
        tracker.spawn(async move { this.run_loop(token).await });
        let this = self.clone();
        let token = cancel.clone();
        tracker.spawn(async move { this.watch_runs(token).await });
        SchedulerHandle { cancel, tracker }
    }
}

#[cfg(test)]
mod tests;
