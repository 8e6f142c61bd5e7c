//! Dialects real clients send (issue #35): ProtoJSON as the spec defines it, enums by number
//! as well as by name and fields by their proto (snake_case) names as well as their JSON
//! names, on the JSON-RPC and HTTP+JSON bindings alike; and JSON-RPC at `POST /` and
//! `POST /a2a` for the default Agent.

use reqwest::Method;
use reqwest::header::CONTENT_TYPE;
use serde_json::{Value, json};

use crate::support::*;

/// What Hermes sends: the role as its enum number (ROLE_USER = 1), the message's ids and
/// the configuration's fields by their proto names.
fn hermes_params(message_id: &str, context_id: &str, text: &str) -> Value {
    json!({
        "message": {
            "message_id": message_id,
            "context_id": context_id,
            "role": 1,
            "parts": [{ "text": text, "media_type": "text/plain" }],
        },
        "configuration": {
            "accepted_output_modes": ["text/plain"],
            "history_length": 5,
            "return_immediately": false,
        },
    })
}

/// The task a Hermes-style send answered with: completed by `echo`, in the context it named,
/// its history in canonical ProtoJSON (names, camelCase).
fn assert_echoed(task: &Value, message_id: &str, context_id: &str, text: &str) {
    assert_eq!(state(task), "TASK_STATE_COMPLETED", "{task}");
    assert_eq!(task["contextId"], context_id, "{task}");
    assert_eq!(task["artifacts"][0]["parts"][0]["text"], text, "{task}");
    let user = task["history"]
        .as_array()
        .and_then(|h| h.iter().find(|m| m["messageId"] == message_id))
        .unwrap_or_else(|| panic!("the message is in the history: {task}"));
    assert_eq!(user["role"], "ROLE_USER", "answers name the enum: {task}");
    assert_eq!(user["contextId"], context_id, "{task}");
    assert!(
        user.get("message_id").is_none(),
        "answers are camelCase: {task}"
    );
}

#[tokio::test]
async fn a_hermes_style_request_completes_over_json_rpc() {
    let app = TestApp::spawn().await;
    let (mid, ctx) = (uid("m"), uid("ctx"));
    let r = app
        .rpc(
            "echo",
            "SendMessage",
            hermes_params(&mid, &ctx, "hi hermes"),
        )
        .await;
    assert!(r.get("error").is_none(), "{r}");
    let task = &r["result"]["task"];
    assert_echoed(task, &mid, &ctx, "hi hermes");
    let task_id = task["id"].as_str().expect("task id");

    // GetTask with its proto field names; ListTasks filtering on a state by its number
    // (TASK_STATE_COMPLETED = 3) and on a context by its proto name.
    let got = app
        .rpc(
            "echo",
            "GetTask",
            json!({ "id": task_id, "history_length": 1 }),
        )
        .await;
    assert_eq!(got["result"]["id"], task_id, "{got}");
    assert_eq!(got["result"]["history"].as_array().map(Vec::len), Some(1));
    let listed = app
        .rpc(
            "echo",
            "ListTasks",
            json!({ "context_id": ctx, "status": 3, "page_size": 10 }),
        )
        .await;
    assert_eq!(listed["result"]["tasks"][0]["id"], task_id, "{listed}");
    let working = app
        .rpc(
            "echo",
            "ListTasks",
            json!({ "context_id": ctx, "status": 2 }),
        )
        .await;
    assert_eq!(working["result"]["tasks"], json!([]), "{working}");

    // A number the enum does not have is refused, naming the field.
    let bad = app
        .rpc(
            "echo",
            "SendMessage",
            json!({ "message": { "message_id": uid("m"), "role": 7, "parts": [{ "text": "x" }] } }),
        )
        .await;
    let e = assert_rpc_error(&bad, -32602);
    assert_eq!(
        e["data"][1]["fieldViolations"][0]["field"], "message.role",
        "{bad}"
    );
    let bad = app.rpc("echo", "ListTasks", json!({ "status": 42 })).await;
    let e = assert_rpc_error(&bad, -32602);
    assert_eq!(
        e["data"][1]["fieldViolations"][0]["field"], "status",
        "{bad}"
    );
    app.shutdown().await;
}

#[tokio::test]
async fn a_hermes_style_request_completes_over_http_json() {
    let app = TestApp::spawn().await;
    let base = format!("{}/api/v1/agents/echo", app.url);
    let (mid, ctx) = (uid("m"), uid("ctx"));
    let resp = send(
        app.client
            .post(format!("{base}/message:send"))
            .header(CONTENT_TYPE, "application/json")
            .header("A2A-Version", "1.0")
            .body(hermes_params(&mid, &ctx, "hi over rest").to_string()),
    )
    .await;
    let (status, _, body) = json_or_null(resp).await;
    assert_eq!(status, reqwest::StatusCode::OK, "{body}");
    let task = &body["task"];
    assert_echoed(task, &mid, &ctx, "hi over rest");
    let task_id = task["id"].as_str().expect("task id");

    // Query parameters by their proto names, the state by its number.
    let get = |path: String| {
        let req = app
            .client
            .request(Method::GET, format!("{base}{path}"))
            .header("A2A-Version", "1.0");
        async move { json_or_null(send(req).await).await }
    };
    let (status, _, got) = get(format!("/tasks/{task_id}?history_length=1")).await;
    assert_eq!(status, reqwest::StatusCode::OK, "{got}");
    assert_eq!(got["history"].as_array().map(Vec::len), Some(1), "{got}");
    let (status, _, listed) = get(format!("/tasks?context_id={ctx}&status=3")).await;
    assert_eq!(status, reqwest::StatusCode::OK, "{listed}");
    assert_eq!(listed["tasks"][0]["id"], task_id, "{listed}");
    let (status, _, bad) = get("/tasks?status=42".into()).await;
    assert_eq!(status, reqwest::StatusCode::BAD_REQUEST, "{bad}");
    assert_eq!(
        bad["error"]["details"][1]["fieldViolations"][0]["field"], "status",
        "{bad}"
    );
    app.shutdown().await;
}
