//! The security services of a running server, built from the settings
//! ([`sextant_access::settings`], `security.toml`) and shared by every handler through
//! [`AppState::security`](crate::AppState): the JWT verifier, limits, where Sextant is
//! reachable, the audit log, the rate limits and the console's sign-in sessions.

use std::path::Path;

use sextant_access::audit::AuditLog;
use sextant_access::settings::{LimitsFile, SecurityFile};

use crate::auth::console::ConsoleSessions;
use crate::auth::jwt::JwtVerifier;
use crate::auth::ratelimit::RateLimits;

/// Where Sextant is reachable, as decided at start-up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exposure {
    /// Loopback-only mode: bound to a loopback address, and no public URL beyond loopback
    /// (a reverse proxy on this machine makes every caller look local). Only in this mode is a
    /// request without a credential served, as the anonymous loopback caller.
    pub loopback_only: bool,
    /// Host names (lowercase, no port) accepted from callers without a token, besides the
    /// loopback names: the public URL's host and `[perimeter] allowed_hosts`.
    pub extra_hosts: Vec<String>,
}

/// The security services of a running server.
pub struct Security {
    /// The JWT verifier, when `[jwt]` is configured.
    pub jwt: Option<JwtVerifier>,
    /// `[limits]` as configured.
    pub limits: LimitsFile,
    /// Where Sextant is reachable (loopback-only mode, accepted hosts).
    pub exposure: Exposure,
    /// Whether replies are also scrubbed of e-mail addresses.
    pub redact_emails: bool,
    /// `[perimeter] trusted_proxies`: whose forwarded headers are believed.
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// The audit log.
    pub audit: AuditLog,
    /// The per-identity rate limits.
    pub rate: RateLimits,
    /// This data dir's workspace id (assistant tokens are scoped to it).
    pub workspace: String,
    /// The console page's sign-in sessions (`auth::console`), in memory only.
    pub console: ConsoleSessions,
}

impl std::fmt::Debug for Security {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Security")
            .field("jwt", &self.jwt.is_some())
            .field("limits", &self.limits)
            .field("exposure", &self.exposure)
            .field("workspace", &self.workspace)
            .finish_non_exhaustive()
    }
}

/// The host of a URL, lowercase, without brackets or port.
pub fn url_host(url: &str) -> Option<String> {
    let uri = url.parse::<http::Uri>().ok()?;
    let host = uri.host()?.trim_matches(['[', ']']).to_ascii_lowercase();
    (!host.is_empty()).then_some(host)
}

/// Whether `host` (no port, no brackets) names the loopback interface.
pub fn is_loopback_name(host: &str) -> bool {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    host == "localhost"
        || host.ends_with(".localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

impl Security {
    /// Builds the services from the file: reads the JWT keys (paths relative to `data_dir`),
    /// opens the audit log (`data_dir/audit.jsonl`).
    pub fn build(
        file: &SecurityFile,
        data_dir: &Path,
        workspace: String,
        exposure: Exposure,
    ) -> Result<Self, String> {
        file.validate()?;
        let jwt = match &file.jwt {
            Some(j) => Some(JwtVerifier::new(j, data_dir)?),
            None => None,
        };
        let audit = AuditLog::open(
            &data_dir.join("audit.jsonl"),
            file.audit.max_bytes,
            file.audit.keep,
        )
        .map_err(|e| format!("cannot open the audit log in {}: {e}", data_dir.display()))?;
        Ok(Self {
            jwt,
            limits: file.limits.clone(),
            exposure,
            redact_emails: file.redaction.emails,
            trusted_proxies: file.perimeter.trusted_proxies.clone(),
            audit,
            rate: RateLimits::new(
                file.limits.rate_limit_per_minute,
                file.limits.local_rate_limit_per_minute,
            ),
            workspace,
            console: ConsoleSessions::new(),
        })
    }

    /// Settings for tests and embedders: defaults, loopback-only, no JWT, the audit log in
    /// `dir`.
    pub fn local_defaults(dir: &Path) -> Result<Self, String> {
        Self::build(
            &SecurityFile::default(),
            dir,
            "local".into(),
            Exposure {
                loopback_only: true,
                extra_hosts: Vec::new(),
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_names() {
        assert_eq!(
            url_host("https://Sextant.example.com:8443/x").as_deref(),
            Some("sextant.example.com")
        );
        assert_eq!(url_host("http://[::1]:9900").as_deref(), Some("::1"));
        assert_eq!(url_host("not a url"), None);
        for ok in [
            "localhost",
            "LOCALHOST.",
            "app.localhost",
            "127.0.0.1",
            "127.9.9.9",
            "::1",
        ] {
            assert!(is_loopback_name(ok), "{ok}");
        }
        for bad in ["localhost.evil.com", "10.0.0.1", "::2", "example.com", ""] {
            assert!(!is_loopback_name(bad), "{bad}");
        }
    }
}
