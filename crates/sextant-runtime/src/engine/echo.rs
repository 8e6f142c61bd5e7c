//! The echo engine: replies with the input text as an artifact named `echo`.

use futures::FutureExt;
use futures::future::BoxFuture;
use sextant_core::a2a::Part;
use sextant_core::ids::new_id;

use super::{Engine, Outcome, Turn, TurnSink, artifact};

/// Echoes its input.
pub struct EchoEngine;

impl Engine for EchoEngine {
    fn has_side_effects(&self) -> bool {
        false
    }

    fn run_turn<'a>(&'a mut self, turn: Turn, sink: &'a TurnSink) -> BoxFuture<'a, Outcome> {
        async move {
            let text = turn.input_text();
            match sink
                .artifact(
                    artifact(new_id(), "echo", vec![Part::text(text)]),
                    false,
                    true,
                )
                .await
            {
                Ok(()) => Outcome::Completed(None),
                Err(e) => Outcome::Failed(format!("could not record the reply: {e}")),
            }
        }
        .boxed()
    }
}
