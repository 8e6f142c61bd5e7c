//! A command's output, journalled while it runs: what it prints on a stream becomes chunks of
//! one artifact (`output`, `stderr`), gathered for a moment so a fast printer makes a few
//! appends a second, and capped so a runaway command cannot fill the journal. The shell engine
//! uses it for stdout and stderr, the exec engine for stderr (its stdout is its protocol).

use std::time::Duration;

use sextant_core::a2a::Part;

use super::TurnSink;
use super::child::Tail;
use sextant_core::parts::artifact;

/// Output kept per stream; the rest is read and dropped, with a note.
pub(crate) const MAX_OUTPUT: usize = 64 * 1024;
/// Output is journalled once this much has gathered…
pub(crate) const CHUNK_BYTES: usize = 4096;
/// … or this long after its first byte arrived, whichever comes first: live enough to watch,
/// and at most a few appends a second however fast the command prints.
pub(crate) const CHUNK_DELAY: Duration = Duration::from_millis(250);

/// Journals what a command prints on one stream while it runs, as chunks of the artifact `id`
/// (see [`CHUNK_BYTES`], [`CHUNK_DELAY`]), keeping the first [`MAX_OUTPUT`] bytes and reading
/// the rest to the end so the command never blocks on a full pipe. `tail` keeps the end of
/// what was read (to explain a failure). Returns whether anything was journalled.
pub(crate) async fn pump(
    stream: Option<impl tokio::io::AsyncRead + Unpin>,
    sink: &TurnSink,
    id: &str,
    name: &str,
    tail: Option<&Tail>,
) -> Result<bool, String> {
    use tokio::io::AsyncReadExt;
    let Some(mut stream) = stream else {
        return Ok(false);
    };
    let mut chunks = Chunks::default();
    let mut buf = vec![0u8; 8192];
    let mut due: Option<tokio::time::Instant> = None;
    loop {
        let read = match due {
            Some(at) => tokio::select! {
                r = stream.read(&mut buf) => Some(r),
                _ = tokio::time::sleep_until(at) => None,
            },
            None => Some(stream.read(&mut buf).await),
        };
        match read {
            None => {
                due = None;
                chunks.send(sink, id, name, false).await?;
            }
            Some(Ok(0)) => {
                chunks.send(sink, id, name, true).await?;
                if chunks.started {
                    let end = artifact(id, name, vec![Part::text("")]);
                    sink.artifact(end, true, true)
                        .await
                        .map_err(|e| e.to_string())?;
                }
                return Ok(chunks.started);
            }
            Some(Ok(n)) => {
                if let Some(t) = tail {
                    t.push(&buf[..n]);
                }
                chunks.take(&buf[..n]);
                if chunks.pending.len() >= CHUNK_BYTES {
                    due = None;
                    chunks.send(sink, id, name, false).await?;
                } else if due.is_none() && !chunks.pending.is_empty() {
                    due = Some(tokio::time::Instant::now() + CHUNK_DELAY);
                }
            }
            Some(Err(e)) => return Err(format!("reading the command's {name}: {e}")),
        }
    }
}

/// What [`pump`] has read and not yet journalled.
#[derive(Default)]
struct Chunks {
    pending: Vec<u8>,
    kept: usize,
    cut: bool,
    started: bool,
}

impl Chunks {
    fn take(&mut self, bytes: &[u8]) {
        let room = MAX_OUTPUT.saturating_sub(self.kept);
        let take = bytes.len().min(room);
        self.pending.extend_from_slice(&bytes[..take]);
        self.kept += take;
        if take < bytes.len() && !self.cut {
            self.cut = true;
            self.pending.extend_from_slice(b"\n[output cut at 64 KiB]");
        }
    }

    /// Journals the pending bytes as text. A character cut in two by a read waits for its
    /// other half, unless the stream has ended.
    async fn send(
        &mut self,
        sink: &TurnSink,
        id: &str,
        name: &str,
        last: bool,
    ) -> Result<(), String> {
        let whole = match std::str::from_utf8(&self.pending) {
            Ok(_) => self.pending.len(),
            Err(e) if e.error_len().is_none() && !last => e.valid_up_to(),
            Err(_) => self.pending.len(),
        };
        if whole == 0 {
            return Ok(());
        }
        let text = String::from_utf8_lossy(&self.pending[..whole]).into_owned();
        self.pending.drain(..whole);
        let chunk = artifact(id, name, vec![Part::text(text)]);
        sink.artifact(chunk, self.started, false)
            .await
            .map_err(|e| e.to_string())?;
        self.started = true;
        Ok(())
    }
}
