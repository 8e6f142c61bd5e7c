//! Personal schedules over HTTP: `/api/v1/me/schedules`, Runs and their Sessions, replay,
//! access revocation and principal scoping. (Two schedulers racing on one database are
//! tested in the scheduler crate; one data dir takes one Sextant, see `restart.rs`.) Wall
//! time is a manual clock; a test moves it and then asks the scheduler to handle what is due
//! (`Running::scheduler.run_due_now()`), so nothing waits for a real minute.

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use sextant_core::ManualClock;

use crate::support::{TestApp, Who, loopback};

/// 10:00:30 UTC: an every-minute schedule's first slot is 10:01:00.
fn t0() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-12-01T10:00:30Z")
        .unwrap()
        .to_utc()
}

/// A Sextant on a temp data dir whose wall time is `clock`.
async fn spawn_with_clock(clock: &ManualClock) -> TestApp {
    let dir = tempfile::tempdir().expect("temp dir");
    let running = sextant::start_with_clock(loopback(dir.path()), Arc::new(clock.clone()))
        .await
        .expect("sextant starts");
    TestApp::running_in(running, dir, false)
}

/// One request as `who` (see [`api_request`](crate::support::api_request)); status and JSON
/// (or Null).
async fn call(
    app: &TestApp,
    who: Who,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let (status, _, v) = app.request(who, method, path, body).await;
    (status, v)
}

fn minutely(name: &str, prompt: &str) -> Value {
    json!({
        "name": name,
        "prompt": prompt,
        "cron": "* * * * *",
        "timezone": "Europe/Berlin",
        "agent_id": "echo",
    })
}

async fn create(app: &TestApp, who: Who, body: Value) -> Value {
    let (status, v) = call(app, who, Method::POST, "/api/v1/me/schedules", Some(body)).await;
    assert_eq!(status, StatusCode::CREATED, "{v}");
    v
}

async fn runs(app: &TestApp, who: Who, schedule_id: &str) -> Vec<Value> {
    let (status, v) = call(
        app,
        who,
        Method::GET,
        &format!("/api/v1/me/schedules/{schedule_id}/runs"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    v["runs"].as_array().expect("runs").clone()
}

/// Waits for a Run's task to end (by subscribing over A2A as the Run's principal).
async fn wait_run(app: &TestApp, who: Who, run: &Value) {
    let task_id = run["task_id"].as_str().expect("the run started a task");
    app.wait_terminal(who, run["agent_id"].as_str().unwrap(), task_id)
        .await;
}

/// The user text and agent text of a Session's transcript.
async fn transcript(app: &TestApp, session_id: &str) -> (Value, Vec<String>, Vec<String>) {
    let (status, _, body) = app
        .get_json(&format!("/api/v1/sessions/{session_id}"), true)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let blocks = body["transcript"].as_array().expect("transcript").clone();
    let texts = |kind: &str| -> Vec<String> {
        blocks
            .iter()
            .filter(|b| b["kind"] == kind)
            .filter_map(|b| b["text"].as_str().map(String::from))
            .collect()
    };
    (body.clone(), texts("user_input"), texts("agent_text"))
}

#[tokio::test]
async fn a_minutely_schedule_runs_replays_and_is_disabled_and_deleted() {
    let clock = ManualClock::new(t0());
    let app = spawn_with_clock(&clock).await;

    let s = create(&app, Who::Owner, minutely("standup", "summarise my inbox")).await;
    let id = s["id"].as_str().unwrap().to_string();
    for field in [
        "name",
        "prompt",
        "cron",
        "timezone",
        "agent_id",
        "enabled",
        "missed_run_policy",
    ] {
        assert!(s.get(field).is_some(), "{field} missing: {s}");
    }
    assert_eq!(s["enabled"], true);
    assert_eq!(s["missed_run_policy"], "skip");
    assert_eq!(s["source"], "api");
    let next = s["next_runs"].as_array().unwrap();
    assert_eq!(next.len(), 5);
    assert_eq!(next[0]["utc"], "2026-12-01T10:01:00.000Z");
    assert_eq!(next[0]["local"], "2026-12-01T11:01:00+01:00");
    assert!(s["description"].as_str().is_some_and(|d| !d.is_empty()));

    // The slot comes due: one cron Run with its own Session.
    clock.set(t0() + Duration::seconds(30));
    app.running.scheduler.run_due_now().await.unwrap();
    let list = runs(&app, Who::Owner, &id).await;
    assert_eq!(list.len(), 1, "{list:?}");
    let first = list[0].clone();
    assert_eq!(first["trigger"], "cron");
    assert_eq!(first["scheduled_for"], "2026-12-01T10:01:00.000Z");
    let session_id = first["session_id"].as_str().expect("session").to_string();
    assert!(
        first["session_url"]
            .as_str()
            .unwrap()
            .ends_with(&format!("/sessions/{session_id}"))
    );
    wait_run(&app, Who::Owner, &first).await;

    // The Session is like any other: the transcript holds the prompt and the agent's reply,
    // and it links back to its Run.
    let (body, user, agent) = transcript(&app, &session_id).await;
    assert_eq!(user, ["summarise my inbox"]);
    assert!(
        agent.iter().any(|t| t.contains("summarise my inbox")),
        "{agent:?}"
    );
    assert_eq!(body["session"]["origin"], "schedule");
    assert_eq!(body["run"]["runId"], first["id"]);
    let (_, one) = call(
        &app,
        Who::Owner,
        Method::GET,
        &format!(
            "/api/v1/me/schedules/{id}/runs/{}",
            first["id"].as_str().unwrap()
        ),
        None,
    )
    .await;
    assert_eq!(one["status"], "completed", "{one}");

    // Run now.
    let (status, now) = call(
        &app,
        Who::Owner,
        Method::POST,
        &format!("/api/v1/me/schedules/{id}/run"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{now}");
    assert_eq!(now["trigger"], "manual");
    assert_ne!(now["session_id"], first["session_id"]);

    // Edit the prompt, then replay the first Run: the replay uses the old prompt.
    let (status, edited) = call(
        &app,
        Who::Owner,
        Method::PATCH,
        &format!("/api/v1/me/schedules/{id}"),
        Some(json!({ "prompt": "a different prompt" })),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{edited}");
    assert_eq!(edited["prompt"], "a different prompt");
    let (status, replay) = call(
        &app,
        Who::Owner,
        Method::POST,
        &format!(
            "/api/v1/me/schedules/{id}/runs/{}/replay",
            first["id"].as_str().unwrap()
        ),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{replay}");
    assert_eq!(replay["trigger"], "replay");
    assert_eq!(replay["replay_of"], first["id"]);
    assert_eq!(replay["prompt"], "summarise my inbox");
    wait_run(&app, Who::Owner, &replay).await;
    let (_, user, _) = transcript(&app, replay["session_id"].as_str().unwrap()).await;
    assert_eq!(user, ["summarise my inbox"]);

    // Newest first.
    let list = runs(&app, Who::Owner, &id).await;
    let ids: Vec<&Value> = list.iter().map(|r| &r["id"]).collect();
    assert_eq!(ids, [&replay["id"], &now["id"], &first["id"]]);

    // Paginated.
    let (_, page) = call(
        &app,
        Who::Owner,
        Method::GET,
        &format!("/api/v1/me/schedules/{id}/runs?limit=2"),
        None,
    )
    .await;
    assert_eq!(page["runs"].as_array().unwrap().len(), 2);
    assert_eq!(page["total"], 3);
    let cursor = page["next_cursor"].as_str().expect("a next page");
    let (_, page2) = call(
        &app,
        Who::Owner,
        Method::GET,
        &format!("/api/v1/me/schedules/{id}/runs?limit=2&cursor={cursor}"),
        None,
    )
    .await;
    assert_eq!(page2["runs"][0]["id"], first["id"]);
    assert_eq!(page2["next_cursor"], Value::Null);

    // The next slot fires with the new prompt.
    clock.set(t0() + Duration::seconds(90));
    app.running.scheduler.run_due_now().await.unwrap();
    let list = runs(&app, Who::Owner, &id).await;
    assert_eq!(list.len(), 4);
    assert_eq!(list[0]["prompt"], "a different prompt");

    // Disabled: no more Runs.
    let (status, off) = call(
        &app,
        Who::Owner,
        Method::PATCH,
        &format!("/api/v1/me/schedules/{id}"),
        Some(json!({ "enabled": false })),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{off}");
    assert_eq!(off["enabled"], false);
    for minute in 2..5 {
        clock.set(t0() + Duration::seconds(30) + Duration::minutes(minute));
        app.running.scheduler.run_due_now().await.unwrap();
    }
    assert_eq!(runs(&app, Who::Owner, &id).await.len(), 4);

    // Deleted.
    let (status, _) = call(
        &app,
        Who::Owner,
        Method::DELETE,
        &format!("/api/v1/me/schedules/{id}"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, body) = call(
        &app,
        Who::Owner,
        Method::GET,
        &format!("/api/v1/me/schedules/{id}"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    let (_, list) = call(&app, Who::Owner, Method::GET, "/api/v1/me/schedules", None).await;
    assert_eq!(list["schedules"], json!([]));
    app.shutdown().await;
}

#[tokio::test]
async fn validation_errors_name_the_field() {
    let clock = ManualClock::new(t0());
    let app = spawn_with_clock(&clock).await;
    let cases = [
        ("cron", json!("61 * * * *")),
        ("cron", json!("* * * *")),
        ("timezone", json!("Mars/Olympus_Mons")),
        ("agent_id", json!("no-such-agent")),
        ("missed_run_policy", json!("sometimes")),
        ("enabled", json!("yes")),
    ];
    for (field, value) in cases {
        let mut body = minutely("bad", "x");
        body[field] = value.clone();
        let (status, v) = call(
            &app,
            Who::Owner,
            Method::POST,
            "/api/v1/me/schedules",
            Some(body),
        )
        .await;
        assert_eq!(
            status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{field}={value}: {v}"
        );
        assert_eq!(v["error"]["code"], "invalid_field", "{v}");
        assert_eq!(v["error"]["field"], field, "{v}");
        assert!(
            v["error"]["message"].as_str().unwrap().contains(field),
            "{v}"
        );
    }
    let mut missing = minutely("bad", "x");
    missing.as_object_mut().unwrap().remove("timezone");
    let (_, v) = call(
        &app,
        Who::Owner,
        Method::POST,
        "/api/v1/me/schedules",
        Some(missing),
    )
    .await;
    assert_eq!(v["error"]["field"], "timezone", "{v}");

    // A write without a JSON Content-Type is refused.
    let resp = app
        .client
        .post(format!("{}/api/v1/me/schedules", app.url))
        .bearer_auth(&app.token)
        .body(minutely("n", "p").to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);

    let (_, list) = call(&app, Who::Owner, Method::GET, "/api/v1/me/schedules", None).await;
    assert_eq!(list["schedules"], json!([]));
    app.shutdown().await;
}

#[tokio::test]
async fn another_principal_gets_404() {
    let clock = ManualClock::new(t0());
    let app = spawn_with_clock(&clock).await;
    let mine = create(&app, Who::Owner, minutely("owner's", "p")).await;
    let theirs = create(&app, Who::Anon, minutely("anon's", "q")).await;
    let first_run = {
        let (status, r) = call(
            &app,
            Who::Owner,
            Method::POST,
            &format!("/api/v1/me/schedules/{}/run", mine["id"].as_str().unwrap()),
            None,
        )
        .await;
        assert_eq!(status, StatusCode::CREATED);
        r
    };

    for (who, other) in [(Who::Anon, &mine), (Who::Owner, &theirs)] {
        let id = other["id"].as_str().unwrap();
        let base = format!("/api/v1/me/schedules/{id}");
        let attempts = [
            (Method::GET, base.clone(), None),
            (
                Method::PATCH,
                base.clone(),
                Some(json!({ "enabled": false })),
            ),
            (Method::POST, format!("{base}/run"), None),
            (Method::GET, format!("{base}/runs"), None),
            (
                Method::POST,
                format!("{base}/runs/{}/replay", first_run["id"].as_str().unwrap()),
                None,
            ),
            (Method::DELETE, base.clone(), None),
        ];
        for (method, path, body) in attempts {
            let (status, v) = call(&app, who, method.clone(), &path, body).await;
            assert_eq!(
                status,
                StatusCode::NOT_FOUND,
                "{who:?} {method} {path}: {v}"
            );
        }
        let (_, list) = call(&app, who, Method::GET, "/api/v1/me/schedules", None).await;
        let names: Vec<&Value> = list["schedules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| &s["name"])
            .collect();
        assert_eq!(names.len(), 1, "{list}");
        assert_ne!(names[0], &other["name"]);
    }
    // Both still exist for their owners.
    for (who, s) in [(Who::Owner, &mine), (Who::Anon, &theirs)] {
        let (status, _) = call(
            &app,
            who,
            Method::GET,
            &format!("/api/v1/me/schedules/{}", s["id"].as_str().unwrap()),
            None,
        )
        .await;
        assert_eq!(status, StatusCode::OK);
    }
    app.shutdown().await;
}

#[tokio::test]
async fn revocation_blocks_the_next_run_and_the_creator_can_still_clean_up() {
    let clock = ManualClock::new(t0());
    let app = spawn_with_clock(&clock).await;
    // The anonymous loopback caller owns this schedule; the console owner revokes its access.
    let s = create(&app, Who::Anon, minutely("anon plan", "ping")).await;
    let id = s["id"].as_str().unwrap().to_string();
    let anon_key = "anonymous-local:loopback:anonymous";

    // Only the console owner manages access.
    let deny = json!({ "denied": [anon_key] });
    let (status, _) = call(
        &app,
        Who::Anon,
        Method::PUT,
        "/api/v1/agents/echo/access",
        Some(deny.clone()),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, access) = call(
        &app,
        Who::Owner,
        Method::PUT,
        "/api/v1/agents/echo/access",
        Some(deny),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{access}");
    assert_eq!(access["denied"], json!([anon_key]));

    // The next cron Run is recorded as blocked, with the reason.
    clock.set(t0() + Duration::seconds(30));
    app.running.scheduler.run_due_now().await.unwrap();
    let list = runs(&app, Who::Anon, &id).await;
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["status"], "blocked", "{}", list[0]);
    assert!(
        list[0]["reason"].as_str().unwrap().contains("revoked"),
        "{}",
        list[0]
    );
    assert_eq!(list[0]["session_id"], Value::Null);
    // Run now is blocked the same way; A2A calls are refused too.
    let (status, now) = call(
        &app,
        Who::Anon,
        Method::POST,
        &format!("/api/v1/me/schedules/{id}/run"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(now["status"], "blocked");
    // For a revoked caller the Agent does not exist (the answer of an unknown Agent).
    let resp = app
        .post_rpc(
            Who::Anon,
            "echo",
            &[],
            json!({ "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                    "params": { "message": crate::support::msg("hi") } }),
        )
        .await;
    let rpc = crate::support::json_body(resp, StatusCode::NOT_FOUND).await;
    assert!(rpc.get("error").is_some(), "{rpc}");
    // The schedule shows why.
    let (_, view) = call(
        &app,
        Who::Anon,
        Method::GET,
        &format!("/api/v1/me/schedules/{id}"),
        None,
    )
    .await;
    assert_eq!(view["access"]["allowed"], false, "{view}");

    // Re-enabling is refused while revoked; disabling and deleting are not.
    let (status, off) = call(
        &app,
        Who::Anon,
        Method::PATCH,
        &format!("/api/v1/me/schedules/{id}"),
        Some(json!({ "enabled": false })),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{off}");
    let (status, on) = call(
        &app,
        Who::Anon,
        Method::PATCH,
        &format!("/api/v1/me/schedules/{id}"),
        Some(json!({ "enabled": true })),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{on}");
    let (status, _) = call(
        &app,
        Who::Anon,
        Method::DELETE,
        &format!("/api/v1/me/schedules/{id}"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::NO_CONTENT);

    // Restored: a new schedule runs again.
    let (status, access) = call(
        &app,
        Who::Owner,
        Method::PUT,
        "/api/v1/agents/echo/access",
        Some(json!({ "denied": [] })),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(access["denied"], json!([]));
    let s = create(&app, Who::Anon, minutely("again", "pong")).await;
    let (_, run) = call(
        &app,
        Who::Anon,
        Method::POST,
        &format!("/api/v1/me/schedules/{}/run", s["id"].as_str().unwrap()),
        None,
    )
    .await;
    assert!(run["session_id"].is_string(), "{run}");
    wait_run(&app, Who::Anon, &run).await;
    app.shutdown().await;
}

/// A Sextant on a temp data dir with `agents_toml`, whose wall time is `clock`.
async fn spawn_with_agents(clock: &ManualClock, agents_toml: &str) -> TestApp {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("agents.toml"), agents_toml).expect("agents.toml");
    let running = sextant::start_with_clock(loopback(dir.path()), Arc::new(clock.clone()))
        .await
        .expect("sextant starts");
    TestApp::running_in(running, dir, false)
}

/// The next `event: schedule` frame of a task-events stream.
async fn next_notice(events: &mut crate::support::Sse) -> Value {
    loop {
        let f = events.next_frame().await.expect("the stream stays open");
        if f.event.as_deref() == Some("schedule") {
            return f.json();
        }
    }
}

#[tokio::test]
async fn failures_are_notified_live_and_pause_the_plan_with_the_reason() {
    let clock = ManualClock::new(t0());
    let toml = crate::support::exec_agent("broken", "read -r line; echo 'disk full' >&2; exit 3");
    let app = spawn_with_agents(&clock, &toml).await;
    let mut events = app.get_sse("/api/v1/tasks/events", None).await;
    let mut body = minutely("backup", "back up");
    body["agent_id"] = json!("broken");
    body["pause_after_failures"] = json!(2);
    body["overlap_policy"] = json!("buffer_one");
    let s = create(&app, Who::Owner, body).await;
    assert_eq!(s["pause_after_failures"], 2);
    assert_eq!(s["overlap_policy"], "buffer_one");
    assert_eq!(s["paused"], Value::Null);
    let id = s["id"].as_str().unwrap().to_string();
    let run_now = || async {
        let (status, run) = call(
            &app,
            Who::Owner,
            Method::POST,
            &format!("/api/v1/me/schedules/{id}/run"),
            None,
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{run}");
        run
    };
    let first = run_now().await;
    let n = next_notice(&mut events).await;
    assert_eq!(n["kind"], "failed", "{n}");
    assert_eq!(n["scheduleId"], id);
    assert_eq!(n["runId"], first["id"]);
    assert_eq!(n["consecutiveFailures"], 1);
    run_now().await;
    let n = next_notice(&mut events).await;
    assert_eq!(n["kind"], "paused", "{n}");
    assert!(
        n["message"]
            .as_str()
            .unwrap()
            .contains("paused after 2 failed Runs in a row"),
        "{n}"
    );
    // The plan says why, and its Runs say how they ended.
    let (_, v) = call(
        &app,
        Who::Owner,
        Method::GET,
        &format!("/api/v1/me/schedules/{id}"),
        None,
    )
    .await;
    assert_eq!(v["enabled"], false, "{v}");
    assert!(
        v["paused"]["reason"]
            .as_str()
            .unwrap()
            .contains("failed Runs in a row"),
        "{v}"
    );
    assert_eq!(v["history"]["failed"], 2, "{v}");
    let list = runs(&app, Who::Owner, &id).await;
    assert!(list.iter().all(|r| r["outcome"] == "failed"), "{list:?}");
    assert!(list.iter().all(|r| r["duration_ms"].is_i64()), "{list:?}");
    // Enabled again: the pause is gone.
    let (status, on) = call(
        &app,
        Who::Owner,
        Method::PATCH,
        &format!("/api/v1/me/schedules/{id}"),
        Some(json!({ "enabled": true })),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{on}");
    assert_eq!(
        (on["paused"].clone(), on["consecutive_failures"].clone()),
        (Value::Null, json!(0))
    );
    drop(events);
    app.shutdown().await;
}

#[tokio::test]
async fn one_shot_plans_backfill_and_preview_over_http() {
    let clock = ManualClock::new(t0());
    let app = spawn_with_clock(&clock).await;
    // A one-shot plan: 12:00 Berlin on 2026-12-01 (11:00 UTC).
    let mut once = minutely("once", "only once");
    once.as_object_mut().unwrap().remove("cron");
    once["once_at"] = json!("2026-12-01T12:00");
    let s = create(&app, Who::Owner, once).await;
    assert_eq!(s["cron"], Value::Null);
    assert_eq!(s["once_at"], "2026-12-01T12:00:00");
    assert_eq!(s["next_runs"][0]["utc"], "2026-12-01T11:00:00.000Z");
    assert_eq!(
        s["next_runs"][0]["words"],
        "Tuesday 1 December 2026 at 12:00 CET"
    );
    // Sending back what was read (cron: null) is fine.
    let (status, back) = call(
        &app,
        Who::Owner,
        Method::PATCH,
        &format!("/api/v1/me/schedules/{}", s["id"].as_str().unwrap()),
        Some(s.clone()),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{back}");
    // Preview of a one-shot time and of a bad overlap policy.
    let (status, p) = call(
        &app,
        Who::Owner,
        Method::POST,
        "/api/v1/me/schedules/preview",
        Some(json!({ "once_at": "2026-12-24T09:00", "timezone": "Europe/Paris" })),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{p}");
    assert_eq!(p["next_runs"].as_array().unwrap().len(), 1);
    // Plain words: previewed and created, echoed back as cron.
    let (status, p) = call(
        &app,
        Who::Owner,
        Method::POST,
        "/api/v1/me/schedules/preview",
        Some(json!({ "when": "every monday and thursday at 18:30", "timezone": "Europe/Berlin" })),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{p}");
    assert_eq!(p["cron"], "30 18 * * 1,4");
    assert_eq!(
        p["understood"]["input"],
        "every monday and thursday at 18:30"
    );
    let mut words = minutely("words", "w");
    words.as_object_mut().unwrap().remove("cron");
    words["when"] = json!("every weekday at 9");
    let w = create(&app, Who::Owner, words).await;
    assert_eq!(w["cron"], "0 9 * * 1-5");
    assert_eq!(w["understood"]["cron"], "0 9 * * 1-5", "{w}");
    let (status, e) = call(
        &app,
        Who::Owner,
        Method::POST,
        "/api/v1/me/schedules/preview",
        Some(json!({ "when": "every 7 minutes", "timezone": "UTC" })),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(e["error"]["field"], "when", "{e}");
    let mut bad = minutely("bad", "x");
    bad["overlap_policy"] = json!("queue");
    let (status, e) = call(
        &app,
        Who::Owner,
        Method::POST,
        "/api/v1/me/schedules",
        Some(bad),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(e["error"]["field"], "overlap_policy", "{e}");
    // Backfill the last three minutes of an every-minute plan: one at a time.
    let m = create(&app, Who::Owner, minutely("minutely", "fill")).await;
    let mid = m["id"].as_str().unwrap();
    let mut events = app.get_sse("/api/v1/tasks/events", None).await;
    let (status, b) = call(
        &app,
        Who::Owner,
        Method::POST,
        &format!("/api/v1/me/schedules/{mid}/backfill"),
        Some(json!({ "from": "2026-12-01T09:57:00Z", "to": "2026-12-01T10:00:00Z" })),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{b}");
    assert_eq!(b["overlap_policy"], "buffer_all");
    let got = b["runs"].as_array().unwrap();
    let status: Vec<&Value> = got.iter().map(|r| &r["status"]).collect();
    assert_eq!(got.len(), 3);
    assert_eq!(status[1], "buffered");
    assert!(got.iter().all(|r| r["trigger"] == "backfill"));
    // The loop starts each buffered Run as the one before it ends: three tasks complete.
    let mut completed = std::collections::HashSet::new();
    while completed.len() < 3 {
        let f = events.next_frame().await.expect("the stream stays open");
        if f.event.as_deref() == Some("task") && f.json()["state"] == "TASK_STATE_COMPLETED" {
            completed.insert(f.json()["taskId"].clone());
        }
    }
    drop(events);
    let list = runs(&app, Who::Owner, mid).await;
    assert_eq!(list.len(), 3);
    assert!(list.iter().all(|r| r["status"] == "completed"), "{list:?}");
    let (status, e) = call(
        &app,
        Who::Owner,
        Method::POST,
        &format!("/api/v1/me/schedules/{mid}/backfill"),
        Some(json!({ "from": "2026-12-01T09:00:00Z", "to": "2027-01-01T00:00:00Z" })),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{e}");
    assert_eq!(e["error"]["field"], "to");
    // Every unreadable field at once (the console's backfill form shows each on its field).
    let (status, e) = call(
        &app,
        Who::Owner,
        Method::POST,
        &format!("/api/v1/me/schedules/{mid}/backfill"),
        Some(json!({ "from": "", "to": "yesterday", "overlap_policy": "later" })),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{e}");
    let fields: Vec<&Value> = e["error"]["fields"]
        .as_array()
        .map(|a| a.iter().map(|f| &f["field"]).collect())
        .unwrap_or_default();
    assert_eq!(fields, ["from", "to", "overlap_policy"], "{e}");
    app.shutdown().await;
}
