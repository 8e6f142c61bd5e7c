//! W3C trace context (`traceparent`) for A2A calls, in and out, and the glue between
//! Sextant's `tracing` spans and OpenTelemetry.
//!
//! Sextant's trace spans are ordinary `tracing` spans with the target [`TARGET`]. They are
//! exported only when the binary installs an OpenTelemetry layer for that target (`sextant
//! serve --otlp-endpoint`, see the README's "Traces"); otherwise no subscriber enables them,
//! they cost nothing, [`current`] is `None`, and no `traceparent` is sent or stored.
//!
//! - Inbound: a caller's `traceparent` header is input. [`TraceParent::parse`] takes only the
//!   W3C version-00 form, exactly 55 characters of lowercase hex, with non-zero ids; anything
//!   else (or several such headers) is ignored, and the call starts a new trace. It never
//!   panics and nothing of a rejected value reaches logs or spans. `tracestate` is not read.
//! - Across the journal: admission stores the admission span's context in the accepted
//!   message's metadata ([`METADATA_KEY`], a caller's own value there is replaced), so the
//!   turn that runs it later (after a queue wait, or after a restart) is that span's child.
//! - Outbound: [`current`] is the `traceparent` an outbound call sends (the client's call
//!   span, so the peer's spans hang under it).

use opentelemetry::trace::{SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState};
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// The `tracing` target of every span Sextant exports as a trace span. The binary's
/// OpenTelemetry layer enables exactly this target, and its log output leaves it out.
pub const TARGET: &str = "sextant_trace";

/// The HTTP header (W3C Trace Context).
pub const HEADER: &str = "traceparent";

/// The message metadata key under which admission records the trace context the message's
/// turn continues (the admission span's `traceparent`).
pub const METADATA_KEY: &str = "sextantTraceparent";

/// A parsed W3C `traceparent` (version 00).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceParent {
    pub trace_id: [u8; 16],
    pub parent_id: [u8; 8],
    /// The sampled flag (bit 0 of trace-flags); other flag bits are not carried.
    pub sampled: bool,
}

/// Decodes lowercase hex into `out`; false on any other character.
fn lower_hex(s: &[u8], out: &mut [u8]) -> bool {
    if s.len() != out.len() * 2 {
        return false;
    }
    fn nibble(c: u8) -> Option<u8> {
        match c {
            b'0'..=b'9' => Some(c - b'0'),
            b'a'..=b'f' => Some(c - b'a' + 10),
            _ => None,
        }
    }
    for (i, pair) in s.chunks_exact(2).enumerate() {
        match (nibble(pair[0]), nibble(pair[1])) {
            (Some(h), Some(l)) => out[i] = (h << 4) | l,
            _ => return false,
        }
    }
    true
}

impl TraceParent {
    /// Parses `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`: exactly that length,
    /// lowercase hex, neither id all zeros. Other versions (and version `ff`), upper-case
    /// hex, padding or trailing data are refused: `None`.
    pub fn parse(s: &str) -> Option<TraceParent> {
        let b = s.as_bytes();
        if b.len() != 55 || b[2] != b'-' || b[35] != b'-' || b[52] != b'-' || &b[..2] != b"00" {
            return None;
        }
        let mut trace_id = [0u8; 16];
        let mut parent_id = [0u8; 8];
        let mut flags = [0u8; 1];
        if !lower_hex(&b[3..35], &mut trace_id)
            || !lower_hex(&b[36..52], &mut parent_id)
            || !lower_hex(&b[53..55], &mut flags)
        {
            return None;
        }
        if trace_id == [0; 16] || parent_id == [0; 8] {
            return None;
        }
        Some(TraceParent {
            trace_id,
            parent_id,
            sampled: flags[0] & 1 == 1,
        })
    }

    /// The trace context of an HTTP request: its one `traceparent` header, if that parses.
    /// Several `traceparent` headers are ambiguous and are ignored, as W3C asks.
    pub fn from_headers(headers: &http::HeaderMap) -> Option<TraceParent> {
        let mut values = headers.get_all(HEADER).iter();
        let first = values.next()?;
        if values.next().is_some() {
            return None;
        }
        TraceParent::parse(first.to_str().ok()?)
    }

    /// The trace id, as 32 lowercase hex digits.
    pub fn trace_id_hex(&self) -> String {
        hex::encode(self.trace_id)
    }

    /// This context as a remote OpenTelemetry span context.
    fn span_context(&self) -> SpanContext {
        let flags = if self.sampled {
            TraceFlags::SAMPLED
        } else {
            TraceFlags::default()
        };
        SpanContext::new(
            TraceId::from_bytes(self.trace_id),
            SpanId::from_bytes(self.parent_id),
            flags,
            true,
            TraceState::default(),
        )
    }

    /// This context as a remote parent for an OpenTelemetry span.
    fn context(&self) -> opentelemetry::Context {
        opentelemetry::Context::new().with_remote_span_context(self.span_context())
    }

    fn from_span_context(sc: &SpanContext) -> Option<TraceParent> {
        sc.is_valid().then(|| TraceParent {
            trace_id: sc.trace_id().to_bytes(),
            parent_id: sc.span_id().to_bytes(),
            sampled: sc.is_sampled(),
        })
    }
}

impl std::fmt::Display for TraceParent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "00-{}-{}-{:02x}",
            hex::encode(self.trace_id),
            hex::encode(self.parent_id),
            u8::from(self.sampled)
        )
    }
}

/// Makes `parent` the parent of `span`, which must not have been entered yet. Nothing
/// happens when no OpenTelemetry layer records `span` (tracing off).
pub fn set_parent(span: &tracing::Span, parent: &TraceParent) {
    // Refused only when no layer records the span, or it has started: either way it keeps
    // the parent it has.
    let _ = span.set_parent(parent.context());
}

/// Links `span` to another trace context (a turn that runs several queued inputs is the child
/// of the first one's and links the others). Nothing happens when tracing is off.
pub fn add_link(span: &tracing::Span, other: &TraceParent) {
    span.add_link(other.span_context());
}

/// The trace context of `span` as a `traceparent` (to send on, or to store): `None` when no
/// OpenTelemetry layer records it (tracing off, or the span is disabled).
pub fn of_span(span: &tracing::Span) -> Option<TraceParent> {
    if span.is_disabled() {
        return None;
    }
    let cx = span.context();
    TraceParent::from_span_context(cx.span().span_context())
}

/// The trace context of the current span (see [`of_span`]).
pub fn current() -> Option<TraceParent> {
    of_span(&tracing::Span::current())
}

/// Records `trace` as the message's trace context, replacing whatever the caller put under
/// [`METADATA_KEY`] (`None` removes it).
pub fn set_in_message(message: &mut a2a::Message, trace: Option<&TraceParent>) {
    let md = message.metadata.get_or_insert_with(Default::default);
    md.remove(METADATA_KEY);
    if let Some(t) = trace {
        md.insert(METADATA_KEY.into(), serde_json::Value::from(t.to_string()));
    }
    if md.is_empty() {
        message.metadata = None;
    }
}

/// The trace context recorded in a message by admission, if any (parsed as strictly as the
/// header: the journal holds what admission wrote, but an older or hand-edited row is
/// still only input).
pub fn in_message(message: &a2a::Message) -> Option<TraceParent> {
    TraceParent::parse(message.metadata.as_ref()?.get(METADATA_KEY)?.as_str()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_w3c_traceparent_parses_and_prints_back() {
        let t = TraceParent::parse(GOOD).expect("valid");
        assert_eq!(t.trace_id_hex(), "4bf92f3577b34da6a3ce929d0e0e4736");
        assert!(t.sampled);
        assert_eq!(t.to_string(), GOOD);
        let unsampled =
            TraceParent::parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")
                .expect("valid");
        assert!(!unsampled.sampled);
    }

    #[test]
    fn malformed_traceparents_are_refused() {
        let long = format!("{GOOD}{}", "0".repeat(100_000));
        let bad = [
            "",
            "00",
            // Upper-case hex.
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
            // All-zero trace id, all-zero parent id.
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",
            // Version ff, and a future version's longer form.
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",
            // Trailing data, padding, wrong separators, short fields, non-hex.
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-",
            " 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
            "00_4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7_01",
            "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902bz-01",
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g",
            // Multi-byte characters at the separators' byte offsets.
            "00-4bf92f3577b34da6a3ce929d0e0e47é-00f067aa0ba902b7-01",
            &long,
        ];
        for b in bad {
            assert_eq!(TraceParent::parse(b), None, "{:?}", &b[..b.len().min(80)]);
        }
    }

    #[test]
    fn one_header_is_read_and_two_are_ignored() {
        let mut h = http::HeaderMap::new();
        assert_eq!(TraceParent::from_headers(&h), None);
        h.insert(HEADER, GOOD.parse().expect("header value"));
        assert!(TraceParent::from_headers(&h).is_some());
        h.append(
            HEADER,
            "00-11111111111111111111111111111111-2222222222222222-01"
                .parse()
                .expect("header value"),
        );
        assert_eq!(TraceParent::from_headers(&h), None);
    }

    #[test]
    fn the_message_keeps_only_what_admission_wrote() {
        let mut m: a2a::Message = serde_json::from_value(serde_json::json!({
            "messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}],
            "metadata": {"sextantTraceparent": "00-ffffffffffffffffffffffffffffffff-ffffffffffffffff-01"}
        }))
        .expect("message");
        set_in_message(&mut m, None);
        assert_eq!(m.metadata, None, "a caller's own value is removed");
        let t = TraceParent::parse(GOOD).expect("valid");
        set_in_message(&mut m, Some(&t));
        assert_eq!(in_message(&m), Some(t));
    }

    #[test]
    fn without_an_opentelemetry_layer_there_is_no_context() {
        // No subscriber in this test: spans are disabled and carry no trace context.
        let span = tracing::info_span!(target: TARGET, "admission");
        set_parent(&span, &TraceParent::parse(GOOD).expect("valid"));
        assert_eq!(of_span(&span), None);
        assert_eq!(current(), None);
    }
}
