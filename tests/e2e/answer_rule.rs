//! The one rule for every answer (issue #34), tried as a hostile caller would, on every path
//! an answer can arrive by: the console's REST answer API (owner token, peer token, anonymous
//! loopback caller) and the MCP bridge (the owner token, the assistant's workspace token, a
//! per-Agent assistant credential, an assistant the person did not allow).
//!
//! - the person answers any card; an assistant only where the person listed it in the Agent's
//!   `access.answer`, never a card its own request raised (a task it sent, a Run of a schedule
//!   it made), never `acceptForSchedule`, and only with the digest of the action it was shown;
//! - whoever may answer sees the exact action; a remote reader who may not sees a redacted one
//!   marked `masked`, without a digest; shell syntax between PEM markers is never masked.
//!
//! Nothing here waits on a clock: a refused answer leaves the task waiting, so "the command
//! did not run" is read after the person declines it and the task has ended.

use reqwest::{Method, StatusCode};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

use crate::support::*;

/// `sh`: the assistant `helper` may answer its cards; `closed`: no assistant may. Both are
/// callable by peer alice and by every assistant.
const AGENTS: &str = r#"
[[agents]]
id = "sh"
name = "Shell"
description = "e2e: a shell Agent whose cards assistant helper may answer"
engine = { kind = "shell", working_dir = "{dir}" }
access = { call = ["person", "peer:alice", "assistant:*"], answer = ["assistant:helper"] }

[[agents]]
id = "closed"
name = "Closed"
description = "e2e: a shell Agent whose cards only the person answers"
engine = { kind = "shell", working_dir = "{dir}" }
access = { call = ["person", "peer:alice", "assistant:*"] }
"#;

type Mcp = RunningService<RoleClient, ()>;

struct Env {
    app: TestApp,
    alice: String,
    /// The workspace tokens of assistants `helper` (allowed on `sh`) and `other`.
    helper: String,
    other: String,
}

async fn env() -> Env {
    let app = TestApp::spawn_with(false, Some(AGENTS)).await;
    let issue = |path: &'static str, name: &'static str| {
        let app = &app;
        async move {
            let (status, _, body) = app
                .request(
                    Who::Owner,
                    Method::POST,
                    path,
                    Some(json!({ "name": name })),
                )
                .await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
            body["token"].as_str().unwrap().to_string()
        }
    };
    let alice = issue("/api/v1/peer-tokens", "alice").await;
    let helper = issue("/api/v1/assistant-tokens", "helper").await;
    let other = issue("/api/v1/assistant-tokens", "other").await;
    Env {
        app,
        alice,
        helper,
        other,
    }
}

async fn mcp(app: &TestApp, token: Option<&str>) -> Mcp {
    let mut config =
        StreamableHttpClientTransportConfig::with_uri(format!("{}/api/v1/assistant-mcp", app.url));
    if let Some(t) = token {
        config = config.auth_header(t.to_string());
    }
    let transport = StreamableHttpClientTransport::with_client(client(), config);
    tokio::time::timeout(STEP, ().serve(transport))
        .await
        .expect("MCP initialize timed out")
        .expect("MCP initialize")
}

async fn tool(c: &Mcp, name: &'static str, args: Value) -> CallToolResult {
    let Value::Object(args) = args else {
        panic!("object")
    };
    tokio::time::timeout(
        STEP,
        c.call_tool(CallToolRequestParams::new(name).with_arguments(args)),
    )
    .await
    .expect("tool call timed out")
    .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Every text block of a result, joined: what a model reads.
fn all_text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .filter_map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The summary (the first text block).
fn first_text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .find_map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

/// The error code of a refused tool call.
fn refusal_code(r: &CallToolResult) -> String {
    assert_eq!(
        r.is_error,
        Some(true),
        "expected a refusal: {}",
        all_text(r)
    );
    r.structured_content.as_ref().expect("structured")["error"]["code"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// A blocking A2A SendMessage with `bearer` to `url`; the task.
async fn send_to(app: &TestApp, url: &str, bearer: &str, text: &str) -> Value {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                       "params": { "message": msg(text) } });
    let resp = send(
        app.client
            .post(url)
            .bearer_auth(bearer)
            .header("content-type", "application/json")
            .header("A2A-Version", "1.0")
            .body(body.to_string()),
    )
    .await;
    let v = json_body(resp, StatusCode::OK).await;
    assert!(v.get("error").is_none(), "{v}");
    let task = v["result"]["task"].clone();
    assert_eq!(state(&task), "TASK_STATE_AUTH_REQUIRED", "{task}");
    task
}

/// Alice's GetTask of her own task.
async fn alice_get(env: &Env, agent: &str, task_id: &Value) -> Value {
    let body = json!({ "jsonrpc": "2.0", "id": 3, "method": "GetTask",
                       "params": { "id": task_id } });
    let resp = send(
        env.app
            .client
            .post(env.app.a2a_url(agent))
            .bearer_auth(&env.alice)
            .header("content-type", "application/json")
            .header("A2A-Version", "1.0")
            .body(body.to_string()),
    )
    .await;
    let v = json_body(resp, StatusCode::OK).await;
    assert!(v.get("error").is_none(), "{v}");
    v["result"].clone()
}

/// The person's card for `task_id` in the console inbox.
async fn card(app: &TestApp, task_id: &str) -> Value {
    let (status, _, body) = app.get_json("/api/v1/interactions", true).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["interactions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["taskId"] == task_id)
        .unwrap_or_else(|| panic!("no card for {task_id}: {body}"))
        .clone()
}

/// `answer_agent_task` over `c`, with `digest` when given.
async fn mcp_answer(
    c: &Mcp,
    agent: &str,
    card: &Value,
    option: &str,
    digest: Option<&str>,
) -> CallToolResult {
    let mut args = json!({ "agent_id": agent, "task_id": card["taskId"],
                           "interaction_id": card["interactionId"], "answer": option,
                           "message_id": uid("mcp-answer") });
    if let Some(d) = digest {
        args["digest"] = json!(d);
    }
    tool(c, "answer_agent_task", args).await
}

/// A REST answer with `bearer` (none: the anonymous loopback caller); status and body.
async fn rest_answer(
    app: &TestApp,
    bearer: Option<&str>,
    card: &Value,
    option: &str,
) -> (StatusCode, Value) {
    let id = card["interactionId"].as_str().unwrap();
    let r = api_request(
        &app.client,
        &app.url,
        Method::POST,
        &format!("/api/v1/interactions/{id}/answer"),
        bearer,
        Some(
            json!({ "task_id": card["taskId"], "option": option, "message_id": uid("rest"),
                     "digest": card["action"]["digest"] }),
        ),
    );
    let (status, _, v) = json_or_null(send(r).await).await;
    (status, v)
}

/// The person declines the card; the task ends (so nothing of it runs any more).
async fn person_declines(app: &TestApp, card: &Value) {
    let (status, body) = rest_answer(app, Some(&app.token), card, "decline").await;
    assert_eq!(status, StatusCode::OK, "{body}");
    ended(app, card["taskId"].as_str().unwrap()).await;
}

/// Any caller's task once it has ended, as the console reads it (`/api/v1/tasks/{id}`), read
/// again after each event of the console's task stream: no sleeping.
async fn ended(app: &TestApp, task_id: &str) -> Value {
    let mut events = app.get_sse("/api/v1/tasks/events", None).await;
    loop {
        let (status, _, task) = app
            .get_json(&format!("/api/v1/tasks/{task_id}"), true)
            .await;
        assert_eq!(status, StatusCode::OK, "{task}");
        let s = task["state"]
            .as_str()
            .or(task["status"]["state"].as_str())
            .unwrap_or_default();
        if is_terminal(s) {
            return task;
        }
        events
            .next_frame()
            .await
            .unwrap_or_else(|| panic!("the event stream ended before {task_id} did: {task}"));
    }
}

/// Item 1: the allowed assistant sees exactly what runs (a command that names PEM markers is
/// not a key, and a real secret is shown to it unmasked), must send the digest, and answers;
/// the peer that sent the command sees a view marked masked without a digest.
#[tokio::test]
async fn whoever_may_answer_sees_the_exact_action_and_must_send_its_digest() {
    let env = env().await;
    let app = &env.app;
    let dir = app.dir.path().display().to_string();
    let helper = mcp(app, Some(&env.helper)).await;

    // Markers around shell syntax: nobody's view hides the `touch` between them.
    let command = format!(
        "echo -----BEGIN PRIVATE KEY-----; touch {dir}/pem-ran; echo -----END PRIVATE KEY-----"
    );
    let task = send_to(app, &app.a2a_url("sh"), &env.alice, &command).await;
    let c = card(app, task["id"].as_str().unwrap()).await;
    let digest = c["action"]["digest"].as_str().unwrap().to_string();
    let read = tool(
        &helper,
        "get_agent_task",
        json!({ "agent_id": "sh", "task_id": task["id"] }),
    )
    .await;
    assert_ne!(read.is_error, Some(true), "{}", all_text(&read));
    let text = all_text(&read);
    assert!(text.contains(&format!("touch {dir}/pem-ran")), "{text}");
    assert!(!text.contains("REDACTED"), "{text}");
    assert!(text.contains(&digest), "{text}");
    let data = &read.structured_content.as_ref().unwrap()["status"]["message"]["parts"];
    let shown = data.to_string();
    assert!(shown.contains(&format!("touch {dir}/pem-ran")), "{shown}");
    assert!(!shown.contains("\"masked\""), "{shown}");
    // The peer's own view of its task shows the command too (it is not a key), unmarked.
    let alice_view = alice_get(&env, "sh", &task["id"]).await;
    let parts = alice_view["status"]["message"]["parts"].to_string();
    assert!(parts.contains(&format!("touch {dir}/pem-ran")), "{parts}");
    assert!(
        !parts.contains("REDACTED") && !parts.contains("\"masked\""),
        "{parts}"
    );

    // No digest: refused, and nothing ran.
    let r = mcp_answer(&helper, "sh", &c, "accept", None).await;
    assert_eq!(refusal_code(&r), "digest_required", "{}", all_text(&r));
    // Another action's digest: refused.
    let r = mcp_answer(&helper, "sh", &c, "accept", Some("sha256:00")).await;
    assert!(
        all_text(&r).contains("digest does not match"),
        "{}",
        all_text(&r)
    );
    assert!(!app.dir.path().join("pem-ran").exists());
    // With it: taken, and the exact command ran.
    let r = mcp_answer(&helper, "sh", &c, "accept", Some(&digest)).await;
    assert_ne!(r.is_error, Some(true), "{}", all_text(&r));
    let done = ended(app, task["id"].as_str().unwrap()).await;
    assert!(
        done.to_string().contains("TASK_STATE_COMPLETED") || done.to_string().contains("completed"),
        "{done}"
    );
    assert!(app.dir.path().join("pem-ran").exists());

    // A real secret: the allowed assistant sees it exactly; the sender, who may not answer,
    // sees it masked, marked, and without a digest to approve it by.
    let secret = format!(
        "curl -s -H 'Authorization: Bearer abcdefghijklmnopqrstuvwxyz0123' http://127.0.0.1:9/ ; touch {dir}/secret-ran"
    );
    let task = send_to(app, &app.a2a_url("sh"), &env.alice, &secret).await;
    let read = tool(
        &helper,
        "get_agent_task",
        json!({ "agent_id": "sh", "task_id": task["id"] }),
    )
    .await;
    assert!(
        all_text(&read).contains("Bearer abcdefghijklmnopqrstuvwxyz0123"),
        "{}",
        all_text(&read)
    );
    let v = json!({ "result": alice_get(&env, "sh", &task["id"]).await });
    let parts = v["result"]["status"]["message"]["parts"].to_string();
    assert!(!parts.contains("abcdefghijklmnopqrstuvwxyz0123"), "{parts}");
    assert!(
        parts.contains("secret-ran"),
        "the command around it stays: {parts}"
    );
    let i = v["result"]["status"]["message"]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|p| p.pointer("/data/interaction"))
        .cloned()
        .unwrap_or_else(|| panic!("no card in alice's view: {v}"));
    assert_eq!(i["masked"], true, "{i}");
    assert!(i["action"].get("digest").is_none(), "{i}");
    let c = card(app, task["id"].as_str().unwrap()).await;
    person_declines(app, &c).await;
    assert!(!app.dir.path().join("secret-ran").exists());
    drop(helper);
    env.app.shutdown().await;
}

/// Item 2: a credential never approves what its own request raised — a per-Agent assistant
/// credential's task, or a Run of a schedule its workspace token made — and an assistant the
/// person did not allow neither reads another caller's task nor answers its card. Peers and
/// the anonymous loopback caller never answer.
#[tokio::test]
async fn no_credential_approves_its_own_request_and_only_the_allowed_assistant_answers() {
    let env = env().await;
    let app = &env.app;
    let dir = app.dir.path().display().to_string();
    let helper = mcp(app, Some(&env.helper)).await;
    let other = mcp(app, Some(&env.other)).await;

    // helper's per-Agent credential sends a command over the assistant A2A route.
    let issued = tool(&helper, "issue_agent_peers", json!({ "agent_ids": ["sh"] })).await;
    assert_ne!(issued.is_error, Some(true), "{}", all_text(&issued));
    let peer = issued.structured_content.as_ref().unwrap()["peers"][0].clone();
    let per_agent = peer["token"].as_str().unwrap().to_string();
    let url = format!("{}/a2a", peer["url"].as_str().unwrap());
    let own = send_to(app, &url, &per_agent, &format!("touch {dir}/self-ran")).await;
    let own_card = card(app, own["id"].as_str().unwrap()).await;
    let digest = own_card["action"]["digest"].as_str().unwrap().to_string();
    for option in ["accept", "acceptForSession", "decline"] {
        let r = mcp_answer(&helper, "sh", &own_card, option, Some(&digest)).await;
        assert_eq!(
            refusal_code(&r),
            "own_request",
            "{option}: {}",
            all_text(&r)
        );
    }
    // Its view of its own card says it may not answer, and gives no digest to answer with.
    let read = tool(
        &helper,
        "get_agent_task",
        json!({ "agent_id": "sh", "task_id": own["id"] }),
    )
    .await;
    let text = all_text(&read);
    assert!(text.contains("You may not answer this card"), "{text}");
    assert!(!first_text(&read).contains("Action digest:"), "{text}");
    person_declines(app, &own_card).await;
    assert!(!app.dir.path().join("self-ran").exists());

    // Alice's card: `other` (not allowed) cannot read it, nor answer it; helper may.
    let task = send_to(
        app,
        &app.a2a_url("sh"),
        &env.alice,
        &format!("touch {dir}/alice-ran"),
    )
    .await;
    let alice_card = card(app, task["id"].as_str().unwrap()).await;
    let digest = alice_card["action"]["digest"].as_str().unwrap().to_string();
    let read = tool(
        &other,
        "get_agent_task",
        json!({ "agent_id": "sh", "task_id": task["id"] }),
    )
    .await;
    assert_eq!(read.is_error, Some(true), "{}", all_text(&read));
    assert!(all_text(&read).contains("not found"), "{}", all_text(&read));
    for option in ["accept", "decline"] {
        let r = mcp_answer(&other, "sh", &alice_card, option, Some(&digest)).await;
        assert_eq!(r.is_error, Some(true), "{option}: {}", all_text(&r));
    }
    // Peers and the anonymous loopback caller: refused on the REST answer API.
    let (status, body) = rest_answer(app, Some(&env.alice), &alice_card, "accept").await;
    assert!(
        status == StatusCode::FORBIDDEN || status == StatusCode::UNAUTHORIZED,
        "{status} {body}"
    );
    let (status, body) = rest_answer(app, None, &alice_card, "accept").await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"]["code"], "not_an_answerer", "{body}");
    // The anonymous loopback caller over MCP: not an answerer either.
    let anon = mcp(app, None).await;
    let r = mcp_answer(&anon, "sh", &alice_card, "accept", Some(&digest)).await;
    assert_eq!(r.is_error, Some(true), "{}", all_text(&r));
    let still = alice_get(&env, "sh", &task["id"]).await;
    assert_eq!(state(&still), "TASK_STATE_AUTH_REQUIRED", "{still}");
    // On `closed`, helper is not allowed either.
    let closed = send_to(
        app,
        &app.a2a_url("closed"),
        &env.alice,
        &format!("touch {dir}/closed-ran"),
    )
    .await;
    let closed_card = card(app, closed["id"].as_str().unwrap()).await;
    let r = mcp_answer(
        &helper,
        "closed",
        &closed_card,
        "accept",
        closed_card["action"]["digest"].as_str(),
    )
    .await;
    assert_eq!(r.is_error, Some(true), "{}", all_text(&r));
    person_declines(app, &closed_card).await;
    assert!(!app.dir.path().join("closed-ran").exists());
    // helper, allowed on `sh`, answers alice's card (it is not its own request).
    let r = mcp_answer(&helper, "sh", &alice_card, "decline", Some(&digest)).await;
    assert_ne!(r.is_error, Some(true), "{}", all_text(&r));
    ended(app, task["id"].as_str().unwrap()).await;
    assert!(!app.dir.path().join("alice-ran").exists());

    // A schedule the workspace token made: its Run's card is its own request's.
    let created = tool(
        &helper,
        "create_schedule",
        json!({ "name": "Self grant", "prompt": format!("touch {dir}/schedule-ran"),
                "agent_id": "sh", "cron": "0 3 * * *", "timezone": "UTC" }),
    )
    .await;
    assert_ne!(created.is_error, Some(true), "{}", all_text(&created));
    let id = created.structured_content.as_ref().unwrap()["id"].clone();
    let now = tool(&helper, "run_schedule_now", json!({ "schedule_id": id })).await;
    assert_ne!(now.is_error, Some(true), "{}", all_text(&now));
    let run_task = now.structured_content.as_ref().unwrap()["task_id"]
        .as_str()
        .unwrap()
        .to_string();
    let run_card = wait_card(app, &run_task).await;
    let digest = run_card["action"]["digest"].as_str().unwrap().to_string();
    for option in ["acceptForSchedule", "accept"] {
        let r = mcp_answer(&helper, "sh", &run_card, option, Some(&digest)).await;
        assert_eq!(
            refusal_code(&r),
            "own_request",
            "{option}: {}",
            all_text(&r)
        );
    }
    person_declines(app, &run_card).await;
    assert!(!app.dir.path().join("schedule-ran").exists());
    drop((helper, other, anon));
    env.app.shutdown().await;
}

/// The card of a task that is about to ask (a Run starts its task in the background): the
/// console's own event stream is read until the card is listed, no sleeping.
async fn wait_card(app: &TestApp, task_id: &str) -> Value {
    let mut events = app.get_sse("/api/v1/tasks/events", None).await;
    loop {
        let (status, _, body) = app.get_json("/api/v1/interactions", true).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        if let Some(c) = body["interactions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["taskId"] == task_id)
        {
            return c.clone();
        }
        events
            .next_frame()
            .await
            .unwrap_or_else(|| panic!("the event stream ended before {task_id} asked"));
    }
}

/// A plan the person made, whose prompt an allowed assistant then rewrote: the assistant wrote
/// what its Runs ask for, so it may not answer their cards (before, only the assistant that
/// *made* a plan counted as its raiser). An unedited plan's Run card it may answer.
#[tokio::test]
async fn an_assistant_that_rewrote_a_plan_does_not_answer_its_runs() {
    let env = env().await;
    let app = &env.app;
    let dir = app.dir.path().display().to_string();
    let helper = mcp(app, Some(&env.helper)).await;
    let make = |name: &'static str, file: &'static str| {
        let dir = dir.clone();
        async move {
            let (status, _, body) = app
                .request(
                    Who::Owner,
                    Method::POST,
                    "/api/v1/me/schedules",
                    Some(
                        json!({ "name": name, "prompt": format!("touch {dir}/{file}"),
                                 "agent_id": "sh", "cron": "0 3 * * *", "timezone": "UTC" }),
                    ),
                )
                .await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
            body["id"].as_str().unwrap().to_string()
        }
    };
    let run_card = |id: String| {
        let helper = &helper;
        async move {
            let now = tool(helper, "run_schedule_now", json!({ "schedule_id": id })).await;
            assert_ne!(now.is_error, Some(true), "{}", all_text(&now));
            let task = now.structured_content.as_ref().unwrap()["task_id"]
                .as_str()
                .unwrap()
                .to_string();
            wait_card(app, &task).await
        }
    };

    let edited = make("Rewritten", "person-words").await;
    let r = tool(
        &helper,
        "update_schedule",
        json!({ "schedule_id": edited, "prompt": format!("touch {dir}/assistant-words") }),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", all_text(&r));
    let card = run_card(edited.clone()).await;
    assert!(
        card["action"]["exact"]["command"]
            .as_str()
            .unwrap_or_default()
            .contains("assistant-words"),
        "{card}"
    );
    let digest = card["action"]["digest"].as_str().unwrap().to_string();
    let r = mcp_answer(&helper, "sh", &card, "accept", Some(&digest)).await;
    assert_eq!(refusal_code(&r), "own_request", "{}", all_text(&r));
    // The person puts the prompt back: the assistant still wrote earlier Runs' prompts (a
    // replay asks for them again), so it stays an author.
    let (status, _, body) = app
        .request(
            Who::Owner,
            Method::PATCH,
            &format!("/api/v1/me/schedules/{edited}"),
            Some(json!({ "prompt": format!("touch {dir}/person-words") })),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    person_declines(app, &card).await;
    let again = run_card(edited).await;
    let digest = again["action"]["digest"].as_str().unwrap().to_string();
    let r = mcp_answer(&helper, "sh", &again, "accept", Some(&digest)).await;
    assert_eq!(refusal_code(&r), "own_request", "{}", all_text(&r));
    person_declines(app, &again).await;
    assert!(!app.dir.path().join("assistant-words").exists());

    // A plan only the person wrote: helper, allowed on `sh`, answers its Run's card.
    let plain = make("Person's", "plain-ran").await;
    let card = run_card(plain).await;
    let digest = card["action"]["digest"].as_str().unwrap().to_string();
    let r = mcp_answer(&helper, "sh", &card, "decline", Some(&digest)).await;
    assert_ne!(r.is_error, Some(true), "{}", all_text(&r));
    ended(app, card["taskId"].as_str().unwrap()).await;
    drop(helper);
    env.app.shutdown().await;
}

/// JWT callers, delegated (`act`) or service, never answer a card: not the one their own
/// request raised, not over REST, the MCP bridge or an A2A follow-up that names an option.
#[tokio::test]
async fn jwt_callers_never_answer_a_card_not_even_their_own() {
    use crate::secure::{jwt, spawn};
    const JWT_AGENTS: &str = r#"
[[agents]]
id = "sh"
name = "Shell"
description = "e2e: a shell Agent JWT callers may call and read"
engine = { kind = "shell" }
access = { call = ["person", "jwt:https://idp.test:*", "actor:https://idp.test:*"],
           answer = ["assistant:*"] }
"#;
    let app = spawn(JWT_AGENTS, "").await;
    let file = app.dir.path().join("jwt-ran");
    let delegated = jwt("alice-user", Some("agent-a"));
    let service = jwt("svc", None);
    let prefix = "/api/v1/agents/sh";
    let sent = app
        .send_message(
            Some(&delegated),
            prefix,
            json!({ "message": msg(&format!("touch {}", file.display())),
                    "configuration": { "returnImmediately": false } }),
        )
        .await;
    let task = sent["result"]["task"].clone();
    assert_eq!(
        task["status"]["state"], "TASK_STATE_AUTH_REQUIRED",
        "{sent}"
    );
    let task_id = task["id"].as_str().unwrap().to_string();
    let (status, _, cards) = app.get(Some(&app.owner), "/api/v1/interactions").await;
    assert_eq!(status, StatusCode::OK, "{cards}");
    let card = cards["interactions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["taskId"] == task_id.as_str())
        .cloned()
        .unwrap_or_else(|| panic!("no card for {task_id}: {cards}"));
    let answer = |option: &str| {
        json!({ "task_id": task_id, "option": option, "message_id": uid("jwt"),
                "digest": card["action"]["digest"] })
    };
    let path = format!(
        "/api/v1/interactions/{}/answer",
        card["interactionId"].as_str().unwrap()
    );
    for bearer in [&delegated, &service] {
        for option in ["accept", "acceptForSession"] {
            let (status, _, body) = app
                .req(Some(bearer), Method::POST, &path, Some(answer(option)), &[])
                .await;
            assert_eq!(status, StatusCode::FORBIDDEN, "{option}: {body}");
        }
        // The assistants' MCP bridge does not take a JWT at all.
        let call = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "answer_agent_task", "arguments": { "agent_id": "sh", "task_id": task_id,
            "interaction_id": card["interactionId"], "option": "accept",
            "digest": card["action"]["digest"] } } });
        let headers = [
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", "2025-11-25"),
        ];
        let (status, _, body) = app
            .req(
                Some(bearer),
                Method::POST,
                "/api/v1/assistant-mcp",
                Some(call),
                &headers,
            )
            .await;
        assert!(
            status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN,
            "{status} {body}"
        );
    }
    // A follow-up in the waiting task that names an option is text, not an approval.
    let follow = app
        .send_message(
            Some(&delegated),
            prefix,
            json!({ "message": with(msg("accept"), json!({ "taskId": task_id,
                                                          "contextId": task["contextId"] })) }),
        )
        .await;
    let (_, got) = app
        .rpc(
            Some(&delegated),
            prefix,
            "GetTask",
            json!({ "id": task_id }),
        )
        .await;
    assert_eq!(
        got["result"]["status"]["state"], "TASK_STATE_AUTH_REQUIRED",
        "after {follow}: {got}"
    );
    // The person declines; nothing ran.
    let (status, _, body) = app
        .req(
            Some(&app.owner),
            Method::POST,
            &path,
            Some(answer("decline")),
            &[],
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(!file.exists());
    app.shutdown().await;
}
