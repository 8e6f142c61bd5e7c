//! The conformance engine: the system-under-test behaviour contract of the A2A TCK (branch
//! `1.0-dev`) and of the ACTS draft, so `sextant serve --conformance` can be checked by them.
//!
//! The behaviour is chosen by the prefix of the turn's last input `messageId` (TCK), or else by
//! the first text part (ACTS). Longer keys are matched before shorter ones
//! (`tck-artifact-file-url` before `tck-artifact-file`). Exact texts follow the TCK's reference
//! SUTs because the kit compares them.

use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use sextant_core::a2a::Part;
use sextant_core::ids::new_id;

use super::{Engine, Outcome, Turn, TurnSink};
use sextant_core::parts::artifact;

/// Behaviour keys in match order (longest first where one is a prefix of another).
const KEYS: &[&str] = &[
    "tck-stream-artifact-chunked",
    "test-resubscribe-message-id",
    "tck-stream-artifact-text",
    "tck-stream-artifact-file",
    "tck-stream-ordering-001",
    "tck-artifact-file-url",
    "tck-message-response",
    "tck-input-required",
    "tck-complete-task",
    "tck-artifact-text",
    "tck-artifact-file",
    "tck-artifact-data",
    "tck-reject-task",
    "tck-stream-chunked",
    "tck-stream-basic",
    "tck-stream-001",
    "tck-stream-002",
    "tck-stream-003",
    "tck-long-running",
    "tck-task-failure",
    "tck-multi-turn",
    "tck-cancel",
];

/// How long `test-resubscribe-message-id` and `tck-long-running` stay working: the TCK asks
/// for at least 2 × its 2 s streaming timeout.
const LONG_RUNNING: Duration = Duration::from_secs(4);
/// `tck-cancel` stays working this long, waiting to be canceled (a cancel drops the turn).
const CANCEL_WAIT: Duration = Duration::from_secs(30);

/// The TCK/ACTS test agent.
#[derive(Default)]
pub struct ConformanceEngine;

/// Picks the behaviour key for a turn.
pub fn behaviour(message_id: &str, first_text: &str) -> Option<&'static str> {
    KEYS.iter()
        .find(|k| message_id.starts_with(**k))
        .or_else(|| {
            KEYS.iter()
                .find(|k| first_text.trim_start().starts_with(**k))
        })
        .copied()
}

fn file_part() -> Part {
    Part::raw(b"tck".to_vec())
        .with_filename("output.txt")
        .with_media_type("text/plain")
}

impl Engine for ConformanceEngine {
    fn has_side_effects(&self) -> bool {
        false
    }

    fn may_reply_with_message(&self, input: &sextant_core::a2a::Message) -> bool {
        let first_text = input.parts.first().and_then(|p| p.as_text()).unwrap_or("");
        behaviour(&input.message_id, first_text) == Some("tck-message-response")
    }

    fn run_turn<'a>(&'a mut self, turn: Turn, sink: &'a TurnSink) -> BoxFuture<'a, Outcome> {
        async move {
            let Some(last) = turn.inputs.last() else {
                return Outcome::Failed("no input".into());
            };
            let first_text = last.parts.first().and_then(|p| p.as_text()).unwrap_or("");
            let key = behaviour(&last.message_id, first_text);
            match run(key, &last.message_id, &turn, sink).await {
                Ok(outcome) => outcome,
                Err(e) => Outcome::Failed(format!("could not record output: {e}")),
            }
        }
        .boxed()
    }
}

async fn text_artifact(sink: &TurnSink, text: &str) -> Result<(), sextant_journal::Error> {
    sink.artifact(
        artifact(new_id(), "result", vec![Part::text(text)]),
        false,
        true,
    )
    .await
}

async fn wait(turn: &Turn, d: Duration) -> bool {
    tokio::select! {
        _ = tokio::time::sleep(d) => true,
        _ = turn.cancel.cancelled() => false,
    }
}

async fn run(
    key: Option<&str>,
    message_id: &str,
    turn: &Turn,
    sink: &TurnSink,
) -> Result<Outcome, sextant_journal::Error> {
    let done = || Outcome::Completed(None);
    Ok(match key {
        Some("tck-complete-task") => Outcome::Completed(Some("Hello from TCK".into())),
        Some("tck-artifact-text") => {
            text_artifact(sink, "Generated text content").await?;
            done()
        }
        Some("tck-artifact-file") | Some("tck-stream-artifact-file") => {
            sink.artifact(artifact(new_id(), "result", vec![file_part()]), false, true)
                .await?;
            done()
        }
        Some("tck-artifact-file-url") => {
            let part = Part::url("https://example.com/output.txt")
                .with_filename("output.txt")
                .with_media_type("text/plain");
            sink.artifact(artifact(new_id(), "result", vec![part]), false, true)
                .await?;
            done()
        }
        Some("tck-artifact-data") => {
            let part = Part::data(serde_json::json!({"key": "value", "count": 42}));
            sink.artifact(artifact(new_id(), "result", vec![part]), false, true)
                .await?;
            done()
        }
        Some("tck-message-response") => {
            sink.reply(vec![Part::text("Direct message response")])
                .await?;
            Outcome::Replied
        }
        Some("tck-input-required") | Some("tck-multi-turn") => Outcome::InputRequired(None),
        Some("tck-reject-task") => Outcome::Rejected(Some("rejected".into())),
        Some("tck-task-failure") => Outcome::Failed("Task failed".into()),
        Some("tck-stream-001") | Some("tck-stream-basic") => {
            text_artifact(sink, "Stream hello from TCK").await?;
            done()
        }
        Some("tck-stream-002") => done(),
        Some("tck-stream-003") => {
            text_artifact(sink, "Stream task lifecycle").await?;
            done()
        }
        Some("tck-stream-ordering-001") => {
            text_artifact(sink, "Ordered output").await?;
            done()
        }
        Some("tck-stream-artifact-text") => {
            text_artifact(sink, "Streamed text content").await?;
            done()
        }
        Some("tck-stream-artifact-chunked") | Some("tck-stream-chunked") => {
            let id = new_id();
            sink.artifact(
                artifact(id.clone(), "result", vec![Part::text("chunk-1 ")]),
                true,
                false,
            )
            .await?;
            sink.artifact(
                artifact(id, "result", vec![Part::text("chunk-2")]),
                true,
                true,
            )
            .await?;
            done()
        }
        Some("test-resubscribe-message-id") | Some("tck-long-running") => {
            if !wait(turn, LONG_RUNNING).await {
                return Ok(Outcome::Failed(
                    "Sextant shut down while this task was running".into(),
                ));
            }
            done()
        }
        Some("tck-cancel") => {
            if !wait(turn, CANCEL_WAIT).await {
                return Ok(Outcome::Failed(
                    "Sextant shut down while this task was running".into(),
                ));
            }
            Outcome::Completed(Some(format!(
                "No cancel arrived within {} s",
                CANCEL_WAIT.as_secs()
            )))
        }
        _ => Outcome::Completed(Some(format!("Unhandled messageId prefix: {message_id}"))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_keys_win_and_text_is_the_fallback() {
        assert_eq!(
            behaviour("tck-artifact-file-url-ab12-jsonrpc", ""),
            Some("tck-artifact-file-url")
        );
        assert_eq!(
            behaviour("tck-artifact-file-ab12", ""),
            Some("tck-artifact-file")
        );
        assert_eq!(
            behaviour("m-1", "tck-input-required please"),
            Some("tck-input-required")
        );
        assert_eq!(
            behaviour("tck-complete-task-1", "tck-input-required"),
            Some("tck-complete-task")
        );
        assert_eq!(behaviour("m-1", "hello"), None);
    }
}
