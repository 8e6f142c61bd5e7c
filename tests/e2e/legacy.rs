//! A2A 0.3 method aliases, answered in 0.3 JSON.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::*;

const A2A: &str = "/api/v1/agents/echo/a2a";

fn v03_message(text: &str) -> Value {
    json!({
        "kind": "message",
        "messageId": uid("v03"),
        "role": "user",
        "parts": [{ "kind": "text", "text": text }],
    })
}

async fn v03_call(app: &TestApp, method: &str, params: Value) -> Value {
    let resp = app
        .post_raw(
            A2A,
            &[("Content-Type", "application/json"), ("A2A-Version", "0.3")],
            json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }).to_string(),
        )
        .await;
    json_body(resp, StatusCode::OK).await
}

#[tokio::test]
async fn message_send_returns_a_bare_0_3_task_and_tasks_get_reads_it() {
    let app = TestApp::spawn().await;
    let m = v03_message("old school");
    let r = v03_call(&app, "message/send", json!({ "message": m })).await;
    let task = &r["result"];
    assert!(
        task.get("task").is_none(),
        "0.3 results are not wrapped: {r}"
    );
    assert_eq!(task["kind"], "task", "{r}");
    assert_eq!(task["status"]["state"], "completed", "{r}");
    assert_eq!(task["artifacts"][0]["parts"][0]["kind"], "text");
    assert_eq!(task["artifacts"][0]["parts"][0]["text"], "old school");
    let user = &task["history"][0];
    assert_eq!(user["kind"], "message");
    assert_eq!(user["role"], "user");
    assert_eq!(user["messageId"], m["messageId"]);

    let id = task["id"].as_str().expect("id");
    let got = v03_call(&app, "tasks/get", json!({ "id": id })).await;
    assert_eq!(got["result"]["kind"], "task", "{got}");
    assert_eq!(got["result"]["id"], id);
    assert_eq!(got["result"]["status"]["state"], "completed");

    // The same task through the 1.0 method name, in 1.0 JSON.
    let v1 = app.get_task_as(Who::Anon, "echo", id).await;
    assert_eq!(state(&v1), "TASK_STATE_COMPLETED");
    assert!(v1.get("kind").is_none(), "1.0 JSON has no kind: {v1}");
    app.shutdown().await;
}

#[tokio::test]
async fn message_send_blocking_false_returns_at_once() {
    let app = TestApp::spawn().await;
    let r = v03_call(
        &app,
        "message/send",
        json!({ "message": v03_message("quick"), "configuration": { "blocking": false } }),
    )
    .await;
    let task = &r["result"];
    assert_eq!(task["kind"], "task", "{r}");
    let s = task["status"]["state"].as_str().expect("state");
    assert!(["submitted", "working", "completed"].contains(&s), "{r}");
    let done = app
        .wait_terminal(Who::Anon, "echo", task["id"].as_str().expect("id"))
        .await;
    assert_eq!(state(&done), "TASK_STATE_COMPLETED");
    app.shutdown().await;
}

#[tokio::test]
async fn message_stream_sends_0_3_events_ending_with_final_true() {
    let app = TestApp::spawn().await;
    let resp = app
        .post_raw(
            A2A,
            &[("Content-Type", "application/json")],
            json!({ "jsonrpc": "2.0", "id": 9, "method": "message/stream",
                    "params": { "message": v03_message("streamed") } })
            .to_string(),
        )
        .await;
    let frames = Sse::from_response(resp).rest().await;
    let results: Vec<Value> = frames.iter().map(|f| f.json()["result"].clone()).collect();
    assert!(results.len() >= 2, "{results:?}");
    assert_eq!(results[0]["kind"], "task", "{results:?}");
    for r in &results {
        assert!(r["kind"].is_string(), "every 0.3 event has a kind: {r}");
    }
    let status: Vec<&Value> = results
        .iter()
        .filter(|r| r["kind"] == "status-update")
        .collect();
    assert!(!status.is_empty(), "{results:?}");
    let last = results.last().expect("a last event");
    assert_eq!(last["kind"], "status-update", "{results:?}");
    assert_eq!(last["final"], true);
    assert_eq!(last["status"]["state"], "completed");
    for s in &status[..status.len() - 1] {
        assert_eq!(s["final"], false, "only the last status is final: {s}");
    }
    app.shutdown().await;
}

/// `tasks/pushNotificationConfig/*` take and return 0.3 shapes (a2a-python 0.3 `types.py`:
/// `TaskPushNotificationConfig {taskId, pushNotificationConfig}`, `PushNotificationConfig {id,
/// url, token, authentication}`, `PushNotificationAuthenticationInfo {schemes, credentials}`;
/// get/delete name the task `id` and the config `pushNotificationConfigId`; list returns a bare
/// array), and store the same configs the 1.0 methods read.
#[tokio::test]
async fn push_config_aliases_speak_0_3_both_ways() {
    let agent = exec_agent(
        "hooks",
        r#"echo '{"type":"final","status":"input_required","text":"more please"}'"#,
    )
    .replace(
        "description = \"e2e exec agent\"\n",
        "description = \"e2e exec agent\"\npush_notifications = true\n",
    );
    let app = TestApp::spawn_with(false, Some(&agent)).await;
    let call = |method: &'static str, params: Value| {
        let app = &app;
        async move {
            let resp = app
                .post_raw(
                    "/api/v1/agents/hooks/a2a",
                    &[("Content-Type", "application/json"), ("A2A-Version", "0.3")],
                    json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params })
                        .to_string(),
                )
                .await;
            json_body(resp, StatusCode::OK).await
        }
    };
    let sent = call("message/send", json!({ "message": v03_message("start") })).await;
    assert_eq!(
        sent["result"]["status"]["state"], "input-required",
        "{sent}"
    );
    let task_id = sent["result"]["id"].as_str().expect("task id").to_string();
    let url = "https://hooks.example.com/a";

    let set = call(
        "tasks/pushNotificationConfig/set",
        json!({ "taskId": task_id, "pushNotificationConfig": {
            "id": "hook-1", "url": url, "token": "tok-1",
            "authentication": { "schemes": ["Bearer"], "credentials": "receiver-cred" } } }),
    )
    .await;
    let v03_config = json!({ "taskId": task_id, "pushNotificationConfig": {
        "id": "hook-1", "url": url, "token": "tok-1",
        "authentication": { "schemes": ["Bearer"] } } });
    assert_eq!(set["result"], v03_config, "{set}");

    let got = call(
        "tasks/pushNotificationConfig/get",
        json!({ "id": task_id, "pushNotificationConfigId": "hook-1" }),
    )
    .await;
    assert_eq!(got["result"], v03_config, "{got}");
    // 0.3's get may name only the task (TaskIdParams): the task's first config.
    let first = call("tasks/pushNotificationConfig/get", json!({ "id": task_id })).await;
    assert_eq!(first["result"], v03_config, "{first}");

    // The 1.0 method reads the same config in 1.0 JSON.
    let v1 = app
        .rpc(
            "hooks",
            "GetTaskPushNotificationConfig",
            json!({ "taskId": task_id, "id": "hook-1" }),
        )
        .await;
    assert_eq!(
        v1["result"]["authentication"],
        json!({ "scheme": "Bearer" })
    );
    assert_eq!(v1["result"]["taskId"], task_id);

    let second = call(
        "tasks/pushNotificationConfig/set",
        json!({ "taskId": task_id, "pushNotificationConfig": { "url": url } }),
    )
    .await;
    let second_id = second["result"]["pushNotificationConfig"]["id"]
        .as_str()
        .expect("a generated id")
        .to_string();
    let listed = call(
        "tasks/pushNotificationConfig/list",
        json!({ "id": task_id }),
    )
    .await;
    let configs = listed["result"].as_array().expect("a bare array");
    assert_eq!(configs.len(), 2, "{listed}");
    assert_eq!(configs[0], v03_config);
    assert_eq!(
        configs[1]["pushNotificationConfig"]["id"],
        second_id.as_str()
    );

    for _ in 0..2 {
        let d = call(
            "tasks/pushNotificationConfig/delete",
            json!({ "id": task_id, "pushNotificationConfigId": "hook-1" }),
        )
        .await;
        assert!(d.get("error").is_none(), "{d}");
        assert_eq!(d["result"], Value::Null);
    }
    let listed = call(
        "tasks/pushNotificationConfig/list",
        json!({ "id": task_id }),
    )
    .await;
    assert_eq!(
        listed["result"].as_array().map(Vec::len),
        Some(1),
        "{listed}"
    );

    // A 0.3 field of the wrong type is named by its 0.3 path.
    let bad = call(
        "tasks/pushNotificationConfig/set",
        json!({ "taskId": task_id, "pushNotificationConfig": {
            "url": url, "authentication": { "schemes": "Bearer" } } }),
    )
    .await;
    let err = assert_rpc_error(&bad, -32602);
    assert_eq!(
        err["data"][1]["fieldViolations"][0]["field"],
        "pushNotificationConfig.authentication.schemes",
        "{bad}"
    );

    // message/send's configuration.pushNotificationConfig is stored for the new task.
    let inline = call(
        "message/send",
        json!({ "message": v03_message("again"), "configuration": {
            "pushNotificationConfig": { "id": "inline", "url": url,
                "authentication": { "schemes": ["Bearer"], "credentials": "c" } } } }),
    )
    .await;
    let inline_task = inline["result"]["id"].as_str().expect("task id");
    let listed = call(
        "tasks/pushNotificationConfig/list",
        json!({ "id": inline_task }),
    )
    .await;
    assert_eq!(
        listed["result"][0]["pushNotificationConfig"]["authentication"],
        json!({ "schemes": ["Bearer"] }),
        "{listed}"
    );
    app.shutdown().await;
}
