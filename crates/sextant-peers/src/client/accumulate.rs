//! Folding what a peer sends (a `SendMessage` result, or the events of a stream) into one view:
//! the remote task's ids and state, its status message, its artifacts (chunks appended by
//! `artifactId`), or the direct Message it answered with.

use a2a::{Artifact, Message, Part, SendMessageResponse, StreamResponse, Task, TaskState};

/// The remote side of one exchange, as far as it got.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Accumulated {
    pub task_id: Option<String>,
    pub context_id: Option<String>,
    /// The remote task's latest state (`None` for a Message answer).
    pub state: Option<TaskState>,
    /// The remote task's latest status message (a question when input is required).
    pub status_message: Option<Message>,
    /// Artifacts in the order they first appeared, chunks merged.
    pub artifacts: Vec<Artifact>,
    /// A direct Message answer (no task).
    pub message: Option<Message>,
    /// How many events were applied.
    pub events: usize,
}

fn texts(parts: &[Part]) -> String {
    parts.iter().filter_map(Part::as_text).collect::<String>()
}

impl Accumulated {
    /// From a blocking `SendMessage` result.
    pub fn from_response(r: SendMessageResponse) -> Self {
        let mut a = Self::default();
        match r {
            SendMessageResponse::Task(t) => a.apply(&StreamResponse::Task(t)),
            SendMessageResponse::Message(m) => a.apply(&StreamResponse::Message(m)),
        }
        a
    }

    /// From a `GetTask` result.
    pub fn from_task(t: Task) -> Self {
        let mut a = Self::default();
        a.apply(&StreamResponse::Task(t));
        a
    }

    /// Applies one event.
    pub fn apply(&mut self, ev: &StreamResponse) {
        self.events += 1;
        match ev {
            StreamResponse::Task(t) => {
                self.task_id = Some(t.id.clone());
                self.context_id = Some(t.context_id.clone());
                self.state = Some(t.status.state.clone());
                self.status_message = t.status.message.clone();
                if let Some(arts) = &t.artifacts {
                    self.artifacts = arts.clone();
                }
            }
            StreamResponse::Message(m) => {
                if self.context_id.is_none() {
                    self.context_id = m.context_id.clone();
                }
                if self.task_id.is_none() {
                    self.task_id = m.task_id.clone();
                }
                self.message = Some(m.clone());
            }
            StreamResponse::StatusUpdate(s) => {
                self.task_id = Some(s.task_id.clone());
                self.context_id = Some(s.context_id.clone());
                self.state = Some(s.status.state.clone());
                // A status without a message clears the previous question.
                self.status_message = s.status.message.clone();
            }
            StreamResponse::ArtifactUpdate(u) => {
                self.task_id = Some(u.task_id.clone());
                self.context_id = Some(u.context_id.clone());
                let existing = self
                    .artifacts
                    .iter_mut()
                    .find(|a| a.artifact_id == u.artifact.artifact_id);
                match existing {
                    Some(a) if u.append == Some(true) => {
                        a.parts.extend(u.artifact.parts.iter().cloned())
                    }
                    Some(a) => *a = u.artifact.clone(),
                    None => self.artifacts.push(u.artifact.clone()),
                }
            }
        }
    }

    /// Whether the remote task ended for good.
    pub fn is_terminal(&self) -> bool {
        self.state.as_ref().is_some_and(TaskState::is_terminal)
    }

    /// Whether the remote task waits for input or authorization.
    pub fn is_interrupted(&self) -> bool {
        matches!(
            self.state,
            Some(TaskState::InputRequired | TaskState::AuthRequired)
        )
    }

    /// The status message's text.
    pub fn status_text(&self) -> String {
        self.status_message
            .as_ref()
            .map(|m| texts(&m.parts))
            .unwrap_or_default()
    }

    /// The answer as text: a Message's text; else the artifacts' text, followed by the status
    /// message's text when the task is not completed (a question or a failure reason) or when
    /// there is no artifact text.
    pub fn reply_text(&self) -> String {
        if let Some(m) = &self.message {
            return texts(&m.parts);
        }
        let arts: Vec<String> = self
            .artifacts
            .iter()
            .map(|a| texts(&a.parts))
            .filter(|t| !t.is_empty())
            .collect();
        let mut out = arts.join("\n\n");
        let status = self.status_text();
        let completed = self.state == Some(TaskState::Completed);
        if !status.trim().is_empty() && (!completed || out.trim().is_empty()) && status != out {
            if !out.is_empty() {
                out.push_str("\n\n");
            }
            out.push_str(&status);
        }
        out
    }

    /// Every part of the answer: the Message's, or the artifacts' then the status message's.
    pub fn parts(&self) -> Vec<Part> {
        if let Some(m) = &self.message {
            return m.parts.clone();
        }
        let mut out: Vec<Part> = self
            .artifacts
            .iter()
            .flat_map(|a| a.parts.iter().cloned())
            .collect();
        if let Some(m) = &self.status_message {
            out.extend(m.parts.iter().cloned());
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ev(v: serde_json::Value) -> StreamResponse {
        serde_json::from_value(v).expect("a stream response")
    }

    #[test]
    fn stream_events_fold_into_one_answer() {
        let mut a = Accumulated::default();
        for e in [
            json!({"task": {"id": "t", "contextId": "c", "status": {"state": "TASK_STATE_SUBMITTED"}}}),
            json!({"statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING"}}}),
            json!({"artifactUpdate": {"taskId": "t", "contextId": "c", "artifact": {"artifactId": "a", "parts": [{"text": "Hel"}]}}}),
            json!({"artifactUpdate": {"taskId": "t", "contextId": "c", "append": true, "lastChunk": true, "artifact": {"artifactId": "a", "parts": [{"text": "lo"}]}}}),
            json!({"statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_INPUT_REQUIRED", "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "Which one?"}]}}}}),
        ] {
            a.apply(&ev(e));
        }
        assert_eq!(a.task_id.as_deref(), Some("t"));
        assert!(a.is_interrupted());
        assert_eq!(a.reply_text(), "Hello\n\nWhich one?");
        assert_eq!(a.parts().len(), 3);
        a.apply(&ev(json!({"statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_COMPLETED", "message": {"messageId": "m2", "role": "ROLE_AGENT", "parts": [{"text": "done"}]}}}})));
        assert!(a.is_terminal());
        assert_eq!(a.reply_text(), "Hello");
        let m = Accumulated::from_response(SendMessageResponse::Message(
            serde_json::from_value(json!({"messageId": "x", "contextId": "c2", "role": "ROLE_AGENT", "parts": [{"text": "hi"}]}))
                .expect("message"),
        ));
        assert_eq!((m.reply_text().as_str(), m.state.clone()), ("hi", None));
        assert_eq!(m.context_id.as_deref(), Some("c2"));
    }
}
