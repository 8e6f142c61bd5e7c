//! Traces over OTLP (issue #17): one inbound A2A call with a `traceparent` to an `a2a`
//! gateway Agent produces linked spans, through admission, the turn and its engine, to the
//! outbound call to the peer, which receives the same trace; exported over OTLP/HTTP to an
//! in-process collector (an axum route decoding `ExportTraceServiceRequest`). With no
//! endpoint configured nothing is exported, no exporter runs and nothing is sent on.
//!
//! A process has one global tracing subscriber, so the Sextant under test runs in a child
//! process: this test binary again, running only [`serve_traced`], which installs the
//! subscriber exactly as `sextant serve` does (`sextant::telemetry`).

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use prost::Message as _;
use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::sync::Notify;

use crate::support::fake_peer::{Behaviour, Fake, start_fake};
use crate::support::*;

const SERVE_DIR: &str = "SEXTANT_E2E_TRACE_DIR";

/// The caller's trace: its trace id and the id of the caller's span.
const CALLER_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN: &str = "00f067aa0ba902b7";

/// A message text that must never reach a span.
const PROMPT: &str = "prompt-text-that-stays-out-of-spans";

const GATEWAY: &str = r#"
[[agents]]
id = "gateway"
name = "Gateway"
description = "Forwards every turn to the peer named fake"
engine = { kind = "a2a", peer = "fake" }
"#;

/// Not a test of its own: the traced Sextant, started by the tests below in a child process.
/// Its traces go where the standard OTLP variables in its environment say (none: off).
#[tokio::test]
#[ignore = "run by the trace tests in a child process"]
async fn serve_traced() {
    let Some(dir) = std::env::var_os(SERVE_DIR) else {
        return;
    };
    let endpoint = sextant::telemetry::traces_endpoint(None, |k| std::env::var(k).ok())
        .expect("a valid endpoint");
    let _telemetry = sextant::telemetry::init(endpoint.as_ref()).expect("subscriber");
    let running = sextant::start(loopback(std::path::Path::new(&dir)))
        .await
        .expect("sextant starts");
    println!("SEXTANT_URL={}", running.url());
    std::future::pending::<()>().await;
}

/// One exported span, flattened.
#[derive(Debug, Clone)]
struct Got {
    name: String,
    trace_id: String,
    span_id: String,
    parent: String,
    kind: i32,
    attrs: Vec<(String, String)>,
    service: String,
}

impl Got {
    fn attr(&self, key: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

fn value_text(v: &Option<AnyValue>) -> String {
    match v.as_ref().and_then(|v| v.value.as_ref()) {
        Some(any_value::Value::StringValue(s)) => s.clone(),
        Some(any_value::Value::IntValue(i)) => i.to_string(),
        Some(any_value::Value::BoolValue(b)) => b.to_string(),
        Some(any_value::Value::DoubleValue(d)) => d.to_string(),
        Some(other) => format!("{other:?}"),
        None => String::new(),
    }
}

fn flat(attrs: &[KeyValue]) -> Vec<(String, String)> {
    attrs
        .iter()
        .map(|kv| (kv.key.clone(), value_text(&kv.value)))
        .collect()
}

/// The in-process OTLP/HTTP collector: every span it was sent.
#[derive(Clone, Default)]
struct Collector {
    spans: Arc<Mutex<Vec<Got>>>,
    arrived: Arc<Notify>,
}

impl Collector {
    async fn start() -> (Collector, String) {
        let c = Collector::default();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let app = Router::new()
            .route("/v1/traces", post(export))
            .with_state(c.clone());
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        (c, url)
    }

    /// Waits (bounded) until a span of every name in `names` has arrived; all spans then.
    async fn wait_for(&self, names: &[&str]) -> Vec<Got> {
        let deadline = tokio::time::Instant::now() + STEP;
        loop {
            let notified = self.arrived.notified();
            let spans = self.spans.lock().unwrap().clone();
            if names.iter().all(|n| spans.iter().any(|s| s.name == *n)) {
                return spans;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                let seen: Vec<_> = spans.iter().map(|s| s.name.clone()).collect();
                panic!("the collector got only {seen:?}, waiting for {names:?}");
            }
        }
    }
}

async fn export(State(c): State<Collector>, headers: HeaderMap, body: Bytes) -> Response {
    assert_eq!(
        headers.get("content-type").and_then(|v| v.to_str().ok()),
        Some("application/x-protobuf"),
        "OTLP/HTTP with protobuf bodies"
    );
    let req = ExportTraceServiceRequest::decode(body).expect("an ExportTraceServiceRequest");
    let mut got = Vec::new();
    for rs in req.resource_spans {
        let resource = rs.resource.map(|r| flat(&r.attributes)).unwrap_or_default();
        let service = resource
            .iter()
            .find(|(k, _)| k == "service.name")
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        for ss in rs.scope_spans {
            for s in ss.spans {
                got.push(Got {
                    name: s.name,
                    trace_id: hex(&s.trace_id),
                    span_id: hex(&s.span_id),
                    parent: hex(&s.parent_span_id),
                    kind: s.kind,
                    attrs: flat(&s.attributes),
                    service: service.clone(),
                });
            }
        }
    }
    c.spans.lock().unwrap().extend(got);
    c.arrived.notify_waiters();
    (
        [("content-type", "application/x-protobuf")],
        ExportTraceServiceResponse::default().encode_to_vec(),
    )
        .into_response()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The peer the gateway calls: the shared fake, answering `traced peer: <text>` at once.
async fn start_peer() -> (Fake, String) {
    let peer = start_fake("traced peer", json!([]), false, 0, Behaviour::Normal).await;
    let url = peer.url();
    (peer, url)
}

/// The `traceparent` of every call the peer got (`None`: the call had none).
fn traceparents(peer: &Fake) -> Vec<Option<String>> {
    peer.seen().into_iter().map(|s| s.traceparent).collect()
}

/// A child Sextant serving the gateway Agent on `dir`, with `otlp` (a collector base URL) as its
/// `OTEL_EXPORTER_OTLP_ENDPOINT`, or no OTLP variable at all; its process, URL and token.
async fn traced_sextant(
    dir: &std::path::Path,
    otlp: Option<&str>,
) -> (std::process::Child, String, String) {
    std::fs::write(dir.join("agents.toml"), GATEWAY).unwrap();
    start_child(dir, otlp).await
}

/// A child Sextant on `dir` as it is (see [`traced_sextant`]).
async fn start_child(
    dir: &std::path::Path,
    otlp: Option<&str>,
) -> (std::process::Child, String, String) {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.env(SERVE_DIR, dir);
    for var in [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "SEXTANT_OTLP_ENDPOINT",
    ] {
        cmd.env_remove(var);
    }
    if let Some(url) = otlp {
        cmd.env("OTEL_EXPORTER_OTLP_ENDPOINT", url)
            // Export each batch within 100 ms rather than the SDK's 5 s.
            .env("OTEL_BSP_SCHEDULE_DELAY", "100");
    }
    let (child, url) = child_sextant_with("traces::serve_traced", cmd).await;
    let token = std::fs::read_to_string(dir.join("token"))
        .unwrap()
        .trim()
        .to_string();
    (child, url, token)
}

/// Registers the peer as `fake` (the gateway's peer) through the console API.
async fn register_peer(http: &reqwest::Client, url: &str, token: &str, peer_url: &str) {
    let resp = send(
        http.post(format!("{url}/api/v1/peers"))
            .bearer_auth(token)
            .header("content-type", "application/json")
            .body(json!({"name": "fake", "url": peer_url}).to_string()),
    )
    .await;
    let status = resp.status();
    assert_eq!(
        status,
        StatusCode::CREATED,
        "{}",
        resp.text().await.unwrap()
    );
}

/// A blocking SendMessage to the gateway with `headers`; the task.
async fn call_gateway(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    headers: &[(&str, &str)],
) -> Value {
    let mut req = http
        .post(format!("{url}/api/v1/agents/gateway/a2a"))
        .bearer_auth(token)
        .header("content-type", "application/json")
        .header("A2A-Version", "1.0");
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                      "params": {"message": msg(PROMPT)}});
    let v = json_body(send(req.body(body.to_string())).await, StatusCode::OK).await;
    let task = v["result"]["task"].clone();
    assert_eq!(state(&task), "TASK_STATE_COMPLETED", "{v}");
    task
}

/// The names of a process's threads (Linux truncates them to 15 bytes).
fn threads(pid: u32) -> Vec<String> {
    let mut names = Vec::new();
    for t in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let t = t.unwrap();
        if let Ok(comm) = std::fs::read_to_string(t.path().join("comm")) {
            names.push(comm.trim().to_string());
        }
    }
    names
}

/// The SDK's batch span processor runs on a thread named
/// "OpenTelemetry.Traces.BatchProcessor".
fn exporter_runs(pid: u32) -> bool {
    threads(pid).iter().any(|n| n.starts_with("OpenTelemetry"))
}

fn one<'a>(spans: &'a [Got], name: &str) -> &'a Got {
    let found: Vec<_> = spans.iter().filter(|s| s.name == name).collect();
    assert_eq!(found.len(), 1, "one {name} span: {spans:#?}");
    found[0]
}

#[tokio::test]
async fn an_inbound_traceparent_links_admission_turn_engine_and_the_outbound_call() {
    let (collector, otlp) = Collector::start().await;
    let (peer, peer_url) = start_peer().await;
    let dir = tempfile::tempdir().unwrap();
    let (mut child, url, token) = traced_sextant(dir.path(), Some(&otlp)).await;
    let http = client();
    register_peer(&http, &url, &token, &peer_url).await;

    let caller = format!("00-{CALLER_TRACE}-{CALLER_SPAN}-01");
    let task = call_gateway(&http, &url, &token, &[("traceparent", &caller)]).await;
    assert!(task.to_string().contains("traced peer: "), "{task}");

    let spans = collector
        .wait_for(&[
            "a2a_inbound_call",
            "admission",
            "turn",
            "engine",
            "a2a_outbound_call",
        ])
        .await;
    let inbound = one(&spans, "a2a_inbound_call");
    let admission = one(&spans, "admission");
    let turn = one(&spans, "turn");
    let engine = one(&spans, "engine");
    let outbound = one(&spans, "a2a_outbound_call");
    // One trace, the caller's, and each span the child of the one before.
    for s in [inbound, admission, turn, engine, outbound] {
        assert_eq!(s.trace_id, CALLER_TRACE, "{s:#?}");
        assert_eq!(s.service, "sextant", "{s:#?}");
    }
    assert_eq!(
        inbound.parent, CALLER_SPAN,
        "the caller's span is the parent"
    );
    assert_eq!(admission.parent, inbound.span_id);
    assert_eq!(turn.parent, admission.span_id, "linked across the hand-off");
    assert_eq!(engine.parent, turn.span_id);
    assert_eq!(outbound.parent, engine.span_id);
    // SPAN_KIND_SERVER = 2, SPAN_KIND_CLIENT = 3.
    assert_eq!((inbound.kind, outbound.kind), (2, 3));

    // The peer continues the same trace, under the outbound call's span.
    assert_eq!(
        traceparents(&peer),
        vec![Some(format!("00-{CALLER_TRACE}-{}-01", outbound.span_id))]
    );

    // Ids, the agent, the engine kind and states; never the message text.
    let task_id = task["id"].as_str().unwrap();
    assert_eq!(admission.attr("sextant.task_id"), Some(task_id));
    assert_eq!(turn.attr("sextant.task_id"), Some(task_id));
    assert_eq!(turn.attr("sextant.agent_id"), Some("gateway"));
    assert_eq!(engine.attr("sextant.engine"), Some("a2a"));
    assert_eq!(turn.attr("sextant.outcome"), Some("completed"));
    assert_eq!(inbound.attr("sextant.task_state"), Some("completed"));
    assert_eq!(outbound.attr("rpc.method"), Some("SendMessage"));
    for s in &spans {
        for (k, v) in &s.attrs {
            assert!(!v.contains(PROMPT), "{} {k} = {v}", s.name);
        }
    }
    // What admission stored for the turn is its own span, in the caller's trace.
    let history = task["history"].as_array().cloned().unwrap_or_default();
    let stored = history
        .iter()
        .find_map(|m| m["metadata"]["sextantTraceparent"].as_str())
        .map(String::from);
    assert_eq!(
        stored,
        Some(format!("00-{CALLER_TRACE}-{}-01", admission.span_id))
    );
    assert!(exporter_runs(child.id()), "{:?}", threads(child.id()));

    // A malformed traceparent is ignored: the call starts a trace of its own.
    let before = spans.len();
    let bad = format!("00-{}-{CALLER_SPAN}-01", CALLER_TRACE.to_uppercase());
    call_gateway(&http, &url, &token, &[("traceparent", &bad)]).await;
    let deadline = tokio::time::Instant::now() + STEP;
    let fresh = loop {
        let notified = collector.arrived.notified();
        let all = collector.spans.lock().unwrap().clone();
        if let Some(s) = all[before..].iter().find(|s| s.name == "a2a_inbound_call") {
            break s.clone();
        }
        assert!(
            tokio::time::timeout_at(deadline, notified).await.is_ok(),
            "no span for the second call"
        );
    };
    assert_ne!(fresh.trace_id, CALLER_TRACE);
    assert_eq!(fresh.parent, "", "a root span");
    let last = traceparents(&peer)
        .last()
        .cloned()
        .flatten()
        .unwrap_or_default();
    assert!(last.contains(&fresh.trace_id), "{last}");

    child.kill().unwrap();
    child.wait().unwrap();
}

/// A non-blocking SendMessage to `agent` in context `ctx`, with the caller's trace `trace_id`;
/// the task id.
async fn submit(
    http: &reqwest::Client,
    url: &str,
    token: &str,
    agent: &str,
    ctx: &str,
    text: &str,
    trace_id: &str,
) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": with(msg(text), json!({"contextId": ctx})),
        "configuration": {"returnImmediately": true}}});
    let resp = send(
        http.post(format!("{url}/api/v1/agents/{agent}/a2a"))
            .bearer_auth(token)
            .header("content-type", "application/json")
            .header("A2A-Version", "1.0")
            .header("traceparent", format!("00-{trace_id}-{CALLER_SPAN}-01"))
            .body(body.to_string()),
    )
    .await;
    let v = json_body(resp, StatusCode::OK).await;
    v["result"]["task"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {v}"))
        .to_string()
}

/// Waits (bounded) until a span named `name` of task `task_id` has arrived.
async fn span_of(c: &Collector, name: &str, task_id: &str) -> Got {
    let deadline = tokio::time::Instant::now() + STEP;
    loop {
        let notified = c.arrived.notified();
        let found = c
            .spans
            .lock()
            .unwrap()
            .iter()
            .find(|s| s.name == name && s.attr("sextant.task_id") == Some(task_id))
            .cloned();
        if let Some(s) = found {
            return s;
        }
        if tokio::time::timeout_at(deadline, notified).await.is_err() {
            let seen: Vec<_> = c
                .spans
                .lock()
                .unwrap()
                .iter()
                .map(|s| format!("{} {:?}", s.name, s.attr("sextant.task_id")))
                .collect();
            panic!("no {name} span for {task_id}; the collector got {seen:?}");
        }
    }
}

/// A task admitted before a `kill -9` and run by the next Sextant: its turn is still the
/// child of its admission, in the caller's trace (the context is in the journal).
#[tokio::test]
async fn a_turn_run_after_a_restart_continues_its_admissions_trace() {
    const QUEUED_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
    let (collector, otlp) = Collector::start().await;
    let dir = tempfile::tempdir().unwrap();
    // The first turn holds the Session's worker, so the next message waits in its queue.
    let script = format!(
        "read -r turn; if [ ! -e {d}/held ]; then touch {d}/held; sleep 60; fi; echo ok",
        d = dir.path().display()
    );
    std::fs::write(dir.path().join("agents.toml"), exec_agent("q", &script)).unwrap();
    let (mut child, url, token) = start_child(dir.path(), Some(&otlp)).await;
    let http = client();
    let ctx = uid("ctx");
    let slow = submit(&http, &url, &token, "q", &ctx, "slow", CALLER_TRACE).await;
    span_of(&collector, "admission", &slow).await;
    let queued = submit(&http, &url, &token, "q", &ctx, "quick", QUEUED_TRACE).await;
    let admission = span_of(&collector, "admission", &queued).await;
    assert_eq!(admission.trace_id, QUEUED_TRACE);
    child.kill().unwrap();
    child.wait().unwrap();

    // The next Sextant delivers the queued input at start.
    let (mut child, _, _) = start_child(dir.path(), Some(&otlp)).await;
    let turn = span_of(&collector, "turn", &queued).await;
    assert_eq!(turn.trace_id, QUEUED_TRACE, "{turn:#?}");
    assert_eq!(turn.parent, admission.span_id, "{turn:#?}");
    assert_eq!(turn.attr("sextant.outcome"), Some("completed"));
    child.kill().unwrap();
    child.wait().unwrap();
}

#[tokio::test]
async fn with_no_endpoint_nothing_is_exported_or_sent_on() {
    let (peer, peer_url) = start_peer().await;
    let dir = tempfile::tempdir().unwrap();
    let (mut child, url, token) = traced_sextant(dir.path(), None).await;
    let http = client();
    register_peer(&http, &url, &token, &peer_url).await;

    let caller = format!("00-{CALLER_TRACE}-{CALLER_SPAN}-01");
    let task = call_gateway(&http, &url, &token, &[("traceparent", &caller)]).await;
    assert!(task.to_string().contains("traced peer: "), "{task}");
    // No exporter thread, no trace context stored with the input, none sent to the peer.
    assert!(!exporter_runs(child.id()), "{:?}", threads(child.id()));
    assert!(
        !task.to_string().contains("sextantTraceparent"),
        "nothing stored: {task}"
    );
    assert_eq!(traceparents(&peer), vec![None]);

    child.kill().unwrap();
    child.wait().unwrap();
}
