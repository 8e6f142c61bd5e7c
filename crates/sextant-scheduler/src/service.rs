//! The schedule operations the API offers, scoped to the calling principal.
//!
//! Scope: a schedule is stored with its creator's principal key and every lookup includes it,
//! so another principal's schedule is indistinguishable from one that does not exist.
//!
//! Access: creating a schedule, enabling it (or pointing it at another Agent while enabled),
//! running it now and replaying a Run all check the creator's current access to the Agent. A
//! refused create or enable is an error; a refused run-now or replay is recorded as a
//! `blocked` Run. Listing, reading, disabling, editing and deleting need no access to the
//! Agent: a person whose access was revoked can still clean up.

use chrono::Duration;
use sextant_core::ids::{format_time, new_id};
use sextant_core::{MissedRunPolicy, Principal, RunRecord, RunTrigger, ScheduleSource};
use sextant_journal::{RunRow, ScheduleRow};

use crate::cron::{CronSpec, FieldError};
use crate::plan::{DEFAULT_GRACE_SECS, GRACE_RANGE_SECS};
use crate::view::{RunView, ScheduleView};
use crate::{Error, Result, Scheduler};

/// Longest schedule name, in characters.
pub const MAX_NAME: usize = 200;
/// Longest prompt, in characters.
pub const MAX_PROMPT: usize = 32 * 1024;

/// The fields of a create or update request. On create, `name`, `prompt`, `cron`, `timezone`
/// and `agent_id` are required; on update, absent fields keep their value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScheduleFields {
    pub name: Option<String>,
    pub prompt: Option<String>,
    pub cron: Option<String>,
    pub timezone: Option<String>,
    pub agent_id: Option<String>,
    pub enabled: Option<bool>,
    pub missed_run_policy: Option<MissedRunPolicy>,
    pub missed_run_grace_secs: Option<i64>,
}

/// A page of Runs, newest first.
#[derive(Debug, Clone)]
pub struct RunsPage {
    pub runs: Vec<RunView>,
    pub total: u64,
    /// (created_at, run_id) of the last Run, when there are more.
    pub next: Option<(String, String)>,
}

fn required(v: Option<String>, field: &'static str, hint: &str) -> Result<String, FieldError> {
    v.ok_or_else(|| FieldError::new(field, format!("is required; {hint}")))
}

fn check_name(name: &str) -> Result<String, FieldError> {
    let name = name.trim();
    if name.is_empty() {
        return Err(FieldError::new("name", "must not be empty"));
    }
    if name.chars().count() > MAX_NAME {
        return Err(FieldError::new(
            "name",
            format!("is longer than {MAX_NAME} characters"),
        ));
    }
    Ok(name.to_string())
}

fn check_prompt(prompt: &str) -> Result<String, FieldError> {
    if prompt.trim().is_empty() {
        return Err(FieldError::new("prompt", "must not be empty"));
    }
    if prompt.chars().count() > MAX_PROMPT {
        return Err(FieldError::new(
            "prompt",
            format!("is longer than {MAX_PROMPT} characters"),
        ));
    }
    Ok(prompt.to_string())
}

fn check_grace(secs: i64) -> Result<i64, FieldError> {
    if GRACE_RANGE_SECS.contains(&secs) {
        Ok(secs)
    } else {
        Err(FieldError::new(
            "missed_run_grace_secs",
            format!(
                "must be between {} and {} seconds",
                GRACE_RANGE_SECS.start(),
                GRACE_RANGE_SECS.end()
            ),
        ))
    }
}

/// The principal's kind as stored (`person`, `anonymous_local`).
fn kind_name(p: &Principal) -> String {
    serde_json::to_value(p.kind)
        .ok()
        .and_then(|v| v.as_str().map(String::from))
        .unwrap_or_default()
}

/// The creator stored with a schedule.
pub(crate) fn creator_of(row: &ScheduleRow) -> Result<Principal> {
    serde_json::from_str(&row.creator_principal).map_err(|e| {
        Error::Journal(sextant_journal::Error::Corrupt(format!(
            "schedule {}: creator: {e}",
            row.schedule_id
        )))
    })
}

impl Scheduler {
    fn check_agent(&self, agent_id: &str) -> Result<(), FieldError> {
        if self.runtime().agent(agent_id).is_some() {
            Ok(())
        } else {
            Err(FieldError::new(
                "agent_id",
                format!("there is no agent {agent_id:?}; GET /api/v1/agents lists them"),
            ))
        }
    }

    fn check_access(&self, principal: &Principal, agent_id: &str) -> Result<()> {
        self.runtime()
            .check_access(principal, agent_id)
            .map_err(Error::Forbidden)
    }

    fn view(&self, row: &ScheduleRow) -> ScheduleView {
        let access = match creator_of(row) {
            Ok(p) => self.runtime().check_access(&p, &row.agent_id),
            Err(e) => Err(e.to_string()),
        };
        ScheduleView::new(row, self.clock().now(), access)
    }

    async fn owned(&self, principal: &Principal, schedule_id: &str) -> Result<ScheduleRow> {
        self.journal()
            .schedule_owned(&principal.key(), schedule_id)
            .await?
            .ok_or(Error::NotFound)
    }

    /// Every problem with `fields` at once, so that a form can show them all (create and
    /// update stop at the first): what creating them (`creating`) or changing a schedule by
    /// them would refuse, field by field. Nothing is read or written; create and update still
    /// check everything themselves.
    pub fn field_errors(&self, fields: &ScheduleFields, creating: bool) -> Vec<FieldError> {
        let now = self.clock().now();
        let mut out = Vec::new();
        let mut given = |v: &Option<String>, field: &'static str, hint: &str| -> Option<String> {
            match v {
                Some(v) => Some(v.clone()),
                None if creating => {
                    out.push(FieldError::new(field, format!("is required; {hint}")));
                    None
                }
                None => None,
            }
        };
        let name = given(&fields.name, "name", "a short label");
        let prompt = given(
            &fields.prompt,
            "prompt",
            "the message sent to the agent at every Run",
        );
        let cron = given(&fields.cron, "cron", "e.g. \"0 9 * * 1-5\"");
        let timezone = given(
            &fields.timezone,
            "timezone",
            "an IANA zone such as \"Europe/Berlin\" or \"UTC\"",
        );
        let agent = given(&fields.agent_id, "agent_id", "the agent each Run calls");
        let mut push = |r: Result<(), FieldError>| {
            if let Err(e) = r {
                out.push(e);
            }
        };
        if let Some(n) = &name {
            push(check_name(n).map(drop));
        }
        if let Some(p) = &prompt {
            push(check_prompt(p).map(drop));
        }
        let tz_ok = timezone.as_deref().map(|tz| {
            let r = crate::cron::parse_timezone(tz).map(drop);
            let ok = r.is_ok();
            push(r);
            ok
        });
        if let Some(c) = &cron {
            match (crate::cron::parse_cron(c), &timezone, tz_ok) {
                (Err(e), _, _) => push(Err(e)),
                // Whether it ever fires, and how often, is judged in its zone.
                (Ok(_), Some(tz), Some(true)) => push(CronSpec::validate(c, tz, now).map(drop)),
                _ => {}
            }
        }
        if let Some(a) = &agent {
            push(self.check_agent(a));
        }
        if let Some(g) = fields.missed_run_grace_secs {
            push(check_grace(g).map(drop));
        }
        out
    }

    /// The principal's schedules, newest first.
    pub async fn list(&self, principal: &Principal) -> Result<Vec<ScheduleView>> {
        let rows = self.journal().schedules_owned(&principal.key()).await?;
        Ok(rows.iter().map(|r| self.view(r)).collect())
    }

    /// One of the principal's schedules.
    pub async fn get(&self, principal: &Principal, schedule_id: &str) -> Result<ScheduleView> {
        Ok(self.view(&self.owned(principal, schedule_id).await?))
    }

    /// Creates a schedule owned by (and always executing as) `principal`.
    pub async fn create(
        &self,
        principal: &Principal,
        fields: ScheduleFields,
        source: ScheduleSource,
    ) -> Result<ScheduleView> {
        let now = self.clock().now();
        let name = check_name(&required(fields.name, "name", "a short label")?)?;
        let prompt = check_prompt(&required(
            fields.prompt,
            "prompt",
            "the message sent to the agent at every Run",
        )?)?;
        let cron = required(fields.cron, "cron", "e.g. \"0 9 * * 1-5\"")?;
        let timezone = required(
            fields.timezone,
            "timezone",
            "an IANA zone such as \"Europe/Berlin\" or \"UTC\"",
        )?;
        let agent_id = required(fields.agent_id, "agent_id", "the agent each Run calls")?;
        let spec = CronSpec::validate(&cron, &timezone, now)?;
        self.check_agent(&agent_id)?;
        self.check_access(principal, &agent_id)?;
        let enabled = fields.enabled.unwrap_or(true);
        let policy = fields.missed_run_policy.unwrap_or(MissedRunPolicy::Skip);
        let grace = check_grace(fields.missed_run_grace_secs.unwrap_or(DEFAULT_GRACE_SECS))?;
        let now_s = format_time(now);
        let row = ScheduleRow {
            schedule_id: new_id(),
            creator: principal.key(),
            creator_kind: kind_name(principal),
            creator_principal: serde_json::to_string(principal)
                .map_err(|e| sextant_journal::Error::Corrupt(e.to_string()))?,
            name,
            prompt,
            cron: cron.trim().to_string(),
            timezone: timezone.trim().to_string(),
            agent_id,
            enabled,
            missed_run_policy: policy.as_str().to_string(),
            missed_run_grace_secs: grace,
            source: source.as_str().to_string(),
            created_at: now_s.clone(),
            updated_at: now_s,
            next_fire_at: if enabled {
                spec.next_after(now).map(format_time)
            } else {
                None
            },
        };
        self.journal().create_schedule(row.clone()).await?;
        self.changed();
        tracing::info!(schedule_id = %row.schedule_id, creator = %row.creator, "schedule created");
        Ok(self.view(&row))
    }

    /// Changes some fields of one of the principal's schedules.
    pub async fn update(
        &self,
        principal: &Principal,
        schedule_id: &str,
        fields: ScheduleFields,
    ) -> Result<ScheduleView> {
        let now = self.clock().now();
        let current = self.owned(principal, schedule_id).await?;
        let mut row = current.clone();
        if let Some(name) = fields.name {
            row.name = check_name(&name)?;
        }
        if let Some(prompt) = fields.prompt {
            row.prompt = check_prompt(&prompt)?;
        }
        if let Some(cron) = fields.cron {
            row.cron = cron.trim().to_string();
        }
        if let Some(tz) = fields.timezone {
            row.timezone = tz.trim().to_string();
        }
        if let Some(agent_id) = fields.agent_id {
            self.check_agent(&agent_id)?;
            row.agent_id = agent_id;
        }
        if let Some(enabled) = fields.enabled {
            row.enabled = enabled;
        }
        if let Some(policy) = fields.missed_run_policy {
            row.missed_run_policy = policy.as_str().to_string();
        }
        if let Some(grace) = fields.missed_run_grace_secs {
            row.missed_run_grace_secs = check_grace(grace)?;
        }
        let spec = CronSpec::validate(&row.cron, &row.timezone, now)?;
        let enabling = row.enabled && (!current.enabled || row.agent_id != current.agent_id);
        if enabling {
            self.check_access(principal, &row.agent_id)?;
        }
        let timing_changed = row.cron != current.cron || row.timezone != current.timezone;
        row.next_fire_at = if !row.enabled {
            None
        } else if !current.enabled || timing_changed || current.next_fire_at.is_none() {
            // Slots that passed while it was disabled are not "missed": start from now.
            spec.next_after(now).map(format_time)
        } else {
            current.next_fire_at.clone()
        };
        row.updated_at = format_time(now);
        if !self.journal().update_schedule(row.clone()).await? {
            return Err(Error::NotFound);
        }
        self.changed();
        Ok(self.view(&row))
    }

    /// Deletes one of the principal's schedules and its Run history (the Runs' Sessions stay).
    pub async fn delete(&self, principal: &Principal, schedule_id: &str) -> Result<()> {
        if !self
            .journal()
            .delete_schedule(&principal.key(), schedule_id)
            .await?
        {
            return Err(Error::NotFound);
        }
        self.changed();
        Ok(())
    }

    /// Runs one of the principal's schedules now (enabled or not), as its creator. A Run is
    /// recorded either way; if the creator may not call the Agent, it is `blocked`.
    pub async fn run_now(&self, principal: &Principal, schedule_id: &str) -> Result<RunView> {
        let schedule = self.owned(principal, schedule_id).await?;
        let prompt = schedule.prompt.clone();
        let agent_id = schedule.agent_id.clone();
        self.start_extra_run(&schedule, RunTrigger::Manual, prompt, agent_id, None)
            .await
    }

    /// Runs an earlier Run again: a new Run with that Run's exact prompt and Agent (not the
    /// schedule's current ones).
    pub async fn replay(
        &self,
        principal: &Principal,
        schedule_id: &str,
        run_id: &str,
    ) -> Result<RunView> {
        let schedule = self.owned(principal, schedule_id).await?;
        let earlier = self
            .journal()
            .run_in(schedule_id, run_id)
            .await?
            .ok_or(Error::NotFound)?;
        self.start_extra_run(
            &schedule,
            RunTrigger::Replay,
            earlier.prompt,
            earlier.agent_id,
            Some(earlier.run_id),
        )
        .await
    }

    async fn start_extra_run(
        &self,
        schedule: &ScheduleRow,
        trigger: RunTrigger,
        prompt: String,
        agent_id: String,
        replay_of: Option<String>,
    ) -> Result<RunView> {
        let now = format_time(self.clock().now());
        let run = RunRow {
            run_id: new_id(),
            schedule_id: schedule.schedule_id.clone(),
            trigger: trigger.as_str().to_string(),
            scheduled_for: now.clone(),
            prompt,
            agent_id,
            executed_as: schedule.creator.clone(),
            record: RunRecord::Pending.as_str().to_string(),
            reason: None,
            session_id: None,
            task_id: None,
            replay_of,
            created_at: now,
            started_at: None,
            finished_at: None,
            task_state: None,
            task_state_at: None,
        };
        self.journal().insert_run(run.clone()).await?;
        let run = self.execute(schedule, run).await?;
        Ok(RunView::from(&run))
    }

    /// A page of one of the principal's schedules' Runs, newest first.
    pub async fn runs(
        &self,
        principal: &Principal,
        schedule_id: &str,
        cursor: Option<(String, String)>,
        limit: u32,
    ) -> Result<RunsPage> {
        self.owned(principal, schedule_id).await?;
        let (mut rows, total) = self
            .journal()
            .runs(schedule_id, cursor, limit.saturating_add(1))
            .await?;
        let more = rows.len() > limit as usize;
        rows.truncate(limit as usize);
        let next = if more {
            rows.last()
                .map(|r| (r.created_at.clone(), r.run_id.clone()))
        } else {
            None
        };
        Ok(RunsPage {
            runs: rows.iter().map(RunView::from).collect(),
            total,
            next,
        })
    }

    /// One Run of one of the principal's schedules.
    pub async fn run(
        &self,
        principal: &Principal,
        schedule_id: &str,
        run_id: &str,
    ) -> Result<RunView> {
        self.owned(principal, schedule_id).await?;
        let run = self
            .journal()
            .run_in(schedule_id, run_id)
            .await?
            .ok_or(Error::NotFound)?;
        Ok(RunView::from(&run))
    }

    /// The grace window of a schedule row.
    pub(crate) fn grace(row: &ScheduleRow) -> Duration {
        Duration::seconds(row.missed_run_grace_secs)
    }
}
