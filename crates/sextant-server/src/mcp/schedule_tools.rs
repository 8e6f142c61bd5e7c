//! The schedule tools and the peer tools on the agents MCP server.
//!
//! **Schedules** (`list_schedules`, `get_schedule`, `create_schedule`, `update_schedule`,
//! `enable_schedule`, `disable_schedule`, `run_schedule_now`, `list_schedule_runs`,
//! `replay_schedule_run`, `backfill_schedule`, `delete_schedule`): the same operations as
//! `/api/v1/me/schedules` ([`crate::api::schedules`]), for the caller's plans: an assistant's
//! workspace token acts for its owner (the plans are the owner's and run as the owner; the ones
//! it creates record it as their source; its own access to the target is checked on create,
//! enable and every firing), the owner's token and the anonymous loopback caller act for
//! themselves. A per-Agent credential is refused. Results are a plain-text summary (next fire
//! times in words, in the plan's zone), then the JSON, also as structured content.
//!
//! **Peers** (`list_agent_peers`, `issue_agent_peers`): an assistant's workspace token lists
//! the owner's Agents it may call, and gets a credential per Agent (shown once) with a
//! ready-to-paste Hermes `a2a_agents:` block ([`sextant_access::assistant_peers`]).
//!
//! What an assistant reads is scrubbed of credential-shaped strings, as `get_agent_task` does;
//! control, bidi and zero-width characters in names, prompts and results are shown escaped in
//! the text.

use chrono::{DateTime, Utc};
use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{ErrorData, tool, tool_router};
use serde::Deserialize;
use serde_json::{Value, json};
use sextant_core::ids::parse_time;
use sextant_core::{MissedRunPolicy, OverlapPolicy, ScheduleSource};
use sextant_scheduler::plan::human;
use sextant_scheduler::view::{in_words, short_id};
use sextant_scheduler::{Actor, Backfill, RunView, ScheduleFields, ScheduleView};

use super::{AgentTools, PATH, api_refusal, principal, success};
use crate::audited;
use crate::auth::AssistantGrant;
use crate::error::ApiError;
use crate::urls::base_url;

/// `create_schedule` arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct CreateArgs {
    /// A short label, e.g. "Morning disk check".
    pub name: String,
    /// The message each Run sends to the Agent.
    pub prompt: String,
    /// The Agent each Run calls (see list_agent_peers, or the agents you know).
    pub agent_id: String,
    /// An IANA time zone, e.g. "Europe/Berlin", "America/New_York", "UTC".
    pub timezone: String,
    /// A recurring plan: a 5-field cron expression (minute hour day-of-month month
    /// day-of-week), e.g. "30 7 * * 1-5".
    #[serde(default)]
    pub cron: Option<String>,
    /// A one-shot plan: a local date and time in `timezone`, e.g. "2026-12-24T09:00".
    #[serde(default)]
    pub once_at: Option<String>,
    /// Instead of cron or once_at, plain words Sextant reads (and echoes back as cron or a
    /// time): "every weekday at 9", "every 30 minutes", "every mon and thu at 18:30", "every
    /// month on the 1st at 8am", "tomorrow at noon", "in 30 minutes", "once at 2026-12-24
    /// 09:00".
    #[serde(default)]
    pub when: Option<String>,
    /// `skip` (default) or `run_once` (a missed slot runs late, within the catch-up window).
    #[serde(default)]
    pub missed_run_policy: Option<String>,
    /// The catch-up window of `run_once`, in seconds (60-604800, default 3600).
    #[serde(default)]
    pub missed_run_grace_secs: Option<i64>,
    /// What a slot does while a Run is still running: skip (default), buffer_one, buffer_all,
    /// allow_all, cancel_previous.
    #[serde(default)]
    pub overlap_policy: Option<String>,
    /// Fire each slot up to this many seconds late (fixed per slot), 0-3600.
    #[serde(default)]
    pub jitter_secs: Option<i64>,
    /// Disable the plan after this many failed Runs in a row (1-100); default never.
    #[serde(default)]
    pub pause_after_failures: Option<i64>,
    /// Default true.
    #[serde(default)]
    pub enabled: Option<bool>,
}

/// `update_schedule` arguments: the fields to change.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct UpdateArgs {
    pub schedule_id: String,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub prompt: Option<String>,
    #[serde(default)]
    pub agent_id: Option<String>,
    #[serde(default)]
    pub timezone: Option<String>,
    /// Makes it a recurring plan with this cron expression.
    #[serde(default)]
    pub cron: Option<String>,
    /// Makes it a one-shot plan at this local time.
    #[serde(default)]
    pub once_at: Option<String>,
    /// Plain words instead of cron or once_at (see create_schedule).
    #[serde(default)]
    pub when: Option<String>,
    #[serde(default)]
    pub missed_run_policy: Option<String>,
    #[serde(default)]
    pub missed_run_grace_secs: Option<i64>,
    #[serde(default)]
    pub overlap_policy: Option<String>,
    #[serde(default)]
    pub jitter_secs: Option<i64>,
    /// 1-100; 0 turns pausing off.
    #[serde(default)]
    pub pause_after_failures: Option<i64>,
    #[serde(default)]
    pub enabled: Option<bool>,
}

/// Arguments naming one schedule.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ScheduleIdArgs {
    /// The schedule's id (from list_schedules).
    pub schedule_id: String,
}

/// `list_schedule_runs` arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct RunsArgs {
    pub schedule_id: String,
    /// At most this many, newest first (1-200, default 20).
    #[serde(default)]
    pub limit: Option<u32>,
}

/// `replay_schedule_run` arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct ReplayArgs {
    pub schedule_id: String,
    /// The Run to replay (its exact prompt and Agent).
    pub run_id: String,
}

/// `cancel_schedule_run` arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct CancelRunArgs {
    pub schedule_id: String,
    /// The Run whose task to cancel.
    pub run_id: String,
    /// Why, recorded on the task.
    #[serde(default)]
    pub reason: Option<String>,
}

/// `backfill_schedule` arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct BackfillArgs {
    pub schedule_id: String,
    /// The range's start, RFC 3339, e.g. "2026-12-01T00:00:00Z".
    pub from: String,
    /// The range's end (excluded), RFC 3339, in the past.
    pub to: String,
    /// buffer_all (default: one at a time), buffer_one, skip or allow_all.
    #[serde(default)]
    pub overlap_policy: Option<String>,
}

/// `issue_agent_peers` arguments.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub struct IssuePeersArgs {
    /// Only these Agents; default every Agent you may call.
    #[serde(default)]
    pub agent_ids: Option<Vec<String>>,
}

/// Text with control, bidi and zero-width characters shown escaped (`\u{202e}`), and cut to
/// `max` characters: what a summary line shows of a name, a prompt or a result.
pub fn visible(s: &str, max: usize) -> String {
    let mut out = String::new();
    for (n, c) in s.chars().enumerate() {
        if n == max {
            out.push('…');
            break;
        }
        let hidden = c.is_control()
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}' | '\u{feff}');
        if hidden {
            out.push_str(&c.escape_unicode().to_string());
        } else {
            out.push(c);
        }
    }
    out
}

fn field_error(field: &str, message: &str) -> ApiError {
    ApiError::Invalid {
        field: field.into(),
        message: format!("{field}: {message}"),
    }
}

fn missed_policy(v: Option<String>) -> Result<Option<MissedRunPolicy>, ApiError> {
    v.map(|s| {
        MissedRunPolicy::parse(&s)
            .ok_or_else(|| field_error("missed_run_policy", "must be \"skip\" or \"run_once\""))
    })
    .transpose()
}

fn overlap(v: Option<String>) -> Result<Option<OverlapPolicy>, ApiError> {
    v.map(|s| {
        OverlapPolicy::parse(&s).ok_or_else(|| {
            field_error(
                "overlap_policy",
                "must be skip, buffer_one, buffer_all, allow_all or cancel_previous",
            )
        })
    })
    .transpose()
}

/// "in 2d 3h" / "2d 3h ago".
fn from_now(t: DateTime<Utc>, now: DateTime<Utc>) -> String {
    if t >= now {
        format!("in {}", human(t - now))
    } else {
        format!("{} ago", human(now - t))
    }
}

fn policy_words(v: &ScheduleView) -> String {
    let missed = match v.missed_run_policy.as_str() {
        "run_once" => format!(
            "run once, late, within {}",
            human(chrono::Duration::seconds(v.missed_run_grace_secs))
        ),
        _ => "skipped".to_string(),
    };
    let jitter = match v.jitter_secs {
        0 => "none".to_string(),
        n => format!("up to {}", human(chrono::Duration::seconds(n))),
    };
    let pause = v
        .pause_after_failures
        .map(|n| format!("after {n} failed Runs in a row"))
        .unwrap_or_else(|| "never".into());
    format!(
        "Missed slots: {missed}; while a Run is running: {}; jitter: {jitter}; pause: {pause}",
        v.overlap_policy.as_str()
    )
}

/// A schedule in plain text: what, when (next fire times in words, in its zone), how it has
/// been doing.
pub fn schedule_text(v: &ScheduleView, now: DateTime<Utc>) -> String {
    let state = match (&v.paused, v.enabled, v.finished) {
        (_, _, true) => "finished (a one-shot plan whose time has passed)".to_string(),
        (Some(_), false, _) => "paused by Sextant".to_string(),
        (_, true, _) => "enabled".to_string(),
        (_, false, _) => "disabled".to_string(),
    };
    let made = match &v.source_assistant {
        Some(a) => format!(", made by assistant {}", visible(a, 64)),
        None => format!(", made in the {}", v.source.as_str()),
    };
    // A one-shot plan's description names its zone already.
    let zone = match &v.cron {
        Some(c) => format!(" Zone {}, cron \"{}\".", v.timezone, visible(c, 100)),
        None => String::new(),
    };
    let mut out = format!(
        "\"{}\" (schedule {}): {state}{made}\nWhen: {}{zone}\nAgent: {}. Prompt: \"{}\"",
        visible(&v.name, 200),
        v.id,
        v.description,
        v.agent_id,
        visible(&v.prompt, 300),
    );
    let next: Vec<String> = v
        .next_runs
        .iter()
        .take(3)
        .map(|n| match parse_time(&n.utc) {
            Some(t) => format!("{} ({})", n.words, from_now(t, now)),
            None => n.words.clone(),
        })
        .collect();
    match (v.enabled, next.is_empty()) {
        (_, true) => out.push_str("\nNext: nothing (it will not fire again)."),
        (true, false) => out.push_str(&format!("\nNext: {}.", next.join("; "))),
        (false, false) => out.push_str(&format!(
            "\nWould fire (it is not enabled): {}.",
            next.join("; ")
        )),
    }
    out.push_str(&format!("\n{}.", policy_words(v)));
    let h = &v.history;
    if h.succeeded + h.failed + h.canceled > 0 {
        out.push_str(&format!(
            "\nRecord: {} succeeded, {} failed, {} canceled",
            h.succeeded, h.failed, h.canceled
        ));
        if v.consecutive_failures > 0 {
            out.push_str(&format!("; {} failed in a row", v.consecutive_failures));
        }
        out.push('.');
    }
    if let Some(p) = &v.paused {
        out.push_str(&format!(
            "\nPaused by Sextant: {}. Enable it to resume.",
            visible(&p.reason, 600)
        ));
    }
    if !v.access.allowed {
        out.push_str(&format!(
            "\nRuns are blocked: {}.",
            v.access.reason.as_deref().unwrap_or("no access")
        ));
    }
    out
}

/// The echo of plain words: what Sextant read them as.
pub fn understood_text(v: &ScheduleView) -> String {
    match &v.understood {
        Some(u) => match (&u.cron, &u.once_at) {
            (Some(c), _) => format!(
                "Understood \"{}\" as cron \"{c}\" (recurring). ",
                visible(&u.input, 200)
            ),
            (_, Some(t)) => format!(
                "Understood \"{}\" as one Run at {t} ({}), not a recurring plan. ",
                visible(&u.input, 200),
                v.timezone
            ),
            _ => String::new(),
        },
        None => String::new(),
    }
}

/// A Run in one or two lines.
pub fn run_text(r: &RunView, tz: Option<sextant_scheduler::Tz>, base: &str) -> String {
    let slot = match (parse_time(&r.scheduled_for), tz) {
        (Some(t), Some(tz)) => in_words(t, tz),
        _ => r.scheduled_for.clone(),
    };
    let took = r
        .duration_ms
        .map(|ms| format!(" in {}", human(chrono::Duration::milliseconds(ms))))
        .unwrap_or_default();
    let mut out = format!(
        "Run {} ({}, for {slot}): {}{took}",
        r.id,
        r.trigger.as_str(),
        r.status
    );
    if let Some(result) = &r.result {
        out.push_str(&format!(" — result: \"{}\"", visible(result, 300)));
    }
    if let Some(why) = &r.reason {
        out.push_str(&format!(" — {}", visible(why, 400)));
    }
    if let Some(s) = &r.session_id {
        out.push_str(&format!(" — Session {base}/sessions/{s}"));
    }
    out
}

fn schedule_json(v: &ScheduleView, base: &str) -> Value {
    let mut j = serde_json::to_value(v).unwrap_or(Value::Null);
    j["url"] = json!(format!("{base}/api/v1/me/schedules/{}", v.id));
    j
}

fn run_json(r: &RunView, base: &str) -> Value {
    let mut j = serde_json::to_value(r).unwrap_or(Value::Null);
    j["session_url"] = json!(
        r.session_id
            .as_ref()
            .map(|s| format!("{base}/sessions/{s}"))
    );
    j
}

impl AgentTools {
    /// Whom a schedule tool acts for, or the refusal.
    fn actor(&self, parts: &http::request::Parts) -> Result<Result<Actor, ApiError>, ErrorData> {
        let who = principal(parts)?;
        Ok(crate::api::schedules::actor(
            &who,
            parts.extensions.get::<AssistantGrant>(),
        ))
    }

    /// A result for this caller: scrubbed of credential-shaped strings when it goes to an
    /// assistant.
    fn reply(&self, parts: &http::request::Parts, text: String, mut body: Value) -> CallToolResult {
        let mut text = text;
        if parts.extensions.get::<AssistantGrant>().is_some() {
            let emails = self.app.security.redact_emails;
            sextant_core::redact::scrub_json(&mut body, emails);
            text = sextant_core::redact::scrub_outbound(&text, emails).into_owned();
        }
        success(text, body)
    }

    fn tz_of(&self, v: &ScheduleView) -> Option<sextant_scheduler::Tz> {
        v.timezone.parse().ok()
    }

    /// The zone of one of the owner's plans, to say a Run's slot in (after the Run was made:
    /// if the plan cannot be read now, the slot is said in RFC 3339 rather than failing).
    async fn zone_of(&self, me: &Actor, schedule_id: &str) -> Option<sextant_scheduler::Tz> {
        let v = self.app.scheduler.get(&me.owner, schedule_id).await.ok()?;
        self.tz_of(&v)
    }
}

/// Runs `$body` as the caller's actor, turning refusals into tool errors with the REST wording.
macro_rules! acting {
    ($self:ident, $parts:ident, |$me:ident| $body:expr) => {{
        let $me = match $self.actor(&$parts)? {
            Ok(a) => a,
            Err(e) => return api_refusal(e),
        };
        match $body {
            Ok(v) => v,
            Err(e) => return api_refusal(ApiError::from(e)),
        }
    }};
}

#[tool_router(router = schedule_tool_router, vis = "pub(super)")]
impl AgentTools {
    #[tool(
        description = "List your personal schedules (plans that send a prompt to one of your \
                       agents at set times): name, when in words, the next fire times in the \
                       plan's time zone, the agent, whether it is enabled or paused, and its \
                       recent success/failure record.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn list_schedules(
        &self,
        Extension(parts): Extension<http::request::Parts>,
    ) -> Result<CallToolResult, ErrorData> {
        let list = acting!(self, parts, |me| self.app.scheduler.list(&me.owner).await);
        let now = self.app.runtime.clock().now();
        let base = base_url(&self.app, &parts.headers);
        let mut text = match list.len() {
            0 => "No schedules yet. create_schedule makes one.".to_string(),
            1 => "1 schedule:".to_string(),
            n => format!("{n} schedules:"),
        };
        for v in &list {
            text.push_str("\n\n");
            text.push_str(&schedule_text(v, now));
        }
        let body = json!({
            "schedules": list.iter().map(|v| schedule_json(v, &base)).collect::<Vec<_>>(),
        });
        Ok(self.reply(&parts, text, body))
    }

    #[tool(
        description = "Read one schedule: what it sends to which agent, when (in words, with \
                       the next fire times in its zone), its policies, its record, and why it \
                       is paused or blocked if it is.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn get_schedule(
        &self,
        Extension(parts): Extension<http::request::Parts>,
        Parameters(args): Parameters<ScheduleIdArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let v = acting!(self, parts, |me| self
            .app
            .scheduler
            .get(&me.owner, &args.schedule_id)
            .await);
        let base = base_url(&self.app, &parts.headers);
        let text = schedule_text(&v, self.app.runtime.clock().now());
        Ok(self.reply(&parts, text, schedule_json(&v, &base)))
    }

    #[tool(
        description = "Create a personal schedule for the person: at the times given (cron, \
                       once_at for a single time, or plain words in when; all in timezone), send \
                       prompt to agent_id as the person. The result says how plain words were \
                       read and when it will fire, in words, so you can check it means what was \
                       asked (\"every 30 minutes\" is cron \"*/30 * * * *\"; \"in 30 minutes\" \
                       is one Run at a time it names). You are recorded as its source.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn create_schedule(
        &self,
        Extension(parts): Extension<http::request::Parts>,
        Parameters(args): Parameters<CreateArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let fields = match (|| -> Result<ScheduleFields, ApiError> {
            Ok(ScheduleFields {
                name: Some(args.name),
                prompt: Some(args.prompt),
                cron: args.cron,
                once_at: args.once_at,
                when: args.when,
                timezone: Some(args.timezone),
                agent_id: Some(args.agent_id),
                enabled: args.enabled,
                missed_run_policy: missed_policy(args.missed_run_policy)?,
                missed_run_grace_secs: args.missed_run_grace_secs,
                overlap_policy: overlap(args.overlap_policy)?,
                jitter_secs: args.jitter_secs,
                pause_after_failures: args.pause_after_failures.map(Some),
            })
        })() {
            Ok(f) => f,
            Err(e) => return api_refusal(e),
        };
        let v = acting!(self, parts, |me| audited::create_schedule(
            &self.app,
            PATH,
            &me,
            fields,
            ScheduleSource::Api
        )
        .await);
        let base = base_url(&self.app, &parts.headers);
        let text = format!(
            "{}Created. {}",
            understood_text(&v),
            schedule_text(&v, self.app.runtime.clock().now())
        );
        Ok(self.reply(&parts, text, schedule_json(&v, &base)))
    }

    #[tool(
        description = "Change some fields of a schedule (the others keep their value). \
                       Sending cron makes it recurring, once_at a one-shot plan. The result \
                       shows when it fires now.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn update_schedule(
        &self,
        Extension(parts): Extension<http::request::Parts>,
        Parameters(args): Parameters<UpdateArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let fields = match (|| -> Result<ScheduleFields, ApiError> {
            Ok(ScheduleFields {
                name: args.name,
                prompt: args.prompt,
                cron: args.cron,
                once_at: args.once_at,
                when: args.when,
                timezone: args.timezone,
                agent_id: args.agent_id,
                enabled: args.enabled,
                missed_run_policy: missed_policy(args.missed_run_policy)?,
                missed_run_grace_secs: args.missed_run_grace_secs,
                overlap_policy: overlap(args.overlap_policy)?,
                jitter_secs: args.jitter_secs,
                pause_after_failures: args.pause_after_failures.map(|n| (n != 0).then_some(n)),
            })
        })() {
            Ok(f) => f,
            Err(e) => return api_refusal(e),
        };
        self.update(parts, args.schedule_id, fields).await
    }

    #[tool(
        description = "Enable a schedule (it fires from its next slot after now; a plan \
                       Sextant paused after failures starts over). Checks that the agent may \
                       still be called.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn enable_schedule(
        &self,
        Extension(parts): Extension<http::request::Parts>,
        Parameters(args): Parameters<ScheduleIdArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let fields = ScheduleFields {
            enabled: Some(true),
            ..Default::default()
        };
        self.update(parts, args.schedule_id, fields).await
    }

    #[tool(
        description = "Disable a schedule: it stops firing (run_schedule_now still works).",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn disable_schedule(
        &self,
        Extension(parts): Extension<http::request::Parts>,
        Parameters(args): Parameters<ScheduleIdArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let fields = ScheduleFields {
            enabled: Some(false),
            ..Default::default()
        };
        self.update(parts, args.schedule_id, fields).await
    }

    #[tool(
        description = "Run a schedule now, once, with its current prompt and agent (even when \
                       disabled). Returns the Run with its Session; follow the task with \
                       get_agent_task or list_schedule_runs.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn run_schedule_now(
        &self,
        Extension(parts): Extension<http::request::Parts>,
        Parameters(args): Parameters<ScheduleIdArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let (r, tz) = acting!(self, parts, |me| async {
            let r =
                audited::run_schedule_now(&self.app, PATH, &me, &args.schedule_id, None).await?;
            Ok::<_, sextant_scheduler::Error>((r, self.zone_of(&me, &args.schedule_id).await))
        }
        .await);
        let base = base_url(&self.app, &parts.headers);
        let text = format!("Started. {}", run_text(&r, tz, &base));
        Ok(self.reply(&parts, text, run_json(&r, &base)))
    }

    #[tool(
        description = "List a schedule's Runs, newest first: trigger, the slot in words, \
                       status, duration, the start of the result, why a Run was skipped, \
                       missed or blocked, and its Session link.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn list_schedule_runs(
        &self,
        Extension(parts): Extension<http::request::Parts>,
        Parameters(args): Parameters<RunsArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let limit = args.limit.unwrap_or(20);
        if !(1..=200).contains(&limit) {
            return api_refusal(field_error("limit", "must be between 1 and 200"));
        }
        let (v, page) = acting!(self, parts, |me| async {
            let v = self.app.scheduler.get(&me.owner, &args.schedule_id).await?;
            let page = self
                .app
                .scheduler
                .runs(&me.owner, &args.schedule_id, None, limit)
                .await?;
            Ok::<_, sextant_scheduler::Error>((v, page))
        }
        .await);
        let base = base_url(&self.app, &parts.headers);
        let tz = self.tz_of(&v);
        let mut text = format!(
            "{} of {} Run(s) of \"{}\", newest first:",
            page.runs.len(),
            page.total,
            visible(&v.name, 200)
        );
        for r in &page.runs {
            text.push_str("\n- ");
            text.push_str(&run_text(r, tz, &base));
        }
        let body = json!({
            "runs": page.runs.iter().map(|r| run_json(r, &base)).collect::<Vec<_>>(),
            "total": page.total,
        });
        Ok(self.reply(&parts, text, body))
    }

    #[tool(
        description = "Replay a Run: a new Run with that Run's exact prompt and agent (not the \
                       schedule's current ones).",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn replay_schedule_run(
        &self,
        Extension(parts): Extension<http::request::Parts>,
        Parameters(args): Parameters<ReplayArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let (r, tz) = acting!(self, parts, |me| async {
            let r =
                audited::replay_schedule_run(&self.app, PATH, &me, &args.schedule_id, &args.run_id)
                    .await?;
            Ok::<_, sextant_scheduler::Error>((r, self.zone_of(&me, &args.schedule_id).await))
        }
        .await);
        let base = base_url(&self.app, &parts.headers);
        let text = format!(
            "Replaying Run {}. {}",
            short_id(&args.run_id),
            run_text(&r, tz, &base)
        );
        Ok(self.reply(&parts, text, run_json(&r, &base)))
    }

    #[tool(
        description = "Cancel a Run: its task stops (queued, running, or waiting for a \
                       decision, whose card is closed); what it produced so far is kept.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn cancel_schedule_run(
        &self,
        Extension(parts): Extension<http::request::Parts>,
        Parameters(args): Parameters<CancelRunArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let (r, tz) = acting!(self, parts, |me| async {
            let r = audited::cancel_schedule_run(
                &self.app,
                PATH,
                &me,
                &args.schedule_id,
                &args.run_id,
                args.reason.clone(),
            )
            .await?;
            Ok::<_, sextant_scheduler::Error>((r, self.zone_of(&me, &args.schedule_id).await))
        }
        .await);
        let base = base_url(&self.app, &parts.headers);
        let text = format!(
            "Canceled Run {}'s task. {}",
            short_id(&args.run_id),
            run_text(&r, tz, &base)
        );
        Ok(self.reply(&parts, text, run_json(&r, &base)))
    }

    #[tool(
        description = "Backfill a schedule over a past range: one Run for each slot in [from, \
                       to), at most 100, one at a time by default (overlap_policy \
                       buffer_all). A slot already backfilled is not run again.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = true,
            open_world_hint = false
        )
    )]
    async fn backfill_schedule(
        &self,
        Extension(parts): Extension<http::request::Parts>,
        Parameters(args): Parameters<BackfillArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let time = |field: &str, s: &str| {
            chrono::DateTime::parse_from_rfc3339(s)
                .map(|t| t.to_utc())
                .map_err(|_| {
                    field_error(field, "must be an RFC 3339 time, e.g. 2026-12-01T00:00:00Z")
                })
        };
        let request = match (|| -> Result<Backfill, ApiError> {
            Ok(Backfill {
                from: time("from", &args.from)?,
                to: time("to", &args.to)?,
                overlap_policy: overlap(args.overlap_policy)?,
            })
        })() {
            Ok(r) => r,
            Err(e) => return api_refusal(e),
        };
        let (done, tz) = acting!(self, parts, |me| async {
            let done = self
                .app
                .scheduler
                .backfill(&me, &args.schedule_id, request)
                .await?;
            Ok::<_, sextant_scheduler::Error>((done, self.zone_of(&me, &args.schedule_id).await))
        }
        .await);
        let base = base_url(&self.app, &parts.headers);
        let mut text = format!(
            "Backfill: {} Run(s) recorded (overlap policy {}); {} slot(s) had been backfilled \
             before.",
            done.runs.len(),
            done.overlap_policy.as_str(),
            done.already_backfilled
        );
        for r in &done.runs {
            text.push_str("\n- ");
            text.push_str(&run_text(r, tz, &base));
        }
        let body = json!({
            "runs": done.runs.iter().map(|r| run_json(r, &base)).collect::<Vec<_>>(),
            "already_backfilled": done.already_backfilled,
            "overlap_policy": done.overlap_policy.as_str(),
        });
        Ok(self.reply(&parts, text, body))
    }

    #[tool(
        description = "Delete a schedule and its Run history (the Sessions its Runs created \
                       stay).",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn delete_schedule(
        &self,
        Extension(parts): Extension<http::request::Parts>,
        Parameters(args): Parameters<ScheduleIdArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        acting!(self, parts, |me| audited::delete_schedule(
            &self.app,
            PATH,
            &me,
            &args.schedule_id
        )
        .await);
        let text = format!("Deleted schedule {} and its Run history.", args.schedule_id);
        Ok(self.reply(&parts, text, json!({ "deleted": args.schedule_id })))
    }

    #[tool(
        description = "List the person's agents you may call as A2A peers: id, name, what they \
                       do, the card URL, and whether you hold a credential for each. \
                       issue_agent_peers gives you the credentials.",
        annotations(read_only_hint = true, open_world_hint = false)
    )]
    async fn list_agent_peers(
        &self,
        Extension(parts): Extension<http::request::Parts>,
    ) -> Result<CallToolResult, ErrorData> {
        let parent = match self.workspace_token(&parts).await? {
            Ok(p) => p,
            Err(e) => return api_refusal(e),
        };
        let base = base_url(&self.app, &parts.headers);
        let body = match crate::api::credentials::peers_json(&self.app, &parent, &base).await {
            Ok(b) => b,
            Err(e) => return api_refusal(e),
        };
        let peers = body["peers"].as_array().cloned().unwrap_or_default();
        let mut text = format!(
            "{} agent(s) you may call as peers (assistant {}):",
            peers.len(),
            parent.name
        );
        for p in &peers {
            let held = match p["credentialId"].as_str() {
                Some(_) => format!(
                    "credential issued {}",
                    p["credentialCreatedAt"].as_str().unwrap_or("")
                ),
                None => "no credential yet".into(),
            };
            text.push_str(&format!(
                "\n- {} ({}): {} — card {}; {held}",
                p["agentId"].as_str().unwrap_or(""),
                visible(p["name"].as_str().unwrap_or(""), 100),
                visible(p["description"].as_str().unwrap_or(""), 200),
                p["cardUrl"].as_str().unwrap_or(""),
            ));
        }
        text.push_str(
            "\nissue_agent_peers issues a credential per agent (shown once) and a Hermes \
             a2a_agents block.",
        );
        Ok(self.reply(&parts, text, body))
    }

    #[tool(
        description = "Get a credential for each of the person's agents you may call (or for \
                       agent_ids only): its A2A URL and bearer token, each scoped to this \
                       workspace and that one agent, shown once (asking again replaces it). \
                       Returns a ready-to-paste a2a_agents block for Hermes' config.yaml.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn issue_agent_peers(
        &self,
        Extension(parts): Extension<http::request::Parts>,
        Parameters(args): Parameters<IssuePeersArgs>,
    ) -> Result<CallToolResult, ErrorData> {
        let parent = match self.workspace_token(&parts).await? {
            Ok(p) => p,
            Err(e) => return api_refusal(e),
        };
        let base = base_url(&self.app, &parts.headers);
        let (peers, yaml) = match crate::api::credentials::issue_peers(
            &self.app,
            (&principal(&parts)?, PATH),
            &parent,
            args.agent_ids,
            &base,
        )
        .await
        {
            Ok(r) => r,
            Err(e) => return api_refusal(e),
        };
        let text = format!(
            "Issued {} peer credential(s); each is shown only now and replaces the one before. \
             Paste this into Hermes' config.yaml:\n\n{yaml}",
            peers.len()
        );
        // The tokens are the point of this answer: it is not scrubbed.
        Ok(success(
            text,
            json!({ "peers": peers, "hermesConfig": yaml }),
        ))
    }
}

impl AgentTools {
    async fn update(
        &self,
        parts: http::request::Parts,
        schedule_id: String,
        fields: ScheduleFields,
    ) -> Result<CallToolResult, ErrorData> {
        let v = acting!(self, parts, |me| audited::update_schedule(
            &self.app,
            PATH,
            &me,
            &schedule_id,
            fields
        )
        .await);
        let base = base_url(&self.app, &parts.headers);
        let text = format!(
            "{}Saved. {}",
            understood_text(&v),
            schedule_text(&v, self.app.runtime.clock().now())
        );
        Ok(self.reply(&parts, text, schedule_json(&v, &base)))
    }

    /// The assistant's workspace token behind this request, for the peer tools.
    async fn workspace_token(
        &self,
        parts: &http::request::Parts,
    ) -> Result<Result<sextant_journal::CredentialRow, ApiError>, ErrorData> {
        let Some(g) = parts.extensions.get::<AssistantGrant>() else {
            return Ok(Err(ApiError::Forbidden(
                "the peer tools are an assistant's: call them with its workspace token (sextant \
                 assistant-token create NAME); the owner issues them with `sextant \
                 assistant-token peers NAME`"
                    .into(),
            )));
        };
        if !g.is_workspace_token() {
            return Ok(Err(ApiError::Forbidden(
                "this credential reaches one agent; the peer tools take the assistant's \
                 workspace token"
                    .into(),
            )));
        }
        let cred = self
            .app
            .runtime
            .journal()
            .active_credential("assistant", &g.name)
            .await
            .map_err(|e| {
                tracing::error!(error = %e, "credential lookup failed");
                ErrorData::internal_error("Something went wrong", None)
            })?;
        Ok(cred
            .filter(|c| c.credential_id == g.assistant_credential)
            .ok_or_else(|| ApiError::Unauthorized("the assistant token was revoked".into())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_characters_are_shown_escaped() {
        assert_eq!(visible("plain", 10), "plain");
        assert_eq!(visible("a\u{202e}b", 10), "a\\u{202e}b");
        assert_eq!(visible("x\u{1b}[31m", 10), "x\\u{1b}[31m");
        assert_eq!(visible("zero\u{200b}width", 20), "zero\\u{200b}width");
        assert_eq!(visible("line\nbreak", 20), "line\\u{a}break");
        assert_eq!(visible("abcdef", 3), "abc…");
    }
}
