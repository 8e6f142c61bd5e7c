//! The shell's view of the approvals inbox, read like any other client of the embedded server:
//! it follows `GET /api/v1/tasks/events` and, whenever an interaction is raised or answered
//! (or the stream says it lagged), re-reads `GET /api/v1/interactions`. From that list it sets
//! the tray's pending count and notifies about interactions it has not seen before. A
//! schedule notice on the same stream (a plan started failing, recovered, or was paused) is
//! shown as a notification as it comes.
//!
//! No business logic: which interactions are pending is the server's answer, verbatim. The
//! subscription is opened before the list is read, so nothing raised in between is missed; a
//! dropped stream is reopened after a second, and the re-read after it catches up (and
//! notifies) whatever was raised meanwhile. Interactions already pending at launch are counted
//! but not notified: the person sees them in the window.

use std::collections::HashSet;
use std::time::Duration;

use anyhow::{Context, Result};
use futures::StreamExt;
use serde::Deserialize;
use tauri::AppHandle;
use tokio_util::sync::CancellationToken;

use sextant_a2a::sse::{SseError, SseParser};

/// The largest event the stream may carry: its events are small JSON (a notice, a task id); a
/// bigger one is a broken stream, dropped and reopened like any other.
const MAX_EVENT: usize = 1024 * 1024;

/// Wait before reopening a dropped stream.
const RETRY: Duration = Duration::from_secs(1);

/// The fields of a pending interaction (`GET /api/v1/interactions`) a notification shows.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pending {
    pub interaction_id: String,
    pub title: String,
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub command: Option<String>,
    pub agent_id: String,
    #[serde(default)]
    pub agent_name: Option<String>,
}

impl Pending {
    /// The notification's body: who asks, and what.
    pub fn body(&self) -> String {
        let who = self.agent_name.as_deref().unwrap_or(&self.agent_id);
        let what = self
            .command
            .as_deref()
            .or(self.description.as_deref())
            .unwrap_or("needs your decision");
        format!("{who}: {what}")
    }
}

#[derive(Debug, Deserialize)]
struct List {
    interactions: Vec<Pending>,
}

/// The fields of a schedule notice (`event: schedule`) a notification shows.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScheduleNotice {
    /// `failed`, `recovered` or `paused`.
    pub kind: String,
    pub schedule_id: String,
    pub message: String,
}

impl ScheduleNotice {
    /// The notification's title.
    pub fn title(&self) -> &'static str {
        match self.kind.as_str() {
            "recovered" => "A schedule recovered",
            "paused" => "A schedule was paused",
            _ => "A scheduled Run failed",
        }
    }
}

/// Follows the server until `stop` fires.
pub fn spawn(app: AppHandle, base: String, token: String, stop: CancellationToken) {
    tauri::async_runtime::spawn(async move {
        let client = match reqwest::Client::builder().no_proxy().build() {
            Ok(c) => c,
            Err(e) => {
                tracing::error!(error = %e, "watch: no HTTP client; tray count and notifications are off");
                return;
            }
        };
        let mut w = Watch {
            app,
            client,
            base,
            token,
            seen: None,
        };
        loop {
            tokio::select! {
                _ = stop.cancelled() => return,
                r = w.follow() => match r {
                    Ok(()) => tracing::debug!("watch: event stream ended; reopening"),
                    Err(e) => tracing::warn!(error = %format!("{e:#}"), "watch: event stream failed; reopening"),
                },
            }
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(RETRY) => {}
            }
        }
    });
}

struct Watch {
    app: AppHandle,
    client: reqwest::Client,
    base: String,
    token: String,
    /// Interaction ids seen so far; `None` before the first read (nothing is notified then).
    seen: Option<HashSet<String>>,
}

impl Watch {
    /// One subscription: open the stream, read the list, then re-read on every change.
    async fn follow(&mut self) -> Result<()> {
        let res = self
            .client
            .get(format!("{}/api/v1/tasks/events", self.base))
            .bearer_auth(&self.token)
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .send()
            .await
            .context("GET /api/v1/tasks/events")?
            .error_for_status()
            .context("GET /api/v1/tasks/events")?;
        self.refresh().await?;
        let mut parser = SseParser::new(MAX_EVENT);
        let mut body = res.bytes_stream();
        while let Some(chunk) = body.next().await {
            let chunk = chunk.context("reading the event stream")?;
            let events = parser.feed(&chunk).map_err(|e| match e {
                SseError::TooLarge(max) => anyhow::anyhow!("an event over {max} bytes"),
                SseError::NotUtf8 => anyhow::anyhow!("the event stream is not UTF-8"),
            })?;
            for e in events.iter().filter(|e| e.kind() == "schedule") {
                match serde_json::from_str::<ScheduleNotice>(&e.data) {
                    Ok(n) => crate::notify::schedule_notice(&self.app, &n),
                    Err(err) => tracing::debug!(error = %err, "watch: unreadable schedule notice"),
                }
            }
            let changed = events
                .iter()
                .any(|e| e.kind() == "interaction" || e.kind() == "resync");
            if changed {
                self.refresh().await?;
            }
        }
        Ok(())
    }

    /// Reads the pending list, sets the tray count, notifies about new ones.
    async fn refresh(&mut self) -> Result<()> {
        let list: List = self
            .client
            .get(format!("{}/api/v1/interactions", self.base))
            .bearer_auth(&self.token)
            .send()
            .await
            .context("GET /api/v1/interactions")?
            .error_for_status()
            .context("GET /api/v1/interactions")?
            .json()
            .await
            .context("GET /api/v1/interactions: body")?;
        crate::tray::set_pending(&self.app, list.interactions.len());
        let ids: HashSet<String> = list
            .interactions
            .iter()
            .map(|i| i.interaction_id.clone())
            .collect();
        if let Some(seen) = &self.seen {
            for i in list
                .interactions
                .iter()
                .filter(|i| !seen.contains(&i.interaction_id))
            {
                crate::notify::new_interaction(&self.app, i);
            }
        }
        // Forget answered ones, so the set stays as small as the inbox.
        self.seen = Some(ids);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_says_who_asks_and_what() {
        let p: Pending = serde_json::from_value(serde_json::json!({
            "interactionId": "i1", "title": "Run this shell command?", "command": "df -h",
            "agentId": "shell", "agentName": "Shell", "options": []
        }))
        .unwrap();
        assert_eq!(p.body(), "Shell: df -h");
        let q: Pending = serde_json::from_value(serde_json::json!({
            "interactionId": "i2", "title": "Pick one", "agentId": "codex"
        }))
        .unwrap();
        assert_eq!(q.body(), "codex: needs your decision");
    }

    #[test]
    fn schedule_notices_read_as_the_server_sends_them() {
        let n: ScheduleNotice = serde_json::from_value(serde_json::json!({
            "kind": "paused", "scheduleId": "s1", "scheduleName": "Backup", "runId": "r1",
            "consecutiveFailures": 3, "message": "“Backup” was paused after 3 consecutive failed Runs",
            "at": "2026-12-01T10:00:00.000Z"
        }))
        .unwrap();
        assert_eq!(n.title(), "A schedule was paused");
        assert_eq!(n.schedule_id, "s1");
        let f: ScheduleNotice = serde_json::from_value(serde_json::json!({
            "kind": "failed", "scheduleId": "s2", "message": "A Run of “x” failed: boom"
        }))
        .unwrap();
        assert_eq!(f.title(), "A scheduled Run failed");
    }
}
