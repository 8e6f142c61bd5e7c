//! Advertised URLs: the configured public URL, else what a trusted proxy forwarded, else the
//! bound address. A request's own `Host` never goes into a link (a token holder could point
//! links and cards anywhere with it), and `X-Forwarded-*` reach here only from the proxies
//! `[perimeter] trusted_proxies` names: the perimeter drops them from everyone else.

use axum::http::HeaderMap;

use crate::AppState;

/// The base URL (`scheme://host[:port]`, no trailing slash) for links in a response.
pub fn base_url(app: &AppState, headers: &HeaderMap) -> String {
    if let Some(url) = &app.config.public_url {
        return url.trim_end_matches('/').to_string();
    }
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.split(',').next().unwrap_or("").trim().to_string())
            .filter(|v| !v.is_empty() && is_hostish(v))
    };
    let proto = get("x-forwarded-proto")
        .filter(|p| p == "http" || p == "https")
        .unwrap_or_else(|| "http".into());
    let host = get("x-forwarded-host").unwrap_or_else(|| app.config.bind.to_string());
    format!("{proto}://{host}")
}

/// Rejects header values that could smuggle a path or markup into an advertised URL.
fn is_hostish(v: &str) -> bool {
    v.bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"-._:[]".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_values_are_checked() {
        assert!(is_hostish("127.0.0.1:9900"));
        assert!(is_hostish("[::1]:9900"));
        assert!(!is_hostish("evil.com/path"));
        assert!(!is_hostish("a\"b"));
    }
}
