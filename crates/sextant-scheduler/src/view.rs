//! What callers see of a schedule and a Run: the stored row plus what is computed from it
//! (next fire times, a plain-words description, current access, its recent record, a Run's
//! status from its task and how long it took), and the notices the scheduler sends. Field
//! names are the API's (snake_case; the notices, which travel on the task-events stream,
//! camelCase as that stream's other events).

use chrono::{DateTime, Utc};
use chrono_tz::Tz;
use serde::Serialize;
use sextant_core::RunRecord;
use sextant_core::a2a::TaskState;
use sextant_core::event::parse_state;
use sextant_core::ids::format_time;
use sextant_core::schedule::{
    MissedRunPolicy, OverlapPolicy, RunOutcome, RunTrigger, ScheduleSource,
};
use sextant_journal::{History, RunRow, ScheduleRow};

use crate::stored::{assistant_of, timing_of};
use crate::timing::Timing;
use crate::words::Understood;

/// How many next fire times a schedule view lists.
pub const NEXT_RUNS: usize = 5;
/// How many recent outcomes a schedule view lists.
pub const HISTORY: u32 = 20;

/// The first 8 characters of an id, as the console shows it.
pub fn short_id(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

/// A time in words, in `tz`: `Monday 7 December 2026 at 09:00 CET` (seconds only when not
/// zero).
pub fn in_words(t: DateTime<Utc>, tz: Tz) -> String {
    let local = t.with_timezone(&tz);
    let clock = if chrono::Timelike::second(&local) == 0 {
        local.format("%H:%M %Z")
    } else {
        local.format("%H:%M:%S %Z")
    };
    format!("{} at {clock}", local.format("%A %-d %B %Y"))
}

/// One upcoming fire time, in the schedule's zone and in UTC.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct NextRun {
    /// RFC 3339 with the zone's offset, e.g. `2026-12-07T09:00:00+01:00`.
    pub local: String,
    /// RFC 3339 UTC, e.g. `2026-12-07T08:00:00.000Z`.
    pub utc: String,
    /// In words, in the schedule's zone: `Monday 7 December 2026 at 09:00 CET`.
    pub words: String,
}

impl NextRun {
    /// The fire time `t` in `tz`.
    pub fn at(t: DateTime<Utc>, tz: Tz) -> Self {
        Self {
            local: t.with_timezone(&tz).to_rfc3339(),
            utc: format_time(t),
            words: in_words(t, tz),
        }
    }
}

/// Why the scheduler disabled a plan.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct Paused {
    /// E.g. "paused after 3 failed Runs in a row; the last one, Run 01a2…, said: …".
    pub reason: String,
    pub at: String,
}

/// One ended Run in a schedule's recent record.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct RecentRun {
    /// `succeeded`, `failed` or `canceled`.
    pub outcome: RunOutcome,
    pub run_id: String,
    pub scheduled_for: String,
}

/// A schedule's success and failure record.
#[derive(Debug, Clone, Default, PartialEq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct RunHistory {
    /// The latest ended Runs, newest first (at most [`HISTORY`]).
    pub recent: Vec<RecentRun>,
    /// Counts over the whole history.
    #[ts(type = "number")]
    pub succeeded: u64,
    #[ts(type = "number")]
    pub failed: u64,
    #[ts(type = "number")]
    pub canceled: u64,
}

impl From<&History> for RunHistory {
    fn from(h: &History) -> Self {
        Self {
            recent: h
                .recent
                .iter()
                .map(|(outcome, run_id, slot)| RecentRun {
                    outcome: *outcome,
                    run_id: run_id.clone(),
                    scheduled_for: slot.clone(),
                })
                .collect(),
            succeeded: h.succeeded,
            failed: h.failed,
            canceled: h.canceled,
        }
    }
}

/// Whether the creator may currently call the target Agent.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct Access {
    pub allowed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A schedule as the API shows it.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct ScheduleView {
    pub id: String,
    pub name: String,
    pub prompt: String,
    /// The cron expression; `null` for a one-shot plan.
    pub cron: Option<String>,
    /// A one-shot plan's local time (`YYYY-MM-DDTHH:MM:SS` in `timezone`); `null` for a cron
    /// plan.
    pub once_at: Option<String>,
    pub timezone: String,
    pub agent_id: String,
    pub enabled: bool,
    pub missed_run_policy: MissedRunPolicy,
    /// The catch-up window of `run_once`, in seconds.
    pub missed_run_grace_secs: i64,
    /// `skip`, `buffer_one`, `buffer_all`, `allow_all` or `cancel_previous`.
    pub overlap_policy: OverlapPolicy,
    /// Each slot fires up to this many seconds late (fixed per slot).
    pub jitter_secs: i64,
    /// The plan is disabled after this many consecutive failed Runs; `null`: never.
    pub pause_after_failures: Option<i64>,
    /// Failed Runs since the last successful one (or since it was enabled).
    pub consecutive_failures: i64,
    /// Set when the scheduler disabled the plan, with why.
    pub paused: Option<Paused>,
    /// Where it was created: `console`, `api` or `assistant`.
    pub source: ScheduleSource,
    /// The assistant that made it for its owner, when `source` is `assistant`.
    pub source_assistant: Option<String>,
    /// When the plan runs, in plain words.
    pub description: String,
    /// The next slots after now (computed even while disabled, so the expression can be
    /// checked; a disabled schedule does not fire).
    pub next_runs: Vec<NextRun>,
    /// The scheduler's cursor: the next slot it will handle, `None` while disabled.
    pub next_fire_at: Option<String>,
    /// A one-shot plan whose time has passed (it has fired, or was missed).
    pub finished: bool,
    /// Whether Runs may currently call the Agent (the creator's access, and the assistant's
    /// for a plan an assistant made); when not allowed, Runs are recorded as `blocked`.
    pub access: Access,
    /// Recent outcomes and counts.
    pub history: RunHistory,
    /// Only in the answer to a create or update that gave `when` (plain words): what they were
    /// read as.
    pub understood: Option<Understood>,
    pub created_at: String,
    pub updated_at: String,
}

impl ScheduleView {
    /// The view of `row` at `now`; `access` is whether Runs may call the Agent now.
    pub fn new(
        row: &ScheduleRow,
        now: DateTime<Utc>,
        access: Result<(), String>,
        history: &History,
    ) -> Self {
        let timing = timing_of(row).ok();
        let next_runs = timing
            .as_ref()
            .map(|t| {
                t.upcoming(now, NEXT_RUNS)
                    .into_iter()
                    .map(|l| NextRun::at(l.with_timezone(&Utc), t.timezone()))
                    .collect()
            })
            .unwrap_or_default();
        let finished = matches!(&timing, Some(Timing::Once { at, .. }) if *at <= now);
        Self {
            id: row.schedule_id.to_string(),
            name: row.name.clone(),
            prompt: row.prompt.clone(),
            cron: row.once_at.is_none().then(|| row.cron.clone()),
            once_at: row.once_at.clone(),
            timezone: row.timezone.clone(),
            agent_id: row.agent_id.to_string(),
            enabled: row.enabled,
            missed_run_policy: row.missed_run_policy,
            missed_run_grace_secs: row.missed_run_grace_secs,
            overlap_policy: row.overlap_policy,
            jitter_secs: row.jitter_secs,
            pause_after_failures: row.pause_after_failures,
            consecutive_failures: row.consecutive_failures,
            paused: row.paused_reason.as_ref().map(|reason| Paused {
                reason: reason.clone(),
                at: row.paused_at.map(format_time).unwrap_or_default(),
            }),
            source: row.source,
            source_assistant: assistant_of(row).ok().flatten().map(|a| a.subject),
            description: timing.as_ref().map(|t| t.describe()).unwrap_or_default(),
            next_runs,
            next_fire_at: row.next_fire_at.map(format_time),
            finished,
            access: match access {
                Ok(()) => Access {
                    allowed: true,
                    reason: None,
                },
                Err(why) => Access {
                    allowed: false,
                    reason: Some(why),
                },
            },
            history: RunHistory::from(history),
            understood: None,
            created_at: format_time(row.created_at),
            updated_at: format_time(row.updated_at),
        }
    }
}

/// A Run as the API shows it.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct RunView {
    pub id: String,
    pub schedule_id: String,
    /// `cron`, `catchup` (a missed slot run late, within the catch-up window), `backfill`,
    /// `manual` or `replay`.
    pub trigger: RunTrigger,
    /// `pending`, `blocked`, `missed`, `skipped`, `buffered`, `failed` before or instead of a
    /// task; once started, the task's state: `submitted`, `running`, `input_required`,
    /// `auth_required`, `completed`, `failed`, `canceled`, `rejected`.
    pub status: String,
    /// Why it is blocked, missed, skipped, buffered or failed to start; or a note (ran late,
    /// what the overlap policy did).
    pub reason: Option<String>,
    /// The prompt it sent (a snapshot: editing the schedule later does not change it).
    pub prompt: String,
    /// The Agent it called (a snapshot).
    pub agent_id: String,
    /// The principal it ran as (the schedule's creator).
    pub executed_as: String,
    /// The slot, or when run-now / replay was asked.
    pub scheduled_for: String,
    pub created_at: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    /// From start to end, once it has ended.
    #[ts(type = "number | null")]
    pub duration_ms: Option<i64>,
    /// `succeeded`, `failed` or `canceled`, once it has ended.
    pub outcome: Option<RunOutcome>,
    /// The start of its result (the task's output, else its last status message).
    pub result: Option<String>,
    /// The overlap policy that decided it (a backfill's own).
    pub overlap_policy: Option<OverlapPolicy>,
    /// How many seconds after its slot it fired.
    pub jitter_secs: Option<i64>,
    /// The Session it created (each Run has its own).
    pub session_id: Option<String>,
    pub task_id: Option<String>,
    /// The Run this one replays.
    pub replay_of: Option<String>,
}

/// The API status of a task state.
pub fn task_status(state: &TaskState) -> &'static str {
    match state {
        TaskState::Submitted => "submitted",
        TaskState::Working => "running",
        TaskState::InputRequired => "input_required",
        TaskState::AuthRequired => "auth_required",
        TaskState::Completed => "completed",
        TaskState::Failed => "failed",
        TaskState::Canceled => "canceled",
        TaskState::Rejected => "rejected",
        _ => "unknown",
    }
}

impl From<&RunRow> for RunView {
    fn from(r: &RunRow) -> Self {
        let task_state = r.task_state.as_deref().and_then(parse_state);
        let (status, finished_at) = match (r.record, &task_state) {
            (RunRecord::Started, Some(state)) => (
                task_status(state).to_string(),
                state.is_terminal().then_some(r.task_state_at).flatten(),
            ),
            (rec, _) => (rec.as_str().to_string(), r.finished_at),
        };
        let duration_ms = r
            .started_at
            .zip(finished_at)
            .map(|(a, b)| (b - a).num_milliseconds().max(0));
        Self {
            id: r.run_id.to_string(),
            schedule_id: r.schedule_id.to_string(),
            trigger: r.trigger,
            status,
            reason: r.reason.clone(),
            prompt: r.prompt.clone(),
            agent_id: r.agent_id.to_string(),
            executed_as: r.executed_as.to_string(),
            scheduled_for: format_time(r.scheduled_for),
            created_at: format_time(r.created_at),
            started_at: r.started_at.map(format_time),
            finished_at: finished_at.map(format_time),
            duration_ms,
            outcome: r.outcome,
            result: r.result.clone(),
            overlap_policy: r.overlap_policy,
            jitter_secs: r.jitter_secs,
            session_id: r.session_id.as_deref().map(str::to_string),
            task_id: r.task_id.as_deref().map(str::to_string),
            replay_of: r.replay_of.as_deref().map(str::to_string),
        }
    }
}

/// What a [`ScheduleNotice`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum NoticeKind {
    /// A Run failed after a success (or as the plan's first): the plan started failing.
    Failed,
    /// A Run succeeded after failed ones.
    Recovered,
    /// The scheduler disabled the plan after consecutive failures.
    Paused,
}

/// A schedule event worth telling the person about (`event: schedule` on
/// `GET /api/v1/tasks/events`; the desktop shows it as a notification).
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct ScheduleNotice {
    pub kind: NoticeKind,
    pub schedule_id: String,
    pub schedule_name: String,
    /// The Run that caused it.
    pub run_id: String,
    /// Failed Runs in a row, after this one.
    pub consecutive_failures: i64,
    /// One sentence to show, e.g. "A Run of “Backup” failed: disk full".
    pub message: String,
    pub at: String,
}

/// One "Always allow for this schedule" grant, as the schedule's page shows it: the exact
/// action approved (escaped as its card showed it, with its digest), who gave it and when,
/// and whether it still applies.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct ScheduleGrantView {
    pub id: String,
    pub schedule_id: String,
    /// The engine's grant key (`shell:sha256:…`).
    pub grant_key: String,
    /// The approved action: `shown` is what the card showed, `digest` what it is bound to.
    pub action: sextant_core::ApprovedAction,
    pub granted_by: String,
    pub granted_at: String,
    /// The Run, task and interaction it was given on.
    pub run_id: Option<String>,
    pub task_id: String,
    pub interaction_id: String,
    /// Whether it applies to the next Run: false once the schedule's prompt or Agent changed.
    pub active: bool,
    pub voided_at: Option<String>,
    /// Why it no longer applies (`the schedule's prompt changed`).
    pub void_reason: Option<String>,
}

impl ScheduleGrantView {
    /// The view of a stored grant of `schedule` (its current prompt and Agent decide whether
    /// the grant still applies, as they do when a Run uses it).
    pub fn of(g: sextant_journal::GrantRow, schedule: &ScheduleRow) -> Self {
        let now = sextant_core::schedule::grant_fingerprint(&schedule.prompt, &schedule.agent_id);
        let active = g.voided_at.is_none() && g.fingerprint == now;
        let void_reason = match (&g.void_reason, active) {
            (Some(r), _) => Some(r.clone()),
            (None, false) => Some("the schedule's prompt or Agent changed".to_string()),
            (None, true) => None,
        };
        ScheduleGrantView {
            id: g.grant_id,
            schedule_id: g.schedule_id.into(),
            grant_key: g.grant_key,
            action: g.action,
            granted_by: g.granted_by,
            granted_at: format_time(g.granted_at),
            run_id: g.run_id.map(String::from),
            task_id: g.task_id.into(),
            interaction_id: g.interaction_id,
            active,
            voided_at: g.voided_at.map(format_time),
            void_reason,
        }
    }
}
