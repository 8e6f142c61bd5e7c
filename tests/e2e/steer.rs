//! Seeing work as it happens (issue #15): keep-alives under default client timeouts, a reply
//! timeout for blocking sends, and the same Session link in streams as in snapshots.

use std::time::Duration;

use futures::StreamExt;
use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn an_idle_stream_sends_keep_alives_within_four_seconds() {
    let app = TestApp::spawn().await;
    // A task that waits for the person: its stream has nothing to say for a long time.
    let task = app.submit_as(Who::Anon, "shell", msg("true")).await;
    let resp = app
        .post_rpc(
            Who::Anon,
            "shell",
            &[],
            json!({ "jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask",
                    "params": { "id": task["id"] } }),
        )
        .await;
    let mut body = resp.bytes_stream();
    let started = tokio::time::Instant::now();
    let mut seen = String::new();
    // The first keep-alive comment comes in under the Python SDK's default 5 s read timeout.
    let got = tokio::time::timeout(Duration::from_secs(5), async {
        while let Some(chunk) = body.next().await {
            seen.push_str(&String::from_utf8_lossy(&chunk.unwrap()));
            if seen.lines().any(|l| l.starts_with(':')) {
                return started.elapsed();
            }
        }
        panic!("the stream ended: {seen}");
    })
    .await
    .expect("a keep-alive within 5 s");
    assert!(got <= Duration::from_millis(4500), "{got:?}");
    app.shutdown().await;
}

#[tokio::test]
async fn a_blocking_send_answers_at_the_reply_timeout_and_the_task_runs_on() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().display().to_string();
    let script = format!(
        "read -r turn; echo waiting; while [ ! -e {d}/go ]; do sleep 0.05; done; echo done"
    );
    std::fs::write(dir.path().join("agents.toml"), exec_agent("slow", &script)).unwrap();
    let mut config = loopback(dir.path());
    config.turns.reply_timeout = Some(Duration::from_millis(700));
    let running = sextant::start(config).await.expect("sextant starts");
    let app = TestApp::running_in(running, dir, false);
    let task = app.send_task("slow", msg("go on")).await;
    assert_eq!(state(&task), "TASK_STATE_WORKING", "{task}");
    // The task runs on after the caller stopped waiting, and ends as its command does.
    std::fs::write(app.dir.path().join("go"), "").unwrap();
    let done = app
        .wait_terminal(Who::Anon, "slow", task["id"].as_str().unwrap())
        .await;
    assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");
    assert!(first_artifact_text(&done).contains("done"), "{done}");
    app.shutdown().await;
}

#[tokio::test]
async fn a_stream_carries_the_same_session_link_as_a_snapshot() {
    let app = TestApp::spawn().await;
    let frames = app
        .stream_as(
            Who::Anon,
            "echo",
            "SendStreamingMessage",
            json!({ "message": msg("hello") }),
            &[],
        )
        .await
        .rest()
        .await;
    let last = frames.last().expect("frames").json();
    let update = &last["result"]["statusUpdate"];
    assert_eq!(update["status"]["state"], "TASK_STATE_COMPLETED", "{last}");
    let task = app
        .get_task_as(Who::Anon, "echo", update["taskId"].as_str().unwrap())
        .await;
    let url = task["metadata"]["sessionUrl"]
        .as_str()
        .expect("a session URL");
    assert_eq!(update["metadata"]["sessionUrl"], url, "{last}");
    let said = update["status"]["message"]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["text"].as_str())
        .collect::<String>();
    assert!(said.contains(&format!("Session: {url}")), "{last}");
    // Every status update of the stream names the Session.
    for f in &frames {
        let v = f.json();
        if let Some(u) = v["result"].get("statusUpdate") {
            assert_eq!(u["metadata"]["sessionUrl"], url, "{v}");
        }
    }
    app.shutdown().await;
}
