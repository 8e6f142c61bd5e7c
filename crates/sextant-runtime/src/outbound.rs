//! What the runtime asks of Sextant's outbound side: the `sextant-peers` crate (registered
//! peers, the A2A client behind the network guard), which depends on this one.
//!
//! The runtime has no HTTP client of its own. Where a turn or a person's action reaches out of
//! Sextant, it goes through the [`Outbound`] given to [`RuntimeBuilder::outbound`]:
//! the `a2a` engine, fetched URL parts of `exec` turns, answers to outbound cards, and the
//! remote half of a cancel. A runtime without one fails `a2a` turns and describes URL parts
//! as not fetched (tests build such runtimes).
//!
//! [`RuntimeBuilder::outbound`]: crate::RuntimeBuilder::outbound

use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::Value;
use sextant_core::{AgentSpec, Answer, Interaction};
use sextant_journal::TaskRow;

use crate::engine::Engine;

/// A fetched URL: its bytes, and the media type the response declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fetched {
    pub bytes: Vec<u8>,
    pub content_type: Option<String>,
}

/// Sextant's outbound side, as the runtime uses it (implemented by `sextant_peers::Peers`).
pub trait Outbound: Send + Sync + 'static {
    /// The engine of `agent`, an `a2a` Agent (`EngineSpec::A2a`).
    fn a2a_engine(&self, agent: &AgentSpec) -> Box<dyn Engine>;

    /// Fetches `url` for an `exec` turn's URL part: public addresses only (a caller's URL must
    /// not reach this machine's or its network's services), at most `limit` bytes, within
    /// `timeout`; or why not (for the turn line).
    fn fetch_public<'a>(
        &'a self,
        url: &'a url::Url,
        limit: usize,
        timeout: Duration,
    ) -> BoxFuture<'a, Result<Fetched, String>>;

    /// Sends the person's `answer` to the remote task an outbound card is about
    /// ([`crate::interactions::is_outbound_card`]) and journals what follows.
    fn answer_card(
        &self,
        task: TaskRow,
        interaction: Interaction,
        answer: Answer,
    ) -> BoxFuture<'static, Result<(), String>>;

    /// Asks `peer` to cancel its task `remote_task_id`, for a canceled task of an `a2a` Agent;
    /// what came of it, as recorded with the cancel (`peer`, `remoteTaskId`, and the remote
    /// `state` or an `error`).
    fn cancel_remote<'a>(&'a self, peer: &'a str, remote_task_id: &'a str) -> BoxFuture<'a, Value>;

    /// Goes on following the remote task of an outbound call (`a2a_call`) that was followed
    /// when Sextant stopped: `task` is the outbound task, `note` the follow note it journalled
    /// (marked `outbound`). The outbound side concludes the task when the remote one settles.
    fn resume_call(&self, task: TaskRow, note: Value) -> BoxFuture<'static, Result<(), String>>;
}
