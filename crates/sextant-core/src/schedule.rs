//! Personal schedules and their Runs: the small vocabulary the journal stores and the scheduler
//! and server speak. Cron parsing and next-fire computation live in `sextant-scheduler`; this
//! module only names things. Those the console API sends as such (a schedule's missed-run and
//! overlap policies and source, a Run's trigger and outcome) derive ts-rs, so the UI's
//! bindings get the union of their names.

use serde::{Deserialize, Serialize};

/// What a schedule does about cron slots it could not fire on time (the machine slept, Sextant
/// was not running).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum MissedRunPolicy {
    /// Do not run late. The latest missed slot is recorded as a `missed` Run so the history
    /// shows the gap.
    Skip,
    /// Run once, late, for the latest missed slot, if it is still within the schedule's grace
    /// window; otherwise record it as `missed`.
    RunOnce,
}

impl MissedRunPolicy {
    /// The stored and wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            MissedRunPolicy::Skip => "skip",
            MissedRunPolicy::RunOnce => "run_once",
        }
    }

    /// Parses the stored and wire name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "skip" => Some(MissedRunPolicy::Skip),
            "run_once" => Some(MissedRunPolicy::RunOnce),
            _ => None,
        }
    }
}

/// Why a Run exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum RunTrigger {
    /// A cron slot came due. At most one cron (or catch-up) Run exists per (schedule, slot).
    Cron,
    /// A slot that was missed (the machine slept, Sextant was closed) and ran late, within the
    /// schedule's catch-up window (`missed_run_policy: run_once`).
    Catchup,
    /// An explicit backfill of a past range: one Run per slot, at most one per (schedule,
    /// slot).
    Backfill,
    /// Someone asked for it now ("run now").
    Manual,
    /// A re-run of an earlier Run with that Run's exact prompt and Agent.
    Replay,
}

impl RunTrigger {
    /// The stored and wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            RunTrigger::Cron => "cron",
            RunTrigger::Catchup => "catchup",
            RunTrigger::Backfill => "backfill",
            RunTrigger::Manual => "manual",
            RunTrigger::Replay => "replay",
        }
    }

    /// Parses the stored and wire name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "cron" => Some(RunTrigger::Cron),
            "catchup" => Some(RunTrigger::Catchup),
            "backfill" => Some(RunTrigger::Backfill),
            "manual" => Some(RunTrigger::Manual),
            "replay" => Some(RunTrigger::Replay),
            _ => None,
        }
    }
}

/// Where a schedule was created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum ScheduleSource {
    /// The console UI.
    Console,
    /// The REST API (scripts, curl).
    Api,
    /// An assistant runtime acting for the person.
    Assistant,
}

impl ScheduleSource {
    /// Every source.
    pub const ALL: [ScheduleSource; 3] = [
        ScheduleSource::Console,
        ScheduleSource::Api,
        ScheduleSource::Assistant,
    ];

    /// The stored and wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ScheduleSource::Console => "console",
            ScheduleSource::Api => "api",
            ScheduleSource::Assistant => "assistant",
        }
    }

    /// Parses the stored and wire name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "console" => Some(ScheduleSource::Console),
            "api" => Some(ScheduleSource::Api),
            "assistant" => Some(ScheduleSource::Assistant),
            _ => None,
        }
    }
}

/// What a schedule does when a slot comes due while one of its Runs is still running (its
/// task not ended: working, or waiting for an approval). Run now and replay always start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum OverlapPolicy {
    /// Record the slot as a `skipped` Run and do not run it (the default).
    Skip,
    /// Keep one Run `buffered`: it starts when the running one ends; further slots meanwhile
    /// are skipped.
    BufferOne,
    /// Buffer every such Run; they start one at a time, in slot order.
    BufferAll,
    /// Start it anyway, beside the running one.
    AllowAll,
    /// Ask the runtime to cancel the running Run, then start this one.
    CancelPrevious,
}

impl OverlapPolicy {
    /// Every policy, in the order the docs list them.
    pub const ALL: [OverlapPolicy; 5] = [
        OverlapPolicy::Skip,
        OverlapPolicy::BufferOne,
        OverlapPolicy::BufferAll,
        OverlapPolicy::AllowAll,
        OverlapPolicy::CancelPrevious,
    ];

    /// The stored and wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            OverlapPolicy::Skip => "skip",
            OverlapPolicy::BufferOne => "buffer_one",
            OverlapPolicy::BufferAll => "buffer_all",
            OverlapPolicy::AllowAll => "allow_all",
            OverlapPolicy::CancelPrevious => "cancel_previous",
        }
    }

    /// Parses the stored and wire name.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == s)
    }
}

/// How a Run ended, once it has: what the failure count and the notifications go by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum RunOutcome {
    /// Its task completed.
    Succeeded,
    /// Its task failed or was rejected, or the Run could not start (`failed`, `blocked`).
    Failed,
    /// Its task was canceled: neither a success nor a failure.
    Canceled,
}

impl RunOutcome {
    /// Every outcome.
    pub const ALL: [RunOutcome; 3] = [
        RunOutcome::Succeeded,
        RunOutcome::Failed,
        RunOutcome::Canceled,
    ];

    /// The stored and wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            RunOutcome::Succeeded => "succeeded",
            RunOutcome::Failed => "failed",
            RunOutcome::Canceled => "canceled",
        }
    }

    /// Parses the stored and wire name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "succeeded" => Some(RunOutcome::Succeeded),
            "failed" => Some(RunOutcome::Failed),
            "canceled" => Some(RunOutcome::Canceled),
            _ => None,
        }
    }
}

/// The stored state of a Run before (or instead of) its task. Once a Run has started, its
/// status is its task's state, read from the journal; these values cover the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunRecord {
    /// Claimed (the slot is taken) but not yet admitted to the runtime.
    Pending,
    /// Admitted: a Session and task exist and the task's state is the Run's status.
    Started,
    /// The creator may not call the target Agent (access revoked); nothing ran.
    Blocked,
    /// A cron slot that was not run on time, and the missed-run policy said not to run it late.
    Missed,
    /// The Run could not start (e.g. the Agent is no longer configured).
    Failed,
    /// Not run: an earlier Run of the schedule was still running and the overlap policy said
    /// to skip (`skip`, or `buffer_one` with one already waiting).
    Skipped,
    /// Waiting for the schedule's running Run to end (`buffer_one`, `buffer_all`); it starts
    /// then.
    Buffered,
}

impl RunRecord {
    /// The stored name.
    pub fn as_str(self) -> &'static str {
        match self {
            RunRecord::Pending => "pending",
            RunRecord::Started => "started",
            RunRecord::Blocked => "blocked",
            RunRecord::Missed => "missed",
            RunRecord::Failed => "failed",
            RunRecord::Skipped => "skipped",
            RunRecord::Buffered => "buffered",
        }
    }

    /// Parses the stored name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "pending" => Some(RunRecord::Pending),
            "started" => Some(RunRecord::Started),
            "blocked" => Some(RunRecord::Blocked),
            "missed" => Some(RunRecord::Missed),
            "failed" => Some(RunRecord::Failed),
            "skipped" => Some(RunRecord::Skipped),
            "buffered" => Some(RunRecord::Buffered),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for p in [MissedRunPolicy::Skip, MissedRunPolicy::RunOnce] {
            assert_eq!(MissedRunPolicy::parse(p.as_str()), Some(p));
            assert_eq!(serde_json::to_value(p).unwrap(), p.as_str());
        }
        for t in [
            RunTrigger::Cron,
            RunTrigger::Catchup,
            RunTrigger::Backfill,
            RunTrigger::Manual,
            RunTrigger::Replay,
        ] {
            assert_eq!(RunTrigger::parse(t.as_str()), Some(t));
            // The console API sends the enum itself (serde) where it once sent `as_str`.
            assert_eq!(serde_json::to_value(t).unwrap(), t.as_str());
        }
        for s in ScheduleSource::ALL {
            assert_eq!(ScheduleSource::parse(s.as_str()), Some(s));
            assert_eq!(serde_json::to_value(s).unwrap(), s.as_str());
        }
        for r in [
            RunRecord::Pending,
            RunRecord::Started,
            RunRecord::Blocked,
            RunRecord::Missed,
            RunRecord::Failed,
            RunRecord::Skipped,
            RunRecord::Buffered,
        ] {
            assert_eq!(RunRecord::parse(r.as_str()), Some(r));
        }
        for p in OverlapPolicy::ALL {
            assert_eq!(OverlapPolicy::parse(p.as_str()), Some(p));
            assert_eq!(serde_json::to_value(p).unwrap(), p.as_str());
        }
        for o in RunOutcome::ALL {
            assert_eq!(RunOutcome::parse(o.as_str()), Some(o));
            assert_eq!(serde_json::to_value(o).unwrap(), o.as_str());
        }
        assert_eq!(MissedRunPolicy::parse("later"), None);
    }

    /// The UI's unions are exactly the stored words, and a word this Sextant does not know
    /// (a newer one wrote it) parses as none: the journal then leaves the row out of lists.
    #[test]
    fn bindings_name_the_stored_words_and_unknown_words_name_none() {
        use ts_rs::TS;
        let union = |words: &[&str]| {
            words
                .iter()
                .map(|w| format!("\"{w}\""))
                .collect::<Vec<_>>()
                .join(" | ")
        };
        let cfg = ts_rs::Config::default();
        assert_eq!(
            OverlapPolicy::inline(&cfg),
            union(&OverlapPolicy::ALL.map(OverlapPolicy::as_str))
        );
        assert_eq!(
            ScheduleSource::inline(&cfg),
            union(&ScheduleSource::ALL.map(ScheduleSource::as_str))
        );
        assert_eq!(
            RunOutcome::inline(&cfg),
            union(&RunOutcome::ALL.map(RunOutcome::as_str))
        );
        assert_eq!(OverlapPolicy::parse("queue"), None);
        assert_eq!(ScheduleSource::parse("cli"), None);
        assert_eq!(RunOutcome::parse("timed_out"), None);
        assert_eq!(RunOutcome::parse("Succeeded"), None);
    }
}

/// What a schedule-scoped approval is bound to besides its action: a digest of the schedule's
/// prompt and Agent (`sha256:` of their canonical JSON). A grant made under one fingerprint is
/// void for a Run or a schedule with another.
pub fn grant_fingerprint(prompt: &str, agent_id: &str) -> String {
    crate::action::digest(&serde_json::json!({ "prompt": prompt, "agentId": agent_id }))
}

#[cfg(test)]
mod fingerprint_tests {
    #[test]
    fn prompt_and_agent_both_count() {
        let f = super::grant_fingerprint("echo hi", "shell");
        assert!(f.starts_with("sha256:"));
        assert_eq!(f, super::grant_fingerprint("echo hi", "shell"));
        assert_ne!(f, super::grant_fingerprint("echo hi ", "shell"));
        assert_ne!(f, super::grant_fingerprint("echo hi", "ops"));
    }
}
