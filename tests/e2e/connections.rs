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
