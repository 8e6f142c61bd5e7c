//! One Sextant per data dir: `sextant.lock`, held with an OS file lock for as long as a Sextant
//! runs on the dir.
//!
//! Why: at start a Sextant re-delivers every input that was accepted but never ran, because
//! it takes them for inputs left over by its own last run. With a second Sextant live on the
//! same journal those inputs are the other one's work in progress, and a shell command would
//! run twice. So the second start is refused, with the holder's pid and address.
//!
//! The lock is the kernel's (`flock` on Unix, `LockFileEx` on Windows): it goes away with the
//! process however the process ends, so a crash leaves no stale lock behind. The file's text
//! is only there to tell the refused caller who holds it. The `sextant token` commands do not
//! take the lock; they make single writes that SQLite serialises.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// The lock file's name in the data dir.
pub const LOCK_FILE: &str = "sextant.lock";

/// The held lock; dropping it releases the data dir.
#[derive(Debug)]
pub struct DataDirLock {
    file: File,
    path: PathBuf,
}

impl DataDirLock {
    /// Takes the data dir (creating it if needed), or says who holds it.
    pub fn acquire(dir: &Path) -> Result<DataDirLock> {
        crate::private_dir::create(dir)?;
        let path = dir.join(LOCK_FILE);
        let mut options = OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        let file = options
            .open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                // The holder may not have written its line yet; then there is nothing to name.
                let holder = std::fs::read_to_string(&path).unwrap_or_default();
                let holder = match holder.trim() {
                    "" => String::new(),
                    line => format!(" ({line})"),
                };
                bail!(
                    "another Sextant is already running on the data dir {}{holder}. Use that \
                     one, stop it first, or give this one another --data-dir",
                    dir.display()
                );
            }
            Err(TryLockError::Error(e)) if e.kind() == std::io::ErrorKind::Unsupported => {
                // Some network file systems have no locks. Refusing to start there would
                // leave such a user with no Sextant at all; warn instead.
                tracing::warn!(
                    path = %path.display(),
                    "the file system has no file locks: nothing stops a second Sextant on this data dir"
                );
            }
            Err(TryLockError::Error(e)) => {
                return Err(e).with_context(|| format!("cannot lock {}", path.display()));
            }
        }
        let mut lock = DataDirLock { file, path };
        lock.describe(&format!("pid {}", std::process::id()))?;
        Ok(lock)
    }

    /// Records where this Sextant listens, for the message a refused start prints.
    pub fn record_address(&mut self, url: &str) -> Result<()> {
        self.describe(&format!("pid {}, listening on {url}", std::process::id()))
    }

    fn describe(&mut self, line: &str) -> Result<()> {
        let written = self
            .file
            .set_len(0)
            .and_then(|()| self.file.seek(SeekFrom::Start(0)))
            .and_then(|_| writeln!(self.file, "{line}"));
        written.with_context(|| format!("cannot write {}", self.path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_with_the_first_ones_address_until_it_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("nested/data");
        let mut first = DataDirLock::acquire(&data).unwrap();
        first.record_address("http://127.0.0.1:9900").unwrap();

        let refused = DataDirLock::acquire(&data).unwrap_err().to_string();
        let pid = std::process::id();
        assert!(
            refused.contains("another Sextant is already running")
                && refused.contains(&format!("pid {pid}, listening on http://127.0.0.1:9900")),
            "{refused}"
        );

        drop(first);
        let again = DataDirLock::acquire(&data).unwrap();
        // The old holder's address is gone from the file.
        let text = std::fs::read_to_string(data.join(LOCK_FILE)).unwrap();
        assert_eq!(text, format!("pid {pid}\n"));
        drop(again);
    }
}
