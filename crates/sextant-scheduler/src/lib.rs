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
mod stored;
pub mod timing;
pub mod view;
pub mod words;

use std::sync::Arc;
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
    /// The request conflicts with the state of things (a Run whose task has already ended
    /// cannot be canceled).
    #[error("{0}")]
    Conflict(String),
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
    /// Whether every schedule is paused (see [`Scheduler::set_paused`]); watched by the loop
    /// and by the desktop tray.
    paused: tokio::sync::watch::Sender<bool>,
    /// Failures, recoveries and pauses, for whoever listens ([`Scheduler::notices`]).
    notices: broadcast::Sender<ScheduleNotice>,
}

/// The `settings` key of [`Scheduler::set_paused`].
const PAUSED_KEY: &str = "schedules_paused";

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
                paused: tokio::sync::watch::channel(false).0,
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

    /// Pauses (`true`) or resumes (`false`) every schedule: from the desktop tray, the web
    /// console or the API, all of which see the same flag. It is stored in the journal
    /// (`settings`), so a restart keeps it ([`Scheduler::restore_pause`]). While paused the
    /// loop claims no due slot; run now and replay still work, since the person asks for
    /// those. On resume, slots that came due meanwhile are handled under each schedule's
    /// missed-run policy, exactly as after the machine slept. (Another process on the same data
    /// dir reads the flag at its next start.)
    pub async fn set_paused(&self, paused: bool) -> sextant_journal::Result<()> {
        let value = if paused { "true" } else { "false" };
        self.journal().set_setting(PAUSED_KEY, value).await?;
        self.inner.paused.send_replace(paused);
        tracing::info!(paused, "schedules paused or resumed");
        self.changed();
        Ok(())
    }

    /// Reads the stored pause (call once, before [`Scheduler::start`]).
    pub async fn restore_pause(&self) -> sextant_journal::Result<bool> {
        let paused = self.journal().setting(PAUSED_KEY).await?.as_deref() == Some("true");
        self.inner.paused.send_replace(paused);
        Ok(paused)
    }

    /// Whether every schedule is paused.
    pub fn is_paused(&self) -> bool {
        *self.inner.paused.borrow()
    }

    /// The pause flag as it changes (the desktop tray keeps its check mark in step with it).
    pub fn pause_changes(&self) -> tokio::sync::watch::Receiver<bool> {
        self.inner.paused.subscribe()
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
