//! Approvals: a shell-agent task waits for the person, who answers as themselves through the
//! REST inbox; the same task then completes, and its stream saw every state in order.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::*;

/// `POST /api/v1/interactions/{id}/answer`, with the owner token or none.
async fn post_answer(app: &TestApp, id: &str, body: Value, token: bool) -> (StatusCode, Value) {
    let mut req = app
        .client
        .post(format!("{}/api/v1/interactions/{id}/answer", app.url))
        .json(&body);
    if token {
        req = req.bearer_auth(&app.token);
    }
    let resp = req.send().await.expect("answer sent");
    let status = resp.status();
    (status, resp.json().await.unwrap_or(Value::Null))
}

/// The interaction data part of a waiting task's status message.
fn interaction_of(task_or_update: &Value) -> Value {
    let parts = task_or_update["status"]["message"]["parts"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    parts
        .iter()
        .find_map(|p| p.get("data").and_then(|d| d.get("interaction")).cloned())
        .unwrap_or_else(|| panic!("no interaction data part in {task_or_update}"))
}

async fn pending_ids(app: &TestApp) -> Vec<String> {
    let (status, _, body) = app.get_json("/api/v1/interactions", true).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["interactions"]
        .as_array()
        .expect("interactions")
        .iter()
        .map(|i| i["interactionId"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn a_shell_task_waits_for_approval_then_completes_on_the_same_stream() {
    let app = TestApp::spawn().await;
    let mut s = app
        .stream_as(
            Who::Owner,
            "shell",
            "SendStreamingMessage",
            json!({ "message": msg("echo streamed-approval") }),
            &[],
        )
        .await;
    let mut states = Vec::new();
    let mut frames = Vec::new();
    let interaction = loop {
        let f = s.next_frame().await.expect("open until the task waits");
        let result = f.json()["result"].clone();
        frames.push(f);
        if let Some(st) = result["task"]["status"]["state"].as_str() {
            states.push(st.to_string());
        }
        if let Some(st) = result["statusUpdate"]["status"]["state"].as_str() {
            states.push(st.to_string());
            if st == "TASK_STATE_AUTH_REQUIRED" {
                break interaction_of(&result["statusUpdate"]);
            }
        }
    };
    assert_eq!(
        states,
        [
            "TASK_STATE_SUBMITTED",
            "TASK_STATE_WORKING",
            "TASK_STATE_AUTH_REQUIRED"
        ]
    );
    let options: Vec<&str> = interaction["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_str().unwrap())
        .collect();
    assert_eq!(options, ["accept", "acceptForSession", "decline", "cancel"]);
    assert_eq!(interaction["kind"], "tool_approval");
    assert_eq!(interaction["command"], "echo streamed-approval");
    assert_eq!(interaction["defaultOption"], "decline");
    assert!(interaction.get("engineRef").is_none(), "{interaction}");
    let id = interaction["interactionId"].as_str().unwrap().to_string();
    let task_id = interaction["taskId"].as_str().unwrap().to_string();
    assert_eq!(
        interaction["answerUrl"].as_str().unwrap(),
        format!("{}/api/v1/interactions/{id}/answer", app.url)
    );
    assert_eq!(pending_ids(&app).await, vec![id.clone()]);

    let (status, body) = post_answer(
        &app,
        &id,
        json!({ "task_id": task_id, "option": "accept", "message_id": uid("answer") }),
        true,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["task"]["taskId"], task_id.as_str());

    // The same stream goes on: working again, the output, completed; then it closes.
    let rest = s.rest().await;
    let results: Vec<Value> = rest.iter().map(|f| f.json()["result"].clone()).collect();
    let later: Vec<&str> = results
        .iter()
        .filter_map(|r| r["statusUpdate"]["status"]["state"].as_str())
        .collect();
    assert_eq!(
        later,
        ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"],
        "{results:?}"
    );
    let output = results
        .iter()
        .find_map(|r| r["artifactUpdate"]["artifact"]["parts"][0]["text"].as_str())
        .expect("an output artifact");
    assert_eq!(output, "streamed-approval\n");
    frames.extend(rest);
    let seqs: Vec<i64> = frames.iter().map(|f| f.seq()).collect();
    assert!(
        seqs.windows(2).all(|w| w[0] < w[1]),
        "ids increase: {seqs:?}"
    );
    assert!(pending_ids(&app).await.is_empty());

    let task = app.get_task_as(Who::Owner, "shell", &task_id).await;
    assert_eq!(state(&task), "TASK_STATE_COMPLETED");
    app.shutdown().await;
}

#[tokio::test]
async fn a_text_message_leaves_the_interaction_pending_and_bad_answers_are_refused() {
    let app = TestApp::spawn().await;
    let task = app.send_task_as(Who::Owner, "shell", msg("true")).await;
    assert_eq!(state(&task), "TASK_STATE_AUTH_REQUIRED");
    let interaction = interaction_of(&task);
    let id = interaction["interactionId"].as_str().unwrap().to_string();
    let task_id = task["id"].as_str().unwrap().to_string();

    let approve = with(msg("approve"), json!({ "taskId": task_id }));
    let r = app
        .rpc_as(
            Who::Owner,
            "shell",
            "SendMessage",
            json!({ "message": approve }),
        )
        .await;
    let err = assert_rpc_error(&r, -32004);
    assert!(err["message"].as_str().unwrap().contains(&id), "{err}");
    assert_eq!(pending_ids(&app).await, vec![id.clone()]);
    // Sent as ROLE_AGENT (accepted as the caller's input elsewhere), it is no approval either.
    let as_agent = with(
        json!({ "messageId": uid("m"), "role": "ROLE_AGENT", "parts": [{ "text": "approve" }] }),
        json!({ "taskId": task_id }),
    );
    let r = app
        .rpc_as(
            Who::Owner,
            "shell",
            "SendMessage",
            json!({ "message": as_agent }),
        )
        .await;
    let err = assert_rpc_error(&r, -32004);
    assert!(err["message"].as_str().unwrap().contains(&id), "{err}");
    assert_eq!(pending_ids(&app).await, vec![id.clone()]);
    assert_eq!(
        state(&app.get_task_as(Who::Owner, "shell", &task_id).await),
        "TASK_STATE_AUTH_REQUIRED"
    );

    let answer = |option: &str, mid: &str| json!({ "task_id": task_id, "option": option, "message_id": mid });
    // Without the owner's token the caller is "anonymous local", who may not answer.
    let (status, body) = post_answer(&app, &id, answer("accept", "m1"), false).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    // An option the engine did not declare.
    let (status, body) = post_answer(&app, &id, answer("approve", "m1"), true).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["error"]["field"], "option");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("accept, acceptForSession, decline, cancel")
    );
    // Another task's id.
    let (status, _) = post_answer(
        &app,
        &id,
        json!({ "task_id": "nope", "option": "accept", "message_id": "m1" }),
        true,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(pending_ids(&app).await, vec![id.clone()]);

    // Accepted once; the identical retry is the same answer; a different one is refused.
    let (status, _) = post_answer(&app, &id, answer("decline", "m2"), true).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = post_answer(&app, &id, answer("decline", "m2"), true).await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = post_answer(&app, &id, answer("accept", "m3"), true).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let done = app.wait_terminal(Who::Owner, "shell", &task_id).await;
    assert_eq!(state(&done), "TASK_STATE_COMPLETED");
    assert!(
        done["status"]["message"]["parts"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Not run")
    );
    app.shutdown().await;
}

#[tokio::test]
async fn a_pending_approval_survives_a_restart_and_its_answer_completes_the_task() {
    let app = TestApp::spawn().await;
    let task = app
        .send_task_as(Who::Owner, "shell", msg("echo after-restart"))
        .await;
    let interaction = interaction_of(&task);
    let id = interaction["interactionId"].as_str().unwrap().to_string();
    let task_id = task["id"].as_str().unwrap().to_string();

    let app = app.restart().await;
    assert_eq!(pending_ids(&app).await, vec![id.clone()]);
    let (status, body) = post_answer(
        &app,
        &id,
        json!({ "task_id": task_id, "option": "accept", "message_id": uid("answer") }),
        true,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let done = app.wait_terminal(Who::Owner, "shell", &task_id).await;
    assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");
    let output = first_artifact_text(&done);
    assert!(output.starts_with("after-restart\n"), "{output}");
    app.shutdown().await;
}

/// Answers sent together: each is its own answer in its own task's journal (checked, audited
/// and idempotent on its message_id as if sent alone), and one refused answer does not stop the
/// others.
#[tokio::test]
async fn a_bulk_answer_journals_each_answer_on_its_own() {
    let app = TestApp::spawn().await;
    let mut waiting = Vec::new();
    for i in 0..3 {
        let task = app
            .send_task_as(Who::Owner, "shell", msg(&format!("echo bulk-{i}")))
            .await;
        let interaction = interaction_of(&task);
        waiting.push((
            task["id"].as_str().unwrap().to_string(),
            interaction["interactionId"].as_str().unwrap().to_string(),
        ));
    }
    let bulk = |answers: Value, token: bool| {
        let mut req = app
            .client
            .post(format!("{}/api/v1/interactions/answer", app.url))
            .json(&json!({ "answers": answers }));
        if token {
            req = req.bearer_auth(&app.token);
        }
        async move {
            let resp = req.send().await.expect("sent");
            (
                resp.status(),
                resp.json::<Value>().await.unwrap_or(Value::Null),
            )
        }
    };
    let one = |(task, id): &(String, String), option: &str, mid: &str| json!({ "interaction_id": id, "task_id": task, "option": option, "message_id": mid });
    // Only the owner answers (the anonymous loopback caller is asked for the token).
    let (status, _) = bulk(json!([one(&waiting[0], "decline", "b0")]), false).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    // Two good answers and one naming an undeclared option.
    let (status, body) = bulk(
        json!([
            one(&waiting[0], "decline", "b0"),
            one(&waiting[1], "approve", "b1"),
            one(&waiting[2], "decline", "b2"),
        ]),
        true,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let statuses: Vec<u64> = body["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["status"].as_u64().unwrap())
        .collect();
    assert_eq!(statuses, [200, 422, 200]);
    assert_eq!(body["results"][1]["error"]["code"], "invalid_field");
    assert_eq!(pending_ids(&app).await, vec![waiting[1].1.clone()]);
    // The identical retry is the same answer; a different one for an answered card is 409.
    let (_, again) = bulk(
        json!([
            one(&waiting[0], "decline", "b0"),
            one(&waiting[2], "accept", "b9")
        ]),
        true,
    )
    .await;
    assert_eq!(again["results"][0]["status"], 200, "{again}");
    assert_eq!(again["results"][1]["status"], 409, "{again}");
    // Each answered task has exactly one answer in its own journal.
    for (task, _) in [&waiting[0], &waiting[2]] {
        app.wait_terminal(Who::Owner, "shell", task).await;
        let (_, _, t) = app.get_json(&format!("/api/v1/tasks/{task}"), true).await;
        let (_, _, s) = app
            .get_json(
                &format!("/api/v1/sessions/{}", t["sessionId"].as_str().unwrap()),
                true,
            )
            .await;
        let answers = s["transcript"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| b["kind"] == "answer")
            .count();
        assert_eq!(answers, 1, "{s}");
        assert_eq!(t["outcome"], "declined");
    }
    // Too many or none at all is refused whole.
    let (status, _) = bulk(json!([]), true).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    app.shutdown().await;
}
