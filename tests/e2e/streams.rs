//! SSE streams: SendStreamingMessage and SubscribeToTask (DESIGN rule 3).

use serde_json::{Value, json};

use crate::support::*;

/// The task state an SSE result carries, if it carries one.
fn state_of(result: &Value) -> Option<String> {
    result["task"]["status"]["state"]
        .as_str()
        .or_else(|| result["statusUpdate"]["status"]["state"].as_str())
        .map(String::from)
}

fn results(frames: &[Frame]) -> Vec<Value> {
    frames
        .iter()
        .map(|f| {
            let v = f.json();
            assert_eq!(v["jsonrpc"], "2.0", "{v}");
            assert!(v.get("error").is_none(), "stream error: {v}");
            v["result"].clone()
        })
        .collect()
}

/// Asserts SSE ids are integers and strictly increasing.
fn assert_increasing_ids(frames: &[Frame]) {
    let ids: Vec<i64> = frames.iter().map(Frame::seq).collect();
    assert!(
        ids.windows(2).all(|w| w[0] < w[1]),
        "ids must increase: {ids:?}"
    );
}

fn long_running() -> Value {
    msg_with_id(&uid("test-resubscribe-message-id"), "take your time")
}

#[tokio::test]
async fn send_streaming_message_streams_task_then_updates_and_closes_after_completed() {
    let app = TestApp::spawn().await;
    let s = app
        .stream_as(
            Who::Anon,
            "echo",
            "SendStreamingMessage",
            json!({ "message": msg("stream me") }),
            &[],
        )
        .await;
    assert!(content_type(&s.headers).starts_with("text/event-stream"));
    let frames = s.rest().await;
    assert!(frames.len() >= 3, "task, updates, completion: {frames:?}");
    assert_increasing_ids(&frames);
    for f in &frames {
        assert_eq!(f.json()["id"], "stream-1", "events echo the request id");
    }
    let results = results(&frames);
    let task = &results[0]["task"];
    assert!(task.is_object(), "the first event is the task: {results:?}");
    let task_id = task["id"].as_str().expect("id");

    let states: Vec<String> = results.iter().filter_map(state_of).collect();
    let ranks: Vec<u8> = states.iter().map(|s| rank(s)).collect();
    assert!(
        ranks.windows(2).all(|w| w[0] <= w[1]),
        "states regress: {states:?}"
    );
    assert_eq!(
        states.last().map(String::as_str),
        Some("TASK_STATE_COMPLETED")
    );
    let last = results.last().expect("last");
    assert_eq!(
        last["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED",
        "the stream ends with the completion: {last}"
    );
    assert_eq!(last["statusUpdate"]["taskId"], task_id);

    let artifact = results
        .iter()
        .find_map(|r| r.get("artifactUpdate"))
        .expect("an artifact update");
    assert_eq!(artifact["taskId"], task_id);
    assert_eq!(artifact["artifact"]["parts"][0]["text"], "stream me");

    let read = app.get_task_as(Who::Anon, "echo", task_id).await;
    assert_eq!(state(&read), "TASK_STATE_COMPLETED");
    app.shutdown().await;
}

#[tokio::test]
async fn streaming_a_message_response_yields_exactly_one_message_event() {
    let app = TestApp::spawn_with(true, None).await;
    let s = app
        .stream_as(
            Who::Anon,
            "conformance",
            "SendStreamingMessage",
            json!({ "message": msg_with_id(&uid("tck-message-response"), "say something") }),
            &[],
        )
        .await;
    let frames = s.rest().await;
    let results = results(&frames);
    assert_eq!(
        results.len(),
        1,
        "a direct Message answer is the only event: {results:?}"
    );
    let m = &results[0]["message"];
    assert!(m.is_object(), "{results:?}");
    assert_eq!(m["role"], "ROLE_AGENT");
    assert_eq!(m["parts"][0]["text"], "Direct message response");
    app.shutdown().await;
}

#[tokio::test]
async fn blocking_send_of_a_message_response_returns_the_message() {
    let app = TestApp::spawn_with(true, None).await;
    let r = app
        .send_as(
            Who::Anon,
            "conformance",
            json!({ "message": msg_with_id(&uid("tck-message-response"), "say something") }),
        )
        .await;
    assert!(r.get("task").is_none(), "{r}");
    assert_eq!(
        r["message"]["parts"][0]["text"], "Direct message response",
        "{r}"
    );
    app.shutdown().await;
}

#[tokio::test]
async fn chunked_artifacts_stream_as_appended_chunks() {
    let app = TestApp::spawn_with(true, None).await;
    let s = app
        .stream_as(
            Who::Anon,
            "conformance",
            "SendStreamingMessage",
            json!({ "message": msg_with_id(&uid("tck-stream-artifact-chunked"), "chunks") }),
            &[],
        )
        .await;
    let frames = s.rest().await;
    assert_increasing_ids(&frames);
    let results = results(&frames);
    let chunks: Vec<&Value> = results
        .iter()
        .filter_map(|r| r.get("artifactUpdate"))
        .collect();
    assert_eq!(chunks.len(), 2, "{results:?}");
    assert_eq!(
        chunks[0]["artifact"]["artifactId"],
        chunks[1]["artifact"]["artifactId"]
    );
    assert_eq!(chunks[0]["artifact"]["parts"][0]["text"], "chunk-1 ");
    assert_eq!(chunks[1]["artifact"]["parts"][0]["text"], "chunk-2");
    assert_eq!(chunks[1]["append"], true);
    assert_eq!(chunks[1]["lastChunk"], true);
    assert!(chunks[0].get("lastChunk").is_none(), "{}", chunks[0]);

    let task_id = results[0]["task"]["id"].as_str().expect("task first");
    let read = app.get_task_as(Who::Anon, "conformance", task_id).await;
    assert_eq!(first_artifact_text(&read), "chunk-1 chunk-2", "{read}");
    app.shutdown().await;
}

#[tokio::test]
async fn streaming_send_stays_open_while_the_task_needs_input_and_closes_when_it_ends() {
    // Sextant keeps a task's stream open while it waits for input or a decision (the answer
    // resumes the same task) and closes it at the terminal state.
    let app = TestApp::spawn_with(true, None).await;
    let mut s = app
        .stream_as(
            Who::Anon,
            "conformance",
            "SendStreamingMessage",
            json!({ "message": msg_with_id(&uid("tck-input-required"), "ask me") }),
            &[],
        )
        .await;
    let mut frames = Vec::new();
    loop {
        let f = s
            .next_frame()
            .await
            .expect("open until the task needs input");
        let st = state_of(&f.json()["result"]);
        frames.push(f);
        if st.as_deref() == Some("TASK_STATE_INPUT_REQUIRED") {
            break;
        }
        assert!(!st.as_deref().is_some_and(is_terminal), "{frames:?}");
    }
    let task_id = results(&frames)[0]["task"]["id"]
        .as_str()
        .expect("the task first")
        .to_string();
    // The follow-up completes the same task; the open stream sees it and then closes.
    let mut follow = msg_with_id(&uid("tck-complete-task"), "here you go");
    follow["taskId"] = json!(task_id);
    let done = app
        .rpc_as(
            Who::Anon,
            "conformance",
            "SendMessage",
            json!({ "message": follow }),
        )
        .await;
    assert_eq!(
        state_of(&done["result"]).as_deref(),
        Some("TASK_STATE_COMPLETED"),
        "{done}"
    );
    loop {
        let f = s
            .next_frame()
            .await
            .expect("the stream reaches the terminal state");
        let st = state_of(&f.json()["result"]);
        frames.push(f);
        if st.as_deref() == Some("TASK_STATE_COMPLETED") {
            break;
        }
    }
    assert_increasing_ids(&frames);
    assert!(
        s.next_frame().await.is_none(),
        "closed after the terminal state"
    );
    app.shutdown().await;
}

/// Subscribes until the task is seen WORKING, so later subscribers share one snapshot.
async fn wait_working(app: &TestApp, task_id: &str) {
    let mut probe = app
        .stream_as(
            Who::Anon,
            "conformance",
            "SubscribeToTask",
            json!({ "id": task_id }),
            &[],
        )
        .await;
    loop {
        let f = probe.next_frame().await.expect("closed before WORKING");
        let s = state_of(&f.json()["result"]);
        assert_ne!(
            s.as_deref(),
            Some("TASK_STATE_COMPLETED"),
            "completed too early"
        );
        if s.as_deref() == Some("TASK_STATE_WORKING") {
            return;
        }
    }
}

#[tokio::test]
async fn two_concurrent_subscribers_see_the_same_events_and_both_close() {
    let app = TestApp::spawn_with(true, None).await;
    let task = app
        .submit_as(Who::Anon, "conformance", long_running())
        .await;
    let task_id = task["id"].as_str().expect("id");
    wait_working(&app, task_id).await;

    let params = json!({ "id": task_id });
    let a = app
        .stream_as(
            Who::Anon,
            "conformance",
            "SubscribeToTask",
            params.clone(),
            &[],
        )
        .await;
    let b = app
        .stream_as(Who::Anon, "conformance", "SubscribeToTask", params, &[])
        .await;
    let (a, b) = futures::join!(a.rest(), b.rest());
    assert_eq!(a, b, "concurrent subscribers see the same sequence");
    assert!(a.len() >= 2, "{a:?}");
    assert_increasing_ids(&a);
    let results = results(&a);
    assert_eq!(results[0]["task"]["id"], task_id, "{results:?}");
    assert_eq!(results[0]["task"]["status"]["state"], "TASK_STATE_WORKING");
    assert_eq!(
        state_of(results.last().expect("last")).as_deref(),
        Some("TASK_STATE_COMPLETED")
    );
    app.shutdown().await;
}

#[tokio::test]
async fn last_event_id_resumes_after_that_event_only() {
    let app = TestApp::spawn_with(true, None).await;
    let mut s = app
        .stream_as(
            Who::Anon,
            "conformance",
            "SendStreamingMessage",
            json!({ "message": long_running() }),
            &[],
        )
        .await;
    let first = s.next_frame().await.expect("the task");
    let task_id = first.json()["result"]["task"]["id"]
        .as_str()
        .expect("the first event is the task")
        .to_string();
    let working = s.next_frame().await.expect("an update");
    assert_eq!(
        state_of(&working.json()["result"]).as_deref(),
        Some("TASK_STATE_WORKING"),
        "{working:?}"
    );
    drop(s);
    let (n1, n2) = (first.seq(), working.seq());
    assert!(n1 < n2);

    let params = json!({ "id": task_id });
    let from_n1 = app
        .stream_as(
            Who::Anon,
            "conformance",
            "SubscribeToTask",
            params.clone(),
            &[("Last-Event-ID", &n1.to_string())],
        )
        .await;
    let from_n2 = app
        .stream_as(
            Who::Anon,
            "conformance",
            "SubscribeToTask",
            params,
            &[("Last-Event-ID", &n2.to_string())],
        )
        .await;
    let (from_n1, from_n2) = futures::join!(from_n1.rest(), from_n2.rest());

    assert!(from_n1.iter().all(|f| f.seq() > n1), "{from_n1:?}");
    assert_eq!(
        from_n1.first(),
        Some(&working),
        "the event right after N is replayed as it was first sent"
    );
    assert!(from_n2.iter().all(|f| f.seq() > n2), "{from_n2:?}");
    assert_eq!(from_n1[1..], from_n2[..], "both resume into the same tail");
    for frames in [&from_n1, &from_n2] {
        let r = results(frames);
        assert!(
            r.iter().all(|x| x.get("task").is_none()),
            "no snapshot on resume: {r:?}"
        );
        assert_eq!(
            state_of(r.last().expect("last")).as_deref(),
            Some("TASK_STATE_COMPLETED")
        );
    }
    app.shutdown().await;
}

#[tokio::test]
async fn a_client_that_disconnects_mid_stream_cancels_nothing() {
    let app = TestApp::spawn_with(true, None).await;
    let mut s = app
        .stream_as(
            Who::Anon,
            "conformance",
            "SendStreamingMessage",
            json!({ "message": long_running() }),
            &[],
        )
        .await;
    let first = s.next_frame().await.expect("the task");
    let task_id = first.json()["result"]["task"]["id"]
        .as_str()
        .expect("task")
        .to_string();
    drop(s);

    let done = app.wait_terminal(Who::Anon, "conformance", &task_id).await;
    assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");
    app.shutdown().await;
}
