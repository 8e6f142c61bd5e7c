//! Pausing an Agent, and stopping all of its work.
//!
//! A paused Agent takes no new input (admission refuses it, saying so), and its queued tasks
//! wait: a worker does not start a turn for a task of a paused Agent. Work already running
//! goes on (stop it with [`Runtime::stop_all`]), and answers to its pending decisions still
//! land. The pause is an instance setting in the journal (`agent_paused:<id>`), read at start,
//! so a restart keeps it. Resuming hands the queued tasks to their workers.

use std::collections::HashSet;

use sextant_core::a2a::TaskState;

use crate::{CancelOutcome, CancelRequest, Runtime};

/// The `settings` key of an Agent's pause.
fn key(agent_id: &str) -> String {
    format!("agent_paused:{agent_id}")
}

impl Runtime {
    /// Whether the owner paused this Agent.
    pub fn agent_paused(&self, agent_id: &str) -> bool {
        self.inner
            .paused_agents
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .contains(agent_id)
    }

    /// Pauses or resumes an Agent (stored; see the module docs). Resuming starts its queued
    /// tasks. `false` if there is no such Agent.
    pub async fn set_agent_paused(
        &self,
        agent_id: &str,
        paused: bool,
    ) -> Result<bool, sextant_journal::Error> {
        if self.agent(agent_id).is_none() {
            return Ok(false);
        }
        let value = if paused { "true" } else { "false" };
        self.inner
            .journal
            .set_setting(&key(agent_id), value)
            .await?;
        {
            let mut set = self
                .inner
                .paused_agents
                .write()
                .unwrap_or_else(|e| e.into_inner());
            if paused {
                set.insert(agent_id.to_string());
            } else {
                set.remove(agent_id);
            }
        }
        tracing::info!(agent_id, paused, "agent paused or resumed");
        if !paused {
            for t in self.inner.journal.unfinished_tasks().await? {
                if t.agent_id == agent_id && t.state == TaskState::Submitted {
                    self.dispatch_item(
                        &t.session_id,
                        &t.agent_id,
                        crate::worker::WorkItem::Task {
                            task_id: t.task_id.to_string(),
                            fresh: None,
                        },
                    );
                }
            }
        }
        Ok(true)
    }

    /// Cancels every unfinished task of an Agent (queued, running or waiting), as
    /// [`Runtime::cancel`] does each; how many were canceled.
    pub async fn stop_all(
        &self,
        agent_id: &str,
        request: &CancelRequest,
    ) -> Result<usize, sextant_journal::Error> {
        let mut canceled = 0;
        for t in self.inner.journal.unfinished_tasks().await? {
            if t.agent_id != agent_id {
                continue;
            }
            if let CancelOutcome::Canceled(_) = self.cancel(&t.task_id, request).await? {
                canceled += 1;
            }
        }
        Ok(canceled)
    }

    /// Reads the stored pauses of the configured Agents (at start).
    pub(crate) async fn load_paused_agents(&self) -> Result<(), sextant_journal::Error> {
        let mut paused = HashSet::new();
        for id in self.inner.agents.keys() {
            if self.inner.journal.setting(&key(id)).await?.as_deref() == Some("true") {
                paused.insert(id.clone());
            }
        }
        *self
            .inner
            .paused_agents
            .write()
            .unwrap_or_else(|e| e.into_inner()) = paused;
        Ok(())
    }
}
