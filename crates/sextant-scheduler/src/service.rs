//! The schedule operations the API offers, scoped to the calling principal.
//!
//! Scope: a schedule is stored with its creator's principal key and every lookup includes it,
//! so another principal's schedule is indistinguishable from one that does not exist. An
//! assistant acts for its owner ([`Actor`]): the plans it makes are the owner's, run as the
//! owner, and record the assistant as their source.
//!
//! Access: creating a schedule, enabling it (or pointing it at another Agent while enabled),
//! running it now, replaying a Run and backfilling all check the creator's current access to
//! the Agent, and, for a plan an assistant made or for an assistant asking, the assistant's
//! current access too ([`Scheduler::may_run`]); an assistant edits only plans whose Agent it
//! may call itself (it may always disable one). A refused create or enable is an error; a
//! refused run-now or replay is recorded as a `blocked` Run. Listing, reading, disabling,
//! editing and deleting need no access to the Agent: a person whose access was revoked can
//! still clean up.

use chrono::{DateTime, Duration, Utc};
use sextant_core::ids::{AgentId, RunId, ScheduleId, format_time, millis};
use sextant_core::{
    MissedRunPolicy, OverlapPolicy, Principal, PrincipalKind, RunRecord, RunTrigger, ScheduleSource,
};
use sextant_journal::{RunRow, ScheduleRow};

use crate::cron::FieldError;
use crate::plan::{DEFAULT_GRACE_SECS, GRACE_RANGE_SECS};
use crate::stored::{assistant_of, creator_of};
use crate::timing::{ONCE_FORMAT, Timing, jitter};
use crate::view::{RunView, ScheduleView};
use crate::words::{Understood, understand};
use crate::{Error, Result, Scheduler};

/// Longest schedule name, in characters.
pub const MAX_NAME: usize = 200;
/// Longest prompt, in characters.
pub const MAX_PROMPT: usize = 32 * 1024;
/// The largest `pause_after_failures`.
pub const MAX_PAUSE_AFTER: i64 = 100;

/// Who asks for a schedule operation: a principal for itself, or an assistant for its owner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor {
    /// Whose plans these are (and whom Runs execute as).
    pub owner: Principal,
    /// The assistant acting for the owner, if any.
    pub assistant: Option<Principal>,
}

impl Actor {
    /// `p` acting for itself.
    pub fn itself(p: &Principal) -> Self {
        Self {
            owner: p.clone(),
            assistant: None,
        }
    }

    /// `assistant` acting for `owner`.
    pub fn assistant(owner: Principal, assistant: Principal) -> Self {
        Self {
            owner,
            assistant: Some(assistant),
        }
    }
}

impl From<&Principal> for Actor {
    fn from(p: &Principal) -> Self {
        Self::itself(p)
    }
}

impl From<&Actor> for Actor {
    fn from(a: &Actor) -> Self {
        a.clone()
    }
}

/// The fields of a create or update request. On create, `name`, `prompt`, `timezone`,
/// `agent_id` and one of `cron` or `once_at` are required; on update, absent fields keep
/// their value (sending `cron` makes a one-shot plan a cron plan, and `once_at` the other
/// way round).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScheduleFields {
    pub name: Option<String>,
    pub prompt: Option<String>,
    pub cron: Option<String>,
    /// A one-shot plan's local time, `YYYY-MM-DDTHH:MM[:SS]` in the plan's zone.
    pub once_at: Option<String>,
    /// Plain words read into `cron` or `once_at` ([`crate::words`]), instead of either; the
    /// view echoes what they were read as.
    pub when: Option<String>,
    pub timezone: Option<String>,
    pub agent_id: Option<String>,
    pub enabled: Option<bool>,
    pub missed_run_policy: Option<MissedRunPolicy>,
    /// The catch-up window of `run_once`, in seconds.
    pub missed_run_grace_secs: Option<i64>,
    pub overlap_policy: Option<OverlapPolicy>,
    pub jitter_secs: Option<i64>,
    /// `Some(None)` turns pausing off.
    pub pause_after_failures: Option<Option<i64>>,
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

fn check_pause_after(n: Option<i64>) -> Result<Option<i64>, FieldError> {
    match n {
        Some(n) if !(1..=MAX_PAUSE_AFTER).contains(&n) => Err(FieldError::new(
            "pause_after_failures",
            format!("must be between 1 and {MAX_PAUSE_AFTER}, or null (never pause)"),
        )),
        n => Ok(n),
    }
}

/// The cursor and when it is due, for a schedule enabled at `now` (or re-timed then).
pub(crate) fn cursor_from(
    timing: &Timing,
    schedule_id: &str,
    jitter_secs: i64,
    now: DateTime<Utc>,
) -> (Option<DateTime<Utc>>, Option<DateTime<Utc>>) {
    let next = timing.next_after(now).map(millis);
    (
        next,
        next.map(|t| millis(t + jitter(schedule_id, t, jitter_secs))),
    )
}

/// Reads `fields.when` (in the zone the plan will have) into `cron` or `once_at`; what it was
/// read as.
fn read_when(
    fields: &mut ScheduleFields,
    timezone: &str,
    now: DateTime<Utc>,
) -> Result<Option<Understood>, FieldError> {
    let Some(when) = fields.when.take() else {
        return Ok(None);
    };
    if fields.cron.is_some() || fields.once_at.is_some() {
        return Err(FieldError::new(
            "when",
            "send when (plain words), cron or once_at, one of them",
        ));
    }
    let tz = crate::cron::parse_timezone(timezone)?;
    let understood = understand(&when, tz, now)?;
    fields.cron = understood.cron.clone();
    fields.once_at = understood.once_at.clone();
    Ok(Some(understood))
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

    /// Whether `assistant` may still act: its token (by name, in its workspace) is active,
    /// and it may call `agent_id` itself.
    pub(crate) async fn assistant_may_call(
        &self,
        assistant: &Principal,
        agent_id: &str,
    ) -> Result<(), String> {
        if assistant.kind != PrincipalKind::Assistant {
            return Err(format!("{} is not an assistant", assistant.display()));
        }
        let active = self
            .journal()
            .active_credential("assistant", &assistant.subject)
            .await
            .map_err(|e| format!("the assistant's token cannot be checked: {e}"))?;
        match active {
            Some(c) if c.workspace.as_deref() == Some(assistant.issuer.as_str()) => {}
            _ => {
                return Err(format!(
                    "{} was revoked; the plan it made runs again once an assistant token \
                     with that name is issued, or make the plan again yourself",
                    assistant.display()
                ));
            }
        }
        self.runtime()
            .check_access(assistant, agent_id)
            .map_err(|why| format!("{}: {why}", assistant.display()))
    }

    /// Whether a Run of `row` may call `agent_id` now: its creator's current access, and, for
    /// a plan an assistant made, that assistant's (active token, access to the Agent). The
    /// error is the reason, fit to show. Never cached.
    pub(crate) async fn may_run(&self, row: &ScheduleRow, agent_id: &str) -> Result<(), String> {
        let creator = creator_of(row).map_err(|e| e.to_string())?;
        self.runtime()
            .check_access(&creator, agent_id)
            .map_err(|e| e.to_string())?;
        match assistant_of(row).map_err(|e| e.to_string())? {
            Some(a) => self.assistant_may_call(&a, agent_id).await,
            None => Ok(()),
        }
    }

    /// The access check of a create or an enable by `actor`: the owner's, the acting
    /// assistant's, and the plan's own (an assistant-made plan's assistant).
    async fn check_enable(&self, actor: &Actor, row: &ScheduleRow) -> Result<()> {
        self.runtime()
            .check_access(&actor.owner, &row.agent_id)
            .map_err(|e| Error::Forbidden(e.to_string()))?;
        if let Some(a) = &actor.assistant {
            self.assistant_may_call(a, &row.agent_id)
                .await
                .map_err(Error::Forbidden)?;
        }
        self.may_run(row, &row.agent_id)
            .await
            .map_err(Error::Forbidden)
    }

    pub(crate) async fn view(&self, row: &ScheduleRow) -> ScheduleView {
        let access = self.may_run(row, &row.agent_id).await;
        let history = self
            .journal()
            .run_histories(&row.creator, Some(&row.schedule_id), crate::view::HISTORY)
            .await
            .ok()
            .and_then(|mut h| h.remove(row.schedule_id.as_str()))
            .unwrap_or_default();
        ScheduleView::new(row, self.clock().now(), access, &history)
    }

    async fn owned(&self, owner: &Principal, schedule_id: &str) -> Result<ScheduleRow> {
        self.journal()
            .schedule_owned(&owner.key(), schedule_id)
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
        let mut fields = fields.clone();
        let zone = fields.timezone.clone().unwrap_or_else(|| "UTC".into());
        // The zone's error is reported after the name's and the prompt's (form order).
        let tz_err = fields
            .timezone
            .as_deref()
            .and_then(|tz| crate::cron::parse_timezone(tz).err());
        let tz_ok = fields.timezone.as_ref().map(|_| tz_err.is_none());
        // Plain words become cron or once_at (in the plan's zone, once that zone is valid).
        let had_when = fields.when.is_some();
        if tz_ok != Some(false)
            && let Err(e) = read_when(&mut fields, &zone, now)
        {
            out.push(e);
        }
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
        if fields.timezone.is_none() {
            given(
                &None,
                "timezone",
                "an IANA zone such as \"Europe/Berlin\" or \"UTC\"",
            );
        }
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
        if let Some(e) = tz_err {
            push(Err(e));
        }
        // Whether it ever fires, and how often, is judged in its zone.
        let timing = match (&fields.cron, &fields.once_at) {
            (Some(_), Some(_)) => {
                push(Err(FieldError::new(
                    "once_at",
                    "send either cron (a recurring plan) or once_at (a one-shot plan), not both",
                )));
                None
            }
            (Some(c), None) => match crate::cron::parse_cron(c) {
                Err(e) => {
                    push(Err(e));
                    None
                }
                Ok(_) if tz_ok == Some(true) => match Timing::validate_cron(c, &zone, now) {
                    Ok(t) => Some(t),
                    Err(e) => {
                        push(Err(e));
                        None
                    }
                },
                Ok(_) => None,
            },
            (None, Some(at)) if tz_ok == Some(true) => {
                match Timing::validate_once(at, &zone, now) {
                    Ok(t) => Some(t),
                    Err(e) => {
                        push(Err(e));
                        None
                    }
                }
            }
            (None, Some(_)) => None,
            (None, None) => {
                if creating && !had_when {
                    push(Err(FieldError::new(
                        "cron",
                        "is required (or once_at for a one-shot plan, or when in plain words); \
                         e.g. \"0 9 * * 1-5\"",
                    )));
                }
                None
            }
        };
        if let Some(a) = &agent {
            push(self.check_agent(a));
        }
        if let Some(g) = fields.missed_run_grace_secs {
            push(check_grace(g).map(drop));
        }
        if let (Some(j), Some(t)) = (fields.jitter_secs, &timing) {
            push(t.check_jitter(j, now).map(drop));
        }
        if let Some(p) = fields.pause_after_failures.flatten() {
            push(check_pause_after(Some(p)).map(drop));
        }
        out
    }

    /// The owner's schedules, newest first.
    pub async fn list(&self, owner: &Principal) -> Result<Vec<ScheduleView>> {
        let key = owner.key();
        let rows = self.journal().schedules_owned(&key).await?;
        let mut histories = self
            .journal()
            .run_histories(&key, None, crate::view::HISTORY)
            .await?;
        let now = self.clock().now();
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let access = self.may_run(row, &row.agent_id).await;
            let history = histories
                .remove(row.schedule_id.as_str())
                .unwrap_or_default();
            out.push(ScheduleView::new(row, now, access, &history));
        }
        Ok(out)
    }

    /// One of the owner's schedules.
    pub async fn get(&self, owner: &Principal, schedule_id: &str) -> Result<ScheduleView> {
        Ok(self.view(&self.owned(owner, schedule_id).await?).await)
    }

    /// Creates a schedule owned by (and always executing as) `actor.owner`; an assistant's is
    /// recorded with the assistant as its source.
    pub async fn create(
        &self,
        actor: impl Into<Actor>,
        mut fields: ScheduleFields,
        source: ScheduleSource,
    ) -> Result<ScheduleView> {
        let actor = &actor.into();
        let now = self.clock().now();
        let zone = fields.timezone.clone().unwrap_or_else(|| "UTC".into());
        let understood = read_when(&mut fields, &zone, now)?;
        let name = check_name(&required(fields.name, "name", "a short label")?)?;
        let prompt = check_prompt(&required(
            fields.prompt,
            "prompt",
            "the message sent to the agent at every Run",
        )?)?;
        let timezone = required(
            fields.timezone,
            "timezone",
            "an IANA zone such as \"Europe/Berlin\" or \"UTC\"",
        )?;
        let (cron, once_at, timing) = match (fields.cron, fields.once_at) {
            (Some(_), Some(_)) => {
                return Err(FieldError::new(
                    "once_at",
                    "send either cron (a recurring plan) or once_at (a one-shot plan), not both",
                )
                .into());
            }
            (Some(cron), None) => {
                let t = Timing::validate_cron(&cron, &timezone, now)?;
                (cron.trim().to_string(), None, t)
            }
            (None, Some(at)) => {
                let t = Timing::validate_once(&at, &timezone, now)?;
                let local = match &t {
                    Timing::Once { local, .. } => local.format(ONCE_FORMAT).to_string(),
                    Timing::Cron(_) => at,
                };
                (String::new(), Some(local), t)
            }
            (None, None) => {
                return Err(FieldError::new(
                    "cron",
                    "is required (or once_at for a one-shot plan); e.g. \"0 9 * * 1-5\"",
                )
                .into());
            }
        };
        let agent_id = required(fields.agent_id, "agent_id", "the agent each Run calls")?;
        self.check_agent(&agent_id)?;
        let enabled = fields.enabled.unwrap_or(true);
        let policy = fields.missed_run_policy.unwrap_or(MissedRunPolicy::Skip);
        let grace = check_grace(fields.missed_run_grace_secs.unwrap_or(DEFAULT_GRACE_SECS))?;
        let jitter_secs = timing.check_jitter(fields.jitter_secs.unwrap_or(0), now)?;
        let pause_after = check_pause_after(fields.pause_after_failures.flatten())?;
        let (source, source_principal) = match &actor.assistant {
            Some(a) => (
                ScheduleSource::Assistant,
                Some(serde_json::to_string(a).map_err(|e| {
                    sextant_journal::Error::Corrupt(format!("assistant principal: {e}"))
                })?),
            ),
            None => (source, None),
        };
        let schedule_id = ScheduleId::new();
        let (next, due) = if enabled {
            cursor_from(&timing, &schedule_id, jitter_secs, now)
        } else {
            (None, None)
        };
        let now = millis(now);
        let row = ScheduleRow {
            schedule_id,
            creator: actor.owner.caller_key(),
            creator_kind: actor.owner.kind,
            creator_principal: serde_json::to_string(&actor.owner)
                .map_err(|e| sextant_journal::Error::Corrupt(e.to_string()))?,
            name,
            prompt,
            cron,
            timezone: timezone.trim().to_string(),
            agent_id: agent_id.into(),
            enabled,
            missed_run_policy: policy,
            missed_run_grace_secs: grace,
            source,
            created_at: now,
            updated_at: now,
            next_fire_at: next,
            overlap_policy: fields.overlap_policy.unwrap_or(OverlapPolicy::Skip),
            jitter_secs,
            pause_after_failures: pause_after,
            consecutive_failures: 0,
            paused_reason: None,
            paused_at: None,
            once_at,
            source_principal,
            due_at: due,
            editors: Vec::new(),
        };
        self.check_enable(actor, &row).await?;
        self.journal().create_schedule(row.clone()).await?;
        self.changed();
        tracing::info!(schedule_id = %row.schedule_id, creator = %row.creator,
            source = row.source.as_str(), "schedule created");
        let mut view = self.view(&row).await;
        view.understood = understood;
        Ok(view)
    }

    /// Changes some fields of one of the owner's schedules.
    pub async fn update(
        &self,
        actor: impl Into<Actor>,
        schedule_id: &str,
        mut fields: ScheduleFields,
    ) -> Result<ScheduleView> {
        let actor = &actor.into();
        let now = self.clock().now();
        let current = self.owned(&actor.owner, schedule_id).await?;
        // An assistant changes only the plans of Agents it may call itself (it could otherwise
        // put its own prompt in the owner's plan for an Agent it cannot reach); it may always
        // disable one.
        let only_disabling = fields
            == ScheduleFields {
                enabled: Some(false),
                ..Default::default()
            };
        if let (Some(a), false) = (&actor.assistant, only_disabling) {
            let mut agents = vec![current.agent_id.clone()];
            agents.extend(fields.agent_id.clone().map(AgentId::from));
            for agent in agents {
                self.assistant_may_call(a, &agent)
                    .await
                    .map_err(Error::Forbidden)?;
            }
        }
        let zone = fields
            .timezone
            .clone()
            .unwrap_or_else(|| current.timezone.clone());
        let understood = read_when(&mut fields, &zone, now)?;
        let mut row = current.clone();
        if let Some(name) = fields.name {
            row.name = check_name(&name)?;
        }
        if let Some(prompt) = fields.prompt {
            row.prompt = check_prompt(&prompt)?;
        }
        match (fields.cron, fields.once_at) {
            (Some(_), Some(_)) => {
                return Err(FieldError::new(
                    "once_at",
                    "send either cron (a recurring plan) or once_at (a one-shot plan), not both",
                )
                .into());
            }
            (Some(cron), None) => {
                row.cron = cron.trim().to_string();
                row.once_at = None;
            }
            (None, Some(at)) => {
                row.cron = String::new();
                row.once_at = Some(at.trim().to_string());
            }
            (None, None) => {}
        }
        if let Some(tz) = fields.timezone {
            row.timezone = tz.trim().to_string();
        }
        if let Some(agent_id) = fields.agent_id {
            self.check_agent(&agent_id)?;
            row.agent_id = agent_id.into();
        }
        if let Some(enabled) = fields.enabled {
            row.enabled = enabled;
        }
        if let Some(policy) = fields.missed_run_policy {
            row.missed_run_policy = policy;
        }
        if let Some(grace) = fields.missed_run_grace_secs {
            row.missed_run_grace_secs = check_grace(grace)?;
        }
        if let Some(policy) = fields.overlap_policy {
            row.overlap_policy = policy;
        }
        if let Some(n) = fields.pause_after_failures {
            row.pause_after_failures = check_pause_after(n)?;
        }
        let timing_changed = row.cron != current.cron
            || row.timezone != current.timezone
            || row.once_at != current.once_at;
        let enabling = row.enabled && !current.enabled;
        // A one-shot plan that already fired (or whose time passed) only needs its time
        // checked again when the time changes or it is enabled again.
        let timing = match &row.once_at {
            Some(at) if timing_changed || enabling => {
                let t = Timing::validate_once(at, &row.timezone, now)?;
                if let Timing::Once { local, .. } = &t {
                    row.once_at = Some(local.format(ONCE_FORMAT).to_string());
                }
                t
            }
            Some(at) => Timing::once(at, &row.timezone)?,
            None => Timing::validate_cron(&row.cron, &row.timezone, now)?,
        };
        if let Some(j) = fields.jitter_secs {
            row.jitter_secs = timing.check_jitter(j, now)?;
        } else if timing_changed {
            row.jitter_secs = timing.check_jitter(row.jitter_secs, now)?;
        }
        if row.enabled && (enabling || row.agent_id != current.agent_id) {
            self.check_enable(actor, &row).await?;
        }
        if enabling {
            // Enabled again (by hand, or after the scheduler paused it): its failures and the
            // pause are forgotten.
            row.paused_reason = None;
            row.paused_at = None;
            row.consecutive_failures = 0;
        }
        (row.next_fire_at, row.due_at) = if !row.enabled {
            (None, None)
        } else if enabling
            || timing_changed
            || row.jitter_secs != current.jitter_secs
            || current.next_fire_at.is_none()
        {
            // Slots that passed while it was disabled are not "missed": start from now.
            cursor_from(&timing, &row.schedule_id, row.jitter_secs, now)
        } else {
            (current.next_fire_at, current.due_at)
        };
        // An assistant that rewrites what the plan asks for (its prompt or Agent) is, from now
        // on, an author of its Runs' requests: it never answers their cards (the runtime's
        // "own request" rule reads `editors`).
        if let Some(a) = &actor.assistant
            && (row.prompt != current.prompt || row.agent_id != current.agent_id)
        {
            let key = a.key();
            if !row.editors.contains(&key) {
                row.editors.push(key);
            }
        }
        row.updated_at = millis(now);
        if !self
            .journal()
            .update_schedule(row.clone(), enabling)
            .await?
        {
            return Err(Error::NotFound);
        }
        self.changed();
        let mut view = self.view(&row).await;
        view.understood = understood;
        Ok(view)
    }

    /// The "Always allow for this schedule" grants of one of the owner's schedules, newest
    /// first; void ones (the prompt or Agent changed since) are listed as not `active`.
    pub async fn grants(
        &self,
        owner: &Principal,
        schedule_id: &str,
    ) -> Result<Vec<crate::view::ScheduleGrantView>> {
        let schedule = self.owned(owner, schedule_id).await?;
        Ok(self
            .journal()
            .schedule_grants(schedule_id)
            .await?
            .into_iter()
            .map(|g| crate::view::ScheduleGrantView::of(g, &schedule))
            .collect())
    }

    /// Revokes one grant of one of the owner's schedules: the next Run asks again.
    pub async fn revoke_grant(
        &self,
        owner: &Principal,
        schedule_id: &str,
        grant_id: &str,
    ) -> Result<()> {
        self.owned(owner, schedule_id).await?;
        if !self
            .journal()
            .revoke_schedule_grant(schedule_id, grant_id)
            .await?
        {
            return Err(Error::NotFound);
        }
        Ok(())
    }

    /// Deletes one of the owner's schedules and its Run history (the Runs' Sessions stay).
    pub async fn delete(&self, owner: &Principal, schedule_id: &str) -> Result<()> {
        if !self
            .journal()
            .delete_schedule(&owner.key(), schedule_id)
            .await?
        {
            return Err(Error::NotFound);
        }
        self.changed();
        Ok(())
    }

    /// Runs one of the owner's schedules now (enabled or not), as its creator, whatever its
    /// overlap policy (the person asked). A Run is recorded either way; if the creator (or
    /// the acting assistant) may not call the Agent, it is `blocked`.
    pub async fn run_now(&self, actor: impl Into<Actor>, schedule_id: &str) -> Result<RunView> {
        self.run_now_with(actor, schedule_id, None).await
    }

    /// [`Scheduler::run_now`], with this prompt instead of the plan's for this one Run: the
    /// plan is unchanged, and the Run says it ran an edited prompt.
    pub async fn run_now_with(
        &self,
        actor: impl Into<Actor>,
        schedule_id: &str,
        prompt: Option<&str>,
    ) -> Result<RunView> {
        let actor = &actor.into();
        let schedule = self.owned(&actor.owner, schedule_id).await?;
        let edited = match prompt {
            Some(p) if p != schedule.prompt => Some(check_prompt(p)?),
            _ => None,
        };
        let agent_id = schedule.agent_id.clone();
        let Some(prompt) = edited else {
            let prompt = schedule.prompt.clone();
            return self
                .start_extra_run(actor, &schedule, RunTrigger::Manual, prompt, agent_id, None)
                .await;
        };
        let note = "run now with an edited prompt; the plan's own prompt is unchanged";
        self.start_extra_run_noted(
            actor,
            &schedule,
            RunTrigger::Manual,
            prompt,
            agent_id,
            None,
            Some(note.to_string()),
        )
        .await
    }

    /// Runs an earlier Run again: a new Run with that Run's exact prompt and Agent (not the
    /// schedule's current ones).
    pub async fn replay(
        &self,
        actor: impl Into<Actor>,
        schedule_id: &str,
        run_id: &str,
    ) -> Result<RunView> {
        let actor = &actor.into();
        let schedule = self.owned(&actor.owner, schedule_id).await?;
        let earlier = self
            .journal()
            .run_in(schedule_id, run_id)
            .await?
            .ok_or(Error::NotFound)?;
        self.start_extra_run(
            actor,
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
        actor: &Actor,
        schedule: &ScheduleRow,
        trigger: RunTrigger,
        prompt: String,
        agent_id: AgentId,
        replay_of: Option<RunId>,
    ) -> Result<RunView> {
        self.start_extra_run_noted(actor, schedule, trigger, prompt, agent_id, replay_of, None)
            .await
    }

    /// [`start_extra_run`](Self::start_extra_run), with a note on the Run (its `reason`).
    #[allow(clippy::too_many_arguments)]
    async fn start_extra_run_noted(
        &self,
        actor: &Actor,
        schedule: &ScheduleRow,
        trigger: RunTrigger,
        prompt: String,
        agent_id: AgentId,
        replay_of: Option<RunId>,
        note: Option<String>,
    ) -> Result<RunView> {
        let now = millis(self.clock().now());
        let run = RunRow {
            run_id: RunId::new(),
            schedule_id: schedule.schedule_id.clone(),
            trigger,
            scheduled_for: now,
            prompt,
            agent_id,
            executed_as: schedule.creator.clone(),
            record: RunRecord::Pending,
            reason: note,
            session_id: None,
            task_id: None,
            replay_of,
            created_at: now,
            started_at: None,
            finished_at: None,
            task_state: None,
            task_state_at: None,
            overlap_policy: None,
            jitter_secs: None,
            outcome: None,
            result: None,
            settled_at: None,
        };
        self.journal().insert_run(run.clone()).await?;
        // An assistant asking may itself no longer reach the Agent: the Run is blocked then.
        let asked_by = actor.assistant.clone();
        let run = self.execute_as(schedule, run, asked_by.as_ref()).await?;
        Ok(RunView::from(&run))
    }

    /// A page of one of the owner's schedules' Runs, newest first.
    pub async fn runs(
        &self,
        owner: &Principal,
        schedule_id: &str,
        cursor: Option<(String, String)>,
        limit: u32,
    ) -> Result<RunsPage> {
        self.owned(owner, schedule_id).await?;
        let (mut rows, total) = self
            .journal()
            .runs(schedule_id, cursor, limit.saturating_add(1))
            .await?;
        let more = rows.len() > limit as usize;
        rows.truncate(limit as usize);
        let next = if more {
            rows.last()
                .map(|r| (format_time(r.created_at), r.run_id.to_string()))
        } else {
            None
        };
        Ok(RunsPage {
            runs: rows.iter().map(RunView::from).collect(),
            total,
            next,
        })
    }

    /// One Run of one of the owner's schedules.
    pub async fn run(&self, owner: &Principal, schedule_id: &str, run_id: &str) -> Result<RunView> {
        self.owned(owner, schedule_id).await?;
        let run = self
            .journal()
            .run_in(schedule_id, run_id)
            .await?
            .ok_or(Error::NotFound)?;
        Ok(RunView::from(&run))
    }

    /// Cancels a Run's task (queued, running or waiting for a decision), as Stop on the task
    /// does, for the owner or their assistant; the Run as it is then (its outcome, canceled,
    /// is recorded as soon as the task's end is seen).
    pub async fn cancel_run(
        &self,
        actor: impl Into<Actor>,
        schedule_id: &str,
        run_id: &str,
        reason: Option<String>,
    ) -> Result<RunView> {
        let actor = &actor.into();
        self.owned(&actor.owner, schedule_id).await?;
        let run = self
            .journal()
            .run_in(schedule_id, run_id)
            .await?
            .ok_or(Error::NotFound)?;
        let Some(task_id) = run.task_id.clone() else {
            return Err(Error::Conflict(format!(
                "Run {} has not started a task ({}); there is nothing to cancel",
                run.run_id,
                run.record.as_str()
            )));
        };
        let by = match &actor.assistant {
            Some(a) => a.display(),
            None => actor.owner.display(),
        };
        let request = sextant_runtime::CancelRequest { by, reason };
        match self.runtime().cancel(&task_id, &request).await? {
            sextant_runtime::CancelOutcome::AlreadyEnded(state) => {
                return Err(Error::Conflict(format!(
                    "Run {}'s task has already ended ({}); it cannot be canceled",
                    run.run_id,
                    sextant_core::event::state_wire(&state)
                )));
            }
            sextant_runtime::CancelOutcome::NotFound => return Err(Error::NotFound),
            sextant_runtime::CancelOutcome::Canceled(_)
            | sextant_runtime::CancelOutcome::AlreadyCanceled(_) => {}
        }
        let run = self
            .journal()
            .run_in(schedule_id, run_id)
            .await?
            .unwrap_or(run);
        Ok(RunView::from(&run))
    }

    /// The catch-up window of a schedule row.
    pub(crate) fn grace(row: &ScheduleRow) -> Duration {
        Duration::seconds(row.missed_run_grace_secs)
    }
}
