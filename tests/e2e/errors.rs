//! Every JSON-RPC error code the endpoint can produce, in the A2A error shape, and the
//! envelope's robustness against malformed input.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::*;

const A2A: &str = "/api/v1/agents/echo/a2a";
const JSON_HEADERS: &[(&str, &str)] =
    &[("Content-Type", "application/json"), ("A2A-Version", "1.0")];

/// POSTs a raw body to echo's endpoint and returns the parsed JSON-RPC response.
async fn raw(app: &TestApp, body: impl Into<reqwest::Body>) -> Value {
    json_body(app.post_raw(A2A, JSON_HEADERS, body).await, StatusCode::OK).await
}

fn call(method: &str, params: Value) -> String {
    json!({ "jsonrpc": "2.0", "id": "e-1", "method": method, "params": params }).to_string()
}

#[tokio::test]
async fn parse_error_for_invalid_json_with_null_id() {
    let app = TestApp::spawn().await;
    let r = raw(&app, r#"{"jsonrpc":"2.0","id":1,"method":"GetTask""#).await;
    assert_rpc_error(&r, -32700);
    assert_eq!(r["id"], Value::Null);
    app.shutdown().await;
}

#[tokio::test]
async fn invalid_request_for_wrong_jsonrpc_version_and_batches() {
    let app = TestApp::spawn().await;
    let r = raw(
        &app,
        json!({ "jsonrpc": "1.0", "id": 5, "method": "GetTask", "params": {"id": "x"} })
            .to_string(),
    )
    .await;
    assert_rpc_error(&r, -32600);
    assert_eq!(r["id"], 5, "the id is echoed when it could be read");

    let batch = json!([
        { "jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"} },
        { "jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": "y"} },
    ]);
    let r = raw(&app, batch.to_string()).await;
    assert!(
        r.is_object(),
        "a batch gets one error, not a batch reply: {r}"
    );
    assert_rpc_error(&r, -32600);
    app.shutdown().await;
}

#[tokio::test]
async fn method_not_found_for_unknown_methods() {
    let app = TestApp::spawn().await;
    let r = app.rpc("echo", "NoSuchMethod", json!({})).await;
    assert_rpc_error(&r, -32601);
    let r = app.rpc("echo", "tasks/explode", json!({})).await;
    assert_rpc_error(&r, -32601);
    app.shutdown().await;
}

#[tokio::test]
async fn invalid_params_for_bad_send_get_and_list_params() {
    let app = TestApp::spawn().await;
    let r = app.rpc("echo", "SendMessage", json!({})).await;
    assert_rpc_error(&r, -32602);
    let r = app
        .rpc(
            "echo",
            "GetTask",
            json!({ "id": "whatever", "historyLength": -1 }),
        )
        .await;
    assert_rpc_error(&r, -32602);
    for size in [0, 101] {
        let r = app
            .rpc("echo", "ListTasks", json!({ "pageSize": size }))
            .await;
        let err = assert_rpc_error(&r, -32602);
        assert!(
            err["message"].as_str().unwrap_or("").contains("pageSize"),
            "{err}"
        );
        assert_eq!(
            err["data"][1]["@type"], "type.googleapis.com/google.rpc.BadRequest",
            "field violations follow the ErrorInfo: {err}"
        );
    }
    // The bounds themselves are fine.
    for size in [1, 100] {
        let r = app
            .rpc("echo", "ListTasks", json!({ "pageSize": size }))
            .await;
        assert!(r.get("error").is_none(), "{r}");
    }
    assert_eq!(app.tasks_total().await, 0);
    app.shutdown().await;
}

#[tokio::test]
async fn task_not_found_for_an_unknown_task_id() {
    let app = TestApp::spawn().await;
    let r = app.rpc("echo", "GetTask", json!({ "id": "nope" })).await;
    assert_rpc_error(&r, -32001);
    app.shutdown().await;
}

#[tokio::test]
async fn cancel_task_is_not_cancelable_for_existing_and_not_found_for_unknown() {
    let app = TestApp::spawn().await;
    let t = app.send_task("echo", msg("keep me")).await;
    let r = app
        .rpc("echo", "CancelTask", json!({ "id": t["id"] }))
        .await;
    assert_rpc_error(&r, -32002);
    let after = app
        .get_task_as(Who::Anon, "echo", t["id"].as_str().expect("id"))
        .await;
    assert_eq!(state(&after), "TASK_STATE_COMPLETED");

    let r = app.rpc("echo", "CancelTask", json!({ "id": "nope" })).await;
    assert_rpc_error(&r, -32001);
    app.shutdown().await;
}

#[tokio::test]
async fn push_notification_config_methods_are_not_supported_whatever_the_params() {
    let app = TestApp::spawn().await;
    for params in [
        json!({}),
        json!({ "taskId": "t", "pushNotificationConfig": { "url": "https://example.com/hook" } }),
        json!({ "garbage": [1, 2, 3] }),
    ] {
        let r = app
            .rpc("echo", "CreateTaskPushNotificationConfig", params)
            .await;
        assert_rpc_error(&r, -32003);
    }
    for m in [
        "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs",
        "DeleteTaskPushNotificationConfig",
    ] {
        assert_rpc_error(&app.rpc("echo", m, json!({})).await, -32003);
    }
    // Asking for push in SendMessage is refused too, and journals nothing.
    let r = app
        .rpc(
            "echo",
            "SendMessage",
            json!({ "message": msg("push?"), "configuration": {
                "taskPushNotificationConfig": { "url": "https://example.com/hook" } } }),
        )
        .await;
    assert_rpc_error(&r, -32003);
    assert_eq!(app.tasks_total().await, 0);
    app.shutdown().await;
}

#[tokio::test]
async fn subscribe_to_a_completed_task_is_a_plain_json_unsupported_operation() {
    let app = TestApp::spawn().await;
    let t = app.send_task("echo", msg("finished")).await;
    let resp = app
        .post_rpc(
            Who::Anon,
            "echo",
            &[],
            json!({ "jsonrpc": "2.0", "id": 3, "method": "SubscribeToTask",
                    "params": { "id": t["id"] } }),
        )
        .await;
    assert_eq!(resp.status(), StatusCode::OK);
    let ct = content_type(resp.headers());
    assert!(ct.starts_with("application/json"), "not SSE: {ct:?}");
    let r = json_body(resp, StatusCode::OK).await;
    assert_rpc_error(&r, -32004);
    assert_eq!(r["id"], 3);
    app.shutdown().await;
}

#[tokio::test]
async fn get_extended_agent_card_needs_authentication_and_lists_the_real_skills() {
    let app = TestApp::spawn_with(true, None).await;
    // Without credentials: 401 with the scheme to use.
    let resp = app
        .post_rpc(
            Who::Anon,
            "echo",
            &[],
            json!({ "jsonrpc": "2.0", "id": 1, "method": "GetExtendedAgentCard", "params": {} }),
        )
        .await;
    assert_eq!(
        resp.headers()
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok()),
        Some("Bearer")
    );
    let r = json_body(resp, StatusCode::UNAUTHORIZED).await;
    assert_rpc_error(&r, -32600);
    // Authenticated: the full card.
    let r = app
        .rpc_as(Who::Owner, "echo", "GetExtendedAgentCard", json!({}))
        .await;
    assert_eq!(r["result"]["skills"][0]["id"], "echo", "{r}");
    assert_eq!(r["result"]["capabilities"]["extendedAgentCard"], true);
    // The conformance Agent keeps a full public card and has no extended card.
    let r = app
        .rpc_as(Who::Owner, "conformance", "GetExtendedAgentCard", json!({}))
        .await;
    assert_rpc_error(&r, -32004);
    app.shutdown().await;
}

#[tokio::test]
async fn content_type_text_plain_is_content_type_not_supported() {
    let app = TestApp::spawn().await;
    let resp = app
        .post_raw(
            A2A,
            &[("Content-Type", "text/plain"), ("A2A-Version", "1.0")],
            call("SendMessage", json!({ "message": msg("as text/plain") })),
        )
        .await;
    let r = json_body(resp, StatusCode::OK).await;
    assert_rpc_error(&r, -32005);
    assert_eq!(app.tasks_total().await, 0, "nothing was journalled");
    app.shutdown().await;
}

#[tokio::test]
async fn non_text_parts_are_content_type_not_supported_and_not_journalled() {
    let app = TestApp::spawn().await;
    let parts = [
        json!({ "data": { "k": 1 } }),
        json!({ "url": "https://example.com/a.txt", "mediaType": "text/plain" }),
        json!({ "raw": "aGVsbG8=", "filename": "a.txt" }),
    ];
    for part in parts {
        let m = json!({ "messageId": uid("m"), "role": "ROLE_USER",
                        "parts": [{ "text": "see attached" }, part] });
        let r = app
            .rpc("echo", "SendMessage", json!({ "message": m }))
            .await;
        let err = assert_rpc_error(&r, -32005);
        assert!(
            err["message"].as_str().unwrap_or("").contains("parts[1]"),
            "{err}"
        );
        let r = app
            .rpc("echo", "SendStreamingMessage", json!({ "message": m }))
            .await;
        assert_rpc_error(&r, -32005);
    }
    assert_eq!(app.tasks_total().await, 0, "nothing was journalled");
    let (_, _, sessions) = app.get_json("/api/v1/sessions", true).await;
    assert_eq!(sessions["total"], 0, "{sessions}");
    app.shutdown().await;
}

#[tokio::test]
async fn unsupported_a2a_versions_are_version_not_supported() {
    let app = TestApp::spawn().await;
    // Only the minor Sextant implements (1.0) is served: other minors, other majors and
    // digits that are not ASCII (a fullwidth 1) are refused.
    for version in [
        "99.0",
        "0.3",
        "2",
        "1.1",
        "1.7.2",
        "\u{ff11}.0",
        "1.\u{ff10}",
        "1.0.x",
    ] {
        let resp = app
            .post_raw(
                A2A,
                &[
                    ("Content-Type", "application/json"),
                    ("A2A-Version", version),
                ],
                call("SendMessage", json!({ "message": msg("versioned") })),
            )
            .await;
        let r = json_body(resp, StatusCode::OK).await;
        assert_rpc_error(&r, -32009);
    }
    // A patch of 1.0 is fine.
    let resp = app
        .post_raw(
            A2A,
            &[
                ("Content-Type", "application/json"),
                ("A2A-Version", "1.0.3"),
            ],
            call("ListTasks", json!({})),
        )
        .await;
    let r = json_body(resp, StatusCode::OK).await;
    assert!(r.get("error").is_none(), "{r}");
    assert_eq!(app.tasks_total().await, 0);
    app.shutdown().await;
}

/// Only a canonically written version is one (`1.0`, never `01.0` or `1.00`), and a request
/// naming two versions (two `A2A-Version` headers) is refused rather than served as the first.
#[tokio::test]
async fn non_canonical_or_doubled_a2a_versions_are_version_not_supported() {
    let app = TestApp::spawn().await;
    let doubled: &[(&str, &str)] = &[
        ("Content-Type", "application/json"),
        ("A2A-Version", "1.0"),
        ("A2A-Version", "9.9"),
    ];
    for headers in [
        &[
            ("Content-Type", "application/json"),
            ("A2A-Version", "01.0"),
        ][..],
        &[
            ("Content-Type", "application/json"),
            ("A2A-Version", "1.00"),
        ][..],
        &[
            ("Content-Type", "application/json"),
            ("A2A-Version", "1.0.03"),
        ][..],
        doubled,
    ] {
        let resp = app
            .post_raw(
                A2A,
                headers,
                call("SendMessage", json!({ "message": msg("versioned") })),
            )
            .await;
        let r = json_body(resp, StatusCode::OK).await;
        assert_rpc_error(&r, -32009);
    }
    assert_eq!(app.tasks_total().await, 0, "nothing was journalled");
    app.shutdown().await;
}

#[tokio::test]
async fn json_rpc_ids_come_back_exactly_as_sent() {
    let app = TestApp::spawn().await;
    for id in [
        "-9223372036854775809",
        "18446744073709551616",
        "1e400",
        "12.50",
        "\"\\u00e9t\u{e9}\"",
    ] {
        // A success, an error before the method runs, and an error from the method.
        for (method, params) in [
            ("ListTasks", "{}"),
            ("NoSuchMethod", "{}"),
            ("GetTask", r#"{"id":"missing"}"#),
        ] {
            let body =
                format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#);
            let resp = app.post_raw(A2A, JSON_HEADERS, body).await;
            assert_eq!(resp.status(), StatusCode::OK);
            let text = resp.text().await.unwrap();
            assert!(
                text.contains(&format!(r#""id":{id},"#)),
                "{method} with id {id}: {text}"
            );
        }
    }
    app.shutdown().await;
}

#[tokio::test]
async fn a_body_over_10_mib_is_http_413() {
    let app = TestApp::spawn().await;
    let text = "a".repeat(10 * 1024 * 1024 + 16);
    let body = call("SendMessage", json!({ "message": msg(&text) }));
    let resp = app.post_raw(A2A, JSON_HEADERS, body).await;
    assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
    drop(resp);
    // The server is still fine and journalled nothing.
    assert_eq!(app.tasks_total().await, 0);
    let t = app.send_task("echo", msg("small")).await;
    assert_eq!(state(&t), "TASK_STATE_COMPLETED");
    app.shutdown().await;
}

#[tokio::test]
async fn malformed_inputs_get_json_rpc_errors_and_the_server_keeps_answering() {
    let app = TestApp::spawn().await;
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let bodies: Vec<(Vec<u8>, i64)> = vec![
        (b"".to_vec(), -32700),
        (b"\xff\xfe\x00garbage".to_vec(), -32700),
        (deep.into_bytes(), -32700),
        (b"null".to_vec(), -32600),
        (b"42".to_vec(), -32600),
        (b"\"GetTask\"".to_vec(), -32600),
        (b"[]".to_vec(), -32600),
        (b"{}".to_vec(), -32600),
        (br#"{"jsonrpc":"2.0"}"#.to_vec(), -32600),
        (br#"{"jsonrpc":"2.0","id":{"x":1},"method":"GetTask"}"#.to_vec(), -32600),
        (br#"{"jsonrpc":"2.0","id":1,"method":17}"#.to_vec(), -32600),
        (br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":[1,2]}"#.to_vec(), -32602),
        (br#"{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":5}}"#.to_vec(), -32602),
        (br#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":"hi"}}"#.to_vec(), -32602),
        (br#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"parts":"x"}}}"#.to_vec(), -32602),
        (br#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_UNSPECIFIED","parts":[{"text":"x"}]}}}"#.to_vec(), -32602),
        (br#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[]}}}"#.to_vec(), -32602),
        (br#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"","role":"ROLE_USER","parts":[{"text":"x"}]}}}"#.to_vec(), -32602),
        (br#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"nothing":1}]}}}"#.to_vec(), -32602),
        (br#"{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]},"configuration":{"historyLength":-3}}}"#.to_vec(), -32602),
        (br#"{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"pageToken":"%%%not-a-token"}}"#.to_vec(), -32602),
        (br#"{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"status":"TASK_STATE_BOGUS"}}"#.to_vec(), -32602),
        (br#"{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"pageSize":"ten"}}"#.to_vec(), -32602),
        (br#"{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{"statusTimestampAfter":"yesterday"}}"#.to_vec(), -32602),
        (br#"{"jsonrpc":"2.0","id":1,"method":"SubscribeToTask","params":{}}"#.to_vec(), -32602),
    ];
    for (body, code) in bodies {
        let shown = String::from_utf8_lossy(&body)
            .chars()
            .take(120)
            .collect::<String>();
        let r = raw(&app, body).await;
        assert_eq!(error_code(&r), code, "body {shown:?} -> {r}");
        assert_rpc_error(&r, code);
    }
    assert_eq!(
        app.tasks_total().await,
        0,
        "nothing malformed was journalled"
    );
    let t = app.send_task("echo", msg("still here")).await;
    assert_eq!(state(&t), "TASK_STATE_COMPLETED");
    app.shutdown().await;
}

/// Every field of every served method, with a value of its own type that is otherwise fine
/// (so a wrong type is the only thing wrong with each call below).
fn typed_fields(task_id: &str) -> Vec<(&'static str, &'static str, Value)> {
    let message = || msg("typed");
    vec![
        ("SendMessage", "tenant", json!("")),
        ("SendMessage", "message", message()),
        ("SendMessage", "configuration", json!({})),
        ("SendMessage", "metadata", json!({})),
        ("SendMessage", "message.messageId", json!("m")),
        ("SendMessage", "message.contextId", json!("c")),
        ("SendMessage", "message.taskId", json!(task_id)),
        ("SendMessage", "message.role", json!("ROLE_USER")),
        ("SendMessage", "message.parts", json!([{ "text": "x" }])),
        ("SendMessage", "message.metadata", json!({})),
        ("SendMessage", "message.extensions", json!([])),
        ("SendMessage", "message.referenceTaskIds", json!([])),
        (
            "SendMessage",
            "configuration.acceptedOutputModes",
            json!(["text/plain"]),
        ),
        ("SendMessage", "configuration.historyLength", json!(1)),
        (
            "SendMessage",
            "configuration.returnImmediately",
            json!(true),
        ),
        ("GetTask", "tenant", json!("")),
        ("GetTask", "id", json!(task_id)),
        ("GetTask", "historyLength", json!(1)),
        ("ListTasks", "tenant", json!("")),
        ("ListTasks", "contextId", json!("c")),
        ("ListTasks", "status", json!("TASK_STATE_COMPLETED")),
        ("ListTasks", "pageSize", json!(10)),
        ("ListTasks", "pageToken", json!("")),
        ("ListTasks", "historyLength", json!(1)),
        (
            "ListTasks",
            "statusTimestampAfter",
            json!("2026-01-01T00:00:00Z"),
        ),
        ("ListTasks", "includeArtifacts", json!(true)),
        ("CancelTask", "tenant", json!("")),
        ("CancelTask", "id", json!(task_id)),
        ("CancelTask", "metadata", json!({})),
        ("SubscribeToTask", "tenant", json!("")),
        ("SubscribeToTask", "id", json!(task_id)),
        ("GetExtendedAgentCard", "tenant", json!("")),
    ]
}

/// `params` with `path` (dotted) set to `value`.
fn set_path(params: &mut Value, path: &str, value: Value) {
    let mut at = params;
    let mut parts = path.split('.').peekable();
    while let Some(p) = parts.next() {
        if parts.peek().is_none() {
            at[p] = value;
            return;
        }
        at = &mut at[p];
    }
}

/// Values of every JSON type but the one `good` has.
fn wrong_types(good: &Value) -> Vec<Value> {
    let all = [
        json!(true),
        json!(7),
        json!(1.5),
        json!("s"),
        json!([1]),
        json!({ "k": 1 }),
    ];
    all.into_iter()
        .filter(|v| {
            std::mem::discriminant(v) != std::mem::discriminant(good)
                || (good.is_number() && v.is_number() && good.is_i64() != v.is_i64())
        })
        .collect()
}

#[tokio::test]
async fn every_param_of_every_method_is_type_checked_and_named() {
    let app = TestApp::spawn().await;
    let task = app.send_task("echo", msg("seed")).await;
    let task_id = task["id"].as_str().expect("id").to_string();
    let before = app.tasks_total().await;
    for (method, path, good) in typed_fields(&task_id) {
        for bad in wrong_types(&good) {
            // An enum takes its value's number as well as its name (ProtoJSON; `dialects`):
            // 7 is TASK_STATE_REJECTED, a good status.
            if path == "status" && bad.is_i64() {
                continue;
            }
            let mut params = match method {
                "SendMessage" => json!({ "message": msg("typed") }),
                "GetTask" | "CancelTask" | "SubscribeToTask" => json!({ "id": task_id }),
                _ => json!({}),
            };
            set_path(&mut params, path, bad.clone());
            let r = app.rpc_as(Who::Owner, "echo", method, params.clone()).await;
            assert_eq!(
                r["error"]["code"], -32602,
                "{method} {path}={bad} is -32602: {r}"
            );
            let named = r["error"]["data"][1]["fieldViolations"][0]["field"]
                .as_str()
                .unwrap_or("");
            assert!(
                named == path
                    || named.starts_with(&format!("{path}."))
                    || named.starts_with(&format!("{path}[")),
                "{method} {path}={bad}: the violation names {named:?}: {r}"
            );
        }
    }
    assert_eq!(
        app.tasks_total().await,
        before,
        "no wrong-typed call was served"
    );
    app.shutdown().await;
}

/// The push-config fields (and a SendMessage's inline config), with values of their own type.
/// They are checked on an Agent that sends push notifications: one without refuses the methods
/// before reading their params.
fn typed_push_fields(task_id: &str) -> Vec<(&'static str, &'static str, Value)> {
    let url = || json!("https://hooks.example/w");
    vec![
        (
            "SendMessage",
            "configuration.taskPushNotificationConfig",
            json!({ "url": url() }),
        ),
        (
            "SendMessage",
            "configuration.taskPushNotificationConfig.url",
            url(),
        ),
        (
            "SendMessage",
            "configuration.taskPushNotificationConfig.id",
            json!("c"),
        ),
        (
            "SendMessage",
            "configuration.taskPushNotificationConfig.token",
            json!("t"),
        ),
        (
            "SendMessage",
            "configuration.taskPushNotificationConfig.authentication",
            json!({ "scheme": "Bearer" }),
        ),
        (
            "SendMessage",
            "configuration.taskPushNotificationConfig.authentication.scheme",
            json!("Bearer"),
        ),
        (
            "SendMessage",
            "configuration.taskPushNotificationConfig.authentication.credentials",
            json!("c"),
        ),
        ("CreateTaskPushNotificationConfig", "tenant", json!("")),
        ("CreateTaskPushNotificationConfig", "taskId", json!(task_id)),
        ("CreateTaskPushNotificationConfig", "id", json!("c")),
        ("CreateTaskPushNotificationConfig", "url", url()),
        ("CreateTaskPushNotificationConfig", "token", json!("t")),
        (
            "CreateTaskPushNotificationConfig",
            "authentication",
            json!({ "scheme": "Bearer" }),
        ),
        (
            "CreateTaskPushNotificationConfig",
            "authentication.scheme",
            json!("Bearer"),
        ),
        (
            "CreateTaskPushNotificationConfig",
            "authentication.credentials",
            json!("c"),
        ),
        ("GetTaskPushNotificationConfig", "tenant", json!("")),
        ("GetTaskPushNotificationConfig", "taskId", json!(task_id)),
        ("GetTaskPushNotificationConfig", "id", json!("c")),
        ("ListTaskPushNotificationConfigs", "tenant", json!("")),
        ("ListTaskPushNotificationConfigs", "taskId", json!(task_id)),
        ("ListTaskPushNotificationConfigs", "pageSize", json!(5)),
        ("ListTaskPushNotificationConfigs", "pageToken", json!("")),
        ("DeleteTaskPushNotificationConfig", "tenant", json!("")),
        ("DeleteTaskPushNotificationConfig", "taskId", json!(task_id)),
        ("DeleteTaskPushNotificationConfig", "id", json!("c")),
    ]
}

#[tokio::test]
async fn every_push_config_param_is_type_checked_and_named() {
    let agent = exec_agent("hooks", r#"echo '{"type":"final","status":"completed"}'"#).replace(
        "description = \"e2e exec agent\"\n",
        "description = \"e2e exec agent\"\npush_notifications = true\n",
    );
    let app = TestApp::spawn_with(false, Some(&agent)).await;
    let task = app.send_task("hooks", msg("seed")).await;
    let task_id = task["id"].as_str().expect("id").to_string();
    let before = app.tasks_total().await;
    for (method, path, good) in typed_push_fields(&task_id) {
        for bad in wrong_types(&good) {
            let mut params = match method {
                "SendMessage" => json!({ "message": msg("typed") }),
                "CreateTaskPushNotificationConfig" => {
                    json!({ "taskId": task_id, "url": "https://hooks.example/w" })
                }
                _ => json!({ "taskId": task_id, "id": "c" }),
            };
            set_path(&mut params, path, bad.clone());
            let r = app
                .rpc_as(Who::Owner, "hooks", method, params.clone())
                .await;
            assert_eq!(
                r["error"]["code"], -32602,
                "{method} {path}={bad} is -32602: {r}"
            );
            let named = r["error"]["data"][1]["fieldViolations"][0]["field"]
                .as_str()
                .unwrap_or("");
            assert!(
                named == path
                    || named.starts_with(&format!("{path}."))
                    || named.starts_with(&format!("{path}[")),
                "{method} {path}={bad}: the violation names {named:?}: {r}"
            );
        }
    }
    assert_eq!(
        app.tasks_total().await,
        before,
        "no wrong-typed call was served"
    );
    let (_, _, configs) = app.get_json("/api/v1/push", true).await;
    assert_eq!(
        configs["configs"].as_array().map(Vec::len).unwrap_or(0),
        0,
        "no wrong-typed config was stored: {configs}"
    );
    app.shutdown().await;
}
