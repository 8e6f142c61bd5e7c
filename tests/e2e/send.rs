//! SendMessage: blocking and non-blocking, idempotent retries, and acceptedOutputModes.

use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn blocking_send_returns_the_completed_task_with_its_artifact() {
    let app = TestApp::spawn().await;
    let m = msg("hello sextant");
    let task = app.send_task("echo", m.clone()).await;

    assert_eq!(state(&task), "TASK_STATE_COMPLETED", "{task}");
    assert!(task["id"].as_str().is_some_and(|s| !s.is_empty()));
    assert!(task["contextId"].as_str().is_some_and(|s| !s.is_empty()));
    let session_id = task["metadata"]["sessionId"]
        .as_str()
        .expect("metadata.sessionId");
    assert!(!session_id.is_empty());

    let artifact = &task["artifacts"][0];
    assert_eq!(artifact["name"], "echo", "{task}");
    assert_eq!(artifact["parts"][0]["text"], "hello sextant");
    assert_eq!(
        artifact["parts"].as_array().map(Vec::len),
        Some(1),
        "the reply alone, no Session line: {task}"
    );
    assert_eq!(
        task["metadata"]["sessionUrl"],
        format!("{}/sessions/{session_id}", app.url),
        "the task links its Session in its metadata"
    );

    let history = task["history"].as_array().expect("history");
    let user = history
        .iter()
        .find(|h| h["role"] == "ROLE_USER")
        .expect("the user message is in the history");
    assert_eq!(user["messageId"], m["messageId"]);
    assert_eq!(user["parts"][0]["text"], "hello sextant");
    assert_eq!(user["contextId"], task["contextId"]);
    assert_eq!(user["taskId"], task["id"]);
    app.shutdown().await;
}

#[tokio::test]
async fn return_immediately_answers_at_once_and_the_task_completes_later() {
    let app = TestApp::spawn().await;
    let task = app.submit_as(Who::Anon, "echo", msg("later")).await;
    let first = state(&task).to_string();
    assert!(
        matches!(
            first.as_str(),
            "TASK_STATE_SUBMITTED" | "TASK_STATE_WORKING" | "TASK_STATE_COMPLETED"
        ),
        "{task}"
    );
    assert!(task["metadata"]["sessionId"].as_str().is_some());
    let id = task["id"].as_str().expect("id");

    let done = app.wait_terminal(Who::Anon, "echo", id).await;
    assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");
    assert!(rank(state(&done)) >= rank(&first));
    assert!(first_artifact_text(&done).starts_with("later"), "{done}");
    assert_eq!(done["metadata"]["sessionId"], task["metadata"]["sessionId"]);
    app.shutdown().await;
}

#[tokio::test]
async fn send_without_a2a_version_header_is_served() {
    let app = TestApp::spawn().await;
    let resp = app
        .post_raw(
            "/api/v1/agents/echo/a2a",
            &[("Content-Type", "application/json")],
            json!({ "jsonrpc": "2.0", "id": 7, "method": "SendMessage",
                    "params": { "message": msg("no header") } })
            .to_string(),
        )
        .await;
    let body = json_body(resp, reqwest::StatusCode::OK).await;
    assert_eq!(body["id"], 7);
    assert_eq!(
        state(&body["result"]["task"]),
        "TASK_STATE_COMPLETED",
        "{body}"
    );
    app.shutdown().await;
}

#[tokio::test]
async fn retry_with_same_message_id_and_content_returns_the_same_task() {
    let app = TestApp::spawn().await;
    let m = msg_with_id(&uid("retry"), "once");
    let first = app.send_task("echo", m.clone()).await;
    let total = app.tasks_total().await;
    assert_eq!(total, 1);

    let again = app.send_task("echo", m.clone()).await;
    assert_eq!(
        again["id"], first["id"],
        "an identical retry is the same task"
    );
    assert_eq!(state(&again), "TASK_STATE_COMPLETED");
    assert_eq!(app.tasks_total().await, total, "a retry creates no task");
    app.shutdown().await;
}

#[tokio::test]
async fn reused_message_id_with_different_content_is_invalid_params() {
    let app = TestApp::spawn().await;
    let id = uid("reuse");
    app.send_task("echo", msg_with_id(&id, "first")).await;
    let total = app.tasks_total().await;

    let r = app
        .rpc(
            "echo",
            "SendMessage",
            json!({ "message": msg_with_id(&id, "second, different") }),
        )
        .await;
    let err = assert_rpc_error(&r, -32602);
    assert!(
        err["message"].as_str().unwrap_or("").contains("messageId"),
        "the error names messageId: {err}"
    );
    assert_eq!(app.tasks_total().await, total);
    app.shutdown().await;
}

#[tokio::test]
async fn accepted_output_modes_json_turns_text_into_data_parts() {
    let app = TestApp::spawn().await;
    let result = app
        .send_as(
            Who::Anon,
            "echo",
            json!({ "message": msg("as json"),
                    "configuration": { "acceptedOutputModes": ["application/json"] } }),
        )
        .await;
    let task = &result["task"];
    assert_eq!(state(task), "TASK_STATE_COMPLETED", "{result}");
    let parts = task["artifacts"][0]["parts"].as_array().expect("parts");
    assert!(!parts.is_empty());
    for p in parts {
        assert!(p.get("text").is_none(), "no text part is left: {p}");
        assert!(p["data"].is_string(), "text became data: {p}");
    }
    assert_eq!(parts[0]["data"], "as json");
    app.shutdown().await;
}

#[tokio::test]
async fn accepted_output_modes_text_renders_data_as_json_text() {
    let app = TestApp::spawn_with(true, None).await;
    let result = app
        .send_as(
            Who::Anon,
            "conformance",
            json!({ "message": msg_with_id(&uid("tck-artifact-data"), "data please"),
                    "configuration": { "acceptedOutputModes": ["text/plain"] } }),
        )
        .await;
    let task = &result["task"];
    assert_eq!(state(task), "TASK_STATE_COMPLETED", "{result}");
    let part = &task["artifacts"][0]["parts"][0];
    assert!(part.get("data").is_none(), "{part}");
    let text = part["text"].as_str().expect("a text part");
    let parsed: serde_json::Value = serde_json::from_str(text).expect("the text is JSON");
    assert_eq!(parsed, json!({"key": "value", "count": 42}));

    // Without a preference the same behaviour yields the data part itself.
    let plain = app
        .send_task(
            "conformance",
            msg_with_id(&uid("tck-artifact-data"), "data please"),
        )
        .await;
    assert_eq!(
        plain["artifacts"][0]["parts"][0]["data"],
        json!({"key": "value", "count": 42})
    );
    app.shutdown().await;
}

#[tokio::test]
async fn accepted_output_modes_nothing_producible_is_content_type_not_supported() {
    let app = TestApp::spawn().await;
    let r = app
        .rpc(
            "echo",
            "SendMessage",
            json!({ "message": msg("png please"),
                    "configuration": { "acceptedOutputModes": ["image/png"] } }),
        )
        .await;
    assert_rpc_error(&r, -32005);
    assert_eq!(app.tasks_total().await, 0, "nothing was journalled");
    app.shutdown().await;
}

/// The official SDKs' `new_text_message()` sends ROLE_AGENT: it is the caller's input. The task
/// records the role as sent, the console's transcript shows it as the caller's input, and a
/// stateless engine's history gives the caller's words as the user's, never as the Agent's.
#[tokio::test]
async fn an_agent_role_message_is_the_caller_s_input_recorded_with_its_role() {
    // Prints the roles of the turn line's history.
    let roles = exec_agent(
        "roles",
        r#"read -r line; echo "roles: $(printf '%s' "$line" | grep -o '"role":"[a-z]*"' | tr '\n' ' ')""#,
    );
    let app = TestApp::spawn_with(false, Some(&roles)).await;
    let m = json!({ "messageId": uid("m"), "role": "ROLE_AGENT",
                    "parts": [{ "text": "hello as agent" }] });
    let task = app.send_task("echo", m.clone()).await;
    assert_eq!(state(&task), "TASK_STATE_COMPLETED", "{task}");
    assert_eq!(task["artifacts"][0]["parts"][0]["text"], "hello as agent");
    let id = task["id"].as_str().unwrap();
    let got = app.get_task_as(Who::Anon, "echo", id).await;
    let first = &got["history"][0];
    assert_eq!(first["messageId"], m["messageId"], "{got}");
    assert_eq!(first["role"], "ROLE_AGENT", "recorded as sent: {got}");
    let sid = got["metadata"]["sessionId"].as_str().unwrap();
    let (_, _, s) = app.get_json(&format!("/api/v1/sessions/{sid}"), true).await;
    let blocks = s["transcript"].as_array().expect("transcript");
    assert!(
        blocks
            .iter()
            .any(|b| b["kind"] == "user_input" && b["text"] == "hello as agent"),
        "shown as the caller's input: {s}"
    );

    let m = json!({ "messageId": uid("m"), "role": "ROLE_AGENT", "parts": [{ "text": "one" }] });
    let one = app.send_task("roles", m).await;
    assert_eq!(state(&one), "TASK_STATE_COMPLETED", "{one}");
    let two = app
        .send_task(
            "roles",
            with(msg("two"), json!({ "contextId": one["contextId"] })),
        )
        .await;
    assert_eq!(state(&two), "TASK_STATE_COMPLETED", "{two}");
    let said = first_artifact_text(&two);
    assert!(
        said.starts_with(r#"roles: "role":"user" "role":"agent" "#),
        "the caller's ROLE_AGENT message is the user's turn, the reply the Agent's: {said:?}"
    );
    app.shutdown().await;
}
