//! Restarts: the journal is the authority (DESIGN rule 1). Everything accepted survives a
//! shutdown, and inputs accepted but not run are delivered at the next start.

use serde_json::{Value, json};

use crate::support::*;

/// A task as read through GetTask, with the server's base URL (its port changes at restart)
/// replaced by a placeholder so two runs compare equal.
fn portable(task: &Value, base: &str) -> Value {
    serde_json::from_str(&task.to_string().replace(base, "{base}")).expect("JSON")
}

#[tokio::test]
async fn tasks_survive_a_restart_unchanged_and_the_journal_rebuilds_clean() {
    let toml = exec_agent("slow", "read -r line; sleep 2; echo slow-done");
    let app = TestApp::spawn_with(true, Some(&toml)).await;

    let mut kept: Vec<(Who, &str, Value)> = Vec::new();
    kept.push((
        Who::Anon,
        "echo",
        app.send_task_as(Who::Anon, "echo", msg("one")).await,
    ));
    kept.push((
        Who::Owner,
        "echo",
        app.send_task_as(Who::Owner, "echo", msg("two")).await,
    ));
    let waiting = app
        .send_task(
            "conformance",
            msg_with_id(&uid("tck-input-required"), "wait"),
        )
        .await;
    assert_eq!(state(&waiting), "TASK_STATE_INPUT_REQUIRED");
    kept.push((Who::Anon, "conformance", waiting.clone()));
    kept.push((
        Who::Anon,
        "conformance",
        app.send_task("conformance", msg_with_id(&uid("tck-artifact-data"), "d"))
            .await,
    ));
    let slow = app.submit_as(Who::Anon, "slow", msg("take a second")).await;
    let slow_id = slow["id"].as_str().expect("id").to_string();
    assert!(
        !is_terminal(state(&slow)),
        "returned before the slow turn ended: {slow}"
    );

    // Read every settled task back before the restart.
    let mut before = Vec::new();
    for (who, agent, t) in &kept {
        let id = t["id"].as_str().expect("id");
        let read = app.get_task_as(*who, agent, id).await;
        before.push(portable(&read, &app.url));
    }
    let total = app.tasks_total().await;
    assert_eq!(total, 5);

    let app = app.restart().await;

    assert_eq!(app.tasks_total().await, total);
    for ((who, agent, t), was) in kept.iter().zip(&before) {
        let id = t["id"].as_str().expect("id");
        let now = app.get_task_as(*who, agent, id).await;
        assert_eq!(
            &portable(&now, &app.url),
            was,
            "task {id} changed across the restart"
        );
    }
    // Caller scoping survives too.
    let r = app
        .rpc_as(
            Who::Owner,
            "echo",
            "GetTask",
            json!({ "id": kept[0].2["id"] }),
        )
        .await;
    assert_rpc_error(&r, -32001);

    // The slow task was running at shutdown: drained (or re-delivered), it completed.
    let slow = app.wait_terminal(Who::Anon, "slow", &slow_id).await;
    assert_eq!(state(&slow), "TASK_STATE_COMPLETED", "{slow}");
    assert!(
        first_artifact_text(&slow).starts_with("slow-done"),
        "{slow}"
    );

    // The task that waits for input still takes its follow-up.
    let follow = with(
        msg_with_id(&uid("tck-complete-task"), "answer"),
        json!({ "taskId": waiting["id"] }),
    );
    let done = app.send_task("conformance", follow).await;
    assert_eq!(done["id"], waiting["id"]);
    assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");

    let drift = app
        .running
        .runtime
        .journal()
        .rebuild_check()
        .await
        .expect("rebuild check runs");
    assert!(
        drift.is_empty(),
        "the task cache differs from the journal: {drift:?}"
    );
    app.shutdown().await;
}

#[tokio::test]
async fn an_input_accepted_but_not_started_is_delivered_after_restart() {
    // The first turn blocks until the test creates the gate file.
    let toml = exec_agent(
        "gated",
        "read -r line; while [ ! -f \"{dir}/gate\" ]; do sleep 0.05; done; echo released",
    );
    let app = TestApp::spawn_with(false, Some(&toml)).await;
    let gate = app.dir.path().join("gate");

    let first = app.submit_as(Who::Anon, "gated", msg("first")).await;
    let first_id = first["id"].as_str().expect("id").to_string();
    // Wait until its turn runs (the engine is then blocked on the gate).
    wait_working(&app, "gated", &first_id).await;

    // A second input in the same conversation queues behind the running turn.
    let second_msg = with(msg("second"), json!({ "contextId": first["contextId"] }));
    let second = app.submit_as(Who::Anon, "gated", second_msg.clone()).await;
    let second_id = second["id"].as_str().expect("id").to_string();
    assert_eq!(
        second["metadata"]["sessionId"],
        first["metadata"]["sessionId"]
    );
    let queued = app.get_task_as(Who::Anon, "gated", &second_id).await;
    assert_eq!(state(&queued), "TASK_STATE_SUBMITTED", "{queued}");

    // Start the shutdown (intake stops on its first poll), then let the running turn end: the
    // drain finishes it, and the queued input is left for the next start.
    let TestApp {
        running,
        dir,
        conformance,
        ..
    } = app;
    let mut shutdown = Box::pin(running.shutdown());
    assert!(
        futures::poll!(shutdown.as_mut()).is_pending(),
        "shutdown waits for the running turn"
    );
    std::fs::write(&gate, b"open").expect("open the gate");
    tokio::time::timeout(STEP, shutdown)
        .await
        .expect("shutdown within the safety timeout")
        .expect("clean shutdown");

    let app = TestApp::start_in(dir, conformance).await;
    let first = app.get_task_as(Who::Anon, "gated", &first_id).await;
    assert_eq!(
        state(&first),
        "TASK_STATE_COMPLETED",
        "drained at shutdown: {first}"
    );

    let second = app.wait_terminal(Who::Anon, "gated", &second_id).await;
    assert_eq!(state(&second), "TASK_STATE_COMPLETED", "{second}");
    assert!(
        first_artifact_text(&second).starts_with("released"),
        "{second}"
    );
    assert_eq!(
        user_message_ids(&second),
        [second_msg["messageId"].as_str().expect("id")]
    );

    let drift = app
        .running
        .runtime
        .journal()
        .rebuild_check()
        .await
        .expect("rebuild check runs");
    assert!(drift.is_empty(), "{drift:?}");
    app.shutdown().await;
}

/// Returns once the task is working (its engine then blocks on a gate file).
async fn wait_working(app: &TestApp, agent: &str, task_id: &str) {
    let mut s = app
        .stream_as(
            Who::Anon,
            agent,
            "SubscribeToTask",
            json!({ "id": task_id }),
            &[],
        )
        .await;
    loop {
        let r = s.next_frame().await.expect("open until terminal").json()["result"].clone();
        let st = r["task"]["status"]["state"]
            .as_str()
            .or_else(|| r["statusUpdate"]["status"]["state"].as_str());
        if st == Some("TASK_STATE_WORKING") {
            return;
        }
        assert!(
            !st.is_some_and(is_terminal),
            "finished before the gate opened: {r}"
        );
    }
}

#[tokio::test]
async fn a_second_sextant_on_the_data_dir_is_refused_and_touches_no_task() {
    // Every turn counts itself in a file, then blocks until the test creates the gate file.
    let toml = exec_agent(
        "gated",
        "read -r line; echo turn >> \"{dir}/turns\"; while [ ! -f \"{dir}/gate\" ]; do sleep 0.05; done; echo released",
    );
    let app = TestApp::spawn_with(false, Some(&toml)).await;
    let first = app.submit_as(Who::Anon, "gated", msg("first")).await;
    let first_id = first["id"].as_str().expect("id").to_string();
    wait_working(&app, "gated", &first_id).await;
    let second_msg = with(msg("second"), json!({ "contextId": first["contextId"] }));
    let second = app.submit_as(Who::Anon, "gated", second_msg).await;
    let second_id = second["id"].as_str().expect("id").to_string();

    // A second start would take the running turn for a crashed one (and fail it) and the
    // queued input for a leftover (and run it again). It stops before reading the journal.
    let refused = sextant::start(loopback(app.dir.path()))
        .await
        .err()
        .expect("a second Sextant on the same data dir is refused");
    let refused = format!("{refused:#}");
    assert!(
        refused.contains("another Sextant is already running")
            && refused.contains(&format!("listening on {}", app.url)),
        "{refused}"
    );

    std::fs::write(app.dir.path().join("gate"), b"open").expect("open the gate");
    for id in [&first_id, &second_id] {
        let task = app.wait_terminal(Who::Anon, "gated", id).await;
        assert_eq!(state(&task), "TASK_STATE_COMPLETED", "{task}");
    }
    let turns = std::fs::read_to_string(app.dir.path().join("turns")).expect("turns file");
    assert_eq!(turns.lines().count(), 2, "one turn per input: {turns:?}");

    // The lock goes with the first Sextant: the data dir starts again.
    let app = app.restart().await;
    app.shutdown().await;
}

#[tokio::test]
async fn a_start_that_fails_delivers_nothing_and_marks_nothing() {
    // Every turn counts itself in a file, then blocks until the test creates the gate file.
    let toml = exec_agent(
        "gated",
        "read -r line; echo turn >> \"{dir}/turns\"; while [ ! -f \"{dir}/gate\" ]; do sleep 0.05; done; echo released",
    );
    let app = TestApp::spawn_with(false, Some(&toml)).await;
    let gate = app.dir.path().join("gate");
    let turns = app.dir.path().join("turns");
    let first = app.submit_as(Who::Anon, "gated", msg("first")).await;
    let first_id = first["id"].as_str().expect("id").to_string();
    wait_working(&app, "gated", &first_id).await;
    let second_msg = with(msg("second"), json!({ "contextId": first["contextId"] }));
    let second = app.submit_as(Who::Anon, "gated", second_msg).await;
    let second_id = second["id"].as_str().expect("id").to_string();

    // Stop with the second input still queued (as in the test above), and close the gate again.
    let TestApp {
        running,
        dir,
        conformance,
        ..
    } = app;
    let mut shutdown = Box::pin(running.shutdown());
    assert!(futures::poll!(shutdown.as_mut()).is_pending());
    std::fs::write(&gate, b"open").expect("open the gate");
    tokio::time::timeout(STEP, shutdown)
        .await
        .expect("shutdown within the safety timeout")
        .expect("clean shutdown");
    std::fs::remove_file(&gate).expect("close the gate");
    let count = |p: &std::path::Path| {
        std::fs::read_to_string(p)
            .expect("turns file")
            .lines()
            .count()
    };
    assert_eq!(count(&turns), 1);

    // Three starts that fail: the port is taken, a bind beyond loopback without any credential
    // for remote callers, and a JWT key that cannot be read. None of them may run recovery: it
    // would start the queued turn in a process that then exits, and the next start would fail
    // that turn ("send again") instead of delivering it.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a port");
    let port = taken.local_addr().expect("addr").port();
    let e = start_after_stop(sextant::Config {
        port,
        ..loopback(dir.path())
    })
    .await
    .err()
    .expect("the port is in use");
    assert!(format!("{e:#}").contains("cannot listen on"), "{e:#}");
    drop(taken);
    let e = start_after_stop(config(dir.path(), "0.0.0.0", None))
        .await
        .err()
        .expect("no credential for remote callers");
    assert!(format!("{e:#}").contains("refusing to listen"), "{e:#}");
    let security = dir.path().join("security.toml");
    std::fs::write(
        &security,
        "[jwt]\nissuer = \"https://idp.example\"\naudience = \"sextant\"\nalgorithm = \"HS256\"\n\
         secret_file = \"no-such.secret\"\n",
    )
    .expect("write security.toml");
    let e = start_after_stop(loopback(dir.path()))
        .await
        .err()
        .expect("the JWT secret cannot be read");
    assert!(format!("{e:#}").contains("no-such.secret"), "{e:#}");
    std::fs::remove_file(&security).expect("remove security.toml");

    // The start that serves delivers the queued input, once.
    let app = TestApp::start_in(dir, conformance).await;
    let queued = app.get_task_as(Who::Anon, "gated", &second_id).await;
    assert!(
        !is_terminal(state(&queued)),
        "the queued input was taken for an interrupted turn: {queued}"
    );
    wait_working(&app, "gated", &second_id).await;
    std::fs::write(&gate, b"open").expect("open the gate");
    let task = app.wait_terminal(Who::Anon, "gated", &second_id).await;
    assert_eq!(state(&task), "TASK_STATE_COMPLETED", "{task}");
    assert_eq!(
        count(&turns),
        2,
        "one turn per input, none in a failed start"
    );
    app.shutdown().await;
}
