//! "Always allow for this schedule": a shell schedule's Run asks, the person answers
//! `acceptForSchedule`, and later Runs of that schedule run the exact same command without a
//! card, across a restart, until the schedule's prompt changes or the grant is revoked. Other
//! tasks never offer the option. Runs are made with run-now, so nothing waits for cron.

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::*;

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

/// A Run now; the Run (which has started its task).
async fn run_now(app: &TestApp, id: &str, body: Option<Value>) -> Value {
    let (status, run) = call(
        app,
        Who::Owner,
        Method::POST,
        &format!("/api/v1/me/schedules/{id}/run"),
        body,
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{run}");
    assert!(run["task_id"].is_string(), "{run}");
    run
}

/// How a task went on: `Err(card)` if it stopped for an approval, `Ok(task)` once it ended.
async fn outcome(app: &TestApp, task_id: &str) -> Result<Value, Value> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let task = app.get_task_as(Who::Owner, "shell", task_id).await;
        match state(&task) {
            "TASK_STATE_AUTH_REQUIRED" => {
                let (status, _, list) = app.get_json("/api/v1/interactions", true).await;
                assert_eq!(status, StatusCode::OK, "{list}");
                let card = list["interactions"]
                    .as_array()
                    .expect("interactions")
                    .iter()
                    .find(|i| i["taskId"] == task_id)
                    .cloned()
                    .unwrap_or_else(|| panic!("no pending card for {task_id}: {list}"));
                return Err(card);
            }
            s if is_terminal(s) => return Ok(task),
            _ => {}
        }
        assert!(
            Instant::now() < deadline,
            "task {task_id} neither asked nor ended: {task}"
        );
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
}

fn option_ids(card: &Value) -> Vec<String> {
    card["options"]
        .as_array()
        .expect("options")
        .iter()
        .map(|o| o["id"].as_str().unwrap().to_string())
        .collect()
}

async fn answer(app: &TestApp, card: &Value, option: &str) {
    let id = card["interactionId"].as_str().unwrap();
    let (status, body) = call(
        app,
        Who::Owner,
        Method::POST,
        &format!("/api/v1/interactions/{id}/answer"),
        Some(json!({
            "task_id": card["taskId"],
            "option": option,
            "message_id": uid("answer"),
            "digest": card["action"]["digest"],
        })),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

async fn grants(app: &TestApp, id: &str) -> Vec<Value> {
    let (status, v) = call(
        app,
        Who::Owner,
        Method::GET,
        &format!("/api/v1/me/schedules/{id}/grants"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    v["grants"].as_array().expect("grants").clone()
}

/// A Run that must run without asking: completed, with the command's output, saying why.
async fn runs_without_a_card(app: &TestApp, id: &str, expect: &str) {
    let run = run_now(app, id, None).await;
    let task = outcome(app, run["task_id"].as_str().unwrap())
        .await
        .unwrap_or_else(|card| panic!("the Run asked again: {card}"));
    assert_eq!(state(&task), "TASK_STATE_COMPLETED", "{task}");
    assert!(first_artifact_text(&task).starts_with(expect), "{task}");
    let session = run["session_id"].as_str().unwrap();
    let (_, _, body) = app
        .get_json(&format!("/api/v1/sessions/{session}"), true)
        .await;
    assert!(
        body.to_string()
            .contains("Approved for every Run of schedule"),
        "the status says why it ran: {body}"
    );
}

/// A Run that must ask; its card.
async fn asks(app: &TestApp, id: &str) -> Value {
    let run = run_now(app, id, None).await;
    outcome(app, run["task_id"].as_str().unwrap())
        .await
        .map(|t| panic!("the Run ran without asking: {t}"))
        .unwrap_err()
}

#[tokio::test]
async fn always_allow_for_a_schedule_skips_later_cards_until_the_prompt_changes_or_it_is_revoked() {
    let app = TestApp::spawn().await;
    let word = uid("tidy");
    let command = format!("echo {word}");
    let (status, schedule) = call(
        &app,
        Who::Owner,
        Method::POST,
        "/api/v1/me/schedules",
        Some(json!({
            "name": "Nightly tidy",
            "prompt": command,
            "cron": "0 3 * * *",
            "timezone": "UTC",
            "agent_id": "shell",
        })),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{schedule}");
    let id = schedule["id"].as_str().unwrap().to_string();

    // A task that is no schedule's Run never offers the option.
    let plain = app.send_task_as(Who::Owner, "shell", msg(&command)).await;
    let plain = outcome(&app, plain["id"].as_str().unwrap())
        .await
        .unwrap_err();
    assert_eq!(
        option_ids(&plain),
        ["accept", "acceptForSession", "decline", "cancel"],
        "{plain}"
    );
    answer(&app, &plain, "cancel").await;
    // Nor does a Run sent with another prompt than the plan's.
    let other = run_now(&app, &id, Some(json!({ "prompt": "echo once" }))).await;
    let other = outcome(&app, other["task_id"].as_str().unwrap())
        .await
        .unwrap_err();
    assert!(
        !option_ids(&other).contains(&"acceptForSchedule".to_string()),
        "{other}"
    );
    answer(&app, &other, "cancel").await;

    // Run 1 asks, with the option (shortcut `s`, free of the others'), naming the schedule.
    let card = asks(&app, &id).await;
    assert_eq!(
        option_ids(&card),
        [
            "accept",
            "acceptForSession",
            "acceptForSchedule",
            "decline",
            "cancel"
        ],
        "{card}"
    );
    let option = &card["options"][2];
    assert_eq!(option["shortcut"], "s", "{option}");
    assert!(
        option["label"].as_str().unwrap().contains("Nightly tidy"),
        "{option}"
    );
    answer(&app, &card, "acceptForSchedule").await;
    let done = app
        .wait_terminal(Who::Owner, "shell", card["taskId"].as_str().unwrap())
        .await;
    assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");

    // The grant: the exact action, its digest, who and when.
    let listed = grants(&app, &id).await;
    assert_eq!(listed.len(), 1, "{listed:?}");
    let g = &listed[0];
    assert_eq!(g["active"], true, "{g}");
    assert_eq!(g["action"]["shown"], command, "{g}");
    assert_eq!(g["action"]["digest"], card["action"]["digest"], "{g}");
    assert_eq!(g["grant_key"], card["grantKey"], "{g}");
    assert!(
        g["granted_by"].as_str().is_some_and(|s| !s.is_empty()),
        "{g}"
    );
    assert!(g["granted_at"].is_string(), "{g}");
    // Only the schedule's owner sees them.
    let (status, _) = call(
        &app,
        Who::Anon,
        Method::GET,
        &format!("/api/v1/me/schedules/{id}/grants"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // Run 2 runs without a card, and so does a Run after a restart.
    runs_without_a_card(&app, &id, &word).await;
    // A Run sent with another command still asks (the grant is for one action only).
    let other = run_now(&app, &id, Some(json!({ "prompt": "echo once" }))).await;
    let other = outcome(&app, other["task_id"].as_str().unwrap())
        .await
        .unwrap_err();
    answer(&app, &other, "cancel").await;
    let app = app.restart().await;
    runs_without_a_card(&app, &id, &word).await;

    // Changing the prompt voids the grant, for good: changed back, the next Run asks again.
    for prompt in ["echo something else", command.as_str()] {
        let (status, v) = call(
            &app,
            Who::Owner,
            Method::PATCH,
            &format!("/api/v1/me/schedules/{id}"),
            Some(json!({ "prompt": prompt })),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{v}");
    }
    let listed = grants(&app, &id).await;
    assert_eq!(listed[0]["active"], false, "{listed:?}");
    assert!(
        listed[0]["void_reason"]
            .as_str()
            .unwrap()
            .contains("prompt changed"),
        "{listed:?}"
    );
    let card = asks(&app, &id).await;
    answer(&app, &card, "acceptForSchedule").await;
    app.wait_terminal(Who::Owner, "shell", card["taskId"].as_str().unwrap())
        .await;
    let listed = grants(&app, &id).await;
    assert_eq!(listed.len(), 1, "one grant per action: {listed:?}");
    assert_eq!(listed[0]["active"], true, "{listed:?}");
    runs_without_a_card(&app, &id, &word).await;

    // Revoked, the next Run asks again.
    let grant_id = listed[0]["id"].as_str().unwrap();
    let (status, _) = call(
        &app,
        Who::Anon,
        Method::DELETE,
        &format!("/api/v1/me/schedules/{id}/grants/{grant_id}"),
        None,
    )
    .await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "another principal cannot revoke it"
    );
    let (status, v) = call(
        &app,
        Who::Owner,
        Method::DELETE,
        &format!("/api/v1/me/schedules/{id}/grants/{grant_id}"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{v}");
    assert!(grants(&app, &id).await.is_empty());
    let card = asks(&app, &id).await;
    assert!(option_ids(&card).contains(&"acceptForSchedule".to_string()));
    answer(&app, &card, "cancel").await;
    app.shutdown().await;
}
