//! Gap-free, seq-ordered event streams (DESIGN.md rule 3).
//!
//! Each stream subscribes to the live hub *first*, then reads the journal after the caller's
//! position, then follows the live channel, dropping anything it has already yielded (by seq).
//! If the channel lags (a slow subscriber), it re-reads the journal from its last seq, so a
//! subscriber never silently misses an event. Disconnecting a subscriber cancels nothing.

use std::sync::Arc;

use futures::Stream;
use sextant_core::JournalEvent;
use sextant_core::event::{is_interrupted, is_terminal};
use sextant_journal::{Journal, Live, TaskRow};
use tokio::sync::broadcast::error::RecvError;

/// When a task stream ends by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopAt {
    /// After the event that makes the task terminal.
    Terminal,
    /// After a terminal or interrupted state.
    Settled,
    /// Never (the consumer decides).
    Never,
}

fn ends(stop: StopAt, ev: &JournalEvent) -> bool {
    let Some(state) = ev.body.new_state() else {
        return false;
    };
    match stop {
        StopAt::Terminal => is_terminal(&state),
        StopAt::Settled => is_terminal(&state) || is_interrupted(&state),
        StopAt::Never => false,
    }
}

/// A subscription taken before a new task's first event was published (see
/// [`sextant_journal::Journal::admit_watched`]): it holds every event of the task.
pub(crate) type Seeded = Live;

/// The events of one task after `after_seq`, live.
pub fn task_events(
    journal: &Journal,
    task: &TaskRow,
    after_seq: i64,
    stop: StopAt,
) -> impl Stream<Item = Result<Arc<JournalEvent>, sextant_journal::Error>> + Send + 'static {
    let live = journal.hub().subscribe(&task.session_id);
    follow(journal, task, live, after_seq, true, stop)
}

/// All events of a new task, from a subscription that saw its first event: nothing is read
/// from the journal unless the subscriber lags.
pub(crate) fn task_events_seeded(
    journal: &Journal,
    task: &TaskRow,
    live: Seeded,
    stop: StopAt,
) -> impl Stream<Item = Result<Arc<JournalEvent>, sextant_journal::Error>> + Send + 'static {
    follow(journal, task, live, 0, false, stop)
}

fn follow(
    journal: &Journal,
    task: &TaskRow,
    mut live: Live,
    after_seq: i64,
    catch_up: bool,
    stop: StopAt,
) -> impl Stream<Item = Result<Arc<JournalEvent>, sextant_journal::Error>> + Send + 'static {
    let journal = journal.clone();
    let task_id = task.task_id.clone();
    async_stream::try_stream! {
        let mut last = after_seq;
        let mut catch_up = catch_up;
        loop {
            if catch_up {
                catch_up = false;
                // Each read event goes into its `Arc` before anything borrows it: a borrowed
                // local keeps its room in the stream's state for as long as the stream lives
                // (a `JournalEvent` is over 400 bytes), even after it is moved.
                for ev in journal.task_events(&task_id, last).await?.into_iter().map(Arc::new) {
                    last = ev.seq;
                    let end = ends(stop, &ev);
                    yield ev;
                    if end {
                        return;
                    }
                }
            }
            match live.recv().await {
                Ok(ev) => {
                    if ev.seq <= last || ev.task_id.as_deref() != Some(task_id.as_str()) {
                        continue;
                    }
                    last = ev.seq;
                    let end = ends(stop, &ev);
                    yield ev;
                    if end {
                        return;
                    }
                }
                Err(RecvError::Lagged(missed)) => {
                    tracing::debug!(
                        task_id = task_id.as_str(),
                        missed,
                        "subscriber lagged; resynchronising"
                    );
                    catch_up = true;
                }
                Err(RecvError::Closed) => return,
            }
        }
    }
}

/// The events of one Session after `after_seq`, live, without end.
pub fn session_events(
    journal: &Journal,
    session_id: &str,
    after_seq: i64,
) -> impl Stream<Item = Result<Arc<JournalEvent>, sextant_journal::Error>> + Send + 'static {
    const PAGE: u32 = 500;
    let journal = journal.clone();
    let session_id = session_id.to_string();
    let mut live = journal.hub().subscribe(&session_id);
    async_stream::try_stream! {
        let mut last = after_seq;
        let mut catch_up = true;
        loop {
            while catch_up {
                let page = journal.session_events(&session_id, last, PAGE).await?;
                catch_up = page.len() == PAGE as usize;
                for ev in page {
                    last = ev.seq;
                    yield Arc::new(ev);
                }
            }
            match live.recv().await {
                Ok(ev) => {
                    if ev.seq <= last {
                        continue;
                    }
                    last = ev.seq;
                    yield ev;
                }
                Err(RecvError::Lagged(_)) => catch_up = true,
                Err(RecvError::Closed) => return,
            }
        }
    }
}
