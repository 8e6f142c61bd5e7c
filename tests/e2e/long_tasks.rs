//! A caller that stops waiting changes nothing for the task.

use std::time::Duration;

use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn a_blocking_caller_that_gives_up_does_not_fail_the_task() {
    let toml = exec_agent("sleepy", "read -r line; sleep 2; echo done");
    let app = TestApp::spawn_with(false, Some(&toml)).await;

    let err = app
        .client
        .post(app.a2a_url("sleepy"))
        .header("Content-Type", "application/json")
        .header("A2A-Version", "1.0")
        .timeout(Duration::from_millis(300))
        .body(
            json!({ "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                    "params": { "message": msg("wake me later") } })
            .to_string(),
        )
        .send()
        .await
        .expect_err("the caller gives up before the 2 s turn ends");
    assert!(err.is_timeout(), "{err}");

    // The task belongs to the anonymous caller: find it the way that caller would.
    let r = app.rpc("sleepy", "ListTasks", json!({})).await;
    let tasks = r["result"]["tasks"].as_array().expect("tasks").clone();
    assert_eq!(tasks.len(), 1, "the message was accepted: {r}");
    let id = tasks[0]["id"].as_str().expect("id");
    assert!(
        !is_terminal(state(&tasks[0])),
        "still running after the caller left: {}",
        tasks[0]
    );

    let done = app.wait_terminal(Who::Anon, "sleepy", id).await;
    assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");
    assert!(
        first_artifact_text(&done).starts_with("done"),
        "the late output is kept: {done}"
    );
    app.shutdown().await;
}
