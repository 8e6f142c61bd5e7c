//! How Runs end: once a Run's task has ended (or the Run could not start), its outcome and a
//! snippet of its result are recorded, once ([`Scheduler::settle_run`]). That moves the
//! schedule's count of consecutive failures, pauses the plan when the count reaches its
//! `pause_after_failures`, and sends [`ScheduleNotice`]s: the first failure after a success,
//! the recovery after failures, and the pause.
//!
//! A watcher follows the journal's live events and settles a Run as soon as its task ends;
//! every tick also settles whatever ended unseen (after a restart, a lagging subscription, or
//! in another process), so the recorded outcome is a cache the journal can always rebuild.
//! The watcher knows a Run's task when it sees it created (its input carries the Run's id in
//! its `sextant` metadata) or, for those created before it started, from the journal, so a
//! task that is not a Run's ends without a read.

use std::collections::HashSet;
use std::sync::Arc;

use sextant_core::a2a::TaskState;
use sextant_core::ids::format_time;
use sextant_core::projection::{TaskFold, message_text};
use sextant_core::{JournalEvent, RunOutcome, RunRecord};
use sextant_journal::{RunRow, Settled};
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};
use tokio_util::sync::CancellationToken;

use crate::view::{NoticeKind, ScheduleNotice, short_id};
use crate::{Result, Scheduler};

/// The longest result snippet kept on a Run, in characters.
pub const SNIPPET: usize = 500;

/// Runs settled per query when catching up.
const BATCH: u32 = 200;

/// Ended tasks looked up per query by the watcher.
const WATCH_BATCH: usize = 256;

/// `text` cut to [`SNIPPET`] characters (with an ellipsis), trimmed; `None` when empty.
pub fn snippet(text: &str) -> Option<String> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let c = sextant_core::text::cut(text, SNIPPET);
    Some(if c.cut {
        // Trimmed before the marker: no "word …" when the cut falls after a space.
        format!("{}…", c.kept.trim_end())
    } else {
        text.to_string()
    })
}

/// What a task's fold says about how it ended: its outcome, and the text that best shows its
/// result (its output, else its last status message, else its reply).
fn outcome_of(fold: &TaskFold) -> Option<(RunOutcome, Option<String>)> {
    let outcome = match fold.state {
        TaskState::Completed => RunOutcome::Succeeded,
        TaskState::Failed | TaskState::Rejected => RunOutcome::Failed,
        TaskState::Canceled => RunOutcome::Canceled,
        _ => return None,
    };
    let output: String = fold
        .artifacts
        .iter()
        .flat_map(|a| a.parts.iter().filter_map(|p| p.as_text()))
        .collect::<Vec<_>>()
        .join("");
    let text = [
        output,
        fold.status_message
            .as_ref()
            .map(message_text)
            .unwrap_or_default(),
        fold.reply.as_ref().map(message_text).unwrap_or_default(),
    ]
    .into_iter()
    .find_map(|t| snippet(&t));
    Some((outcome, text))
}

/// What the watcher took from its subscription in one go.
#[derive(Debug, Default, PartialEq)]
struct Drained {
    /// Tasks created for Runs (their input names the Run), in the order they came.
    runs: Vec<String>,
    /// Tasks that ended, in the order their events came.
    ended: Vec<String>,
    /// Events were missed (the subscription lagged).
    lagged: bool,
    /// The journal's hub is gone.
    closed: bool,
}

/// `first` and whatever else is queued already, up to [`WATCH_BATCH`] ended tasks.
fn drain(
    first: Result<Arc<JournalEvent>, RecvError>,
    rx: &mut broadcast::Receiver<Arc<JournalEvent>>,
) -> Drained {
    let mut out = Drained::default();
    let mut next = Some(first);
    while let Some(ev) = next.take() {
        match ev {
            Ok(ev) => {
                if let Some(task_id) = &ev.task_id {
                    if ev.body.new_state().is_some_and(|s| s.is_terminal()) {
                        out.ended.push(task_id.clone());
                    } else if is_run_input(&ev.body) {
                        out.runs.push(task_id.clone());
                    }
                }
            }
            Err(RecvError::Lagged(_)) => out.lagged = true,
            Err(RecvError::Closed) => out.closed = true,
        }
        if out.ended.len() < WATCH_BATCH && !out.closed {
            next = match rx.try_recv() {
                Ok(ev) => Some(Ok(ev)),
                Err(TryRecvError::Lagged(n)) => Some(Err(RecvError::Lagged(n))),
                Err(TryRecvError::Closed) => Some(Err(RecvError::Closed)),
                Err(TryRecvError::Empty) => None,
            };
        }
    }
    out
}

/// Whether `body` creates a task for a Run: the scheduler's input names the Run in its
/// `sextant` metadata (`Scheduler::execute_as`).
fn is_run_input(body: &sextant_core::EventBody) -> bool {
    let sextant_core::EventBody::TaskCreated { message } = body else {
        return false;
    };
    message
        .metadata
        .as_ref()
        .and_then(|m| m.get("sextant"))
        .and_then(|s| s.get("runId"))
        .is_some()
}

/// Of `ended`, the tasks in `runs` (which forgets them): the only ones worth a lookup. A task
/// created for a Run in the same drain as its end is in `runs` by then.
fn runs_ended(runs: &mut HashSet<String>, created: Vec<String>, ended: Vec<String>) -> Vec<String> {
    runs.extend(created);
    ended.into_iter().filter(|t| runs.remove(t)).collect()
}

impl Scheduler {
    /// Follows the journal and settles each Run as its task ends, until `cancel`.
    ///
    /// Only a Run's task is looked up when it ends: the watcher learns them as they are
    /// created (and, at its start and after a lag, from the journal), so the many tasks that
    /// are no Run's cost no read. The events already queued are taken together (up to
    /// [`WATCH_BATCH`]), so a burst of ended Runs costs one read.
    pub(crate) async fn watch_runs(self, cancel: CancellationToken) {
        let mut rx = self.journal().hub().subscribe_all();
        let mut runs = self.running_run_tasks().await;
        if let Err(e) = self.settle_ended().await {
            tracing::warn!(error = %e, "scheduler: could not record how Runs ended");
        }
        loop {
            let first = tokio::select! {
                _ = cancel.cancelled() => break,
                ev = rx.recv() => ev,
            };
            let Drained {
                runs: created,
                ended,
                lagged,
                closed,
            } = drain(first, &mut rx);
            let ended = runs_ended(&mut runs, created, ended);
            if !ended.is_empty() {
                match self.journal().runs_by_tasks(ended).await {
                    Ok(runs) => {
                        for run in runs {
                            if let Err(e) = self.settle_run(&run).await {
                                tracing::warn!(run_id = %run.run_id, error = %e,
                                    "could not record the Run's outcome");
                            }
                        }
                    }
                    Err(e) => tracing::warn!(error = %e, "scheduler: run lookup failed"),
                }
            }
            // Events were missed: the Runs' tasks are read again, and whatever ended unseen is
            // settled from the journal.
            if lagged {
                runs = self.running_run_tasks().await;
                if let Err(e) = self.settle_ended().await {
                    tracing::warn!(error = %e, "scheduler: could not record how Runs ended");
                }
            }
            if closed {
                break;
            }
        }
    }

    /// The tasks of the Runs that may still end, from the journal. Read after subscribing, so
    /// a Run started meanwhile is here or among the events. If the read fails the set starts
    /// empty: those Runs are settled by a later tick instead of at once.
    async fn running_run_tasks(&self) -> HashSet<String> {
        match self.journal().running_run_tasks().await {
            Ok(ids) => ids.into_iter().collect(),
            Err(e) => {
                tracing::warn!(error = %e, "scheduler: could not read the running Runs");
                HashSet::new()
            }
        }
    }

    /// Settles every Run that ended without its outcome recorded; how many it settled.
    pub async fn settle_ended(&self) -> Result<usize> {
        let mut n = 0;
        loop {
            let runs = self.journal().unsettled_runs(BATCH).await?;
            let full = runs.len() as u32 == BATCH;
            let mut progressed = false;
            for run in &runs {
                progressed |= self.settle_run(run).await?.is_some();
                n += 1;
            }
            if !full || !progressed {
                return Ok(n);
            }
        }
    }

    /// Records how `run` ended, if it has and nobody did yet: its outcome and result snippet,
    /// the schedule's failure count (pausing the plan at its limit), the notices, and a wake
    /// of the loop (a buffered Run may start now).
    pub async fn settle_run(&self, run: &RunRow) -> Result<Option<Settled>> {
        if run.settled_at.is_some() {
            return Ok(None);
        }
        let (outcome, result) = match run.record {
            RunRecord::Started => {
                let Some(task_id) = run.task_id.as_deref() else {
                    return Ok(None);
                };
                let Some(task) = self.journal().task(task_id).await? else {
                    return Ok(None);
                };
                if !task.state.is_terminal() {
                    return Ok(None);
                }
                let fold = self.runtime().project(&task).await?;
                match outcome_of(&fold) {
                    Some(o) => o,
                    None => return Ok(None),
                }
            }
            RunRecord::Failed | RunRecord::Blocked => {
                (RunOutcome::Failed, run.reason.as_deref().and_then(snippet))
            }
            _ => return Ok(None),
        };
        let now = self.clock().now();
        let why = result.clone().unwrap_or_else(|| match run.record {
            RunRecord::Blocked => "it was blocked".into(),
            _ => "it failed".into(),
        });
        let last = format!(
            "the last one, Run {} for {}, {}",
            short_id(&run.run_id),
            format_time(run.scheduled_for),
            if result.is_some() {
                format!("said: {why}")
            } else {
                why.clone()
            }
        );
        let settled = self
            .journal()
            .settle_run(
                &run.run_id,
                outcome,
                result.clone(),
                now,
                move |n| match n {
                    1 => format!("paused after a failed Run; {last}"),
                    n => format!("paused after {n} failed Runs in a row; {last}"),
                },
            )
            .await?;
        let Some(s) = settled else {
            return Ok(None);
        };
        tracing::info!(run_id = %run.run_id, schedule_id = %s.schedule_id,
            outcome = outcome.as_str(), failures = s.failures_after, paused = s.paused.is_some(),
            "run settled");
        let notice = |kind: NoticeKind, message: String| ScheduleNotice {
            kind,
            schedule_id: s.schedule_id.to_string(),
            schedule_name: s.schedule_name.clone(),
            run_id: run.run_id.to_string(),
            consecutive_failures: s.failures_after,
            message,
            at: format_time(now),
        };
        let mut notices = Vec::new();
        match outcome {
            RunOutcome::Failed if s.failures_before == 0 => notices.push(notice(
                NoticeKind::Failed,
                format!("A Run of \u{201c}{}\u{201d} failed: {why}", s.schedule_name),
            )),
            RunOutcome::Succeeded if s.failures_before > 0 => notices.push(notice(
                NoticeKind::Recovered,
                format!(
                    "\u{201c}{}\u{201d} recovered: a Run succeeded after {} failed one(s)",
                    s.schedule_name, s.failures_before
                ),
            )),
            _ => {}
        }
        if let Some(reason) = &s.paused {
            notices.push(notice(
                NoticeKind::Paused,
                format!("\u{201c}{}\u{201d} was {reason}", s.schedule_name),
            ));
        }
        for n in notices {
            // Nobody listening (no console, no desktop shell) is fine: the Runs say it all.
            let _ = self.inner.notices.send(n);
        }
        self.changed();
        Ok(Some(s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snippets_are_cut_on_a_character_boundary() {
        assert_eq!(snippet("  \n "), None);
        assert_eq!(snippet(" ok\n").as_deref(), Some("ok"));
        let long = "é".repeat(SNIPPET + 10);
        let s = snippet(&long).unwrap();
        assert_eq!(s.chars().count(), SNIPPET + 1);
        assert!(s.ends_with('…'));
    }

    fn ev(task: &str, state: TaskState) -> Arc<JournalEvent> {
        Arc::new(JournalEvent {
            session_id: "s".into(),
            seq: 1,
            task_id: Some(task.into()),
            at: chrono::Utc::now(),
            body: sextant_core::EventBody::TaskState {
                state,
                message: None,
            },
        })
    }

    #[test]
    fn the_watcher_takes_every_queued_ended_task_in_one_go() {
        let (tx, mut rx) = broadcast::channel(1024);
        for n in 0..300 {
            let state = if n % 3 == 0 {
                TaskState::Working
            } else {
                TaskState::Completed
            };
            tx.send(ev(&format!("t{n}"), state)).unwrap();
        }
        let first = rx.try_recv().map_err(|_| RecvError::Closed);
        let d = drain(first, &mut rx);
        // 200 ended tasks were queued: all of them in one lookup, in order.
        assert_eq!(d.ended.len(), 200);
        assert_eq!(d.ended[0], "t1");
        assert_eq!(d.ended[199], "t299");
        assert!(!d.lagged && !d.closed);
        assert!(rx.try_recv().is_err(), "nothing left behind");

        // At most WATCH_BATCH at once; the rest waits for the next round.
        for n in 0..WATCH_BATCH + 10 {
            tx.send(ev(&format!("u{n}"), TaskState::Failed)).unwrap();
        }
        let first = rx.try_recv().map_err(|_| RecvError::Closed);
        assert_eq!(drain(first, &mut rx).ended.len(), WATCH_BATCH);
        let first = rx.try_recv().map_err(|_| RecvError::Closed);
        assert_eq!(drain(first, &mut rx).ended.len(), 10);

        // A lag is reported (the caller then settles from the journal), a closed hub too.
        let (tx, mut rx) = broadcast::channel(4);
        for n in 0..10 {
            tx.send(ev(&format!("v{n}"), TaskState::Canceled)).unwrap();
        }
        drop(tx);
        let first = rx.try_recv().map_err(|_| RecvError::Lagged(6));
        let d = drain(first, &mut rx);
        assert!(d.lagged && d.closed);
        assert_eq!(d.ended, vec!["v6", "v7", "v8", "v9"]);
    }

    fn created(task: &str, metadata: Option<serde_json::Value>) -> Arc<JournalEvent> {
        let mut message =
            sextant_core::a2a::Message::new(sextant_core::a2a::Role::User, Vec::new());
        message.metadata = metadata.and_then(|m| serde_json::from_value(m).ok());
        Arc::new(JournalEvent {
            session_id: "s".into(),
            seq: 1,
            task_id: Some(task.into()),
            at: chrono::Utc::now(),
            body: sextant_core::EventBody::TaskCreated { message },
        })
    }

    /// Only the tasks of Runs are looked up when they end: those created with a Run's id in
    /// their input (also in the same drain as their end) and those the journal named at the
    /// start; other tasks, including one whose input has other `sextant` metadata, are not.
    #[test]
    fn only_runs_tasks_are_looked_up_when_they_end() {
        let run = |id: &str| Some(serde_json::json!({"sextant": {"runId": id, "scheduleId": "p"}}));
        let (tx, mut rx) = broadcast::channel(64);
        tx.send(created("a2a-task", None)).unwrap();
        tx.send(created(
            "other",
            Some(serde_json::json!({"sextant": {"hop": 1}})),
        ))
        .unwrap();
        tx.send(created("run-task", run("r1"))).unwrap();
        for t in ["a2a-task", "other", "run-task", "seeded"] {
            tx.send(ev(t, TaskState::Completed)).unwrap();
        }
        let first = rx.try_recv().map_err(|_| RecvError::Closed);
        let d = drain(first, &mut rx);
        assert_eq!(d.runs, vec!["run-task"]);
        let mut runs: HashSet<String> = ["seeded".to_string()].into();
        let ended = runs_ended(&mut runs, d.runs, d.ended);
        assert_eq!(ended, vec!["run-task", "seeded"]);
        assert!(runs.is_empty(), "ended Runs are forgotten: {runs:?}");
    }
}
