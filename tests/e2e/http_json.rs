//! The HTTP+JSON binding (spec §11, issue #18): the same service as JSON-RPC, reached by
//! REST routes. Each scenario runs through both bindings and compares what they answer: the
//! same task renders byte for byte the same, the same errors carry the same ErrorInfo, and
//! the same caller scoping applies.

use std::time::Duration;

use reqwest::Method;
use reqwest::header::CONTENT_TYPE;
use serde_json::{Value, json};

use crate::support::*;

/// The HTTP+JSON base of an Agent, as its card lists it.
fn base(app: &TestApp, agent: &str) -> String {
    format!("{}/api/v1/agents/{agent}", app.url)
}

/// One HTTP+JSON request as `who` (`A2A-Version: 1.0`, a JSON body when given); the status,
/// headers and JSON body.
async fn rest(
    app: &TestApp,
    who: Who,
    method: Method,
    url: &str,
    body: Option<Value>,
) -> (reqwest::StatusCode, reqwest::header::HeaderMap, Value) {
    let mut req = app.client.request(method, url).header("A2A-Version", "1.0");
    if who == Who::Owner {
        req = req.bearer_auth(&app.token);
    }
    if let Some(b) = body {
        req = req
            .header(CONTENT_TYPE, "application/a2a+json")
            .body(b.to_string());
    }
    json_or_null(send(req).await).await
}

/// Asserts an AIP-193 error: the status, `error.code` equal to it, a JSON Content-Type, and
/// the ErrorInfo reason. Returns the `error` object.
fn assert_http_error(
    got: &(reqwest::StatusCode, reqwest::header::HeaderMap, Value),
    status: u16,
    reason: &str,
) -> Value {
    let (s, h, body) = got;
    assert_eq!(s.as_u16(), status, "{body}");
    assert_eq!(content_type(h), "application/json", "{body}");
    let e = &body["error"];
    assert_eq!(e["code"], status, "{body}");
    assert!(e["status"].is_string(), "{body}");
    assert!(e["message"].is_string(), "{body}");
    assert_eq!(
        e["details"][0]["@type"], "type.googleapis.com/google.rpc.ErrorInfo",
        "{body}"
    );
    assert_eq!(e["details"][0]["domain"], "a2a-protocol.org", "{body}");
    assert_eq!(e["details"][0]["reason"], reason, "{body}");
    e.clone()
}

/// An SSE response's frames until the server closes it.
async fn rest_stream(app: &TestApp, method: Method, url: &str, body: Option<Value>) -> Vec<Frame> {
    let mut req = app
        .client
        .request(method, url)
        .header("A2A-Version", "1.0")
        .header("Accept", "text/event-stream");
    if let Some(b) = body {
        req = req
            .header(CONTENT_TYPE, "application/json")
            .body(b.to_string());
    }
    Sse::from_response(send(req).await).rest().await
}

/// What kind of `StreamResponse` a frame is (`task`, `statusUpdate`, …).
fn kind(v: &Value) -> String {
    v.as_object()
        .and_then(|o| o.keys().next().cloned())
        .unwrap_or_default()
}

#[tokio::test]
async fn the_card_lists_http_json_and_both_bindings_render_a_task_alike() {
    let app = TestApp::spawn().await;
    let (_, _, card) = app
        .get_json("/api/v1/agents/echo/.well-known/agent-card.json", false)
        .await;
    let rest_url = card["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["protocolBinding"] == "HTTP+JSON")
        .map(|i| i["url"].as_str().unwrap().to_string())
        .unwrap_or_else(|| panic!("no HTTP+JSON interface: {card}"));
    assert_eq!(rest_url, base(&app, "echo"));
    assert_eq!(
        card["supportedInterfaces"][0]["protocolBinding"], "JSONRPC",
        "JSON-RPC stays the first (preferred) interface: {card}"
    );

    // SendMessage through the URL the card gives.
    let ctx = uid("ctx");
    let m = with(msg("hello over rest"), json!({ "contextId": ctx }));
    let (status, h, sent) = rest(
        &app,
        Who::Anon,
        Method::POST,
        &format!("{rest_url}/message:send"),
        Some(json!({ "message": m })),
    )
    .await;
    assert_eq!(status, 200, "{sent}");
    assert_eq!(content_type(&h), "application/json");
    let task = &sent["task"];
    assert_eq!(state(task), "TASK_STATE_COMPLETED", "{sent}");
    assert!(
        first_artifact_text(task).starts_with("hello over rest"),
        "{sent}"
    );
    let id = task["id"].as_str().unwrap();

    // GetTask: the same task, the same bytes, through either binding.
    let (status, _, by_rest) = rest(
        &app,
        Who::Anon,
        Method::GET,
        &format!("{rest_url}/tasks/{id}?historyLength=1"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{by_rest}");
    let by_rpc = app
        .rpc("echo", "GetTask", json!({ "id": id, "historyLength": 1 }))
        .await;
    assert_eq!(by_rest, by_rpc["result"]);
    assert_eq!(by_rest["history"].as_array().map(Vec::len), Some(1));

    // ListTasks with query parameters, against the same params over JSON-RPC.
    app.send_task("echo", with(msg("second"), json!({ "contextId": ctx })))
        .await;
    let (status, _, list) = rest(
        &app,
        Who::Anon,
        Method::GET,
        &format!("{rest_url}/tasks?contextId={ctx}&pageSize=1&includeArtifacts=true"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{list}");
    let rpc_list = app
        .rpc(
            "echo",
            "ListTasks",
            json!({ "contextId": ctx, "pageSize": 1, "includeArtifacts": true }),
        )
        .await;
    assert_eq!(list, rpc_list["result"]);
    assert_eq!(list["totalSize"], 2, "{list}");
    assert_eq!(list["tasks"].as_array().map(Vec::len), Some(1), "{list}");

    // Another caller's task is not found, as over JSON-RPC.
    let (_, _, owners) = rest(
        &app,
        Who::Owner,
        Method::POST,
        &format!("{rest_url}/message:send"),
        Some(json!({ "message": msg("mine") })),
    )
    .await;
    let theirs = owners["task"]["id"].as_str().unwrap();
    let hidden = rest(
        &app,
        Who::Anon,
        Method::GET,
        &format!("{rest_url}/tasks/{theirs}"),
        None,
    )
    .await;
    assert_http_error(&hidden, 404, "TASK_NOT_FOUND");
    app.shutdown().await;
}

#[tokio::test]
async fn streams_carry_the_same_events_as_json_rpc() {
    let app = TestApp::spawn().await;
    let url = base(&app, "echo");
    let frames = rest_stream(
        &app,
        Method::POST,
        &format!("{url}/message:stream"),
        Some(json!({ "message": msg("chunks=3 abcdef") })),
    )
    .await;
    let rpc = app
        .stream_as(
            Who::Anon,
            "echo",
            "SendStreamingMessage",
            json!({ "message": msg("chunks=3 abcdef") }),
            &[],
        )
        .await
        .rest()
        .await;
    let rest_kinds: Vec<String> = frames.iter().map(|f| kind(&f.json())).collect();
    let rpc_kinds: Vec<String> = rpc.iter().map(|f| kind(&f.json()["result"])).collect();
    assert_eq!(rest_kinds, rpc_kinds);
    assert_eq!(rest_kinds.first().map(String::as_str), Some("task"));
    assert_eq!(
        rest_kinds.iter().filter(|k| *k == "artifactUpdate").count(),
        3,
        "{rest_kinds:?}"
    );
    // Each event carries its journal seq, so Last-Event-ID can resume.
    let seqs: Vec<i64> = frames
        .iter()
        .filter(|f| f.id.is_some())
        .map(Frame::seq)
        .collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
    let last = frames.last().unwrap().json();
    assert_eq!(
        last["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{last}"
    );

    // Subscribing to an ended task is refused, as over JSON-RPC (-32004).
    let id = frames[0].json()["task"]["id"].as_str().unwrap().to_string();
    let ended = rest(
        &app,
        Who::Anon,
        Method::POST,
        &format!("{url}/tasks/{id}:subscribe"),
        Some(json!({})),
    )
    .await;
    assert_http_error(&ended, 400, "UNSUPPORTED_OPERATION");
    app.shutdown().await;
}

#[tokio::test]
async fn cancel_and_subscribe_reach_a_running_task() {
    let dir = tempfile::tempdir().unwrap();
    let script = "read -r turn; echo started; while true; do sleep 0.1; done";
    std::fs::write(dir.path().join("agents.toml"), exec_agent("slow", script)).unwrap();
    let app = TestApp::start_in(dir, false).await;
    let url = base(&app, "slow");
    let (status, _, sent) = rest(
        &app,
        Who::Anon,
        Method::POST,
        &format!("{url}/message:send"),
        Some(json!({ "message": msg("go"), "configuration": { "returnImmediately": true } })),
    )
    .await;
    assert_eq!(status, 200, "{sent}");
    let id = sent["task"]["id"].as_str().unwrap().to_string();

    // GET :subscribe (the proto's verb; the SDKs POST, tested above) with no body.
    let resp = send(
        app.client
            .get(format!("{url}/tasks/{id}:subscribe"))
            .header("A2A-Version", "1.0"),
    )
    .await;
    let mut sub = Sse::from_response(resp);
    let first = sub.next_frame().await.expect("the task first").json();
    assert_eq!(first["task"]["id"], json!(id), "{first}");

    // A body naming another task is refused; the URL's task is the one canceled.
    let other = rest(
        &app,
        Who::Anon,
        Method::POST,
        &format!("{url}/tasks/{id}:cancel"),
        Some(json!({ "id": "another" })),
    )
    .await;
    assert_http_error(&other, 400, "INVALID_PARAMS");
    let (status, _, canceled) = rest(
        &app,
        Who::Anon,
        Method::POST,
        &format!("{url}/tasks/{id}:cancel"),
        Some(json!({ "id": id, "metadata": { "reason": "enough" } })),
    )
    .await;
    assert_eq!(status, 200, "{canceled}");
    assert_eq!(state(&canceled), "TASK_STATE_CANCELED", "{canceled}");
    let mut last = first;
    while let Some(f) = sub
        .next_frame_within(Duration::from_secs(30))
        .await
        .expect("the stream ends after the cancel")
    {
        last = f.json();
    }
    assert_eq!(
        last["statusUpdate"]["status"]["state"], "TASK_STATE_CANCELED",
        "{last}"
    );
    // Not cancelable once ended: 409 here (the TCK's status), -32002 over JSON-RPC.
    let again = rest(
        &app,
        Who::Anon,
        Method::POST,
        &format!("{url}/tasks/{id}:cancel"),
        None,
    )
    .await;
    // An ended task canceled again is returned again (idempotent), as over JSON-RPC.
    assert_eq!(again.0, 200, "{}", again.2);
    let done = app.send_task("echo", msg("done")).await;
    let done_id = done["id"].as_str().unwrap();
    let ended = rest(
        &app,
        Who::Anon,
        Method::POST,
        &format!("{}/tasks/{done_id}:cancel", base(&app, "echo")),
        None,
    )
    .await;
    assert_http_error(&ended, 409, "TASK_NOT_CANCELABLE");
    app.shutdown().await;
}

#[tokio::test]
async fn errors_are_aip_193_with_the_binding_status() {
    let app = TestApp::spawn().await;
    let url = base(&app, "echo");
    let missing = rest(
        &app,
        Who::Anon,
        Method::GET,
        &format!("{url}/tasks/nope"),
        None,
    )
    .await;
    assert_http_error(&missing, 404, "TASK_NOT_FOUND");

    // A non-JSON body is 415, before anything is parsed or run.
    let before = app.tasks_total().await;
    let resp = send(
        app.client
            .post(format!("{url}/message:send"))
            .header(CONTENT_TYPE, "text/plain")
            .header("A2A-Version", "1.0")
            .body(json!({ "message": msg("ct") }).to_string()),
    )
    .await;
    let wrong_type = json_or_null(resp).await;
    assert_http_error(&wrong_type, 415, "CONTENT_TYPE_NOT_SUPPORTED");
    // A body without a Content-Type is refused the same way.
    let resp = send(
        app.client
            .post(format!("{url}/message:send"))
            .header("A2A-Version", "1.0")
            .body(json!({ "message": msg("no ct") }).to_string()),
    )
    .await;
    assert_http_error(&json_or_null(resp).await, 415, "CONTENT_TYPE_NOT_SUPPORTED");
    assert_eq!(app.tasks_total().await, before, "nothing was run");

    let resp = send(
        app.client
            .post(format!("{url}/message:send"))
            .header(CONTENT_TYPE, "application/json")
            .header("A2A-Version", "99.0")
            .body(json!({ "message": msg("v") }).to_string()),
    )
    .await;
    assert_http_error(&json_or_null(resp).await, 400, "VERSION_NOT_SUPPORTED");

    let bad_query = rest(
        &app,
        Who::Anon,
        Method::GET,
        &format!("{url}/tasks?pageSize=ten"),
        None,
    )
    .await;
    let e = assert_http_error(&bad_query, 400, "INVALID_PARAMS");
    assert_eq!(e["details"][1]["fieldViolations"][0]["field"], "pageSize");

    let bad_body = rest(
        &app,
        Who::Anon,
        Method::POST,
        &format!("{url}/message:send"),
        Some(json!({ "message": { "role": "ROLE_USER", "parts": [] } })),
    )
    .await;
    assert_http_error(&bad_body, 400, "INVALID_PARAMS");
    let resp = send(
        app.client
            .post(format!("{url}/message:send"))
            .header(CONTENT_TYPE, "application/json")
            .body("{not json"),
    )
    .await;
    assert_http_error(&json_or_null(resp).await, 400, "PARSE_ERROR");

    let wrong_verb = rest(
        &app,
        Who::Anon,
        Method::GET,
        &format!("{url}/message:send"),
        None,
    )
    .await;
    let e = assert_http_error(&wrong_verb, 405, "METHOD_NOT_FOUND");
    assert_eq!(e["status"], "UNIMPLEMENTED");
    let unknown_op = rest(
        &app,
        Who::Anon,
        Method::POST,
        &format!("{url}/tasks/t:pause"),
        None,
    )
    .await;
    assert_http_error(&unknown_op, 404, "METHOD_NOT_FOUND");

    // An Agent the caller cannot see is 404, as an unknown one.
    let nobody = rest(
        &app,
        Who::Anon,
        Method::GET,
        &format!("{}/tasks", base(&app, "nobody")),
        None,
    )
    .await;
    let e = assert_http_error(&nobody, 404, "INVALID_REQUEST");
    assert_eq!(e["status"], "NOT_FOUND");

    // Push configs of an Agent without push notifications.
    let push = rest(
        &app,
        Who::Anon,
        Method::POST,
        &format!("{url}/tasks/t1/pushNotificationConfigs"),
        Some(json!({ "url": "https://example.com/hook" })),
    )
    .await;
    assert_http_error(&push, 400, "PUSH_NOTIFICATION_NOT_SUPPORTED");

    // The extended card needs credentials: 401 with a challenge; the owner gets the card.
    let anon = rest(
        &app,
        Who::Anon,
        Method::GET,
        &format!("{url}/extendedAgentCard"),
        None,
    )
    .await;
    let e = assert_http_error(&anon, 401, "INVALID_REQUEST");
    assert_eq!(e["status"], "UNAUTHENTICATED");
    assert_eq!(
        anon.1.get("www-authenticate").and_then(|v| v.to_str().ok()),
        Some("Bearer")
    );
    let (status, _, card) = rest(
        &app,
        Who::Owner,
        Method::GET,
        &format!("{url}/extendedAgentCard"),
        None,
    )
    .await;
    assert_eq!(status, 200, "{card}");
    let bindings: Vec<&Value> = card["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| &i["protocolBinding"])
        .collect();
    assert!(bindings.contains(&&json!("HTTP+JSON")), "{card}");
    app.shutdown().await;
}

#[tokio::test]
async fn the_perimeter_guards_http_json_as_it_guards_json_rpc() {
    let app = TestApp::spawn().await;
    let url = base(&app, "echo");
    // A hostile page: another origin, no token.
    let resp = send(
        app.client
            .post(format!("{url}/message:send"))
            .header(CONTENT_TYPE, "application/json")
            .header("Origin", "http://evil.example")
            .body(json!({ "message": msg("csrf") }).to_string()),
    )
    .await;
    assert_eq!(resp.status(), 403);
    // A relay loop: the hop count is checked on these routes too.
    let resp = send(
        app.client
            .post(format!("{url}/message:send"))
            .header(CONTENT_TYPE, "application/json")
            .header("A2A-Hop", "99")
            .body(json!({ "message": msg("loop") }).to_string()),
    )
    .await;
    assert_eq!(resp.status(), 403);
    let resp = send(
        app.client
            .get(format!("{url}/tasks"))
            .header("A2A-Hop", "x"),
    )
    .await;
    assert_eq!(resp.status(), 400);
    app.shutdown().await;
}
