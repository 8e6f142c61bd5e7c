//! Wire snapshots (insta): the exact JSON shapes Sextant puts on the A2A wire, taken from a real
//! server, so that any change to a shape shows up as a reviewed diff of `snapshots/*.snap`
//! (README, Testing). The shapes: the public Agent Card (1.0), the completed Task a blocking
//! `SendMessage` returns, the frames of a `SendStreamingMessage` stream, and the JSON-RPC errors
//! for an unknown method, bad params and an unknown task.
//!
//! Values that differ on every run are replaced by labels naming what they were: whole fields
//! (ids Sextant generates, timestamps, card signatures) by insta redactions, and the server's
//! port and the Session id inside links and texts by [`scrub`]. Everything else, field names,
//! nesting, enum spellings, error codes and messages, is compared exactly. Tests run on a fresh
//! data dir each, so journal seqs (the SSE ids) are deterministic and stay in.

use insta::{Settings, assert_json_snapshot};
use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::*;

/// The request id every call here uses, so the echoed id needs no redaction.
const RPC_ID: &str = "snap-1";

/// A JSON-RPC call to `agent` with [`RPC_ID`]; the whole response.
async fn call(app: &TestApp, agent: &str, method: &str, params: Value) -> Value {
    let body = json!({ "jsonrpc": "2.0", "id": RPC_ID, "method": method, "params": params });
    json_body(
        app.post_rpc(Who::Anon, agent, &[], body).await,
        StatusCode::OK,
    )
    .await
}

/// Snapshot settings for this module: maps sorted (serde_json's order is not the wire's
/// contract) and snapshot files named by the test alone (`snapshots/<name>.snap`).
fn settings() -> Settings {
    let mut s = Settings::clone_current();
    s.set_sort_maps(true);
    s.set_prepend_module_to_snapshot(false);
    s
}

/// `v` with, inside every string, this server's URL replaced by `http://[sextant]` (the path
/// after it is wire shape, the port is not), its bare `host:port` (the gRPC interface's) by
/// `[sextant]`, and each `(value, label)` of `inside` by its label: ids that also appear
/// inside links and texts, where a field redaction cannot reach.
fn scrub(app: &TestApp, v: Value, inside: &[(&str, &str)]) -> Value {
    match v {
        Value::String(text) => {
            let mut text = text.replace(&app.url, "http://[sextant]");
            if let Some(host) = app.url.strip_prefix("http://") {
                text = text.replace(host, "[sextant]");
            }
            for (value, label) in inside {
                text = text.replace(value, label);
            }
            Value::String(text)
        }
        Value::Array(items) => {
            Value::Array(items.into_iter().map(|i| scrub(app, i, inside)).collect())
        }
        Value::Object(fields) => Value::Object(
            fields
                .into_iter()
                .map(|(k, i)| (k, scrub(app, i, inside)))
                .collect(),
        ),
        other => other,
    }
}

/// The Session id a task's metadata names (it also appears in links and link texts).
fn session_id(task: &Value) -> String {
    task["metadata"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("no metadata.sessionId: {task}"))
        .to_string()
}

/// Snapshots the default Agent's card as `path` serves it, as `snapshots/<name>.snap`.
async fn card_snapshot(path: &str, name: &str) {
    let app = TestApp::spawn().await;
    let (status, _, card) = app.get_json(path, false).await;
    assert_eq!(status, StatusCode::OK);
    let card = scrub(&app, card, &[]);
    settings().bind(|| {
        assert_json_snapshot!(name, card, {
            // A JWS over the card with a key made for this data dir.
            ".signatures[].protected" => "[jws protected header]",
            ".signatures[].signature" => "[jws signature]",
        });
    });
    app.shutdown().await;
}

#[tokio::test]
/// The card a 1.0 client reads (it names the version; here in the query, as A2A allows).
async fn public_agent_card() {
    card_snapshot("/.well-known/agent-card.json?A2A-Version=1.0", "agent_card").await;
}

#[tokio::test]
/// The card a request without a version gets: the 1.0 card plus the fields 0.3 clients read.
async fn public_agent_card_without_a_version() {
    card_snapshot(
        "/.well-known/agent-card.json",
        "agent_card_without_a_version",
    )
    .await;
}

#[tokio::test]
async fn send_message_returns_the_completed_task() {
    let app = TestApp::spawn().await;
    let r = call(
        &app,
        "echo",
        "SendMessage",
        json!({ "message": msg_with_id("m-snap-1", "hello") }),
    )
    .await;
    let session = session_id(&r["result"]["task"]);
    let r = scrub(&app, r, &[(&session, "[session id]")]);
    settings().bind(|| {
        assert_json_snapshot!("send_message_task", r, {
            ".result.task.id" => "[task id]",
            ".result.task.contextId" => "[context id]",
            ".result.task.status.timestamp" => "[timestamp]",
            ".result.task.status.message.messageId" => "[message id]",
            ".result.task.status.message.taskId" => "[task id]",
            ".result.task.status.message.contextId" => "[context id]",
            ".result.task.history[].taskId" => "[task id]",
            ".result.task.history[].contextId" => "[context id]",
            ".result.task.artifacts[].artifactId" => "[artifact id]",
            ".result.task.metadata.transcript[].at" => "[timestamp]",
            ".result.task.metadata.transcript[].taskId" => "[task id]",
        });
    });
    app.shutdown().await;
}

#[tokio::test]
async fn send_streaming_message_frames() {
    let app = TestApp::spawn().await;
    let body = json!({
        "jsonrpc": "2.0", "id": RPC_ID, "method": "SendStreamingMessage",
        "params": { "message": msg_with_id("m-snap-2", "stream me") },
    });
    let frames = Sse::from_response(app.post_rpc(Who::Anon, "echo", &[], body).await)
        .rest()
        .await;
    let first = frames.first().map(|f| f.json()).unwrap_or_default();
    let session = session_id(&first["result"]["task"]);
    // Each frame as it is on the wire: its SSE id and event name, and its data as JSON.
    let frames: Vec<Value> = frames
        .iter()
        .map(|f| json!({ "id": f.id, "event": f.event, "data": f.json() }))
        .collect();
    let frames = scrub(&app, Value::Array(frames), &[(&session, "[session id]")]);
    settings().bind(|| {
        assert_json_snapshot!("send_streaming_message_frames", frames, {
            "[].data.result.**.taskId" => "[task id]",
            "[].data.result.**.contextId" => "[context id]",
            "[].data.result.task.id" => "[task id]",
            "[].data.result.**.timestamp" => "[timestamp]",
            "[].data.result.**.messageId" => "[message id]",
            "[].data.result.**.artifactId" => "[artifact id]",
        });
    });
    app.shutdown().await;
}

#[tokio::test]
async fn json_rpc_errors() {
    let app = TestApp::spawn().await;
    let unknown_method = call(&app, "echo", "NoSuchMethod", json!({})).await;
    let bad_params = call(&app, "echo", "SendMessage", json!({ "message": 5 })).await;
    let task_not_found = call(&app, "echo", "GetTask", json!({ "id": "no-such-task" })).await;
    settings().bind(|| {
        assert_json_snapshot!("error_unknown_method", unknown_method);
        assert_json_snapshot!("error_bad_params", bad_params);
        assert_json_snapshot!("error_task_not_found", task_not_found);
    });
    app.shutdown().await;
}
