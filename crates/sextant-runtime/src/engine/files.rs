//! File and data parts for `exec` turns (docs/engine-protocol.md, "Files and data").
//!
//! Before the command starts, every part of the turn's inputs is described in the turn line:
//! text and data parts inline, file parts (`raw` bytes) written into the turn's directory
//! `<data dir>/work/turns/<task id>/` (made for every turn, `SEXTANT_TURN_DIR`, so a command
//! may write its own files there too) and named by their absolute path, `url` parts as given
//! (or, for an Agent with `fetch_url_parts`, fetched through the network guard and written
//! there too). The directory is made afresh each time the command starts (a turn resumed after
//! a restart gets its files again) and removed when the command has exited.
//!
//! On-disk names are Sextant's own (`<input>-<part>-<cleaned filename>`): a caller's filename
//! is passed on in the turn line but never used as a path, so `../../x`, separators, control
//! and bidi characters cannot place a file anywhere else.
//!
//! Output goes the other way: an `artifact` line's part may be `{"path": …}`, a file the
//! command wrote; Sextant reads it (at most the Agent's `max_part_bytes`) and journals its
//! bytes as a `raw` part.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use sextant_core::a2a::{Part, PartContent};
use sextant_core::parts::human_bytes;

use super::Turn;
use crate::outbound::{Fetched, Outbound};

/// How long fetching one URL part may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(60);

/// The prepared files of one turn.
pub(crate) struct TurnFiles {
    /// `<root>/<task id>`; removed by [`TurnFiles::remove`].
    pub dir: PathBuf,
    /// The turn line's `inputs`, one object per input message.
    pub inputs: Vec<Value>,
}

impl TurnFiles {
    /// Removes the turn's directory (best effort: a leftover is harmless and replaced by the
    /// next start of the same task).
    pub fn remove(&self) {
        if let Err(e) = std::fs::remove_dir_all(&self.dir)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::debug!(dir = %self.dir.display(), error = %e, "could not remove a turn dir");
        }
    }
}

/// A filename fit for the turn directory: ASCII letters, digits, `.`, `-`, `_` only, no
/// leading dot, at most 80 bytes; `file` when nothing is left.
pub fn clean_filename(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let trimmed = cleaned.trim_start_matches('.');
    let cut: String = trimmed.chars().take(80).collect();
    if cut.trim_matches('_').is_empty() {
        "file".into()
    } else {
        cut
    }
}

fn media(p: &Part) -> Value {
    p.media_type.clone().map_or(Value::Null, Value::String)
}

fn filename(p: &Part) -> Value {
    p.filename.clone().map_or(Value::Null, Value::String)
}

/// Writes one file into `dir` (whose mode is owner-only on Unix) and describes it.
async fn write_file(dir: &Path, name: &str, bytes: &[u8], p: &Part) -> Result<Value, String> {
    let path = dir.join(name);
    tokio::fs::write(&path, bytes).await.map_err(|e| {
        // The path stays in the log: the failure text reaches remote callers.
        tracing::warn!(path = %path.display(), error = %e, "cannot write a turn file");
        format!("cannot write the input file {name}: {e}")
    })?;
    Ok(json!({
        "kind": "file",
        "path": path.display().to_string(),
        "filename": filename(p),
        "media_type": media(p),
        "size": bytes.len(),
        "sha256": sextant_core::ids::sha256_hex(bytes),
    }))
}

fn make_dir(dir: &Path) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(dir);
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir).map_err(|e| {
        tracing::warn!(dir = %dir.display(), error = %e, "cannot create a turn directory");
        format!("cannot create the turn directory: {e}")
    })
}

/// Describes the turn's inputs and writes their files under `root` (see the module docs).
/// `outbound` fetches URL parts when the Agent asks for it.
pub(crate) async fn prepare(
    turn: &Turn,
    root: &Path,
    outbound: Option<&dyn Outbound>,
) -> Result<TurnFiles, String> {
    let dir = root.join(&turn.task_id);
    let features = &turn.agent.features;
    let made = dir.clone();
    tokio::task::spawn_blocking(move || make_dir(&made))
        .await
        .map_err(|e| format!("cannot create the turn directory: {e}"))??;
    let mut inputs = Vec::with_capacity(turn.inputs.len());
    for (i, m) in turn.inputs.iter().enumerate() {
        let mut parts = Vec::with_capacity(m.parts.len());
        for (j, p) in m.parts.iter().enumerate() {
            let name = || {
                format!(
                    "{i}-{j}-{}",
                    clean_filename(p.filename.as_deref().unwrap_or("file"))
                )
            };
            let described = match &p.content {
                PartContent::Text(t) => json!({ "kind": "text", "text": t }),
                PartContent::Data(d) => {
                    json!({ "kind": "data", "data": d, "media_type": media(p) })
                }
                PartContent::Raw(bytes) => write_file(&dir, &name(), bytes, p).await?,
                PartContent::Url(u) if features.fetch_url_parts => {
                    let mut v = fetch(u, &dir, &name(), p, outbound, features.max_part_bytes).await;
                    v["url"] = Value::String(u.clone());
                    v
                }
                PartContent::Url(u) => json!({
                    "kind": "url", "url": u, "filename": filename(p), "media_type": media(p),
                }),
            };
            parts.push(described);
        }
        inputs.push(json!({
            "message_id": m.message_id,
            "text": sextant_core::projection::message_text(m),
            "parts": parts,
        }));
    }
    Ok(TurnFiles { dir, inputs })
}

/// Fetches a URL part through the guard (public addresses only: a caller's URL must not reach
/// this machine's or its network's services) into the turn directory. A failure is described
/// in the part (`fetch_error`), not fatal: the command decides what to do without the file.
async fn fetch(
    url: &str,
    dir: &Path,
    name: &str,
    p: &Part,
    outbound: Option<&dyn Outbound>,
    limit: u64,
) -> Value {
    let failed = |why: String| json!({ "kind": "url", "filename": filename(p), "media_type": media(p), "fetch_error": why });
    let Some(outbound) = outbound else {
        return failed("Sextant's outbound client is not set up".into());
    };
    let parsed = match url::Url::parse(url) {
        Ok(u) => u,
        Err(e) => return failed(format!("not a URL: {e}")),
    };
    let cap = usize::try_from(limit).unwrap_or(usize::MAX);
    match outbound.fetch_public(&parsed, cap, FETCH_TIMEOUT).await {
        Ok(Fetched {
            bytes,
            content_type,
        }) => {
            let mut part = p.clone();
            if part.media_type.is_none() {
                part.media_type = content_type;
            }
            match write_file(dir, name, &bytes, &part).await {
                Ok(v) => v,
                Err(e) => failed(e),
            }
        }
        Err(e) => failed(e),
    }
}

/// Reads a `{"path": …}` artifact part the command wrote (relative to its working directory)
/// into a `raw` part, keeping `filename` (default: the file's name) and `mediaType`.
pub(crate) async fn read_path_part(v: &Value, cwd: &Path, limit: u64) -> Result<Part, String> {
    let Some(path) = v.get("path").and_then(Value::as_str) else {
        return Err("a part needs text, raw, url, data or path".into());
    };
    let full = cwd.join(path);
    let meta = tokio::fs::metadata(&full)
        .await
        .map_err(|e| format!("cannot read {path}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("{path} is not a file"));
    }
    if meta.len() > limit {
        return Err(format!(
            "{path} is {}; this agent's parts are at most {} (max_part_bytes)",
            human_bytes(meta.len()),
            human_bytes(limit)
        ));
    }
    let bytes = tokio::fs::read(&full)
        .await
        .map_err(|e| format!("cannot read {path}: {e}"))?;
    if bytes.len() as u64 > limit {
        return Err(format!("{path} grew past max_part_bytes while read"));
    }
    let mut part = Part::raw(bytes);
    part.filename = v
        .get("filename")
        .and_then(Value::as_str)
        .map(String::from)
        .or_else(|| full.file_name().map(|n| n.to_string_lossy().into_owned()));
    part.media_type = v
        .get("mediaType")
        .or_else(|| v.get("media_type"))
        .and_then(Value::as_str)
        .map(String::from);
    Ok(part)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_filenames_stay_in_the_turn_directory() {
        assert_eq!(clean_filename("report.pdf"), "report.pdf");
        assert_eq!(clean_filename("../../etc/passwd"), "_.._etc_passwd");
        assert_eq!(clean_filename("..."), "file");
        assert_eq!(clean_filename(".bashrc"), "bashrc");
        assert_eq!(clean_filename("a\nb\u{202e}gpj.exe"), "a_b_gpj.exe");
        assert_eq!(clean_filename("${IFS}x;rm -rf"), "__IFS_x_rm_-rf");
        assert_eq!(clean_filename(""), "file");
        assert_eq!(clean_filename(&"x".repeat(500)).len(), 80);
        for name in ["../a", "/abs/path", "a/b", "..", "\u{0}"] {
            let c = clean_filename(name);
            assert!(
                !c.contains('/') && !c.starts_with('.') && !c.is_empty(),
                "{c}"
            );
        }
    }

    #[tokio::test]
    async fn path_parts_are_read_and_capped() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(dir.path().join("out.bin"), [1u8, 2, 3]).unwrap_or_else(|e| panic!("{e}"));
        let p = read_path_part(
            &json!({"path": "out.bin", "mediaType": "application/x-bin"}),
            dir.path(),
            3,
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(p.content, PartContent::Raw(vec![1, 2, 3]));
        assert_eq!(p.filename.as_deref(), Some("out.bin"));
        assert_eq!(p.media_type.as_deref(), Some("application/x-bin"));
        let e = read_path_part(&json!({"path": "out.bin"}), dir.path(), 2)
            .await
            .unwrap_err();
        assert!(e.contains("max_part_bytes"), "{e}");
        let e = read_path_part(&json!({"path": "missing"}), dir.path(), 9)
            .await
            .unwrap_err();
        assert!(e.contains("cannot read"), "{e}");
        let e = read_path_part(&json!({"path": "."}), dir.path(), 9)
            .await
            .unwrap_err();
        assert!(e.contains("not a file"), "{e}");
        // The turn's directory is a path on the person's machine: failure texts reach remote
        // callers, so they name the file only as the command did.
        let here = dir.path().display().to_string();
        for path in ["out.bin", "missing", "."] {
            let e = read_path_part(&json!({ "path": path }), dir.path(), 2)
                .await
                .unwrap_err();
            assert!(!e.contains(&here), "{e}");
        }
    }
}
