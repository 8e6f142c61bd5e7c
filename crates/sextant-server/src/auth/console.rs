//! How the web console's page becomes the console owner without the token ever appearing in a
//! URL: `POST /api/v1/session/bootstrap` begins a console session and sets an `HttpOnly;
//! SameSite=Strict` cookie carrying its secret, and [`console_cookie_principal`] (called from
//! `auth::resolve`) accepts that cookie as the Person on same-origin requests.
//! `POST /api/v1/session/logout` ends the session of the cookie it carries.
//!
//! The bootstrap begins a session in one of two ways:
//! - **Loopback trust** (body `{}`), only for a request that carries no credential at all (no
//!   `Authorization` header; a console cookie that has ended is no credential) and only where
//!   the anonymous loopback caller exists ([`crate::auth::anonymous_local`], the one decision
//!   `auth::resolve` also makes: bound to loopback, no public URL beyond loopback, `[perimeter]
//!   anonymous_local` on), with no `[perimeter] trusted_proxies` and no forwarding header on
//!   the request: a reverse proxy or tunnel on this machine makes every remote caller's
//!   connection come from loopback, so behind one, loopback proves nothing. Further, `Host` is
//!   a loopback name (so a DNS-rebound page on another name is refused), the request is
//!   same-origin (`Origin`, if sent, is this server's own origin; `Sec-Fetch-Site`, if sent,
//!   is `same-origin`), and, on Linux, the peer's socket belongs to the user Sextant runs as
//!   (read from `/proc/net/tcp*`): a process that can read the data-dir token file may have
//!   what the token gives, another local user may not.
//! - **Token sign-in** (body `{"token": "…"}`, or `Authorization: Bearer <owner token>`): the
//!   page was given the owner token by its person (pasted from `sextant token`); this is how a
//!   browser on another machine gets in when Sextant is served beyond loopback. The token
//!   travels in a POST body, never a URL, and is compared in constant time.
//!
//! Any other bearer token (a peer's `sxp_…`, a JWT, an assistant's) is refused with 401: the
//! console session is the owner's, and a request that proves it is someone else does not
//! become the owner because it also comes from loopback.
//!
//! Each sign-in begins its own session ([`ConsoleSessions`]): a fresh 256-bit random secret
//! (the cookie's value) of which only the SHA-256 is kept, in memory. A session ends
//! - after [`IDLE_SECS`] (12 h) without a request (each request with the cookie restarts
//!   that count), or [`ABSOLUTE_SECS`] (7 days) after it began, whichever comes first;
//! - when its page signs out (`POST /api/v1/session/logout`, which also clears the cookie);
//! - when more than [`MAX_SESSIONS`] are live: the one unused the longest ends;
//! - when Sextant stops: sessions are not stored, so every start begins afresh.
//!
//! An ended cookie answers 401 (`GET /api/v1/session` says `session_ended`), and the page signs
//! in again. Times come from the runtime's clock (so tests can move them). The cookie is scoped
//! to `/api`, has no `Max-Age` (the browser drops it when it closes), and is ignored on any
//! request a browser marks cross-origin, so another site (even another port of localhost,
//! which `SameSite` treats as the same site) cannot ride on it.
//!
//! Not here: bearer tokens and the anonymous loopback caller (`auth`), the page (`ui`).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Mutex, MutexGuard};

use axum::Json;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use sextant_core::Principal;
use sha2::{Digest, Sha256};

use crate::AppState;
use crate::error::ApiError;
use crate::urls::base_url;
use crate::wire::ConsoleSession;

/// The cookie's name.
pub const COOKIE: &str = "sextant_console";

/// A console session unused this long ends (12 h): long enough for a working day with the
/// page open, short enough that a forgotten browser does not stay the owner for days.
pub const IDLE_SECS: i64 = 12 * 60 * 60;

/// A console session ends this long after it began (7 days), however much it is used: a
/// stolen cookie does not last for ever, and the page simply signs in again.
pub const ABSOLUTE_SECS: i64 = 7 * 24 * 60 * 60;

/// At most this many console sessions are live at once; a sign-in beyond it ends the one
/// unused the longest. Signing in needs the token or loopback trust, so this only bounds
/// memory: nobody else can fill the table.
pub const MAX_SESSIONS: usize = 256;

/// The console's live sessions, by the SHA-256 of their secret. In memory only: they end with
/// the process.
#[derive(Debug, Default)]
pub struct ConsoleSessions {
    live: Mutex<HashMap<[u8; 32], Lifetime>>,
}

/// When a session began and when it was last used.
#[derive(Debug, Clone, Copy)]
struct Lifetime {
    began: DateTime<Utc>,
    used: DateTime<Utc>,
}

impl Lifetime {
    fn ended(&self, now: DateTime<Utc>) -> bool {
        (now - self.used).num_seconds() >= IDLE_SECS
            || (now - self.began).num_seconds() >= ABSOLUTE_SECS
    }
}

/// What a session is kept under: the secret's SHA-256. A lookup by it need not be constant
/// time: learning how a guess's hash compares to a stored one tells nothing about a secret.
fn digest(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

impl ConsoleSessions {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<[u8; 32], Lifetime>> {
        // A panic elsewhere while holding the lock leaves the map as it was: still usable.
        self.live.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Begins a session at `now`; its secret (the cookie's value: 64 hex digits of 256 random
    /// bits). Ended sessions are dropped first; a full table ends the one unused the longest.
    pub fn begin(&self, now: DateTime<Utc>) -> Result<String, String> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|e| format!("no secure random source: {e}"))?;
        let secret = hex::encode(bytes);
        let mut live = self.lock();
        live.retain(|_, l| !l.ended(now));
        while live.len() >= MAX_SESSIONS {
            let Some(oldest) = live.iter().min_by_key(|(_, l)| l.used).map(|(k, _)| *k) else {
                break;
            };
            live.remove(&oldest);
        }
        live.insert(
            digest(&secret),
            Lifetime {
                began: now,
                used: now,
            },
        );
        Ok(secret)
    }

    /// Whether `secret` is a live session at `now`; if it is, its idle count starts again
    /// (a clock that moved back does not move it back). An ended one is dropped.
    pub fn touch(&self, secret: &str, now: DateTime<Utc>) -> bool {
        let key = digest(secret);
        let mut live = self.lock();
        match live.get_mut(&key) {
            Some(l) if !l.ended(now) => {
                l.used = l.used.max(now);
                true
            }
            Some(_) => {
                live.remove(&key);
                false
            }
            None => false,
        }
    }

    /// Ends the session of `secret`; whether there was one.
    pub fn end(&self, secret: &str) -> bool {
        self.lock().remove(&digest(secret)).is_some()
    }

    /// How many sessions are in the table (ended ones not yet dropped included).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The bootstrap body.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct BootstrapBody {
    /// The owner token, when the person signs in by pasting it.
    #[serde(default)]
    token: Option<String>,
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

/// Headers a reverse proxy or tunnel adds to say whom it forwards for. (`Forwarded`,
/// `X-Forwarded-Host` and `-Proto` from an untrusted peer are dropped by the perimeter before
/// this runs, and a trusted one turns loopback trust off anyway; these are left in place, so
/// one shows here when a proxy nobody configured sits in front.)
const FORWARDING_HEADERS: [&str; 3] = ["x-forwarded-for", "x-real-ip", "via"];

/// What the request's `Authorization` header proves, for the bootstrap.
#[derive(Debug, PartialEq, Eq)]
enum HeaderCredential {
    /// No `Authorization` header.
    None,
    /// Exactly `Bearer <the owner token>`.
    Owner,
    /// Anything else: another principal's token, a malformed or repeated header.
    Other,
}

fn header_credential(app: &AppState, headers: &HeaderMap) -> HeaderCredential {
    header_credential_for(&app.config.token, headers)
}

fn header_credential_for(owner_token: &str, headers: &HeaderMap) -> HeaderCredential {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return HeaderCredential::None;
    };
    if values.next().is_some() {
        return HeaderCredential::Other;
    }
    let mut parts = value.to_str().unwrap_or("").split_whitespace();
    match (parts.next(), parts.next(), parts.next()) {
        (Some(scheme), Some(token), None)
            if scheme.eq_ignore_ascii_case("bearer")
                && same_secret(token.as_bytes(), owner_token.as_bytes()) =>
        {
            HeaderCredential::Owner
        }
        _ => HeaderCredential::Other,
    }
}

/// The console session's principal, if the request carries the cookie of a live console
/// session and a browser did not mark it cross-origin. Called by `auth::resolve` for requests
/// without a bearer token; each call restarts the session's idle count.
pub fn console_cookie_principal(app: &AppState, headers: &HeaderMap) -> Option<Principal> {
    let value = cookie(headers, COOKIE)?;
    if !same_origin(app, headers) {
        tracing::debug!("console cookie ignored on a cross-origin request");
        return None;
    }
    app.security
        .console
        .touch(value, app.runtime.clock().now())
        .then(Principal::person)
}

/// Whether the request carries the owner's credential: exactly the owner token, or (with no
/// `Authorization` header) a live console session's cookie. What a connection in the owner's
/// reserve must show on each request (`connections`).
pub fn carries_owner_credential(app: &AppState, headers: &HeaderMap) -> bool {
    match header_credential(app, headers) {
        HeaderCredential::Owner => true,
        HeaderCredential::None => console_cookie_principal(app, headers).is_some(),
        HeaderCredential::Other => false,
    }
}

/// Whether the request carries a console cookie on a request no browser marked cross-origin
/// (live or not): what `auth` refuses with 401 when it is not live.
pub fn sends_cookie(app: &AppState, headers: &HeaderMap) -> bool {
    cookie(headers, COOKIE).is_some() && same_origin(app, headers)
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

/// The `Set-Cookie` value carrying `secret`, or clearing the cookie when `secret` is `None`.
fn set_cookie(app: &AppState, headers: &HeaderMap, secret: Option<&str>) -> Option<HeaderValue> {
    let secure = if base_url(app, headers).starts_with("https://") {
        "; Secure"
    } else {
        ""
    };
    let (value, max_age) = match secret {
        Some(s) => (s, ""),
        None => ("", "; Max-Age=0"),
    };
    HeaderValue::from_str(&format!(
        "{COOKIE}={value}; Path=/api; HttpOnly; SameSite=Strict{secure}{max_age}"
    ))
    .ok()
}

fn no_store(mut resp: Response) -> Response {
    resp.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp
}

/// `GET /api/v1/session`: whether this browser's console cookie is good, so a page signed in
/// with the token stays signed in across reloads and tabs without asking again. 200 with the
/// principal; 401 otherwise, with code `session_ended` when the browser sent a cookie that is
/// no longer valid (it expired, was signed out, or Sextant restarted), so the page can say why
/// it asks for the token again.
pub async fn session(State(app): State<AppState>, headers: HeaderMap) -> Response {
    let sent = sends_cookie(&app, &headers);
    no_store(if console_cookie_principal(&app, &headers).is_some() {
        Json(ConsoleSession {
            principal: Principal::person().display(),
        })
        .into_response()
    } else if sent {
        (
            StatusCode::UNAUTHORIZED,
            Json(serde_json::json!({ "error": {
                "code": "session_ended",
                "message": "This browser's sign-in has ended: it was signed out, it went unused \
                            too long, or Sextant restarted (each start begins new console \
                            sessions). Sign in again with the token.",
            }})),
        )
            .into_response()
    } else {
        ApiError::Unauthorized("this browser is not signed in to the console".into())
            .into_response()
    })
}

/// `POST /api/v1/session/bootstrap`: begins a console session and sets its cookie (see the
/// module docs).
pub async fn bootstrap(
    State(app): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if let Err(e) = check_bootstrap(&app, peer, &headers, &body) {
        return no_store(e.into_response());
    }
    let sessions = &app.security.console;
    let secret = match sessions.begin(app.runtime.clock().now()) {
        Ok(s) => s,
        Err(why) => return no_store(ApiError::Internal(why).into_response()),
    };
    // A page that signs in again while its old cookie still works replaces it: the old
    // session ends rather than lingering until it expires.
    if let Some(old) = cookie(&headers, COOKIE) {
        sessions.end(old);
    }
    let Some(set) = set_cookie(&app, &headers, Some(&secret)) else {
        // Hex and fixed attributes always make a valid header; refuse rather than half-work.
        sessions.end(&secret);
        return no_store(
            ApiError::Internal("cannot build the console cookie".into()).into_response(),
        );
    };
    let mut resp = Json(ConsoleSession {
        principal: Principal::person().display(),
    })
    .into_response();
    resp.headers_mut().insert(header::SET_COOKIE, set);
    no_store(resp)
}

/// `POST /api/v1/session/logout`: ends the session of the cookie the request carries, and
/// clears the cookie. 204 whether or not that session was still live, so a page whose
/// session already ended can still sign out cleanly. Only the console's own page may: the
/// same-origin and JSON rules of the bootstrap apply (a page elsewhere must not sign the
/// person out either).
pub async fn logout(State(app): State<AppState>, headers: HeaderMap) -> Response {
    if let Err(e) = crate::extract::require_json(&headers) {
        return no_store(e.into_response());
    }
    if !same_origin(&app, &headers) {
        return no_store(
            ApiError::Forbidden("only the console's own page signs out of the console".into())
                .into_response(),
        );
    }
    let ended = cookie(&headers, COOKIE).is_some_and(|v| app.security.console.end(v));
    tracing::debug!(ended, "console sign-out");
    let mut resp = StatusCode::NO_CONTENT.into_response();
    if let Some(clear) = set_cookie(&app, &headers, None) {
        resp.headers_mut().insert(header::SET_COOKIE, clear);
    }
    no_store(resp)
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
    // A credential in the header decides first: the owner token is proof enough; any other
    // says the caller is someone else, who must not become the owner by also being local.
    let by_header = match header_credential(app, headers) {
        HeaderCredential::None => false,
        HeaderCredential::Owner => true,
        HeaderCredential::Other => {
            tracing::debug!(%peer, "console sign-in refused: another credential");
            return Err(ApiError::Unauthorized(
                "this request carries a credential that is not the owner token; a console \
                 session is the owner's: sign in with the owner token (`sextant token`)"
                    .into(),
            ));
        }
    };
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
    if by_header {
        return Ok(());
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
    // The same decision that makes a tokenless loopback request the anonymous caller: where
    // there is none (a public URL beyond loopback, `anonymous_local = false`), loopback trust
    // makes nobody the owner either.
    if !super::local::anonymous_local(app, Some(peer)) {
        return refused(
            "Sextant is served beyond loopback (a public URL) or without anonymous local \
             access (`[perimeter] anonymous_local = false`), so being on this machine is not \
             enough",
        );
    }
    if !app.security.trusted_proxies.is_empty() {
        return refused(
            "Sextant is configured behind a reverse proxy (`[perimeter] trusted_proxies`), \
             whose callers all arrive from loopback",
        );
    }
    if let Some(h) = FORWARDING_HEADERS
        .iter()
        .find(|h| headers.contains_key(**h))
    {
        return refused(&format!(
            "the request came through a proxy (it carries {h}), so its loopback address says \
             nothing about the browser"
        ));
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

    fn t(secs: i64) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + secs, 0).unwrap()
    }

    #[test]
    fn each_sign_in_is_its_own_session_and_ends_alone() {
        let s = ConsoleSessions::new();
        let a = s.begin(t(0)).unwrap();
        let b = s.begin(t(0)).unwrap();
        assert_ne!(a, b);
        assert_eq!(a.len(), 64);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert!(s.touch(&a, t(1)) && s.touch(&b, t(1)));
        assert!(s.end(&a));
        assert!(!s.touch(&a, t(2)), "an ended session stays ended");
        assert!(!s.end(&a));
        assert!(s.touch(&b, t(2)), "the other session lives on");
        assert!(!s.touch("", t(2)) && !s.touch(&"0".repeat(64), t(2)));
        // Only the hash is kept: the table's keys are not the secret.
        let live = s.lock();
        assert!(live.keys().all(|k| hex::encode(k) != b));
    }

    #[test]
    fn sessions_end_when_idle_and_at_their_absolute_age() {
        let s = ConsoleSessions::new();
        let idle = s.begin(t(0)).unwrap();
        assert!(s.touch(&idle, t(IDLE_SECS - 1)));
        // The use above restarted the idle count.
        assert!(s.touch(&idle, t(2 * IDLE_SECS - 2)));
        assert!(!s.touch(&idle, t(3 * IDLE_SECS - 2)), "unused for 12 h");
        assert!(s.is_empty(), "an ended session is dropped");

        let used = s.begin(t(0)).unwrap();
        let mut now = 0;
        while now + IDLE_SECS / 2 < ABSOLUTE_SECS {
            now += IDLE_SECS / 2;
            assert!(s.touch(&used, t(now)), "at {now}");
        }
        assert!(!s.touch(&used, t(ABSOLUTE_SECS)), "7 days after it began");

        // A clock that moves back neither ends a session nor prolongs it.
        let back = s.begin(t(100)).unwrap();
        assert!(s.touch(&back, t(0)));
        assert!(!s.touch(&back, t(100 + IDLE_SECS)));
    }

    #[test]
    fn a_full_table_ends_the_session_unused_the_longest() {
        let s = ConsoleSessions::new();
        let first = s.begin(t(0)).unwrap();
        let second = s.begin(t(1)).unwrap();
        for i in 2..MAX_SESSIONS as i64 {
            s.begin(t(i)).unwrap();
        }
        assert!(s.touch(&first, t(1000)));
        assert_eq!(s.len(), MAX_SESSIONS);
        let newest = s.begin(t(1001)).unwrap();
        assert_eq!(s.len(), MAX_SESSIONS);
        assert!(
            !s.touch(&second, t(1002)),
            "the least recently used one ended"
        );
        assert!(s.touch(&first, t(1002)) && s.touch(&newest, t(1002)));
        // Ended sessions make room before any live one is pushed out.
        let later = t(1002 + IDLE_SECS);
        s.begin(later).unwrap();
        assert_eq!(s.len(), 1);
    }

    #[test]
    fn only_exactly_the_owner_bearer_counts_as_the_owner() {
        let h = |vals: &[&str]| {
            let mut m = HeaderMap::new();
            for v in vals {
                m.append(header::AUTHORIZATION, v.parse().unwrap());
            }
            m
        };
        let token = "sxt_owner";
        let check = |m: &HeaderMap| header_credential_for(token, m);
        assert_eq!(check(&h(&[])), HeaderCredential::None);
        assert_eq!(check(&h(&["Bearer sxt_owner"])), HeaderCredential::Owner);
        assert_eq!(check(&h(&["bearer  sxt_owner "])), HeaderCredential::Owner);
        for other in [
            &["Bearer sxp_peer"][..],
            &["Bearer sxt_owner", "Bearer sxt_owner"],
            &["Basic sxt_owner"],
            &["Bearer"],
            &["Bearer sxt_owner x"],
        ] {
            assert_eq!(check(&h(other)), HeaderCredential::Other, "{other:?}");
        }
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
