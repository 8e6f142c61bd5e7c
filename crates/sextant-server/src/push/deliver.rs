//! The delivery worker: drains the journal's push outbox.
//!
//! For each config with a delivery due, it renders the event the delivery covers as an A2A
//! `StreamResponse` (the same one a subscriber of the task sees; a task's first event as a
//! `task` snapshot), POSTs it through the network guard with `Content-Type:
//! application/a2a+json`, the config's `Authorization` and a signature ([`super::sign`]), and
//! on a 2xx answer removes the delivery and goes on with the config's next one: in order, one
//! at a time per config, several configs at once. Anything else is a failure: the config's next
//! attempt is put off with exponential backoff and jitter ([`super::PushSettings::backoff`]),
//! and after `max_failures` in a row (or at once, for a URL the guard refuses or secrets that
//! cannot be opened) the config stops, keeping what it owes, until its owner re-enables it.
//! Every step is in the journal, so a restart goes on where it stopped: a delivery whose answer
//! was lost to a crash is sent again (at least once, never zero); receivers drop repeats by
//! `webhook-id`.
//!
//! Time comes from the runtime's [`sextant_core::Clock`]: due times, backoff and the signed
//! timestamp. The loop sleeps (in real time) until the clock says the next delivery is due, or
//! until the journal says it queued something ([`sextant_journal::Journal::push_ready`], which
//! a test also notifies after moving a manual clock); [`deliver_due_now`] runs one pass.

use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;
use sextant_core::EventBody;
use sextant_core::projection::{OutputModes, TaskFold, ViewOptions, stream_response};
use sextant_journal::{OutboxRow, PushConfigRow};
use sextant_peers::client::ClientError;
use tokio_util::sync::CancellationToken;

use crate::AppState;

/// Configs delivered to at once.
const PARALLEL: usize = 8;
/// Configs taken per pass.
const BATCH: u32 = 256;
/// The longest the loop sleeps without looking (a config re-enabled by another process).
const MAX_NAP: Duration = Duration::from_secs(60);

/// Runs the worker until `cancel` fires.
pub async fn run(app: AppState, cancel: CancellationToken) {
    let ready = app.runtime.journal().push_ready().clone();
    loop {
        // Registered before the pass, so a commit during the pass wakes the next sleep.
        let notified = ready.notified();
        futures::pin_mut!(notified);
        notified.as_mut().enable();
        // A pass stops at shutdown too: an attempt cut short stays owed and is sent again.
        tokio::select! {
            _ = cancel.cancelled() => break,
            _ = deliver_due_now(&app) => {}
        }
        let wait = time_to_next(&app).await;
        tokio::select! {
            _ = cancel.cancelled() => break,
            _ = &mut notified => {}
            _ = tokio::time::sleep(wait) => {}
        }
    }
    tracing::debug!("push delivery stopped");
}

async fn time_to_next(app: &AppState) -> Duration {
    let next = match app.runtime.journal().push_next_due().await {
        Ok(n) => n,
        Err(e) => {
            tracing::warn!(error = %e, "push: cannot read the next due delivery");
            return Duration::from_secs(1);
        }
    };
    let Some(next) = next else {
        return MAX_NAP;
    };
    match (next - app.runtime.clock().now()).to_std() {
        Ok(d) => (d + Duration::from_millis(5)).min(MAX_NAP),
        // Due already (a pass that just failed to record, say): not in a spin.
        Err(_) => Duration::from_millis(50),
    }
}

/// One pass: every config with a delivery due now gets its owed deliveries, in order, until
/// one fails or none is left. Returns how many were delivered.
pub async fn deliver_due_now(app: &AppState) -> usize {
    let _one_at_a_time = app.push.tick.lock().await;
    let now = app.runtime.clock().now();
    let due = match app.runtime.journal().push_due(now, BATCH).await {
        Ok(d) => d,
        Err(e) => {
            tracing::warn!(error = %e, "push: cannot read due deliveries");
            return 0;
        }
    };
    futures::stream::iter(due)
        .map(|(cfg, head)| drain(app, cfg, head))
        .buffer_unordered(PARALLEL)
        .fold(0, |n, d| async move { n + d })
        .await
}

/// Delivers a config's owed deliveries from `head` on, until one fails.
async fn drain(app: &AppState, cfg: PushConfigRow, mut head: OutboxRow) -> usize {
    let journal = app.runtime.journal();
    let mut delivered = 0;
    let mut attempts = cfg.attempts;
    loop {
        let result = attempt(app, &cfg, &head).await;
        let at = app.runtime.clock().now();
        match result {
            Ok(()) => {
                if let Err(e) = journal.push_delivered(head.clone(), at).await {
                    tracing::warn!(error = %e, "push: cannot record a delivery; it will be sent again");
                    return delivered;
                }
                delivered += 1;
                attempts = 0;
            }
            Err(failure) => {
                attempts += 1;
                let stop = failure.permanent
                    || attempts >= i64::from(app.push.settings.max_failures.max(1));
                let next = (!stop).then(|| {
                    let wait = app
                        .push
                        .settings
                        .backoff(u32::try_from(attempts).unwrap_or(u32::MAX), jitter());
                    let wait = chrono::Duration::from_std(wait).unwrap_or(chrono::Duration::MAX);
                    app.runtime.clock().now() + wait
                });
                tracing::info!(
                    task = %cfg.task_id, config = %cfg.config_id, attempts,
                    stopped = stop, error = %failure.why, "push delivery failed"
                );
                if let Err(e) = journal
                    .push_failed(&cfg.task_id, &cfg.config_id, at, &failure.why, next)
                    .await
                {
                    tracing::warn!(error = %e, "push: cannot record a failed delivery");
                }
                return delivered;
            }
        }
        match journal.push_head(&cfg.task_id, &cfg.config_id).await {
            Ok(Some(next)) => head = next,
            Ok(None) => return delivered,
            Err(e) => {
                tracing::warn!(error = %e, "push: cannot read the next delivery");
                return delivered;
            }
        }
    }
}

/// A fraction in [0, 1) from the OS's randomness, for backoff jitter.
fn jitter() -> f64 {
    let mut b = [0u8; 8];
    if getrandom::fill(&mut b).is_err() {
        return 0.5;
    }
    (u64::from_le_bytes(b) >> 11) as f64 / (1u64 << 53) as f64
}

/// Why an attempt failed, and whether retrying can help.
struct Failure {
    why: String,
    permanent: bool,
}

impl Failure {
    fn retry(why: impl Into<String>) -> Self {
        Self {
            why: why.into(),
            permanent: false,
        }
    }

    fn stop(why: impl Into<String>) -> Self {
        Self {
            why: why.into(),
            permanent: true,
        }
    }
}

/// One POST of one delivery.
async fn attempt(app: &AppState, cfg: &PushConfigRow, head: &OutboxRow) -> Result<(), Failure> {
    let secrets = app.push.open(cfg).map_err(Failure::stop)?;
    let body = render(app, cfg, head).await.map_err(Failure::retry)?;
    let url = url::Url::parse(&cfg.url).map_err(|e| Failure::stop(format!("bad URL: {e}")))?;
    let peers = &app.peers;
    let id = format!("{}-{}", cfg.config_id, head.delivery_id);
    let timestamp = app.runtime.clock().now().timestamp();
    let token = secrets.token.clone().unwrap_or_default();
    let mut headers: Vec<(&str, String)> = vec![
        ("content-type", "application/a2a+json".into()),
        ("webhook-id", id.clone()),
        ("webhook-timestamp", timestamp.to_string()),
        (
            "webhook-signature",
            super::sign::signature(&token, &id, timestamp, &body),
        ),
        ("a2a-version", "1.0".into()),
    ];
    if let Some(a) = &secrets.authentication {
        let value = match a.credentials.as_deref().filter(|c| !c.is_empty()) {
            Some(c) => format!("{} {c}", a.scheme),
            None => a.scheme.clone(),
        };
        headers.push(("authorization", value));
    }
    match peers
        .client()
        .post_bytes(
            &url,
            app.push.settings.policy(),
            &headers,
            body.into(),
            app.push.settings.timeout,
        )
        .await
    {
        Ok(_) => Ok(()),
        Err(ClientError::Refused(r)) => Err(Failure::stop(format!(
            "{r} (webhook addresses are set in outbound.toml [push])"
        ))),
        // The client words its errors for peers ("the peer answered HTTP 503"): here the other
        // side is a webhook.
        Err(e) => Err(Failure::retry(e.to_string().replacen(
            "the peer",
            "the webhook",
            1,
        ))),
    }
}

/// The body of a delivery: the covered event as its task's caller would see it in a stream.
async fn render(app: &AppState, cfg: &PushConfigRow, head: &OutboxRow) -> Result<Vec<u8>, String> {
    let journal = app.runtime.journal();
    let task = journal
        .task(&cfg.task_id)
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("task {} is gone", cfg.task_id))?;
    let ev = journal
        .session_events(&head.session_id, head.seq - 1, 1)
        .await
        .map_err(|e| e.to_string())?
        .into_iter()
        .find(|e| e.seq == head.seq)
        .ok_or_else(|| format!("event {} of the task is gone", head.seq))?;
    let base = base_url(app);
    let mut value = match &ev.body {
        EventBody::TaskCreated { .. } => {
            let fold =
                TaskFold::from_events(&task.task_id, &task.context_id, &task.session_id, [&ev]);
            let opts = ViewOptions {
                include_artifacts: true,
                session_url: Some(format!("{base}/sessions/{}", task.session_id)),
                ..Default::default()
            };
            let mut o = serde_json::Map::new();
            o.insert(
                "task".into(),
                serde_json::to_value(fold.to_task(&opts)).map_err(|e| e.to_string())?,
            );
            Value::Object(o)
        }
        _ => stream_response(&ev, &task.task_id, &task.context_id, &OutputModes::Any)
            .ok_or_else(|| format!("event {} is not a stream event", head.seq))?,
    };
    crate::a2a::tasks::add_answer_urls(&mut value, &base);
    if task.caller != sextant_core::Principal::person().key() {
        sextant_core::redact::scrub_json(&mut value, app.security.redact_emails);
    }
    serde_json::to_vec(&value).map_err(|e| e.to_string())
}

/// The URL Sextant advertises without a request to take it from: the public URL, else the
/// bound address.
fn base_url(app: &AppState) -> String {
    match &app.config.public_url {
        Some(u) => u.trim_end_matches('/').to_string(),
        None => format!("http://{}", app.config.bind),
    }
}
