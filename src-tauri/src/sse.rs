//! A minimal Server-Sent Events frame parser for the shell's one subscription
//! (`GET /api/v1/tasks/events`). Only `event:` and `data:` matter here; `id:`, `retry:` and
//! comments (the server's keep-alives) are skipped.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// `message` when the frame names none.
    pub event: String,
    pub data: String,
}

/// Feeds bytes in, gets whole events out; a frame split across chunks is kept until its end.
#[derive(Debug, Default)]
pub struct Parser {
    buf: Vec<u8>,
    event: Option<String>,
    data: Vec<String>,
}

impl Parser {
    /// Adds a chunk and returns the events it completed.
    pub fn push(&mut self, chunk: &[u8]) -> Vec<Event> {
        self.buf.extend_from_slice(chunk);
        let mut out = Vec::new();
        while let Some(nl) = self.buf.iter().position(|&b| b == b'\n') {
            let mut line: Vec<u8> = self.buf.drain(..=nl).collect();
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            let line = String::from_utf8_lossy(&line);
            if line.is_empty() {
                if !self.data.is_empty() {
                    out.push(Event {
                        event: self.event.take().unwrap_or_else(|| "message".into()),
                        data: self.data.join("\n"),
                    });
                }
                self.event = None;
                self.data.clear();
                continue;
            }
            if line.starts_with(':') {
                continue;
            }
            let (field, value) = line.split_once(':').unwrap_or((&line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "event" => self.event = Some(value.to_string()),
                "data" => self.data.push(value.to_string()),
                _ => {}
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_split_across_chunks_are_joined() {
        let mut p = Parser::default();
        assert!(p.push(b"event: interaction\nda").is_empty());
        let evs = p.push(b"ta: {\"type\":\"raised\"}\n\n: keep-alive\n\nevent: task\r\ndata: a\r\ndata: b\r\n\r\n");
        assert_eq!(
            evs,
            vec![
                Event {
                    event: "interaction".into(),
                    data: "{\"type\":\"raised\"}".into()
                },
                Event {
                    event: "task".into(),
                    data: "a\nb".into()
                },
            ]
        );
    }

    #[test]
    fn a_frame_without_data_dispatches_nothing() {
        let mut p = Parser::default();
        assert!(p.push(b"event: resync\n\n").is_empty());
        let evs = p.push(b"data: x\n\n");
        assert_eq!(evs[0].event, "message");
    }
}
