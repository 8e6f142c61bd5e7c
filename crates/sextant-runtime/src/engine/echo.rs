//! The echo engine: replies with the input text as an artifact named `echo`.
//!
//! For benchmarks of streams, an input that starts with `chunks=N ` (N from 1 to
//! [`MAX_CHUNKS`]) echoes the rest of the text as one artifact sent in N chunks (the first
//! replaces, the others append, the last says so), so a stream carries N artifact events instead
//! of one. The chunks joined are exactly the text after the prefix. Any other input, including
//! `chunks=` with a number out of range, is echoed whole.

use futures::FutureExt;
use futures::future::BoxFuture;
use sextant_core::a2a::Part;
use sextant_core::ids::new_id;

use super::{Engine, Outcome, Turn, TurnSink};
use sextant_core::parts::artifact;

/// The most chunks one echo sends: enough for any benchmark, small enough that a caller cannot
/// make one short input write a flood of events.
pub const MAX_CHUNKS: usize = 64;

/// Echoes its input.
pub struct EchoEngine;

impl Engine for EchoEngine {
    fn has_side_effects(&self) -> bool {
        false
    }

    fn run_turn<'a>(&'a mut self, turn: Turn, sink: &'a TurnSink) -> BoxFuture<'a, Outcome> {
        async move {
            let text = turn.input_text();
            let (chunks, body) = match chunked(&text) {
                Some((n, rest)) => (split(rest, n), rest),
                None => (vec![text.as_str()], text.as_str()),
            };
            debug_assert_eq!(chunks.concat(), body);
            let id = new_id();
            let last = chunks.len() - 1;
            for (i, chunk) in chunks.into_iter().enumerate() {
                let piece = artifact(id.clone(), "echo", vec![Part::text(chunk)]);
                if let Err(e) = sink.artifact(piece, i > 0, i == last).await {
                    return Outcome::Failed(format!("could not record the reply: {e}"));
                }
            }
            Outcome::Completed(None)
        }
        .boxed()
    }
}

/// `chunks=N rest` → `(N, rest)` when N is a plain decimal in `1..=MAX_CHUNKS`.
fn chunked(text: &str) -> Option<(usize, &str)> {
    let rest = text.strip_prefix("chunks=")?;
    let (n, rest) = rest.split_once(' ')?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) || n.len() > 3 {
        return None;
    }
    let n: usize = n.parse().ok()?;
    (1..=MAX_CHUNKS).contains(&n).then_some((n, rest))
}

/// `text` in `n` pieces of near-equal length, cut on char boundaries; pieces are empty when the
/// text has fewer chars than `n`. Joined, they are `text`.
fn split(text: &str, n: usize) -> Vec<&str> {
    let chars = text.chars().count();
    let mut cuts = Vec::with_capacity(n + 1);
    // Byte offsets of char indices 0..=chars, walked once.
    let mut bounds = text.char_indices().map(|(i, _)| i).chain([text.len()]);
    let (mut next, mut byte) = (0, 0);
    for k in 0..=n {
        // Piece k starts at char k * chars / n (rounded down); targets never go back.
        let target = k * chars / n;
        while next <= target {
            byte = bounds.next().unwrap_or(text.len());
            next += 1;
        }
        cuts.push(byte);
    }
    cuts.windows(2).map(|w| &text[w[0]..w[1]]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefix_is_read_strictly() {
        assert_eq!(chunked("chunks=10 hello"), Some((10, "hello")));
        assert_eq!(chunked("chunks=1 "), Some((1, "")));
        assert_eq!(chunked("chunks=64 x"), Some((64, "x")));
        for plain in [
            "hello",
            "chunks=0 x",
            "chunks=65 x",
            "chunks=+3 x",
            "chunks=-1 x",
            "chunks= x",
            "chunks=3",
            "chunks=3\tx",
            "chunks=0003 x",
            "chunks=99999999999999999999999 x",
            " chunks=3 x",
            "Chunks=3 x",
            "chunks=３ x",
        ] {
            assert_eq!(chunked(plain), None, "{plain:?}");
        }
    }

    #[test]
    fn pieces_join_back_to_the_text() {
        for text in [
            "",
            "a",
            "hello world",
            "héllo 🌍 wörld",
            "e\u{301}e\u{301}",
            "日本語のテキスト",
        ] {
            for n in 1..=MAX_CHUNKS {
                let pieces = split(text, n);
                assert_eq!(pieces.len(), n, "{text:?} in {n}");
                assert_eq!(pieces.concat(), text, "{text:?} in {n}");
            }
        }
    }

    #[test]
    fn pieces_are_near_equal() {
        let pieces = split("abcdefghij", 3);
        assert_eq!(pieces, ["abc", "def", "ghij"]);
        let pieces = split("🌍🌍🌍🌍", 2);
        assert_eq!(pieces, ["🌍🌍", "🌍🌍"]);
        assert_eq!(split("ab", 4), ["", "a", "", "b"]);
    }
}
