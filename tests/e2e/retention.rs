//! Retention (#17) on a real server: with `[retention]` configured, old tasks become
//! TaskNotFound once the job has run, while recent tasks and tasks still running stay, and
//! what went is in the export under the data dir.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde_json::json;

use crate::support::*;

#[tokio::test]
async fn old_tasks_go_and_recent_and_running_ones_stay() {
    let start: DateTime<Utc> = "2030-01-01T00:00:00Z".parse().unwrap();
    let clock = sextant_core::ManualClock::new(start);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("agents.toml"),
        exec_agent("slow", "sleep 600"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join("security.toml"),
        "[retention]\nkeep_days = 7\nexport_before_delete = true\n",
    )
    .unwrap();
    let running = sextant::start_with_clock(loopback(dir.path()), Arc::new(clock.clone()))
        .await
        .unwrap();
    let app = TestApp::running_in(running, dir, false);
    let job = app.running.retention.clone().expect("retention is on");

    let old: Vec<String> = {
        let mut ids = Vec::new();
        for i in 0..3 {
            let t = app.send_task("echo", msg(&format!("old {i}"))).await;
            assert_eq!(state(&t), "TASK_STATE_COMPLETED", "{t}");
            ids.push(t["id"].as_str().unwrap().to_string());
        }
        ids
    };
    let busy = app
        .submit_as(Who::Anon, "slow", msg("take your time"))
        .await;
    let busy = busy["id"].as_str().unwrap().to_string();
    clock.advance(chrono::Duration::days(10));
    let recent = app.send_task("echo", msg("new")).await;
    let recent = recent["id"].as_str().unwrap().to_string();
    assert_eq!(app.tasks_total().await, 5);

    let report = job.run_now().await.unwrap();
    // The loop may have run first (it looks at the clock every minute): what counts is what
    // is left.
    assert!(report.sessions == 3 || report.sessions == 0, "{report:?}");
    for id in &old {
        let r = app.rpc("echo", "GetTask", json!({ "id": id })).await;
        assert_rpc_error(&r, -32001);
    }
    let t = app.get_task_as(Who::Anon, "echo", &recent).await;
    assert_eq!(state(&t), "TASK_STATE_COMPLETED");
    let t = app.get_task_as(Who::Anon, "slow", &busy).await;
    assert!(!is_terminal(state(&t)), "{t}");
    assert_eq!(app.tasks_total().await, 2);

    // The export under the data dir holds the deleted tasks and parses line by line.
    let exports: Vec<_> = std::fs::read_dir(app.dir.path().join("retention"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(exports.len(), 1, "{exports:?}");
    let text = std::fs::read_to_string(&exports[0]).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.first().unwrap()["type"], "header");
    assert_eq!(lines.last().unwrap()["type"], "end");
    let tasks: Vec<&str> = lines
        .iter()
        .filter(|l| l["type"] == "task")
        .map(|l| l["task_id"].as_str().unwrap())
        .collect();
    assert_eq!(tasks.len(), 3);
    for id in &old {
        assert!(tasks.contains(&id.as_str()), "{id} not exported");
    }

    let r = app.rpc("slow", "CancelTask", json!({ "id": busy })).await;
    assert_eq!(state(&r["result"]), "TASK_STATE_CANCELED", "{r}");
    app.shutdown().await;
}
