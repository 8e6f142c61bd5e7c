//! Connections as hostile or careless clients hold them: refusals that must leave a keep-alive
//! connection usable, slow and half-sent requests, and connection limits.

use std::collections::HashMap;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::*;

/// One HTTP/1.1 response read off a raw connection.
#[derive(Debug)]
pub struct RawResponse {
    pub status: u16,
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
}

/// Reads one response (`Content-Length` bodies only, as Sextant's JSON answers are); `None`
/// when the server closed the connection (EOF or reset) before a whole response.
pub async fn read_response(s: &mut TcpStream, buf: &mut Vec<u8>) -> Option<RawResponse> {
    let fill = async |s: &mut TcpStream, buf: &mut Vec<u8>| -> bool {
        let mut chunk = [0u8; 8192];
        match tokio::time::timeout(STEP, s.read(&mut chunk)).await {
            Ok(Ok(0)) | Ok(Err(_)) => false,
            Ok(Ok(n)) => {
                buf.extend_from_slice(&chunk[..n]);
                true
            }
            Err(_) => panic!("no response within the safety timeout"),
        }
    };
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if !fill(s, buf).await {
            return None;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
    let headers: HashMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let len: usize = headers
        .get("content-length")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + len {
        if !fill(s, buf).await {
            return None;
        }
    }
    let body = buf[head_end..head_end + len].to_vec();
    buf.drain(..head_end + len);
    Some(RawResponse {
        status,
        headers,
        body,
    })
}

fn post(path: &str, auth: Option<&str>, body: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n",
        body.len()
    );
    if let Some(a) = auth {
        r.push_str(&format!("Authorization: Bearer {a}\r\n"));
    }
    r.push_str("\r\n");
    let mut bytes = r.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

const HEALTH: &[u8] = b"GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

/// A JSON-RPC body padded to `size` bytes with a metadata string.
fn padded_rpc(size: usize) -> Vec<u8> {
    let pad = "x".repeat(size.saturating_sub(80));
    let body =
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{{"tenant":"{pad}"}}}}"#);
    body.into_bytes()
}

/// Sends a refused request with a body of `size` bytes and, on the same connection, a health
/// check right behind it (pipelined, as a keep-alive client may). Returns the refusal and
/// whether the health check was answered 200.
async fn refused_then_next(app: &TestApp, auth: Option<&str>, size: usize) -> (RawResponse, bool) {
    let mut s = TcpStream::connect(app.running.addr).await.unwrap();
    let mut out = post("/api/v1/agents/echo/a2a", auth, &padded_rpc(size));
    out.extend_from_slice(HEALTH);
    s.write_all(&out).await.unwrap();
    let mut buf = Vec::new();
    let first = read_response(&mut s, &mut buf)
        .await
        .expect("the refusal is answered");
    let closes = first
        .headers
        .get("connection")
        .is_some_and(|v| v.eq_ignore_ascii_case("close"));
    let second = read_response(&mut s, &mut buf).await;
    if closes {
        // The client was told; it would open a new connection for the next request.
        return (first, true);
    }
    (first, second.is_some_and(|r| r.status == 200))
}

#[tokio::test]
async fn a_refused_keep_alive_client_can_send_its_next_request() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("security.toml"),
        "[limits]\nlocal_rate_limit_per_minute = 1\n",
    )
    .unwrap();
    let app = TestApp::start_in(dir, false).await;
    // 401: an unknown bearer token, a body of several reads.
    for size in [100, 40_000, 60_000, 200_000] {
        let (first, next_ok) = refused_then_next(&app, Some("sxp_not-a-token"), size).await;
        assert_eq!(first.status, 401, "{first:?}");
        assert!(next_ok, "after a 401 with a {size}-byte body: {first:?}");
    }
    // 429: the anonymous caller over its quota (the first request spends it).
    let _ = app.rpc("echo", "ListTasks", serde_json::json!({})).await;
    for size in [100, 40_000, 60_000, 200_000] {
        let (first, next_ok) = refused_then_next(&app, None, size).await;
        assert_eq!(first.status, 429, "{first:?}");
        assert!(next_ok, "after a 429 with a {size}-byte body: {first:?}");
    }
    // 413: a body announced over the limit is refused on its Content-Length; the rest of it
    // would follow on the wire, so the answer says the connection closes.
    let mut s = TcpStream::connect(app.running.addr).await.unwrap();
    let head = format!(
        "POST /api/v1/agents/echo/a2a HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{{",
        app.token,
        20 * 1024 * 1024
    );
    s.write_all(head.as_bytes()).await.unwrap();
    let too_large = read_response(&mut s, &mut Vec::new()).await.expect("413");
    assert_eq!(too_large.status, 413, "{too_large:?}");
    assert_eq!(
        too_large.headers.get("connection").map(String::as_str),
        Some("close"),
        "{too_large:?}"
    );
    app.shutdown().await;
}

/// A connection to `app` from the loopback address `from` (127.0.0.2, …: another peer address
/// than the console's 127.0.0.1).
async fn connect_from(app: &TestApp, from: &str) -> TcpStream {
    let sock = tokio::net::TcpSocket::new_v4().unwrap();
    sock.bind(format!("{from}:0").parse().unwrap()).unwrap();
    sock.connect(app.running.addr).await.unwrap()
}

/// Reads until the server closes the connection; what it sent before.
async fn until_closed(s: &mut TcpStream) -> Vec<u8> {
    let mut all = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match tokio::time::timeout(STEP, s.read(&mut chunk)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return all,
            Ok(Ok(n)) => all.extend_from_slice(&chunk[..n]),
            Err(_) => panic!("the server kept the connection open past the safety timeout"),
        }
    }
}

async fn spawn_with_limits(limits: &str, agents_toml: Option<&str>) -> TestApp {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("security.toml"),
        format!("[limits]\n{limits}"),
    )
    .unwrap();
    if let Some(toml) = agents_toml {
        let toml = toml.replace("{dir}", &dir.path().display().to_string());
        std::fs::write(dir.path().join("agents.toml"), toml).unwrap();
    }
    TestApp::start_in(dir, false).await
}

#[tokio::test]
async fn half_sent_and_idle_connections_are_closed_but_open_responses_are_not() {
    let toml = exec_agent(
        "gated",
        "read -r line; while [ ! -f \"{dir}/gate\" ]; do sleep 0.05; done; echo released",
    );
    let app = spawn_with_limits(
        "header_timeout_secs = 1\nbody_timeout_secs = 1\n",
        Some(&toml),
    )
    .await;
    // A stream that waits longer than the header timeout without a byte moving.
    let mut stream = app
        .stream_as(
            Who::Anon,
            "gated",
            "SendStreamingMessage",
            serde_json::json!({ "message": msg("wait") }),
            &[],
        )
        .await;
    let first = stream.next_frame().await.expect("the task").json();
    assert!(first["result"]["task"]["id"].is_string(), "{first}");

    // A head left half-sent is closed without an answer.
    let mut half_head = connect_from(&app, "127.0.0.2").await;
    half_head
        .write_all(b"POST /api/v1/agents/echo/a2a HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le")
        .await
        .unwrap();
    until_closed(&mut half_head).await;

    // A body left half-sent: the request is refused and the connection closed.
    let mut half_body = connect_from(&app, "127.0.0.2").await;
    half_body
        .write_all(&post("/api/v1/agents/echo/a2a", None, &[b'{'; 100])[..200])
        .await
        .unwrap();
    let answer = String::from_utf8_lossy(&until_closed(&mut half_body).await).to_string();
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 4"),
        "{answer}"
    );

    // A kept-alive connection left idle is closed.
    let mut idle = connect_from(&app, "127.0.0.2").await;
    idle.write_all(HEALTH).await.unwrap();
    let mut buf = Vec::new();
    let health = read_response(&mut idle, &mut buf).await.expect("health");
    assert_eq!(health.status, 200);
    until_closed(&mut idle).await;

    // A connection that never sends a byte is closed too (before hyper sees it: the server
    // waits for its first bytes to tell HTTP/1.1 from HTTP/2).
    let mut silent = connect_from(&app, "127.0.0.2").await;
    until_closed(&mut silent).await;
    // A half-sent HTTP/2 preface likewise.
    let mut half_preface = connect_from(&app, "127.0.0.2").await;
    half_preface.write_all(b"PRI * HTTP/2.0\r\n").await.unwrap();
    until_closed(&mut half_preface).await;

    // All that took longer than the header timeout; the stream is still open and completes.
    std::fs::write(app.dir.path().join("gate"), b"open").unwrap();
    let rest = stream.rest().await;
    let last = rest.last().expect("events after the gate opened").json();
    assert_eq!(
        last["result"]["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{last}"
    );
    app.shutdown().await;
}

#[tokio::test]
async fn connection_limits_per_address_and_overall_keep_room_for_the_console() {
    let app = spawn_with_limits(
        "max_connections = 6\nmax_connections_per_address = 2\nconsole_connections = 2\n",
        None,
    )
    .await;
    // Each held connection has been answered once, so the server counts it.
    let mut held = Vec::new();
    let hold = async |from: &str| -> Result<TcpStream, String> {
        let mut s = connect_from(&app, from).await;
        s.write_all(HEALTH).await.unwrap();
        let r = read_response(&mut s, &mut Vec::new()).await;
        match r {
            Some(r) if r.status == 200 => Ok(s),
            Some(r) => Err(format!(
                "{} {}",
                r.status,
                r.headers.get("connection").cloned().unwrap_or_default()
            )),
            None => Err("closed".into()),
        }
    };
    held.push(hold("127.0.0.2").await.expect("first from .2"));
    held.push(hold("127.0.0.2").await.expect("second from .2"));
    assert_eq!(
        hold("127.0.0.2").await.err().as_deref(),
        Some("503 close"),
        "a third from one address is refused"
    );
    held.push(hold("127.0.0.3").await.expect("first from .3"));
    held.push(hold("127.0.0.3").await.expect("second from .3"));
    assert_eq!(
        hold("127.0.0.4").await.err().as_deref(),
        Some("503 close"),
        "the last two places are the console's"
    );
    // The console (127.0.0.1, the owner's token) still gets in, twice.
    for _ in 0..2 {
        let mut s = TcpStream::connect(app.running.addr).await.unwrap();
        let req = format!(
            "GET /api/v1/tasks HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {}\r\n\r\n",
            app.token
        );
        s.write_all(req.as_bytes()).await.unwrap();
        let r = read_response(&mut s, &mut Vec::new())
            .await
            .expect("answer");
        assert_eq!(r.status, 200, "{:?}", String::from_utf8_lossy(&r.body));
        held.push(s);
    }
    // A closed connection frees its place.
    held.truncate(3);
    held.push(hold("127.0.0.4").await.expect("a place was freed"));
    drop(held);
    app.shutdown().await;
}

/// Every loopback client shares the console's room (behind a local proxy all traffic is
/// loopback), so idle loopback connections used to lock the person out with 503s. Over the
/// limits, only the owner's credential is served, on places of its own that connections
/// which send nothing cannot keep.
#[tokio::test]
async fn the_owner_gets_in_whatever_other_loopback_clients_hold() {
    let app = spawn_with_limits(
        "max_connections = 4\nconsole_connections = 2\nowner_connections = 2\n",
        None,
    )
    .await;
    let get = |auth: Option<&str>| {
        let auth = auth
            .map(|t| format!("Authorization: Bearer {t}\r\n"))
            .unwrap_or_default();
        format!("GET /api/v1/tasks HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}\r\n")
    };
    let ask = async |req: &str| -> (TcpStream, u16, String) {
        let mut s = TcpStream::connect(app.running.addr).await.unwrap();
        s.write_all(req.as_bytes()).await.unwrap();
        let r = read_response(&mut s, &mut Vec::new())
            .await
            .expect("an answer");
        let connection = r.headers.get("connection").cloned().unwrap_or_default();
        (s, r.status, connection)
    };
    // Four anonymous loopback clients hold every ordinary place.
    let mut held = Vec::new();
    for _ in 0..4 {
        let (s, status, _) = ask(&String::from_utf8_lossy(HEALTH)).await;
        assert_eq!(status, 200);
        held.push(s);
    }
    // A fifth anonymous one is refused, on a reserve place, which it then gives up.
    let (mut s, status, connection) = ask(&get(None)).await;
    assert_eq!((status, connection.as_str()), (503, "close"));
    until_closed(&mut s).await;
    // Two that send nothing take the reserve's places …
    let mut silent = Vec::new();
    for _ in 0..2 {
        silent.push(TcpStream::connect(app.running.addr).await.unwrap());
    }
    // … and the owner still gets in, twice: each takes a silent one's place.
    for _ in 0..2 {
        let (s, status, _) = ask(&get(Some(&app.token))).await;
        assert_eq!(status, 200);
        held.push(s);
    }
    for s in &mut silent {
        until_closed(s).await;
    }
    // Both places are the owner's now: a third owner connection waits its turn like anyone.
    let mut third = TcpStream::connect(app.running.addr).await.unwrap();
    let refused = String::from_utf8_lossy(&until_closed(&mut third).await).to_string();
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    drop(held);
    app.shutdown().await;
}

/// HTTP/2 with prior knowledge (h2c, as gRPC clients speak it) on the same port as HTTP/1.1,
/// through the same router.
#[tokio::test]
async fn http2_prior_knowledge_is_served_on_the_same_port() {
    let app = spawn_with_limits("", None).await;
    let h2 = reqwest::Client::builder()
        .http2_prior_knowledge()
        .build()
        .unwrap();
    let r = h2
        .get(format!("{}/api/v1/health", app.url))
        .send()
        .await
        .unwrap();
    assert_eq!(r.version(), reqwest::Version::HTTP_2);
    assert_eq!(r.status(), 200);
    let h1 = reqwest::Client::builder().http1_only().build().unwrap();
    let r = h1
        .get(format!("{}/api/v1/health", app.url))
        .send()
        .await
        .unwrap();
    assert_eq!(r.version(), reqwest::Version::HTTP_11);
    assert_eq!(r.status(), 200);
    app.shutdown().await;
}
