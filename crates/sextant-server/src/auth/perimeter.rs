//! The perimeter: checks every request passes before authentication, and the security headers
//! every response carries.
//!
//! [`guard`], in order:
//!
//! 1. **Header cap**: request headers larger than `[limits] max_header_bytes` → 431.
//! 2. **Anti-loop**: an inbound A2A call whose `A2A-Hop` count is at `[limits] max_hops`
//!    (default 3) or more → 403; a value that is not a whole number → 400. Sextant sends the
//!    inbound count + 1 on the calls it makes for a task (1 for a call it starts), so a
//!    Sextant can call a Sextant, and a loop through Sextants ends after a few relays.
//! 3. Requests **without a token** (no `Authorization` header; browsers cannot add one
//!    cross-site without a CORS preflight, which Sextant never grants) are what a hostile web
//!    page can send, so they must also look like this machine's own, same-origin traffic:
//!    - `Host` is a loopback name, the public URL's host, or an `allowed_hosts` entry — else 403
//!      (DNS rebinding: a page on `evil.example` re-pointed at 127.0.0.1);
//!    - no `Origin`, or exactly this server's own origin (the console's page) — else 403;
//!      `Origin: null` is refused;
//!    - `Sec-Fetch-Site`, when sent, is `same-origin` or `none` — `cross-site` and `same-site`
//!      (another port of localhost) are 403;
//!    - a POST, PUT or PATCH says `Content-Type: application/json` (or `+json`) — else 403:
//!      only those three "simple" content types can be sent cross-site without a preflight.
//!      On the gRPC binding's paths (`/lf.a2a.v1.A2AService/…`) the type must be
//!      `application/grpc` (or `application/grpc+…`) instead, also one no page can send.
//!      **A2A endpoints are the exception** (JSON-RPC, HTTP+JSON): there the endpoint itself
//!      answers a non-JSON content type in its binding's terms, as the A2A spec and its TCK
//!      require: JSON-RPC -32005 (HTTP 200) for a non-JSON or missing one, HTTP+JSON 415 for
//!      a non-JSON one or a body without one (an empty POST such as `:subscribe` may omit
//!      it). Either way the request is refused before anything runs; and a browser's
//!      cross-site request has already been refused by the `Origin` / `Sec-Fetch-Site` rules
//!      above.
//!
//! Before rule 3, for every request: **one host** — two `Host` headers, a `Host` with
//! whitespace or control characters in it (`127.0.0.1\t:80`; whitespace at its ends is
//! HTTP's own, stripped before Sextant reads it), or an absolute-form target
//! (`POST http://evil.example/…`) whose authority differs from `Host`, are 400 (one check
//! could read one name and the router another).
//!
//! Requests with a token skip rule 3: the token is the proof of intent. The request body cap is
//! a separate layer (413).
//!
//! Last, `X-Forwarded-Host`, `X-Forwarded-Proto` and `Forwarded` are removed from every
//! request whose peer is not in `[perimeter] trusted_proxies`: links are built from the
//! public URL, a trusted proxy's forwarded host, or the bound address (`urls`), never from a
//! caller's own headers.
//!
//! [`headers`] sets, when the response has not set them itself: `X-Content-Type-Options:
//! nosniff`, `Cross-Origin-Resource-Policy: same-origin`, a Content-Security-Policy (the UI's
//! strict policy on HTML, `default-src 'none'; frame-ancestors 'none'` on everything else),
//! `X-Frame-Options: DENY` on HTML, `Referrer-Policy: no-referrer` on HTML and redirects, and
//! `Cache-Control: no-store` on `/api/` responses and the default Agent's JSON-RPC answers at
//! `/` and `/a2a`. No CORS header is ever sent.

use std::net::SocketAddr;

use axum::Json;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::AppState;
use crate::content_type::{is_grpc_content, is_json};
use crate::error::ApiError;
use crate::security::is_loopback_name;

/// The hop header (a count of agent relays).
pub const HOP_HEADER: &str = "a2a-hop";

/// The inbound hop count: 0 without the header; a header that is not one whole number
/// (ASCII digits) is refused.
pub fn inbound_hop(headers: &HeaderMap) -> Result<u32, String> {
    let mut values = headers.get_all(HOP_HEADER).iter();
    let Some(v) = values.next() else {
        return Ok(0);
    };
    if values.next().is_some() {
        return Err("several A2A-Hop headers: send one".into());
    }
    let v = v.as_bytes();
    if v.is_empty() || v.len() > 6 || !v.iter().all(u8::is_ascii_digit) {
        return Err(format!(
            "A2A-Hop must be a whole number, not {:?}",
            String::from_utf8_lossy(v)
        ));
    }
    String::from_utf8_lossy(v)
        .parse()
        .map_err(|_| "A2A-Hop is out of range".to_string())
}

/// Whether `path` is an A2A endpoint, public or assistant, of any binding: JSON-RPC
/// (`…/agents/{id}/a2a`, and the default Agent's at `/` and `/a2a`: see [`is_root_rpc`]),
/// HTTP+JSON (`…/agents/{id}/message:send`, `…/tasks…`, `…/extendedAgentCard`) or gRPC
/// (`/lf.a2a.v1.A2AService/…`).
pub fn is_a2a_endpoint(path: &str) -> bool {
    if is_grpc(path) || is_root_rpc(path) {
        return true;
    }
    let p = path.trim_end_matches('/');
    let Some(rest) = p
        .strip_prefix("/api/v1/agents/")
        .or_else(|| p.strip_prefix("/api/v1/assistant-a2a/agents/"))
    else {
        return false;
    };
    // The Agent id is one segment; what follows names the endpoint.
    let Some((_agent, tail)) = rest.split_once('/') else {
        return false;
    };
    matches!(
        tail,
        "a2a" | "message:send" | "message:stream" | "tasks" | "extendedAgentCard"
    ) || tail.starts_with("tasks/")
}

/// Whether `path` is the default Agent's JSON-RPC endpoint at the server's own URL: `/`,
/// `/a2a` or `/a2a/` (`crate::a2a::jsonrpc::default_rpc`; a `GET /` there is the console
/// page, which the A2A rules leave as every page is).
pub fn is_root_rpc(path: &str) -> bool {
    matches!(path, "/" | "/a2a" | "/a2a/")
}

/// Whether `path` is the gRPC binding's (`crate::a2a::grpc`).
pub fn is_grpc(path: &str) -> bool {
    path.starts_with(crate::a2a::surface::GRPC_PATH_PREFIX)
}

/// The host part of a `Host` value (`name`, `name:port`, `[v6]:port`), lowercase, without
/// brackets, port or trailing dot. A value with whitespace or control characters anywhere in
/// it (`127.0.0.1\t:80`) names no host.
pub fn host_name(host: &str) -> Option<String> {
    if host.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return None;
    }
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split_once(']')?.0
    } else if host.matches(':').count() > 1 {
        // A bare IPv6 literal (not valid in Host, but be exact about it).
        host
    } else {
        host.rsplit_once(':').map_or(host, |(n, _)| n)
    };
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    (!name.is_empty()).then_some(name)
}

fn header_str(headers: &HeaderMap, name: impl header::AsHeaderName) -> Option<&str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
}

/// Why a request names its host ambiguously, if it does: several `Host` headers, or an
/// absolute-form target (`POST http://evil.example/…`) whose authority is not the `Host`.
/// Either lets one check read one name while something else reads another.
fn ambiguous_host(req: &Request) -> Option<String> {
    let hosts: Vec<_> = req.headers().get_all(header::HOST).iter().collect();
    if hosts.len() > 1 {
        return Some(format!(
            "{} Host headers refused: a request names one host",
            hosts.len()
        ));
    }
    // A Host with whitespace or control characters inside it (`127.0.0.1 :80`) is not a host
    // name: trimmed it passes the loopback check, untrimmed something else may read it as
    // another name. Refused as it is, never cleaned up.
    if let Some(h) = hosts.first()
        && h.as_bytes()
            .iter()
            .any(|b| b.is_ascii_whitespace() || b.is_ascii_control() || *b == 0x7f)
    {
        return Some(format!(
            "Host {:?} refused: it has whitespace or control characters",
            String::from_utf8_lossy(h.as_bytes())
        ));
    }
    if let Some(authority) = req.uri().authority() {
        let host = hosts.first().and_then(|h| h.to_str().ok());
        if host.is_some_and(|h| !h.eq_ignore_ascii_case(authority.as_str())) {
            return Some(format!(
                "the request target names {:?} but Host says {:?}: refused",
                authority.as_str(),
                host.unwrap_or_default()
            ));
        }
    }
    None
}

/// Why a tokenless request is refused, if it is.
fn tokenless_refusal(app: &AppState, req: &Request) -> Option<String> {
    let headers = req.headers();
    let host_value = header_str(headers, header::HOST)
        .map(String::from)
        .or_else(|| req.uri().authority().map(|a| a.to_string()));
    let Some(host_value) = host_value else {
        return Some("a request without a token must send Host".into());
    };
    let extra = &app.security.exposure.extra_hosts;
    // Every name the request gives for its host must pass: the Host header and an
    // absolute-form target's authority alike.
    let named = [
        Some(host_value.clone()),
        req.uri().authority().map(|a| a.to_string()),
    ];
    for value in named.into_iter().flatten() {
        let Some(host) = host_name(&value) else {
            return Some("the Host header is not valid".into());
        };
        if !is_loopback_name(&host) && !extra.contains(&host) {
            return Some(format!(
                "Host {value:?} is neither a loopback name nor this Sextant's public host \
                 (DNS-rebinding guard); send a token, or set --public-url / [perimeter] allowed_hosts"
            ));
        }
    }
    if let Some(origin) = header_str(headers, header::ORIGIN) {
        let origin = origin.trim_end_matches('/');
        let own = origin == format!("http://{host_value}")
            || origin == format!("https://{host_value}")
            || app
                .config
                .public_url
                .as_deref()
                .is_some_and(|u| u.trim_end_matches('/') == origin);
        if !own {
            return Some(format!(
                "cross-origin request from {origin:?} refused: Sextant does not serve other \
                 web pages (no CORS)"
            ));
        }
    }
    if let Some(site) = header_str(headers, "sec-fetch-site")
        && !(site.eq_ignore_ascii_case("same-origin") || site.eq_ignore_ascii_case("none"))
    {
        return Some(format!(
            "Sec-Fetch-Site: {site} refused: only this server's own pages may call it without \
             a token"
        ));
    }
    let writes = matches!(*req.method(), Method::POST | Method::PUT | Method::PATCH);
    // gRPC's own type, which no page can send cross-site without a preflight either.
    if is_grpc(req.uri().path()) {
        return (!is_grpc_content(header_str(headers, header::CONTENT_TYPE))).then(|| {
            "a gRPC call without a token must send Content-Type: application/grpc".into()
        });
    }
    if writes
        && !is_a2a_endpoint(req.uri().path())
        && !is_json(header_str(headers, header::CONTENT_TYPE))
    {
        return Some(
            "a POST, PUT or PATCH without a token must send Content-Type: application/json".into(),
        );
    }
    None
}

fn refuse(app: &AppState, req: &Request, status: StatusCode, why: String) -> Response {
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0);
    tracing::debug!(?peer, path = req.uri().path(), %why, "refused at the perimeter");
    crate::audited::request_refused(app, None, why.clone(), req.uri().path(), peer);
    if status == StatusCode::FORBIDDEN {
        return ApiError::Forbidden(why).into_response();
    }
    if status == StatusCode::BAD_REQUEST {
        return ApiError::BadRequest(why).into_response();
    }
    (
        status,
        Json(json!({ "error": { "code": "headers_too_large", "message": why } })),
    )
        .into_response()
}

/// The perimeter checks (see the module docs).
pub async fn guard(State(app): State<AppState>, mut req: Request, next: Next) -> Response {
    let size: usize = req
        .headers()
        .iter()
        .map(|(k, v)| k.as_str().len() + v.len() + 4)
        .sum();
    let max = app.security.limits.max_header_bytes;
    if size > max {
        let why = format!("request headers are {size} bytes; at most {max} are accepted");
        let resp = refuse(&app, &req, StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE, why);
        return crate::auth::drain::refused(req, resp).await;
    }
    if is_a2a_endpoint(req.uri().path()) {
        let max = app.security.limits.max_hops;
        match inbound_hop(req.headers()) {
            Err(why) => {
                let resp = refuse(&app, &req, StatusCode::BAD_REQUEST, why);
                return crate::auth::drain::refused(req, resp).await;
            }
            Ok(n) if n >= max => {
                let why = format!(
                    "A2A-Hop: {n} refused: this call has been relayed {n} times, and this \
                     Sextant accepts fewer than {max} (anti-loop); call it with fewer hops"
                );
                let resp = refuse(&app, &req, StatusCode::FORBIDDEN, why);
                return crate::auth::drain::refused(req, resp).await;
            }
            Ok(_) => {}
        }
    }
    if let Some(why) = ambiguous_host(&req) {
        let resp = refuse(&app, &req, StatusCode::BAD_REQUEST, why);
        return crate::auth::drain::refused(req, resp).await;
    }
    if !req.headers().contains_key(header::AUTHORIZATION)
        && let Some(why) = tokenless_refusal(&app, &req)
    {
        let resp = refuse(&app, &req, StatusCode::FORBIDDEN, why);
        return crate::auth::drain::refused(req, resp).await;
    }
    // Forwarded headers are believed only from the proxies the configuration names; from
    // anyone else they are dropped here, so nothing after the perimeter can use them.
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip());
    if !peer.is_some_and(|ip| app.security.trusted_proxies.contains(&ip)) {
        let h = req.headers_mut();
        for name in ["x-forwarded-host", "x-forwarded-proto", "forwarded"] {
            h.remove(name);
        }
    }
    next.run(req).await
}

/// The security headers (see the module docs).
pub async fn headers(req: Request, next: Next) -> Response {
    // The default Agent's JSON-RPC at `/` answers as the agent route does.
    let path = req.uri().path();
    let api = path.starts_with("/api/") || (req.method() == Method::POST && is_root_rpc(path));
    let mut resp = next.run(req).await;
    if resp.status() == StatusCode::PAYLOAD_TOO_LARGE {
        // Refused on its Content-Length (or cut off mid-body): the rest of the body is still
        // on the wire, so this connection cannot carry another request.
        crate::auth::drain::close(&mut resp);
    }
    let html = resp
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"));
    let redirect = resp.status().is_redirection();
    let h = resp.headers_mut();
    let mut set = |k: header::HeaderName, v: &'static str| {
        if !h.contains_key(&k) {
            h.insert(k, HeaderValue::from_static(v));
        }
    };
    set(header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(
        header::HeaderName::from_static("cross-origin-resource-policy"),
        "same-origin",
    );
    // Two headers only a page (or a redirect) needs are left off everything else:
    // `X-Frame-Options`, which a browser ignores wherever the policy has `frame-ancestors`,
    // and `Referrer-Policy`, which governs the requests a page makes (under `default-src
    // 'none'` a JSON or event-stream body shown in a tab can make none) and those a redirect
    // leads to. Each costs memory as well as bytes: hyper keeps an HTTP/1.1 connection's
    // response header map for the next request, sized for the most headers it has carried
    // (6 entries, then 12), and a JSON answer's seventh header (axum adds `Content-Length`)
    // cost every kept-open connection and idle subscription 624 bytes.
    if html {
        set(header::CONTENT_SECURITY_POLICY, crate::ui::CSP);
        set(header::X_FRAME_OPTIONS, "DENY");
    } else {
        set(
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; frame-ancestors 'none'",
        );
    }
    if html || redirect {
        set(header::REFERRER_POLICY, "no-referrer");
    }
    if api {
        set(header::CACHE_CONTROL, "no-store");
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_parse() {
        assert_eq!(host_name("127.0.0.1:9900").as_deref(), Some("127.0.0.1"));
        assert_eq!(host_name("[::1]:9900").as_deref(), Some("::1"));
        assert_eq!(host_name("LocalHost.").as_deref(), Some("localhost"));
        assert_eq!(host_name("example.com").as_deref(), Some("example.com"));
        assert_eq!(host_name("[::1"), None);
        assert_eq!(host_name(""), None);
        for bad in [
            "127.0.0.1\t",
            " localhost",
            "localhost\r",
            "local\u{0}host",
            "127.0.0.1 :80",
        ] {
            assert_eq!(host_name(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn a2a_endpoints_and_json_types() {
        assert!(is_a2a_endpoint("/api/v1/agents/echo/a2a"));
        assert!(is_a2a_endpoint("/api/v1/agents/echo/a2a/"));
        assert!(is_a2a_endpoint("/api/v1/assistant-a2a/agents/echo/a2a"));
        assert!(is_a2a_endpoint("/api/v1/agents/echo/message:send"));
        assert!(is_a2a_endpoint("/api/v1/agents/echo/message:stream"));
        assert!(is_a2a_endpoint("/api/v1/agents/echo/tasks"));
        assert!(is_a2a_endpoint("/api/v1/agents/echo/tasks/t1:cancel"));
        assert!(is_a2a_endpoint(
            "/api/v1/assistant-a2a/agents/echo/tasks/t1/pushNotificationConfigs"
        ));
        assert!(is_a2a_endpoint("/api/v1/agents/echo/extendedAgentCard"));
        assert!(is_a2a_endpoint("/lf.a2a.v1.A2AService/SendMessage"));
        assert!(is_a2a_endpoint("/"));
        assert!(is_a2a_endpoint("/a2a"));
        assert!(is_a2a_endpoint("/a2a/"));
        assert!(!is_a2a_endpoint("/a2a/x"));
        assert!(!is_a2a_endpoint("/tasks"));
        assert!(!is_a2a_endpoint("/inbox"));
        assert!(!is_a2a_endpoint("/lf.a2a.v1.A2AServiceX/SendMessage"));
        assert!(!is_a2a_endpoint("/api/v1/agents/echo/access"));
        assert!(!is_a2a_endpoint("/api/v1/agents/echo/paused"));
        assert!(!is_a2a_endpoint("/api/v1/agents/echo/stop-all"));
        assert!(!is_a2a_endpoint("/api/v1/agents/echo/x/a2a"));
        assert!(!is_a2a_endpoint("/api/v1/tasks/t1/cancel"));
        assert!(!is_a2a_endpoint("/api/v1/me/schedules"));
    }
}
