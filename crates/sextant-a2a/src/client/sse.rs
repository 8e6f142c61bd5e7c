//! A small incremental Server-Sent Events parser (the WHATWG event-stream format): `data:`
//! lines are joined with `\n`, `event:` names the event, comment lines (`:`) are keep-alives,
//! and an event ends at a blank line. Lines may end in `\n`, `\r\n` or `\r`. One event's data
//! is capped; a longer one is an error, not a truncation.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field, if any (A2A peers send `error` for errors during a stream).
    pub event: Option<String>,
    pub data: String,
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
    max_event: usize,
    /// A `\r` ended the last line; a `\n` right after it belongs to the same line end.
    after_cr: bool,
}

impl SseParser {
    /// A parser whose events may carry at most `max_event` bytes of data.
    pub fn new(max_event: usize) -> Self {
        Self {
            buf: Vec::new(),
            data: String::new(),
            has_data: false,
            event: None,
            max_event,
            after_cr: false,
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
                    if let Some(ev) = self.line(&line)? {
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
            // `id` and `retry` mean nothing to a one-shot A2A stream.
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
                    data: "{\"a\":\n1}".into()
                },
                SseEvent {
                    event: Some("error".into()),
                    data: "x".into()
                },
                SseEvent {
                    event: None,
                    data: "no-space".into()
                },
            ]
        );
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
