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

const FRONT: &str = r#"
default_agent = "front"

[[agents]]
id = "front"
name = "Front"
description = "e2e: the default Agent"
engine = { kind = "echo" }
access = { call = ["person", "anonymous-local", "peer:alice"] }
"#;

/// The default Agent's own JSON-RPC route, and the two at the server's URL.
const AGENT_ROUTE: &str = "/api/v1/agents/front/a2a";
const ROUTES: [&str; 3] = [AGENT_ROUTE, "/", "/a2a"];

/// A POST of `body` to `path` with exactly `headers` (and `bearer` when given); the status,
/// headers and JSON body (Null when not JSON).
async fn post(
    app: &crate::secure::Secure,
    path: &str,
    bearer: Option<&str>,
    headers: &[(&str, &str)],
    body: &Value,
) -> (reqwest::StatusCode, reqwest::header::HeaderMap, Value) {
    let mut req = app.client.post(format!("{}{path}", app.url));
    if let Some(b) = bearer {
        req = req.bearer_auth(b);
    }
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = send(req.body(body.to_string())).await;
    let (status, headers) = (resp.status(), resp.headers().clone());
    let text = resp.text().await.unwrap_or_default();
    (
        status,
        headers,
        serde_json::from_str(&text).unwrap_or(Value::Null),
    )
}

const JSON: [(&str, &str); 2] = [("Content-Type", "application/json"), ("A2A-Version", "1.0")];

fn call(method: &str, params: Value) -> Value {
    json!({ "jsonrpc": "2.0", "id": 7, "method": method, "params": params })
}

#[tokio::test]
async fn json_rpc_at_the_root_is_the_default_agents() {
    let app = crate::secure::spawn(FRONT, "").await;
    let owner = app.owner.clone();
    // One message, sent at the agent's route, then retried as it is at `/` and `/a2a`: an
    // identical retry to the same Agent by the same caller answers with the same task.
    let m = json!({ "message": msg("hello front") });
    let mut answers = Vec::new();
    for path in ROUTES {
        let (status, headers, v) = post(
            &app,
            path,
            Some(&owner),
            &JSON,
            &call("SendMessage", m.clone()),
        )
        .await;
        assert_eq!(status, reqwest::StatusCode::OK, "{path}: {v}");
        assert_eq!(content_type(&headers), "application/json", "{path}");
        assert_eq!(headers["cache-control"], "no-store", "{path}");
        assert!(v.get("error").is_none(), "{path}: {v}");
        assert_eq!(
            state(&v["result"]["task"]),
            "TASK_STATE_COMPLETED",
            "{path}: {v}"
        );
        answers.push(v);
    }
    assert_eq!(
        answers[1], answers[0],
        "POST / answers as the agent's route"
    );
    assert_eq!(
        answers[2], answers[0],
        "POST /a2a answers as the agent's route"
    );

    // A task started at `/` is the default Agent's: its own route reads it, and the same
    // GetTask reads the same at every route.
    let (_, _, v) = post(
        &app,
        "/",
        Some(&owner),
        &JSON,
        &call("SendMessage", json!({ "message": msg("at the root") })),
    )
    .await;
    let task_id = v["result"]["task"]["id"]
        .as_str()
        .expect("a task")
        .to_string();
    assert_eq!(
        first_artifact_text(&v["result"]["task"])
            .split("\n\n")
            .next(),
        Some("at the root")
    );
    let mut reads = Vec::new();
    for path in ROUTES {
        let (_, _, v) = post(
            &app,
            path,
            Some(&owner),
            &JSON,
            &call("GetTask", json!({ "id": task_id })),
        )
        .await;
        assert_eq!(v["result"]["id"], task_id, "{path}: {v}");
        reads.push(v);
    }
    assert_eq!(reads[1], reads[0]);
    assert_eq!(reads[2], reads[0]);

    // `GET /` is still the console page.
    let resp = send(app.client.get(format!("{}/", app.url))).await;
    assert_eq!(resp.status(), reqwest::StatusCode::OK);
    assert!(
        content_type(resp.headers()).starts_with("text/html"),
        "{:?}",
        resp.headers()
    );
    app.shutdown().await;
}

#[tokio::test]
async fn a_peer_token_is_taken_at_the_root_exactly_as_on_the_agent_route() {
    let app = crate::secure::spawn(FRONT, "").await;
    let alice = app.peer_token("alice").await;
    let bob = app.peer_token("bob").await;
    let unknown = "sxp_0000000000000000000000000000000000000000000000000000000000000000";
    let send_one = || call("SendMessage", json!({ "message": msg("from a peer") }));
    // Alice is on the default Agent's access list: she may send at every route.
    for path in ROUTES {
        let (status, _, v) = post(&app, path, Some(&alice), &JSON, &send_one()).await;
        assert_eq!(status, reqwest::StatusCode::OK, "{path}: {v}");
        assert_eq!(
            state(&v["result"]["task"]),
            "TASK_STATE_COMPLETED",
            "{path}: {v}"
        );
    }
    // Bob is not, and an unknown token is no credential: refused at the root as at the route.
    for (who, bearer) in [("bob", bob.as_str()), ("unknown", unknown)] {
        let (want_status, _, want) =
            post(&app, AGENT_ROUTE, Some(bearer), &JSON, &send_one()).await;
        assert!(
            !want_status.is_success() || want.get("error").is_some(),
            "{who}: {want}"
        );
        for path in ["/", "/a2a"] {
            let (status, _, v) = post(&app, path, Some(bearer), &JSON, &send_one()).await;
            assert_eq!(status, want_status, "{who} at {path}: {v}");
            assert_eq!(
                v["error"]["code"], want["error"]["code"],
                "{who} at {path}: {v} vs {want}"
            );
        }
    }
    app.shutdown().await;
}

#[tokio::test]
async fn browser_style_posts_are_refused_at_the_root_as_on_the_agent_route() {
    let app = crate::secure::spawn(FRONT, "").await;
    let list = call("ListTasks", json!({}));
    let port = app.running.addr.port();
    let own = format!("http://127.0.0.1:{port}");
    // What a hostile page can send without a preflight: another origin, a simple content
    // type, a cross-site fetch, a rebound host. Each is refused (403) on every route.
    let refused: [&[(&str, &str)]; 4] = [
        &[
            ("Origin", "https://evil.example"),
            ("Content-Type", "text/plain"),
        ],
        &[("Origin", "null"), ("Content-Type", "application/json")],
        &[
            ("Sec-Fetch-Site", "cross-site"),
            ("Content-Type", "application/json"),
        ],
        &[
            ("Host", "evil.example.com"),
            ("Content-Type", "application/json"),
        ],
    ];
    for headers in refused {
        for path in ROUTES {
            let (status, _, v) = post(&app, path, None, headers, &list).await;
            assert_eq!(
                status,
                reqwest::StatusCode::FORBIDDEN,
                "{path} {headers:?}: {v}"
            );
        }
    }
    // The same call from this machine's own page or a local client is served at every route;
    // a non-JSON type is the endpoint's own -32005, as on the agent route; the hop limit
    // applies at the root too.
    for path in ROUTES {
        for headers in [
            &[("Content-Type", "application/json")][..],
            &[
                ("Content-Type", "application/json"),
                ("Origin", own.as_str()),
            ][..],
        ] {
            let (status, _, v) = post(&app, path, None, headers, &list).await;
            assert_eq!(status, reqwest::StatusCode::OK, "{path} {headers:?}: {v}");
            assert!(v["result"]["tasks"].is_array(), "{path} {headers:?}: {v}");
        }
        let (status, _, v) = post(&app, path, None, &[("Content-Type", "text/plain")], &list).await;
        assert_eq!(status, reqwest::StatusCode::OK, "{path}: {v}");
        assert_eq!(v["error"]["code"], -32005, "{path}: {v}");
        let hops = [("Content-Type", "application/json"), ("A2A-Hop", "3")];
        let (status, _, v) = post(&app, path, None, &hops, &list).await;
        assert_eq!(status, reqwest::StatusCode::FORBIDDEN, "{path}: {v}");
    }
    app.shutdown().await;
}
