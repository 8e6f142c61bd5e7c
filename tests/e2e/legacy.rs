//! A2A 0.3 method aliases, answered in 0.3 JSON.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::*;

const A2A: &str = "/api/v1/agents/echo/a2a";

fn v03_message(text: &str) -> Value {
    json!({
        "kind": "message",
        "messageId": uid("v03"),
        "role": "user",
        "parts": [{ "kind": "text", "text": text }],
    })
}

async fn v03_call(app: &TestApp, method: &str, params: Value) -> Value {
    let resp = app
        .post_raw(
            A2A,
            &[("Content-Type", "application/json"), ("A2A-Version", "0.3")],
            json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }).to_string(),
        )
        .await;
    json_body(resp, StatusCode::OK).await
}

#[tokio::test]
async fn message_send_returns_a_bare_0_3_task_and_tasks_get_reads_it() {
    let app = TestApp::spawn().await;
    let m = v03_message("old school");
    let r = v03_call(&app, "message/send", json!({ "message": m })).await;
    let task = &r["result"];
    assert!(
        task.get("task").is_none(),
        "0.3 results are not wrapped: {r}"
    );
    assert_eq!(task["kind"], "task", "{r}");
    assert_eq!(task["status"]["state"], "completed", "{r}");
    assert_eq!(task["artifacts"][0]["parts"][0]["kind"], "text");
    assert_eq!(task["artifacts"][0]["parts"][0]["text"], "old school");
    let user = &task["history"][0];
    assert_eq!(user["kind"], "message");
    assert_eq!(user["role"], "user");
    assert_eq!(user["messageId"], m["messageId"]);

    let id = task["id"].as_str().expect("id");
    let got = v03_call(&app, "tasks/get", json!({ "id": id })).await;
    assert_eq!(got["result"]["kind"], "task", "{got}");
    assert_eq!(got["result"]["id"], id);
    assert_eq!(got["result"]["status"]["state"], "completed");

    // The same task through the 1.0 method name, in 1.0 JSON.
    let v1 = app.get_task_as(Who::Anon, "echo", id).await;
    assert_eq!(state(&v1), "TASK_STATE_COMPLETED");
    assert!(v1.get("kind").is_none(), "1.0 JSON has no kind: {v1}");
    app.shutdown().await;
}

#[tokio::test]
async fn message_send_blocking_false_returns_at_once() {
    let app = TestApp::spawn().await;
    let r = v03_call(
        &app,
        "message/send",
        json!({ "message": v03_message("quick"), "configuration": { "blocking": false } }),
    )
    .await;
    let task = &r["result"];
    assert_eq!(task["kind"], "task", "{r}");
    let s = task["status"]["state"].as_str().expect("state");
    assert!(["submitted", "working", "completed"].contains(&s), "{r}");
    let done = app
        .wait_terminal(Who::Anon, "echo", task["id"].as_str().expect("id"))
        .await;
    assert_eq!(state(&done), "TASK_STATE_COMPLETED");
    app.shutdown().await;
}

#[tokio::test]
async fn message_stream_sends_0_3_events_ending_with_final_true() {
    let app = TestApp::spawn().await;
    let resp = app
        .post_raw(
            A2A,
            &[("Content-Type", "application/json")],
            json!({ "jsonrpc": "2.0", "id": 9, "method": "message/stream",
                    "params": { "message": v03_message("streamed") } })
            .to_string(),
        )
        .await;
    let frames = Sse::from_response(resp).rest().await;
    let results: Vec<Value> = frames.iter().map(|f| f.json()["result"].clone()).collect();
    assert!(results.len() >= 2, "{results:?}");
    assert_eq!(results[0]["kind"], "task", "{results:?}");
    for r in &results {
        assert!(r["kind"].is_string(), "every 0.3 event has a kind: {r}");
    }
    let status: Vec<&Value> = results
        .iter()
        .filter(|r| r["kind"] == "status-update")
        .collect();
    assert!(!status.is_empty(), "{results:?}");
    let last = results.last().expect("a last event");
    assert_eq!(last["kind"], "status-update", "{results:?}");
    assert_eq!(last["final"], true);
    assert_eq!(last["status"]["state"], "completed");
    for s in &status[..status.len() - 1] {
        assert_eq!(s["final"], false, "only the last status is final: {s}");
    }
    app.shutdown().await;
}
