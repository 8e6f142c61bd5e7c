//! What callers see of a schedule and a Run: the stored row plus what is computed from it
//! (next fire times, a plain-words description, current access, a Run's status from its
//! task). Field names are the API's (snake_case).

use chrono::{DateTime, Utc};
use serde::Serialize;
use sextant_core::RunRecord;
use sextant_core::a2a::TaskState;
use sextant_core::event::parse_state;
use sextant_core::ids::format_time;
use sextant_journal::{RunRow, ScheduleRow};

use crate::cron::CronSpec;

/// How many next fire times a schedule view lists.
pub const NEXT_RUNS: usize = 5;

/// One upcoming fire time, in the schedule's zone and in UTC.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct NextRun {
    /// RFC 3339 with the zone's offset, e.g. `2026-12-07T09:00:00+01:00`.
    pub local: String,
    /// RFC 3339 UTC, e.g. `2026-12-07T08:00:00.000Z`.
    pub utc: String,
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
    pub cron: String,
    pub timezone: String,
    pub agent_id: String,
    pub enabled: bool,
    pub missed_run_policy: String,
    pub missed_run_grace_secs: i64,
    /// Where it was created: `console`, `api` or `assistant`.
    pub source: String,
    /// The expression in plain words.
    pub description: String,
    /// The next slots after now (computed even while disabled, so the expression can be
    /// checked; a disabled schedule does not fire).
    pub next_runs: Vec<NextRun>,
    /// The scheduler's cursor: the next slot it will handle, `None` while disabled.
    pub next_fire_at: Option<String>,
    /// The creator's current access to the Agent; when not allowed, cron Runs are recorded
    /// as `blocked`.
    pub access: Access,
    pub created_at: String,
    pub updated_at: String,
}

impl ScheduleView {
    /// The view of `row` at `now`; `access` is the creator's current access to the Agent.
    pub fn new(row: &ScheduleRow, now: DateTime<Utc>, access: Result<(), String>) -> Self {
        let spec = CronSpec::parse(&row.cron, &row.timezone).ok();
        let next_runs = spec
            .as_ref()
            .map(|s| {
                s.upcoming(now, NEXT_RUNS)
                    .into_iter()
                    .map(|t| NextRun {
                        local: t.to_rfc3339(),
                        utc: format_time(t.with_timezone(&Utc)),
                    })
                    .collect()
            })
            .unwrap_or_default();
        Self {
            id: row.schedule_id.clone(),
            name: row.name.clone(),
            prompt: row.prompt.clone(),
            cron: row.cron.clone(),
            timezone: row.timezone.clone(),
            agent_id: row.agent_id.clone(),
            enabled: row.enabled,
            missed_run_policy: row.missed_run_policy.clone(),
            missed_run_grace_secs: row.missed_run_grace_secs,
            source: row.source.clone(),
            description: spec.map(|s| s.describe()).unwrap_or_default(),
            next_runs,
            next_fire_at: row.next_fire_at.clone(),
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
            created_at: row.created_at.clone(),
            updated_at: row.updated_at.clone(),
        }
    }
}

/// A Run as the API shows it.
#[derive(Debug, Clone, PartialEq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct RunView {
    pub id: String,
    pub schedule_id: String,
    /// `cron`, `manual` or `replay`.
    pub trigger: String,
    /// `pending`, `blocked`, `missed`, `failed` before or instead of a task; once started,
    /// the task's state: `submitted`, `running`, `input_required`, `auth_required`,
    /// `completed`, `failed`, `canceled`, `rejected`.
    pub status: String,
    /// Why it is blocked, missed or failed to start; or a note (ran late).
    pub reason: Option<String>,
    /// The prompt it sent (a snapshot: editing the schedule later does not change it).
    pub prompt: String,
    /// The Agent it called (a snapshot).
    pub agent_id: String,
    /// The principal it ran as (the schedule's creator).
    pub executed_as: String,
    /// The cron slot, or when run-now / replay was asked.
    pub scheduled_for: String,
    pub created_at: String,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
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
        let (status, finished_at) = match (RunRecord::parse(&r.record), &task_state) {
            (Some(RunRecord::Started), Some(state)) => (
                task_status(state).to_string(),
                state
                    .is_terminal()
                    .then(|| r.task_state_at.clone())
                    .flatten(),
            ),
            (Some(rec), _) => (rec.as_str().to_string(), r.finished_at.clone()),
            (None, _) => (r.record.clone(), r.finished_at.clone()),
        };
        Self {
            id: r.run_id.clone(),
            schedule_id: r.schedule_id.clone(),
            trigger: r.trigger.clone(),
            status,
            reason: r.reason.clone(),
            prompt: r.prompt.clone(),
            agent_id: r.agent_id.clone(),
            executed_as: r.executed_as.clone(),
            scheduled_for: r.scheduled_for.clone(),
            created_at: r.created_at.clone(),
            started_at: r.started_at.clone(),
            finished_at,
            session_id: r.session_id.clone(),
            task_id: r.task_id.clone(),
            replay_of: r.replay_of.clone(),
        }
    }
}
