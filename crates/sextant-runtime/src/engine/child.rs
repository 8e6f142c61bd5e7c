//! The child-process plumbing of every engine that runs a local program (the `exec` engine's
//! command per turn, the `codex` engine's app-server per Session, the `shell` engine's approved
//! command): its working directory made, the program started with piped stdout and stderr (and
//! stdin, for a program Sextant talks to) in its own process group through
//! [`TurnSink::spawn`] (so it dies with the turn's guard, with Sextant, and when its `Child` is
//! dropped), its stdout read as lines, and the end of its stderr kept to explain a failure
//! ([`Tail`]).
//!
//! What each program says on those pipes (the exec protocol, Codex's JSON-RPC, a shell
//! command's output) stays with its engine; journalling a stream as it is read is
//! [`super::output`]'s.

use std::path::Path;
use std::process::Stdio;
use std::sync::Mutex;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio_util::codec::{FramedRead, LinesCodec};

use super::{Turn, TurnSink};
use crate::process::GroupGuard;

/// Creates the program's working directory if it is missing. The directory is a path on the
/// person's machine: it goes to the log, for the person; the error says only what went wrong,
/// because it becomes the turn's failure text, which the task's caller reads (and the caller
/// may be a remote peer).
pub(crate) fn make_working_dir(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| {
        tracing::warn!(dir = %dir.display(), error = %e, "cannot create an agent's working directory");
        format!(
            "cannot create the agent's working directory ({}); the path is in Sextant's log",
            e.kind()
        )
    })
}

/// A started program: the child, its process group's guard, and its three pipes (taken out of
/// the child; `None` if the platform gave none; for a [`Program::Command`], stdin is its gate).
pub(crate) struct Piped {
    pub(crate) child: Child,
    pub(crate) group: GroupGuard,
    pub(crate) stdin: Option<ChildStdin>,
    pub(crate) stdout: Option<ChildStdout>,
    pub(crate) stderr: Option<ChildStderr>,
}

/// Which kind of program is started, which decides its stdin and what Sextant adds to its
/// environment.
pub(crate) enum Program<'t> {
    /// An Agent's program (the exec engine's command, Codex's app-server): Sextant talks to it
    /// on its stdin (piped), and it learns the turn's Agent and Session from
    /// `SEXTANT_AGENT_ID` and `SEXTANT_SESSION_ID`.
    Agent(&'t Turn),
    /// A person's approved command (the shell engine): it runs with the environment it was
    /// approved in, nothing added, and starts **gated**: its stdin is a pipe the command
    /// waits on ([`GATE`]) until [`open_gate`] lets it go, after [`TurnSink::spawn`] has made
    /// sure its task was not canceled meanwhile. Past the gate its stdin is at its end, as
    /// `/dev/null` would be.
    Command,
}

/// The shell script a gated command starts as (`sh -c GATE COMMAND`): it waits for one line
/// on stdin and then becomes `sh -c COMMAND`; without that line (the pipe closed first, or the
/// group killed) the command never runs.
pub(crate) const GATE: &str = "IFS= read -r gate || exit 125; exec sh -c \"$0\"";

/// Lets a gated command go (see [`Program::Command`]).
pub(crate) async fn open_gate(stdin: Option<ChildStdin>) {
    use tokio::io::AsyncWriteExt;
    if let Some(mut gate) = stdin {
        // A command that died already has nothing to let go: its exit status says so.
        let _ = gate.write_all(b"\n").await;
        let _ = gate.shutdown().await;
    }
}

/// Starts `cmd` with piped stdout and stderr, and stdin and environment as `program` says, in
/// its own process group (see [`TurnSink::spawn`]).
pub(crate) async fn spawn_piped(
    mut cmd: Command,
    program: Program<'_>,
    sink: &TurnSink,
) -> std::io::Result<Piped> {
    match program {
        Program::Agent(turn) => {
            cmd.env("SEXTANT_AGENT_ID", &turn.agent.id)
                .env("SEXTANT_SESSION_ID", &turn.session_id)
                .stdin(Stdio::piped());
        }
        Program::Command => {
            cmd.stdin(Stdio::piped());
        }
    }
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let (mut child, group) = sink.spawn(cmd).await?;
    Ok(Piped {
        stdin: child.stdin.take(),
        stdout: child.stdout.take(),
        stderr: child.stderr.take(),
        child,
        group,
    })
}

/// A stream read as lines of at most `max` bytes (a longer one is an error of its own, not
/// memory spent).
pub(crate) fn lines<R: AsyncRead>(stream: R, max: usize) -> FramedRead<R, LinesCodec> {
    FramedRead::new(stream, LinesCodec::new_with_max_length(max))
}

/// The last [`Tail::LEN`] bytes read from a stream (a program's stderr), to explain a failure.
#[derive(Default)]
pub(crate) struct Tail(Mutex<Vec<u8>>);

impl Tail {
    /// How much of a stream's end is kept.
    pub(crate) const LEN: usize = 4096;

    /// Adds bytes read, dropping what falls out of the last [`Tail::LEN`].
    pub(crate) fn push(&self, bytes: &[u8]) {
        let mut t = self.0.lock().unwrap_or_else(|e| e.into_inner());
        t.extend_from_slice(bytes);
        if t.len() > Self::LEN {
            let cut = t.len() - Self::LEN;
            t.drain(..cut);
        }
    }

    /// What is kept, as text, trimmed.
    pub(crate) fn text(&self) -> String {
        let t = self.0.lock().unwrap_or_else(|e| e.into_inner());
        String::from_utf8_lossy(&t).trim().to_string()
    }

    /// Reads `stream` to its end (or its first error), keeping its tail.
    pub(crate) async fn read_to_end(&self, mut stream: impl AsyncRead + Unpin) {
        let mut buf = [0u8; 4096];
        while let Ok(n) = stream.read(&mut buf).await {
            if n == 0 {
                break;
            }
            self.push(&buf[..n]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_working_dir_that_cannot_be_made_is_not_named_in_the_error() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("blocker");
        std::fs::write(&blocker, "a file, not a directory").unwrap();
        let why = make_working_dir(&blocker.join("work")).unwrap_err();
        assert!(
            why.contains("cannot create the agent's working directory"),
            "{why}"
        );
        assert!(!why.contains(&dir.path().display().to_string()), "{why}");
        make_working_dir(&dir.path().join("made/here")).unwrap();
        assert!(dir.path().join("made/here").is_dir());
    }
}
