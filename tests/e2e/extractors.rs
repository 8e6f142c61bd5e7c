//! The REST API's request extractors on the real routes (`sextant_server::extract`): every
//! write takes a JSON `Content-Type` (415 otherwise), a malformed body is 400 in the error
//! shape, and every owner-only route refuses anyone else exactly as before — before it reads
//! the body.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::secure::{Secure, spawn};

const AGENTS: &str = r#"
[[agents]]
id = "open"
name = "Open"
description = "e2e: the extractors' routes"
engine = { kind = "echo" }
access = { call = ["person", "anonymous-local", "peer:alice"] }
"#;

/// Every REST write that reads a body: the method it takes, and whether only the owner may
/// make it (the rest act for whoever calls).
const BODY_WRITES: &[(&str, &str, bool)] = &[
    ("PUT", "/api/v1/agents/open/paused", true),
    ("POST", "/api/v1/agents/open/stop-all", true),
    ("POST", "/api/v1/tasks/no-such-task/cancel", true),
    ("POST", "/api/v1/interactions/answer", true),
    ("POST", "/api/v1/interactions/no-such/answer", false),
    ("POST", "/api/v1/peers", true),
    ("PATCH", "/api/v1/peers/nobody", true),
    ("POST", "/api/v1/peers/nobody/pin", true),
    ("POST", "/api/v1/peers/discover", true),
    ("POST", "/api/v1/peers/call", true),
    ("POST", "/api/v1/peers/orchestrate", true),
    ("PUT", "/api/v1/agents/open/access", true),
    ("POST", "/api/v1/peer-tokens", true),
    ("POST", "/api/v1/assistant-tokens", true),
    ("POST", "/api/v1/assistant-tokens/nobody/peers", true),
    ("POST", "/api/v1/me/schedules", false),
    ("POST", "/api/v1/me/schedules/preview", false),
    ("PUT", "/api/v1/me/schedules/pause", true),
    ("PATCH", "/api/v1/me/schedules/no-such", false),
    ("POST", "/api/v1/me/schedules/no-such/run", false),
    (
        "POST",
        "/api/v1/me/schedules/no-such/runs/no-run/cancel",
        false,
    ),
    ("POST", "/api/v1/me/schedules/no-such/backfill", false),
];

/// Every owner-only read.
const OWNER_READS: &[&str] = &[
    "/api/v1/agents",
    "/api/v1/sessions",
    "/api/v1/sessions/no-such",
    "/api/v1/tasks",
    "/api/v1/tasks/counts",
    "/api/v1/tasks/no-such",
    "/api/v1/interactions",
    "/api/v1/peers",
    "/api/v1/peers/nobody",
    "/api/v1/peers/conversations/no-such",
    "/api/v1/agents/open/access",
    "/api/v1/peer-tokens",
    "/api/v1/assistant-tokens",
    "/api/v1/assistant-tokens/nobody/peers",
    "/api/v1/audit",
    "/api/v1/backup",
    "/api/v1/export",
    "/api/v1/push",
    "/api/v1/me/schedules/pause",
];

/// A request with exactly the given `Content-Type` (none when `None`) and raw body; status and
/// JSON body (Null when not JSON).
async fn raw(
    app: &Secure,
    bearer: Option<&str>,
    method: &str,
    path: &str,
    content_type: Option<&str>,
    body: &'static str,
) -> (StatusCode, Value) {
    let method = Method::from_bytes(method.as_bytes()).unwrap();
    let mut req = app.client.request(method, format!("{}{path}", app.url));
    if let Some(t) = bearer {
        req = req.bearer_auth(t);
    }
    if let Some(ct) = content_type {
        req = req.header("content-type", ct);
    }
    let resp = crate::support::send(req.body(body)).await;
    let status = resp.status();
    let text = resp.text().await.unwrap_or_default();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

#[tokio::test]
async fn every_rest_write_takes_a_json_content_type_or_answers_415() {
    let app = spawn(AGENTS, "").await;
    let owner = app.owner.clone();
    let mut writes: Vec<(&str, &str)> = BODY_WRITES.iter().map(|&(m, p, _)| (m, p)).collect();
    // Writes that read no body still say JSON.
    writes.push(("POST", "/api/v1/me/schedules/no-such/runs/no-run/replay"));
    writes.push(("POST", "/api/v1/session/bootstrap"));
    writes.push(("POST", "/api/v1/session/logout"));
    for (method, path) in writes {
        for ct in [
            Some("text/plain"),
            Some("application/x-www-form-urlencoded"),
            None,
        ] {
            let (status, v) = raw(&app, Some(&owner), method, path, ct, "{}").await;
            assert_eq!(
                status,
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "{method} {path} {ct:?}: {v}"
            );
            assert_eq!(
                v["error"]["code"], "unsupported_media_type",
                "{method} {path}: {v}"
            );
        }
    }
    // Parameters are fine, and so is a `+json` type.
    for ct in [
        "application/json; charset=utf-8",
        "application/merge-patch+json",
    ] {
        let (status, v) = raw(
            &app,
            Some(&owner),
            "PUT",
            "/api/v1/me/schedules/pause",
            Some(ct),
            r#"{"paused": false}"#,
        )
        .await;
        assert_eq!(
            (status, &v),
            (StatusCode::OK, &json!({"paused": false})),
            "{ct}"
        );
    }
    app.shutdown().await;
}

#[tokio::test]
async fn a_malformed_body_is_400_in_the_error_shape() {
    let app = spawn(AGENTS, "").await;
    let owner = app.owner.clone();
    for &(method, path, _) in BODY_WRITES {
        let (status, v) = raw(
            &app,
            Some(&owner),
            method,
            path,
            Some("application/json"),
            r#"{, "paused": true}"#,
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{method} {path}: {v}");
        assert_eq!(v["error"]["code"], "bad_request", "{method} {path}: {v}");
        let message = v["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.starts_with("the body is not JSON"),
            "{method} {path}: {message}"
        );
    }
    // JSON of the wrong shape says so too.
    let (status, v) = raw(
        &app,
        Some(&owner),
        "POST",
        "/api/v1/peers/discover",
        Some("application/json"),
        r#"{"url": 5}"#,
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{v}");
    let message = v["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("the body is JSON, but not what this request takes"),
        "{message}"
    );
    app.shutdown().await;
}

#[tokio::test]
async fn owner_only_routes_refuse_everyone_else_as_before_and_before_reading_the_body() {
    let app = spawn(AGENTS, "").await;
    let alice = app.peer_token("alice").await;
    let forbidden = json!({ "error": { "code": "forbidden", "message":
        "the console API is the console owner's; other callers use the A2A endpoints" } });
    let unauthorized = json!({ "error": { "code": "unauthorized", "message":
        "the console API needs the console token: Authorization: Bearer $(sextant token)" } });
    for path in OWNER_READS {
        let (status, _, v) = app.get(Some(&alice), path).await;
        assert_eq!(
            (status, &v),
            (StatusCode::FORBIDDEN, &forbidden),
            "peer GET {path}"
        );
        let (status, headers, v) = app.get(None, path).await;
        assert_eq!(
            (status, &v),
            (StatusCode::UNAUTHORIZED, &unauthorized),
            "anonymous GET {path}"
        );
        assert_eq!(headers["www-authenticate"], "Bearer", "{path}");
    }
    // A write's body is not read for a caller who may not write: a malformed one still gets
    // the refusal.
    for &(method, path, _) in BODY_WRITES.iter().filter(|w| w.2) {
        for (who, bearer, want_status, want) in [
            (
                "peer",
                Some(alice.as_str()),
                StatusCode::FORBIDDEN,
                &forbidden,
            ),
            ("anonymous", None, StatusCode::UNAUTHORIZED, &unauthorized),
        ] {
            let (status, v) = raw(
                &app,
                bearer,
                method,
                path,
                Some("application/json"),
                r#"{"paused": "#,
            )
            .await;
            assert_eq!((status, &v), (want_status, want), "{who} {method} {path}");
        }
    }
    app.shutdown().await;
}
