//! `agents.toml`: the Agents a person declares in the data dir.
//!
//! ```toml
//! default_agent = "coder"      # optional; served at /.well-known/agent-card.json
//!
//! [[agents]]
//! id = "coder"
//! name = "Coder"
//! description = "Runs my local coding agent"
//! engine = { kind = "exec", command = ["my-agent", "--json"], timeout_secs = 600 }
//! ```

use std::collections::HashSet;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use sextant_core::AgentSpec;

/// The parsed file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentsFile {
    #[serde(default)]
    pub default_agent: Option<String>,
    #[serde(default)]
    pub agents: Vec<AgentSpec>,
}

/// Reads and validates the file; a missing file means no extra Agents.
pub fn load(path: &Path) -> Result<AgentsFile> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(AgentsFile::default()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let file: AgentsFile =
        toml::from_str(&text).with_context(|| format!("{} is not valid", path.display()))?;
    for a in &file.agents {
        if let Err(why) = a.validate() {
            bail!("{}: {why}", path.display());
        }
    }
    Ok(file)
}

/// Agent ids must be unique (the built-in `shell`, `echo` and `conformance` ids are taken).
pub fn check_unique(agents: &[AgentSpec]) -> Result<()> {
    let mut seen = HashSet::new();
    for a in agents {
        if !seen.insert(a.id.as_str()) {
            bail!(
                "agent id {:?} is declared twice (shell, echo and conformance are built in)",
                a.id
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_exec_agents_and_reports_mistakes() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("agents.toml");
        std::fs::write(
            &p,
            r#"default_agent = "coder"
[[agents]]
id = "coder"
name = "Coder"
description = "d"
engine = { kind = "exec", command = ["my-agent"] }
"#,
        )
        .unwrap();
        let f = load(&p).unwrap();
        assert_eq!(f.default_agent.as_deref(), Some("coder"));
        assert_eq!(f.agents[0].engine.kind(), "exec");

        std::fs::write(&p, "[[agents]]\nid = \"Bad\"\nname = \"x\"\ndescription = \"d\"\nengine = { kind = \"echo\" }\n").unwrap();
        assert!(format!("{:#}", load(&p).unwrap_err()).contains("agent id"));
        std::fs::write(&p, "agents = 3").unwrap();
        assert!(load(&p).is_err());
        assert!(
            load(&dir.path().join("missing.toml"))
                .unwrap()
                .agents
                .is_empty()
        );
        let dup = vec![AgentSpec::echo(), AgentSpec::echo()];
        assert!(check_unique(&dup).is_err());
    }
}
