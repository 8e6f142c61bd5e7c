//! The audit log: one JSON line per exchange in `<data dir>/audit.jsonl` (mode 0600), appended
//! by a dedicated thread (no file I/O on the async runtime) and rotated to `audit.jsonl.1 … .N`
//! when it grows past its size limit. Readable by the owner at `GET /api/v1/audit`.
//!
//! A record: `at`, `principal_kind`, `principal` (the key), `display`, `agent`, `method`,
//! `task_id`, `context_id`, `outcome` (`ok`, `refused`, `error`), `reason`, `route`, `peer`
//! (the socket address). Recording is best-effort and never fails a request. Refusals (bad
//! credentials, perimeter, rate limit) are throttled to 120 records a minute; the next one
//! recorded says how many were dropped, so a flood cannot rotate the useful records away.
//!
//! Writers append (`O_APPEND`), and a writer whose file was rotated by another reopens the path
//! before its next line. One Sextant holds a data dir, but on a file system without file locks
//! a second one only gets a warning (`sextant::data_dir_lock`), and then both write here.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;

use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use serde::Serialize;
use serde_json::Value;
use sextant_core::{Principal, PrincipalKind};

/// What happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Served.
    Ok,
    /// Refused (credential, access, perimeter, limits, a refused answer).
    Refused,
    /// Failed inside Sextant.
    Error,
}

/// One record.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Record {
    pub at: String,
    /// Written as the kind's word (`anonymous-local`), as principal keys start.
    pub principal_kind: Option<PrincipalKind>,
    pub principal: Option<String>,
    pub display: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    pub outcome: Option<Outcome>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub route: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peer: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dropped: Option<u64>,
}

impl Record {
    /// A record of `principal` (or of an unidentified caller) with `outcome`.
    pub fn new(principal: Option<&Principal>, outcome: Outcome) -> Self {
        Self {
            at: sextant_core::ids::format_time(chrono::Utc::now()),
            principal_kind: principal.map(|p| p.kind),
            principal: principal.map(Principal::key),
            display: principal.map(Principal::display),
            outcome: Some(outcome),
            ..Default::default()
        }
    }

    /// The Agent the exchange was with.
    pub fn agent(mut self, agent: impl Into<String>) -> Self {
        self.agent = Some(agent.into());
        self
    }

    /// The method (A2A method, tool, or action).
    pub fn method(mut self, method: impl Into<String>) -> Self {
        self.method = Some(method.into());
        self
    }

    /// The task and context ids involved (cut to 128 characters).
    pub fn task(mut self, task_id: Option<String>, context_id: Option<String>) -> Self {
        self.task_id = task_id.map(|t| bounded(&t, 128));
        self.context_id = context_id.map(|c| bounded(&c, 128));
        self
    }

    /// Why (a refusal's reason, or a detail).
    pub fn reason(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(bounded(&reason.into(), 500));
        self
    }

    /// The request path.
    pub fn route(mut self, route: impl Into<String>) -> Self {
        self.route = Some(bounded(&route.into(), 300));
        self
    }

    /// The caller's socket address.
    pub fn peer(mut self, peer: Option<std::net::SocketAddr>) -> Self {
        self.peer = peer.map(|p| p.to_string());
        self
    }

    // Records written from more than one place (the server and the CLI) are shaped here, once,
    // so a token issued from the console and one issued with `sextant token` read alike.

    /// `who` issued a `kind` token (`peer`, `assistant`) named `name`.
    pub fn token_issued(who: &Principal, kind: &str, name: &str) -> Self {
        Self::new(Some(who), Outcome::Ok)
            .method(format!("issue {kind} token"))
            .reason(format!("name {name}"))
    }

    /// `who` revoked the `kind` token named `name`.
    pub fn token_revoked(who: &Principal, kind: &str, name: &str) -> Self {
        Self::new(Some(who), Outcome::Ok)
            .method(format!("revoke {kind} token"))
            .reason(format!("name {name}"))
    }

    /// One outbound A2A call Sextant made to `peer` (a registered peer's name or a URL): how
    /// long it took and, if it failed, why. Sextant is the caller, so there is no principal.
    pub fn outbound_call(peer: &str, latency_ms: u64, error: Option<&str>) -> Self {
        let (outcome, reason) = match error {
            Some(e) => (Outcome::Error, format!("{latency_ms} ms: {e}")),
            None => (Outcome::Ok, format!("{latency_ms} ms")),
        };
        Self::new(None, outcome)
            .method("outbound call")
            .agent(format!("peer:{peer}"))
            .reason(reason)
    }
}

/// Caller-chosen text is cut, so a record stays one short line.
fn bounded(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s.to_string(),
    }
}

enum Msg {
    Line(String),
    Flush(tokio::sync::oneshot::Sender<()>),
}

/// The audit log handle (cheap to share behind `Security`).
pub struct AuditLog {
    path: PathBuf,
    keep: u32,
    /// `Sender` is `Sync`: request threads send without a lock.
    tx: mpsc::Sender<Msg>,
    refusals: DefaultDirectRateLimiter,
    dropped: AtomicU64,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditLog")
            .field("path", &self.path)
            .finish()
    }
}

fn open_private(path: &Path) -> std::io::Result<File> {
    let mut o = OpenOptions::new();
    o.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    let f = o.open(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(f)
}

/// Whether `f` is still the file at `path` (another process may have rotated it).
fn same_file(f: &File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (f.metadata(), std::fs::metadata(path)) {
            (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (f, path);
        true
    }
}

fn rotated(path: &Path, n: u32) -> PathBuf {
    let mut s = path.as_os_str().to_os_string();
    s.push(format!(".{n}"));
    PathBuf::from(s)
}

fn rotate(path: &Path, keep: u32) {
    if keep == 0 {
        let _ = std::fs::remove_file(path);
        return;
    }
    let _ = std::fs::remove_file(rotated(path, keep));
    for n in (1..keep).rev() {
        let _ = std::fs::rename(rotated(path, n), rotated(path, n + 1));
    }
    let _ = std::fs::rename(path, rotated(path, 1));
}

/// How long the writer waits after a first line for more, so that it wakes (and writes) once
/// for all of them. A flush does not wait.
const GATHER: std::time::Duration = std::time::Duration::from_millis(2);

/// Lines between two checks that the file was not rotated by another process.
const RECHECK_EVERY: u32 = 64;

fn writer(path: PathBuf, max_bytes: u64, keep: u32, mut file: File, rx: mpsc::Receiver<Msg>) {
    let size = |f: &File| f.metadata().map(|m| m.len()).unwrap_or(0);
    let mut len = size(&file);
    let mut lines = 0u32;
    // Lines waiting to be written: everything queued is written with one system call.
    let mut buf = String::new();
    let write = |file: &mut File, len: &mut u64, buf: &mut String| {
        if buf.is_empty() {
            return;
        }
        match file.write_all(buf.as_bytes()) {
            Ok(()) => *len += buf.len() as u64,
            Err(e) => tracing::warn!(error = %e, "audit records not written"),
        }
        buf.clear();
    };
    while let Ok(first) = rx.recv() {
        // Let the lines of a busy moment gather: woken for every record, this thread cost
        // its senders a wake-up each (measured: 4% of the request threads under load).
        if matches!(first, Msg::Line(_)) {
            std::thread::sleep(GATHER);
        }
        let mut next = Some(first);
        while let Some(msg) = next.take() {
            match msg {
                Msg::Flush(done) => {
                    write(&mut file, &mut len, &mut buf);
                    let _ = file.flush();
                    let _ = done.send(());
                }
                Msg::Line(line) => {
                    lines = lines.wrapping_add(1);
                    let size_after = len + (buf.len() + line.len()) as u64;
                    // Another Sextant on this data dir may have rotated (or appended to) the
                    // file: look at it again now and then, and before deciding to rotate.
                    if lines.is_multiple_of(RECHECK_EVERY) || size_after > max_bytes {
                        write(&mut file, &mut len, &mut buf);
                        if !same_file(&file, &path) {
                            match open_private(&path) {
                                Ok(f) => file = f,
                                Err(e) => {
                                    tracing::warn!(error = %e, "audit log cannot be reopened")
                                }
                            }
                        }
                        len = size(&file);
                    }
                    if len + (buf.len() + line.len()) as u64 > max_bytes {
                        write(&mut file, &mut len, &mut buf);
                        rotate(&path, keep);
                        match open_private(&path) {
                            Ok(f) => file = f,
                            Err(e) => tracing::warn!(error = %e, "audit log cannot be rotated"),
                        }
                        len = size(&file);
                    }
                    buf.push_str(&line);
                }
            }
            next = rx.try_recv().ok();
        }
        write(&mut file, &mut len, &mut buf);
    }
}

impl AuditLog {
    /// Opens (creating, mode 0600) the log at `path`.
    pub fn open(path: &Path, max_bytes: u64, keep: u32) -> std::io::Result<Self> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let file = open_private(path)?;
        let (tx, rx) = mpsc::channel();
        let (p, k) = (path.to_path_buf(), keep);
        std::thread::Builder::new()
            .name("sextant-audit".into())
            .spawn(move || writer(p, max_bytes, k, file, rx))?;
        Ok(Self {
            path: path.to_path_buf(),
            keep,
            tx,
            refusals: RateLimiter::direct(Quota::per_minute(
                NonZeroU32::new(120).unwrap_or(NonZeroU32::MIN),
            )),
            dropped: AtomicU64::new(0),
        })
    }

    /// Appends a record (best effort).
    pub fn record(&self, mut rec: Record) {
        if rec.outcome == Some(Outcome::Refused) {
            if self.refusals.check().is_err() {
                self.dropped.fetch_add(1, Ordering::Relaxed);
                return;
            }
            let dropped = self.dropped.swap(0, Ordering::Relaxed);
            if dropped > 0 {
                rec.dropped = Some(dropped);
            }
        }
        let Ok(mut line) = serde_json::to_string(&rec) else {
            return;
        };
        line.push('\n');
        let _ = self.tx.send(Msg::Line(line));
    }

    /// Waits until every record sent so far is written.
    pub async fn flush(&self) {
        let (done, wait) = tokio::sync::oneshot::channel();
        let sent = self.tx.send(Msg::Flush(done)).is_ok();
        if sent {
            let _ = wait.await;
        }
    }

    /// The newest records first (the current file, then the rotated ones), at most `limit`,
    /// those `keep(record)` accepts.
    pub async fn read(
        &self,
        limit: usize,
        keep: impl Fn(&Value) -> bool + Send + 'static,
    ) -> std::io::Result<Vec<Value>> {
        self.flush().await;
        let path = self.path.clone();
        let files = self.keep;
        tokio::task::spawn_blocking(move || {
            let mut out = Vec::new();
            for n in 0..=files {
                let p = if n == 0 {
                    path.clone()
                } else {
                    rotated(&path, n)
                };
                let Ok(f) = File::open(&p) else { continue };
                let mut lines: Vec<Value> = BufReader::new(f)
                    .lines()
                    .map_while(Result::ok)
                    .filter_map(|l| serde_json::from_str(&l).ok())
                    .filter(|v| keep(v))
                    .collect();
                lines.reverse();
                for v in lines {
                    if out.len() >= limit {
                        return Ok(out);
                    }
                    out.push(v);
                }
            }
            Ok(out)
        })
        .await
        .map_err(std::io::Error::other)?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outbound_calls_say_whom_how_long_and_why_they_failed() {
        let ok = serde_json::to_value(Record::outbound_call("alice", 12, None)).unwrap();
        assert_eq!(ok["method"], "outbound call");
        assert_eq!(ok["agent"], "peer:alice");
        assert_eq!(ok["outcome"], "ok");
        assert_eq!(ok["reason"], "12 ms");
        assert_eq!(ok["principal"], serde_json::Value::Null);
        let failed = serde_json::to_value(Record::outbound_call(
            "https://x.example",
            3,
            Some("timed out"),
        ))
        .unwrap();
        assert_eq!(failed["outcome"], "error");
        assert_eq!(failed["reason"], "3 ms: timed out");
        assert_eq!(failed["agent"], "peer:https://x.example");
    }

    /// A record names its caller's kind by the word a principal key starts with, as when the
    /// field held that text.
    #[test]
    fn a_record_s_principal_kind_is_the_kind_s_word() {
        for p in [
            Principal::person(),
            Principal::anonymous_local(),
            Principal::peer("alice"),
            Principal::assistant("ws", "bot"),
        ] {
            let v = serde_json::to_value(Record::new(Some(&p), Outcome::Ok)).unwrap();
            assert_eq!(v["principal_kind"], p.kind.as_str());
            assert!(p.key().starts_with(&format!("{}:", p.kind.as_str())));
        }
        let v = serde_json::to_value(Record::new(None, Outcome::Refused)).unwrap();
        assert_eq!(v["principal_kind"], serde_json::Value::Null);
    }

    #[tokio::test]
    async fn records_append_rotate_and_read_newest_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let log = AuditLog::open(&path, 4096, 2).unwrap();
        for i in 0..60 {
            log.record(
                Record::new(Some(&Principal::peer("alice")), Outcome::Ok)
                    .agent("echo")
                    .method("SendMessage")
                    .task(Some(format!("t{i}")), None),
            );
        }
        let all = log.read(1000, |_| true).await.unwrap();
        assert!(!all.is_empty());
        assert_eq!(all[0]["task_id"], "t59", "newest first");
        assert_eq!(all[0]["principal"], "peer:sextant:alice");
        assert!(rotated(&path, 1).exists(), "rotated at 4 KiB");
        assert!(!rotated(&path, 3).exists(), "keeps 2");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let one = log.read(5, |v| v["task_id"] == "t58").await.unwrap();
        assert_eq!(one.len(), 1);
    }
}
