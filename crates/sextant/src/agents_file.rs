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
//!
//! # The built-in `echo` and `shell` are configured, not redefined: an entry with their id sets
//! # who may call them and their limits; their engine stays the built-in one.
//! [[agents]]
//! id = "echo"
//! access = { call = ["person", "anonymous-local", "peer:build-bot"] }
//! ```

use std::collections::HashSet;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use sextant_core::AgentSpec;
use sextant_core::access::AccessList;
use sextant_core::agent::{EngineSpec, PublicCard};

/// The built-in Agents an entry may configure (see [`BuiltIn`]).
pub const BUILT_IN: &[&str] = &["shell", "echo"];

/// What an entry for a built-in Agent may set: who may call it, its limits, and how its card
/// and results look. Its engine stays the built-in one (an `engine` of the same kind may set
/// the shell's own limits: `timeout_secs`, `approval_timeout_secs`, `working_dir`).
const BUILT_IN_FIELDS: &[&str] = &[
    "id",
    "access",
    "engine",
    "max_part_bytes",
    "max_message_bytes",
    "session_link",
    "public_card",
    "push_notifications",
];

/// One entry that configures a built-in Agent.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BuiltIn {
    pub id: String,
    #[serde(default)]
    access: Option<AccessList>,
    #[serde(default)]
    engine: Option<EngineSpec>,
    #[serde(default)]
    max_part_bytes: Option<u64>,
    #[serde(default)]
    max_message_bytes: Option<u64>,
    #[serde(default)]
    session_link: Option<bool>,
    #[serde(default)]
    public_card: Option<PublicCard>,
    #[serde(default)]
    push_notifications: Option<bool>,
}

impl BuiltIn {
    /// The built-in Agent `base` with this entry's settings.
    fn apply(&self, mut base: AgentSpec) -> Result<AgentSpec> {
        if let Some(engine) = &self.engine {
            if engine.kind() != base.engine.kind() {
                bail!(
                    "agent {:?} is built in: its engine stays {:?} (engine kind {:?} refused); \
                     declare an Agent under another id for an engine of your own",
                    self.id,
                    base.engine.kind(),
                    engine.kind()
                );
            }
            base.engine = engine.clone();
        }
        if let Some(a) = &self.access {
            base.access = a.clone();
        }
        if let Some(n) = self.max_part_bytes {
            base.features.max_part_bytes = n;
        }
        if let Some(n) = self.max_message_bytes {
            base.features.max_message_bytes = n;
        }
        if let Some(b) = self.session_link {
            base.session_link = b;
        }
        if let Some(c) = self.public_card {
            base.public_card = c;
        }
        if let Some(b) = self.push_notifications {
            base.features.push_notifications = b;
        }
        base.validate().map_err(anyhow::Error::msg)?;
        Ok(base)
    }
}

/// The file as written: its entries are read one by one (a built-in's entry has its own
/// fields).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    default_agent: Option<String>,
    #[serde(default)]
    agents: Vec<toml::Table>,
}

/// The parsed file.
#[derive(Debug, Default)]
pub struct AgentsFile {
    pub default_agent: Option<String>,
    /// The Agents it declares.
    pub agents: Vec<AgentSpec>,
    /// Its settings for the built-in Agents (`echo`, `shell`).
    pub built_in: Vec<BuiltIn>,
}

impl AgentsFile {
    /// The built-in `shell` and `echo`, with this file's settings for them.
    pub fn built_ins(&self) -> Result<Vec<AgentSpec>> {
        [AgentSpec::shell(), AgentSpec::echo()]
            .into_iter()
            .map(
                |base| match self.built_in.iter().find(|b| b.id == base.id) {
                    Some(entry) => entry.apply(base),
                    None => Ok(base),
                },
            )
            .collect()
    }
}

/// Reads and validates the file; a missing file means no extra Agents.
pub fn load(path: &Path) -> Result<AgentsFile> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(AgentsFile::default()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", path.display())),
    };
    let raw: RawFile =
        toml::from_str(&text).with_context(|| format!("{} is not valid", path.display()))?;
    let mut file = AgentsFile {
        default_agent: raw.default_agent,
        ..AgentsFile::default()
    };
    for (n, entry) in raw.agents.into_iter().enumerate() {
        let id = entry
            .get("id")
            .and_then(toml::Value::as_str)
            .unwrap_or("")
            .to_string();
        let id = id.as_str();
        if BUILT_IN.contains(&id) {
            let built_in = built_in_entry(id, entry)
                .with_context(|| format!("{} is not valid", path.display()))?;
            if file.built_in.iter().any(|b| b.id == built_in.id) {
                bail!("{}: agent {id:?} is configured twice", path.display());
            }
            // Checked now, so a bad limit stops Sextant at start with the file's name.
            if let Some(base) = [AgentSpec::shell(), AgentSpec::echo()]
                .into_iter()
                .find(|a| a.id == id)
                && let Err(why) = built_in.apply(base)
            {
                bail!("{}: {why:#}", path.display());
            }
            file.built_in.push(built_in);
            continue;
        }
        let spec: AgentSpec = toml::Value::Table(entry).try_into().with_context(|| {
            format!(
                "{} is not valid (agents entry #{}{})",
                path.display(),
                n + 1,
                if id.is_empty() {
                    String::new()
                } else {
                    format!(", id {id:?}")
                }
            )
        })?;
        if let Err(why) = spec.validate() {
            bail!("{}: {why}", path.display());
        }
        file.agents.push(spec);
    }
    Ok(file)
}

/// An entry for a built-in Agent: only the fields it may set, each refusal saying so.
fn built_in_entry(id: &str, entry: toml::Table) -> Result<BuiltIn> {
    // Another engine first: that is what would make it another Agent.
    if let Some(kind) = entry
        .get("engine")
        .and_then(|e| e.get("kind"))
        .and_then(toml::Value::as_str)
        && kind != id
    {
        bail!(
            "agent {id:?} is built in: its engine stays {id:?} (engine kind {kind:?} refused); \
             declare an Agent under another id for an engine of your own"
        );
    }
    if let Some(k) = entry
        .keys()
        .find(|k| !BUILT_IN_FIELDS.contains(&k.as_str()))
    {
        bail!(
            "agent {id:?} is built in: {k} cannot be set for it (its engine stays the built-in \
             {id}); an entry for it may set {}. Declare an Agent under another id for a \
             different one",
            BUILT_IN_FIELDS[1..].join(", ")
        );
    }
    Ok(toml::Value::Table(entry).try_into()?)
}

/// Agent ids must be unique (the built-in `shell`, `echo` and `conformance` ids are taken;
/// an `agents.toml` entry for `shell` or `echo` configures the built-in instead).
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

    /// An entry with a built-in's id configures the built-in (who may call it, its limits):
    /// its engine stays the built-in one, and what would make it something else is refused
    /// with the reason (issue #35 item 8).
    #[test]
    fn a_built_in_is_configured_not_redefined() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("agents.toml");
        std::fs::write(
            &p,
            r#"[[agents]]
id = "echo"
access = { call = ["person", "peer:bot"] }
max_message_bytes = 1000
max_part_bytes = 1000

[[agents]]
id = "shell"
engine = { kind = "shell", timeout_secs = 5 }
"#,
        )
        .unwrap();
        let f = load(&p).unwrap();
        assert!(f.agents.is_empty(), "no new Agent is declared");
        let all = f.built_ins().unwrap();
        let echo = all.iter().find(|a| a.id == "echo").unwrap();
        assert_eq!(echo.access.call, ["person", "peer:bot"]);
        assert_eq!(echo.features.max_message_bytes, 1000);
        assert_eq!(echo.engine, EngineSpec::Echo);
        assert_eq!(echo.name, "Echo", "the rest stays the built-in's");
        let shell = all.iter().find(|a| a.id == "shell").unwrap();
        assert!(
            matches!(
                shell.engine,
                EngineSpec::Shell {
                    timeout_secs: 5,
                    ..
                }
            ),
            "{:?}",
            shell.engine
        );
        assert_eq!(shell.access, AccessList::default());

        for (toml, want) in [
            (
                "[[agents]]\nid = \"echo\"\nengine = { kind = \"exec\", command = [\"sh\"] }\n",
                "its engine stays \"echo\" (engine kind \"exec\" refused)",
            ),
            (
                "[[agents]]\nid = \"shell\"\ncommand = [\"sh\"]\n",
                "agent \"shell\" is built in: command cannot be set for it",
            ),
            (
                "[[agents]]\nid = \"echo\"\nname = \"Mine\"\n",
                "agent \"echo\" is built in: name cannot be set for it",
            ),
            (
                "[[agents]]\nid = \"echo\"\n[[agents]]\nid = \"echo\"\n",
                "configured twice",
            ),
            (
                "[[agents]]\nid = \"echo\"\naccess = { call = [\"bogus\"] }\n",
                "access pattern \"bogus\"",
            ),
        ] {
            std::fs::write(&p, toml).unwrap();
            let err = format!("{:#}", load(&p).unwrap_err());
            assert!(err.contains(want), "{toml}: {want:?} not in {err:?}");
        }
    }
}
