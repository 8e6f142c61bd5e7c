//! The journal's async API for push notifications: configs (written by the writer thread,
//! which keeps its index of live tasks' configs in step) and the outbox the delivery worker
//! drains. Deliveries are queued by the writer itself, inside the transaction of the event they
//! cover; nothing here queues one.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use sextant_core::ids::format_time;

use crate::queries::push::{self, OutboxRow, PushConfigRow};
use crate::writer::{Job, PushPut};
use crate::{Journal, Result};

impl Journal {
    /// Creates or replaces (and re-enables) a config. A task that has not ended owes it every
    /// later event.
    pub async fn put_push_config(&self, row: PushConfigRow) -> Result<PushPut> {
        self.write(|reply| Job::PutPush {
            row: Box::new(row),
            reply,
        })
        .await
    }

    /// Deletes a config and the deliveries it was still owed; whether it existed.
    pub async fn delete_push_config(&self, task_id: &str, config_id: &str) -> Result<bool> {
        let (task_id, config_id) = (task_id.to_string(), config_id.to_string());
        self.write(|reply| Job::DeletePush {
            task_id,
            config_id,
            reply,
        })
        .await
    }

    /// One config.
    pub async fn push_config(
        &self,
        task_id: &str,
        config_id: &str,
    ) -> Result<Option<PushConfigRow>> {
        let (t, i) = (task_id.to_string(), config_id.to_string());
        self.read(move |c| push::get(c, &t, &i)).await
    }

    /// A task's configs, oldest first.
    pub async fn push_configs(&self, task_id: &str) -> Result<Vec<PushConfigRow>> {
        let t = task_id.to_string();
        self.read(move |c| push::for_task(c, &t)).await
    }

    /// The most recent configs of every task, newest first.
    pub async fn recent_push_configs(&self, limit: u32) -> Result<Vec<PushConfigRow>> {
        self.read(move |c| push::recent(c, limit)).await
    }

    /// Configs with a delivery due at `now`, each with its first pending delivery.
    pub async fn push_due(
        &self,
        now: DateTime<Utc>,
        limit: u32,
    ) -> Result<Vec<(PushConfigRow, OutboxRow)>> {
        self.read(move |c| {
            let mut out = Vec::new();
            for cfg in push::due(c, now, limit)? {
                if let Some(head) = push::head(c, &cfg.task_id, &cfg.config_id)? {
                    out.push((cfg, head));
                }
            }
            Ok(out)
        })
        .await
    }

    /// A config's first pending delivery.
    pub async fn push_head(&self, task_id: &str, config_id: &str) -> Result<Option<OutboxRow>> {
        let (t, i) = (task_id.to_string(), config_id.to_string());
        self.read(move |c| push::head(c, &t, &i)).await
    }

    /// When the next delivery is due, if any.
    pub async fn push_next_due(&self) -> Result<Option<DateTime<Utc>>> {
        self.read(push::next_due).await
    }

    /// Records a delivery answered 2xx; whether it was still owed.
    pub async fn push_delivered(&self, delivery: OutboxRow, at: DateTime<Utc>) -> Result<bool> {
        let at = format_time(at);
        self.call(move |c| push::delivered(c, &delivery, &at)).await
    }

    /// Records a failed attempt: try again at `next`, or (`None`) stop until re-enabled.
    pub async fn push_failed(
        &self,
        task_id: &str,
        config_id: &str,
        at: DateTime<Utc>,
        error: &str,
        next: Option<DateTime<Utc>>,
    ) -> Result<()> {
        let (t, i, at, e) = (
            task_id.to_string(),
            config_id.to_string(),
            format_time(at),
            error.to_string(),
        );
        let next = next.map(format_time);
        self.call(move |c| push::failed(c, &t, &i, &at, &e, next.as_deref()))
            .await
    }

    /// Re-enables a config that stopped after failures; whether it exists.
    pub async fn resume_push_config(
        &self,
        task_id: &str,
        config_id: &str,
        at: DateTime<Utc>,
    ) -> Result<bool> {
        let (t, i, at) = (task_id.to_string(), config_id.to_string(), format_time(at));
        let resumed = self.call(move |c| push::resume(c, &t, &i, &at)).await?;
        if resumed {
            self.push_ready().notify_one();
        }
        Ok(resumed)
    }

    /// Notified after a commit that queued push deliveries (or re-enabled a config).
    pub fn push_ready(&self) -> &Arc<tokio::sync::Notify> {
        &self.inner.push_ready
    }
}
