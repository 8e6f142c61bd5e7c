//! The data dir is private to its owner: the directory is 0700 and every file Sextant writes
//! in it 0600 (the journal and its `-wal`/`-shm`, the audit log, the token files, the lock).
//! The journal holds every transcript, so a 0755 dir with a 0644 `journal.db` would let any
//! local user read them all.
//!
//! [`create`] makes the dir (0700) where it does not exist yet; [`tighten`], run once at start,
//! takes group and other permissions off a dir made by an older Sextant (or by hand), off the
//! files directly in it and off its known subdirectories (`retention/`'s files too; `work/`,
//! the local engines' working directory, only the directory itself), and says in one log line
//! what it changed. On other platforms both only create the dir.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// The subdirectories Sextant makes in the data dir whose files it also tightens.
const PRIVATE_SUBDIRS: &[&str] = &["retention"];
/// Subdirectories whose directory only is tightened: their files are the agents' own.
const DIR_ONLY_SUBDIRS: &[&str] = &["work"];

/// Creates `dir` (and missing parents) with mode 0700 where it does not exist.
pub fn create(dir: &Path) -> Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(dir)
        .with_context(|| format!("cannot create the data dir {}", dir.display()))
}

/// Takes group and other permissions off the data dir, the files directly in it and its known
/// subdirectories; returns what it changed (path, old mode, new mode), already logged.
/// Symlinks are left alone (their targets are not Sextant's to change).
pub fn tighten(dir: &Path) -> Result<Vec<(PathBuf, u32, u32)>> {
    #[cfg(unix)]
    {
        let changed = tighten_unix(dir)?;
        if !changed.is_empty() {
            let list: Vec<String> = changed
                .iter()
                .map(|(p, old, new)| format!("{} {old:o}->{new:o}", p.display()))
                .collect();
            tracing::warn!(
                data_dir = %dir.display(),
                changed = %list.join(", "),
                "the data dir was readable by other local users: took group and other \
                 permissions off it and its files"
            );
        }
        Ok(changed)
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(Vec::new())
    }
}

#[cfg(unix)]
fn tighten_unix(dir: &Path) -> Result<Vec<(PathBuf, u32, u32)>> {
    let mut changed = Vec::new();
    restrict(dir, &mut changed)?;
    files_in(dir, &mut changed)?;
    for sub in PRIVATE_SUBDIRS {
        let sub = dir.join(sub);
        if is_real_dir(&sub) {
            restrict(&sub, &mut changed)?;
            files_in(&sub, &mut changed)?;
        }
    }
    for sub in DIR_ONLY_SUBDIRS {
        let sub = dir.join(sub);
        if is_real_dir(&sub) {
            restrict(&sub, &mut changed)?;
        }
    }
    Ok(changed)
}

#[cfg(unix)]
fn is_real_dir(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

/// The regular files directly in `dir`.
#[cfg(unix)]
fn files_in(dir: &Path, changed: &mut Vec<(PathBuf, u32, u32)>) -> Result<()> {
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))?;
    for e in entries {
        let e = e.with_context(|| format!("cannot read {}", dir.display()))?;
        // file_type does not follow symlinks.
        if e.file_type().is_ok_and(|t| t.is_file()) {
            restrict(&e.path(), changed)?;
        }
    }
    Ok(())
}

/// Clears the group and other bits of `path`'s mode, when any is set.
#[cfg(unix)]
fn restrict(path: &Path, changed: &mut Vec<(PathBuf, u32, u32)>) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        // Removed meanwhile (a rotated audit file, a stale scratch file): nothing to tighten.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let old = meta.permissions().mode() & 0o7777;
    if old & 0o077 == 0 || meta.file_type().is_symlink() {
        return Ok(());
    }
    let new = old & !0o077;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(new))
        .with_context(|| format!("cannot change the permissions of {}", path.display()))?;
    changed.push((path.to_path_buf(), old, new));
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).expect("metadata").permissions().mode() & 0o777
    }

    #[test]
    fn a_new_data_dir_is_0700() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a/b");
        create(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        // An existing dir is left as it is by create (tighten changes it).
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        create(&dir).unwrap();
        assert_eq!(mode(&dir), 0o755);
    }

    #[test]
    fn tighten_takes_group_and_other_bits_off_the_dir_its_files_and_known_subdirs() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("data");
        let set = |p: &Path, m: u32| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap()
        };
        std::fs::create_dir_all(dir.join("retention")).unwrap();
        std::fs::create_dir_all(dir.join("work/project")).unwrap();
        set(&dir, 0o755);
        set(&dir.join("retention"), 0o755);
        set(&dir.join("work"), 0o775);
        for f in [
            "journal.db",
            "journal.db-wal",
            "agents.toml",
            "retention/x.jsonl",
        ] {
            std::fs::write(dir.join(f), "x").unwrap();
            set(&dir.join(f), 0o644);
        }
        std::fs::write(dir.join("token"), "t").unwrap();
        set(&dir.join("token"), 0o600);
        std::fs::write(dir.join("work/project/a.sh"), "x").unwrap();
        set(&dir.join("work/project/a.sh"), 0o755);
        // A symlink to a file outside: neither it nor its target is touched.
        let outside = tmp.path().join("outside");
        std::fs::write(&outside, "o").unwrap();
        set(&outside, 0o644);
        std::os::unix::fs::symlink(&outside, dir.join("link")).unwrap();

        let changed = tighten(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&dir.join("retention")), 0o700);
        assert_eq!(mode(&dir.join("work")), 0o700);
        for f in [
            "journal.db",
            "journal.db-wal",
            "agents.toml",
            "retention/x.jsonl",
        ] {
            assert_eq!(mode(&dir.join(f)), 0o600, "{f}");
        }
        assert_eq!(mode(&dir.join("token")), 0o600);
        assert_eq!(mode(&dir.join("work/project/a.sh")), 0o755);
        assert_eq!(mode(&outside), 0o644);
        assert_eq!(changed.len(), 7, "{changed:?}");
        // Once tight, nothing more to do.
        assert!(tighten(&dir).unwrap().is_empty());
    }
}
