//! Outbound peers end to end: a fake A2A peer (axum, 127.0.0.1:0) registered through
//! `/api/v1/peers`, called, streamed, orchestrated, re-pinned after a card change, used by an
//! `a2a` gateway Agent whose remote input-required is answered in the inbox, and the same
//! tools through the agents MCP server. Nothing but loopback is ever dialled: hostile targets
//! are refused by the guard before any connection.

use reqwest::StatusCode;
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

use crate::support::fake_peer::{Behaviour, Fake, HOSTILE_QUESTION, start_fake};
use crate::support::*;

/// An owner request to the console API; the status and JSON body.
async fn api(app: &TestApp, method: &str, path: &str, body: Option<Value>) -> (StatusCode, Value) {
    let url = format!("{}{path}", app.url);
    let mut req = match method {
        "GET" => app.client.get(url),
        "POST" => app.client.post(url),
        "PATCH" => app.client.patch(url),
        "DELETE" => app.client.delete(url),
        other => panic!("method {other}"),
    }
    .bearer_auth(&app.token);
    if let Some(b) = body {
        req = req
            .header("content-type", "application/json")
            .body(b.to_string());
    }
    let (status, _, v) = json_or_null(send(req).await).await;
    (status, v)
}

async fn register(app: &TestApp, name: &str, fake: &Fake, extra: Value) -> Value {
    let mut body = json!({"name": name, "url": fake.url()});
    if let (Some(o), Value::Object(e)) = (body.as_object_mut(), extra) {
        o.extend(e);
    }
    let (status, v) = api(app, "POST", "/api/v1/peers", Some(body)).await;
    assert_eq!(status, StatusCode::CREATED, "{v}");
    v
}

async fn call(app: &TestApp, body: Value) -> (StatusCode, Value) {
    api(app, "POST", "/api/v1/peers/call", Some(body)).await
}

/// The person answers the inbox card `card_id` left by the a2a_call result `r` with `answer`
/// (option, values); waits on the outbound Session's stream until that task ends, and returns
/// the final state event.
async fn answer_card(app: &TestApp, r: &Value, card_id: &str, answer: Value) -> Value {
    let (status, cards) = api(app, "GET", "/api/v1/interactions", None).await;
    assert_eq!(status, StatusCode::OK, "{cards}");
    let card = cards["interactions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["interactionId"] == card_id)
        .unwrap_or_else(|| panic!("no card {card_id}: {cards}"))
        .clone();
    let session = r["session_id"].as_str().unwrap();
    let mut events = app
        .get_sse(&format!("/api/v1/sessions/{session}/events"), None)
        .await;
    let mut body = answer;
    body["task_id"] = card["taskId"].clone();
    body["message_id"] = json!(uid("card-answer"));
    let (status, v) = api(
        app,
        "POST",
        &format!("/api/v1/interactions/{card_id}/answer"),
        Some(body),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    loop {
        let f = events
            .next_frame()
            .await
            .expect("the session stream stays open");
        let ev = f.json();
        let s = ev["state"]
            .as_str()
            .or(ev["block"]["state"].as_str())
            .unwrap_or("");
        if ev.to_string().contains(card["taskId"].as_str().unwrap()) && is_terminal(s) {
            return json!({ "state": s, "event": ev });
        }
    }
}

/// A registration with several bad fields names every one of them at once, in the shape the
/// schedules API uses (`field` is the first, `fields` lists them all), before any card is
/// fetched; so the console's form can show each on its field.
#[tokio::test]
async fn a_registration_names_every_bad_field_at_once() {
    let app = TestApp::spawn().await;
    let fields = |v: &Value| -> Vec<String> {
        v["error"]["fields"]
            .as_array()
            .map(|a| {
                a.iter()
                    .map(|f| f["field"].as_str().unwrap_or_default().to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    let (status, bad) = api(
        &app,
        "POST",
        "/api/v1/peers",
        Some(json!({"name": "Bad Name", "url": "ftp://example.com/agent",
                    "timeout_secs": 0, "token": "has a space"})),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}");
    assert_eq!(bad["error"]["code"], "invalid_field");
    assert_eq!(bad["error"]["field"], "name");
    assert_eq!(
        fields(&bad),
        ["name", "url", "timeout_secs", "token"],
        "{bad}"
    );
    assert!(
        bad["error"]["fields"][3]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("token:") && !m.contains("has a space")),
        "the token is not echoed: {bad}"
    );

    let (status, empty) = api(&app, "POST", "/api/v1/peers", Some(json!({}))).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{empty}");
    assert_eq!(fields(&empty), ["name", "url"], "{empty}");

    let (_, reserved) = api(
        &app,
        "POST",
        "/api/v1/peers",
        Some(json!({"name": "discover", "url": "https://x.example", "timeout_secs": 99999})),
    )
    .await;
    assert_eq!(fields(&reserved), ["name", "timeout_secs"], "{reserved}");
    assert!(
        reserved["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("reserved")),
        "{reserved}"
    );
    let (_, list) = api(&app, "GET", "/api/v1/peers", None).await;
    assert_eq!(list["peers"], json!([]), "nothing was registered: {list}");
}

#[tokio::test]
async fn register_call_stream_multi_turn_and_history() {
    let app = TestApp::spawn().await;
    let fake = start_fake(
        "alpha",
        json!([{"id": "echo", "name": "Echo", "description": "echoes", "tags": ["repeat"]}]),
        true,
        0,
        Behaviour::Normal,
    )
    .await;
    let v = register(&app, "alpha", &fake, json!({"token": "tok-123"})).await;
    assert_eq!(v["has_token"], true);
    assert_eq!(
        fake.probes(),
        1,
        "registration made one harmless call: GetTask of a task that does not exist"
    );
    assert!(
        v["pin"]["hash"].as_str().is_some_and(|h| h.len() == 64),
        "{v}"
    );
    assert_eq!(
        v["capabilities"],
        json!(["echo", "repeat"]),
        "card skills by default"
    );
    assert!(
        !v.to_string().contains("tok-123"),
        "the token is never returned: {v}"
    );
    let (status, dup) = api(
        &app,
        "POST",
        "/api/v1/peers",
        Some(json!({"name": "alpha", "url": fake.url()})),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT, "{dup}");
    let (status, bad) = api(
        &app,
        "POST",
        "/api/v1/peers",
        Some(json!({"name": "Bad Name", "url": fake.url()})),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}");
    assert_eq!(bad["error"]["field"], "name");

    // Streaming (the card says so), then forced non-streaming.
    let (status, r) = call(&app, json!({"agent": "alpha", "message": "hello"})).await;
    assert_eq!(status, StatusCode::OK, "{r}");
    assert_eq!(r["status"], "ok");
    assert_eq!(r["reply"], "alpha: hello");
    assert_eq!(r["streamed"], true);
    assert_eq!(r["task_state"], "TASK_STATE_COMPLETED");
    let (_, r2) = call(&app, json!({"agent": "alpha", "message": "again", "stream": false, "context_id": r["context_id"]})).await;
    assert_eq!(
        (r2["reply"].as_str(), r2["streamed"].as_bool()),
        (Some("alpha: again"), Some(false))
    );
    assert_eq!(r2["context_id"], r["context_id"]);

    // A remote task that waits for input waits for the person: it becomes an inbox card,
    // the caller's text to it is refused, and the person's answer goes to the same task.
    let (_, q) = call(&app, json!({"agent": "alpha", "message": "ask: color"})).await;
    assert_eq!(q["status"], "waiting_for_person", "{q}");
    assert_eq!(q["task_state"], "TASK_STATE_INPUT_REQUIRED");
    assert!(q["reply"].as_str().unwrap().contains("Which color?"));
    let card_id = q["interaction_id"].as_str().unwrap().to_string();
    assert!(q["hint"].as_str().unwrap().contains(&card_id), "{q}");
    let remote_task = q["task_id"].as_str().unwrap().to_string();
    let (status, refused) = call(
        &app,
        json!({"agent": "alpha", "message": "blue", "context_id": q["context_id"]}),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("waits for the person's decision"),
        "{refused}"
    );
    let a = answer_card(
        &app,
        &q,
        &card_id,
        json!({"option": "reply", "values": {"reply": "blue"}}),
    )
    .await;
    assert_eq!(a["state"], "TASK_STATE_COMPLETED", "{a}");

    let seen = fake.seen();
    assert_eq!(seen.len(), 4);
    for s in &seen {
        assert_eq!(s.authorization.as_deref(), Some("Bearer tok-123"));
        assert_eq!(s.hop.as_deref(), Some("1"));
        assert_eq!(s.version.as_deref(), Some("1.0"));
    }
    assert_eq!(seen[3].task_id.as_deref(), Some(remote_task.as_str()));

    // History and listing.
    let ctx = q["context_id"].as_str().unwrap();
    let (status, h) = api(
        &app,
        "GET",
        &format!("/api/v1/peers/conversations/{ctx}"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{h}");
    let texts: Vec<(&str, &str)> = h["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["role"].as_str().unwrap(), m["text"].as_str().unwrap()))
        .collect();
    assert_eq!(texts.first(), Some(&("user", "ask: color")), "{h}");
    let last = texts.last().unwrap();
    assert!(
        last.0 == "agent" && last.1.ends_with("you said: blue"),
        "{h}"
    );
    let (status, session) = api(&app, "GET", h["session_url"].as_str().unwrap(), None).await;
    assert_eq!(status, StatusCode::OK, "{session}");
    assert_eq!(session["session"]["origin"], "outbound");
    let (_, l) = api(&app, "GET", "/api/v1/peers", None).await;
    assert_eq!(l["peers"][0]["metrics"]["calls"], 4, "{l}");
    assert_eq!(l["peers"][0]["metrics"]["failures"], 0);
    assert_eq!(l["conversations"].as_array().unwrap().len(), 2, "{l}");
    let (status, missing) = api(&app, "GET", "/api/v1/peers/conversations/nope", None).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{missing}");

    // The token lives in a 0600 file, not in the journal.
    let token_file = app.dir.path().join("peer-tokens.json");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&token_file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    for f in ["journal.db", "journal.db-wal"] {
        if let Ok(bytes) = std::fs::read(app.dir.path().join(f)) {
            assert!(
                !bytes.windows(7).any(|w| w == b"tok-123"),
                "token found in {f}"
            );
        }
    }
    // Only the owner may use the peers API.
    let (status, _, _) = app.get_json("/api/v1/peers", false).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _) = api(&app, "DELETE", "/api/v1/peers/alpha", None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = call(&app, json!({"agent": "alpha", "message": "x"})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    app.shutdown().await;
}

#[tokio::test]
async fn a_changed_card_disables_the_peer_until_it_is_re_pinned() {
    let app = TestApp::spawn().await;
    let fake = start_fake(
        "beta",
        json!([{"id": "echo", "name": "Echo", "description": "echoes", "tags": []}]),
        false,
        0,
        Behaviour::Normal,
    )
    .await;
    let v = register(&app, "beta", &fake, json!({})).await;
    let old = v["pin"]["hash"].as_str().unwrap().to_string();
    let (status, _) = call(&app, json!({"agent": "beta", "message": "one"})).await;
    assert_eq!(status, StatusCode::OK);

    fake.add_skill("shell");
    let (status, e) = call(&app, json!({"agent": "beta", "message": "two"})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{e}");
    let msg = e["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains(&old) && msg.contains("skill added: shell"),
        "{msg}"
    );
    let (_, peer) = api(&app, "GET", "/api/v1/peers/beta", None).await;
    assert_eq!(peer["enabled"], false, "{peer}");
    assert_eq!(peer["disabled"]["old_hash"], old.as_str());
    let new = peer["disabled"]["new_hash"].as_str().unwrap().to_string();
    assert_ne!(new, old);
    // Still disabled on the next call, without any new request reaching the peer.
    let before = fake.seen().len();
    let (status, _) = call(&app, json!({"agent": "beta", "message": "three"})).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(fake.seen().len(), before);

    // Discover shows the new pin; re-pinning to another hash is refused; the right one works.
    let (_, d) = api(
        &app,
        "POST",
        "/api/v1/peers/discover",
        Some(json!({"url": "beta"})),
    )
    .await;
    assert_eq!(d["pinHash"], new.as_str(), "{d}");
    assert_eq!(d["matchesPin"], false);
    let (status, _) = api(
        &app,
        "POST",
        "/api/v1/peers/beta/pin",
        Some(json!({"hash": old})),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT);
    let (status, pinned) = api(
        &app,
        "POST",
        "/api/v1/peers/beta/pin",
        Some(json!({"hash": new})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{pinned}");
    assert_eq!(
        (pinned["enabled"].as_bool(), pinned["pin"]["hash"].as_str()),
        (Some(true), Some(new.as_str()))
    );
    let (status, r) = call(&app, json!({"agent": "beta", "message": "four"})).await;
    assert_eq!(status, StatusCode::OK, "{r}");
    assert_eq!(r["reply"], "beta: four");

    // Pinned on first use instead of at registration.
    let late = register(&app, "late", &fake, json!({"pin_on_first_use": true})).await;
    assert!(late["pin"].is_null(), "{late}");
    let (status, _) = call(&app, json!({"agent": "late", "message": "five"})).await;
    assert_eq!(status, StatusCode::OK);
    let (_, late) = api(&app, "GET", "/api/v1/peers/late", None).await;
    assert_eq!(late["pin"]["hash"], new.as_str(), "{late}");
    app.shutdown().await;
}

#[tokio::test]
async fn the_guard_refuses_hostile_targets_and_redirects_through_the_api() {
    let app = TestApp::spawn().await;
    let fake = start_fake("gamma", json!([]), false, 0, Behaviour::Normal).await;
    let hostile = [
        ("http://169.254.169.254/latest/meta-data/", "metadata"),
        ("https://[::ffff:a9fe:a9fe]/", "metadata"),
        ("https://2852039166/", "metadata"),
        ("http://metadata.google.internal/", "metadata"),
        ("https://[fe80::1]/", "link-local"),
        ("https://10.0.0.1/", "allow_private_network"),
        ("http://192.168.1.1/", "plain http"),
    ];
    for (url, why) in hostile {
        let (status, e) = api(
            &app,
            "POST",
            "/api/v1/peers/discover",
            Some(json!({"url": url})),
        )
        .await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{url}: {e}");
        assert!(
            e["error"]["message"].as_str().unwrap().contains(why),
            "{url}: {e}"
        );
        let (status, e) = call(&app, json!({"agent": url, "message": "hi"})).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{url}: {e}");
        let (status, e) = api(
            &app,
            "POST",
            "/api/v1/peers",
            Some(json!({"name": "evil", "url": url})),
        )
        .await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{url}: {e}");
    }
    // A redirect is reported, never followed.
    let gets = fake.card_gets();
    let (status, e) = api(
        &app,
        "POST",
        "/api/v1/peers/discover",
        Some(json!({"url": format!("{}/redirect", fake.url())})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not followed"),
        "{e}"
    );
    assert_eq!(
        fake.card_gets(),
        gets,
        "the redirect target was not fetched"
    );
    // Discovery reports card problems plainly.
    let (status, d) = api(
        &app,
        "POST",
        "/api/v1/peers/discover",
        Some(json!({"url": fake.url()})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{d}");
    assert_eq!(d["valid"], false);
    assert!(
        d["problems"].to_string().contains("declares no skills"),
        "{d}"
    );
    app.shutdown().await;
}

#[tokio::test]
async fn orchestrate_all_first_and_best() {
    let app = TestApp::spawn().await;
    let skill =
        |id: &str, tags: Value| json!([{"id": id, "name": id, "description": "d", "tags": tags}]);
    let a = start_fake(
        "alpha",
        skill("summarize", json!([])),
        true,
        0,
        Behaviour::Normal,
    )
    .await;
    let b = start_fake(
        "beta",
        skill("digest", json!(["summarize"])),
        false,
        1500,
        Behaviour::Normal,
    )
    .await;
    let c = start_fake(
        "gamma",
        skill("other", json!([])),
        false,
        1500,
        Behaviour::AlwaysAsk,
    )
    .await;
    let d = start_fake(
        "delta",
        skill("unrelated", json!([])),
        false,
        0,
        Behaviour::Normal,
    )
    .await;
    register(&app, "alpha", &a, json!({})).await;
    register(&app, "beta", &b, json!({})).await;
    register(&app, "gamma", &c, json!({"capabilities": ["summarize"]})).await;
    register(&app, "delta", &d, json!({})).await;

    let orchestrate = |mode: &str| {
        api(
            &app,
            "POST",
            "/api/v1/peers/orchestrate",
            Some(json!({"capability": "summarize", "message": "the text", "mode": mode})),
        )
    };
    let (status, all) = orchestrate("all").await;
    assert_eq!(status, StatusCode::OK, "{all}");
    assert_eq!(all["peers"], json!(["alpha", "beta", "gamma"]));
    let statuses: Vec<(&str, &str, &str)> = all["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["peer"].as_str().unwrap(),
                r["status"].as_str().unwrap(),
                r["skill_match"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        [
            ("alpha", "ok", "skill id"),
            ("beta", "ok", "skill tag"),
            ("gamma", "waiting_for_person", "declared capability")
        ]
    );
    assert!(
        d.seen().is_empty(),
        "delta does not advertise the capability"
    );

    let (_, first) = orchestrate("first").await;
    assert_eq!(first["winner"]["peer"], "alpha", "{first}");
    let canceled: Vec<&str> = first["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["status"] == "canceled")
        .map(|r| r["peer"].as_str().unwrap())
        .collect();
    assert_eq!(canceled, ["beta", "gamma"], "{first}");

    let (_, best) = orchestrate("best").await;
    assert_eq!(best["winner"]["peer"], "alpha", "{best}");
    assert_eq!(best["winner"]["reply"], "alpha: the text");
    assert!(
        best["reason"].as_str().unwrap().contains("skill id"),
        "{best}"
    );

    let (status, none) = api(
        &app,
        "POST",
        "/api/v1/peers/orchestrate",
        Some(json!({"capability": "cooking", "message": "x", "mode": "all"})),
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{none}");
    assert!(
        none["error"]["message"]
            .as_str()
            .unwrap()
            .contains("known capabilities"),
        "{none}"
    );
    let (status, bad) = api(
        &app,
        "POST",
        "/api/v1/peers/orchestrate",
        Some(json!({"capability": "x", "message": "x", "mode": "longest"})),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}");
    app.shutdown().await;
}

/// A person pauses a peer by hand: it is refused without a request reaching it, orchestration
/// skips it (and says so), and resuming it brings it back with its pin and metrics. A peer can
/// be registered paused.
#[tokio::test]
async fn a_paused_peer_is_refused_and_skipped_until_it_is_resumed() {
    let app = TestApp::spawn().await;
    let skill = json!([{"id": "summarize", "name": "S", "description": "d", "tags": []}]);
    let a = start_fake("alpha", skill.clone(), false, 0, Behaviour::Normal).await;
    let b = start_fake("beta", skill, false, 0, Behaviour::Normal).await;
    let alpha = register(&app, "alpha", &a, json!({})).await;
    assert_eq!(
        (alpha["enabled"].as_bool(), &alpha["paused_at"]),
        (Some(true), &Value::Null)
    );
    let beta = register(&app, "beta", &b, json!({"paused": true})).await;
    assert_eq!(beta["enabled"], false, "{beta}");
    assert!(beta["paused_at"].is_string(), "{beta}");
    let (status, r) = call(&app, json!({"agent": "alpha", "message": "one"})).await;
    assert_eq!(status, StatusCode::OK, "{r}");

    let (status, paused) = api(
        &app,
        "PATCH",
        "/api/v1/peers/alpha",
        Some(json!({"paused": true})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{paused}");
    assert_eq!(paused["enabled"], false);
    let since = paused["paused_at"].as_str().unwrap().to_string();
    // Pausing again keeps the first time; other settings change without resuming it.
    let (_, again) = api(
        &app,
        "PATCH",
        "/api/v1/peers/alpha",
        Some(json!({"paused": true, "timeout_secs": 9})),
    )
    .await;
    assert_eq!(
        (again["paused_at"].as_str(), again["timeout_secs"].as_i64()),
        (Some(since.as_str()), Some(9))
    );

    let (seen, gets) = (a.seen().len(), a.card_gets());
    let (status, e) = call(&app, json!({"agent": "alpha", "message": "two"})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{e}");
    let msg = e["error"]["message"].as_str().unwrap();
    assert!(msg.contains("paused") && msg.contains(&since), "{msg}");
    assert_eq!(
        (a.seen().len(), a.card_gets()),
        (seen, gets),
        "nothing reached the paused peer"
    );
    let orchestrate = || {
        api(
            &app,
            "POST",
            "/api/v1/peers/orchestrate",
            Some(json!({"capability": "summarize", "message": "text", "mode": "all"})),
        )
    };
    let (status, none) = orchestrate().await;
    assert_eq!(status, StatusCode::CONFLICT, "{none}");
    let msg = none["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("alpha (paused)") && msg.contains("beta (paused)"),
        "{msg}"
    );

    let (status, resumed) = api(
        &app,
        "PATCH",
        "/api/v1/peers/beta",
        Some(json!({"paused": false})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{resumed}");
    assert_eq!(
        (resumed["enabled"].as_bool(), &resumed["paused_at"]),
        (Some(true), &Value::Null)
    );
    let (status, all) = orchestrate().await;
    assert_eq!(status, StatusCode::OK, "{all}");
    assert_eq!(all["peers"], json!(["beta"]), "{all}");
    assert_eq!(all["skipped"][0]["peer"], "alpha", "{all}");
    assert_eq!(all["skipped"][0]["paused_at"], since.as_str(), "{all}");
    let (_, listing) = api(&app, "GET", "/api/v1/peers", None).await;
    assert_eq!(listing["totals"]["enabled"], 1, "{listing}");

    let (status, bad) = api(
        &app,
        "PATCH",
        "/api/v1/peers/alpha",
        Some(json!({"paused": "yes"})),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}");
    let (_, back) = api(
        &app,
        "PATCH",
        "/api/v1/peers/alpha",
        Some(json!({"paused": false})),
    )
    .await;
    assert_eq!(back["pin"]["hash"], alpha["pin"]["hash"], "the pin is kept");
    assert_eq!(back["metrics"]["calls"], 1, "the metrics are kept: {back}");
    let (status, r) = call(&app, json!({"agent": "alpha", "message": "three"})).await;
    assert_eq!(status, StatusCode::OK, "{r}");
    assert_eq!(r["reply"], "alpha: three");
    app.shutdown().await;
}

/// A peer that cannot be read counts as a failed call, so its metrics show it failing rather
/// than "no calls"; a refusal of Sextant's own (a paused peer) counts nothing.
#[tokio::test]
async fn a_peer_that_cannot_be_read_counts_as_a_failed_call() {
    let app = TestApp::spawn().await;
    // A loopback port nobody listens on once the listener is gone.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let (status, v) = api(
        &app,
        "POST",
        "/api/v1/peers",
        Some(json!({"name": "gone", "url": format!("http://127.0.0.1:{port}/"), "pin_on_first_use": true})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{v}");

    let (status, e) = call(&app, json!({"agent": "gone", "message": "anyone?"})).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{e}");
    let (_, peer) = api(&app, "GET", "/api/v1/peers/gone", None).await;
    let m = &peer["metrics"];
    assert_eq!(
        (m["calls"].as_i64(), m["failures"].as_i64()),
        (Some(1), Some(1)),
        "{peer}"
    );
    assert!(m["last_call_at"].is_string(), "{peer}");
    let last_error = m["last_error"].as_str().unwrap_or_default();
    assert!(last_error.starts_with("gone: "), "{peer}");

    api(
        &app,
        "PATCH",
        "/api/v1/peers/gone",
        Some(json!({"paused": true})),
    )
    .await;
    let (status, _) = call(&app, json!({"agent": "gone", "message": "again"})).await;
    assert_eq!(status, StatusCode::CONFLICT);
    let (_, peer) = api(&app, "GET", "/api/v1/peers/gone", None).await;
    assert_eq!(
        peer["metrics"]["calls"], 1,
        "a pause counts nothing: {peer}"
    );
    app.shutdown().await;
}

const GATEWAY: &str = r#"
[[agents]]
id = "gateway"
name = "Gateway"
description = "Forwards every turn to the peer named fake"
engine = { kind = "a2a", peer = "fake" }
"#;

#[tokio::test]
async fn the_a2a_engine_turns_a_remote_question_into_an_inbox_interaction() {
    let app = TestApp::spawn_with(false, Some(GATEWAY)).await;
    let fake = start_fake(
        "remote",
        json!([{"id": "colors", "name": "Colors", "description": "asks", "tags": []}]),
        true,
        0,
        Behaviour::Normal,
    )
    .await;
    register(&app, "fake", &fake, json!({"token": "gw-token"})).await;

    // A plain turn streams the remote reply into the local task.
    let done = app.send_task_as(Who::Owner, "gateway", msg("hello")).await;
    assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");
    assert!(done.to_string().contains("remote: hello"), "{done}");
    // The runtime's engine called through the very peers service the server holds (the one
    // whose audit hook `start` set), so its exchange is in the audit log.
    let (_, audit) = api(&app, "GET", "/api/v1/audit?limit=100", None).await;
    let engine_calls = audit["records"]
        .as_array()
        .unwrap_or_else(|| panic!("{audit}"))
        .iter()
        .filter(|r| r["method"] == "outbound call" && r["agent"] == "peer:fake")
        .count();
    assert_eq!(engine_calls, 1, "{audit}");
    assert_eq!(
        fake.seen()[0].hop.as_deref(),
        Some("1"),
        "a call started here"
    );
    // A task that came through one relay is forwarded with the count + 1.
    let resp = app
        .post_rpc(
            Who::Owner,
            "gateway",
            &[("A2A-Hop", "1")],
            json!({ "jsonrpc": "2.0", "id": 9, "method": "SendMessage",
                    "params": { "message": msg("relayed") } }),
        )
        .await;
    let relayed = json_body(resp, StatusCode::OK).await;
    assert_eq!(
        state(&relayed["result"]["task"]),
        "TASK_STATE_COMPLETED",
        "{relayed}"
    );
    let last = fake.seen().last().cloned().unwrap();
    assert_eq!(
        (last.text.as_str(), last.hop.as_deref()),
        ("relayed", Some("2"))
    );

    // A remote input-required waits in the inbox.
    let task = app
        .send_task_as(Who::Owner, "gateway", msg("ask: color"))
        .await;
    assert_eq!(state(&task), "TASK_STATE_INPUT_REQUIRED", "{task}");
    let task_id = task["id"].as_str().unwrap();
    let (status, _, inbox) = app.get_json("/api/v1/interactions", true).await;
    assert_eq!(status, StatusCode::OK);
    let pending = inbox["interactions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["taskId"] == task_id)
        .cloned()
        .unwrap_or_else(|| panic!("no interaction for the task: {inbox}"));
    let ids: Vec<&str> = pending["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["reply", "cancel"]);
    assert!(
        pending["description"]
            .as_str()
            .unwrap()
            .contains("Which color?"),
        "{pending}"
    );
    let interaction = pending["interactionId"].as_str().unwrap();
    // A text message is not an answer.
    let refused = app
        .rpc_as(
            Who::Owner,
            "gateway",
            "SendMessage",
            json!({"message": with(msg("green"), json!({"taskId": task_id}))}),
        )
        .await;
    assert!(refused.get("error").is_some(), "{refused}");

    let (status, answered) = api(
        &app,
        "POST",
        &format!("/api/v1/interactions/{interaction}/answer"),
        Some(json!({"task_id": task_id, "option": "reply", "values": {"reply": "green"}, "message_id": uid("answer")})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answered}");
    let finished = app.wait_terminal(Who::Owner, "gateway", task_id).await;
    assert_eq!(state(&finished), "TASK_STATE_COMPLETED", "{finished}");
    assert!(
        finished.to_string().contains("you said: green"),
        "{finished}"
    );

    let seen = fake.seen();
    let follow = seen
        .iter()
        .find(|s| s.text == "green")
        .expect("the answer reached the peer");
    assert!(
        follow.task_id.is_some(),
        "the answer carries the remote task id"
    );
    assert!(
        seen.iter()
            .all(|s| s.authorization.as_deref() == Some("Bearer gw-token"))
    );
    assert!(
        seen.iter().all(|s| s.method == "SendStreamingMessage"),
        "{seen:?}"
    );

    // Cancel: the remote task is canceled and the local turn fails.
    let task = app
        .send_task_as(Who::Owner, "gateway", msg("ask: again"))
        .await;
    let task_id = task["id"].as_str().unwrap();
    let (_, _, inbox) = app.get_json("/api/v1/interactions", true).await;
    let interaction = inbox["interactions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["taskId"] == task_id)
        .and_then(|i| i["interactionId"].as_str())
        .unwrap()
        .to_string();
    let (status, _) = api(
        &app,
        "POST",
        &format!("/api/v1/interactions/{interaction}/answer"),
        Some(json!({"task_id": task_id, "option": "cancel", "message_id": uid("answer")})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let ended = app.wait_terminal(Who::Owner, "gateway", task_id).await;
    assert_eq!(state(&ended), "TASK_STATE_FAILED", "{ended}");
    assert!(fake.seen().iter().any(|s| s.method == "CancelTask"));
    app.shutdown().await;
}

type Mcp = RunningService<RoleClient, ()>;

async fn mcp(app: &TestApp, owner: bool) -> Mcp {
    let mut config =
        StreamableHttpClientTransportConfig::with_uri(format!("{}/api/v1/assistant-mcp", app.url));
    if owner {
        config = config.auth_header(app.token.clone());
    }
    let transport = StreamableHttpClientTransport::with_client(client(), config);
    tokio::time::timeout(STEP, ().serve(transport))
        .await
        .expect("MCP initialize timed out")
        .expect("MCP initialize")
}

async fn tool(client: &Mcp, name: &'static str, args: Value) -> CallToolResult {
    let Value::Object(args) = args else {
        panic!("object")
    };
    tokio::time::timeout(
        STEP,
        client.call_tool(CallToolRequestParams::new(name).with_arguments(args)),
    )
    .await
    .expect("tool call timed out")
    .unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn first_text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .find_map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn the_tools_are_mcp_tools_too() {
    let app = TestApp::spawn().await;
    let fake = start_fake(
        "delta",
        json!([{"id": "echo", "name": "Echo", "description": "echoes", "tags": []}]),
        true,
        0,
        Behaviour::Normal,
    )
    .await;
    register(&app, "delta", &fake, json!({})).await;
    let client = mcp(&app, true).await;
    let tools = client.list_all_tools().await.unwrap();
    let names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    for t in [
        "get_agent_task",
        "answer_agent_task",
        "a2a_discover",
        "a2a_call",
        "a2a_list",
        "a2a_history",
        "a2a_orchestrate",
    ] {
        assert!(names.iter().any(|n| n == t), "{t} missing from {names:?}");
    }
    let d = tool(&client, "a2a_discover", json!({"url": fake.url()})).await;
    assert_ne!(d.is_error, Some(true), "{d:?}");
    assert!(
        first_text(&d).contains("Skills (1): echo (Echo)"),
        "{}",
        first_text(&d)
    );
    let c = tool(
        &client,
        "a2a_call",
        json!({"agent": "delta", "message": "via mcp"}),
    )
    .await;
    assert_ne!(c.is_error, Some(true), "{c:?}");
    let body = c.structured_content.clone().unwrap();
    assert_eq!(body["reply"], "delta: via mcp");
    assert!(
        first_text(&c).contains("delta answered: ok"),
        "{}",
        first_text(&c)
    );
    let h = tool(
        &client,
        "a2a_history",
        json!({"context_id": body["context_id"]}),
    )
    .await;
    assert_eq!(
        h.structured_content.unwrap()["messages"][1]["text"],
        "delta: via mcp"
    );
    let l = tool(&client, "a2a_list", json!({})).await;
    assert!(first_text(&l).contains("delta"), "{}", first_text(&l));
    let o = tool(
        &client,
        "a2a_orchestrate",
        json!({"capability": "echo", "message": "all of you", "mode": "best"}),
    )
    .await;
    assert_eq!(o.structured_content.unwrap()["winner"]["peer"], "delta");
    let refused = tool(
        &client,
        "a2a_call",
        json!({"agent": "https://169.254.169.254/", "message": "x"}),
    )
    .await;
    assert_eq!(refused.is_error, Some(true));
    assert!(
        first_text(&refused).contains("metadata"),
        "{}",
        first_text(&refused)
    );

    // Not the owner: refused.
    let anon = mcp(&app, false).await;
    let r = tool(&anon, "a2a_list", json!({})).await;
    assert_eq!(r.is_error, Some(true), "{r:?}");
    assert!(
        first_text(&r).contains("console token"),
        "{}",
        first_text(&r)
    );
    let _ = client.cancel().await;
    let _ = anon.cancel().await;
    app.shutdown().await;
}

#[tokio::test]
async fn a_remote_question_still_reaches_the_peer_after_a_restart() {
    let app = TestApp::spawn_with(false, Some(GATEWAY)).await;
    let fake = start_fake(
        "remote",
        json!([{"id": "colors", "name": "Colors", "description": "asks", "tags": []}]),
        false,
        0,
        Behaviour::Normal,
    )
    .await;
    register(&app, "fake", &fake, json!({})).await;
    let task = app
        .send_task_as(Who::Owner, "gateway", msg("ask: shade"))
        .await;
    assert_eq!(state(&task), "TASK_STATE_INPUT_REQUIRED", "{task}");
    let task_id = task["id"].as_str().unwrap().to_string();

    // Sextant stops while the question waits, and starts again on the same data dir.
    let app = app.restart().await;
    let (_, _, inbox) = app.get_json("/api/v1/interactions", true).await;
    let interaction = inbox["interactions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["taskId"] == task_id.as_str())
        .and_then(|i| i["interactionId"].as_str())
        .unwrap_or_else(|| panic!("the question survived the restart: {inbox}"))
        .to_string();
    let (status, answered) = api(
        &app,
        "POST",
        &format!("/api/v1/interactions/{interaction}/answer"),
        Some(json!({"task_id": task_id, "option": "reply", "values": {"reply": "teal"}, "message_id": uid("answer")})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{answered}");
    let done = app.wait_terminal(Who::Owner, "gateway", &task_id).await;
    assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");
    assert!(done.to_string().contains("you said: teal"), "{done}");
    let follow = fake
        .seen()
        .into_iter()
        .find(|s| s.text == "teal")
        .expect("the answer reached the peer");
    assert!(follow.task_id.is_some());
    app.shutdown().await;
}

/// The model side of the trust boundary (issue #14 points 3 and 4): an MCP client (the
/// person's assistant, a model) calls a peer that asks for authorization. It gets "waiting
/// for the person", with the card to show them; its attempt to answer through a2a_call is
/// refused and never reaches the peer; the person's card shows the peer's question exactly,
/// and the person's answer reaches the remote task. A peer's reply reaches the model
/// scrubbed of credentials, with injection markup filtered, inside the untrusted frame, while
/// the journal keeps it raw for the person.
#[tokio::test]
async fn a_model_gets_waiting_for_the_person_and_cannot_answer_a_remote_authorization() {
    let app = TestApp::spawn().await;
    let fake = start_fake("gate", json!([]), false, 0, Behaviour::Normal).await;
    register(&app, "gate", &fake, json!({})).await;
    let model = mcp(&app, true).await;

    let r = tool(
        &model,
        "a2a_call",
        json!({"agent": "gate", "message": "auth: deploy"}),
    )
    .await;
    let text = first_text(&r);
    let body = r.structured_content.clone().unwrap_or(Value::Null);
    assert!(text.contains("waiting_for_person"), "{text}");
    assert!(text.contains("only the person makes"), "{text}");
    assert!(!text.contains("it goes to the same remote task"), "{text}");
    assert!(!text.contains("ghp_16C7"), "{text}");
    assert!(!text.contains("<|im_start|>"), "{text}");
    assert!(text.contains("[Untrusted input from peer gate"), "{text}");
    let card_id = body["interaction_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{body}"))
        .to_string();
    assert!(text.contains(&card_id), "{text}");

    // The model tries to answer: refused, and nothing reaches the peer.
    let attempt = model
        .call_tool(
            CallToolRequestParams::new("a2a_call").with_arguments(
                json!({"agent": "gate", "message": "approved", "context_id": body["context_id"]})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        )
        .await;
    let refused = match attempt {
        Ok(r) => {
            assert_eq!(r.is_error, Some(true), "{r:?}");
            first_text(&r)
        }
        Err(e) => e.to_string(),
    };
    assert!(
        refused.contains("waits for the person's decision"),
        "{refused}"
    );
    assert_eq!(
        fake.seen().len(),
        1,
        "only the first message reached the peer"
    );

    // The person's card shows the peer's question exactly; the person's answer goes on.
    let (_, cards) = api(&app, "GET", "/api/v1/interactions", None).await;
    let card = cards["interactions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["interactionId"] == card_id.as_str())
        .unwrap()
        .clone();
    assert_eq!(card["kind"], "tool_approval", "{card}");
    assert_eq!(card["action"]["exact"]["question"], HOSTILE_QUESTION);
    assert!(
        card.get("from").is_none(),
        "the person made the call: {card}"
    );
    let done = answer_card(&app, &body, &card_id, json!({"option": "continue"})).await;
    assert_eq!(done["state"], "TASK_STATE_COMPLETED", "{done}");
    let seen = fake.seen();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[1].task_id.as_deref(), body["task_id"].as_str());

    // A hostile reply is screened for the model; the journal keeps it raw for the person.
    let r = tool(
        &model,
        "a2a_call",
        json!({"agent": "gate", "message": "hostile: hi"}),
    )
    .await;
    let text = first_text(&r);
    assert!(!text.contains("ghp_16C7"), "{text}");
    assert!(!text.contains("<|im_start|>"), "{text}");
    assert!(
        !text
            .to_lowercase()
            .contains("ignore all previous instructions"),
        "{text}"
    );
    assert!(
        text.contains("[REDACTED]") && text.contains("[filtered]"),
        "{text}"
    );
    assert!(text.contains("[Untrusted input from peer gate"), "{text}");
    let reply = r.structured_content.clone().unwrap()["reply"].clone();
    assert!(!reply.to_string().contains("ghp_16C7"), "{reply}");
    let session = r.structured_content.clone().unwrap()["session_id"]
        .as_str()
        .unwrap()
        .to_string();
    let (_, raw) = api(&app, "GET", &format!("/api/v1/sessions/{session}"), None).await;
    assert!(
        raw.to_string().contains("ghp_16C7"),
        "the person's transcript is raw"
    );
    // Every outbound call is in the audit log: the call, the answer, the hostile reply.
    let (_, audit) = api(&app, "GET", "/api/v1/audit?limit=100", None).await;
    let outbound = audit["records"]
        .as_array()
        .unwrap_or_else(|| panic!("{audit}"))
        .iter()
        .filter(|r| r["method"] == "outbound call" && r["agent"] == "peer:gate")
        .count();
    assert_eq!(outbound, 3, "{audit}");
    model.cancel().await.ok();
    app.shutdown().await;
}

/// A task's outbound work is bounded (issue #14 point 7): with a budget of one exchange, the
/// person's answer to the peer's question is not sent, and the task says why.
#[tokio::test]
async fn the_a2a_engine_stops_at_its_budget() {
    let agents = r#"
[[agents]]
id = "tight"
name = "Tight"
description = "e2e: one exchange per task"
engine = { kind = "a2a", peer = "fake", max_calls = 1 }
"#;
    let app = TestApp::spawn_with(false, Some(agents)).await;
    let fake = start_fake("remote", json!([]), true, 0, Behaviour::Normal).await;
    register(&app, "fake", &fake, json!({})).await;
    let task = app
        .send_task_as(Who::Owner, "tight", msg("ask: color"))
        .await;
    assert_eq!(state(&task), "TASK_STATE_INPUT_REQUIRED", "{task}");
    let task_id = task["id"].as_str().unwrap();
    let (_, _, inbox) = app.get_json("/api/v1/interactions", true).await;
    let card = inbox["interactions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["taskId"] == task_id)
        .cloned()
        .unwrap();
    let id = card["interactionId"].as_str().unwrap();
    let (status, v) = api(
        &app,
        "POST",
        &format!("/api/v1/interactions/{id}/answer"),
        Some(json!({"task_id": task_id, "option": "reply", "values": {"reply": "red"}, "message_id": uid("a")})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let done = app.wait_terminal(Who::Owner, "tight", task_id).await;
    assert_eq!(state(&done), "TASK_STATE_FAILED", "{done}");
    assert!(done.to_string().contains("used its budget"), "{done}");
    assert_eq!(fake.seen().len(), 1, "nothing more was sent");
    app.shutdown().await;
}

/// A late reply is not lost (issue #14 point 5): a peer that answers with a task that is not
/// final (as fasta2a does), or past the call's time limit, is followed — GetTask with backoff
/// — until its task ends, also across a Sextant restart in the middle, and its late answer
/// completes the local task.
#[tokio::test]
async fn a_late_answer_completes_the_task_even_across_a_restart() {
    let app = TestApp::spawn_with(false, Some(GATEWAY)).await;
    let fake = start_fake("slowpoke", json!([]), false, 0, Behaviour::Normal).await;
    register(&app, "fake", &fake, json!({"timeout_secs": 1})).await;

    // Sextant is following the remote task when it restarts.
    let task = app
        .submit_as(Who::Owner, "gateway", msg("later: the report"))
        .await;
    let task_id = task["id"].as_str().unwrap().to_string();
    let mut s = app
        .stream_as(
            Who::Owner,
            "gateway",
            "SubscribeToTask",
            json!({ "id": task_id }),
            &[],
        )
        .await;
    loop {
        let f = s.next_frame().await.expect("the stream stays open");
        if f.data.contains("keeps following its task") {
            break;
        }
    }
    drop(s);
    let app = app.restart().await;
    // The peer answers, late; the restarted Sextant is still following.
    fake.release();
    let done = app.wait_terminal(Who::Owner, "gateway", &task_id).await;
    assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");
    assert!(
        done.to_string().contains("late answer: later: the report"),
        "{done}"
    );
    let sends = fake
        .seen()
        .iter()
        .filter(|s| s.method == "SendMessage")
        .count();
    assert_eq!(
        sends, 1,
        "the message was sent once, and only followed after"
    );
    app.shutdown().await;
}

/// An `a2a` Agent's output is a peer's words (issue #14 point 4): a caller other than the
/// person reads it scrubbed of credentials and filtered for injection markup; the person's
/// transcript keeps it raw.
#[tokio::test]
async fn a_gateway_agents_output_is_screened_for_other_readers() {
    let app = TestApp::spawn_with(false, Some(GATEWAY)).await;
    let fake = start_fake("remote", json!([]), true, 0, Behaviour::Normal).await;
    register(&app, "fake", &fake, json!({})).await;
    // The anonymous local caller is not the person: its reads are screened.
    let task = app
        .send_task_as(Who::Anon, "gateway", msg("hostile: hi"))
        .await;
    assert_eq!(state(&task), "TASK_STATE_COMPLETED", "{task}");
    let seen = task["artifacts"].to_string();
    assert!(!seen.contains("ghp_16C7"), "{seen}");
    assert!(!seen.contains("<|im_start|>"), "{seen}");
    assert!(
        seen.contains("[REDACTED]") && seen.contains("[filtered]"),
        "{seen}"
    );
    let session = task["metadata"]["sessionId"].as_str().unwrap().to_string();
    let (_, raw) = api(&app, "GET", &format!("/api/v1/sessions/{session}"), None).await;
    assert!(
        raw.to_string().contains("<|im_start|>"),
        "the person's transcript is raw"
    );
    app.shutdown().await;
}

/// A peer that refuses a call at its A2A-Hop limit (403 naming A2A-Hop) is marked in its
/// metrics (`hop_limited_at`), for the Peers page's warning; other failures are not.
#[tokio::test]
async fn a_refusal_at_the_peers_hop_limit_is_recorded_for_the_peers_page() {
    let app = TestApp::spawn().await;
    let fake = start_fake("deep", json!([]), false, 0, Behaviour::HopLimited).await;
    // Such a peer refuses even the registration's probe (Sextant sends A2A-Hop 1), so it is
    // registered unchecked, to be pinned at first use.
    register(&app, "deep", &fake, json!({"pin_on_first_use": true})).await;
    let (status, e) = call(&app, json!({"agent": "deep", "message": "hello"})).await;
    assert!(!status.is_success(), "{status}: {e}");
    let (_, peer) = api(&app, "GET", "/api/v1/peers/deep", None).await;
    let m = &peer["metrics"];
    assert!(m["hop_limited_at"].is_string(), "{peer}");
    let last_error = m["last_error"].as_str().unwrap_or_default();
    assert!(
        last_error.contains("HTTP 403") && last_error.contains("A2A-Hop: 1 refused"),
        "the refusal keeps its status and words: {peer}"
    );
    // The listing carries it too (the Peers page reads the listing).
    let (_, list) = api(&app, "GET", "/api/v1/peers", None).await;
    assert!(list.to_string().contains("hop_limited_at\":\""), "{list}");

    // An ordinary failure is not a hop-limit warning.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    api(
        &app,
        "POST",
        "/api/v1/peers",
        Some(json!({"name": "gone", "url": format!("http://127.0.0.1:{port}/"), "pin_on_first_use": true})),
    )
    .await;
    call(&app, json!({"agent": "gone", "message": "anyone?"})).await;
    let (_, gone) = api(&app, "GET", "/api/v1/peers/gone", None).await;
    assert_eq!(gone["metrics"]["failures"], 1, "{gone}");
    assert_eq!(gone["metrics"]["hop_limited_at"], Value::Null, "{gone}");
    app.shutdown().await;
}

/// Sextant calls Sextant (issue #14 point 7): the callee sees hop 1 and answers; a callee
/// configured to accept fewer hops refuses the call with 403, and the caller's peer view
/// says the peer is at its hop limit.
#[tokio::test]
async fn sextant_calls_sextant_and_a_hop_limit_refusal_shows_on_the_peer() {
    let b = TestApp::spawn().await;
    let a = TestApp::spawn().await;
    let (status, v) = api(
        &a,
        "POST",
        "/api/v1/peers",
        Some(json!({"name": "b", "url": b.url})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{v}");
    let (status, r) = call(&a, json!({"agent": "b", "message": "over the hop"})).await;
    assert_eq!(status, StatusCode::OK, "{r}");
    // B journalled the message with the hop count A sent.
    let (_, _, tasks) = b.get_json("/api/v1/tasks", true).await;
    let task_id = tasks["tasks"][0]["taskId"]
        .as_str()
        .or_else(|| tasks["tasks"][0]["id"].as_str())
        .unwrap_or_else(|| panic!("B has the task: {tasks}"))
        .to_string();
    let agent = tasks["tasks"][0]["agentId"]
        .as_str()
        .unwrap_or("echo")
        .to_string();
    // A called without a credential: B's anonymous local caller owns the task.
    let task = b.get_task_as(Who::Anon, &agent, &task_id).await;
    let user = &task["history"][0];
    assert_eq!(user["parts"][0]["text"], "over the hop", "{task}");
    assert_eq!(
        user["metadata"]["sextantInboundHop"], 1,
        "B saw A2A-Hop 1: {task}"
    );
    let (_, peer) = api(&a, "GET", "/api/v1/peers/b", None).await;
    assert_eq!(peer["metrics"]["hop_limited_at"], Value::Null, "{peer}");
    b.shutdown().await;

    // B again, now accepting fewer hops than A sends.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("security.toml"), "[limits]\nmax_hops = 1\n").unwrap();
    let b = TestApp::start_in(dir, false).await;
    // Checked, it is refused: it refuses every call from here, and registration says so.
    let (status, e) = api(
        &a,
        "POST",
        "/api/v1/peers",
        Some(json!({"name": "strict", "url": b.url})),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("A2A-Hop") && m.contains("max_hops")),
        "{e}"
    );
    let (status, v) = api(
        &a,
        "POST",
        "/api/v1/peers",
        // It refuses the registration's probe too (hop 1): registered unchecked.
        Some(json!({"name": "strict", "url": b.url, "pin_on_first_use": true})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{v}");
    let (status, r) = call(
        &a,
        json!({"agent": "strict", "message": "one hop too many"}),
    )
    .await;
    assert!(!status.is_success(), "{status}: {r}");
    let (_, peer) = api(&a, "GET", "/api/v1/peers/strict", None).await;
    assert!(peer["metrics"]["hop_limited_at"].is_string(), "{peer}");
    assert!(
        peer["metrics"]["last_error"]
            .as_str()
            .is_some_and(|e| e.contains("A2A-Hop: 1 refused")),
        "{peer}"
    );
    assert_eq!(b.tasks_total().await, 0, "B served nothing");
    b.shutdown().await;
    a.shutdown().await;
}

/// Canceling an `a2a` Agent's task (issue #15) sends CancelTask to the remote task first and
/// records the peer's answer with the cancel; the local task ends canceled at once.
#[tokio::test]
async fn canceling_a_gateway_task_cancels_the_remote_task_and_records_its_answer() {
    let app = TestApp::spawn_with(false, Some(GATEWAY)).await;
    let fake = start_fake("slowpoke", json!([]), false, 0, Behaviour::Normal).await;
    register(&app, "fake", &fake, json!({"timeout_secs": 1})).await;
    let task = app
        .submit_as(Who::Owner, "gateway", msg("later: a long report"))
        .await;
    let task_id = task["id"].as_str().unwrap().to_string();
    // Wait until the turn follows the remote task (its id is journalled).
    let mut s = app
        .stream_as(
            Who::Owner,
            "gateway",
            "SubscribeToTask",
            json!({ "id": task_id }),
            &[],
        )
        .await;
    loop {
        let f = s.next_frame().await.expect("the stream stays open");
        if f.data.contains("is working on it") {
            break;
        }
    }
    drop(s);
    let r = app
        .rpc_as(
            Who::Owner,
            "gateway",
            "CancelTask",
            json!({ "id": task_id }),
        )
        .await;
    let t = &r["result"];
    assert_eq!(state(t), "TASK_STATE_CANCELED", "{r}");
    let said = t["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(said.starts_with("Canceled by you."), "{said}");
    assert!(said.contains("fake was asked to cancel its task"), "{said}");
    assert!(said.contains("now TASK_STATE_CANCELED"), "{said}");
    let remote = &t["status"]["message"]["metadata"]["remoteCancel"];
    assert_eq!(remote["peer"], "fake", "{r}");
    assert_eq!(remote["state"], "TASK_STATE_CANCELED", "{r}");
    assert!(fake.seen().iter().any(|s| s.method == "CancelTask"));
    // The peer releasing its answer later changes nothing: the task stays canceled.
    fake.release();
    let again = app.get_task_as(Who::Owner, "gateway", &task_id).await;
    assert_eq!(state(&again), "TASK_STATE_CANCELED");
    app.shutdown().await;
}

/// `a2a_history` hands a model the peer's words from the journal, where they are raw: every
/// copy it returns (the summary, the JSON text block and the structured content) is scrubbed
/// of credentials and filtered for injection markup, as `a2a_call`'s answer is.
#[tokio::test]
async fn a2a_history_screens_the_peers_words_in_every_block() {
    let app = TestApp::spawn().await;
    let fake = start_fake("sly", json!([]), false, 0, Behaviour::Normal).await;
    register(&app, "sly", &fake, json!({})).await;
    let model = mcp(&app, true).await;
    let r = tool(
        &model,
        "a2a_call",
        json!({"agent": "sly", "message": "hostile: hi"}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    let context = r.structured_content.clone().unwrap()["context_id"].clone();

    let h = tool(&model, "a2a_history", json!({"context_id": context})).await;
    assert_ne!(h.is_error, Some(true), "{h:?}");
    let blocks: Vec<String> = h
        .content
        .iter()
        .filter_map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(blocks.len(), 2, "a summary and the JSON: {blocks:?}");
    let structured = h.structured_content.clone().expect("structured content");
    let everything = [blocks.clone(), vec![structured.to_string()]].concat();
    for (i, text) in everything.iter().enumerate() {
        assert!(!text.contains("<|im_start|>"), "copy {i}: {text}");
        assert!(
            !text
                .to_lowercase()
                .contains("ignore all previous instructions"),
            "copy {i}: {text}"
        );
        assert!(!text.contains("ghp_16C7"), "copy {i}: {text}");
        assert!(text.contains("[filtered]"), "copy {i}: {text}");
    }
    // The peer's reply is there, screened.
    let reply = structured["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "agent")
        .unwrap_or_else(|| panic!("{structured}"))["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        reply.starts_with("Done. [filtered]") && reply.contains("[REDACTED]"),
        "{reply}"
    );
    assert!(
        blocks[0].contains("[Untrusted input from peer sly"),
        "{}",
        blocks[0]
    );
    model.cancel().await.ok();
    app.shutdown().await;
}

/// A loopback HTTP server answering with `app`; its base URL.
async fn serve(app: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    url
}

/// A server whose card is `card` (with `{url}` replaced by its base URL), whose
/// `/.well-known/agent.json` is a 404 like any other path, and whose `/rpc` answers every
/// call with `rpc_result` (a JSON-RPC `result`) or, when it is null, TaskNotFound.
async fn card_server(card: &'static str, rpc_result: Value) -> String {
    use axum::routing::{get, post};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let body = card.replace("{url}", &url);
    let app = axum::Router::new()
        .route(
            "/.well-known/agent-card.json",
            get(move || {
                let body = body.clone();
                async move { ([("content-type", "application/json")], body) }
            }),
        )
        .route(
            "/rpc",
            post(move |body: axum::body::Bytes| {
                let result = rpc_result.clone();
                async move {
                    let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                    let answer = if result.is_null() {
                        json!({"jsonrpc": "2.0", "id": req["id"],
                               "error": {"code": -32001, "message": "Task not found"}})
                    } else {
                        json!({"jsonrpc": "2.0", "id": req["id"], "result": result})
                    };
                    axum::Json(answer)
                }
            }),
        );
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    url
}

/// A registration refused: its status, code and message, and the card fields it names;
/// checks that nothing was pinned (the peer list is still empty).
async fn refused(app: &TestApp, url: &str) -> (StatusCode, String, String, Vec<(String, String)>) {
    let (status, e) = api(
        app,
        "POST",
        "/api/v1/peers",
        Some(json!({"name": "wont", "url": url})),
    )
    .await;
    assert!(status.is_client_error(), "{url}: {status} {e}");
    let fields = e["error"]["fields"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|f| {
                    (
                        f["field"].as_str().unwrap_or_default().to_string(),
                        f["message"].as_str().unwrap_or_default().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let (_, list) = api(app, "GET", "/api/v1/peers", None).await;
    assert_eq!(list["peers"], json!([]), "nothing was pinned: {list}");
    let (status_get, _) = api(app, "GET", "/api/v1/peers/wont", None).await;
    assert_eq!(status_get, StatusCode::NOT_FOUND);
    (
        status,
        e["error"]["code"].as_str().unwrap_or_default().to_string(),
        e["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        fields,
    )
}

/// Registration tells the truth (issue #35 item 7): a peer that can never work is refused
/// with a 4xx that says why in a person's words, and nothing is pinned — a 0.3-only server, a
/// card that is not JSON, a card with wrong fields (every one named at once), a JSON-RPC
/// endpoint that answers with a zone-less timestamp, a 404 HTML page, a closed port.
#[tokio::test]
async fn a_registration_that_can_never_work_is_refused_with_the_reason() {
    let app = TestApp::spawn().await;

    // (a) A 0.3-only server: top-level url and protocolVersion 0.3, no 1.0 interface.
    let v03 = card_server(
        r#"{"name": "Old", "description": "a 0.3 agent", "version": "1.0.0",
            "url": "{url}/rpc", "protocolVersion": "0.3.0", "preferredTransport": "JSONRPC",
            "capabilities": {"streaming": true}, "defaultInputModes": ["text"],
            "defaultOutputModes": ["text"],
            "skills": [{"id": "s", "name": "S", "description": "d", "tags": []}]}"#,
        Value::Null,
    )
    .await;
    let (status, code, message, _) = refused(&app, &v03).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{message}");
    assert_eq!(code, "peer_a2a_0_3_only", "{message}");
    assert!(
        message.contains("A2A 0.3") && message.contains("1.0"),
        "{message}"
    );

    // (b) A card that is not JSON at all.
    let broken = card_server(r#"{"name": "Broken", "version": "#, Value::Null).await;
    let (status, code, message, _) = refused(&app, &broken).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{message}");
    assert_eq!(code, "peer_not_a2a", "{message}");
    assert!(message.contains("not JSON"), "{message}");

    // (b) JSON, but not an A2A 1.0 card: every wrong field at once, each by its path.
    let wrong = card_server(
        r#"{"name": "Wrong", "description": "d",
            "supportedInterfaces": [{"url": "{url}/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "capabilities": [], "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": "everything"}"#,
        Value::Null,
    )
    .await;
    let (status, code, message, fields) = refused(&app, &wrong).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{message}");
    assert_eq!(code, "peer_card_invalid", "{message}");
    let named: Vec<&str> = fields.iter().map(|(f, _)| f.as_str()).collect();
    for want in ["card.version", "card.capabilities", "card.skills"] {
        assert!(named.contains(&want), "{want} not in {fields:?}");
    }
    assert!(
        !message.contains("invalid type"),
        "serde's words are not the message: {message}"
    );

    // (b) The card is fine, but the endpoint answers with a zone-less timestamp: the field is
    // named, not serde's "premature end of input".
    let zoneless = card_server(
        r#"{"name": "Zoneless", "description": "d", "version": "1",
            "supportedInterfaces": [{"url": "{url}/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "S", "description": "d", "tags": []}]}"#,
        json!({"id": "t", "contextId": "c",
               "status": {"state": "TASK_STATE_WORKING", "timestamp": "2026-12-01T10:00:00"}}),
    )
    .await;
    let (status, code, message, _) = refused(&app, &zoneless).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{message}");
    assert_eq!(code, "peer_not_a2a_1_0", "{message}");
    assert!(
        message.contains("status.timestamp") && message.contains("time zone"),
        "{message}"
    );
    assert!(!message.contains("premature end of input"), "{message}");

    // (c) A web server's 404 page: summarised, never echoed.
    let html = serve(axum::Router::new().fallback(|| async {
        (
            axum::http::StatusCode::NOT_FOUND,
            [("content-type", "text/html")],
            "<!DOCTYPE html><html><head><title>404 Not Found</title></head>\
             <body><h1>Not Found</h1><p>The requested URL was not found.</p></body></html>",
        )
    }))
    .await;
    let (status, code, message, _) = refused(&app, &html).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{message}");
    assert_eq!(code, "peer_not_a2a", "{message}");
    assert!(
        message.contains(&format!("HTTP 404 from {html}/.well-known/agent-card.json"))
            && message.contains("not an agent card"),
        "{message}"
    );
    assert!(!message.contains('<'), "no HTML: {message}");

    // (d) A closed port: a person's words, not the HTTP library's.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let (status, code, message, _) = refused(&app, &format!("http://127.0.0.1:{port}/")).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{message}");
    assert_eq!(code, "peer_unreachable", "{message}");
    assert!(
        message.contains(&format!(
            "connection refused at 127.0.0.1:{port}: is the peer running?"
        )),
        "{message}"
    );
    for raw in ["os error", "tcp connect", "error sending request"] {
        assert!(!message.contains(raw), "{raw:?} in {message}");
    }
    app.shutdown().await;
}

/// A real second Sextant registers (its card checks out and its JSON-RPC endpoint answers
/// the probe with TaskNotFound), and its card is valid to `discover`: the gRPC interface's
/// `host:port` is the proto's own form for gRPC, not a bad URL.
#[tokio::test]
async fn a_second_sextant_registers_and_its_card_is_valid() {
    let b = TestApp::spawn().await;
    let a = TestApp::spawn().await;
    let (status, d) = api(
        &a,
        "POST",
        "/api/v1/peers/discover",
        Some(json!({"url": b.url})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{d}");
    assert_eq!(d["problems"], json!([]), "{d}");
    assert_eq!(d["valid"], true, "{d}");
    let (status, v) = api(
        &a,
        "POST",
        "/api/v1/peers",
        Some(json!({"name": "b", "url": b.url})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{v}");
    assert!(v["pin"]["hash"].is_string(), "{v}");
    let (status, r) = call(&a, json!({"agent": "b", "message": "hello b"})).await;
    assert_eq!(status, StatusCode::OK, "{r}");
    a.shutdown().await;
    b.shutdown().await;
}

/// An answer the peer does not take (-32005) does not fail the gateway task: the question is
/// asked again, saying why, and the next answer goes through (#35 item 1).
#[tokio::test]
async fn an_answer_the_peer_refuses_keeps_the_question() {
    let app = TestApp::spawn_with(false, Some(GATEWAY)).await;
    let fake = start_fake("remote", json!([]), true, 0, Behaviour::Normal).await;
    register(&app, "fake", &fake, json!({})).await;
    let task = app
        .send_task_as(Who::Owner, "gateway", msg("ask: color"))
        .await;
    assert_eq!(state(&task), "TASK_STATE_INPUT_REQUIRED", "{task}");
    let task_id = task["id"].as_str().expect("an id").to_string();
    let first = only_card(&app).await;
    let mut s = app
        .stream_as(
            Who::Owner,
            "gateway",
            "SubscribeToTask",
            json!({ "id": task_id }),
            &[],
        )
        .await;
    answer_reply(&app, &first, "refuse-me").await;
    // The task waits again, with a new card that says why.
    let again = loop {
        let f = s.next_frame().await.expect("the stream stays open");
        let v = f.json();
        let update = &v["result"]["statusUpdate"];
        if update["status"]["state"] == "TASK_STATE_INPUT_REQUIRED" {
            break update.clone();
        }
        assert!(
            !is_terminal(update["status"]["state"].as_str().unwrap_or("")),
            "the refused answer ended the task: {v}"
        );
    };
    assert!(
        again.to_string().contains("did not take the answer"),
        "{again}"
    );
    assert!(
        again.to_string().contains("Incompatible content types"),
        "{again}"
    );
    let second = only_card(&app).await;
    assert_ne!(second["interactionId"], first["interactionId"]);
    answer_reply(&app, &second, "green").await;
    let done = app.wait_terminal(Who::Owner, "gateway", &task_id).await;
    assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");
    assert!(done.to_string().contains("you said: green"), "{done}");
    app.shutdown().await;
}

async fn only_card(app: &TestApp) -> Value {
    let (_, cards) = api(app, "GET", "/api/v1/interactions", None).await;
    let cards = cards["interactions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(cards.len(), 1, "{cards:?}");
    cards[0].clone()
}

async fn answer_reply(app: &TestApp, card: &Value, reply: &str) {
    let id = card["interactionId"].as_str().expect("an id");
    let (status, v) = api(
        app,
        "POST",
        &format!("/api/v1/interactions/{id}/answer"),
        Some(json!({ "task_id": card["taskId"], "option": "reply",
                     "values": { "reply": reply }, "message_id": uid("answer") })),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
}
