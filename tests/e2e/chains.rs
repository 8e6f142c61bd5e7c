//! Approvals across Sextants (issue #35 item 1): A's `a2a` Agent forwards to B (and B to C),
//! whose shell Agent waits for its person. The card stays where the command runs; the callers
//! say whom they wait for, follow the remote task past its wait, and end with its result —
//! with A restarted while it waits, too.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::*;

/// A gateway Agent `gw` that forwards every turn to the peer named `to`.
fn gateway(to: &str) -> String {
    format!(
        "[[agents]]\nid = \"gw\"\nname = \"Gateway\"\ndescription = \"Forwards to {to}\"\n\
         engine = {{ kind = \"a2a\", peer = \"{to}\" }}\n"
    )
}

/// A Sextant whose default Agent is the built-in shell (the one a peer's card points at).
async fn shell_sextant() -> TestApp {
    TestApp::spawn_with(false, Some("default_agent = \"shell\"\n")).await
}

async fn register(app: &TestApp, name: &str, target: &TestApp) {
    let resp = app
        .client
        .post(format!("{}/api/v1/peers", app.url))
        .bearer_auth(&app.token)
        .json(&json!({ "name": name, "url": target.url }))
        .send()
        .await
        .expect("register");
    let status = resp.status();
    let body: Value = resp.json().await.unwrap_or(Value::Null);
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

async fn pending(app: &TestApp) -> Vec<Value> {
    let (status, _, body) = app.get_json("/api/v1/interactions", true).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["interactions"].as_array().cloned().unwrap_or_default()
}

/// Reads `app`'s task stream until a frame contains `needle`.
async fn until_said(app: &TestApp, agent: &str, task_id: &str, needle: &str) {
    let mut s = app
        .stream_as(
            Who::Owner,
            agent,
            "SubscribeToTask",
            json!({ "id": task_id }),
            &[],
        )
        .await;
    loop {
        let f = s
            .next_frame()
            .await
            .unwrap_or_else(|| panic!("the stream ended before it said {needle:?}"));
        if f.data.contains(needle) {
            return;
        }
    }
}

/// Answers the one pending card of `app` as its owner.
async fn approve_the_one_card(app: &TestApp) {
    let cards = pending(app).await;
    assert_eq!(cards.len(), 1, "{cards:?}");
    let card = &cards[0];
    let id = card["interactionId"].as_str().expect("an id");
    let resp = app
        .client
        .post(format!("{}/api/v1/interactions/{id}/answer", app.url))
        .bearer_auth(&app.token)
        .json(&json!({
            "task_id": card["taskId"],
            "option": "accept",
            "message_id": uid("answer"),
        }))
        .send()
        .await
        .expect("answer");
    let status = resp.status();
    let body: Value = resp.json().await.unwrap_or(Value::Null);
    assert_eq!(status, StatusCode::OK, "{body}");
}

/// Submits `text` to A's gateway and returns the task id.
async fn submit(a: &TestApp, text: &str) -> String {
    let task = a.submit_as(Who::Owner, "gw", msg(text)).await;
    task["id"].as_str().expect("a task id").to_string()
}

fn all_text(task: &Value) -> String {
    task["artifacts"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|a| a["parts"].as_array().cloned().unwrap_or_default())
        .filter_map(|p| p["text"].as_str().map(String::from))
        .collect()
}

#[tokio::test]
async fn an_approval_given_at_b_completes_the_task_at_a() {
    let b = shell_sextant().await;
    let a = TestApp::spawn_with(false, Some(&gateway("b"))).await;
    register(&a, "b", &b).await;
    let task_id = submit(&a, "echo chained-$((20+22))").await;

    until_said(&a, "gw", &task_id, "Waiting for the person at b").await;
    // The card is where the command runs; A asks its own person nothing.
    assert!(pending(&a).await.is_empty(), "A raised no card");
    let at_b = pending(&b).await;
    assert_eq!(at_b.len(), 1, "{at_b:?}");
    assert_eq!(at_b[0]["command"], "echo chained-$((20+22))", "{at_b:?}");
    let waiting = a.get_task_as(Who::Owner, "gw", &task_id).await;
    assert_eq!(state(&waiting), "TASK_STATE_WORKING", "{waiting}");
    let said = waiting["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        said.contains(&format!("{}/inbox", b.url)),
        "a link to B: {said}"
    );

    approve_the_one_card(&b).await;
    let done = a.wait_terminal(Who::Owner, "gw", &task_id).await;
    assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");
    assert!(all_text(&done).contains("chained-42"), "{done}");
    a.shutdown().await;
    b.shutdown().await;
}

#[tokio::test]
async fn a_chain_of_three_waits_for_the_person_at_the_end_and_finishes_at_the_start() {
    let c = shell_sextant().await;
    let b = TestApp::spawn_with(
        false,
        Some(&format!("default_agent = \"gw\"\n{}", gateway("c"))),
    )
    .await;
    register(&b, "c", &c).await;
    let a = TestApp::spawn_with(false, Some(&gateway("b"))).await;
    register(&a, "b", &b).await;
    let task_id = submit(&a, "echo three-hops").await;

    // A reads B's words, which say whom B waits for.
    until_said(&a, "gw", &task_id, "Waiting for the person at c").await;
    assert!(pending(&a).await.is_empty());
    assert!(pending(&b).await.is_empty());
    approve_the_one_card(&c).await;
    let done = a.wait_terminal(Who::Owner, "gw", &task_id).await;
    assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");
    assert!(all_text(&done).contains("three-hops"), "{done}");
    for app in [a, b, c] {
        app.shutdown().await;
    }
}

#[tokio::test]
async fn a_restarted_a_goes_on_following_and_a_decline_at_b_ends_it() {
    let b = shell_sextant().await;
    let a = TestApp::spawn_with(false, Some(&gateway("b"))).await;
    register(&a, "b", &b).await;
    let task_id = submit(&a, "echo across-a-restart").await;
    until_said(&a, "gw", &task_id, "Waiting for the person at b").await;

    let a = a.restart().await;
    approve_the_one_card(&b).await;
    let done = a.wait_terminal(Who::Owner, "gw", &task_id).await;
    assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");
    assert!(all_text(&done).contains("across-a-restart"), "{done}");

    // A decline at B ends B's task, and A's with it, with nothing run.
    let second = submit(&a, "echo never-run").await;
    until_said(&a, "gw", &second, "Waiting for the person at b").await;
    let cards = pending(&b).await;
    let id = cards[0]["interactionId"].as_str().expect("an id");
    let resp = b
        .client
        .post(format!("{}/api/v1/interactions/{id}/answer", b.url))
        .bearer_auth(&b.token)
        .json(&json!({ "task_id": cards[0]["taskId"], "option": "cancel",
                       "message_id": uid("answer") }))
        .send()
        .await
        .expect("answer");
    assert_eq!(resp.status(), StatusCode::OK);
    let ended = a.wait_terminal(Who::Owner, "gw", &second).await;
    assert_ne!(state(&ended), "TASK_STATE_COMPLETED", "{ended}");
    assert!(!all_text(&ended).contains("never-run"), "{ended}");
    a.shutdown().await;
    b.shutdown().await;
}

async fn peer_call(a: &TestApp, body: Value) -> (StatusCode, Value) {
    let resp = a
        .client
        .post(format!("{}/api/v1/peers/call", a.url))
        .bearer_auth(&a.token)
        .json(&body)
        .send()
        .await
        .expect("a2a_call");
    let status = resp.status();
    (status, resp.json().await.unwrap_or(Value::Null))
}

/// Reads the outbound Session's stream until one of its tasks ends; that state.
async fn until_the_call_ends(events: &mut Sse) -> String {
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
        if is_terminal(s) {
            return s.to_string();
        }
    }
}

async fn conversation_text(a: &TestApp, ctx: &str) -> String {
    let (status, _, v) = a
        .get_json(&format!("/api/v1/peers/conversations/{ctx}"), true)
        .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    v.to_string()
}

#[tokio::test]
async fn a2a_call_to_a_sextant_waits_for_its_person_and_journals_the_answer() {
    let b = shell_sextant().await;
    let a = TestApp::spawn().await;
    register(&a, "b", &b).await;
    let (status, r) = peer_call(
        &a,
        json!({ "agent": "b", "message": "echo called-$((6*7))" }),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{r}");
    assert_eq!(r["status"], "working", "{r}");
    let hint = r["hint"].as_str().unwrap_or_default();
    assert!(hint.contains("Waiting for the person at b"), "{r}");
    assert!(r.get("interaction_id").is_none(), "no card at A: {r}");
    assert!(pending(&a).await.is_empty());
    let ctx = r["context_id"].as_str().expect("a context").to_string();
    // The conversation keeps one order: nothing new goes to B before its answer.
    let (status, again) = peer_call(
        &a,
        json!({ "agent": "b", "message": "echo too-soon", "context_id": ctx }),
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT, "{again}");

    let session = r["session_id"].as_str().expect("a session");
    let mut events = a
        .get_sse(&format!("/api/v1/sessions/{session}/events"), None)
        .await;
    approve_the_one_card(&b).await;
    assert_eq!(
        until_the_call_ends(&mut events).await,
        "TASK_STATE_COMPLETED"
    );
    assert!(conversation_text(&a, &ctx).await.contains("called-42"));
    a.shutdown().await;
    b.shutdown().await;
}

#[tokio::test]
async fn a_followed_a2a_call_survives_a_restart_of_the_caller() {
    let b = shell_sextant().await;
    let a = TestApp::spawn().await;
    register(&a, "b", &b).await;
    let (status, r) = peer_call(&a, json!({ "agent": "b", "message": "echo after-restart" })).await;
    assert_eq!(
        (status, r["status"].as_str()),
        (StatusCode::OK, Some("working")),
        "{r}"
    );
    let ctx = r["context_id"].as_str().expect("a context").to_string();
    let session = r["session_id"].as_str().expect("a session").to_string();

    let a = a.restart().await;
    let mut events = a
        .get_sse(&format!("/api/v1/sessions/{session}/events"), None)
        .await;
    approve_the_one_card(&b).await;
    assert_eq!(
        until_the_call_ends(&mut events).await,
        "TASK_STATE_COMPLETED"
    );
    assert!(conversation_text(&a, &ctx).await.contains("after-restart"));
    a.shutdown().await;
    b.shutdown().await;
}

/// A slow Sextant peer's output arrives whole and once (#35 item 3): B prints `tick 0…5` over
/// about 6 s while A's registration limits one read to 1 s (`timeout_secs = 1`). The follower's
/// own rules (a snapshot after a cut adds only what is missing) are proven in
/// `sextant-peers` `follow.rs`'s unit tests; this one holds the whole path against a real peer.
#[tokio::test]
async fn a_slow_peers_output_arrives_whole_through_resubscriptions() {
    let b = TestApp::spawn_with(
        false,
        Some(&format!(
            "default_agent = \"ticks\"\n{}",
            exec_agent(
                "ticks",
                "i=0; while [ $i -lt 6 ]; do echo tick $i; i=$((i+1)); sleep 1; done"
            )
        )),
    )
    .await;
    let a = TestApp::spawn_with(false, Some(&gateway("b"))).await;
    let resp = a
        .client
        .post(format!("{}/api/v1/peers", a.url))
        .bearer_auth(&a.token)
        .json(&json!({ "name": "b", "url": b.url, "timeout_secs": 1 }))
        .send()
        .await
        .expect("register");
    assert_eq!(resp.status(), StatusCode::CREATED);
    let task_id = submit(&a, "go").await;
    let done = a.wait_terminal(Who::Owner, "gw", &task_id).await;
    assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");
    let want: String = (0..6).map(|i| format!("tick {i}\n")).collect();
    assert_eq!(all_text(&done), want, "{done}");
    a.shutdown().await;
    b.shutdown().await;
}
