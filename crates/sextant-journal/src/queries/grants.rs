//! `schedule_grants`: "Always allow for this schedule". The person approved one exact action
//! (its grant key, which names the action's digest) for every later Run of one schedule,
//! bound to the fingerprint of the schedule's prompt and Agent at the time
//! (`sextant_core::schedule::grant_fingerprint`). A grant applies to a Run only while the
//! schedule, the Run's own snapshot and the grant share that fingerprint and the grant is not
//! void; changing the schedule's prompt or Agent voids it for good ([`void_changed`]).

use chrono::{DateTime, Utc};
use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::Serialize;
use sextant_core::ApprovedAction;
use sextant_core::ids::{RunId, ScheduleId, TaskId};
use sextant_core::schedule::grant_fingerprint;

use crate::TaskRow;
use crate::error::{Error, Result};
use crate::stored::{self, Sql};

/// One stored grant.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GrantRow {
    pub grant_id: String,
    pub schedule_id: ScheduleId,
    /// The interaction's grant key (`shell:sha256:…`).
    pub grant_key: String,
    /// The approved action's digest.
    pub digest: String,
    /// The approved action, as the card showed it.
    pub action: ApprovedAction,
    /// The fingerprint of the prompt and Agent it was given under.
    pub fingerprint: String,
    /// `Principal::display()` of who answered.
    pub granted_by: String,
    #[serde(with = "crate::stored::time")]
    pub granted_at: DateTime<Utc>,
    pub run_id: Option<RunId>,
    pub task_id: TaskId,
    pub interaction_id: String,
    /// When the schedule's prompt or Agent changed (the grant no longer applies), and how.
    #[serde(with = "crate::stored::time::opt")]
    pub voided_at: Option<DateTime<Utc>>,
    pub void_reason: Option<String>,
}

const COLUMNS: &str = "grant_id, schedule_id, grant_key, digest, action, fingerprint, granted_by, \
                       granted_at, run_id, task_id, interaction_id, voided_at, void_reason";

fn row(r: &Row<'_>) -> rusqlite::Result<GrantRow> {
    let action: String = r.get(4)?;
    let action = serde_json::from_str(&action).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(4, rusqlite::types::Type::Text, Box::new(e))
    })?;
    Ok(GrantRow {
        grant_id: r.get(0)?,
        schedule_id: stored::get(r, 1)?,
        grant_key: r.get(2)?,
        digest: r.get(3)?,
        action,
        fingerprint: r.get(5)?,
        granted_by: r.get(6)?,
        granted_at: stored::get(r, 7)?,
        run_id: stored::get_opt(r, 8)?,
        task_id: stored::get(r, 9)?,
        interaction_id: r.get(10)?,
        voided_at: stored::get_opt(r, 11)?,
        void_reason: r.get(12)?,
    })
}

/// What a task that is a schedule's Run is scoped to: its schedule, and the grants that apply.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunScope {
    pub run_id: RunId,
    pub schedule_id: ScheduleId,
    pub schedule_name: String,
    /// The fingerprint of the Run's own prompt and Agent (its snapshot).
    pub fingerprint: String,
    /// Whether the Run runs the schedule's current prompt and Agent: only then may a grant be
    /// given on its card or used by it (a run-now with another prompt, or a Run started
    /// before an edit, neither gives nor uses one).
    pub current: bool,
    /// The grant keys that apply to this Run (empty unless `current`).
    pub grants: Vec<String>,
}

/// The Run a task is, if it is one: the task a Run admitted (its messageId and contextId are
/// `run-<run_id>`), in a Session the scheduler started (origin `schedule`), as the Run's
/// principal, for the Run's Agent. A follow-up message in a Run's conversation is not a Run.
pub fn run_scope(c: &Connection, task: &TaskRow) -> Result<Option<RunScope>> {
    let Some(run_id) = task.message_id.strip_prefix("run-") else {
        return Ok(None);
    };
    if task.context_id != task.message_id {
        return Ok(None);
    }
    let found = c
        .prepare_cached(
            "SELECT r.schedule_id, s.name, s.prompt, s.agent_id, r.prompt, r.agent_id
               FROM runs r
               JOIN schedules s ON s.schedule_id = r.schedule_id
               JOIN sessions se ON se.session_id = ?2 AND se.origin = 'schedule'
              WHERE r.run_id = ?1 AND r.executed_as = ?3 AND r.agent_id = ?4
                AND (r.session_id IS NULL OR r.session_id = ?2)
                AND (r.task_id IS NULL OR r.task_id = ?5)",
        )?
        .query_row(
            params![
                run_id,
                task.session_id.as_str(),
                task.caller.as_str(),
                task.agent_id.as_str(),
                task.task_id.as_str()
            ],
            |r| {
                Ok((
                    stored::get::<ScheduleId>(r, 0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                ))
            },
        )
        .optional()?;
    let Some((schedule_id, schedule_name, s_prompt, s_agent, r_prompt, r_agent)) = found else {
        return Ok(None);
    };
    let fingerprint = grant_fingerprint(&r_prompt, &r_agent);
    let current = fingerprint == grant_fingerprint(&s_prompt, &s_agent);
    let grants = if current {
        c.prepare_cached(
            "SELECT grant_key FROM schedule_grants
              WHERE schedule_id = ?1 AND fingerprint = ?2 AND voided_at IS NULL
              ORDER BY granted_at",
        )?
        .query_map(params![schedule_id.as_str(), fingerprint], |r| r.get(0))?
        .collect::<rusqlite::Result<Vec<String>>>()?
    } else {
        Vec::new()
    };
    Ok(Some(RunScope {
        run_id: run_id.into(),
        schedule_id,
        schedule_name,
        fingerprint,
        current,
        grants,
    }))
}

/// Records a grant, replacing an earlier one for the same schedule and action (a void one
/// included). `g.grant_id` is the new grant's id.
pub fn put(c: &Connection, g: &GrantRow) -> Result<()> {
    let action = serde_json::to_string(&g.action)
        .map_err(|e| Error::Corrupt(format!("schedule grant action: {e}")))?;
    c.prepare_cached("DELETE FROM schedule_grants WHERE schedule_id = ?1 AND grant_key = ?2")?
        .execute(params![g.schedule_id.as_str(), g.grant_key])?;
    c.prepare_cached(
        "INSERT INTO schedule_grants (grant_id, schedule_id, grant_key, digest, action,
             fingerprint, granted_by, granted_at, run_id, task_id, interaction_id, voided_at,
             void_reason)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    )?
    .execute(params![
        g.grant_id,
        g.schedule_id.as_str(),
        g.grant_key,
        g.digest,
        action,
        g.fingerprint,
        g.granted_by,
        Sql(g.granted_at),
        g.run_id.as_deref(),
        g.task_id.as_str(),
        g.interaction_id,
        g.voided_at.map(Sql),
        g.void_reason,
    ])?;
    Ok(())
}

/// A schedule's grants, newest first (void ones too).
pub fn list(c: &Connection, schedule_id: &str) -> Result<Vec<GrantRow>> {
    c.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM schedule_grants WHERE schedule_id = ?1
          ORDER BY granted_at DESC, grant_id DESC"
    ))?
    .query_map([schedule_id], row)?
    .collect::<rusqlite::Result<_>>()
    .map_err(Into::into)
}

/// Revokes (deletes) one grant of a schedule; whether it existed.
pub fn revoke(c: &Connection, schedule_id: &str, grant_id: &str) -> Result<bool> {
    Ok(
        c.prepare_cached("DELETE FROM schedule_grants WHERE schedule_id = ?1 AND grant_id = ?2")?
            .execute(params![schedule_id, grant_id])?
            == 1,
    )
}

/// Voids the schedule's grants given under another fingerprint than `fingerprint` (the
/// schedule's prompt or Agent changed); how many. A void grant stays void, even if the
/// schedule is changed back.
pub fn void_changed(
    c: &Connection,
    schedule_id: &str,
    fingerprint: &str,
    reason: &str,
    at: &str,
) -> Result<usize> {
    Ok(c.prepare_cached(
        "UPDATE schedule_grants SET voided_at = ?4, void_reason = ?3
          WHERE schedule_id = ?1 AND fingerprint <> ?2 AND voided_at IS NULL",
    )?
    .execute(params![schedule_id, fingerprint, reason, at])?)
}
