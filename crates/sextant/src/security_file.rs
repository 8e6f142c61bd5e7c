//! `security.toml` in the data dir (optional): JWT verification, limits, perimeter, redaction
//! and audit settings. The format is documented in `sextant_access::settings` and
//! `docs/security.md`; a missing file means the defaults.

use std::path::Path;

use anyhow::{Context, Result, bail};
use sextant_access::settings::SecurityFile;

/// Reads and checks the file; a missing file means the defaults.
pub fn load(path: &Path) -> Result<SecurityFile> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(SecurityFile::default()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let file: SecurityFile =
        toml::from_str(&text).with_context(|| format!("{} is not valid", path.display()))?;
    if let Err(why) = file.validate() {
        bail!("{}: {why}", path.display());
    }
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_parse_and_mistakes_name_the_setting() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("security.toml");
        assert!(load(&p).unwrap().jwt.is_none());
        std::fs::write(
            &p,
            "[jwt]\nissuer = \"https://idp\"\naudience = [\"sextant\"]\nalgorithm = \"RS256\"\n\
             public_key_file = \"idp.pem\"\n\n[limits]\nrate_limit_per_minute = 10\n",
        )
        .unwrap();
        let f = load(&p).unwrap();
        assert!(f.jwt.is_some());
        assert_eq!(f.limits.rate_limit_per_minute, 10);
        std::fs::write(
            &p,
            "[jwt]\nissuer = \"https://idp\"\nalgorithm = \"HS256\"\nsecret_file = \"s\"\n",
        )
        .unwrap();
        let err = format!("{:#}", load(&p).unwrap_err());
        assert!(err.contains("audience is required"), "{err}");
        std::fs::write(&p, "[limits]\nrate = 3\n").unwrap();
        assert!(load(&p).is_err());
    }

    #[test]
    fn retention_is_off_by_default_and_its_mistakes_name_the_setting() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("security.toml");
        assert!(!load(&p).unwrap().retention.enabled());
        std::fs::write(
            &p,
            "[retention]\nkeep_days = 30\nkeep_gb = 0.5\nexport_before_delete = true\n",
        )
        .unwrap();
        let r = load(&p).unwrap().retention;
        let policy = r.policy();
        assert_eq!(policy.keep_days, Some(30));
        assert_eq!(policy.keep_bytes, Some(500_000_000));
        assert!(r.export_before_delete);
        for (bad, says) in [
            ("keep_days = 0", "keep_days must be between 1"),
            ("keep_gb = 0.0", "keep_gb must be a size"),
            ("keep_gb = -1.0", "keep_gb must be a size"),
            ("keep_gb = nan", "keep_gb must be a size"),
            ("export_before_delete = true", "needs keep_days or keep_gb"),
        ] {
            std::fs::write(&p, format!("[retention]\n{bad}\n")).unwrap();
            let err = format!("{:#}", load(&p).unwrap_err());
            assert!(err.contains(says), "{bad}: {err}");
        }
        std::fs::write(&p, "[retention]\nkeep_weeks = 3\n").unwrap();
        assert!(load(&p).is_err());
    }
}
