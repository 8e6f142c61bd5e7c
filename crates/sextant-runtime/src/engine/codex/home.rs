//! The `CODEX_HOME` an app-server runs with. By default each Codex Agent has its own, so what
//! Codex writes there — above all the permanent rules of `rules/default.rules` — binds that
//! Agent alone, never another Agent or the person's own Codex. Codex reads the person's
//! login and settings from two files of that home, which are linked in: a login Codex
//! refreshes is written through the link (Codex rewrites `auth.json` in place), so the person
//! and every Agent keep one login.

use std::io::ErrorKind;
use std::os::unix::fs::DirBuilderExt;
use std::path::Path;

use super::config::CodexHome;

/// The files of the person's Codex home an Agent's own home links to: the login and the
/// settings. Not `rules/`: the person's standing approvals are theirs, not the Agent's.
pub(super) const LINKED: [&str; 2] = ["auth.json", "config.toml"];

/// Makes `home` ready for an app-server: an Agent's own is created (owner-only, as it holds a
/// link to a login) and linked to the person's files that exist; a named one must exist.
/// The error is for the task's status, which peers may read, so it names no path (the log
/// does).
pub(super) fn prepare(home: &CodexHome) -> Result<(), String> {
    match home {
        CodexHome::Named(dir) => {
            if dir.is_dir() {
                Ok(())
            } else {
                tracing::warn!(dir = %dir.display(), "an Agent's codex_home is not a directory");
                Err(
                    "the Codex home named in the Agent's configuration is not a directory; \
                     the path is in Sextant's log"
                        .into(),
                )
            }
        }
        CodexHome::Own { dir, person } => {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(|e| failed(dir, "create", &e))?;
            let Some(person) = person.as_deref().filter(|p| *p != dir.as_path()) else {
                return Ok(());
            };
            for name in LINKED {
                link(&person.join(name), &dir.join(name))?;
            }
            Ok(())
        }
    }
}

/// Links `at` to `target` when `target` is a file. A link already there to another place is
/// pointed again (the person's Codex home moved); a regular file at `at` is left alone (the
/// person put it there for this Agent, or Codex wrote one of its own).
fn link(target: &Path, at: &Path) -> Result<(), String> {
    if !target.is_file() {
        return Ok(());
    }
    match std::fs::symlink_metadata(at) {
        Ok(m) if m.file_type().is_symlink() => {
            if std::fs::read_link(at).is_ok_and(|t| t == target) {
                return Ok(());
            }
            std::fs::remove_file(at).map_err(|e| failed(at, "replace", &e))?;
        }
        Ok(_) => return Ok(()),
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        Err(e) => return Err(failed(at, "read", &e)),
    }
    std::os::unix::fs::symlink(target, at).map_err(|e| failed(at, "link", &e))
}

fn failed(path: &Path, what: &str, e: &std::io::Error) -> String {
    tracing::warn!(path = %path.display(), error = %e, "cannot {what} in an Agent's Codex home");
    format!(
        "cannot {what} in the Agent's Codex home ({}); the path is in Sextant's log",
        e.kind()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_own_home_links_the_persons_login_and_settings_and_nothing_else() {
        let tmp = tempfile::tempdir().unwrap();
        let person = tmp.path().join("person");
        std::fs::create_dir_all(person.join("rules")).unwrap();
        std::fs::write(person.join("auth.json"), "{\"OPENAI_API_KEY\":\"k\"}").unwrap();
        std::fs::write(person.join("rules/default.rules"), "prefix_rule()\n").unwrap();
        let dir = tmp.path().join("data/codex/a1");
        let home = CodexHome::Own {
            dir: dir.clone(),
            person: Some(person.clone()),
        };
        prepare(&home).unwrap();
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&dir).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        assert_eq!(
            std::fs::read_link(dir.join("auth.json")).unwrap(),
            person.join("auth.json")
        );
        // config.toml does not exist for the person: no dangling link that a Codex login
        // would write through.
        assert!(std::fs::symlink_metadata(dir.join("config.toml")).is_err());
        assert!(!dir.join("rules").exists());

        // Made later by the person: linked at the next start; a file of the Agent's stays.
        std::fs::write(person.join("config.toml"), "model = \"m\"\n").unwrap();
        std::fs::remove_file(dir.join("auth.json")).unwrap();
        std::fs::write(dir.join("auth.json"), "{}").unwrap();
        prepare(&home).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.join("config.toml")).unwrap(),
            "model = \"m\"\n"
        );
        assert_eq!(
            std::fs::read_to_string(dir.join("auth.json")).unwrap(),
            "{}"
        );
    }

    #[test]
    fn a_named_home_is_used_as_it_is_and_must_exist() {
        let tmp = tempfile::tempdir().unwrap();
        prepare(&CodexHome::Named(tmp.path().to_path_buf())).unwrap();
        assert!(std::fs::read_dir(tmp.path()).unwrap().next().is_none());
        let why = prepare(&CodexHome::Named(tmp.path().join("missing"))).unwrap_err();
        assert!(why.contains("not a directory"), "{why}");
        assert!(!why.contains(&tmp.path().display().to_string()), "{why}");
    }
}
