//! Push notifications (A2A 1.0 §3.1.7–3.1.10, §4.3) for the Agents that enable them
//! (`push_notifications = true` in `agents.toml`; the card says `pushNotifications: true`).
//!
//! This module is the transport-neutral service every binding calls: create, get, list and
//! delete configs ([`create`], [`get`], [`list`], [`delete`]), a config given with a message
//! ([`inline_config`]), and the views. [`deliver`] is the delivery worker. An Agent without
//! push answers every one of these with PushNotificationNotSupported (-32003).
//!
//! - A config belongs to its task's caller: another caller's task is TaskNotFound, as for every
//!   read. Creating a config with an id the task already has replaces it (and re-enables it if
//!   its delivery had stopped): that is how the owner re-enables a failing webhook over A2A.
//!   Deleting is idempotent. At most [`MAX_CONFIGS_PER_TASK`] configs per task.
//! - The URL is checked at once against the network guard's address rules for webhooks
//!   (`outbound.toml` `[push]`: loopback and private addresses refused unless allowed), and
//!   again, with the name resolved, at every delivery.
//! - The token is the HMAC key deliveries are signed with ([`sign`]); a config registered
//!   without one gets a generated `whsec_…` token, returned in the config. Token and
//!   authentication are sealed before they are journalled ([`seal`]); the authentication's
//!   credentials are never returned.
//! - Delivery health (pending, delivered, attempts, last error and time, whether it stopped,
//!   whether the task's final state is still owed) is a Sextant extension: a caller that
//!   activates [`EXTENSION`] (`A2A-Extensions` header) gets a `delivery` object in each config;
//!   other callers get the plain 1.0 shape (strict clients refuse unknown fields). The console
//!   always shows it (`/api/v1/push`).

pub mod api;
pub mod deliver;
pub mod seal;
pub mod sign;

use std::time::Duration;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sextant_a2a::RpcError;
use sextant_a2a::error::Code;
use sextant_core::a2a::{AuthenticationInfo, TaskPushNotificationConfig};
use sextant_core::ids::format_time;
use sextant_core::{AgentSpec, CallerKey, Principal};
use sextant_journal::{PushConfigRow, PushPut, TaskRow};
use sextant_peers::client::NetPolicy;
use ts_rs::TS;

use crate::AppState;

/// The extension URI that adds delivery health to config reads (declared on push cards).
pub const EXTENSION: &str = "urn:sextant:a2a:push-delivery:v1";
/// Most configs one task may have.
pub const MAX_CONFIGS_PER_TASK: usize = 10;
/// Longest webhook URL accepted.
const MAX_URL: usize = 2048;
/// Longest token or credentials accepted.
const MAX_SECRET: usize = 4096;

/// Webhook delivery settings (`outbound.toml` `[push]`).
#[derive(Debug, Clone, PartialEq)]
pub struct PushSettings {
    /// Webhooks on loopback addresses (off by default; the TCK's receiver needs it).
    pub allow_loopback: bool,
    /// Webhooks on private-network addresses (off by default).
    pub allow_private_network: bool,
    /// Failed attempts in a row after which a config stops until its owner re-enables it.
    pub max_failures: u32,
    /// The first retry's delay; each further one doubles it, with jitter.
    pub initial_backoff: Duration,
    /// The longest delay between attempts.
    pub max_backoff: Duration,
    /// How long one attempt may take.
    pub timeout: Duration,
}

impl Default for PushSettings {
    fn default() -> Self {
        Self {
            allow_loopback: false,
            allow_private_network: false,
            max_failures: 8,
            initial_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(600),
            timeout: Duration::from_secs(10),
        }
    }
}

impl PushSettings {
    /// The network guard's policy for webhooks.
    pub fn policy(&self) -> NetPolicy {
        NetPolicy {
            allow_private: self.allow_private_network,
            allow_loopback: self.allow_loopback,
            loopback_only: false,
        }
    }

    /// The delay before the next attempt after `attempts` failures in a row: the initial
    /// backoff doubled per failure, capped, and scaled by `jitter` (in [0, 1)) into its upper
    /// half, so retries of many webhooks spread out instead of arriving together.
    pub fn backoff(&self, attempts: u32, jitter: f64) -> Duration {
        let doublings = attempts.saturating_sub(1).min(30);
        let full = self
            .initial_backoff
            .saturating_mul(1u32 << doublings)
            .min(self.max_backoff);
        full.mul_f64(0.5 + 0.5 * jitter.clamp(0.0, 1.0))
    }
}

/// The push service's state: its settings and the secrets' sealer.
#[derive(Debug)]
pub struct Push {
    pub settings: PushSettings,
    sealer: seal::Sealer,
    /// One delivery pass at a time (the loop and tests that call it).
    pub(crate) tick: tokio::sync::Mutex<()>,
}

impl Push {
    pub fn new(settings: PushSettings, sealer: seal::Sealer) -> Self {
        Self {
            settings,
            sealer,
            tick: tokio::sync::Mutex::new(()),
        }
    }

    fn seal(&self, s: &Secrets) -> Result<String, RpcError> {
        let plain = serde_json::to_vec(s).map_err(internal)?;
        self.sealer.seal(&plain).map_err(internal)
    }

    pub(crate) fn open(&self, row: &PushConfigRow) -> Result<Secrets, String> {
        let plain = self.sealer.open(&row.secrets)?;
        serde_json::from_slice(&plain)
            .map_err(|e| format!("the config's secrets are unreadable: {e}"))
    }
}

/// What is sealed: the token (the HMAC key) and the authentication.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct Secrets {
    pub token: Option<String>,
    pub authentication: Option<AuthenticationInfo>,
}

/// A config's delivery health, as the console and the [`EXTENSION`] show it.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct DeliveryHealth {
    /// `idle` (nothing owed), `delivering`, `retrying` (the last attempt failed; `nextAttemptAt`
    /// says when), or `failing` (stopped after too many failures until its owner re-enables
    /// it; what it owes is kept).
    pub state: String,
    /// Deliveries owed.
    pub pending: i64,
    /// Deliveries the webhook answered 2xx.
    pub delivered: i64,
    /// Failed attempts in a row at the first delivery owed.
    pub attempts: i64,
    pub last_error: Option<String>,
    pub last_error_at: Option<String>,
    pub last_attempt_at: Option<String>,
    pub last_delivered_at: Option<String>,
    pub next_attempt_at: Option<String>,
    /// Since when delivery is stopped (`failing`).
    pub failing_since: Option<String>,
    /// Whether the task's final state is among the deliveries owed: the terminal event is
    /// never dropped, it waits here until the webhook takes it.
    pub final_state_pending: bool,
}

/// The health of a config of a task in `state`.
pub fn health(row: &PushConfigRow, task_terminal: bool) -> DeliveryHealth {
    let state = if row.failing_at.is_some() {
        "failing"
    } else if row.pending > 0 && row.attempts > 0 {
        "retrying"
    } else if row.pending > 0 {
        "delivering"
    } else {
        "idle"
    };
    DeliveryHealth {
        state: state.into(),
        pending: row.pending,
        delivered: row.delivered,
        attempts: row.attempts,
        last_error: row.last_error.clone(),
        last_error_at: row.last_error_at.map(format_time),
        last_attempt_at: row.last_attempt_at.map(format_time),
        last_delivered_at: row.last_delivered_at.map(format_time),
        next_attempt_at: row
            .next_attempt_at
            .filter(|_| row.failing_at.is_none())
            .map(format_time),
        failing_since: row.failing_at.map(format_time),
        // The terminal event is the last one a config is owed: if the task ended and
        // something is still owed, the final state is.
        final_state_pending: task_terminal && row.pending > 0,
    }
}

fn internal(e: impl std::fmt::Display) -> RpcError {
    tracing::error!(error = %e, "push notification request failed");
    RpcError::of(Code::Internal)
}

/// PushNotificationNotSupported for an Agent without push notifications.
pub fn require_push(agent: &AgentSpec) -> Result<(), RpcError> {
    if agent.features.push_notifications {
        return Ok(());
    }
    Err(RpcError::new(
        Code::PushNotificationNotSupported,
        format!(
            "agent {:?} does not send push notifications (capabilities.pushNotifications is \
             false); use SubscribeToTask or GetTask",
            agent.id
        ),
    ))
}

/// Header-safe: visible ASCII and spaces, no CR/LF (a header cannot be smuggled in).
fn header_safe(s: &str) -> bool {
    s.bytes().all(|b| (0x20..0x7f).contains(&b))
}

fn token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Reads and checks a config (the Create params, or `configuration.taskPushNotificationConfig`
/// under `prefix`). Field errors name the field.
pub fn parse_config(
    app: &AppState,
    v: &Value,
    prefix: &str,
) -> Result<TaskPushNotificationConfig, RpcError> {
    let f = |name: &str| format!("{prefix}{name}");
    if !v.is_object() {
        return Err(RpcError::field(
            f("").trim_end_matches('.'),
            "must be an object",
        ));
    }
    if v.get("url")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        return Err(RpcError::field(&f("url"), "is required"));
    }
    let cfg: TaskPushNotificationConfig = serde_json::from_value(v.clone()).map_err(|e| {
        RpcError::new(
            Code::InvalidParams,
            format!("Invalid TaskPushNotificationConfig: {e}"),
        )
    })?;
    if cfg.url.is_empty() {
        return Err(RpcError::field(&f("url"), "is required"));
    }
    if cfg.url.len() > MAX_URL {
        return Err(RpcError::field(
            &f("url"),
            format!("is longer than {MAX_URL} characters"),
        ));
    }
    let url = url::Url::parse(&cfg.url)
        .map_err(|e| RpcError::field(&f("url"), format!("is not a URL: {e}")))?;
    if let Err(e) = app
        .peers
        .client()
        .check_with(&url, app.push.settings.policy())
    {
        return Err(RpcError::field(
            &f("url"),
            format!("{e} (webhook addresses are set in outbound.toml [push])"),
        ));
    }
    if let Some(id) = &cfg.id
        && (id.is_empty() || id.len() > 128 || !header_safe(id))
    {
        return Err(RpcError::field(
            &f("id"),
            "must be 1-128 visible ASCII characters",
        ));
    }
    if let Some(t) = &cfg.token
        && (t.is_empty() || t.len() > MAX_SECRET || !header_safe(t))
    {
        return Err(RpcError::field(
            &f("token"),
            format!("must be 1-{MAX_SECRET} visible ASCII characters"),
        ));
    }
    if let Some(a) = &cfg.authentication {
        if a.scheme.is_empty() || !a.scheme.bytes().all(token_char) {
            return Err(RpcError::field(
                &f("authentication.scheme"),
                "is required and must be an HTTP auth scheme name (e.g. Bearer)",
            ));
        }
        if let Some(c) = &a.credentials
            && (c.len() > MAX_SECRET || !header_safe(c))
        {
            return Err(RpcError::field(
                &f("authentication.credentials"),
                format!("must be at most {MAX_SECRET} visible ASCII characters"),
            ));
        }
    }
    Ok(cfg)
}

/// Builds the row to store for a parsed config of `task_id` (generated id and token when the
/// caller gave none).
fn to_row(
    app: &AppState,
    cfg: &TaskPushNotificationConfig,
    task_id: &str,
    caller: CallerKey,
    now: DateTime<Utc>,
) -> Result<PushConfigRow, RpcError> {
    let token = match &cfg.token {
        Some(t) => t.clone(),
        None => sign::new_token().map_err(internal)?,
    };
    let secrets = Secrets {
        token: Some(token),
        authentication: cfg.authentication.clone(),
    };
    let id = cfg.id.clone().unwrap_or_else(sextant_core::ids::new_id);
    Ok(PushConfigRow::new(
        task_id,
        id,
        caller,
        cfg.url.clone(),
        app.push.seal(&secrets)?,
        now,
    ))
}

/// A config given with a message (`SendMessage.configuration.taskPushNotificationConfig`),
/// ready for the admission; its `task_id` is the message's task (or filled in for a new one).
pub fn inline_config(
    app: &AppState,
    principal: &Principal,
    agent: &AgentSpec,
    v: &Value,
    task_id: Option<&str>,
) -> Result<PushConfigRow, RpcError> {
    require_push(agent)?;
    let prefix = "configuration.taskPushNotificationConfig.";
    let cfg = parse_config(app, v, prefix)?;
    if !cfg.task_id.is_empty() && Some(cfg.task_id.as_str()) != task_id {
        return Err(RpcError::field(
            &format!("{prefix}taskId"),
            "must be empty (or the message's taskId): the config is for this message's task",
        ));
    }
    to_row(
        app,
        &cfg,
        task_id.unwrap_or_default(),
        principal.caller_key(),
        app.runtime.clock().now(),
    )
}

/// The config as the A2A methods return it: the 1.0 shape (the authentication's credentials
/// left out), plus `delivery` when the caller activated [`EXTENSION`].
pub fn view(app: &AppState, row: &PushConfigRow, task: &TaskRow, with_health: bool) -> Value {
    let secrets = app.push.open(row).unwrap_or_default();
    let mut v = json!({
        "id": row.config_id,
        "taskId": row.task_id,
        "url": row.url,
    });
    if let Some(t) = secrets.token {
        v["token"] = Value::String(t);
    }
    if let Some(a) = secrets.authentication {
        v["authentication"] = json!({ "scheme": a.scheme });
    }
    if with_health {
        v["delivery"] =
            serde_json::to_value(health(row, task.state.is_terminal())).unwrap_or(Value::Null);
    }
    v
}

/// The caller's task `id` on this Agent (TaskNotFound otherwise, another caller's included).
async fn task_of(
    app: &AppState,
    principal: &Principal,
    agent: &AgentSpec,
    params: &Value,
) -> Result<TaskRow, RpcError> {
    let id = params
        .get("taskId")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| RpcError::field("taskId", "is required"))?;
    crate::a2a::tasks::find_task(
        app,
        principal,
        &agent.id,
        id,
        crate::a2a::tasks::Visibility::Caller,
    )
    .await
}

fn config_id(params: &Value) -> Result<String, RpcError> {
    params
        .get("id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .ok_or_else(|| RpcError::field("id", "is required"))
}

/// `CreateTaskPushNotificationConfig`: the stored config (with its id, and its token).
pub async fn create(
    app: &AppState,
    principal: &Principal,
    agent: &AgentSpec,
    params: &Value,
    with_health: bool,
) -> Result<Value, RpcError> {
    require_push(agent)?;
    let task = task_of(app, principal, agent, params).await?;
    let cfg = parse_config(app, params, "")?;
    let journal = app.runtime.journal();
    let existing = journal
        .push_configs(&task.task_id)
        .await
        .map_err(internal)?;
    let replacing = cfg
        .id
        .as_ref()
        .is_some_and(|id| existing.iter().any(|c| &c.config_id == id));
    if !replacing && existing.len() >= MAX_CONFIGS_PER_TASK {
        return Err(RpcError::new(
            Code::InvalidParams,
            format!(
                "task {} already has {MAX_CONFIGS_PER_TASK} push notification configs; delete \
                 one first",
                task.task_id
            ),
        ));
    }
    let row = to_row(
        app,
        &cfg,
        &task.task_id,
        task.caller.clone(),
        app.runtime.clock().now(),
    )?;
    match journal
        .put_push_config(row.clone())
        .await
        .map_err(internal)?
    {
        PushPut::TaskNotFound => {
            return Err(RpcError::new(
                Code::TaskNotFound,
                format!("Task not found: {}", task.task_id),
            ));
        }
        PushPut::Created | PushPut::Replaced => {}
    }
    let stored = journal
        .push_config(&task.task_id, &row.config_id)
        .await
        .map_err(internal)?
        .unwrap_or(row);
    Ok(view(app, &stored, &task, with_health))
}

/// `GetTaskPushNotificationConfig`: TaskNotFound for a config that does not exist.
pub async fn get(
    app: &AppState,
    principal: &Principal,
    agent: &AgentSpec,
    params: &Value,
    with_health: bool,
) -> Result<Value, RpcError> {
    require_push(agent)?;
    let task = task_of(app, principal, agent, params).await?;
    let id = config_id(params)?;
    let row = app
        .runtime
        .journal()
        .push_config(&task.task_id, &id)
        .await
        .map_err(internal)?
        .ok_or_else(|| {
            RpcError::new(
                Code::TaskNotFound,
                format!(
                    "task {} has no push notification config {id:?}",
                    task.task_id
                ),
            )
        })?;
    Ok(view(app, &row, &task, with_health))
}

/// `ListTaskPushNotificationConfigs`: `{configs, nextPageToken}` (the token, a config id, only
/// when there is a next page).
pub async fn list(
    app: &AppState,
    principal: &Principal,
    agent: &AgentSpec,
    params: &Value,
    with_health: bool,
) -> Result<Value, RpcError> {
    require_push(agent)?;
    let task = task_of(app, principal, agent, params).await?;
    let page_size = match params.get("pageSize") {
        None | Some(Value::Null) => MAX_CONFIGS_PER_TASK,
        Some(v) => match v.as_i64() {
            Some(0) => MAX_CONFIGS_PER_TASK,
            Some(n) if (1..=100).contains(&n) => n as usize,
            _ => return Err(RpcError::field("pageSize", "must be between 1 and 100")),
        },
    };
    let rows = app
        .runtime
        .journal()
        .push_configs(&task.task_id)
        .await
        .map_err(internal)?;
    let start = match params
        .get("pageToken")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
    {
        None => 0,
        Some(t) => rows.iter().position(|r| r.config_id == t).ok_or_else(|| {
            RpcError::field(
                "pageToken",
                "is not a token from a previous ListTaskPushNotificationConfigs response",
            )
        })?,
    };
    let page: Vec<Value> = rows
        .iter()
        .skip(start)
        .take(page_size)
        .map(|r| view(app, r, &task, with_health))
        .collect();
    let mut out = json!({ "configs": page });
    if let Some(next) = rows.get(start + page_size) {
        out["nextPageToken"] = Value::String(next.config_id.clone());
    }
    Ok(out)
}

/// `DeleteTaskPushNotificationConfig`: `null`, whether or not the config existed.
pub async fn delete(
    app: &AppState,
    principal: &Principal,
    agent: &AgentSpec,
    params: &Value,
) -> Result<Value, RpcError> {
    require_push(agent)?;
    let task = task_of(app, principal, agent, params).await?;
    let id = config_id(params)?;
    app.runtime
        .journal()
        .delete_push_config(&task.task_id, &id)
        .await
        .map_err(internal)?;
    Ok(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_to_its_cap_with_jitter_in_the_upper_half() {
        let s = PushSettings {
            initial_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(60),
            ..PushSettings::default()
        };
        assert_eq!(s.backoff(1, 1.0), Duration::from_secs(1));
        assert_eq!(s.backoff(1, 0.0), Duration::from_millis(500));
        assert_eq!(s.backoff(2, 1.0), Duration::from_secs(2));
        assert_eq!(s.backoff(4, 1.0), Duration::from_secs(8));
        assert_eq!(s.backoff(7, 1.0), Duration::from_secs(60));
        assert_eq!(s.backoff(u32::MAX, 0.5), Duration::from_secs(45));
        let spread: std::collections::BTreeSet<Duration> =
            [0.0, 0.3, 0.9].iter().map(|j| s.backoff(3, *j)).collect();
        assert_eq!(spread.len(), 3, "jitter spreads retries");
    }

    #[test]
    fn health_says_what_is_owed_and_whether_delivery_stopped() {
        let mut row = PushConfigRow::new(
            "t",
            "c",
            CallerKey::from_stored("me"),
            "https://x",
            "s",
            chrono::DateTime::UNIX_EPOCH,
        );
        assert_eq!(health(&row, false).state, "idle");
        row.pending = 2;
        assert_eq!(health(&row, false).state, "delivering");
        row.attempts = 3;
        row.next_attempt_at = Some(chrono::DateTime::UNIX_EPOCH);
        assert_eq!(health(&row, false).state, "retrying");
        assert!(!health(&row, false).final_state_pending);
        row.failing_at = Some(chrono::DateTime::UNIX_EPOCH);
        let h = health(&row, true);
        assert_eq!(h.state, "failing");
        assert!(h.final_state_pending);
        assert_eq!(
            h.next_attempt_at, None,
            "a stopped config has no next attempt"
        );
    }
}
