//! The security settings (`<data dir>/security.toml`) as written, and their checks. The server
//! builds its services from them (`sextant_server::security`); the CLI reads them for
//! retention and backups.
//!
//! ```toml
//! [jwt]                                   # optional: accept JWTs (Delegated / Service principals)
//! issuer = "https://idp.example.com"      # required: `iss` must equal it
//! audience = "sextant"                    # required (string or list): `aud` must contain one
//! algorithm = "RS256"                     # pinned: HS256/384/512, RS256/384/512, PS256/384/512,
//!                                         # ES256/384, EdDSA
//! public_key_file = "idp.pem"             # exactly one of public_key_file (PEM), jwks_file,
//! # jwks_file = "jwks.json"               # secret_file (HS*; at least 32/48/64 bytes);
//! # secret_file = "jwt.secret"            # paths are relative to the data dir
//! leeway_secs = 30
//!
//! [limits]
//! rate_limit_per_minute = 60              # per remote identity (peer, assistant, JWT); 0 = off
//! local_rate_limit_per_minute = 0         # the anonymous loopback caller; 0 = off
//! max_concurrent_tasks = 8                # per remote principal, submitted or working; 0 = off
//! max_agent_turns_per_context = 50        # inputs per context from an agent principal; 0 = off
//! max_body_bytes = 10485760
//! max_header_bytes = 32768
//! max_hops = 3                            # an inbound A2A-Hop at or above this is refused
//!
//! [perimeter]
//! allowed_hosts = []                      # more Host names accepted without a token
//! anonymous_local = true                  # false: no anonymous caller even on loopback
//! trusted_proxies = []                    # proxies whose X-Forwarded-Host/-Proto are believed
//!
//! [redaction]
//! emails = false                          # also scrub e-mail addresses from replies
//!
//! [audit]
//! max_bytes = 10485760                    # rotate audit.jsonl beyond this
//! keep = 5                                # rotated files kept (audit.jsonl.1 … .5)
//!
//! [retention]                             # off unless keep_days or keep_gb is set
//! keep_days = 90                          # delete Sessions idle longer than this
//! keep_gb = 2.0                           # delete the oldest Sessions while the journal is larger
//! export_before_delete = true             # write them to retention/deleted-<time>.jsonl first
//! ```
//!
//! Every mistake is a start-up error naming the setting: Sextant never starts with a security
//! setting it could not apply.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// `[jwt]` as written in `security.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JwtSettings {
    #[serde(default)]
    pub issuer: Option<String>,
    #[serde(default)]
    pub audience: Option<OneOrMany>,
    #[serde(default)]
    pub algorithm: Option<String>,
    #[serde(default)]
    pub secret_file: Option<PathBuf>,
    #[serde(default)]
    pub public_key_file: Option<PathBuf>,
    #[serde(default)]
    pub jwks_file: Option<PathBuf>,
    #[serde(default = "default_leeway")]
    pub leeway_secs: u64,
}

fn default_leeway() -> u64 {
    30
}

/// A string or a list of strings.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    One(String),
    Many(Vec<String>),
}

impl OneOrMany {
    /// The strings, one or many.
    pub fn list(&self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s.clone()],
            OneOrMany::Many(v) => v.clone(),
        }
    }
}

/// The algorithms `[jwt] algorithm` may pin (the names of RFC 7518, as `jsonwebtoken` spells
/// them); `none` is not one.
pub const JWT_ALGORITHMS: [&str; 12] = [
    "HS256", "HS384", "HS512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256",
    "ES384", "EdDSA",
];

impl JwtSettings {
    /// The configured audiences (none when unset).
    pub fn audience_list(&self) -> Vec<String> {
        self.audience
            .as_ref()
            .map(OneOrMany::list)
            .unwrap_or_default()
    }

    /// Checks the settings that need no file: issuer, audience, algorithm, one key source.
    pub fn validate(&self) -> Result<(), String> {
        if self.issuer.as_deref().is_none_or(|i| i.trim().is_empty()) {
            return Err("[jwt] issuer is required: tokens must name their issuer in `iss`".into());
        }
        let audience = self
            .audience
            .as_ref()
            .map(OneOrMany::list)
            .unwrap_or_default();
        if audience.is_empty() || audience.iter().any(|a| a.trim().is_empty()) {
            return Err(
                "[jwt] audience is required: tokens must be issued for Sextant (`aud`), or any \
                 token the issuer signs for another service would be accepted here"
                    .into(),
            );
        }
        let alg = self.algorithm.as_deref().unwrap_or("");
        let Some(alg) = JWT_ALGORITHMS.into_iter().find(|a| *a == alg) else {
            return Err(format!(
                "[jwt] algorithm {alg:?}: pin one of HS256, HS384, HS512, RS256, RS384, RS512, \
                 PS256, PS384, PS512, ES256, ES384, EdDSA"
            ));
        };
        let sources = [
            self.secret_file.is_some(),
            self.public_key_file.is_some(),
            self.jwks_file.is_some(),
        ];
        if sources.iter().filter(|s| **s).count() != 1 {
            return Err(
                "[jwt] give exactly one key: secret_file, public_key_file or jwks_file".into(),
            );
        }
        let hmac = alg.starts_with("HS");
        if hmac != self.secret_file.is_some() && self.jwks_file.is_none() {
            return Err(format!(
                "[jwt] algorithm {alg} needs {}",
                if hmac {
                    "secret_file (a shared secret)"
                } else {
                    "public_key_file or jwks_file (a public key)"
                }
            ));
        }
        if self.leeway_secs > 300 {
            return Err("[jwt] leeway_secs must be at most 300".into());
        }
        Ok(())
    }
}

/// The whole file, as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecurityFile {
    /// `[jwt]`: JWT verification (none: JWTs are refused).
    #[serde(default)]
    pub jwt: Option<JwtSettings>,
    /// `[limits]`.
    #[serde(default)]
    pub limits: LimitsFile,
    /// `[perimeter]`.
    #[serde(default)]
    pub perimeter: PerimeterFile,
    /// `[redaction]`.
    #[serde(default)]
    pub redaction: RedactionFile,
    /// `[audit]`.
    #[serde(default)]
    pub audit: AuditFile,
    /// `[retention]`: which old Sessions the journal deletes (none unless configured).
    #[serde(default)]
    pub retention: RetentionFile,
}

/// Largest request body accepted (JSON-RPC or REST) by default, as the official SDKs do.
pub const MAX_BODY: usize = 10 * 1024 * 1024;

/// `[limits]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsFile {
    /// Requests a minute per remote identity (peer, assistant, JWT holder); 0 = no limit.
    pub rate_limit_per_minute: u32,
    /// Requests a minute of the anonymous loopback caller; 0 = no limit.
    pub local_rate_limit_per_minute: u32,
    /// Tasks one remote principal may have submitted or working; 0 = no cap.
    pub max_concurrent_tasks: u32,
    /// Inputs an agent principal may send in one context; 0 = no cap.
    pub max_agent_turns_per_context: u32,
    /// Largest request body (413 beyond).
    pub max_body_bytes: usize,
    /// Largest request header block (431 beyond).
    pub max_header_bytes: usize,
    /// The `A2A-Hop` count at which an inbound call is refused (anti-loop): a call relayed
    /// this many times or more is 403. Sextant sends the inbound count + 1 on the calls it
    /// makes for a task (1 for a call it starts).
    pub max_hops: u32,
    /// Seconds a request's head may take to arrive, counted from the connection's opening or
    /// its previous response; a kept-alive connection idle this long is closed too.
    pub header_timeout_secs: u64,
    /// Seconds a request's body may take to arrive after its head.
    pub body_timeout_secs: u64,
    /// Open connections at most, the console's room included.
    pub max_connections: usize,
    /// Open connections at most from one peer address (127.0.0.1 and ::1 excepted).
    pub max_connections_per_address: usize,
    /// Of `max_connections`, how many only 127.0.0.1 and ::1 (the console's addresses) may use.
    pub console_connections: usize,
    /// Connections beyond `max_connections` that serve only the owner's credential (the
    /// owner token or a console session): whatever other clients hold, the person gets in.
    pub owner_connections: usize,
}

impl Default for LimitsFile {
    fn default() -> Self {
        let runtime = sextant_runtime::Limits::default();
        Self {
            rate_limit_per_minute: 60,
            local_rate_limit_per_minute: 0,
            max_concurrent_tasks: runtime.max_concurrent_tasks,
            max_agent_turns_per_context: runtime.max_agent_turns_per_context,
            max_body_bytes: MAX_BODY,
            max_header_bytes: 32 * 1024,
            max_hops: 3,
            header_timeout_secs: 20,
            body_timeout_secs: 60,
            max_connections: 4096,
            max_connections_per_address: 64,
            console_connections: 32,
            owner_connections: 16,
        }
    }
}

/// `[perimeter]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PerimeterFile {
    /// More `Host` names accepted from callers without a token.
    pub allowed_hosts: Vec<String>,
    /// Whether loopback callers without a token are served (loopback-only mode only).
    pub anonymous_local: bool,
    /// Addresses of the reverse proxies whose `X-Forwarded-Host` / `X-Forwarded-Proto` are
    /// believed (for links, when no public URL is set). From anyone else they are dropped.
    pub trusted_proxies: Vec<std::net::IpAddr>,
}

impl Default for PerimeterFile {
    fn default() -> Self {
        Self {
            allowed_hosts: Vec::new(),
            anonymous_local: true,
            trusted_proxies: Vec::new(),
        }
    }
}

/// `[redaction]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RedactionFile {
    /// Also scrub e-mail addresses from replies to callers other than the owner.
    pub emails: bool,
}

/// `[audit]`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AuditFile {
    /// Rotate `audit.jsonl` past this size.
    pub max_bytes: u64,
    /// Rotated files kept.
    pub keep: u32,
}

impl Default for AuditFile {
    fn default() -> Self {
        Self {
            max_bytes: 10 * 1024 * 1024,
            keep: 5,
        }
    }
}

/// `[retention]`: off unless `keep_days` or `keep_gb` is set. It sits in `security.toml`
/// beside `[audit]`: how long what callers said is kept is a privacy setting like them.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RetentionFile {
    /// Delete Sessions whose last activity is older than this many days.
    pub keep_days: Option<u32>,
    /// Delete the oldest Sessions while the journal's used pages exceed this many GB (10^9
    /// bytes; fractions allowed).
    pub keep_gb: Option<f64>,
    /// Write the Sessions to `retention/deleted-<time>.jsonl` in the data dir (the format of
    /// `sextant export`) before deleting them.
    pub export_before_delete: bool,
}

impl RetentionFile {
    /// The longest `keep_days` accepted (a hundred years).
    pub const MAX_DAYS: u32 = 36_500;

    /// Checks the values; the message names the setting.
    pub fn validate(&self) -> Result<(), String> {
        if let Some(d) = self.keep_days
            && !(1..=Self::MAX_DAYS).contains(&d)
        {
            return Err(format!(
                "[retention] keep_days must be between 1 and {} (got {d})",
                Self::MAX_DAYS
            ));
        }
        if let Some(gb) = self.keep_gb
            && !(0.001..=1_000_000.0).contains(&gb)
        {
            return Err(format!(
                "[retention] keep_gb must be a size in GB between 0.001 and 1000000 (got {gb})"
            ));
        }
        if self.export_before_delete && !self.enabled() {
            return Err(
                "[retention] export_before_delete needs keep_days or keep_gb: without a limit \
                 nothing is deleted"
                    .into(),
            );
        }
        Ok(())
    }

    /// Whether anything is ever deleted.
    pub fn enabled(&self) -> bool {
        self.keep_days.is_some() || self.keep_gb.is_some()
    }

    /// The journal's policy for these settings.
    pub fn policy(&self) -> sextant_journal::retention::Policy {
        sextant_journal::retention::Policy {
            keep_days: self.keep_days,
            // Validated: finite, positive and far below u64::MAX bytes.
            keep_bytes: self.keep_gb.map(|gb| (gb * 1e9) as u64),
        }
    }
}

impl SecurityFile {
    /// Checks what can be checked without the data dir (the JWT key files are read by
    /// the server when it builds its services).
    pub fn validate(&self) -> Result<(), String> {
        let l = &self.limits;
        if l.max_body_bytes < 1024 {
            return Err("[limits] max_body_bytes must be at least 1024".into());
        }
        if l.max_header_bytes < 1024 {
            return Err("[limits] max_header_bytes must be at least 1024".into());
        }
        if l.max_hops < 1 {
            return Err("[limits] max_hops must be at least 1".into());
        }
        if l.header_timeout_secs == 0 || l.body_timeout_secs == 0 {
            return Err(
                "[limits] header_timeout_secs and body_timeout_secs must be at least 1".into(),
            );
        }
        if l.max_connections_per_address == 0 || l.console_connections >= l.max_connections {
            return Err(
                "[limits] max_connections_per_address must be at least 1, and \
                 console_connections less than max_connections"
                    .into(),
            );
        }
        if l.owner_connections == 0 {
            return Err(
                "[limits] owner_connections must be at least 1 (the places only the owner's \
                 credential uses, so the person is never locked out)"
                    .into(),
            );
        }
        if self.audit.max_bytes < 4096 {
            return Err("[audit] max_bytes must be at least 4096".into());
        }
        for h in &self.perimeter.allowed_hosts {
            if h.is_empty()
                || !h
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-.".contains(&b))
            {
                return Err(format!(
                    "[perimeter] allowed_hosts: {h:?} is not a host name (no port, no scheme)"
                ));
            }
        }
        if let Some(jwt) = &self.jwt {
            jwt.validate()?;
        }
        self.retention.validate()?;
        Ok(())
    }

    /// Whether JWT verification is configured.
    pub fn has_jwt(&self) -> bool {
        self.jwt.is_some()
    }
}

/// The path a relative setting (a key file) points at: relative to the data dir.
pub fn resolve(data_dir: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        data_dir.join(p)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn settings_are_checked() {
        let mut f = SecurityFile::default();
        assert!(f.validate().is_ok());
        f.perimeter.allowed_hosts = vec!["evil.com:80".into()];
        assert!(f.validate().unwrap_err().contains("allowed_hosts"));
        let f: SecurityFile = serde_json::from_value(serde_json::json!({
            "limits": { "rate_limit_per_minute": 5 }
        }))
        .unwrap();
        assert_eq!(f.limits.rate_limit_per_minute, 5);
        assert_eq!(f.limits.max_concurrent_tasks, 8);
        assert!(
            serde_json::from_value::<SecurityFile>(serde_json::json!({ "limit": {} })).is_err()
        );
    }

    #[test]
    fn settings_are_refused_clearly() {
        let s = |v: serde_json::Value| serde_json::from_value::<JwtSettings>(v).unwrap();
        let no_aud = s(json!({ "issuer": "i", "algorithm": "HS256", "secret_file": "x" }));
        assert!(
            no_aud
                .validate()
                .unwrap_err()
                .contains("audience is required")
        );
        let no_iss = s(json!({ "audience": "a", "algorithm": "HS256", "secret_file": "x" }));
        assert!(
            no_iss
                .validate()
                .unwrap_err()
                .contains("issuer is required")
        );
        let bad_alg =
            s(json!({ "issuer": "i", "audience": "a", "algorithm": "none", "secret_file": "x" }));
        assert!(bad_alg.validate().unwrap_err().contains("algorithm"));
        let two = s(
            json!({ "issuer": "i", "audience": ["a"], "algorithm": "RS256",
                            "public_key_file": "p", "jwks_file": "j" }),
        );
        assert!(two.validate().unwrap_err().contains("exactly one key"));
        let mismatch =
            s(json!({ "issuer": "i", "audience": "a", "algorithm": "RS256", "secret_file": "x" }));
        assert!(mismatch.validate().unwrap_err().contains("public key"));
    }
}
