//! `sextant backup`, `sextant restore` and `sextant export` over a data dir (the archive and
//! line formats are [`sextant_server::profile`]'s).
//!
//! - **Backup** runs beside a live Sextant: the journal is copied as one snapshot on a
//!   connection of its own, so nothing waits for it. The file is written beside its final
//!   name and renamed into place, so a backup that fails leaves no half file under that name.
//! - **Restore** never touches a data dir a running Sextant holds: it takes the dir's
//!   [`DataDirLock`] first and keeps it to the end. It unpacks into a new directory beside the
//!   target, checks it there (a Sextant backup, every file whole, the journal passes
//!   `PRAGMA integrity_check`), and only then swaps directories: the old data dir is renamed
//!   to `<dir>.replaced-<time>` (kept, never deleted) and the new one renamed into its place.
//!   A failure before the swap leaves the target as it was. Secret files the backup does not
//!   carry (a console download) are copied over from the dir it replaces, when it has them.
//! - **Export** reads beside a live Sextant too, one row at a time.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use sextant_journal::export::End;
use sextant_server::profile::{self, Manifest, Secrets};

use crate::data_dir_lock::{DataDirLock, LOCK_FILE};

/// Writes a backup of `data_dir` to `file` (replacing it atomically if it exists).
pub fn backup(data_dir: &Path, file: &Path, secrets: Secrets) -> Result<Manifest> {
    let journal = data_dir.join(profile::JOURNAL);
    if !journal.exists() {
        bail!("no journal in {}: nothing to back up", data_dir.display());
    }
    let now = chrono::Utc::now();
    write_beside(file, |out| {
        profile::write_backup(data_dir, &journal, out, secrets, now)
            .map_err(|e| anyhow::anyhow!("backup of {}: {e}", data_dir.display()))
    })
}

/// Writes the export of `data_dir` to `out`.
pub fn export(data_dir: &Path, out: impl Write) -> Result<End> {
    let journal = data_dir.join(profile::JOURNAL);
    profile::write_export(data_dir, &journal, out, chrono::Utc::now())
        .map_err(|e| anyhow::anyhow!("export of {}: {e}", data_dir.display()))
}

/// Writes the export of `data_dir` to `file` (replacing it atomically if it exists).
pub fn export_to_file(data_dir: &Path, file: &Path) -> Result<End> {
    write_beside(file, |out| export(data_dir, out))
}

/// Runs `write` on a new 0600 file beside `file`, syncs it and renames it to `file`; removes
/// it when `write` fails.
fn write_beside<T>(file: &Path, write: impl FnOnce(&mut std::fs::File) -> Result<T>) -> Result<T> {
    let dir = match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = file
        .file_name()
        .ok_or_else(|| anyhow::anyhow!("{} is not a file name", file.display()))?
        .to_string_lossy()
        .into_owned();
    // NamedTempFile: mode 0600, removed on drop unless persisted.
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".partial")
        .tempfile_in(&dir)
        .with_context(|| format!("cannot create a file in {}", dir.display()))?;
    let out = write(tmp.as_file_mut())?;
    tmp.as_file_mut().flush()?;
    tmp.as_file().sync_all()?;
    tmp.persist(file)
        .with_context(|| format!("cannot write {}", file.display()))?;
    Ok(out)
}

/// What a restore did.
#[derive(Debug)]
pub struct Restored {
    pub manifest: Manifest,
    /// Where the data dir that was there before now is (`None`: there was none).
    pub replaced: Option<PathBuf>,
    /// Secret files the backup did not carry, copied over from the replaced dir.
    pub kept_secrets: Vec<String>,
}

/// Restores the backup `file` into `data_dir` (see the module docs).
pub fn restore(file: &Path, data_dir: &Path) -> Result<Restored> {
    let input = std::fs::File::open(file)
        .with_context(|| format!("cannot open the backup {}", file.display()))?;
    let parent = match data_dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = data_dir
        .file_name()
        .ok_or_else(|| anyhow::anyhow!("{} is not a directory name", data_dir.display()))?
        .to_string_lossy()
        .into_owned();
    // Refuses (naming the holder) when a Sextant runs on the dir; held until the swap is done.
    let old_lock = DataDirLock::acquire(data_dir)?;

    let staging = tempfile::Builder::new()
        .prefix(&format!(".{name}.restore-"))
        .tempdir_in(&parent)
        .with_context(|| format!("cannot create a directory in {}", parent.display()))?;
    let manifest = profile::read_backup(std::io::BufReader::new(input), staging.path())
        .map_err(|e| anyhow::anyhow!("{}: {e}; nothing was restored", file.display()))?;

    let mut kept_secrets = Vec::new();
    let secrets = profile::SECRETS
        .iter()
        .map(|s| s.to_string())
        .chain(manifest.secrets_left_out.iter().cloned());
    for secret in secrets {
        if kept_secrets.contains(&secret) {
            continue;
        }
        let from = data_dir.join(&secret);
        let to = staging.path().join(&secret);
        if !to.exists() && from.is_file() {
            copy_private(&from, &to)?;
            kept_secrets.push(secret);
        }
    }

    // The new dir is locked before it takes the name, so no Sextant can start on it between
    // the two renames.
    let new_lock = DataDirLock::acquire(staging.path())?;
    let occupied = std::fs::read_dir(data_dir)?
        .filter_map(|e| e.ok())
        .any(|e| e.file_name() != LOCK_FILE);
    let replaced = if occupied {
        let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ");
        let aside = parent.join(format!("{name}.replaced-{stamp}"));
        if aside.exists() {
            bail!("{} exists already; try again in a second", aside.display());
        }
        std::fs::rename(data_dir, &aside).with_context(|| {
            format!(
                "cannot move {} aside to {}; nothing was restored",
                data_dir.display(),
                aside.display()
            )
        })?;
        Some(aside)
    } else {
        std::fs::remove_file(data_dir.join(LOCK_FILE))?;
        std::fs::remove_dir(data_dir)?;
        None
    };
    drop(old_lock);
    let staged = staging.keep();
    if let Err(e) = std::fs::rename(&staged, data_dir) {
        // Put the old dir back where it was; the restored one stays beside it.
        if let Some(aside) = &replaced {
            let _ = std::fs::rename(aside, data_dir);
        }
        return Err(e).with_context(|| {
            format!(
                "cannot move the restored data dir {} into place at {}",
                staged.display(),
                data_dir.display()
            )
        });
    }
    drop(new_lock);
    Ok(Restored {
        manifest,
        replaced,
        kept_secrets,
    })
}

fn copy_private(from: &Path, to: &Path) -> Result<()> {
    let bytes = std::fs::read(from).with_context(|| format!("cannot read {}", from.display()))?;
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    let mut f = o
        .open(to)
        .with_context(|| format!("cannot write {}", to.display()))?;
    f.write_all(&bytes)?;
    f.sync_all()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A data dir with a journal (one Agent row), settings and secret files.
    fn profile_dir(dir: &Path) {
        std::fs::create_dir_all(dir).unwrap();
        let j = sextant_journal::Journal::open(dir.join("journal.db")).unwrap();
        drop(j);
        std::fs::write(dir.join("agents.toml"), "# mine\n").unwrap();
        std::fs::write(dir.join("token"), "sxt_old\n").unwrap();
        std::fs::write(dir.join("audit.jsonl"), "{\"at\":\"x\"}\n").unwrap();
    }

    #[test]
    fn a_restore_keeps_the_replaced_dir_and_its_secrets_when_the_backup_has_none() {
        let tmp = tempfile::tempdir().unwrap();
        let source = tmp.path().join("source");
        profile_dir(&source);
        // A JWT secret file named by security.toml is a secret too; its public key is not.
        std::fs::write(
            source.join("security.toml"),
            "[jwt]\nsecret_file = \"jwt.secret\"\n",
        )
        .unwrap();
        std::fs::write(source.join("jwt.secret"), "source secret").unwrap();
        let file = tmp.path().join("b.tar");
        let m = backup(&source, &file, Secrets::Leave).unwrap();
        assert!(!m.secrets_included);
        assert_eq!(m.secrets_left_out, ["jwt.secret", "token"]);
        assert!(m.files.iter().any(|f| f.name == "security.toml"));

        let target = tmp.path().join("target");
        std::fs::create_dir_all(&target).unwrap();
        std::fs::write(target.join("token"), "sxt_target\n").unwrap();
        std::fs::write(target.join("jwt.secret"), "target secret").unwrap();
        std::fs::write(target.join("agents.toml"), "# theirs\n").unwrap();
        let r = restore(&file, &target).unwrap();
        assert_eq!(r.kept_secrets, ["token", "jwt.secret"]);
        assert_eq!(
            std::fs::read_to_string(target.join("jwt.secret")).unwrap(),
            "target secret"
        );
        let aside = r.replaced.expect("the old dir is kept");
        assert_eq!(
            std::fs::read_to_string(aside.join("agents.toml")).unwrap(),
            "# theirs\n"
        );
        assert_eq!(
            std::fs::read_to_string(target.join("agents.toml")).unwrap(),
            "# mine\n"
        );
        assert_eq!(
            std::fs::read_to_string(target.join("token")).unwrap(),
            "sxt_target\n"
        );
        sextant_journal::backup::check(&target.join("journal.db")).unwrap();
        // Nothing of the restore is left beside it.
        let strays: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains("restore") || n.contains("partial"))
            .collect();
        assert!(strays.is_empty(), "{strays:?}");
    }

    /// A file that is not a backup, or one whose journal fails the integrity check, is
    /// refused, and the target dir is left exactly as it was.
    #[test]
    fn a_bad_backup_is_refused_and_changes_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("target");
        profile_dir(&target);
        let listing = |d: &Path| {
            let mut names: Vec<String> = std::fs::read_dir(d)
                .unwrap()
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| !n.starts_with("journal.db-") && n != LOCK_FILE)
                .collect();
            names.sort();
            names
        };
        let before = listing(&target);

        let junk = tmp.path().join("junk.tar");
        std::fs::write(&junk, vec![7u8; 4096]).unwrap();
        let e = restore(&junk, &target).unwrap_err().to_string();
        assert!(
            e.contains("not a Sextant backup: it is not a tar archive")
                && e.contains("nothing was restored"),
            "{e}"
        );

        // A well-formed archive whose journal is damaged: pages overwritten in the middle.
        let source = tmp.path().join("source");
        profile_dir(&source);
        let good = tmp.path().join("good.tar");
        backup(&source, &good, Secrets::Include).unwrap();
        let mut bytes = std::fs::read(&good).unwrap();
        let db = find(&bytes, b"SQLite format 3\0").expect("the journal is in the archive");
        for b in &mut bytes[db + 4096..db + 3 * 4096] {
            *b = 0x5a;
        }
        let damaged = tmp.path().join("damaged.tar");
        std::fs::write(&damaged, bytes).unwrap();
        let e = restore(&damaged, &target).unwrap_err().to_string();
        assert!(
            // The manifest's digest refuses it first; SQLite's own check stays behind it.
            e.contains("does not match the SHA-256")
                || e.contains("integrity_check")
                || e.contains("malformed"),
            "{e}"
        );

        assert_eq!(listing(&target), before);
        assert_eq!(
            std::fs::read_to_string(target.join("token")).unwrap(),
            "sxt_old\n"
        );
        sextant_journal::backup::check(&target.join("journal.db")).unwrap();
        let siblings: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains("replaced") || n.contains("restore"))
            .collect();
        assert!(siblings.is_empty(), "{siblings:?}");
        // The good one restores.
        restore(&good, &target).unwrap();
    }

    fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
        hay.windows(needle.len()).position(|w| w == needle)
    }
}
