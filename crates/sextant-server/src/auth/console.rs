//! How the web console's page becomes the console owner without the token ever appearing in a
//! URL: `POST /api/v1/session/bootstrap` sets an `HttpOnly; SameSite=Strict` cookie carrying a
//! per-launch console session secret, and [`console_cookie_principal`] (called from
//! `auth::resolve`) accepts that cookie as the Person on same-origin requests.
//!
//! The bootstrap hands out the cookie in one of two ways:
//! - **Loopback trust** (body `{}`): the peer is on loopback, `Host` is a loopback name (so a
//!   DNS-rebound page on another name is refused), the request is same-origin (`Origin`, if
//!   sent, is this server's own origin; `Sec-Fetch-Site`, if sent, is `same-origin`), and, on
//!   Linux, the peer's socket belongs to the user Sextant runs as (read from `/proc/net/tcp*`):
//!   a process that can read the data-dir token file may have what the token gives, another
//!   local user may not.
//! - **Token sign-in** (body `{"token": "…"}`): the page was given the owner token by its
//!   person (pasted from `sextant token`); this is how a browser on another machine gets in
//!   when Sextant is served beyond loopback. The token travels in a POST body, never a URL.
//!
//! The cookie's value is derived from the owner token and the server's start time, so it
//! changes at every launch and is never the token itself; the page bootstraps again when a
//! request answers 401. The cookie is scoped to `/api`, and is ignored on any request a browser
//! marks cross-origin, so another site (even another port of localhost, which `SameSite` treats
//! as the same site) cannot ride on it.
//!
//! Not here: bearer tokens and the anonymous loopback caller (`auth`), the page (`ui`).

use std::net::SocketAddr;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use sextant_core::Principal;
use sha2::{Digest, Sha256};

use crate::AppState;
use crate::error::ApiError;
use crate::urls::base_url;
use crate::wire::ConsoleSession;

/// The cookie's name.
pub const COOKIE: &str = "sextant_console";

/// The bootstrap body.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct BootstrapBody {
    /// The owner token, when the person signs in by pasting it.
    #[serde(default)]
    token: Option<String>,
}

/// The per-launch console session secret: `sha256(label, token, start time)`, hex.
fn console_secret(app: &AppState) -> String {
    let mut h = Sha256::new();
    h.update(b"sextant console session v1\0");
    h.update(app.config.token.as_bytes());
    h.update(b"\0");
    h.update(app.started.to_rfc3339().as_bytes());
    hex::encode(h.finalize())
}

/// Compares two secrets in time independent of where they differ.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn header_str(headers: &HeaderMap, name: impl header::AsHeaderName) -> Option<&str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
}

/// Whether a browser would call this request same-origin: `Sec-Fetch-Site`, when sent, is
/// `same-origin`, and `Origin`, when sent, is this server's own origin (from `Host`, or the
/// advertised base URL). Non-browser clients send neither and pass.
fn same_origin(app: &AppState, headers: &HeaderMap) -> bool {
    if let Some(site) = header_str(headers, "sec-fetch-site")
        && !site.eq_ignore_ascii_case("same-origin")
    {
        return false;
    }
    let Some(origin) = header_str(headers, header::ORIGIN) else {
        return true;
    };
    let origin = origin.trim_end_matches('/');
    let host = header_str(headers, header::HOST).unwrap_or("");
    (!host.is_empty()
        && (origin == format!("http://{host}") || origin == format!("https://{host}")))
        || origin == base_url(app, headers)
}

/// `Host` names this machine's loopback interface (`localhost`, `127.x.y.z`, `[::1]`, any port).
fn loopback_host(headers: &HeaderMap) -> bool {
    let Some(host) = header_str(headers, header::HOST) else {
        return false;
    };
    let name = if let Some(rest) = host.strip_prefix('[') {
        match rest.split_once(']') {
            Some((ip, _)) => ip,
            None => return false,
        }
    } else {
        host.rsplit_once(':').map_or(host, |(n, _)| n)
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The console session's principal, if the request carries a valid console cookie and a
/// browser did not mark it cross-origin. Called by `auth::resolve` for requests without a
/// bearer token.
pub fn console_cookie_principal(app: &AppState, headers: &HeaderMap) -> Option<Principal> {
    let value = cookie(headers, COOKIE)?;
    if !same_origin(app, headers) {
        tracing::debug!("console cookie ignored on a cross-origin request");
        return None;
    }
    same_secret(value.as_bytes(), console_secret(app).as_bytes()).then(Principal::person)
}

/// The value of cookie `name` (the first one) in the request's `Cookie` headers.
fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|kv| kv.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim_matches('"'))
}

/// `GET /api/v1/session`: whether this browser's console cookie is good, so a page signed in
/// with the token stays signed in across reloads and tabs without asking again. 200 with the
/// principal; 401 otherwise, with code `session_ended` when the browser sent a cookie that is
/// no longer valid (Sextant restarted: every start makes a new console session), so the page
/// can say why it asks for the token again.
pub async fn session(State(app): State<AppState>, headers: HeaderMap) -> Response {
    let sent = cookie(&headers, COOKIE).is_some() && same_origin(&app, &headers);
    let mut resp = if console_cookie_principal(&app, &headers).is_some() {
        Json(ConsoleSession {
            principal: Principal::person().display(),
        })
        .into_response()
    } else if sent {
        (
            axum::http::StatusCode::UNAUTHORIZED,
            Json(serde_json::json!({ "error": {
                "code": "session_ended",
                "message": "This browser's sign-in ended because Sextant restarted \
                            (each start begins new console sessions). Sign in again with the token.",
            }})),
        )
            .into_response()
    } else {
        ApiError::Unauthorized("this browser is not signed in to the console".into())
            .into_response()
    };
    resp.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

/// `POST /api/v1/session/bootstrap`: sets the console session cookie (see the module docs).
pub async fn bootstrap(
    State(app): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    match check_bootstrap(&app, peer, &headers, &body) {
        Ok(()) => {
            let secure = base_url(&app, &headers).starts_with("https://");
            let cookie = format!(
                "{COOKIE}={}; Path=/api; HttpOnly; SameSite=Strict{}",
                console_secret(&app),
                if secure { "; Secure" } else { "" }
            );
            let mut resp = Json(ConsoleSession {
                principal: Principal::person().display(),
            })
            .into_response();
            if let Ok(v) = HeaderValue::from_str(&cookie) {
                resp.headers_mut().insert(header::SET_COOKIE, v);
            }
            resp.headers_mut()
                .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            resp
        }
        Err(e) => e.into_response(),
    }
}

fn check_bootstrap(
    app: &AppState,
    peer: SocketAddr,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<(), ApiError> {
    // The REST API's own checks (`extract`), with the origin checked between them: a page
    // that is not the console's learns nothing from its body's fate.
    crate::extract::require_json(headers)?;
    if !same_origin(app, headers) {
        return Err(ApiError::Forbidden(
            "the console session is only set up for the console's own page".into(),
        ));
    }
    let body: BootstrapBody = crate::extract::parse(body)?;
    if let Some(token) = body.token {
        return if same_secret(token.trim().as_bytes(), app.config.token.as_bytes()) {
            Ok(())
        } else {
            tracing::debug!(%peer, "console sign-in refused: wrong token");
            Err(ApiError::Unauthorized(
                "that is not this Sextant's token (print it with `sextant token`)".into(),
            ))
        };
    }
    let refused = |why: &str| {
        tracing::debug!(%peer, why, "console bootstrap refused");
        Err(ApiError::Forbidden(format!(
            "{why}; sign in with the token (`sextant token`)"
        )))
    };
    if !peer.ip().is_loopback() {
        return refused("the browser is not on this machine");
    }
    if !loopback_host(headers) {
        return refused("the page was not opened at a loopback address");
    }
    if !peer_is_same_user(peer, app.config.bind.port()) {
        return refused("the browser runs as another user than Sextant");
    }
    Ok(())
}

/// Whether the loopback connection from `peer` to our `port` belongs to the user this process
/// runs as: the kernel lists the client's socket, with its owner's uid, in `/proc/net/tcp`
/// (IPv4) or `/proc/net/tcp6`.
#[cfg(target_os = "linux")]
fn peer_is_same_user(peer: SocketAddr, port: u16) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(me) = std::fs::metadata("/proc/self").map(|m| m.uid()) else {
        return false;
    };
    let table = if peer.is_ipv4() {
        "/proc/net/tcp"
    } else {
        "/proc/net/tcp6"
    };
    std::fs::read_to_string(table)
        .ok()
        .and_then(|t| socket_uid(&t, peer, port))
        == Some(me)
}

/// Elsewhere there is no portable way to learn a loopback peer's user; loopback suffices.
#[cfg(not(target_os = "linux"))]
fn peer_is_same_user(_peer: SocketAddr, _port: u16) -> bool {
    true
}

/// The uid owning the socket whose local address is `local` and whose remote port is
/// `remote_port`, in a `/proc/net/tcp{,6}` table.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn socket_uid(table: &str, local: SocketAddr, remote_port: u16) -> Option<u32> {
    let want = proc_addr(local);
    table.lines().skip(1).find_map(|line| {
        let cols: Vec<&str> = line.split_whitespace().collect();
        let (loc, rem, uid) = (cols.get(1)?, cols.get(2)?, cols.get(7)?);
        let rem_port = u16::from_str_radix(rem.rsplit_once(':')?.1, 16).ok()?;
        (loc.eq_ignore_ascii_case(&want) && rem_port == remote_port)
            .then(|| uid.parse().ok())
            .flatten()
    })
}

/// An address as `/proc/net/tcp*` prints it: the IP as 32-bit words in host byte order, in
/// hex, then `:` and the port in hex.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
fn proc_addr(addr: SocketAddr) -> String {
    let ip: String = match addr.ip() {
        std::net::IpAddr::V4(v4) => format!("{:08X}", u32::from_ne_bytes(v4.octets())),
        std::net::IpAddr::V6(v6) => v6
            .octets()
            .chunks(4)
            .map(|c| format!("{:08X}", u32::from_ne_bytes([c[0], c[1], c[2], c[3]])))
            .collect(),
    };
    format!("{ip}:{:04X}", addr.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(*k, v.parse().unwrap());
        }
        h
    }

    #[test]
    fn cookies_are_found_by_name() {
        let h = headers(&[("cookie", "a=1; sextant_console=abc; b=2")]);
        assert_eq!(cookie(&h, COOKIE), Some("abc"));
        let h = headers(&[("cookie", "a=1"), ("cookie", "sextant_console=\"x\"")]);
        assert_eq!(cookie(&h, COOKIE), Some("x"));
        assert_eq!(
            cookie(&headers(&[("cookie", "sextant_consolex=1")]), COOKIE),
            None
        );
    }

    #[test]
    fn loopback_hosts_are_recognised() {
        for ok in [
            "127.0.0.1:9900",
            "localhost:1",
            "LOCALHOST",
            "[::1]:9900",
            "127.1.2.3",
        ] {
            assert!(loopback_host(&headers(&[("host", ok)])), "{ok}");
        }
        for bad in [
            "evil.example:9900",
            "10.0.0.1:9900",
            "[::2]:1",
            "localhost.evil.com",
        ] {
            assert!(!loopback_host(&headers(&[("host", bad)])), "{bad}");
        }
        assert!(!loopback_host(&HeaderMap::new()));
    }

    #[test]
    fn proc_net_tcp_rows_give_the_socket_owner() {
        // Two rows of a real /proc/net/tcp: the server's listening socket, and a client's
        // connection from 127.0.0.1:41234 to port 9900 (0x26AC) owned by uid 1000.
        let table = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n   0: 0100007F:26AC 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0\n   1: 0100007F:A0D2 0100007F:26AC 01 00000000:00000000 00:00000000 00000000  1000        0 2 1 0 20 4 30 10 -1\n";
        let peer: SocketAddr = "127.0.0.1:41170".parse().unwrap();
        assert_eq!(proc_addr(peer), "0100007F:A0D2");
        assert_eq!(socket_uid(table, peer, 9900), Some(1000));
        assert_eq!(socket_uid(table, peer, 9901), None);
        let v6: SocketAddr = "[::1]:41170".parse().unwrap();
        assert_eq!(proc_addr(v6), "00000000000000000000000001000000:A0D2");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_connection_of_our_own_user_is_recognised() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let client = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        let peer = client.local_addr().unwrap();
        assert!(peer_is_same_user(peer, port));
        assert!(!peer_is_same_user(peer, port.wrapping_add(1)));
    }
}
