//! Seeing work as it happens (issue #15): keep-alives under default client timeouts, a reply
//! timeout for blocking sends, and the same Session link in streams as in snapshots.

use std::time::Duration;

use futures::StreamExt;
use serde_json::{Value, json};

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

/// The texts of `parts`, joined.
fn texts(parts: &Value) -> String {
    parts
        .as_array()
        .map(|a| a.iter().filter_map(|p| p["text"].as_str()).collect())
        .unwrap_or_default()
}

/// What a client that prefers the status message to the artifacts reads as the reply
/// (strands-agents' A2A client does): the final status message's text if it has any, else
/// the artifacts' text.
fn read_as_strands(status: &Value, artifacts: &Value) -> String {
    let said = texts(&status["message"]["parts"]);
    if !said.is_empty() {
        return said;
    }
    artifacts
        .as_array()
        .map(|a| a.iter().map(|a| texts(&a["parts"])).collect())
        .unwrap_or_default()
}

/// A stream's artifacts as a client accumulates them (chunks with `append` extend the artifact
/// with that id), and the final status.
fn accumulate(frames: &[Frame]) -> (Value, Value) {
    let mut artifacts: Vec<Value> = Vec::new();
    let mut status = Value::Null;
    for f in frames {
        let r = &f.json()["result"];
        if let Some(t) = r.get("task") {
            artifacts = t["artifacts"].as_array().cloned().unwrap_or_default();
            status = t["status"].clone();
        } else if let Some(u) = r.get("artifactUpdate") {
            let a = &u["artifact"];
            let same = artifacts
                .iter_mut()
                .find(|x| x["artifactId"] == a["artifactId"]);
            match (u["append"].as_bool() == Some(true), same) {
                (true, Some(x)) => {
                    let more = a["parts"].as_array().cloned().unwrap_or_default();
                    x["parts"].as_array_mut().expect("parts").extend(more);
                }
                _ => artifacts.push(a.clone()),
            }
        } else if let Some(u) = r.get("statusUpdate") {
            status = u["status"].clone();
        }
    }
    (Value::Array(artifacts), status)
}

/// What other agents get back (issue #35): the reply, not the Session link. The link is in
/// `metadata.sessionUrl` of the task and of every status update; no text carries it unless
/// the Agent asks for it (`session_link`), so a client that reads the final status message
/// first (strands-agents) gets the reply, blocking and streaming.
#[tokio::test]
async fn a_client_that_reads_the_status_message_first_gets_the_reply() {
    let app = TestApp::spawn().await;
    let task = app.send_task("echo", msg("the reply itself")).await;
    assert_eq!(
        read_as_strands(&task["status"], &task["artifacts"]),
        "the reply itself",
        "{task}"
    );
    let url = task["metadata"]["sessionUrl"]
        .as_str()
        .expect("a session URL")
        .to_string();
    assert!(url.ends_with(&format!(
        "/sessions/{}",
        task["metadata"]["sessionId"].as_str().unwrap()
    )));

    let frames = app
        .stream_as(
            Who::Anon,
            "echo",
            "SendStreamingMessage",
            json!({ "message": msg("streamed reply") }),
            &[],
        )
        .await
        .rest()
        .await;
    let (artifacts, status) = accumulate(&frames);
    assert_eq!(status["state"], "TASK_STATE_COMPLETED", "{status}");
    assert_eq!(
        read_as_strands(&status, &artifacts),
        "streamed reply",
        "{status} {artifacts}"
    );
    let last = frames.last().expect("frames").json();
    let update = &last["result"]["statusUpdate"];
    let task = app
        .get_task_as(Who::Anon, "echo", update["taskId"].as_str().unwrap())
        .await;
    assert_eq!(
        read_as_strands(&task["status"], &task["artifacts"]),
        "streamed reply"
    );
    let url = task["metadata"]["sessionUrl"]
        .as_str()
        .expect("a session URL");
    // Every status update of the stream names the Session, in its metadata only.
    for f in &frames {
        let v = f.json();
        if let Some(u) = v["result"].get("statusUpdate") {
            assert_eq!(u["metadata"]["sessionUrl"], url, "{v}");
        }
        assert!(
            !f.data.contains("Session: "),
            "no Session line in text: {v}"
        );
    }
    app.shutdown().await;
}

const LINKED: &str = r#"
[[agents]]
id = "linked"
name = "Linked"
description = "e2e: an echo that also puts the Session link into text"
engine = { kind = "echo" }
session_link = true
"#;

/// An Agent that asks for the link in text (`session_link = true`) ends a completed text
/// result with `Session: <url>`, in a stream where a snapshot has it: a chunk appended to the
/// text artifact just before the final status update. Never a status message of its own.
#[tokio::test]
async fn an_agent_that_links_in_text_ends_its_result_with_the_link_in_streams_too() {
    let app = TestApp::spawn_with(false, Some(LINKED)).await;
    let task = app.send_task("linked", msg("hello")).await;
    let url = task["metadata"]["sessionUrl"]
        .as_str()
        .expect("a session URL")
        .to_string();
    assert_eq!(
        task["artifacts"][0]["parts"][1]["text"],
        format!("\n\nSession: {url}"),
        "{task}"
    );
    assert!(task["status"].get("message").is_none(), "{task}");

    let frames = app
        .stream_as(
            Who::Anon,
            "linked",
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
    assert!(
        update["status"].get("message").is_none(),
        "no link-only message: {last}"
    );
    let task = app
        .get_task_as(Who::Anon, "linked", update["taskId"].as_str().unwrap())
        .await;
    let url = task["metadata"]["sessionUrl"]
        .as_str()
        .expect("a session URL");
    assert_eq!(update["metadata"]["sessionUrl"], url, "{last}");
    let chunk = frames[frames.len() - 2].json();
    let chunk = &chunk["result"]["artifactUpdate"];
    assert_eq!(chunk["append"], true, "{chunk}");
    assert_eq!(
        chunk["artifact"]["parts"][0]["text"],
        format!("\n\nSession: {url}")
    );
    let (artifacts, _) = accumulate(&frames);
    assert_eq!(
        artifacts, task["artifacts"],
        "the stream adds up to the snapshot"
    );
    app.shutdown().await;
}

#[tokio::test]
async fn pausing_every_schedule_is_stored_and_survives_a_restart() {
    use reqwest::Method;
    let app = TestApp::spawn().await;
    let path = "/api/v1/me/schedules/pause";
    let (status, _, v) = app.get_json(path, true).await;
    assert_eq!((status.as_u16(), &v["paused"]), (200, &json!(false)), "{v}");
    let (status, _, _) = app
        .request(
            Who::Anon,
            Method::PUT,
            path,
            Some(json!({ "paused": true })),
        )
        .await;
    assert!(status == 401 || status == 403, "{status}");
    let (status, _, bad) = app
        .request(
            Who::Owner,
            Method::PUT,
            path,
            Some(json!({ "paused": "yes" })),
        )
        .await;
    assert_eq!(status, 422, "{bad}");
    assert_eq!(bad["error"]["field"], "paused", "{bad}");
    let (status, _, v) = app
        .request(
            Who::Owner,
            Method::PUT,
            path,
            Some(json!({ "paused": true })),
        )
        .await;
    assert_eq!((status.as_u16(), &v["paused"]), (200, &json!(true)), "{v}");
    let app = app.restart().await;
    let (_, _, v) = app.get_json(path, true).await;
    assert_eq!(v["paused"], true, "a restart keeps the pause: {v}");
    app.shutdown().await;
}

#[tokio::test]
async fn run_now_with_an_edited_prompt_leaves_the_plan_unchanged_and_says_so() {
    use reqwest::Method;
    let app = TestApp::spawn().await;
    let (status, _, plan) = app
        .request(
            Who::Owner,
            Method::POST,
            "/api/v1/me/schedules",
            Some(
                json!({ "name": "brief", "prompt": "the plan's prompt", "cron": "0 9 * * *",
                         "timezone": "Europe/Berlin", "agent_id": "echo" }),
            ),
        )
        .await;
    assert_eq!(status, 201, "{plan}");
    let id = plan["id"].as_str().unwrap();
    let run_path = format!("/api/v1/me/schedules/{id}/run");
    let (status, _, bad) = app
        .request(
            Who::Owner,
            Method::POST,
            &run_path,
            Some(json!({ "prompt": 5 })),
        )
        .await;
    assert_eq!(status, 422, "{bad}");
    assert_eq!(bad["error"]["field"], "prompt");
    let (status, _, run) = app
        .request(
            Who::Owner,
            Method::POST,
            &run_path,
            Some(json!({ "prompt": "just this once" })),
        )
        .await;
    assert_eq!(status, 201, "{run}");
    assert_eq!(run["prompt"], "just this once", "{run}");
    assert!(
        run["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("edited prompt"),
        "{run}"
    );
    let (_, _, after) = app
        .get_json(&format!("/api/v1/me/schedules/{id}"), true)
        .await;
    assert_eq!(after["prompt"], "the plan's prompt", "{after}");
    // Without a body, run now sends the plan's own prompt, with no note.
    let (status, _, plain) = app.request(Who::Owner, Method::POST, &run_path, None).await;
    assert_eq!(status, 201, "{plain}");
    assert_eq!(plain["prompt"], "the plan's prompt");
    assert!(plain["reason"].is_null(), "{plain}");
    app.shutdown().await;
}
