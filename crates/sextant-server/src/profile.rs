//! The person's whole profile in one file (a **backup**) or as readable JSON lines (an
//! **export**), written while Sextant runs, and the two owner-only downloads of them
//! (`GET /api/v1/backup`, `GET /api/v1/export`).
//!
//! **A backup** is a tar file:
//!
//! | entry | what |
//! |---|---|
//! | `sextant-backup.json` | first: the manifest ([`Manifest`]): format, version, when, which files (with each one's size and SHA-256), whether secrets are in it |
//! | `journal.db` | the journal as one consistent snapshot ([`sextant_journal::backup`]), taken beside the writer |
//! | `agents.toml`, `security.toml`, `outbound.toml` | the settings that exist |
//! | the JWT key files `security.toml` names | when they are plain names in the data dir; a `secret_file` counts as a secret |
//! | `audit.jsonl`, `audit.jsonl.N` | the audit log and its rotated files |
//! | `token`, `peer-tokens.json`, `push.key`, `card-key.json` | **secrets**, only when asked for ([`Secrets::Include`]) |
//!
//! Secrets: the owner token, the outbound peers' bearer tokens, the key push secrets are sealed
//! with, and the card signing keys. The journal itself holds none in clear (issued tokens are
//! stored as SHA-256 hashes, push secrets sealed with `push.key`), so a backup without the
//! secret files gives away no credential. `sextant backup` includes them (a file the person
//! writes on their own machine; it is written 0600); the console's download never does, because a
//! browser's downloads folder is a place files leak from. A restore of a backup without them
//! keeps the target data dir's own secret files, or Sextant makes new ones at its next start
//! (a new owner token; a new card key, which peers that pinned the old one must re-pin;
//! sealed push secrets that no longer open). `work/` (the local engines' working directory)
//! is not in a backup: it is the agents' scratch space, not the profile.
//!
//! **An export** is [`sextant_journal::export`]'s JSON lines, with the audit log's records
//! (`type: "audit"`, oldest first) before the `end` line.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sextant_journal::backup::Checked;
use sextant_journal::export::{self, End, Line};
use sha2::{Digest, Sha256};

use crate::AppState;
use crate::error::{ApiError, ApiResult};
use crate::extract::Owner;

/// The manifest's `format`.
pub const FORMAT: &str = "sextant-backup";
/// The manifest's `version`.
pub const VERSION: u32 = 1;
/// The manifest: the archive's first entry.
pub const MANIFEST: &str = "sextant-backup.json";
/// The journal's file name, in the data dir and in a backup.
pub const JOURNAL: &str = "journal.db";
/// Settings files: no secret in them.
pub const SETTINGS: &[&str] = &["agents.toml", "security.toml", "outbound.toml"];
/// Secret files: in a backup only when asked for.
pub const SECRETS: &[&str] = &["token", "peer-tokens.json", "push.key", "card-key.json"];
/// The audit log's file; rotated files are `audit.jsonl.N`.
pub const AUDIT: &str = "audit.jsonl";

/// What a profile file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Journal,
    Setting,
    Audit,
    Secret,
}

/// One file of a backup.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    pub name: String,
    pub kind: Kind,
    pub bytes: u64,
    /// The SHA-256 of the file's bytes (lowercase hex), checked at restore. Backups written
    /// before Sextant recorded it have none; they are checked by size (and the journal by
    /// `PRAGMA integrity_check`) only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
}

/// What a backup holds (its first entry, `sextant-backup.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: String,
    pub version: u32,
    pub created_at: DateTime<Utc>,
    /// The Sextant that wrote it.
    pub sextant_version: String,
    /// The journal's schema version.
    pub schema_version: usize,
    pub sessions: u64,
    pub tasks: u64,
    pub events: u64,
    /// Whether the secret files are in it.
    pub secrets_included: bool,
    /// Every file in it but the manifest, in archive order.
    pub files: Vec<FileEntry>,
    /// Files of the profile that are not in it, and why.
    pub left_out: Vec<String>,
    /// The secret files the profile had that are not in it (a restore keeps the target's).
    #[serde(default)]
    pub secrets_left_out: Vec<String>,
}

/// Whether a backup carries the secret files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Secrets {
    Include,
    Leave,
}

/// A backup, export or restore failure.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("journal: {0}")]
    Journal(#[from] sextant_journal::Error),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The file is not a backup this Sextant can restore; the message says why.
    #[error("{0}")]
    NotABackup(String),
}

type Result<T, E = ProfileError> = std::result::Result<T, E>;

/// Whether `name` is one of the audit log's files (`audit.jsonl` or `audit.jsonl.N`).
fn audit_rank(name: &str) -> Option<u32> {
    if name == AUDIT {
        return Some(0);
    }
    let n = name.strip_prefix(AUDIT)?.strip_prefix('.')?;
    if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    n.parse().ok()
}

/// The audit log's files in `dir`, oldest first (the highest rotation number first, the
/// current file last).
pub fn audit_files(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut found = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        if let Some(name) = e.file_name().to_str()
            && let Some(rank) = audit_rank(name)
            && e.file_type()?.is_file()
        {
            found.push((rank, name.to_string()));
        }
    }
    found.sort_by_key(|f| std::cmp::Reverse(f.0));
    Ok(found.into_iter().map(|(_, n)| n).collect())
}

/// The key files `security.toml`'s `[jwt]` names: (name, is it a secret). Only plain file
/// names (in the data dir) belong to the profile; others are reported in `left_out`.
fn jwt_files(dir: &Path, left_out: &mut Vec<String>) -> Vec<(String, bool)> {
    let Ok(text) = std::fs::read_to_string(dir.join("security.toml")) else {
        return Vec::new();
    };
    let Ok(value) = text.parse::<toml::Table>() else {
        return Vec::new();
    };
    let Some(jwt) = value.get("jwt").and_then(|j| j.as_table()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (key, secret) in [
        ("public_key_file", false),
        ("jwks_file", false),
        ("secret_file", true),
    ] {
        let Some(p) = jwt.get(key).and_then(|v| v.as_str()) else {
            continue;
        };
        if plain_name(p) {
            out.push((p.to_string(), secret));
        } else {
            left_out.push(format!(
                "{p} ([jwt] {key}): outside the data dir, not part of the profile"
            ));
        }
    }
    out
}

/// A bare file name: no directory part, not `.` or `..`.
fn plain_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && !name.contains('/')
        && !name.contains('\\')
        && !name.contains('\0')
}

/// Writes a backup of the profile in `data_dir` (its journal at `journal`) to `out`.
/// Blocking: the snapshot and the copy run on the calling thread.
pub fn write_backup(
    data_dir: &Path,
    journal: &Path,
    out: impl Write,
    secrets: Secrets,
    now: DateTime<Utc>,
) -> Result<Manifest> {
    // The snapshot is a file first (tar wants each entry's size before its bytes), beside the
    // journal: the same disk, and a temp dir that goes away with this function.
    let scratch = tempfile::Builder::new()
        .prefix(".backup-")
        .tempdir_in(data_dir)?;
    let snapshot = scratch.path().join(JOURNAL);
    let checked = sextant_journal::backup::snapshot(journal, &snapshot)?;
    write_archive(data_dir, &snapshot, &checked, out, secrets, now)
}

/// An open file of the profile with its size fixed when it was opened (the audit log keeps
/// growing; the entry holds what it had then).
struct Part {
    entry: FileEntry,
    file: File,
}

fn open_part(path: &Path, name: &str, kind: Kind) -> Result<Option<Part>> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(ProfileError::Io(std::io::Error::new(
                e.kind(),
                format!("cannot read {}: {e}", path.display()),
            )));
        }
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Ok(None);
    }
    let bytes = meta.len();
    // The digest of the bytes the entry will hold (the first `bytes`: the audit log only
    // grows), read once here for the manifest, which goes first; the copy reads them again.
    let mut file = file;
    let mut hasher = Sha256::new();
    let hashed = std::io::copy(&mut (&mut file).take(bytes), &mut HashWriter(&mut hasher))?;
    if hashed != bytes {
        return Err(ProfileError::Io(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("{} shrank while it was being read", path.display()),
        )));
    }
    file.rewind()?;
    Ok(Some(Part {
        entry: FileEntry {
            name: name.to_string(),
            kind,
            bytes,
            sha256: Some(hex::encode(hasher.finalize())),
        },
        file,
    }))
}

/// A `Write` that feeds a SHA-256.
struct HashWriter<'a>(&'a mut Sha256);

impl Write for HashWriter<'_> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.0.update(data);
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn write_archive(
    data_dir: &Path,
    snapshot: &Path,
    checked: &Checked,
    out: impl Write,
    secrets: Secrets,
    now: DateTime<Utc>,
) -> Result<Manifest> {
    let mut left_out = Vec::new();
    let mut secrets_left_out = Vec::new();
    let mut parts = Vec::new();
    parts.extend(open_part(snapshot, JOURNAL, Kind::Journal)?);
    for name in SETTINGS {
        parts.extend(open_part(&data_dir.join(name), name, Kind::Setting)?);
    }
    for (name, secret) in jwt_files(data_dir, &mut left_out) {
        if parts.iter().any(|p| p.entry.name == name) {
            continue;
        }
        match (secret, secrets) {
            (true, Secrets::Leave) => {
                if data_dir.join(&name).exists() {
                    left_out.push(format!("{name}: a secret ([jwt] secret_file)"));
                    secrets_left_out.push(name);
                }
            }
            (true, Secrets::Include) => {
                parts.extend(open_part(&data_dir.join(&name), &name, Kind::Secret)?)
            }
            (false, _) => parts.extend(open_part(&data_dir.join(&name), &name, Kind::Setting)?),
        }
    }
    for name in audit_files(data_dir)? {
        parts.extend(open_part(&data_dir.join(&name), &name, Kind::Audit)?);
    }
    for name in SECRETS {
        match secrets {
            Secrets::Include => {
                parts.extend(open_part(&data_dir.join(name), name, Kind::Secret)?);
            }
            Secrets::Leave if data_dir.join(name).exists() => {
                left_out.push(format!("{name}: a secret"));
                secrets_left_out.push(name.to_string());
            }
            Secrets::Leave => {}
        }
    }
    if data_dir.join("work").exists() {
        left_out.push("work/: the local engines' working directory".into());
    }
    let manifest = Manifest {
        format: FORMAT.into(),
        version: VERSION,
        created_at: now,
        sextant_version: env!("CARGO_PKG_VERSION").into(),
        schema_version: checked.schema_version,
        sessions: checked.sessions,
        tasks: checked.tasks,
        events: checked.events,
        secrets_included: secrets == Secrets::Include,
        files: parts.iter().map(|p| p.entry.clone()).collect(),
        left_out,
        secrets_left_out,
    };
    let mut tar = tar::Builder::new(out);
    let json = serde_json::to_vec_pretty(&manifest)
        .map_err(|e| ProfileError::Io(std::io::Error::other(e)))?;
    tar.append_data(
        &mut header(json.len() as u64, now),
        MANIFEST,
        json.as_slice(),
    )?;
    for part in parts {
        let size = part.entry.bytes;
        tar.append_data(
            &mut header(size, now),
            &part.entry.name,
            Exact {
                inner: part.file.take(size),
                left: size,
                name: part.entry.name.clone(),
            },
        )?;
    }
    tar.into_inner()?.flush()?;
    Ok(manifest)
}

fn header(size: u64, now: DateTime<Utc>) -> tar::Header {
    let mut h = tar::Header::new_gnu();
    h.set_entry_type(tar::EntryType::Regular);
    h.set_size(size);
    h.set_mode(0o600);
    h.set_mtime(now.timestamp().max(0) as u64);
    h
}

/// Exactly `left` bytes of `inner`, or an error: tar trusts the size in the header, so a
/// file that came up short would shift every later entry.
struct Exact<R> {
    inner: R,
    left: u64,
    name: String,
}

impl<R: Read> Read for Exact<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            return Ok(0);
        }
        let n = self.inner.read(buf)?;
        if n == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("{} shrank while it was being copied", self.name),
            ));
        }
        self.left -= n as u64;
        Ok(n)
    }
}

/// Reads a backup into `dest` (an empty directory): checks the manifest, takes only the files
/// it lists (plain names, regular files, each with the size and, when the manifest records
/// one, the SHA-256 it lists; a backup from before digests is restored with a warning), and
/// checks the journal (`PRAGMA integrity_check`, a
/// Sextant journal no newer than this binary). Files are written 0600. Blocking.
pub fn read_backup(input: impl Read, dest: &Path) -> Result<Manifest> {
    let not = |why: String| ProfileError::NotABackup(why);
    let mut archive = tar::Archive::new(input);
    let mut entries = archive
        .entries()
        .map_err(|_| not("not a Sextant backup: it is not a tar archive".into()))?;
    let first = entries
        .next()
        .ok_or_else(|| not("the file is empty".into()))?
        .map_err(|_| not("not a Sextant backup: it is not a tar archive".into()))?;
    let name = first
        .path()
        .map_err(|_| not("not a Sextant backup: it is not a tar archive".into()))?
        .to_string_lossy()
        .into_owned();
    if name != MANIFEST {
        return Err(not(format!(
            "not a Sextant backup: it starts with {name:?}, not {MANIFEST}"
        )));
    }
    if first.size() > 1024 * 1024 {
        return Err(not("the manifest is over 1 MiB".into()));
    }
    let manifest: Manifest = serde_json::from_reader(first).map_err(|e| {
        not(format!(
            "not a Sextant backup: its manifest does not read: {e}"
        ))
    })?;
    if manifest.format != FORMAT {
        return Err(not(format!(
            "not a Sextant backup: its format is {:?}",
            manifest.format
        )));
    }
    if manifest.version != VERSION {
        return Err(not(format!(
            "a Sextant backup of format version {}; this Sextant reads version {VERSION}",
            manifest.version
        )));
    }
    let names = manifest.files.iter().map(|f| &f.name);
    for name in names.chain(&manifest.secrets_left_out) {
        if !plain_name(name) || name == MANIFEST {
            return Err(not(format!("the manifest lists a bad file name {name:?}")));
        }
    }
    if !manifest
        .files
        .iter()
        .any(|f| f.kind == Kind::Journal && f.name == JOURNAL)
    {
        return Err(not("the backup has no journal".into()));
    }
    for f in &manifest.files {
        if let Some(d) = &f.sha256
            && (d.len() != 64 || !d.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
        {
            return Err(not(format!(
                "the manifest's SHA-256 of {:?} is not 64 lowercase hex digits",
                f.name
            )));
        }
    }
    let undigested: Vec<&str> = manifest
        .files
        .iter()
        .filter(|f| f.sha256.is_none())
        .map(|f| f.name.as_str())
        .collect();
    if !undigested.is_empty() {
        tracing::warn!(
            files = %undigested.join(", "),
            written_by = %manifest.sextant_version,
            "restoring a backup without SHA-256 digests (written by an older Sextant): these \
             files are checked by size only, the journal also by PRAGMA integrity_check"
        );
    }
    let mut seen = Vec::new();
    for entry in entries {
        let mut entry = entry.map_err(|e| not(format!("the archive is damaged: {e}")))?;
        let name = entry
            .path()
            .map_err(|e| not(format!("the archive is damaged: {e}")))?
            .to_string_lossy()
            .into_owned();
        let Some(listed) = manifest.files.iter().find(|f| f.name == name) else {
            return Err(not(format!(
                "{name:?} is in the archive but not in its manifest"
            )));
        };
        if entry.header().entry_type() != tar::EntryType::Regular {
            return Err(not(format!("{name:?} is not a regular file")));
        }
        if seen.contains(&name) {
            return Err(not(format!("{name:?} is in the archive twice")));
        }
        if entry.size() != listed.bytes {
            return Err(not(format!(
                "{name:?} has {} bytes, its manifest says {}",
                entry.size(),
                listed.bytes
            )));
        }
        let path = dest.join(&name);
        let mut file = create_private(&path)?;
        let mut hasher = Sha256::new();
        let copied = std::io::copy(
            &mut entry,
            &mut Tee {
                file: &mut file,
                hasher: &mut hasher,
            },
        )?;
        if copied != listed.bytes {
            return Err(not(format!("{name:?} is cut short")));
        }
        if let Some(want) = &listed.sha256 {
            let got = hex::encode(hasher.finalize());
            if &got != want {
                return Err(not(format!(
                    "{name:?} does not match the SHA-256 its manifest records (the backup was \
                     changed or damaged after it was written)"
                )));
            }
        }
        file.sync_all()?;
        seen.push(name);
    }
    for f in &manifest.files {
        if !seen.contains(&f.name) {
            return Err(not(format!(
                "{:?} is in the manifest but not in the archive (a cut-short file?)",
                f.name
            )));
        }
    }
    sextant_journal::backup::check(&dest.join(JOURNAL))?;
    Ok(manifest)
}

/// Writes to a file and feeds a SHA-256 with the same bytes.
struct Tee<'a> {
    file: &'a mut File,
    hasher: &'a mut Sha256,
}

impl Write for Tee<'_> {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        let n = self.file.write(data)?;
        self.hasher.update(&data[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

fn create_private(path: &Path) -> std::io::Result<File> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    o.open(path)
}

/// Writes the export of the profile in `data_dir` (its journal at `journal`): the journal's
/// lines, then the audit log's records, oldest first, then the `end` line. Blocking.
pub fn write_export(
    data_dir: &Path,
    journal: &Path,
    out: impl Write,
    now: DateTime<Utc>,
) -> Result<End> {
    let conn = export::open_for_export(journal).map_err(|e| match e {
        sextant_journal::Error::NotFound => ProfileError::Io(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("no journal at {}", journal.display()),
        )),
        e => e.into(),
    })?;
    let mut w = export::Writer::new(out, export::schema_version(&conn)?, now)?;
    export::write(&conn, &mut w)?;
    drop(conn);
    for name in audit_files(data_dir)? {
        let Ok(f) = File::open(data_dir.join(&name)) else {
            continue; // rotated away meanwhile
        };
        for line in std::io::BufRead::lines(std::io::BufReader::new(f)) {
            // A line cut by a crash is not JSON: it is left out.
            if let Ok(serde_json::Value::Object(record)) = serde_json::from_str(&line?) {
                w.line(&Line::Audit(record))?;
            }
        }
    }
    Ok(w.finish()?.1)
}

/// A `Write` that hands 64 KiB chunks to an async response body. A blocking thread writes;
/// when the client goes away, the next write fails and the writer stops.
struct ChannelWriter {
    tx: tokio::sync::mpsc::Sender<std::io::Result<Bytes>>,
    buf: Vec<u8>,
}

const CHUNK: usize = 64 * 1024;

impl ChannelWriter {
    fn send(&mut self) -> std::io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let chunk = Bytes::from(std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK)));
        self.tx
            .blocking_send(Ok(chunk))
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "client gone"))
    }
}

impl Write for ChannelWriter {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= CHUNK {
            self.send()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.send()
    }
}

/// Runs `produce` on a blocking thread, streaming what it writes as the response body. An
/// error after the first bytes can only cut the body short (the status is sent): the client
/// sees an incomplete transfer, never a complete-looking file.
fn stream(produce: impl FnOnce(&mut ChannelWriter) -> Result<()> + Send + 'static) -> Body {
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    tokio::task::spawn_blocking(move || {
        let mut w = ChannelWriter {
            tx: tx.clone(),
            buf: Vec::with_capacity(CHUNK),
        };
        let done = produce(&mut w).and_then(|()| Ok(w.flush()?));
        if let Err(e) = done {
            tracing::warn!(error = %e, "a profile download stopped");
            let _ = tx.blocking_send(Err(std::io::Error::other(e.to_string())));
        }
    });
    Body::from_stream(futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|chunk| (chunk, rx))
    }))
}

fn attachment(name: &str, content_type: &'static str, body: Body) -> Response {
    let mut resp = body.into_response();
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"{name}\"")) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

fn stamp(now: DateTime<Utc>) -> String {
    now.format("%Y%m%dT%H%M%SZ").to_string()
}

/// What both downloads start from, once the owner is known ([`Owner`]).
struct Download {
    /// The data dir.
    dir: PathBuf,
    /// The journal in it.
    journal: PathBuf,
    /// The download's time (its file name, the archive's entries), from the server's clock.
    now: DateTime<Utc>,
}

impl Download {
    /// The data dir and journal, with the audit log flushed first so the download carries
    /// every record written before it.
    async fn start(app: &AppState) -> ApiResult<Self> {
        let journal = app.runtime.journal().path().to_path_buf();
        let dir = journal
            .parent()
            .map(Path::to_path_buf)
            .ok_or_else(|| ApiError::Internal("the journal has no data dir".into()))?;
        app.security.audit.flush().await;
        Ok(Self {
            dir,
            journal,
            now: app.runtime.clock().now(),
        })
    }
}

/// `GET /api/v1/backup` (owner only): a backup of the profile **without its secrets**
/// (see the module docs), as `sextant-backup-<time>.tar`. The journal's snapshot is taken
/// before the response starts (a failure there is a 500 with the error shape), then the
/// archive is streamed.
pub async fn backup(State(app): State<AppState>, Owner(p): Owner) -> ApiResult<Response> {
    let Download { dir, journal, now } = Download::start(&app).await?;
    let scratch = {
        let dir = dir.clone();
        tokio::task::spawn_blocking(move || -> Result<(tempfile::TempDir, Checked)> {
            let scratch = tempfile::Builder::new()
                .prefix(".backup-")
                .tempdir_in(&dir)?;
            let checked =
                sextant_journal::backup::snapshot(&journal, &scratch.path().join(JOURNAL))?;
            Ok((scratch, checked))
        })
        .await
        .map_err(|e| ApiError::Internal(format!("backup task: {e}")))?
        .map_err(|e| ApiError::Internal(format!("backup: {e}")))?
    };
    crate::audited::download(&app, &p, "backup");
    let body = stream(move |w| {
        let (scratch, checked) = scratch;
        let snapshot = scratch.path().join(JOURNAL);
        write_archive(&dir, &snapshot, &checked, w, Secrets::Leave, now)?;
        drop(scratch);
        Ok(())
    });
    Ok(attachment(
        &format!("sextant-backup-{}.tar", stamp(now)),
        "application/x-tar",
        body,
    ))
}

/// `GET /api/v1/export` (owner only): the export as `sextant-export-<time>.jsonl`, streamed
/// row by row.
pub async fn export(State(app): State<AppState>, Owner(p): Owner) -> ApiResult<Response> {
    let Download { dir, journal, now } = Download::start(&app).await?;
    crate::audited::download(&app, &p, "export");
    let body = stream(move |w| write_export(&dir, &journal, w, now).map(|_| ()));
    Ok(attachment(
        &format!("sextant-export-{}.jsonl", stamp(now)),
        "application/x-ndjson",
        body,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn audit_files_are_listed_oldest_first() {
        let dir = tempfile::tempdir().unwrap();
        for n in [
            "audit.jsonl",
            "audit.jsonl.1",
            "audit.jsonl.2",
            "audit.jsonl.x",
            "other",
        ] {
            std::fs::write(dir.path().join(n), "").unwrap();
        }
        assert_eq!(
            audit_files(dir.path()).unwrap(),
            ["audit.jsonl.2", "audit.jsonl.1", "audit.jsonl"]
        );
    }

    /// A data dir with a journal and settings; a backup of it as bytes.
    fn backup_bytes(dir: &Path) -> (Manifest, Vec<u8>) {
        drop(sextant_journal::Journal::open(dir.join(JOURNAL)).unwrap());
        std::fs::write(dir.join("agents.toml"), "# mine\n").unwrap();
        std::fs::write(dir.join(AUDIT), "{\"at\":\"x\"}\n").unwrap();
        let mut out = Vec::new();
        let m = write_backup(
            dir,
            &dir.join(JOURNAL),
            &mut out,
            Secrets::Leave,
            Utc::now(),
        )
        .unwrap();
        (m, out)
    }

    fn find(hay: &[u8], needle: &[u8]) -> usize {
        hay.windows(needle.len())
            .position(|w| w == needle)
            .expect("in the archive")
    }

    /// Every file's SHA-256 is in the manifest, and a file changed after the backup was written
    /// (its size kept, so the byte counts still agree) is refused at restore.
    #[test]
    fn a_file_changed_with_its_size_kept_is_refused_by_its_digest() {
        let src = tempfile::tempdir().unwrap();
        let (m, mut bytes) = backup_bytes(src.path());
        for f in &m.files {
            let d = f.sha256.as_deref().unwrap_or_else(|| panic!("{f:?}"));
            assert_eq!(d.len(), 64, "{f:?}");
        }
        let agents = m.files.iter().find(|f| f.name == "agents.toml").unwrap();
        assert_eq!(
            agents.sha256.as_deref(),
            Some(sextant_core::ids::sha256_hex(b"# mine\n").as_str())
        );
        // The untouched backup restores.
        let ok = tempfile::tempdir().unwrap();
        read_backup(bytes.as_slice(), ok.path()).unwrap();

        let at = find(&bytes, b"# mine\n");
        bytes[at..at + 7].copy_from_slice(b"# evil\n");
        let dest = tempfile::tempdir().unwrap();
        let e = read_backup(bytes.as_slice(), dest.path())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("\"agents.toml\" does not match the SHA-256 its manifest records"),
            "{e}"
        );
    }

    /// A backup from before digests (no `sha256` in its manifest) still restores.
    #[test]
    fn a_backup_without_digests_still_restores() {
        let src = tempfile::tempdir().unwrap();
        let (_, bytes) = backup_bytes(src.path());
        // The same archive with the digests taken out of its manifest.
        let mut archive = tar::Archive::new(bytes.as_slice());
        let mut builder = tar::Builder::new(Vec::new());
        for entry in archive.entries().unwrap() {
            let mut entry = entry.unwrap();
            let name = entry.path().unwrap().to_string_lossy().into_owned();
            let mut data = Vec::new();
            entry.read_to_end(&mut data).unwrap();
            if name == MANIFEST {
                let mut v: serde_json::Value = serde_json::from_slice(&data).unwrap();
                for f in v["files"].as_array_mut().unwrap() {
                    f.as_object_mut().unwrap().remove("sha256");
                }
                data = serde_json::to_vec(&v).unwrap();
            }
            builder
                .append_data(
                    &mut header(data.len() as u64, Utc::now()),
                    &name,
                    data.as_slice(),
                )
                .unwrap();
        }
        let old = builder.into_inner().unwrap();
        let dest = tempfile::tempdir().unwrap();
        let m = read_backup(old.as_slice(), dest.path()).unwrap();
        assert!(m.files.iter().all(|f| f.sha256.is_none()));
        assert_eq!(
            std::fs::read_to_string(dest.path().join("agents.toml")).unwrap(),
            "# mine\n"
        );
    }

    #[test]
    fn only_bare_names_are_profile_files() {
        assert!(plain_name("idp.pem"));
        for bad in ["", ".", "..", "../x", "/etc/passwd", "a/b", "a\\b"] {
            assert!(!plain_name(bad), "{bad}");
        }
    }
}
