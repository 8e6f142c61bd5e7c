//! Caller scoping (DESIGN rule 5) and contexts: who sees which task, and how contextId and
//! taskId route a message.

use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn another_callers_task_is_not_found_both_ways() {
    let app = TestApp::spawn().await;
    let anon = app.send_task_as(Who::Anon, "echo", msg("anon's")).await;
    let owner = app.send_task_as(Who::Owner, "echo", msg("owner's")).await;
    let anon_id = anon["id"].as_str().expect("id");
    let owner_id = owner["id"].as_str().expect("id");

    // Each sees their own.
    assert_eq!(
        app.get_task_as(Who::Anon, "echo", anon_id).await["id"],
        anon["id"]
    );
    assert_eq!(
        app.get_task_as(Who::Owner, "echo", owner_id).await["id"],
        owner["id"]
    );

    // Neither sees the other's: TaskNotFound, never "forbidden".
    for (who, id) in [(Who::Owner, anon_id), (Who::Anon, owner_id)] {
        let r = app
            .rpc_as(who, "echo", "GetTask", json!({ "id": id }))
            .await;
        assert_rpc_error(&r, -32001);
        let r = app
            .rpc_as(who, "echo", "CancelTask", json!({ "id": id }))
            .await;
        assert_rpc_error(&r, -32001);
        let r = app
            .rpc_as(who, "echo", "SubscribeToTask", json!({ "id": id }))
            .await;
        assert_rpc_error(&r, -32001);
        // Nor can they continue it.
        let follow = with(msg("sneaky"), json!({ "taskId": id }));
        let r = app
            .rpc_as(who, "echo", "SendMessage", json!({ "message": follow }))
            .await;
        assert_rpc_error(&r, -32001);
    }
    app.shutdown().await;
}

#[tokio::test]
async fn same_context_id_from_two_callers_is_two_conversations() {
    let app = TestApp::spawn().await;
    let ctx = uid("shared-ctx");
    let a = app
        .send_task_as(
            Who::Anon,
            "echo",
            with(msg("from anon"), json!({ "contextId": ctx })),
        )
        .await;
    let o = app
        .send_task_as(
            Who::Owner,
            "echo",
            with(msg("from owner"), json!({ "contextId": ctx })),
        )
        .await;
    assert_eq!(a["contextId"], ctx);
    assert_eq!(o["contextId"], ctx);
    let a_session = a["metadata"]["sessionId"].as_str().expect("sessionId");
    let o_session = o["metadata"]["sessionId"].as_str().expect("sessionId");
    assert_ne!(a_session, o_session, "two callers, two Sessions");

    // Each conversation holds only its own caller's messages.
    let texts = |t: &serde_json::Value| -> Vec<String> {
        t["history"]
            .as_array()
            .expect("history")
            .iter()
            .filter(|m| m["role"] == "ROLE_USER")
            .map(|m| m["parts"][0]["text"].as_str().unwrap_or("").to_string())
            .collect()
    };
    assert_eq!(texts(&a), ["from anon"]);
    assert_eq!(texts(&o), ["from owner"]);

    // A second anonymous message in that context stays in the anonymous Session and its
    // agent sees no trace of the owner's message.
    let a2 = app
        .send_task_as(
            Who::Anon,
            "echo",
            with(msg("anon again"), json!({ "contextId": ctx })),
        )
        .await;
    assert_eq!(a2["metadata"]["sessionId"], a_session);
    for sid in [a_session, o_session] {
        let (status, _, s) = app.get_json(&format!("/api/v1/sessions/{sid}"), true).await;
        assert_eq!(status, reqwest::StatusCode::OK);
        let inputs: Vec<&str> = s["transcript"]
            .as_array()
            .expect("transcript")
            .iter()
            .filter(|b| b["kind"] == "user_input")
            .filter_map(|b| b["text"].as_str())
            .collect();
        if sid == a_session {
            assert_eq!(inputs, ["from anon", "anon again"]);
        } else {
            assert_eq!(inputs, ["from owner"]);
        }
    }
    app.shutdown().await;
}

#[tokio::test]
async fn list_tasks_lists_only_the_callers_own_tasks() {
    let app = TestApp::spawn().await;
    let mut anon_ids = Vec::new();
    for i in 0..2 {
        let t = app
            .send_task_as(Who::Anon, "echo", msg(&format!("a{i}")))
            .await;
        anon_ids.push(t["id"].as_str().expect("id").to_string());
    }
    let owner = app.send_task_as(Who::Owner, "echo", msg("o")).await;

    let ids = |r: &serde_json::Value| -> Vec<String> {
        r["result"]["tasks"]
            .as_array()
            .expect("tasks")
            .iter()
            .map(|t| t["id"].as_str().unwrap_or("").to_string())
            .collect()
    };
    let r = app.rpc_as(Who::Anon, "echo", "ListTasks", json!({})).await;
    let mut got = ids(&r);
    got.sort();
    anon_ids.sort();
    assert_eq!(got, anon_ids, "{r}");
    assert_eq!(r["result"]["totalSize"], 2);

    let r = app.rpc_as(Who::Owner, "echo", "ListTasks", json!({})).await;
    assert_eq!(ids(&r), [owner["id"].as_str().expect("id")], "{r}");
    assert_eq!(r["result"]["totalSize"], 1);
    app.shutdown().await;
}

#[tokio::test]
async fn a_message_without_context_id_starts_a_new_context() {
    let app = TestApp::spawn().await;
    let t1 = app.send_task("echo", msg("one")).await;
    let t2 = app.send_task("echo", msg("two")).await;
    let c1 = t1["contextId"].as_str().expect("contextId");
    assert!(!c1.is_empty());
    assert_ne!(
        t1["contextId"], t2["contextId"],
        "each starts its own context"
    );
    assert_ne!(t1["metadata"]["sessionId"], t2["metadata"]["sessionId"]);
    app.shutdown().await;
}

#[tokio::test]
async fn a_message_with_a_known_context_id_joins_its_session() {
    let app = TestApp::spawn().await;
    let t1 = app.send_task("echo", msg("one")).await;
    let ctx = t1["contextId"].as_str().expect("contextId");
    let t2 = app
        .send_task("echo", with(msg("two"), json!({ "contextId": ctx })))
        .await;
    assert_eq!(t2["contextId"], ctx);
    assert_ne!(
        t2["id"], t1["id"],
        "a new message in a context is a new task"
    );
    assert_eq!(t2["metadata"]["sessionId"], t1["metadata"]["sessionId"]);
    assert_eq!(state(&t2), "TASK_STATE_COMPLETED");
    app.shutdown().await;
}

#[tokio::test]
async fn follow_up_to_a_completed_task_is_unsupported_operation() {
    let app = TestApp::spawn().await;
    let t = app.send_task("echo", msg("done")).await;
    let follow = with(
        msg("more?"),
        json!({ "taskId": t["id"], "contextId": t["contextId"] }),
    );
    let r = app
        .rpc("echo", "SendMessage", json!({ "message": follow }))
        .await;
    assert_rpc_error(&r, -32004);
    assert_eq!(app.tasks_total().await, 1);
    app.shutdown().await;
}

#[tokio::test]
async fn follow_up_to_an_unknown_task_is_task_not_found() {
    let app = TestApp::spawn().await;
    let follow = with(msg("hello?"), json!({ "taskId": "no-such-task" }));
    let r = app
        .rpc("echo", "SendMessage", json!({ "message": follow }))
        .await;
    assert_rpc_error(&r, -32001);
    assert_eq!(app.tasks_total().await, 0);
    app.shutdown().await;
}

#[tokio::test]
async fn follow_up_with_a_mismatching_context_is_invalid_params() {
    let app = TestApp::spawn_with(true, None).await;
    let t = app
        .send_task(
            "conformance",
            msg_with_id(&uid("tck-input-required"), "wait"),
        )
        .await;
    assert_eq!(state(&t), "TASK_STATE_INPUT_REQUIRED", "{t}");
    let follow = with(
        msg_with_id(&uid("tck-complete-task"), "answer"),
        json!({ "taskId": t["id"], "contextId": "some-other-context" }),
    );
    let r = app
        .rpc("conformance", "SendMessage", json!({ "message": follow }))
        .await;
    let err = assert_rpc_error(&r, -32602);
    assert!(
        err["message"].as_str().unwrap_or("").contains("contextId"),
        "{err}"
    );
    let still = app
        .get_task_as(Who::Anon, "conformance", t["id"].as_str().expect("id"))
        .await;
    assert_eq!(
        state(&still),
        "TASK_STATE_INPUT_REQUIRED",
        "the task is untouched"
    );
    assert_eq!(user_message_ids(&still).len(), 1);
    app.shutdown().await;
}

#[tokio::test]
async fn input_required_task_completes_on_follow_up_with_both_messages_in_history() {
    let app = TestApp::spawn_with(true, None).await;
    let first = msg_with_id(&uid("tck-input-required"), "start");
    let t = app.send_task("conformance", first.clone()).await;
    assert_eq!(state(&t), "TASK_STATE_INPUT_REQUIRED", "{t}");

    let second = with(
        msg_with_id(&uid("tck-complete-task"), "here is the input"),
        json!({ "taskId": t["id"] }),
    );
    let done = app.send_task("conformance", second.clone()).await;
    assert_eq!(done["id"], t["id"], "the follow-up continues the same task");
    assert_eq!(done["contextId"], t["contextId"]);
    assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");
    assert_eq!(
        done["status"]["message"]["parts"][0]["text"],
        "Hello from TCK"
    );
    assert_eq!(
        user_message_ids(&done),
        [
            first["messageId"].as_str().expect("id"),
            second["messageId"].as_str().expect("id")
        ],
        "both user messages, in order: {done}"
    );
    app.shutdown().await;
}
