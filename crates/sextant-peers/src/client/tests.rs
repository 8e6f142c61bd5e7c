//! Client tests against tiny HTTP servers on 127.0.0.1:0. Every name is resolved by a
//! [`StaticLookup`] (no DNS), and no test dials anything but loopback: hostile targets are
//! refused before any connection, which the servers' accept counters confirm.

#![allow(clippy::unwrap_used)]

use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use a2a::{Message, Part, Role, SendMessageRequest};
use futures::StreamExt;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::*;

/// One request as the server saw it.
#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: String,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// What the server answers: raw bytes, or nothing (it hangs).
enum Reply {
    Raw(Vec<u8>),
    Hang,
}

type Handler = Arc<dyn Fn(&Seen) -> Reply + Send + Sync>;

struct Server {
    port: u16,
    accepted: Arc<AtomicUsize>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    async fn start(handler: Handler) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (a, s) = (accepted.clone(), seen.clone());
        tokio::spawn(async move {
            loop {
                let Ok((mut sock, _)) = listener.accept().await else {
                    return;
                };
                a.fetch_add(1, Ordering::SeqCst);
                let (handler, seen) = (handler.clone(), s.clone());
                tokio::spawn(async move {
                    let Some(req) = read_request(&mut sock).await else {
                        return;
                    };
                    seen.lock().unwrap().push(req.clone());
                    match handler(&req) {
                        Reply::Raw(bytes) => {
                            let _ = sock.write_all(&bytes).await;
                            let _ = sock.shutdown().await;
                        }
                        Reply::Hang => tokio::time::sleep(Duration::from_secs(30)).await,
                    }
                });
            }
        });
        Server {
            port,
            accepted,
            seen,
        }
    }

    fn accepted(&self) -> usize {
        self.accepted.load(Ordering::SeqCst)
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

async fn read_request(sock: &mut tokio::net::TcpStream) -> Option<Seen> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        let n = sock.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_string();
    let path = first.next()?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let len: usize = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    while buf.len() < head_end + len {
        let n = sock.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = String::from_utf8_lossy(&buf[head_end..]).to_string();
    Some(Seen {
        method,
        path,
        headers,
        body,
    })
}

fn http(status: &str, content_type: &str, body: &str) -> Reply {
    Reply::Raw(
        format!(
            "HTTP/1.1 {status}\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    )
}

fn card(base: &str) -> Value {
    json!({
        "name": "fake", "description": "a fake peer", "version": "1.0.0",
        "supportedInterfaces": [{"url": format!("{base}/rpc"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": true},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "echo", "name": "Echo", "description": "echoes", "tags": ["echo"]}]
    })
}

/// A fake A2A peer: card at the well-known path (its interface URL uses `host`), echo on
/// SendMessage, a three-event stream on SendStreamingMessage.
fn peer_handler(host: &'static str) -> Handler {
    Arc::new(move |req: &Seen| {
        let port = req
            .header("host")
            .and_then(|h| h.rsplit(':').next())
            .unwrap_or("0")
            .to_string();
        if req.method == "GET" && req.path == "/.well-known/agent-card.json" {
            return http(
                "200 OK",
                "application/json",
                &card(&format!("http://{host}:{port}")).to_string(),
            );
        }
        if req.method != "POST" {
            return http("404 Not Found", "text/plain", "nope");
        }
        let rpc: Value = serde_json::from_str(&req.body).unwrap_or(Value::Null);
        let id = rpc["id"].clone();
        let text = rpc["params"]["message"]["parts"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_string();
        match rpc["method"].as_str() {
            Some("SendMessage") => http(
                "200 OK",
                "application/json",
                &json!({"jsonrpc": "2.0", "id": id, "result": {"task": {
                    "id": "t1", "contextId": "c1",
                    "status": {"state": "TASK_STATE_COMPLETED"},
                    "artifacts": [{"artifactId": "a", "parts": [{"text": format!("echo: {text}")}]}]
                }}})
                .to_string(),
            ),
            Some("SendStreamingMessage") => {
                let events = [
                    json!({"task": {"id": "t2", "contextId": "c2", "status": {"state": "TASK_STATE_SUBMITTED"}}}),
                    json!({"artifactUpdate": {"taskId": "t2", "contextId": "c2", "artifact": {"artifactId": "a", "parts": [{"text": "echo: "}]}}}),
                    json!({"artifactUpdate": {"taskId": "t2", "contextId": "c2", "append": true, "artifact": {"artifactId": "a", "parts": [{"text": text}]}}}),
                    json!({"statusUpdate": {"taskId": "t2", "contextId": "c2", "status": {"state": "TASK_STATE_COMPLETED"}}}),
                ];
                let mut body = String::from(": hello\n\n");
                for e in events {
                    body.push_str(&format!(
                        "data: {}\r\n\r\n",
                        json!({"jsonrpc": "2.0", "id": id, "result": e})
                    ));
                }
                http("200 OK", "text/event-stream", &body)
            }
            Some("SubscribeToTask") => {
                let events = [
                    json!({"task": {"id": rpc["params"]["id"], "contextId": "c2", "status": {"state": "TASK_STATE_WORKING"}}}),
                    json!({"statusUpdate": {"taskId": rpc["params"]["id"], "contextId": "c2", "status": {"state": "TASK_STATE_COMPLETED"}}}),
                ];
                let body: String = events
                    .iter()
                    .map(|e| format!("data: {}\n\n", json!({"jsonrpc": "2.0", "id": id, "result": e})))
                    .collect();
                http("200 OK", "text/event-stream", &body)
            }
            Some("GetTask") => http(
                "200 OK",
                "application/json",
                &json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32001, "message": "Task not found"}}).to_string(),
            ),
            _ => http("200 OK", "application/json", "{}"),
        }
    })
}

fn client_with(lookup: StaticLookup, allow_loopback: bool) -> A2aClient {
    A2aClient::new(ClientSettings {
        allow_loopback,
        lookup: Arc::new(lookup),
        connect_timeout: Duration::from_secs(5),
        read_timeout: Duration::from_secs(5),
        ..ClientSettings::default()
    })
    .unwrap()
}

fn loopback() -> IpAddr {
    "127.0.0.1".parse().unwrap()
}

fn endpoint(url: &str) -> Endpoint {
    Endpoint {
        url: Url::parse(url).unwrap(),
        tenant: None,
        bearer: None,
        allow_private: false,
        timeout: Duration::from_secs(5),
        hop: 1,
    }
}

fn request(text: &str) -> SendMessageRequest {
    SendMessageRequest {
        message: Message::new(Role::User, vec![Part::text(text)]),
        configuration: None,
        metadata: None,
        tenant: None,
    }
}

#[tokio::test]
async fn hostile_targets_are_refused_before_any_connection() {
    let server = Server::start(peer_handler("127.0.0.1")).await;
    let p = server.port;
    let lookup = StaticLookup::default()
        .with("metadata-alias.test", &["169.254.169.254".parse().unwrap()])
        .with("link-local.test", &["fe80::1".parse().unwrap()])
        .with("mapped.test", &["::ffff:169.254.169.254".parse().unwrap()])
        .with("private.test", &["10.0.0.9".parse().unwrap()])
        .with("cgnat.test", &["100.100.100.200".parse().unwrap()])
        .with(
            "rebind.test",
            &[loopback(), "192.168.1.20".parse().unwrap()],
        )
        .with("loopback.test", &[loopback()]);
    let client = client_with(lookup.clone(), true);
    let strict = client_with(lookup, false);
    let table: Vec<(&A2aClient, String, &str)> = vec![
        (
            &client,
            "https://169.254.169.254/latest/meta-data/".into(),
            "metadata",
        ),
        (&client, "https://2852039166/".into(), "metadata"),
        (&client, "https://0251.0376.0251.0376/".into(), "metadata"),
        (
            &client,
            "https://[::ffff:169.254.169.254]/".into(),
            "metadata",
        ),
        (&client, "https://[fd00:ec2::254]/".into(), "metadata"),
        (&client, "https://100.100.100.200/".into(), "metadata"),
        (
            &client,
            "http://metadata.google.internal/".into(),
            "metadata",
        ),
        (&client, "https://metadata-alias.test/".into(), "metadata"),
        (&client, "https://link-local.test/".into(), "link-local"),
        (&client, "https://mapped.test/".into(), "metadata"),
        (
            &client,
            "https://private.test/".into(),
            "allow_private_network",
        ),
        (&client, "https://cgnat.test/".into(), "metadata"),
        (
            &client,
            format!("https://rebind.test:{p}/"),
            "allow_private_network",
        ),
        (&client, "https://10.0.0.1/".into(), "allow_private_network"),
        (&client, "http://192.168.0.1/".into(), "plain http"),
        (&client, "ftp://loopback.test/".into(), "only https"),
        (
            &client,
            format!("http://user:secret@127.0.0.1:{p}/"),
            "credentials",
        ),
        (&strict, format!("http://127.0.0.1:{p}/"), "allow_loopback"),
        (&strict, format!("http://2130706433:{p}/"), "allow_loopback"),
        (&strict, format!("http://[::1]:{p}/"), "allow_loopback"),
        (
            &strict,
            format!("http://loopback.test:{p}/"),
            "allow_loopback",
        ),
    ];
    for (c, target, why) in &table {
        let url = Url::parse(target).unwrap();
        let err = c
            .fetch_card(&url, false, Duration::from_secs(2))
            .await
            .unwrap_err();
        let ClientError::Refused(r) = &err else {
            panic!("{target}: expected a refusal, got {err}");
        };
        assert!(r.reason.contains(why), "{target}: {err}");
        assert!(!err.to_string().contains("secret"), "{err}");
        let send = c
            .send_message(&endpoint(target), &request("hi"))
            .await
            .unwrap_err();
        assert!(matches!(send, ClientError::Refused(_)), "{target}: {send}");
    }
    assert_eq!(server.accepted(), 0, "nothing reached the loopback server");
}

#[tokio::test]
async fn redirects_are_not_followed() {
    let target = Server::start(peer_handler("127.0.0.1")).await;
    let location = format!(
        "http://127.0.0.1:{}/.well-known/agent-card.json",
        target.port
    );
    let redirect = Server::start(Arc::new(move |_req: &Seen| {
        Reply::Raw(
            format!(
                "HTTP/1.1 307 Temporary Redirect\r\nlocation: {location}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            )
            .into_bytes(),
        )
    }))
    .await;
    let client = client_with(StaticLookup::default(), true);
    let url = Url::parse(&format!("http://127.0.0.1:{}/", redirect.port)).unwrap();
    let err = client
        .fetch_card(&url, false, Duration::from_secs(5))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::Redirect { status: 307, location: Some(l) } if l.contains(&target.port.to_string())),
        "{err}"
    );
    assert!(err.to_string().contains("not followed"), "{err}");
    let send = client
        .send_message(
            &endpoint(&format!("http://127.0.0.1:{}/rpc", redirect.port)),
            &request("hi"),
        )
        .await
        .unwrap_err();
    assert!(matches!(send, ClientError::Redirect { .. }), "{send}");
    assert_eq!(
        target.accepted(),
        0,
        "the redirect target was never contacted"
    );
}

#[tokio::test]
async fn names_mapped_to_loopback_work_with_headers_and_the_token_rule() {
    let server = Server::start(peer_handler("peer.test")).await;
    let client = client_with(
        StaticLookup::default()
            .with("peer.test", &[loopback()])
            .with("other.test", &[loopback()]),
        true,
    );
    let base = format!("http://peer.test:{}", server.port);
    let fetched = client
        .fetch_card(&Url::parse(&base).unwrap(), false, Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(fetched.url.path(), "/.well-known/agent-card.json");
    let card = fetched.card().unwrap();
    let iface = card::select_interface(&card).unwrap();
    assert_eq!(iface.url, format!("{base}/rpc"));

    let origin = Url::parse(&base).unwrap().origin();
    let mut ep = endpoint(&iface.url);
    ep.bearer = Some(Bearer {
        token: "sekrit".into(),
        origin: origin.clone(),
    });
    ep.hop = 2;
    let r = client.send_message(&ep, &request("hello")).await.unwrap();
    let acc = Accumulated::from_response(r);
    assert_eq!(acc.reply_text(), "echo: hello");

    let mut stream = client
        .send_streaming_message(&ep, &request("there"))
        .await
        .unwrap();
    let mut acc = Accumulated::default();
    while let Some(ev) = stream.next().await {
        acc.apply(&ev.unwrap());
    }
    assert_eq!(acc.events, 4);
    assert!(acc.is_terminal());
    assert_eq!(acc.reply_text(), "echo: there");

    let mut sub = client.subscribe_to_task(&ep, "t9").await.unwrap();
    let mut acc = Accumulated::default();
    while let Some(ev) = sub.next().await {
        acc.apply(&ev.unwrap());
    }
    assert_eq!(
        (acc.task_id.as_deref(), acc.is_terminal()),
        (Some("t9"), true)
    );

    let err = client.get_task(&ep, "nope", None).await.unwrap_err();
    assert_eq!(
        err,
        ClientError::Rpc {
            code: -32001,
            message: "Task not found".into()
        }
    );

    // Another origin (same server, another name): the token is not sent.
    let mut elsewhere = endpoint(&format!("http://other.test:{}/rpc", server.port));
    elsewhere.hop = 2;
    elsewhere.bearer = Some(Bearer {
        token: "sekrit".into(),
        origin,
    });
    client
        .send_message(&elsewhere, &request("x"))
        .await
        .unwrap();

    let seen = server.seen();
    let posts: Vec<&Seen> = seen.iter().filter(|s| s.method == "POST").collect();
    assert_eq!(posts.len(), 5);
    for p in &posts {
        assert_eq!(p.header("a2a-version"), Some("1.0"));
        assert_eq!(p.header("a2a-hop"), Some("2"));
        assert_eq!(p.header("content-type"), Some("application/json"));
    }
    assert_eq!(posts[0].header("authorization"), Some("Bearer sekrit"));
    assert_eq!(posts[4].header("authorization"), None, "other origin");
    let card_get = seen.iter().find(|s| s.method == "GET").unwrap();
    assert_eq!(
        card_get.header("authorization"),
        None,
        "cards are fetched anonymously"
    );
    assert_eq!(card_get.header("a2a-version"), Some("1.0"));
}

#[tokio::test]
async fn bodies_are_capped_while_they_arrive_and_deadlines_hold() {
    let big = "x".repeat(300 * 1024);
    let server = Server::start(Arc::new(move |req: &Seen| {
        if req.path.starts_with("/hang") {
            return Reply::Hang;
        }
        if req.path.contains("agent-card") {
            return http("200 OK", "application/json", &format!("{{\"name\":\"{big}\"}}"));
        }
        // An endless-looking stream: many events, more than the cap.
        let mut body = String::new();
        for _ in 0..200 {
            body.push_str(&format!(
                "data: {}\n\n",
                json!({"jsonrpc": "2.0", "id": 1, "result": {"statusUpdate": {"taskId": "t", "contextId": "c", "status": {"state": "TASK_STATE_WORKING", "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "y".repeat(1000)}]}}}}})
            ));
        }
        http("200 OK", "text/event-stream", &body)
    }))
    .await;
    let client = A2aClient::new(ClientSettings {
        max_stream_bytes: 50_000,
        ..ClientSettings::default()
    })
    .unwrap();
    let base = format!("http://127.0.0.1:{}", server.port);
    let err = client
        .fetch_card(&Url::parse(&base).unwrap(), false, Duration::from_secs(5))
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            ClientError::TooLarge {
                what: "agent card",
                ..
            }
        ),
        "{err}"
    );
    let mut s = client
        .send_streaming_message(&endpoint(&format!("{base}/rpc")), &request("x"))
        .await
        .unwrap();
    let mut ok = 0;
    let mut last = None;
    while let Some(ev) = s.next().await {
        match ev {
            Ok(_) => ok += 1,
            Err(e) => last = Some(e),
        }
    }
    assert!(ok > 0 && ok < 200, "{ok} events before the cap");
    assert!(
        matches!(last, Some(ClientError::TooLarge { what: "stream", .. })),
        "{last:?}"
    );
    let mut ep = endpoint(&format!("{base}/hang"));
    ep.timeout = Duration::from_millis(300);
    let err = client.send_message(&ep, &request("x")).await.unwrap_err();
    assert!(matches!(err, ClientError::Timeout(_)), "{err}");
}

#[tokio::test]
async fn the_legacy_card_path_is_tried_after_404_and_errors_are_plain() {
    let server = Server::start(Arc::new(|req: &Seen| match req.path.as_str() {
        "/.well-known/agent.json" => http(
            "200 OK",
            "application/json",
            &card("http://127.0.0.1:1").to_string(),
        ),
        "/rpc" => http(
            "200 OK",
            "application/json",
            &json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32004, "message": "Streaming is not supported"}}).to_string(),
        ),
        _ => http("404 Not Found", "text/plain", "not here"),
    }))
    .await;
    let client = client_with(StaticLookup::default(), true);
    let base = format!("http://127.0.0.1:{}", server.port);
    let fetched = client
        .fetch_card(&Url::parse(&base).unwrap(), false, Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(fetched.url.path(), "/.well-known/agent.json");
    let err = client
        .send_streaming_message(&endpoint(&format!("{base}/rpc")), &request("x"))
        .await
        .err()
        .unwrap();
    assert!(err.streaming_unsupported(), "{err}");
    let err = client
        .send_message(&endpoint(&format!("{base}/missing")), &request("x"))
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "the peer answered HTTP 404: not here");
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let err = client
        .send_message(
            &endpoint(&format!("http://127.0.0.1:{closed}/")),
            &request("x"),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, ClientError::Connect(_)), "{err}");
}

#[test]
fn card_urls_follow_the_base_path() {
    let u = |s: &str| Url::parse(s).unwrap();
    let paths =
        |s: &str| -> Vec<String> { card_urls(&u(s)).iter().map(|x| x.to_string()).collect() };
    assert_eq!(
        paths("http://127.0.0.1:9900/api/v1/agents/echo/"),
        [
            "http://127.0.0.1:9900/api/v1/agents/echo/.well-known/agent-card.json",
            "http://127.0.0.1:9900/api/v1/agents/echo/.well-known/agent.json"
        ]
    );
    assert_eq!(
        paths("https://a.example/card.json?x=1"),
        ["https://a.example/card.json"]
    );
}

#[test]
fn a_bad_ca_file_is_reported_at_start() {
    let dir = std::env::temp_dir().join(format!("sextant-ca-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ca.pem");
    std::fs::write(&path, "not a certificate").unwrap();
    let err = A2aClient::new(ClientSettings {
        ca_file: Some(path.clone()),
        ..ClientSettings::default()
    })
    .unwrap_err();
    assert!(err.to_string().contains("ca.pem"), "{err}");
    let missing = A2aClient::new(ClientSettings {
        ca_file: Some(dir.join("missing.pem")),
        ..ClientSettings::default()
    })
    .unwrap_err();
    assert!(missing.to_string().contains("cannot read"), "{missing}");
    let _ = std::fs::remove_dir_all(&dir);
}
