//! The person's assistant over MCP (rmcp's streamable-HTTP client) with an assistant's
//! workspace token: it manages the owner's schedules (create → fires → Run linked to its
//! Session → replay → delete), the plans record it as their source, nobody else sees or
//! manages them, it gets the owner's Agents as peers with per-Agent credentials and a Hermes
//! block, and revoking it stops its tools, its credentials and its plans at once. Wall time is
//! a manual clock.

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use reqwest::{Method, StatusCode};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use sextant_core::ManualClock;

use crate::support::*;

type Client = RunningService<RoleClient, ()>;

/// 10:00:30 UTC (11:00:30 in Berlin): an every-minute plan's first slot is 10:01:00.
fn t0() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-12-01T10:00:30Z")
        .unwrap()
        .to_utc()
}

async fn spawn(clock: &ManualClock) -> TestApp {
    let dir = tempfile::tempdir().expect("temp dir");
    let running = sextant::start_with_clock(loopback(dir.path()), Arc::new(clock.clone()))
        .await
        .expect("sextant starts");
    TestApp::running_in(running, dir, false)
}

/// An MCP session with `token` (or none: the anonymous loopback caller).
async fn connect(app: &TestApp, token: Option<&str>) -> Client {
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

/// A tool call: the result, or the protocol-level error (e.g. a 401 at the HTTP level).
async fn try_call(
    c: &Client,
    tool: &'static str,
    args: Value,
) -> Result<CallToolResult, rmcp::ServiceError> {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    tokio::time::timeout(
        STEP,
        c.call_tool(CallToolRequestParams::new(tool).with_arguments(args)),
    )
    .await
    .expect("tool call timed out")
}

async fn call(c: &Client, tool: &'static str, args: Value) -> CallToolResult {
    try_call(c, tool, args)
        .await
        .unwrap_or_else(|e| panic!("{tool} failed at the protocol level: {e}"))
}

fn text(r: &CallToolResult) -> String {
    r.content
        .iter()
        .find_map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

fn ok(r: &CallToolResult) -> Value {
    assert_ne!(r.is_error, Some(true), "{}", text(r));
    r.structured_content.clone().expect("structured content")
}

fn refused(r: &CallToolResult) -> String {
    assert_eq!(r.is_error, Some(true), "expected a refusal: {}", text(r));
    text(r)
}

/// The owner issues the assistant's workspace token.
async fn workspace_token(app: &TestApp, name: &str) -> String {
    let (status, _, v) = app
        .request(
            Who::Owner,
            Method::POST,
            "/api/v1/assistant-tokens",
            Some(json!({ "name": name })),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{v}");
    assert_eq!(v["scope"], "workspace", "{v}");
    v["token"].as_str().unwrap().to_string()
}

async fn req(
    app: &TestApp,
    bearer: Option<&str>,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let r = api_request(&app.client, &app.url, method, path, bearer, body);
    let (status, _, v) = json_or_null(send(r).await).await;
    (status, v)
}

/// Run now, replay and backfill say each Run's slot in words, in the plan's zone (New York
/// here, where 10:00:30 UTC is 05:00:30 EST), as list_schedule_runs does; not as RFC 3339.
#[tokio::test]
async fn run_now_replay_and_backfill_say_the_slot_in_the_plans_zone() {
    let clock = ManualClock::new(t0());
    let app = spawn(&clock).await;
    let token = workspace_token(&app, "hermes").await;
    let a = connect(&app, Some(&token)).await;
    let created = call(
        &a,
        "create_schedule",
        json!({ "name": "Hourly", "prompt": "p", "agent_id": "echo",
                "cron": "0 * * * *", "timezone": "America/New_York" }),
    )
    .await;
    let id = ok(&created)["id"].as_str().unwrap().to_string();

    let now = call(&a, "run_schedule_now", json!({ "schedule_id": id })).await;
    let run = ok(&now);
    assert!(
        text(&now).contains("for Tuesday 1 December 2026 at 05:00:30 EST)"),
        "{}",
        text(&now)
    );
    app.wait_terminal(Who::Owner, "echo", run["task_id"].as_str().unwrap())
        .await;
    let replay = call(
        &a,
        "replay_schedule_run",
        json!({ "schedule_id": id, "run_id": run["id"] }),
    )
    .await;
    assert!(
        text(&replay).contains("for Tuesday 1 December 2026 at 05:00:30 EST)"),
        "{}",
        text(&replay)
    );
    app.wait_terminal(Who::Owner, "echo", ok(&replay)["task_id"].as_str().unwrap())
        .await;
    let backfill = call(
        &a,
        "backfill_schedule",
        json!({ "schedule_id": id, "from": "2026-12-01T07:00:30Z", "to": "2026-12-01T10:00:30Z" }),
    )
    .await;
    ok(&backfill);
    let said = text(&backfill);
    for slot in ["03:00", "04:00", "05:00"] {
        assert!(
            said.contains(&format!("for Tuesday 1 December 2026 at {slot} EST)")),
            "{said}"
        );
    }
}

#[tokio::test]
async fn the_assistant_manages_the_owners_plans_over_mcp() {
    let clock = ManualClock::new(t0());
    let app = spawn(&clock).await;
    let token = workspace_token(&app, "hermes").await;
    let a = connect(&app, Some(&token)).await;

    // Create: the echo-back says when, in words, in the plan's zone.
    let created = call(
        &a,
        "create_schedule",
        json!({ "name": "Standup notes", "prompt": "summarise my inbox", "agent_id": "echo",
                "cron": "* * * * *", "timezone": "Europe/Berlin" }),
    )
    .await;
    let s = ok(&created);
    let summary = text(&created);
    assert!(
        summary.starts_with("Created. \"Standup notes\""),
        "{summary}"
    );
    assert!(summary.contains("made by assistant hermes"), "{summary}");
    assert!(
        summary.contains("Next: Tuesday 1 December 2026 at 11:01 CET (in 30s)"),
        "{summary}"
    );
    assert_eq!(s["source"], "assistant");
    assert_eq!(s["source_assistant"], "hermes");
    let id = s["id"].as_str().unwrap().to_string();

    // It is the owner's: in the owner's list, with its source.
    let (status, mine) = req(
        &app,
        Some(&app.token),
        Method::GET,
        "/api/v1/me/schedules",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(mine["schedules"][0]["id"], id.as_str());
    assert_eq!(mine["schedules"][0]["source"], "assistant");
    // The assistant's token works on the REST schedules API too, as the owner's assistant.
    let (status, theirs) = req(
        &app,
        Some(&token),
        Method::GET,
        "/api/v1/me/schedules",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{theirs}");
    assert_eq!(theirs["schedules"][0]["id"], id.as_str());

    // It fires: one Run, executed as the owner, linked to its Session.
    clock.set(t0() + Duration::seconds(30));
    app.running.scheduler.run_due_now().await.unwrap();
    let runs = call(&a, "list_schedule_runs", json!({ "schedule_id": id })).await;
    let list = ok(&runs);
    let first = list["runs"][0].clone();
    assert_eq!(first["trigger"], "cron");
    assert_eq!(first["executed_as"], "person:sextant:owner");
    let session = first["session_id"].as_str().expect("a Session").to_string();
    assert!(
        text(&runs).contains(&format!("/sessions/{session}")),
        "{}",
        text(&runs)
    );
    assert!(
        text(&runs).contains("for Tuesday 1 December 2026 at 11:01 CET"),
        "{}",
        text(&runs)
    );
    app.wait_terminal(Who::Owner, "echo", first["task_id"].as_str().unwrap())
        .await;
    let (status, _, body) = app
        .get_json(&format!("/api/v1/sessions/{session}"), true)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["run"]["runId"], first["id"]);

    // Replay it; run it now; disable and enable it.
    let replay = call(
        &a,
        "replay_schedule_run",
        json!({ "schedule_id": id, "run_id": first["id"] }),
    )
    .await;
    let r = ok(&replay);
    assert_eq!(r["trigger"], "replay");
    assert_eq!(r["replay_of"], first["id"]);
    assert_eq!(r["prompt"], "summarise my inbox");
    app.wait_terminal(Who::Owner, "echo", r["task_id"].as_str().unwrap())
        .await;
    let off = call(&a, "disable_schedule", json!({ "schedule_id": id })).await;
    assert_eq!(ok(&off)["enabled"], false);
    assert!(
        text(&off).contains("Would fire (it is not enabled)"),
        "{}",
        text(&off)
    );
    let on = call(&a, "enable_schedule", json!({ "schedule_id": id })).await;
    assert_eq!(ok(&on)["enabled"], true);
    let edited = call(
        &a,
        "update_schedule",
        json!({ "schedule_id": id, "cron": "30 7 * * 1-5", "overlap_policy": "buffer_one" }),
    )
    .await;
    let e = ok(&edited);
    assert_eq!(
        (e["cron"].clone(), e["overlap_policy"].clone()),
        (json!("30 7 * * 1-5"), json!("buffer_one"))
    );
    assert!(
        text(&edited).contains("Next: Wednesday 2 December 2026 at 07:30 CET"),
        "{}",
        text(&edited)
    );
    // Plain words are read and echoed back: "in 30 minutes" is one Run, not an interval.
    let soon = call(
        &a,
        "create_schedule",
        json!({ "name": "soon", "prompt": "p", "agent_id": "echo", "when": "in 30 minutes",
                "timezone": "Europe/Berlin" }),
    )
    .await;
    assert!(
        text(&soon).starts_with(
            "Understood \"in 30 minutes\" as one Run at 2026-12-01T11:31:00 (Europe/Berlin), \
             not a recurring plan. Created."
        ),
        "{}",
        text(&soon)
    );
    let every = call(
        &a,
        "update_schedule",
        json!({ "schedule_id": ok(&soon)["id"], "when": "every 30 minutes" }),
    )
    .await;
    assert!(
        text(&every).starts_with("Understood \"every 30 minutes\" as cron \"*/30 * * * *\""),
        "{}",
        text(&every)
    );
    ok(&call(
        &a,
        "delete_schedule",
        json!({ "schedule_id": ok(&soon)["id"] }),
    )
    .await);
    // A bad field names it, in the REST wording.
    let bad = call(
        &a,
        "update_schedule",
        json!({ "schedule_id": id, "timezone": "Mars/Olympus" }),
    )
    .await;
    assert!(refused(&bad).contains("timezone"), "{}", text(&bad));
    let got = call(&a, "get_schedule", json!({ "schedule_id": id })).await;
    assert!(text(&got).contains("Record: 2 succeeded"), "{}", text(&got));

    // Nobody else sees or manages it: the anonymous loopback caller, over MCP and REST.
    let anon = connect(&app, None).await;
    for (tool, args) in [
        ("get_schedule", json!({ "schedule_id": id })),
        ("run_schedule_now", json!({ "schedule_id": id })),
        ("delete_schedule", json!({ "schedule_id": id })),
    ] {
        let r = call(&anon, tool, args).await;
        assert!(
            refused(&r).contains("no such schedule"),
            "{tool}: {}",
            text(&r)
        );
    }
    let l = call(&anon, "list_schedules", json!({})).await;
    assert_eq!(ok(&l)["schedules"], json!([]));
    let (_, v) = req(
        &app,
        None,
        Method::GET,
        &format!("/api/v1/me/schedules/{id}"),
        None,
    )
    .await;
    assert_eq!(v["error"]["code"], "not_found", "{v}");

    // Delete.
    let d = call(&a, "delete_schedule", json!({ "schedule_id": id })).await;
    ok(&d);
    let (status, _) = req(
        &app,
        Some(&app.token),
        Method::GET,
        &format!("/api/v1/me/schedules/{id}"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    app.shutdown().await;
}

#[tokio::test]
async fn peers_are_issued_per_agent_and_revoking_the_assistant_stops_everything() {
    let clock = ManualClock::new(t0());
    let app = spawn(&clock).await;
    let token = workspace_token(&app, "hermes").await;
    let a = connect(&app, Some(&token)).await;

    // The owner's Agents as peers: listed, then issued (shown once) with a Hermes block.
    let listed = call(&a, "list_agent_peers", json!({})).await;
    let peers = ok(&listed);
    let ids: Vec<&str> = peers["peers"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["agentId"].as_str())
        .collect();
    assert_eq!(ids, ["echo", "shell"], "{}", text(&listed));
    assert!(!text(&listed).contains("sxa_"), "{}", text(&listed));
    let issued = call(&a, "issue_agent_peers", json!({ "agent_ids": ["echo"] })).await;
    let out = ok(&issued);
    let echo = &out["peers"][0];
    let peer_token = echo["token"].as_str().unwrap().to_string();
    assert!(peer_token.starts_with("sxa_"));
    assert_ne!(peer_token, token);
    let url = echo["url"].as_str().unwrap();
    assert_eq!(url, format!("{}/api/v1/assistant-a2a/agents/echo", app.url));
    let yaml = out["hermesConfig"].as_str().unwrap();
    assert!(yaml.contains("a2a_agents:\n  echo:\n"), "{yaml}");
    assert!(yaml.contains(&format!("token: \"{peer_token}\"")), "{yaml}");
    assert!(text(&issued).contains(yaml));

    // The per-Agent credential calls that Agent over A2A (its card first, as Hermes does).
    let card = req(
        &app,
        Some(&peer_token),
        Method::GET,
        "/api/v1/assistant-a2a/agents/echo/.well-known/agent-card.json",
        None,
    )
    .await;
    assert_eq!(card.0, StatusCode::OK, "{}", card.1);
    let send = |t: &str, agent: &str| {
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                           "params": { "message": msg("hello from hermes") } });
        app.client
            .post(format!(
                "{}/api/v1/assistant-a2a/agents/{agent}/a2a",
                app.url
            ))
            .bearer_auth(t.to_string())
            .header("content-type", "application/json")
            .header("A2A-Version", "1.0")
            .body(body.to_string())
    };
    let resp = crate::support::send(send(&peer_token, "echo")).await;
    let v = json_body(resp, StatusCode::OK).await;
    assert!(v.get("result").is_some(), "{v}");
    // Only that Agent; and the workspace token calls no Agent directly.
    let resp = crate::support::send(send(&peer_token, "shell")).await;
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    let resp = crate::support::send(send(&token, "echo")).await;
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    // A per-Agent credential does not manage schedules.
    let (status, _) = req(
        &app,
        Some(&peer_token),
        Method::GET,
        "/api/v1/me/schedules",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let narrow = connect(&app, Some(&peer_token)).await;
    let r = call(&narrow, "list_schedules", json!({})).await;
    assert!(refused(&r).contains("workspace token"), "{}", text(&r));

    // The owner lists them, and can revoke one.
    let (status, owner_view) = req(
        &app,
        Some(&app.token),
        Method::GET,
        "/api/v1/assistant-tokens",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let hermes = &owner_view["assistantTokens"][0];
    assert_eq!(hermes["peers"][0]["agentId"], "echo", "{owner_view}");
    assert_eq!(hermes["peers"][0]["active"], true);
    // Issued again from the owner's side: the old one is replaced.
    let (status, again) = req(
        &app,
        Some(&app.token),
        Method::POST,
        "/api/v1/assistant-tokens/hermes/peers",
        Some(json!({ "agent_ids": ["echo"] })),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{again}");
    let rotated = again["peers"][0]["token"].as_str().unwrap().to_string();
    let resp = crate::support::send(send(&peer_token, "echo")).await;
    assert_eq!(
        resp.status(),
        StatusCode::UNAUTHORIZED,
        "the replaced credential is dead"
    );
    let (status, _) = req(
        &app,
        Some(&app.token),
        Method::DELETE,
        "/api/v1/assistant-tokens/hermes/peers/echo",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let resp = crate::support::send(send(&rotated, "echo")).await;
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);

    // A plan the assistant made; then the owner revokes the assistant.
    let s = ok(&call(
        &a,
        "create_schedule",
        json!({ "name": "later", "prompt": "p", "agent_id": "echo", "cron": "* * * * *",
                "timezone": "UTC" }),
    )
    .await);
    let fresh = ok(&call(&a, "issue_agent_peers", json!({ "agent_ids": ["echo"] })).await);
    let fresh = fresh["peers"][0]["token"].as_str().unwrap().to_string();
    let (status, _) = req(
        &app,
        Some(&app.token),
        Method::DELETE,
        "/api/v1/assistant-tokens/hermes",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    // Its tools stop at once (401 before MCP sees the call), and so do its credentials.
    assert!(try_call(&a, "list_schedules", json!({})).await.is_err());
    let reconnect = {
        let mut config = StreamableHttpClientTransportConfig::with_uri(format!(
            "{}/api/v1/assistant-mcp",
            app.url
        ));
        config = config.auth_header(token.clone());
        ().serve(StreamableHttpClientTransport::with_client(client(), config))
            .await
    };
    assert!(
        reconnect.is_err(),
        "a revoked assistant cannot even start a session"
    );
    let (status, _) = req(
        &app,
        Some(&token),
        Method::GET,
        "/api/v1/me/schedules",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let resp = crate::support::send(send(&fresh, "echo")).await;
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    // Its plan is the owner's still, and says why its next firing is blocked.
    clock.set(t0() + Duration::seconds(30));
    app.running.scheduler.run_due_now().await.unwrap();
    let (_, runs) = req(
        &app,
        Some(&app.token),
        Method::GET,
        &format!("/api/v1/me/schedules/{}/runs", s["id"].as_str().unwrap()),
        None,
    )
    .await;
    assert_eq!(runs["runs"][0]["status"], "blocked", "{runs}");
    assert!(
        runs["runs"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("assistant hermes was revoked"),
        "{runs}"
    );
    app.shutdown().await;
}

#[tokio::test]
async fn the_assistant_schedules_and_peers_only_the_agents_it_may_call() {
    let clock = ManualClock::new(t0());
    let dir = tempfile::tempdir().expect("temp dir");
    let toml = format!(
        "{}\n[[agents]]\nid = \"private\"\nname = \"Private\"\ndescription = \"owner only\"\n\
         engine = {{ kind = \"echo\" }}\naccess = {{ call = [\"person\"] }}\n",
        exec_agent("open", "read -r line; echo ok")
    );
    std::fs::write(dir.path().join("agents.toml"), toml).unwrap();
    let running = sextant::start_with_clock(loopback(dir.path()), Arc::new(clock.clone()))
        .await
        .expect("sextant starts");
    let app = TestApp::running_in(running, dir, false);
    let token = workspace_token(&app, "hermes").await;
    let a = connect(&app, Some(&token)).await;
    let plan = |agent: &str| {
        json!({ "name": "p", "prompt": "p", "agent_id": agent, "cron": "0 9 * * *",
                "timezone": "UTC" })
    };
    // Checked on create: the assistant itself may not call "private".
    let r = call(&a, "create_schedule", plan("private")).await;
    let why = refused(&r);
    assert!(
        why.contains("not on agent \"private\"'s access list"),
        "{why}"
    );
    assert_eq!(r.structured_content.unwrap()["error"]["code"], "forbidden");
    // Not among its peers, and no credential for it.
    let listed = ok(&call(&a, "list_agent_peers", json!({})).await);
    let ids: Vec<&str> = listed["peers"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["agentId"].as_str())
        .collect();
    assert!(!ids.contains(&"private"), "{ids:?}");
    assert!(ids.contains(&"open"), "{ids:?}");
    let r = call(&a, "issue_agent_peers", json!({ "agent_ids": ["private"] })).await;
    assert!(refused(&r).contains("may not call"), "{}", text(&r));
    // The owner's own plan for "private": the assistant sees it, may disable it, but may not
    // change it (its prompt would run as the owner on an Agent the assistant cannot call), and
    // a Run it asks for is blocked.
    let (status, mine) = req(
        &app,
        Some(&app.token),
        Method::POST,
        "/api/v1/me/schedules",
        Some(plan("private")),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{mine}");
    let mine = mine["id"].as_str().unwrap().to_string();
    let r = call(
        &a,
        "update_schedule",
        json!({ "schedule_id": mine, "prompt": "something else" }),
    )
    .await;
    assert!(refused(&r).contains("private"), "{}", text(&r));
    let r = call(&a, "run_schedule_now", json!({ "schedule_id": mine })).await;
    assert_eq!(ok(&r)["status"], "blocked", "{}", text(&r));
    let r = call(&a, "disable_schedule", json!({ "schedule_id": mine })).await;
    assert_eq!(ok(&r)["enabled"], false);
    let (_, v) = req(
        &app,
        Some(&app.token),
        Method::GET,
        &format!("/api/v1/me/schedules/{mine}"),
        None,
    )
    .await;
    assert_eq!(v["prompt"], "p", "{v}");
    // Checked on enable and at every firing: the owner revokes the assistant's access to "open".
    let s = ok(&call(&a, "create_schedule", plan("open")).await);
    let id = s["id"].as_str().unwrap().to_string();
    ok(&call(&a, "disable_schedule", json!({ "schedule_id": id })).await);
    let (status, _) = req(
        &app,
        Some(&app.token),
        Method::PUT,
        "/api/v1/agents/open/access",
        Some(json!({ "denied": ["assistant:*"] })),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let r = call(&a, "enable_schedule", json!({ "schedule_id": id })).await;
    assert!(refused(&r).contains("revoked"), "{}", text(&r));
    // Nor may the owner enable it while the plan's assistant may not call the Agent; a Run
    // asked for now is recorded as blocked.
    let (status, v) = req(
        &app,
        Some(&app.token),
        Method::PATCH,
        &format!("/api/v1/me/schedules/{id}"),
        Some(json!({ "enabled": true })),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{v}");
    let r = call(&a, "run_schedule_now", json!({ "schedule_id": id })).await;
    assert_eq!(ok(&r)["status"], "blocked", "{}", text(&r));
    app.shutdown().await;
}

#[tokio::test]
async fn the_cli_issues_a_hermes_peers_block_that_calls_the_agents() {
    let clock = ManualClock::new(t0());
    let app = spawn(&clock).await;
    let dir = app.dir.path();
    let kind = sextant_access::tokens::Kind::Assistant;
    sextant::tokens::create(dir, kind, "hermes", None)
        .await
        .unwrap();
    // The running Sextant's address comes from its lock file.
    let base = sextant::tokens::base_url(dir, None);
    assert_eq!(base, app.url);
    let yaml = sextant::tokens::peers(dir, "hermes", &[], &base)
        .await
        .unwrap();
    assert!(yaml.contains("a2a_agents:\n"), "{yaml}");
    assert!(
        yaml.contains("  echo:\n") && yaml.contains("  shell:\n"),
        "{yaml}"
    );
    assert!(!yaml.contains("conformance"), "{yaml}");
    let token = yaml
        .lines()
        .skip_while(|l| *l != "  echo:")
        .find_map(|l| l.split("token: \"").nth(1))
        .and_then(|t| t.split('"').next())
        .expect("the echo peer's token")
        .to_string();
    let url = format!("{}/api/v1/assistant-a2a/agents/echo", app.url);
    assert!(yaml.contains(&format!("url: \"{url}\"")), "{yaml}");
    let (status, card) = req(
        &app,
        Some(&token),
        Method::GET,
        "/api/v1/assistant-a2a/agents/echo/.well-known/agent-card.json",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{card}");
    // Listed with its peers; one revoked; an unknown Agent is refused.
    let list = sextant::tokens::list(dir, kind).await.unwrap();
    let lines = sextant::tokens::describe_peers(dir, &list[0])
        .await
        .unwrap();
    assert_eq!(lines.len(), 2, "{lines:?}");
    sextant::tokens::revoke_peer(dir, "hermes", "echo")
        .await
        .unwrap();
    let (status, _) = req(
        &app,
        Some(&token),
        Method::GET,
        "/api/v1/assistant-a2a/agents/echo/.well-known/agent-card.json",
        None,
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let e = sextant::tokens::peers(dir, "hermes", &["nope".into()], &base)
        .await
        .unwrap_err();
    assert!(e.to_string().contains("no agent \"nope\""), "{e}");
    app.shutdown().await;
}

/// Canceling a schedule's Run (issue #15) cancels its task: over MCP by the assistant, and
/// over REST by the owner; a Run whose task ended cannot be canceled (409).
#[tokio::test]
async fn a_runs_task_is_canceled_over_mcp_and_rest() {
    let clock = ManualClock::new(t0());
    let app = spawn(&clock).await;
    let token = workspace_token(&app, "hermes").await;
    let a = connect(&app, Some(&token)).await;
    let created = call(
        &a,
        "create_schedule",
        json!({ "name": "Cleanup", "prompt": "rm -rf ./tmp-cache", "agent_id": "shell",
                "cron": "0 3 * * *", "timezone": "Europe/Berlin" }),
    )
    .await;
    let id = ok(&created)["id"].as_str().unwrap().to_string();
    let now = call(&a, "run_schedule_now", json!({ "schedule_id": id })).await;
    let run = ok(&now);
    let task = run["task_id"].as_str().unwrap().to_string();
    // The shell Run waits for the person's approval; the assistant cancels it instead.
    let canceled = call(
        &a,
        "cancel_schedule_run",
        json!({ "schedule_id": id, "run_id": run["id"], "reason": "not tonight" }),
    )
    .await;
    assert!(
        text(&canceled).starts_with("Canceled Run"),
        "{}",
        text(&canceled)
    );
    let t = app.wait_terminal(Who::Owner, "shell", &task).await;
    assert_eq!(state(&t), "TASK_STATE_CANCELED", "{t}");
    let said = t["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert_eq!(said, "Canceled by assistant hermes. Reason: not tonight");
    let (_, pending) = req(
        &app,
        Some(&app.token),
        Method::GET,
        "/api/v1/interactions",
        None,
    )
    .await;
    assert_eq!(
        pending["interactions"].as_array().map(Vec::len),
        Some(0),
        "{pending}"
    );

    // Over REST, the owner: a second Run canceled; then canceling an ended Run is 409.
    let second = call(&a, "run_schedule_now", json!({ "schedule_id": id })).await;
    let second = ok(&second);
    let path = format!(
        "/api/v1/me/schedules/{id}/runs/{}/cancel",
        second["id"].as_str().unwrap()
    );
    let (status, v) = req(&app, Some(&app.token), Method::POST, &path, None).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    app.wait_terminal(Who::Owner, "shell", second["task_id"].as_str().unwrap())
        .await;
    // Canceling again is idempotent; a Run whose task completed cannot be canceled.
    let (status, v) = req(&app, Some(&app.token), Method::POST, &path, None).await;
    assert_eq!(
        (status, &v["outcome"]),
        (StatusCode::OK, &json!("canceled")),
        "{v}"
    );
    let echo = call(
        &a,
        "create_schedule",
        json!({ "name": "Echo", "prompt": "hi", "agent_id": "echo",
                "cron": "0 3 * * *", "timezone": "Europe/Berlin" }),
    )
    .await;
    let echo_id = ok(&echo)["id"].as_str().unwrap().to_string();
    let done = call(&a, "run_schedule_now", json!({ "schedule_id": echo_id })).await;
    let done = ok(&done);
    app.wait_terminal(Who::Owner, "echo", done["task_id"].as_str().unwrap())
        .await;
    let path = format!(
        "/api/v1/me/schedules/{echo_id}/runs/{}/cancel",
        done["id"].as_str().unwrap()
    );
    let (status, v) = req(&app, Some(&app.token), Method::POST, &path, None).await;
    assert_eq!(status, StatusCode::CONFLICT, "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already ended"),
        "{v}"
    );
    app.shutdown().await;
}
