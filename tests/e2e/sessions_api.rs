//! The console's REST API: agents, sessions with their transcripts, tasks, their SSE streams,
//! and who may use them.

use reqwest::StatusCode;
use reqwest::header::WWW_AUTHENTICATE;
use serde_json::{Value, json};

use crate::support::*;

#[tokio::test]
async fn agents_lists_echo_with_its_card() {
    let app = TestApp::spawn().await;
    let (status, _, body) = app.get_json("/api/v1/agents", true).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let agents = body["agents"].as_array().expect("agents");
    let echo = agents
        .iter()
        .find(|a| a["agentId"] == "echo")
        .expect("echo is listed");
    assert_eq!(
        agents.iter().filter(|a| a["default"] == true).count(),
        1,
        "exactly one default agent: {body}"
    );
    assert_eq!(echo["engine"], "echo");
    assert_eq!(
        echo["cardUrl"],
        format!("{}/api/v1/agents/echo/.well-known/agent-card.json", app.url)
    );
    assert_eq!(
        echo["card"]["supportedInterfaces"][0]["url"],
        format!("{}/api/v1/agents/echo/a2a", app.url)
    );
    assert!(
        agents.iter().all(|a| a["agentId"] != "conformance"),
        "no conformance agent unless asked"
    );
    app.shutdown().await;
}

#[tokio::test]
async fn sessions_lists_the_session_and_shows_its_transcript_in_seq_order() {
    let app = TestApp::spawn().await;
    let t = app.send_task("echo", msg("transcribe me")).await;
    let sid = t["metadata"]["sessionId"].as_str().expect("sessionId");

    let (status, _, list) = app.get_json("/api/v1/sessions", true).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    assert_eq!(list["total"], 1);
    let s = &list["sessions"][0];
    assert_eq!(s["sessionId"], sid);
    assert_eq!(s["agentId"], "echo");
    assert_eq!(s["contextId"], t["contextId"]);

    let (status, _, body) = app.get_json(&format!("/api/v1/sessions/{sid}"), true).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["session"]["sessionId"], sid);
    let tasks = body["tasks"].as_array().expect("tasks");
    assert_eq!(tasks.len(), 1);
    assert_eq!(tasks[0]["taskId"], t["id"]);
    assert_eq!(tasks[0]["state"], "TASK_STATE_COMPLETED");

    let transcript = body["transcript"].as_array().expect("transcript");
    let seqs: Vec<i64> = transcript
        .iter()
        .map(|b| b["seq"].as_i64().expect("every block has a seq"))
        .collect();
    assert!(seqs.windows(2).all(|w| w[0] <= w[1]), "seq order: {seqs:?}");
    for b in transcript {
        assert!(b["at"].as_str().is_some_and(|a| a.ends_with('Z')), "{b}");
    }
    let kinds: Vec<&str> = transcript
        .iter()
        .filter_map(|b| b["kind"].as_str())
        .collect();
    for kind in ["user_input", "state", "agent_text"] {
        assert!(kinds.contains(&kind), "a {kind} block: {kinds:?}");
    }
    let user = transcript
        .iter()
        .find(|b| b["kind"] == "user_input")
        .expect("user");
    assert_eq!(user["text"], "transcribe me");
    let agent = transcript
        .iter()
        .find(|b| b["kind"] == "agent_text")
        .expect("agent");
    assert_eq!(agent["text"], "transcribe me");
    let states: Vec<&str> = transcript
        .iter()
        .filter(|b| b["kind"] == "state")
        .filter_map(|b| b["state"].as_str())
        .collect();
    assert_eq!(states.last(), Some(&"TASK_STATE_COMPLETED"), "{states:?}");

    let (status, _, missing) = app.get_json("/api/v1/sessions/no-such-session", true).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(missing["error"]["code"], "not_found");
    app.shutdown().await;
}

/// Reads `n` frames of a never-ending stream.
async fn take(s: &mut Sse, n: usize) -> Vec<Frame> {
    let mut out = Vec::new();
    while out.len() < n {
        out.push(s.next_frame().await.expect("the stream stays open"));
    }
    out
}

#[tokio::test]
async fn session_events_stream_blocks_live_and_resume_with_last_event_id() {
    let app = TestApp::spawn().await;
    let t = app.send_task("echo", msg("first")).await;
    let sid = t["metadata"]["sessionId"].as_str().expect("sessionId");
    let ctx = t["contextId"].as_str().expect("contextId");
    let path = format!("/api/v1/sessions/{sid}/events");
    let (_, _, body) = app.get_json(&format!("/api/v1/sessions/{sid}"), true).await;
    let transcript: Vec<Value> = body["transcript"].as_array().expect("transcript").clone();

    // From the start: the stored blocks, same as the transcript, as `block` events.
    let mut all = app.get_sse(&path, None).await;
    let replay = take(&mut all, transcript.len()).await;
    for (f, b) in replay.iter().zip(&transcript) {
        assert_eq!(f.event.as_deref(), Some("block"));
        assert_eq!(f.seq(), b["seq"].as_i64().expect("seq"));
        assert_eq!(&f.json(), b);
    }

    // Live: a second message in the conversation arrives on the open stream.
    let t2 = app
        .send_task("echo", with(msg("second"), json!({ "contextId": ctx })))
        .await;
    assert_eq!(t2["metadata"]["sessionId"], sid);
    let mut live = Vec::new();
    loop {
        let f = all.next_frame().await.expect("open");
        let b = f.json();
        let done =
            b["kind"] == "state" && b["state"] == "TASK_STATE_COMPLETED" && b["taskId"] == t2["id"];
        live.push(f);
        if done {
            break;
        }
    }
    assert!(
        live.iter()
            .any(|f| f.json()["kind"] == "user_input" && f.json()["text"] == "second"),
        "{live:?}"
    );
    let last_seq = replay.last().expect("replay").seq();
    assert!(live.iter().all(|f| f.seq() > last_seq), "{live:?}");
    drop(all);

    // Resume after the first task's last event: exactly the second task's blocks.
    let mut resumed = app.get_sse(&path, Some(last_seq)).await;
    let again = take(&mut resumed, live.len()).await;
    assert_eq!(again, live, "Last-Event-ID resumes right after that seq");
    drop(resumed);
    app.shutdown().await;
}

#[tokio::test]
async fn task_events_reports_a_new_tasks_state_changes() {
    let app = TestApp::spawn().await;
    let mut events = app.get_sse("/api/v1/tasks/events", None).await;
    let t = app.send_task_as(Who::Anon, "echo", msg("watch me")).await;
    let mut states = Vec::new();
    loop {
        let f = events.next_frame().await.expect("the stream stays open");
        assert_eq!(f.event.as_deref(), Some("task"), "{f:?}");
        let e = f.json();
        if e["taskId"] != t["id"] {
            continue;
        }
        assert_eq!(e["agentId"], "echo");
        assert_eq!(e["sessionId"], t["metadata"]["sessionId"]);
        assert_eq!(e["contextId"], t["contextId"]);
        assert!(e["seq"].is_i64());
        let s = e["state"].as_str().expect("state").to_string();
        let done = s == "TASK_STATE_COMPLETED";
        states.push(s);
        if done {
            break;
        }
    }
    assert_eq!(
        states,
        [
            "TASK_STATE_SUBMITTED",
            "TASK_STATE_WORKING",
            "TASK_STATE_COMPLETED"
        ]
    );
    drop(events);
    app.shutdown().await;
}

#[tokio::test]
async fn console_api_without_token_is_401_with_www_authenticate() {
    let app = TestApp::spawn().await;
    let t = app.send_task("echo", msg("x")).await;
    let sid = t["metadata"]["sessionId"].as_str().expect("sessionId");
    let paths = [
        "/api/v1/agents".to_string(),
        "/api/v1/sessions".to_string(),
        format!("/api/v1/sessions/{sid}"),
        format!("/api/v1/sessions/{sid}/events"),
        "/api/v1/tasks".to_string(),
        "/api/v1/tasks/events".to_string(),
    ];
    for path in &paths {
        let (status, headers, body) = app.get_json(path, false).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{path}: {body}");
        assert!(
            headers
                .get(WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.starts_with("Bearer")),
            "{path} names the Bearer scheme"
        );
        assert_eq!(body["error"]["code"], "unauthorized", "{path}: {body}");
        assert!(body["error"]["message"].is_string());
    }
    app.shutdown().await;
}

#[tokio::test]
async fn a_wrong_token_is_401_on_console_and_a2a_endpoints() {
    let app = TestApp::spawn().await;
    let resp = app
        .client
        .get(format!("{}/api/v1/tasks", app.url))
        .bearer_auth("sxt_wrong")
        .send()
        .await
        .expect("request");
    assert!(resp.headers().contains_key(WWW_AUTHENTICATE));
    let body = json_body(resp, StatusCode::UNAUTHORIZED).await;
    assert_eq!(body["error"]["code"], "unauthorized");

    let resp = app
        .client
        .post(app.a2a_url("echo"))
        .header("Content-Type", "application/json")
        .header("A2A-Version", "1.0")
        .bearer_auth(format!("{}x", app.token))
        .body(
            json!({ "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                    "params": { "message": msg("let me in") } })
            .to_string(),
        )
        .send()
        .await
        .expect("request");
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    assert!(resp.headers().contains_key(WWW_AUTHENTICATE));
    assert_eq!(app.tasks_total().await, 0, "nothing was admitted");
    app.shutdown().await;
}

const OPEN_TO_ALICE: &str = r#"
[[agents]]
id = "open"
name = "Open"
description = "e2e: the person and peer alice may call"
engine = { kind = "echo" }
access = { call = ["person", "anonymous-local", "peer:alice"] }
"#;

/// The ids a list answered (`tasks` or `sessions`), by `key`, and its total.
async fn listed(app: &TestApp, path: &str, items: &str, key: &str) -> (Vec<String>, u64) {
    let (status, _, body) = app.get_json(path, true).await;
    assert_eq!(status, StatusCode::OK, "{path}: {body}");
    let ids = body[items]
        .as_array()
        .expect("a list")
        .iter()
        .map(|v| v[key].as_str().expect("an id").to_string())
        .collect();
    (ids, body["total"].as_u64().expect("total"))
}

/// `origin=` sorts both console lists into the person's own conversations, other agents'
/// and schedules' Runs (issue #37: it was ignored, so every list mixed them).
#[tokio::test]
async fn origin_keeps_the_persons_other_agents_or_schedules_tasks_and_sessions() {
    let app = TestApp::spawn_with(false, Some(OPEN_TO_ALICE)).await;
    let mine = app.send_task_as(Who::Owner, "open", msg("my own")).await;
    let (status, _, body) = app
        .request(
            Who::Owner,
            reqwest::Method::POST,
            "/api/v1/peer-tokens",
            Some(json!({ "name": "alice" })),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let alice = body["token"].as_str().expect("token").to_string();
    let id = uid("rpc");
    let resp = send(
        app.client
            .post(app.a2a_url("open"))
            .bearer_auth(&alice)
            .header("content-type", "application/json")
            .header("A2A-Version", "1.0")
            .body(
                json!({ "jsonrpc": "2.0", "id": id, "method": "SendMessage",
                        "params": { "message": msg("from alice") } })
                .to_string(),
            ),
    )
    .await;
    let theirs = json_body(resp, StatusCode::OK).await;
    let theirs = &theirs["result"]["task"];
    assert!(theirs.is_object(), "{theirs}");
    let (status, _, schedule) = app
        .request(
            Who::Owner,
            reqwest::Method::POST,
            "/api/v1/me/schedules",
            Some(
                json!({ "name": "nightly", "prompt": "from a schedule", "cron": "0 3 * * *",
                         "timezone": "Asia/Kolkata", "agent_id": "open" }),
            ),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{schedule}");
    let (status, _, run) = app
        .request(
            Who::Owner,
            reqwest::Method::POST,
            &format!(
                "/api/v1/me/schedules/{}/run",
                schedule["id"].as_str().unwrap()
            ),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{run}");
    let run_session = run["session_id"]
        .as_str()
        .expect("the Run's Session")
        .to_string();

    let session = |t: &Value| t["metadata"]["sessionId"].as_str().unwrap().to_string();
    for (origin, session_id) in [
        ("mine", session(&mine)),
        ("agents", session(theirs)),
        ("schedules", run_session.clone()),
    ] {
        let (ids, total) = listed(
            &app,
            &format!("/api/v1/sessions?origin={origin}"),
            "sessions",
            "sessionId",
        )
        .await;
        assert_eq!(
            (ids, total),
            (vec![session_id.clone()], 1),
            "sessions from {origin}"
        );
        let (status, _, page) = app
            .get_json(&format!("/api/v1/tasks?origin={origin}"), true)
            .await;
        assert_eq!(status, StatusCode::OK, "{page}");
        let tasks = page["tasks"].as_array().expect("tasks");
        assert_eq!(page["total"], 1, "tasks from {origin}: {page}");
        assert_eq!(tasks.len(), 1, "tasks from {origin}: {page}");
        assert_eq!(tasks[0]["sessionId"], json!(session_id), "{origin}: {page}");
    }
    let (ids, total) = listed(&app, "/api/v1/sessions", "sessions", "sessionId").await;
    assert_eq!((ids.len(), total), (3, 3), "no origin: every Session");
    let (ids, _) = listed(&app, "/api/v1/tasks?origin=", "tasks", "taskId").await;
    assert_eq!(ids.len(), 3, "an empty origin is any");
    for path in ["/api/v1/tasks?origin=peers", "/api/v1/sessions?origin=a2a"] {
        let (status, _, body) = app.get_json(path, true).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path}: {body}");
        assert!(
            body.to_string().contains("mine, agents, schedules"),
            "{path}: {body}"
        );
    }
    app.shutdown().await;
}

/// A peer's task is titled with what the peer said, and its result line is what came back:
/// the untrusted-input frame Sextant puts around a peer's words is for the engine, not for
/// the console's lists (issue #37: the title read "[Untrusted input from peer caller…").
#[tokio::test]
async fn a_peers_task_is_titled_with_its_words_not_the_untrusted_input_frame() {
    let app = TestApp::spawn_with(false, Some(OPEN_TO_ALICE)).await;
    let (status, _, body) = app
        .request(
            Who::Owner,
            reqwest::Method::POST,
            "/api/v1/peer-tokens",
            Some(json!({ "name": "alice" })),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let alice = body["token"].as_str().expect("token").to_string();
    let resp = send(
        app.client
            .post(app.a2a_url("open"))
            .bearer_auth(&alice)
            .header("content-type", "application/json")
            .header("A2A-Version", "1.0")
            .body(
                json!({ "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                        "params": { "message": msg("ping from alice") } })
                .to_string(),
            ),
    )
    .await;
    let answer = json_body(resp, StatusCode::OK).await;
    let task_id = answer["result"]["task"]["id"].as_str().expect("a task");
    // The engine was given the frame (and echoed it back to the peer).
    assert!(
        answer
            .to_string()
            .contains("Untrusted input from peer alice"),
        "{answer}"
    );
    let (status, _, t) = app
        .get_json(&format!("/api/v1/tasks/{task_id}"), true)
        .await;
    assert_eq!(status, StatusCode::OK, "{t}");
    assert_eq!(t["title"], "ping from alice", "{t}");
    let (_, _, page) = app.get_json("/api/v1/tasks?origin=agents", true).await;
    assert_eq!(page["tasks"][0]["title"], "ping from alice", "{page}");
    assert!(!page.to_string().contains("Untrusted input"), "{page}");
    app.shutdown().await;
}
