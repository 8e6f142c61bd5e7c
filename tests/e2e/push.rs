//! Push notifications end to end: a loopback webhook receiver (allowed by `outbound.toml`),
//! an exec Agent with `push_notifications = true`, and every delivery checked as received:
//! order, headers, the StreamResponse body, and its signature over the exact bytes.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode as AxStatus};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::support::*;

/// Waits for input on the first turn, completes on the second.
const TWO_TURNS: &str = r#"read -r line
case "$line" in
  *'"text":"go on"'*) echo '{"type":"text","text":"all done"}'; echo '{"type":"final","status":"completed"}' ;;
  *) echo '{"type":"final","status":"input_required","text":"more please"}' ;;
esac"#;

fn push_agent() -> String {
    exec_agent("hooks", TWO_TURNS).replace(
        "description = \"e2e exec agent\"\n",
        "description = \"e2e exec agent\"\npush_notifications = true\n",
    )
}

/// One request the receiver got.
#[derive(Debug, Clone)]
struct Received {
    headers: HeaderMap,
    body: Bytes,
    /// What the receiver answered.
    status: u16,
}

impl Received {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }

    fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    /// The state a statusUpdate or task body reports.
    fn state(&self) -> String {
        let v = self.json();
        v["statusUpdate"]["status"]["state"]
            .as_str()
            .or_else(|| v["task"]["status"]["state"].as_str())
            .unwrap_or("")
            .to_string()
    }
}

/// A webhook receiver on 127.0.0.1:0 that fails the first `fail_first` requests with 500.
struct Receiver {
    url: String,
    rx: mpsc::UnboundedReceiver<Received>,
    fail_first: Arc<AtomicUsize>,
}

impl Receiver {
    async fn start(fail_first: usize) -> Receiver {
        let (tx, rx) = mpsc::unbounded_channel();
        let fail = Arc::new(AtomicUsize::new(fail_first));
        let left = fail.clone();
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: HeaderMap, body: Bytes| {
                let (tx, left) = (tx.clone(), left.clone());
                async move {
                    let failing = left
                        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                        .is_ok();
                    let status = if failing { 500 } else { 200 };
                    let _ = tx.send(Received {
                        headers,
                        body,
                        status,
                    });
                    AxStatus::from_u16(status).unwrap_or(AxStatus::OK)
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Receiver {
            url,
            rx,
            fail_first: fail,
        }
    }

    async fn next(&mut self) -> Received {
        tokio::time::timeout(STEP, self.rx.recv())
            .await
            .expect("a webhook delivery within the safety timeout")
            .expect("the receiver is running")
    }

    /// Requests until (and with) the first one the receiver accepted whose state is `state`.
    async fn until_accepted(&mut self, state: &str) -> Vec<Received> {
        let mut got = Vec::new();
        loop {
            let r = self.next().await;
            let done = r.status == 200 && r.state() == state;
            got.push(r);
            if done {
                return got;
            }
        }
    }
}

/// A Sextant with the push agent and `outbound.toml` allowing loopback webhooks, fast retries.
async fn app_with(push_toml: &str) -> TestApp {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("agents.toml"), push_agent()).unwrap();
    std::fs::write(
        dir.path().join("outbound.toml"),
        format!("[push]\nallow_loopback = true\ninitial_backoff_ms = 10\nmax_backoff_secs = 1\n{push_toml}"),
    )
    .unwrap();
    TestApp::start_in(dir, false).await
}

fn config(url: &str) -> Value {
    json!({ "id": "hook-1", "url": url, "token": "s3cret-token",
            "authentication": { "scheme": "Bearer", "credentials": "receiver-cred" } })
}

/// The Standard Webhooks signature check a receiver does, over the exact bytes received.
fn verify(r: &Received, token: &str) {
    use base64::Engine as _;
    let id = r.header("webhook-id");
    let ts = r.header("webhook-timestamp");
    assert!(
        !id.is_empty() && ts.parse::<i64>().is_ok(),
        "{:?}",
        r.headers
    );
    let mut signed = format!("{id}.{ts}.").into_bytes();
    signed.extend_from_slice(&r.body);
    let key = aws_lc_rs::hmac::Key::new(aws_lc_rs::hmac::HMAC_SHA256, token.as_bytes());
    let want = base64::engine::general_purpose::STANDARD
        .encode(aws_lc_rs::hmac::sign(&key, &signed).as_ref());
    assert_eq!(r.header("webhook-signature"), format!("v1,{want}"));
    // A forged body does not verify.
    let mut forged = format!("{id}.{ts}.").into_bytes();
    forged.extend_from_slice(&r.body[..r.body.len() - 1]);
    assert!(
        aws_lc_rs::hmac::verify(
            &key,
            &forged,
            &base64::engine::general_purpose::STANDARD
                .decode(want)
                .unwrap()
        )
        .is_err()
    );
}

fn send_with_push(text: &str, cfg: Value, extra: Value) -> Value {
    let mut m = msg(text);
    if let (Some(o), Value::Object(e)) = (m.as_object_mut(), extra) {
        o.extend(e);
    }
    json!({ "message": m, "configuration": { "taskPushNotificationConfig": cfg } })
}

#[tokio::test]
async fn a_task_that_waits_for_input_then_completes_is_pushed_in_order_and_signed() {
    let mut hook = Receiver::start(0).await;
    let app = app_with("").await;
    let r = app
        .rpc(
            "hooks",
            "SendMessage",
            send_with_push("start", config(&hook.url), json!({})),
        )
        .await;
    let task = r["result"]["task"].clone();
    assert_eq!(state(&task), "TASK_STATE_INPUT_REQUIRED", "{r}");
    let task_id = task["id"].as_str().unwrap().to_string();

    let mut got = hook.until_accepted("TASK_STATE_INPUT_REQUIRED").await;
    let follow = with(msg("go on"), json!({ "taskId": task_id }));
    let done = app.send_task("hooks", follow).await;
    assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");
    got.extend(hook.until_accepted("TASK_STATE_COMPLETED").await);

    // The task snapshot first, then what a subscriber sees, in order, each delivered once.
    let kinds: Vec<String> = got
        .iter()
        .map(|r| {
            let v = r.json();
            let obj = v.as_object().expect("an object");
            assert_eq!(obj.len(), 1, "exactly one StreamResponse field: {v}");
            let k = obj.keys().next().unwrap().clone();
            match k.as_str() {
                "task" | "statusUpdate" => format!("{k}:{}", r.state()),
                _ => k,
            }
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "task:TASK_STATE_SUBMITTED",
            "statusUpdate:TASK_STATE_WORKING",
            "statusUpdate:TASK_STATE_INPUT_REQUIRED",
            "statusUpdate:TASK_STATE_WORKING",
            "artifactUpdate",
            "artifactUpdate",
            "statusUpdate:TASK_STATE_COMPLETED",
        ]
    );
    let ids: std::collections::HashSet<&str> = got.iter().map(|r| r.header("webhook-id")).collect();
    assert_eq!(ids.len(), got.len(), "one delivery per event");
    for r in &got {
        assert_eq!(r.header("content-type"), "application/a2a+json");
        assert_eq!(r.header("authorization"), "Bearer receiver-cred");
        assert!(
            r.headers.get("x-a2a-notification-token").is_none(),
            "the token is a key, never sent"
        );
        verify(r, "s3cret-token");
        let v = r.json();
        let tid = v["task"]["id"]
            .as_str()
            .or_else(|| v.as_object().unwrap().values().next().unwrap()["taskId"].as_str());
        assert_eq!(tid, Some(task_id.as_str()), "{v}");
    }
    let text = got[4].json()["artifactUpdate"]["artifact"]["parts"][0]["text"].clone();
    assert_eq!(text, "all done");

    // Get and List show the config; with the extension, its delivery health too.
    let params = json!({ "taskId": task_id, "id": "hook-1" });
    let plain = app
        .rpc("hooks", "GetTaskPushNotificationConfig", params.clone())
        .await;
    let cfg = &plain["result"];
    assert_eq!(cfg["url"], hook.url.as_str());
    assert_eq!(cfg["token"], "s3cret-token");
    assert_eq!(
        cfg["authentication"],
        json!({ "scheme": "Bearer" }),
        "credentials are never returned"
    );
    assert!(
        cfg.get("delivery").is_none(),
        "plain 1.0 shape without the extension: {cfg}"
    );
    let resp = app
        .post_rpc(
            Who::Anon,
            "hooks",
            &[("A2A-Extensions", "urn:sextant:a2a:push-delivery:v1")],
            json!({ "jsonrpc": "2.0", "id": 1, "method": "ListTaskPushNotificationConfigs",
                    "params": { "taskId": task_id } }),
        )
        .await;
    assert_eq!(
        resp.headers()
            .get("a2a-extensions")
            .and_then(|v| v.to_str().ok()),
        Some("urn:sextant:a2a:push-delivery:v1")
    );
    let listed = json_body(resp, reqwest::StatusCode::OK).await;
    assert!(
        listed["result"]["configs"][0]["delivery"].is_object(),
        "{listed}"
    );
    // The receiver has the last delivery a moment before Sextant records its success.
    let d = health_when(&app, &task_id, "hook-1", |d| d["delivered"] == 7).await;
    assert_eq!(d["state"], "idle", "{d}");
    assert_eq!(d["delivered"], 7);
    assert_eq!(d["pending"], 0);
    assert_eq!(d["finalStatePending"], false);
    app.shutdown().await;
}

#[tokio::test]
async fn a_receiver_that_fails_n_times_gets_every_event_in_order_once_it_recovers() {
    let mut hook = Receiver::start(3).await;
    let app = app_with("max_failures = 10\n").await;
    let r = app
        .rpc(
            "hooks",
            "SendMessage",
            send_with_push("start", config(&hook.url), json!({})),
        )
        .await;
    let task_id = r["result"]["task"]["id"].as_str().unwrap().to_string();
    let got = hook.until_accepted("TASK_STATE_INPUT_REQUIRED").await;
    // The first event was tried four times (same delivery id), and nothing overtook it.
    let first_id = got[0].header("webhook-id").to_string();
    let statuses: Vec<(u16, String)> = got
        .iter()
        .map(|r| (r.status, r.header("webhook-id").to_string()))
        .collect();
    assert_eq!(
        statuses[..4],
        [
            (500, first_id.clone()),
            (500, first_id.clone()),
            (500, first_id.clone()),
            (200, first_id.clone()),
        ],
        "{statuses:?}"
    );
    assert_eq!(got[3].state(), "TASK_STATE_SUBMITTED");
    assert_eq!(
        got.iter().skip(4).map(Received::state).collect::<Vec<_>>(),
        ["TASK_STATE_WORKING", "TASK_STATE_INPUT_REQUIRED"]
    );
    // Every retry carries the same bytes, signed.
    for r in &got[..4] {
        verify(r, "s3cret-token");
        assert_eq!(r.body, got[0].body, "the same body");
    }
    let d = health_when(&app, &task_id, "hook-1", |d| d["delivered"] == 3).await;
    assert_eq!(d["delivered"], 3, "{d}");
    assert_eq!(d["attempts"], 0, "attempts start over after a success: {d}");
    assert!(d["lastError"].as_str().unwrap_or("").contains("500"), "{d}");
    assert!(d["lastErrorAt"].is_string(), "{d}");
    app.shutdown().await;
}

/// After `max_failures` a config stops and keeps what it owes, the task's final state included;
/// the owner re-enables it and everything arrives, in order.
#[tokio::test]
async fn a_failing_config_stops_keeps_the_final_state_and_resumes() {
    let mut hook = Receiver::start(2).await;
    let app = app_with("max_failures = 2\n").await;
    let r = app
        .rpc(
            "hooks",
            "SendMessage",
            send_with_push("start", config(&hook.url), json!({})),
        )
        .await;
    let task_id = r["result"]["task"]["id"].as_str().unwrap().to_string();
    assert_eq!(hook.next().await.status, 500);
    assert_eq!(hook.next().await.status, 500);
    let done = app
        .send_task("hooks", with(msg("go on"), json!({ "taskId": task_id })))
        .await;
    assert_eq!(state(&done), "TASK_STATE_COMPLETED");

    // The console shows it stopped, with the final state still owed.
    let list = push_list_when(&app, |l| {
        l["failing"] == 1 && l["configs"][0]["delivery"]["attempts"] == 2
    })
    .await;
    assert_eq!(list["failing"], 1, "{list}");
    let d = &list["configs"][0]["delivery"];
    assert_eq!(d["state"], "failing", "{list}");
    assert_eq!(d["finalStatePending"], true, "{list}");
    assert_eq!(d["attempts"], 2);
    assert_eq!(d["pending"], 7);
    assert_eq!(list["configs"][0]["taskState"], "TASK_STATE_COMPLETED");
    assert!(
        hook.rx.try_recv().is_err(),
        "nothing is tried while it is stopped"
    );

    // The owner re-enables it: everything arrives, the final state last.
    let (status, _, view) = app
        .request(
            Who::Owner,
            reqwest::Method::POST,
            &format!("/api/v1/push/{task_id}/hook-1/resume"),
            Some(json!({})),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::OK, "{view}");
    let got = hook.until_accepted("TASK_STATE_COMPLETED").await;
    assert_eq!(
        got.len(),
        7,
        "{:?}",
        got.iter().map(Received::state).collect::<Vec<_>>()
    );
    assert_eq!(got[0].state(), "TASK_STATE_SUBMITTED");
    assert!(got.iter().all(|r| r.status == 200));
    let list = push_list_when(&app, |l| l["configs"][0]["delivery"]["state"] == "idle").await;
    assert_eq!(list["configs"][0]["delivery"]["state"], "idle", "{list}");
    assert_eq!(list["failing"], 0);
    app.shutdown().await;
}

/// What was queued before a stop is delivered after the restart (the outbox is in the
/// journal): the receiver was refusing everything, Sextant stopped, the receiver recovered.
#[tokio::test]
async fn deliveries_owed_at_a_restart_are_delivered_after_it() {
    let mut hook = Receiver::start(usize::MAX).await;
    let app = app_with("max_failures = 1000\n").await;
    let r = app
        .rpc(
            "hooks",
            "SendMessage",
            send_with_push("start", config(&hook.url), json!({})),
        )
        .await;
    let task_id = r["result"]["task"]["id"].as_str().unwrap().to_string();
    assert_eq!(hook.next().await.status, 500);
    let app = app.restart().await;
    hook.fail_first.store(0, Ordering::SeqCst);
    let got = hook.until_accepted("TASK_STATE_INPUT_REQUIRED").await;
    let accepted: Vec<String> = got
        .iter()
        .filter(|r| r.status == 200)
        .map(Received::state)
        .collect();
    assert_eq!(
        accepted,
        [
            "TASK_STATE_SUBMITTED",
            "TASK_STATE_WORKING",
            "TASK_STATE_INPUT_REQUIRED"
        ]
    );
    let cfg = app
        .rpc(
            "hooks",
            "GetTaskPushNotificationConfig",
            json!({ "taskId": task_id, "id": "hook-1" }),
        )
        .await;
    assert_eq!(cfg["result"]["url"], hook.url.as_str(), "{cfg}");
    app.shutdown().await;
}

#[tokio::test]
async fn config_methods_check_owner_url_and_guard() {
    let app = app_with("").await;
    let task = app.send_task("hooks", msg("start")).await;
    let task_id = task["id"].as_str().unwrap().to_string();
    // Create on the caller's task, with a generated id and token; replace it; delete twice.
    let created = app
        .rpc(
            "hooks",
            "CreateTaskPushNotificationConfig",
            json!({ "taskId": task_id, "url": "https://hooks.example.com/a" }),
        )
        .await;
    let cfg = created["result"].clone();
    let id = cfg["id"].as_str().expect("a generated id").to_string();
    assert!(
        cfg["token"].as_str().unwrap_or("").starts_with("whsec_"),
        "{cfg}"
    );
    let listed = app
        .rpc(
            "hooks",
            "ListTaskPushNotificationConfigs",
            json!({ "task_id": task_id }),
        )
        .await;
    assert_eq!(
        listed["result"]["configs"].as_array().map(Vec::len),
        Some(1),
        "{listed}"
    );
    // Another caller's task is not found.
    let other = app
        .rpc_as(
            Who::Owner,
            "hooks",
            "GetTaskPushNotificationConfig",
            json!({ "taskId": task_id, "id": id }),
        )
        .await;
    assert_rpc_error(&other, -32001);
    let missing = app
        .rpc(
            "hooks",
            "GetTaskPushNotificationConfig",
            json!({ "taskId": task_id, "id": "nope" }),
        )
        .await;
    assert_rpc_error(&missing, -32001);
    for _ in 0..2 {
        let d = app
            .rpc(
                "hooks",
                "DeleteTaskPushNotificationConfig",
                json!({ "taskId": task_id, "id": id }),
            )
            .await;
        assert!(d.get("error").is_none(), "{d}");
        assert_eq!(d["result"], Value::Null);
    }
    // The URL is checked with the guard's rules for webhooks; headers cannot be smuggled.
    for (params, field) in [
        (
            json!({ "taskId": task_id, "url": "http://10.0.0.5/hook" }),
            "url",
        ),
        (
            json!({ "taskId": task_id, "url": "https://169.254.169.254/latest" }),
            "url",
        ),
        (
            json!({ "taskId": task_id, "url": "ftp://example.com/x" }),
            "url",
        ),
        (json!({ "taskId": task_id }), "url"),
        (
            json!({ "taskId": task_id, "url": "https://h.example/x",
                 "authentication": { "scheme": "Bearer", "credentials": "a\r\nX-Evil: 1" } }),
            "authentication.credentials",
        ),
        (
            json!({ "taskId": task_id, "url": "https://h.example/x", "token": "t\nx" }),
            "token",
        ),
    ] {
        let r = app
            .rpc("hooks", "CreateTaskPushNotificationConfig", params.clone())
            .await;
        let err = assert_rpc_error(&r, -32602);
        assert_eq!(
            err["data"][1]["fieldViolations"][0]["field"], field,
            "{params}: {err}"
        );
    }
    app.shutdown().await;
}

/// Loopback webhooks are refused unless outbound.toml allows them: loopback addresses, and
/// `localhost` names (any case, with a trailing dot, or under `.localhost`) at once, when the
/// config is created, with the same error as a loopback address; other names are resolved
/// and checked at delivery.
#[tokio::test]
async fn loopback_webhooks_need_outbound_toml() {
    let app = TestApp::spawn_with(false, Some(&push_agent())).await;
    let task = app.send_task("hooks", msg("start")).await;
    let r = app
        .rpc(
            "hooks",
            "CreateTaskPushNotificationConfig",
            json!({ "taskId": task["id"], "url": "http://127.0.0.1:9/hook" }),
        )
        .await;
    let err = assert_rpc_error(&r, -32602);
    assert!(
        err["message"].as_str().unwrap().contains("outbound.toml"),
        "{err}"
    );
    assert_eq!(
        err["data"][1]["fieldViolations"][0]["field"], "url",
        "{err}"
    );
    for url in [
        "http://localhost:9/h",
        "https://LOCALHOST/h",
        "https://localhost./h",
        "https://hooks.localhost:8443/h",
    ] {
        let r = app
            .rpc(
                "hooks",
                "CreateTaskPushNotificationConfig",
                json!({ "taskId": task["id"], "url": url }),
            )
            .await;
        let err = assert_rpc_error(&r, -32602);
        let message = err["message"].as_str().unwrap();
        assert!(
            message.contains("outbound.toml") && message.contains("allow_loopback"),
            "{url}: {err}"
        );
        assert_eq!(
            err["data"][1]["fieldViolations"][0]["field"], "url",
            "{url}: {err}"
        );
        // Given with a message, the same config is refused the same way, and no task starts.
        let r = app
            .rpc(
                "hooks",
                "SendMessage",
                send_with_push("start", json!({ "url": url }), json!({})),
            )
            .await;
        let err = assert_rpc_error(&r, -32602);
        assert!(
            err["message"].as_str().unwrap().contains("allow_loopback"),
            "{url}: {err}"
        );
    }
    let (_, _, configs) = app.get_json("/api/v1/push", true).await;
    assert_eq!(
        configs["configs"].as_array().map_or(0, Vec::len),
        0,
        "no config was taken: {configs}"
    );
    let (_, _, card) = app
        .get_json("/api/v1/agents/hooks/.well-known/agent-card.json", false)
        .await;
    assert_eq!(card["capabilities"]["pushNotifications"], true);
    let push = card["capabilities"]["extensions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["uri"] == "urn:sextant:a2a:push-delivery:v1")
        .unwrap_or_else(|| panic!("the push extension is declared: {card}"));
    assert_eq!(push["required"], false);
    let (_, _, echo) = app
        .get_json("/api/v1/agents/echo/.well-known/agent-card.json", false)
        .await;
    assert_eq!(echo["capabilities"]["pushNotifications"], false);
    app.shutdown().await;
}

/// Delivery time is the runtime's Clock: a failed attempt's next one is due by that clock (with
/// backoff and jitter), the signed timestamp is that clock's, and the retry goes out once the
/// clock has moved past it.
#[tokio::test]
async fn backoff_and_signed_timestamps_follow_the_clock() {
    use chrono::{DateTime, Utc};
    use sextant_core::Clock as _;
    let start: DateTime<Utc> = "2030-01-01T00:00:00Z".parse().unwrap();
    let clock = sextant_core::ManualClock::new(start);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("agents.toml"), push_agent()).unwrap();
    std::fs::write(
        dir.path().join("outbound.toml"),
        "[push]\nallow_loopback = true\ninitial_backoff_ms = 60000\nmax_backoff_secs = 600\n",
    )
    .unwrap();
    let running =
        sextant::start_with_clock(loopback(dir.path()), std::sync::Arc::new(clock.clone()))
            .await
            .unwrap();
    let app = TestApp::running_in(running, dir, false);
    let mut hook = Receiver::start(1).await;
    let r = app
        .rpc(
            "hooks",
            "SendMessage",
            send_with_push("start", config(&hook.url), json!({})),
        )
        .await;
    let task_id = r["result"]["task"]["id"].as_str().unwrap().to_string();
    let first = hook.next().await;
    assert_eq!(first.status, 500);
    assert_eq!(
        first.header("webhook-timestamp"),
        start.timestamp().to_string()
    );

    // The next attempt is due by the clock: a minute's backoff, jittered into its upper half.
    let d = health_when(&app, &task_id, "hook-1", |d| d["state"] == "retrying").await;
    assert_eq!(d["state"], "retrying", "{d}");
    let next: DateTime<Utc> = d["nextAttemptAt"].as_str().unwrap().parse().unwrap();
    assert!(
        next >= start + chrono::Duration::seconds(30)
            && next <= start + chrono::Duration::seconds(60),
        "{next}"
    );
    // Once the clock is past it, the retry goes out, stamped with the clock's time. (The
    // worker sleeps by real time until the clock says it is due; after moving a manual clock,
    // waking it is the test's job, as for the scheduler.)
    clock.set(start + chrono::Duration::seconds(61));
    app.running.runtime.journal().push_ready().notify_one();
    let retry = hook.next().await;
    assert_eq!(retry.status, 200);
    assert_eq!(retry.header("webhook-id"), first.header("webhook-id"));
    assert_eq!(
        retry.header("webhook-timestamp"),
        clock.now().timestamp().to_string()
    );
    verify(&retry, "s3cret-token");
    app.shutdown().await;
}

/// A config's delivery health once `done` holds for it. A receiver has each delivery a moment
/// before Sextant records how it went, so a test reads the health when it has caught up
/// (bounded by [`STEP`]; past that, the last reading, for the assertion to report).
async fn health_when(
    app: &TestApp,
    task_id: &str,
    id: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let deadline = tokio::time::Instant::now() + STEP;
    loop {
        let health = app
            .post_rpc(
                Who::Anon,
                "hooks",
                &[("A2A-Extensions", "urn:sextant:a2a:push-delivery:v1")],
                json!({ "jsonrpc": "2.0", "id": 1, "method": "GetTaskPushNotificationConfig",
                        "params": { "taskId": task_id, "id": id } }),
            )
            .await;
        let d = json_body(health, reqwest::StatusCode::OK).await["result"]["delivery"].clone();
        if done(&d) || tokio::time::Instant::now() > deadline {
            return d;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// The console's list of push configs once `done` holds for it (see [`health_when`]).
async fn push_list_when(app: &TestApp, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = tokio::time::Instant::now() + STEP;
    loop {
        let (status, _, list) = app.get_json("/api/v1/push", true).await;
        assert_eq!(status, reqwest::StatusCode::OK, "{list}");
        if done(&list) || tokio::time::Instant::now() > deadline {
            return list;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}
