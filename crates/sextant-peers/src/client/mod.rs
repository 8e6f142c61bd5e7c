//! Sextant's outbound A2A 1.0 client: a thin reqwest client over the `a2a-lf` types.
//!
//! - Card resolution ([`A2aClient::fetch_card`]): `GET <url>/.well-known/agent-card.json`, then
//!   the legacy `agent.json` on 404 (a URL ending in `.json` is the card itself).
//! - JSON-RPC methods: `SendMessage`, `SendStreamingMessage` (SSE, [`sextant_a2a::sse`]), `GetTask`,
//!   `SubscribeToTask`, `CancelTask`.
//! - Every request carries `A2A-Version: 1.0` and the hop header `A2A-Hop` (1 unless the caller
//!   says otherwise), and the bearer token only when the request goes to the peer's own origin
//!   ([`Bearer`]).
//! - Every connection goes through the network guard ([`guard`]): the URL is checked, names
//!   are resolved once by a checking resolver, and the connection goes to the checked
//!   addresses. No redirects are followed (a 3xx is an error naming the target), no proxy is
//!   taken from the environment, TLS is verified against the system roots plus an optional CA
//!   file, and plain http goes to loopback only.
//! - Timeouts: connect, idle read, and a total deadline per request (a stream's deadline
//!   covers the whole stream). Response bytes are counted while they arrive, and reading stops
//!   at the cap (cards, replies, streams, and each stream event).
//! - Traces: each JSON-RPC call runs in an `a2a_outbound_call` span and, when traces are on,
//!   sends its context as `traceparent` ([`sextant_a2a::trace`]).

pub mod accumulate;
pub mod card;
pub mod guard;

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a::{SendMessageRequest, SendMessageResponse, StreamResponse, Task};
use bytes::Bytes;
use futures::{Stream, StreamExt};
use reqwest::header::{ACCEPT, CONTENT_TYPE, LOCATION};
use serde_json::{Value, json};
use tracing::Instrument;
use url::Url;

use sextant_a2a::sse;

pub use accumulate::Accumulated;
pub use guard::{Lookup, NetPolicy, Refusal, StaticLookup, SystemLookup};

/// The protocol version sent on every request.
pub const A2A_VERSION: &str = "1.0";
/// The anti-loop hop header (the inbound side decides what to do with it).
pub const HOP_HEADER: &str = "A2A-Hop";

/// The trace span of one outbound JSON-RPC call (a client span: its context is the
/// `traceparent` sent). Attributes: the method and the peer's host and port, never the
/// message, the path or a credential.
fn call_span(ep: &Endpoint, method: &str) -> tracing::Span {
    tracing::info_span!(
        target: sextant_a2a::trace::TARGET,
        "a2a_outbound_call",
        otel.kind = "client",
        otel.status_code = tracing::field::Empty,
        rpc.system = "a2a",
        rpc.method = method,
        server.address = ep.url.host_str().unwrap_or(""),
        server.port = ep.url.port_or_known_default().unwrap_or(0),
        a2a.hop = ep.hop,
    )
}

/// Client-wide settings.
#[derive(Clone)]
pub struct ClientSettings {
    /// Whether loopback targets are allowed (default true: a local agent is the common case).
    pub allow_loopback: bool,
    /// A PEM file of extra CA certificates, trusted in addition to the system roots.
    pub ca_file: Option<PathBuf>,
    /// Name resolution (the system resolver; tests use [`StaticLookup`]).
    pub lookup: Arc<dyn Lookup>,
    pub connect_timeout: Duration,
    /// Longest wait for the next bytes of a response (streams get keep-alives well within it).
    pub read_timeout: Duration,
    /// Largest card accepted.
    pub max_card_bytes: usize,
    /// Largest JSON-RPC response accepted (and largest single stream event).
    pub max_response_bytes: usize,
    /// Largest whole stream accepted.
    pub max_stream_bytes: usize,
}

impl Default for ClientSettings {
    fn default() -> Self {
        Self {
            allow_loopback: true,
            ca_file: None,
            lookup: Arc::new(SystemLookup),
            connect_timeout: Duration::from_secs(10),
            read_timeout: Duration::from_secs(120),
            max_card_bytes: 256 * 1024,
            max_response_bytes: 4 * 1024 * 1024,
            max_stream_bytes: 16 * 1024 * 1024,
        }
    }
}

impl std::fmt::Debug for ClientSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientSettings")
            .field("allow_loopback", &self.allow_loopback)
            .field("ca_file", &self.ca_file)
            .field("connect_timeout", &self.connect_timeout)
            .field("read_timeout", &self.read_timeout)
            .finish_non_exhaustive()
    }
}

/// A bearer token and the only origin it may be sent to (the peer's registered URL's).
#[derive(Clone)]
pub struct Bearer {
    pub token: String,
    pub origin: url::Origin,
}

impl std::fmt::Debug for Bearer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bearer")
            .field("token", &"***")
            .field("origin", &self.origin.ascii_serialization())
            .finish()
    }
}

/// Where JSON-RPC calls go.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// The JSON-RPC interface URL (from the card).
    pub url: Url,
    /// The interface's tenant, echoed in every request.
    pub tenant: Option<String>,
    pub bearer: Option<Bearer>,
    /// Whether private-network addresses may be reached for this peer.
    pub allow_private: bool,
    /// Total deadline of one request (for streams: of the whole stream).
    pub timeout: Duration,
    /// The `A2A-Hop` value sent.
    pub hop: u32,
}

/// Why an outbound request failed. The texts are meant for people.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ClientError {
    /// The network guard refused the target (nothing was sent to it).
    #[error(transparent)]
    Refused(Refusal),
    #[error("{0}")]
    InvalidUrl(String),
    /// The name did not resolve.
    #[error("{0}")]
    Resolve(String),
    /// The connection failed; the text says how, in a person's words ([`network_words`]).
    #[error("{0}")]
    Connect(String),
    /// No answer within a time limit; the text says which target.
    #[error("{0}")]
    Timeout(String),
    #[error(
        "the peer answered {status} with a redirect{}; redirects are not followed",
        .location.as_deref().map(|l| format!(" to {l}")).unwrap_or_default()
    )]
    Redirect {
        status: u16,
        location: Option<String>,
    },
    #[error("the peer answered HTTP {status}{detail}")]
    Http { status: u16, detail: String },
    #[error("the {what} is larger than {limit} bytes; stopped reading it")]
    TooLarge { what: &'static str, limit: usize },
    #[error("the peer's answer is not valid A2A: {0}")]
    Protocol(String),
    #[error("the peer answered with error {code}: {message}")]
    Rpc { code: i64, message: String },
    /// Where the card should be there is none: an HTTP error, a web page, or not JSON; the
    /// text says which, naming the URL.
    #[error("{0}")]
    NoCard(String),
    #[error("{0}")]
    Setup(String),
}

impl ClientError {
    /// Whether a streaming call failed in a way that a plain `SendMessage` may fix (the peer
    /// does not stream), before anything happened remotely.
    pub fn streaming_unsupported(&self) -> bool {
        matches!(
            self,
            ClientError::Http {
                status: 404 | 405 | 501,
                ..
            } | ClientError::Rpc {
                code: -32601 | -32004,
                ..
            }
        )
    }
}

/// A stream of A2A events; an `Err` item ends it.
pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamResponse, ClientError>> + Send>>;

/// A fetched card.
#[derive(Debug, Clone)]
pub struct FetchedCard {
    /// Where it was found.
    pub url: Url,
    /// The card exactly as received (pinning and validation work on this).
    pub raw: Value,
}

impl FetchedCard {
    /// The typed card, or why it does not parse.
    pub fn card(&self) -> Result<a2a::AgentCard, String> {
        serde_json::from_value(card::with_empty_lists(&self.raw))
            .map_err(|e| format!("the card does not match the A2A 1.0 card schema: {e}"))
    }
}

/// The outbound client. One per process; cheap to share behind an `Arc`.
pub struct A2aClient {
    settings: ClientSettings,
    roots: Vec<reqwest::Certificate>,
    /// One reqwest client (with its guarded resolver and connection pool) per policy.
    clients: Mutex<HashMap<NetPolicy, reqwest::Client>>,
}

impl std::fmt::Debug for A2aClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("A2aClient")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

/// The URLs a card is looked for at, in order.
pub fn card_urls(target: &Url) -> Vec<Url> {
    let mut base = target.clone();
    base.set_query(None);
    base.set_fragment(None);
    if base.path().ends_with(".json") {
        return vec![base];
    }
    let path = base.path().trim_end_matches('/').to_string();
    ["agent-card.json", "agent.json"]
        .iter()
        .map(|f| {
            let mut u = base.clone();
            u.set_path(&format!("{path}/.well-known/{f}"));
            u
        })
        .collect()
}

/// Walks an error's sources for a guard refusal or a lookup failure, and otherwise says what
/// went wrong in a person's words ([`network_words`]).
fn map_reqwest(e: reqwest::Error) -> ClientError {
    let target = e.url().map(host_port).unwrap_or_else(|| "the peer".into());
    let mut src: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    let mut chain = Vec::new();
    let mut io_kind = None;
    while let Some(s) = src {
        if let Some(r) = s.downcast_ref::<guard::ResolveError>() {
            return match r {
                guard::ResolveError::Refused(r) => ClientError::Refused(r.clone()),
                guard::ResolveError::Lookup(m) => ClientError::Resolve(resolve_words(
                    e.url().and_then(Url::host_str).unwrap_or("the peer's name"),
                    m,
                )),
            };
        }
        if let Some(io) = s.downcast_ref::<std::io::Error>() {
            io_kind = io_kind.or(Some(io.kind()));
        }
        let text = s.to_string();
        if chain.last() != Some(&text) {
            chain.push(text);
        }
        src = s.source();
    }
    let failure = NetFailure {
        target,
        timeout: e.is_timeout(),
        connect: e.is_connect(),
        io_kind,
        chain,
    };
    if e.is_body() || e.is_decode() {
        return ClientError::Protocol(failure.chain.join(": "));
    }
    let words = network_words(&failure);
    if failure.timeout {
        ClientError::Timeout(words)
    } else {
        ClientError::Connect(words)
    }
}

/// `host:port` of a URL (the port its scheme implies when it names none).
pub fn host_port(url: &Url) -> String {
    let host = url.host_str().unwrap_or("?");
    match url.port_or_known_default() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_string(),
    }
}

/// What a failed connection looked like, for [`network_words`].
#[derive(Debug, Clone, Default)]
pub struct NetFailure {
    /// `host:port`.
    pub target: String,
    pub timeout: bool,
    /// Whether it failed while connecting (before a request was sent).
    pub connect: bool,
    /// The kind of the I/O error underneath, if one was.
    pub io_kind: Option<std::io::ErrorKind>,
    /// The error and its sources, as the libraries word them.
    pub chain: Vec<String>,
}

/// A failed connection in a person's words: what happened at which `host:port`, and what to
/// check — never the HTTP library's chain of errors (`error sending request for url (…):
/// client error (Connect): tcp connect error: Connection refused (os error 111)`).
pub fn network_words(f: &NetFailure) -> String {
    use std::io::ErrorKind;
    let t = &f.target;
    let all = f.chain.join(": ").to_ascii_lowercase();
    let has = |w: &str| all.contains(w);
    if f.io_kind == Some(ErrorKind::ConnectionRefused) || has("connection refused") {
        return format!("connection refused at {t}: is the peer running?");
    }
    if f.timeout && f.connect {
        return format!(
            "no connection to {t} in time: is the address right, and is the peer reachable \
             from this machine?"
        );
    }
    if f.timeout || f.io_kind == Some(ErrorKind::TimedOut) {
        return format!(
            "{t} did not answer in time: the peer may be busy or stuck (or its timeout_secs \
             is too short for it)"
        );
    }
    if has("certificate") || has("tls") || has("handshake") || has("invalidcontenttype") {
        let why = if has("unknownissuer") || has("unknown issuer") {
            "its certificate is not signed by an authority this machine trusts (for a \
             private CA, add it as ca_file in outbound.toml)"
                .to_string()
        } else if has("notvalidforname") || has("not valid for name") {
            "its certificate is for another name".to_string()
        } else if has("expired") {
            "its certificate has expired".to_string()
        } else if has("invalidcontenttype") || has("corrupt message") || has("wrong version") {
            "it does not speak TLS there (is it plain http?)".to_string()
        } else {
            f.chain.last().cloned().unwrap_or_default()
        };
        return format!("TLS with {t} failed: {why}");
    }
    if matches!(
        f.io_kind,
        Some(ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted | ErrorKind::UnexpectedEof)
    ) || has("connection reset")
        || has("connection closed")
        || has("incomplete message")
    {
        return format!(
            "{t} closed the connection without an answer: is an HTTP server listening there \
             (an https server called over http, or the other way round, does this)?"
        );
    }
    if has("network is unreachable") || has("no route to host") || has("host is unreachable") {
        return format!("{t} cannot be reached from this machine (no route to it)");
    }
    let last = f.chain.last().cloned().unwrap_or_default();
    format!("could not connect to {t}: {last}")
}

/// A name that did not resolve, in a person's words.
fn resolve_words(host: &str, detail: &str) -> String {
    if detail.ends_with("has no addresses") {
        return format!("the name {host} has no addresses (DNS): check the URL");
    }
    format!(
        "the name {host} does not resolve (DNS): check its spelling, and that this machine \
         can look it up"
    )
}

fn content_type(resp: &reqwest::Response) -> String {
    resp.headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// Reads a body, at most `limit` bytes.
async fn read_capped(
    resp: reqwest::Response,
    limit: usize,
    what: &'static str,
) -> Result<Bytes, ClientError> {
    if resp.content_length().is_some_and(|n| n > limit as u64) {
        return Err(ClientError::TooLarge { what, limit });
    }
    let mut body = resp.bytes_stream();
    let mut buf: Vec<u8> = Vec::new();
    while let Some(chunk) = body.next().await {
        let chunk = chunk.map_err(map_reqwest)?;
        if buf.len() + chunk.len() > limit {
            return Err(ClientError::TooLarge { what, limit });
        }
        buf.extend_from_slice(&chunk);
    }
    Ok(Bytes::from(buf))
}

/// Refuses redirects and error statuses. A non-2xx answer that is a JSON-RPC error envelope is
/// reported as that error.
async fn check_status(resp: reqwest::Response) -> Result<reqwest::Response, ClientError> {
    let status = resp.status();
    if status.is_success() {
        return Ok(resp);
    }
    if status.is_redirection() {
        let location = resp
            .headers()
            .get(LOCATION)
            .and_then(|v| v.to_str().ok())
            .map(String::from);
        return Err(ClientError::Redirect {
            status: status.as_u16(),
            location,
        });
    }
    let html_type = content_type(&resp);
    let body = read_capped(resp, 64 * 1024, "error body")
        .await
        .unwrap_or_default();
    if let Ok(v) = serde_json::from_slice::<Value>(&body)
        && let Some(err) = v.get("error")
    {
        // A JSON-RPC error (an integer code) is that error. A REST-style error body
        // (`{"error": {"code": "forbidden", "message": …}}`, as a perimeter answers) keeps its
        // HTTP status: a 403 naming A2A-Hop is how a peer says a call is over its hop limit.
        if err.get("code").is_some_and(Value::is_i64) {
            return Err(rpc_error(err));
        }
        if let Some(message) = err.get("message").and_then(Value::as_str) {
            let message: String = message.chars().take(1000).collect();
            return Err(ClientError::Http {
                status: status.as_u16(),
                detail: format!(": {message}"),
            });
        }
    }
    let snippet: String = String::from_utf8_lossy(&body).chars().take(300).collect();
    let detail = if snippet.trim().is_empty() {
        String::new()
    } else if is_html(&html_type, &snippet) {
        // A web page, not an A2A answer: say so, never echo its markup.
        ": an HTML page, not an A2A answer".to_string()
    } else {
        format!(": {}", snippet.trim())
    };
    Err(ClientError::Http {
        status: status.as_u16(),
        detail,
    })
}

/// A card URL that answered an HTTP error, in words: the status, the URLs tried, and what
/// that means (never the page itself).
fn no_card(status: u16, detail: &str, url: &Url, tried: &[Url]) -> String {
    let mut at: Vec<String> = tried.iter().map(|u| u.to_string()).collect();
    at.push(url.to_string());
    let from = match at.as_slice() {
        [one] => one.clone(),
        [first, rest @ ..] => format!("{first} (and {})", rest.join(", ")),
        [] => url.to_string(),
    };
    let why = match status {
        404 | 410 => "not an agent card: is this the agent's base URL, or its card's URL?".into(),
        401 | 403 => format!(
            "the card is not public{detail}; Sextant reads a peer's card without credentials"
        ),
        500..=599 => format!("the server failed{detail}"),
        _ => format!("not an agent card{detail}"),
    };
    format!("HTTP {status} from {from}: {why}")
}

/// Whether a body is a web page (by its Content-Type, or by how it starts).
fn is_html(content_type: &str, body: &str) -> bool {
    let start = body.trim_start().to_ascii_lowercase();
    content_type.starts_with("text/html")
        || start.starts_with("<!doctype")
        || start.starts_with("<html")
        || start.starts_with("<?xml")
}

fn rpc_error(err: &Value) -> ClientError {
    ClientError::Rpc {
        code: err.get("code").and_then(Value::as_i64).unwrap_or(0),
        message: err
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("(no message)")
            .chars()
            .take(1000)
            .collect(),
    }
}

/// The `result` of a JSON-RPC response envelope.
fn envelope_result(v: Value) -> Result<Value, ClientError> {
    let Value::Object(mut obj) = v else {
        return Err(ClientError::Protocol(
            "the JSON-RPC response is not an object".into(),
        ));
    };
    if let Some(err) = obj.get("error").filter(|e| !e.is_null()) {
        return Err(rpc_error(err));
    }
    obj.remove("result")
        .ok_or_else(|| ClientError::Protocol("the JSON-RPC response has no result".into()))
}

/// Decodes a peer's JSON; the error names the field that did not parse (`status.timestamp`),
/// not only what serde saw there, and says a timestamp's problem plainly (a zone-less
/// timestamp is "has no time zone", not chrono's "premature end of input").
fn decode<T: serde::de::DeserializeOwned>(v: Value, what: &str) -> Result<T, ClientError> {
    serde_path_to_error::deserialize(&v).map_err(|e| {
        let mut path = e.path().to_string();
        let mut found = value_at(&v, e.path());
        let why = e.into_inner().to_string();
        // An untagged enum (SendMessage's task-or-message, a stream event) loses the path:
        // a timestamp error is then the first timestamp that is not RFC 3339.
        if matches!(path.as_str(), "" | ".")
            && let Some((at, bad)) = bad_timestamp(&v, String::new())
        {
            path = at;
            found = Some(bad);
        }
        let why = explain_value(&why, found);
        match path.as_str() {
            "" | "." => ClientError::Protocol(format!("{what}: {why}")),
            _ => ClientError::Protocol(format!("{what}: field {path}: {why}")),
        }
    })
}

/// The first string under a `timestamp` key (or a key ending in `Timestamp`) that is not an
/// RFC 3339 timestamp, with its path (`task.status.timestamp`).
fn bad_timestamp(v: &Value, at: String) -> Option<(String, &Value)> {
    match v {
        Value::Object(m) => m.iter().find_map(|(k, x)| {
            let here = if at.is_empty() {
                k.clone()
            } else {
                format!("{at}.{k}")
            };
            match x {
                Value::String(s)
                    if (k == "timestamp" || k.ends_with("Timestamp"))
                        && chrono::DateTime::parse_from_rfc3339(s).is_err() =>
                {
                    Some((here, x))
                }
                _ => bad_timestamp(x, here),
            }
        }),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .find_map(|(i, x)| bad_timestamp(x, format!("{at}[{i}]"))),
        _ => None,
    }
}

/// The value at a serde path, if it is there.
fn value_at<'a>(v: &'a Value, path: &serde_path_to_error::Path) -> Option<&'a Value> {
    use serde_path_to_error::Segment;
    let mut at = v;
    for seg in path.iter() {
        at = match seg {
            Segment::Seq { index } => at.get(*index)?,
            Segment::Map { key } => at.get(key)?,
            Segment::Enum { .. } | Segment::Unknown => return None,
        };
    }
    Some(at)
}

/// A decoding error in plain words. A string that is not an RFC 3339 timestamp is named with
/// what is wrong with it, rather than chrono's words.
pub fn explain_value(why: &str, found: Option<&Value>) -> String {
    const CHRONO: &[&str] = &[
        "premature end of input",
        "input contains invalid characters",
        "trailing input",
        "input is out of range",
        "no possible date and time matching input",
        "input is not enough for unique date and time",
    ];
    if let Some(Value::String(s)) = found
        && CHRONO.iter().any(|c| why.contains(c))
    {
        if chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S%.f").is_ok() {
            return format!(
                "{s:?} has no time zone; A2A 1.0 timestamps are RFC 3339 with Z or an offset (2026-12-01T10:00:00Z)"
            );
        }
        return format!("{s:?} is not an RFC 3339 timestamp (2026-12-01T10:00:00Z)");
    }
    why.replace("a sequence", "a list")
        .replace("a map", "an object")
}

/// One SSE event's data: a JSON-RPC envelope whose result is a `StreamResponse`.
fn decode_event(ev: sse::SseEvent) -> Result<StreamResponse, ClientError> {
    let v: Value = serde_json::from_str(&ev.data)
        .map_err(|e| ClientError::Protocol(format!("a stream event is not JSON: {e}")))?;
    if ev.event.as_deref() == Some("error") && v.get("error").is_none() {
        return Err(ClientError::Protocol(format!(
            "the stream reported an error: {}",
            ev.data.chars().take(300).collect::<String>()
        )));
    }
    let result = envelope_result(v)?;
    decode(result, "a stream event")
}

struct StreamState {
    body: futures::stream::BoxStream<'static, reqwest::Result<Bytes>>,
    parser: sse::SseParser,
    pending: VecDeque<Result<StreamResponse, ClientError>>,
    total: usize,
    limit: usize,
    done: bool,
}

fn sse_stream(resp: reqwest::Response, limit: usize, max_event: usize) -> EventStream {
    let state = StreamState {
        body: resp.bytes_stream().boxed(),
        parser: sse::SseParser::new(max_event),
        pending: VecDeque::new(),
        total: 0,
        limit,
        done: false,
    };
    Box::pin(futures::stream::unfold(state, |mut st| async move {
        loop {
            if let Some(item) = st.pending.pop_front() {
                if item.is_err() {
                    st.done = true;
                    st.pending.clear();
                }
                return Some((item, st));
            }
            if st.done {
                return None;
            }
            match st.body.next().await {
                None => return None,
                Some(Err(e)) => {
                    st.done = true;
                    return Some((Err(map_reqwest(e)), st));
                }
                Some(Ok(chunk)) => {
                    st.total += chunk.len();
                    if st.total > st.limit {
                        st.done = true;
                        return Some((
                            Err(ClientError::TooLarge {
                                what: "stream",
                                limit: st.limit,
                            }),
                            st,
                        ));
                    }
                    match st.parser.feed(&chunk) {
                        Ok(events) => st.pending.extend(events.into_iter().map(decode_event)),
                        Err(sse::SseError::TooLarge(limit)) => {
                            st.pending.push_back(Err(ClientError::TooLarge {
                                what: "stream event",
                                limit,
                            }))
                        }
                        Err(sse::SseError::NotUtf8) => st.pending.push_back(Err(
                            ClientError::Protocol("the stream is not UTF-8".into()),
                        )),
                    }
                }
            }
        }
    }))
}

impl A2aClient {
    /// A client with these settings (reads the CA file, if any).
    pub fn new(settings: ClientSettings) -> Result<Self, ClientError> {
        let roots = match &settings.ca_file {
            None => Vec::new(),
            Some(path) => {
                let pem = std::fs::read(path).map_err(|e| {
                    ClientError::Setup(format!("cannot read the CA file {}: {e}", path.display()))
                })?;
                let certs = reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| {
                    ClientError::Setup(format!(
                        "the CA file {} is not a PEM certificate bundle: {e}",
                        path.display()
                    ))
                })?;
                if certs.is_empty() {
                    return Err(ClientError::Setup(format!(
                        "the CA file {} holds no certificate",
                        path.display()
                    )));
                }
                certs
            }
        };
        let client = Self {
            settings,
            roots,
            clients: Mutex::new(HashMap::new()),
        };
        // Fail at start-up, not at the first call, if TLS cannot be set up.
        client.http(NetPolicy::public(client.settings.allow_loopback))?;
        Ok(client)
    }

    /// The settings.
    pub fn settings(&self) -> &ClientSettings {
        &self.settings
    }

    /// The reqwest client for a policy (built once).
    fn http(&self, policy: NetPolicy) -> Result<reqwest::Client, ClientError> {
        let mut clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(c) = clients.get(&policy) {
            return Ok(c.clone());
        }
        let resolver = guard::GuardedResolver::new(policy, self.settings.lookup.clone());
        let mut builder = reqwest::Client::builder()
            .dns_resolver(Arc::new(resolver))
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .connect_timeout(self.settings.connect_timeout)
            .read_timeout(self.settings.read_timeout)
            .pool_idle_timeout(Duration::from_secs(60))
            .user_agent(concat!("sextant/", env!("CARGO_PKG_VERSION")));
        if !self.roots.is_empty() {
            builder = builder.tls_certs_merge(self.roots.clone());
        }
        let client = builder
            .build()
            .map_err(|e| ClientError::Setup(format!("cannot set up the HTTP client: {e}")))?;
        clients.insert(policy, client.clone());
        Ok(client)
    }

    /// Checks `url` with the guard and returns the client to reach it with.
    fn prepare(&self, url: &Url, allow_private: bool) -> Result<reqwest::Client, ClientError> {
        let policy = guard::check_url(
            url,
            NetPolicy {
                allow_private,
                allow_loopback: self.settings.allow_loopback,
                loopback_only: false,
            },
        )
        .map_err(ClientError::Refused)?;
        self.http(policy)
    }

    /// Checks a URL against the guard without sending anything.
    pub fn check(&self, url: &Url, allow_private: bool) -> Result<(), ClientError> {
        self.prepare(url, allow_private).map(drop)
    }

    /// Fetches a card from a base URL (or a card URL ending in `.json`).
    pub async fn fetch_card(
        &self,
        target: &Url,
        allow_private: bool,
        timeout: Duration,
    ) -> Result<FetchedCard, ClientError> {
        let candidates = card_urls(target);
        let last = candidates.len().saturating_sub(1);
        let mut tried: Vec<Url> = Vec::new();
        for (i, url) in candidates.into_iter().enumerate() {
            let client = self.prepare(&url, allow_private)?;
            let resp = client
                .get(url.clone())
                .header(ACCEPT, "application/json")
                .header("A2A-Version", A2A_VERSION)
                .header(HOP_HEADER, "1")
                .timeout(timeout)
                .send()
                .await
                .map_err(map_reqwest)?;
            if resp.status() == reqwest::StatusCode::NOT_FOUND && i < last {
                tried.push(url);
                continue;
            }
            let status = resp.status();
            let ct = content_type(&resp);
            let resp = match check_status(resp).await {
                Ok(r) => r,
                Err(ClientError::Http { status, detail }) => {
                    return Err(ClientError::NoCard(no_card(status, &detail, &url, &tried)));
                }
                Err(e) => return Err(e),
            };
            let body = read_capped(resp, self.settings.max_card_bytes, "agent card").await?;
            let raw: Value = serde_json::from_slice(&body).map_err(|e| {
                let start = String::from_utf8_lossy(&body[..body.len().min(300)]).to_string();
                ClientError::NoCard(if is_html(&ct, &start) {
                    format!(
                        "HTTP {} from {url}: a web page (HTML), not an agent card",
                        status.as_u16()
                    )
                } else {
                    format!("the agent card at {url} is not JSON: {e}")
                })
            })?;
            return Ok(FetchedCard { url, raw });
        }
        Err(ClientError::InvalidUrl(format!("no card URL for {target}")))
    }

    /// Checks `url` against an explicit policy (webhooks and URL parts have their own
    /// settings, not the peers') and returns the client to reach it with.
    fn prepare_with(&self, url: &Url, policy: NetPolicy) -> Result<reqwest::Client, ClientError> {
        let policy = guard::check_url(url, policy).map_err(ClientError::Refused)?;
        self.http(policy)
    }

    /// Checks a URL against the guard under an explicit policy, without sending anything
    /// (names are resolved only when a request is made).
    pub fn check_with(&self, url: &Url, policy: NetPolicy) -> Result<(), ClientError> {
        self.prepare_with(url, policy).map(drop)
    }

    /// GETs a file through the guard under `policy` (a URL part an Agent fetches): the body,
    /// at most `limit` bytes, and its `Content-Type`. Redirects are refused like everywhere.
    pub async fn fetch_bytes(
        &self,
        url: &Url,
        policy: NetPolicy,
        limit: usize,
        timeout: Duration,
    ) -> Result<(Bytes, Option<String>), ClientError> {
        let client = self.prepare_with(url, policy)?;
        let resp = client
            .get(url.clone())
            .header(HOP_HEADER, "1")
            .timeout(timeout)
            .send()
            .await
            .map_err(map_reqwest)?;
        let resp = check_status(resp).await?;
        let ct = resp
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(String::from);
        let body = read_capped(resp, limit, "file").await?;
        Ok((body, ct))
    }

    /// POSTs `body` with `headers` to `url` through the guard under `policy` (a push
    /// notification webhook). Any 2xx is delivered; the answer's body is read (at most 4 KiB)
    /// and dropped. Redirects and other statuses are errors naming them.
    pub async fn post_bytes(
        &self,
        url: &Url,
        policy: NetPolicy,
        headers: &[(&str, String)],
        body: Bytes,
        timeout: Duration,
    ) -> Result<u16, ClientError> {
        let client = self.prepare_with(url, policy)?;
        let mut req = client.post(url.clone()).timeout(timeout).body(body);
        for (k, v) in headers {
            req = req.header(*k, v);
        }
        let resp = check_status(req.send().await.map_err(map_reqwest)?).await?;
        let status = resp.status().as_u16();
        // Reading the (small) answer lets the connection be reused.
        let _ = read_capped(resp, 4096, "webhook answer").await;
        Ok(status)
    }

    /// Fetches the JWKS a card's signing keys are published in: `<the card's origin>
    /// /.well-known/jwks.json`, through the guard like the card. Never a URL the card names (a
    /// `jku`): a card does not choose where Sextant connects.
    pub async fn fetch_jwks(
        &self,
        card_url: &Url,
        allow_private: bool,
        timeout: Duration,
    ) -> Result<Value, ClientError> {
        let mut url = card_url.clone();
        url.set_path(sextant_a2a::signing::JWKS_PATH);
        url.set_query(None);
        url.set_fragment(None);
        let client = self.prepare(&url, allow_private)?;
        let resp = client
            .get(url.clone())
            .header(ACCEPT, "application/json")
            .header(HOP_HEADER, "1")
            .timeout(timeout)
            .send()
            .await
            .map_err(map_reqwest)?;
        let resp = check_status(resp).await?;
        let body = read_capped(resp, 64 * 1024, "key set").await?;
        serde_json::from_slice(&body)
            .map_err(|e| ClientError::Protocol(format!("the key set at {url} is not JSON: {e}")))
    }

    fn request(
        &self,
        ep: &Endpoint,
        method: &str,
        mut params: Value,
        accept: &'static str,
    ) -> Result<reqwest::RequestBuilder, ClientError> {
        let client = self.prepare(&ep.url, ep.allow_private)?;
        if let (Some(t), Some(obj)) = (&ep.tenant, params.as_object_mut()) {
            obj.entry("tenant").or_insert_with(|| json!(t));
        }
        let body = json!({
            "jsonrpc": "2.0",
            "id": a2a::new_message_id(),
            "method": method,
            "params": params,
        });
        let mut req = client
            .post(ep.url.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, accept)
            .header("A2A-Version", A2A_VERSION)
            .header(HOP_HEADER, ep.hop.to_string())
            .timeout(ep.timeout)
            .body(body.to_string());
        // Within the call's span (`call`, `stream`): the peer continues this trace under it.
        if let Some(t) = sextant_a2a::trace::current() {
            req = req.header(sextant_a2a::trace::HEADER, t.to_string());
        }
        if let Some(b) = &ep.bearer
            && ep.url.origin() == b.origin
        {
            req = req.bearer_auth(&b.token);
        }
        Ok(req)
    }

    /// A unary JSON-RPC call, untraced; the `result`.
    async fn call_untraced(
        &self,
        ep: &Endpoint,
        method: &str,
        params: Value,
    ) -> Result<Value, ClientError> {
        let limit = self.settings.max_response_bytes;
        self.call_untraced_capped(ep, method, params, limit, "response")
            .await
    }

    /// [`Self::call_untraced`], reading the response up to `limit` bytes (`what` names it in
    /// the error past that).
    async fn call_untraced_capped(
        &self,
        ep: &Endpoint,
        method: &str,
        params: Value,
        limit: usize,
        what: &'static str,
    ) -> Result<Value, ClientError> {
        let req = self.request(ep, method, params, "application/json")?;
        let resp = check_status(req.send().await.map_err(map_reqwest)?).await?;
        let body = read_capped(resp, limit, what).await?;
        let v: Value = serde_json::from_slice(&body)
            .map_err(|e| ClientError::Protocol(format!("the response is not JSON: {e}")))?;
        envelope_result(v)
    }

    /// A unary JSON-RPC call; the `result`.
    async fn call(&self, ep: &Endpoint, method: &str, params: Value) -> Result<Value, ClientError> {
        let limit = self.settings.max_response_bytes;
        self.call_capped(ep, method, params, limit, "response")
            .await
    }

    /// A unary JSON-RPC call whose response is read up to `limit` bytes (`what` names it in
    /// the error past that); the `result`.
    async fn call_capped(
        &self,
        ep: &Endpoint,
        method: &str,
        params: Value,
        limit: usize,
        what: &'static str,
    ) -> Result<Value, ClientError> {
        let span = call_span(ep, method);
        self.call_untraced_capped(ep, method, params, limit, what)
            .instrument(span.clone())
            .await
            .inspect_err(|_| {
                span.record("otel.status_code", "ERROR");
            })
    }

    /// A streaming JSON-RPC call: the SSE events, or the error the peer gave up front.
    async fn stream(
        &self,
        ep: &Endpoint,
        method: &str,
        params: Value,
    ) -> Result<EventStream, ClientError> {
        // The span covers the request until the stream starts (or the error up front).
        let span = call_span(ep, method);
        let req = span
            .in_scope(|| self.request(ep, method, params, "text/event-stream, application/json"))?;
        let resp = req
            .send()
            .instrument(span.clone())
            .await
            .map_err(map_reqwest)
            .inspect_err(|_| {
                span.record("otel.status_code", "ERROR");
            })?;
        let resp = check_status(resp).await.inspect_err(|_| {
            span.record("otel.status_code", "ERROR");
        })?;
        let ct = content_type(&resp);
        if ct.starts_with("text/event-stream") {
            return Ok(sse_stream(
                resp,
                self.settings.max_stream_bytes,
                self.settings.max_response_bytes,
            ));
        }
        if ct.starts_with("application/json") {
            // An error before the stream started (or, leniently, a single result).
            let body = read_capped(resp, self.settings.max_response_bytes, "response").await?;
            let v: Value = serde_json::from_slice(&body)
                .map_err(|e| ClientError::Protocol(format!("the response is not JSON: {e}")))?;
            let event: StreamResponse = decode(envelope_result(v)?, "the result")?;
            return Ok(Box::pin(futures::stream::iter([Ok(event)])));
        }
        Err(ClientError::Protocol(format!(
            "a streaming call was answered with Content-Type {ct:?}, not text/event-stream"
        )))
    }

    /// `SendMessage`.
    pub async fn send_message(
        &self,
        ep: &Endpoint,
        req: &SendMessageRequest,
    ) -> Result<SendMessageResponse, ClientError> {
        let params = serde_json::to_value(req)
            .map_err(|e| ClientError::Protocol(format!("cannot encode the request: {e}")))?;
        let result = self.call(ep, "SendMessage", params).await?;
        decode(result, "the SendMessage result")
    }

    /// `SendStreamingMessage`.
    pub async fn send_streaming_message(
        &self,
        ep: &Endpoint,
        req: &SendMessageRequest,
    ) -> Result<EventStream, ClientError> {
        let params = serde_json::to_value(req)
            .map_err(|e| ClientError::Protocol(format!("cannot encode the request: {e}")))?;
        self.stream(ep, "SendStreamingMessage", params).await
    }

    /// `GetTask`.
    pub async fn get_task(
        &self,
        ep: &Endpoint,
        id: &str,
        history_length: Option<i32>,
    ) -> Result<Task, ClientError> {
        let mut params = json!({ "id": id });
        if let Some(n) = history_length {
            params["historyLength"] = json!(n);
        }
        let result = self.call(ep, "GetTask", params).await?;
        decode(result, "the GetTask result")
    }

    /// `GetTask` of `id` as a check, not a call made for anyone (a registration's probe): no
    /// trace span, the same guard, headers and limits.
    pub async fn probe_get_task(&self, ep: &Endpoint, id: &str) -> Result<Task, ClientError> {
        let result = self
            .call_untraced(ep, "GetTask", json!({ "id": id }))
            .await?;
        decode(result, "the GetTask result")
    }

    /// `SubscribeToTask`.
    pub async fn subscribe_to_task(
        &self,
        ep: &Endpoint,
        id: &str,
    ) -> Result<EventStream, ClientError> {
        self.stream(ep, "SubscribeToTask", json!({ "id": id }))
            .await
    }

    /// `CancelTask`.
    pub async fn cancel_task(&self, ep: &Endpoint, id: &str) -> Result<Task, ClientError> {
        let result = self.call(ep, "CancelTask", json!({ "id": id })).await?;
        decode(result, "the CancelTask result")
    }

    /// `GetExtendedAgentCard`: the card the peer shows this caller (with the endpoint's
    /// token), as received (read up to the card limit). Only an object is a card.
    pub async fn get_extended_agent_card(&self, ep: &Endpoint) -> Result<Value, ClientError> {
        let limit = self.settings.max_card_bytes;
        let card = self
            .call_capped(
                ep,
                "GetExtendedAgentCard",
                json!({}),
                limit,
                "extended agent card",
            )
            .await?;
        if !card.is_object() {
            return Err(ClientError::Protocol(
                "the GetExtendedAgentCard result is not a card (an object)".into(),
            ));
        }
        Ok(card)
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod decode_tests {
    use super::*;

    #[test]
    fn a_field_that_does_not_parse_is_named() {
        let task = serde_json::json!({
            "id": "t", "contextId": "c",
            "status": {"state": "TASK_STATE_WORKING", "timestamp": "2026-12-01T10:00:00"},
        });
        let err = decode::<Task>(task, "the GetTask result")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("field status.timestamp"), "{err}");
        assert!(
            err.contains(
                "\"2026-12-01T10:00:00\" has no time zone; A2A 1.0 timestamps are RFC 3339"
            ),
            "{err}"
        );
        assert!(!err.contains("premature end of input"), "{err}");
        let task = serde_json::json!({
            "id": "t", "contextId": "c",
            "status": {"state": "TASK_STATE_WORKING", "timestamp": "yesterday"},
        });
        let err = decode::<Task>(task, "the GetTask result")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("\"yesterday\" is not an RFC 3339 timestamp"),
            "{err}"
        );
        // SendMessage's result is a task or a message (an untagged enum: serde loses the
        // path); the timestamp is still named. fasta2a 2.1.1 answers exactly this.
        let answer = serde_json::json!({"task": {
            "id": "t", "contextId": "c",
            "status": {"state": "TASK_STATE_SUBMITTED", "timestamp": "2026-12-07T21:04:05.285359"},
        }});
        let err = decode::<SendMessageResponse>(answer, "the SendMessage result")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains(
                "field task.status.timestamp: \"2026-12-07T21:04:05.285359\" has no time zone"
            ),
            "{err}"
        );
    }

    #[test]
    fn an_error_page_is_summarised_never_echoed() {
        assert!(is_html("text/html; charset=utf-8", "whatever"));
        assert!(is_html("", "  <!DOCTYPE html><html>"));
        assert!(!is_html("application/json", "{\"error\": 1}"));
        let tried = [Url::parse("http://h:1/.well-known/agent-card.json").expect("url")];
        let last = Url::parse("http://h:1/.well-known/agent.json").expect("url");
        assert_eq!(
            no_card(404, "", &last, &tried),
            "HTTP 404 from http://h:1/.well-known/agent-card.json (and \
             http://h:1/.well-known/agent.json): not an agent card: is this the agent's base \
             URL, or its card's URL?"
        );
        assert!(no_card(401, "", &last, &[]).contains("the card is not public"));
    }
}
