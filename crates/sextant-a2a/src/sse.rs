//! A small incremental Server-Sent Events parser (the WHATWG event-stream format), for every
//! SSE stream Sextant reads: the outbound A2A client's streams from peers, and the desktop
//! shell's subscription to its own server's task events.
//!
//! `data:` lines are joined with `\n`, `event:` names the event, `id:` sets the last event id,
//! comment lines (`:`) are keep-alives, and an event ends at a blank line. Lines may end in
//! `\n`, `\r\n` or `\r`; one byte order mark at the start of the stream is skipped. One event's
//! data is capped, and so is the line being read: a longer one is an error, not a truncation.
//!
//! One departure from the spec: bytes that are not UTF-8 are an error ([`SseError::NotUtf8`])
//! rather than replaced with U+FFFD, so a peer's broken stream is reported, not half-read.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, if any (A2A peers send `error` for errors during a stream).
    pub event: Option<String>,
    pub data: String,
    /// The last `id:` seen on the stream so far (it carries over to later events, as in the
    /// spec), if any.
    pub id: Option<String>,
}

impl SseEvent {
    /// The event's type as the spec dispatches it: its `event:` field, `message` when it has
    /// none (or an empty one).
    pub fn kind(&self) -> &str {
        match self.event.as_deref() {
            None | Some("") => "message",
            Some(e) => e,
        }
    }
}

/// Why the stream cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SseError {
    /// An event's data grew past the cap.
    TooLarge(usize),
    /// The bytes are not UTF-8.
    NotUtf8,
}

/// Feeds bytes in, takes events out.
#[derive(Debug)]
pub struct SseParser {
    buf: Vec<u8>,
    data: String,
    has_data: bool,
    event: Option<String>,
    /// The last event id (`id:`), kept across events.
    id: Option<String>,
    max_event: usize,
    /// A `\r` ended the last line; a `\n` right after it belongs to the same line end.
    after_cr: bool,
    /// No line has ended yet: a byte order mark may start the stream.
    first_line: bool,
}

impl SseParser {
    /// A parser whose events may carry at most `max_event` bytes of data.
    pub fn new(max_event: usize) -> Self {
        Self {
            buf: Vec::new(),
            data: String::new(),
            has_data: false,
            event: None,
            id: None,
            max_event,
            after_cr: false,
            first_line: true,
        }
    }

    /// Adds bytes; returns the events they complete.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, SseError> {
        let mut out = Vec::new();
        for &b in bytes {
            if self.after_cr {
                self.after_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\n' | b'\r' => {
                    self.after_cr = b == b'\r';
                    let line = std::mem::take(&mut self.buf);
                    let line = String::from_utf8(line).map_err(|_| SseError::NotUtf8)?;
                    let line = if std::mem::take(&mut self.first_line) {
                        line.strip_prefix('\u{feff}').unwrap_or(&line)
                    } else {
                        &line
                    };
                    if let Some(ev) = self.line(line)? {
                        out.push(ev);
                    }
                }
                _ => {
                    self.buf.push(b);
                    if self.buf.len() > self.max_event + 64 {
                        return Err(SseError::TooLarge(self.max_event));
                    }
                }
            }
        }
        Ok(out)
    }

    fn line(&mut self, line: &str) -> Result<Option<SseEvent>, SseError> {
        if line.is_empty() {
            if !self.has_data {
                self.event = None;
                return Ok(None);
            }
            self.has_data = false;
            return Ok(Some(SseEvent {
                event: self.event.take(),
                data: std::mem::take(&mut self.data),
                id: self.id.clone(),
            }));
        }
        if line.starts_with(':') {
            return Ok(None);
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
                if self.data.len() > self.max_event {
                    return Err(SseError::TooLarge(self.max_event));
                }
            }
            "event" => self.event = Some(value.to_string()),
            // The spec ignores an id with a NUL in it.
            "id" if !value.contains('\0') => self.id = Some(value.to_string()),
            // `retry` means nothing to our readers: each reconnects on its own schedule.
            _ => {}
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_across_chunks_and_line_endings() {
        let mut p = SseParser::new(1024);
        let mut got = Vec::new();
        for chunk in [
            &b": keep-alive\n\nda"[..],
            b"ta: {\"a\":\r\ndata: 1}\r\n\r\nevent: error\rdata: x\r\r",
            b"id: 3\ndata:no-space\n\n",
        ] {
            got.extend(p.feed(chunk).expect("parses"));
        }
        assert_eq!(
            got,
            vec![
                SseEvent {
                    event: None,
                    data: "{\"a\":\n1}".into(),
                    id: None,
                },
                SseEvent {
                    event: Some("error".into()),
                    data: "x".into(),
                    id: None,
                },
                SseEvent {
                    event: None,
                    data: "no-space".into(),
                    id: Some("3".into()),
                },
            ]
        );
    }

    fn feed_all(p: &mut SseParser, chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut got = Vec::new();
        for chunk in chunks {
            got.extend(p.feed(chunk).expect("parses"));
        }
        got
    }

    #[test]
    fn a_byte_order_mark_is_skipped_at_the_start_only() {
        // Split inside the mark: it is recognised on the whole first line.
        let mut p = SseParser::new(1024);
        let got = feed_all(
            &mut p,
            &[b"\xEF\xBB", b"\xBFdata: a\n\n\xEF\xBB\xBFdata: b\n\n"],
        );
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].data, "a");
        // Later, a line starting with a mark names the field "\u{feff}data": ignored.
        let mut q = SseParser::new(1024);
        let got = feed_all(&mut q, &[b"\n\xEF\xBB\xBFdata: b\n\n"]);
        assert!(got.is_empty(), "{got:?}");
    }

    #[test]
    fn the_last_event_id_carries_over_and_an_id_with_nul_is_ignored() {
        let mut p = SseParser::new(1024);
        let got = feed_all(
            &mut p,
            &[b"id: 7\ndata: a\n\ndata: b\n\nid: 8\0\ndata: c\n\nid\ndata: d\n\n"],
        );
        let ids: Vec<_> = got.iter().map(|e| e.id.as_deref()).collect();
        assert_eq!(ids, [Some("7"), Some("7"), Some("7"), Some("")]);
    }

    #[test]
    fn frames_without_data_dispatch_nothing_and_reset_the_type() {
        let mut p = SseParser::new(1024);
        let got = feed_all(
            &mut p,
            &[
                b"event: resync\n\n",
                b"data: x\n\nevent:\ndata\n\nevent: task\ndata: y\n\n",
            ],
        );
        let kinds: Vec<_> = got.iter().map(|e| (e.kind(), e.data.as_str())).collect();
        assert_eq!(kinds, [("message", "x"), ("message", ""), ("task", "y")]);
    }

    #[test]
    fn oversized_events_are_refused() {
        let mut p = SseParser::new(8);
        assert_eq!(p.feed(b"data: 0123456789\n\n"), Err(SseError::TooLarge(8)));
        let mut q = SseParser::new(8);
        let long = vec![b'x'; 200];
        assert_eq!(q.feed(&long), Err(SseError::TooLarge(8)));
    }
}
