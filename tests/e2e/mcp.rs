//! The agents MCP server (`/api/v1/assistant-mcp`) driven by a real MCP client (rmcp's own
//! streamable-HTTP client over reqwest): a shell-agent task waits for approval, the person's
//! assistant reads it with `get_agent_task` and answers it with `answer_agent_task`, and the
//! same task completes with the command's output.

use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HOST};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

use crate::support::*;

const OPTIONS: &str = "accept, acceptForSession, decline, cancel";

type Client = RunningService<RoleClient, ()>;

fn mcp_url(app: &TestApp) -> String {
    format!("{}/api/v1/assistant-mcp", app.url)
}

/// An MCP client session against the app, as `who`.
async fn connect(app: &TestApp, who: Who) -> Client {
    let mut config = StreamableHttpClientTransportConfig::with_uri(mcp_url(app));
    if who == Who::Owner {
        config = config.auth_header(app.token.clone());
    }
    let transport = StreamableHttpClientTransport::with_client(client(), config);
    tokio::time::timeout(STEP, ().serve(transport))
        .await
        .expect("MCP initialize timed out")
        .expect("MCP initialize")
}

/// Calls a tool; the result (a tool error is a result with `is_error`).
async fn call(client: &Client, tool: &'static str, args: Value) -> CallToolResult {
    let Value::Object(args) = args else {
        panic!("tool arguments must be an object")
    };
    tokio::time::timeout(
        STEP,
        client.call_tool(CallToolRequestParams::new(tool).with_arguments(args)),
    )
    .await
    .expect("tool call timed out")
    .unwrap_or_else(|e| panic!("{tool} failed at the protocol level: {e}"))
}

fn texts(r: &CallToolResult) -> Vec<String> {
    r.content
        .iter()
        .filter_map(|c| match c {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        })
        .collect()
}

/// The first text block (the summary, or the refusal).
fn text(r: &CallToolResult) -> String {
    texts(r).into_iter().next().unwrap_or_default()
}

fn is_error(r: &CallToolResult) -> bool {
    r.is_error == Some(true)
}

/// The JSON after the summary (also sent as structured content: both must agree).
fn body(r: &CallToolResult) -> Value {
    let blocks = texts(r);
    assert_eq!(blocks.len(), 2, "a summary then the JSON: {blocks:?}");
    let v: Value = serde_json::from_str(&blocks[1]).expect("the second block is JSON");
    assert_eq!(
        r.structured_content.as_ref(),
        Some(&v),
        "structured content"
    );
    v
}

/// The first value of `key` anywhere in `v`.
fn find<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    match v {
        Value::Object(m) => m.get(key).or_else(|| m.values().find_map(|c| find(c, key))),
        Value::Array(a) => a.iter().find_map(|c| find(c, key)),
        _ => None,
    }
}

async fn get_task(client: &Client, agent: &str, task_id: &str) -> CallToolResult {
    call(
        client,
        "get_agent_task",
        json!({ "agent_id": agent, "task_id": task_id }),
    )
    .await
}

async fn answer(
    client: &Client,
    task_id: &str,
    interaction_id: &str,
    option: &str,
    message_id: &str,
) -> CallToolResult {
    call(
        client,
        "answer_agent_task",
        json!({
            "agent_id": "shell", "task_id": task_id, "interaction_id": interaction_id,
            "answer": option, "message_id": message_id,
        }),
    )
    .await
}

/// Sends a shell command as `who`; the task, waiting for approval.
async fn waiting_shell_task(app: &TestApp, who: Who, command: &str) -> (String, String) {
    let task = app.send_task_as(who, "shell", msg(command)).await;
    assert_eq!(state(&task), "TASK_STATE_AUTH_REQUIRED", "{task}");
    let task_id = task["id"].as_str().expect("task id").to_string();
    let interaction_id = find(&task, "interactionId")
        .and_then(Value::as_str)
        .expect("the waiting task names its interaction")
        .to_string();
    (task_id, interaction_id)
}

#[tokio::test]
async fn a_shell_task_is_approved_through_the_mcp_tools() {
    let app = TestApp::spawn().await;
    let (task_id, interaction_id) =
        waiting_shell_task(&app, Who::Owner, "echo mcp-$((40 + 2))").await;
    let owner = connect(&app, Who::Owner).await;

    // Discovery: both tools, with their required arguments.
    let tools = owner.list_all_tools().await.expect("tools/list");
    let required = |name: &str| -> Vec<String> {
        let tool = tools
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("no tool {name}"));
        let mut r: Vec<String> = tool.input_schema["required"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        r.sort();
        r
    };
    assert_eq!(required("get_agent_task"), ["agent_id", "task_id"]);
    assert_eq!(
        required("answer_agent_task"),
        [
            "agent_id",
            "answer",
            "interaction_id",
            "message_id",
            "task_id"
        ]
    );

    // The pending text names the exact ids and the declared options, in order.
    let got = get_task(&owner, "shell", &task_id).await;
    assert!(!is_error(&got), "{got:?}");
    let summary = text(&got);
    assert!(summary.contains(&task_id), "{summary}");
    assert!(summary.contains("TASK_STATE_AUTH_REQUIRED"), "{summary}");
    assert!(
        summary.contains(&format!(
            "Pending interaction {interaction_id} (tool_approval)"
        )),
        "{summary}"
    );
    assert!(
        summary.contains(&format!(
            "task_id={task_id}, interaction_id={interaction_id} and one of: {OPTIONS}"
        )),
        "{summary}"
    );
    assert!(summary.contains("echo mcp-$((40 + 2))"), "{summary}");
    // ... then the task exactly as A2A GetTask returns it (with the absolute answerUrl).
    let task = body(&got);
    let a2a = app.get_task_as(Who::Owner, "shell", &task_id).await;
    assert_eq!(task, a2a, "get_agent_task renders the task as GetTask does");
    let answer_url = find(&task, "answerUrl")
        .and_then(Value::as_str)
        .expect("answerUrl");
    assert_eq!(
        answer_url,
        format!("{}/api/v1/interactions/{interaction_id}/answer", app.url)
    );

    // An option that was not declared is refused with the declared ones; nothing changes.
    let refused = answer(&owner, &task_id, &interaction_id, "approve", &uid("ans")).await;
    assert!(is_error(&refused), "{refused:?}");
    assert!(
        text(&refused).contains(&format!("choose one of: {OPTIONS}")),
        "{}",
        text(&refused)
    );
    let still = get_task(&owner, "shell", &task_id).await;
    assert!(
        text(&still).contains(&format!("Pending interaction {interaction_id}")),
        "{}",
        text(&still)
    );
    assert_eq!(state(&body(&still)), "TASK_STATE_AUTH_REQUIRED");

    // The anonymous loopback caller can neither see nor answer the owner's task.
    let anon = connect(&app, Who::Anon).await;
    let refused = answer(&anon, &task_id, &interaction_id, "accept", &uid("ans")).await;
    assert!(is_error(&refused), "{refused:?}");
    assert_eq!(text(&refused), "task not found");
    let hidden = get_task(&anon, "shell", &task_id).await;
    assert!(is_error(&hidden), "{hidden:?}");
    assert_eq!(text(&hidden), format!("Task not found: {task_id}"));

    // Accept: the tool returns the task right after the answer, without waiting for the run.
    let message_id = uid("ans");
    let accepted = answer(&owner, &task_id, &interaction_id, "accept", &message_id).await;
    assert!(!is_error(&accepted), "{accepted:?}");
    let out = body(&accepted);
    assert_eq!(out["interactionId"], json!(interaction_id));
    assert_eq!(out["answer"], "accept");
    assert_eq!(out["task"]["id"], json!(task_id));
    let after = state(&out["task"]).to_string();
    assert!(
        after == "TASK_STATE_WORKING" || is_terminal(&after),
        "right after the answer the task works (or has already ended): {after}"
    );
    assert!(
        text(&accepted).contains(&format!(
            "Answered interaction {interaction_id} with accept"
        )),
        "{}",
        text(&accepted)
    );

    // An identical retry gets the same result; the same message_id with another answer is
    // refused; so is a fresh answer to the spent interaction.
    let retry = answer(&owner, &task_id, &interaction_id, "accept", &message_id).await;
    assert!(!is_error(&retry), "{retry:?}");
    assert_eq!(body(&retry)["task"]["id"], json!(task_id));
    let changed = answer(&owner, &task_id, &interaction_id, "decline", &message_id).await;
    assert!(is_error(&changed), "{changed:?}");
    assert_eq!(text(&changed), "this interaction was already answered");
    let again = answer(&owner, &task_id, &interaction_id, "cancel", &uid("ans")).await;
    assert!(is_error(&again), "{again:?}");

    // The same task completes with the command's output.
    let done = app.wait_terminal(Who::Owner, "shell", &task_id).await;
    assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");
    let output = first_artifact_text(&done);
    assert!(output.contains("mcp-42"), "{output}");
    let read = get_task(&owner, "shell", &task_id).await;
    assert!(!is_error(&read), "{read:?}");
    assert!(
        text(&read).contains("TASK_STATE_COMPLETED"),
        "{}",
        text(&read)
    );
    assert!(
        !text(&read).contains("Pending interaction"),
        "{}",
        text(&read)
    );
    assert_eq!(first_artifact_text(&body(&read)), output);

    // Unknown tasks, and tasks named under another agent, are not found.
    for (agent, id) in [("shell", "no-such-task"), ("echo", task_id.as_str())] {
        let missing = get_task(&owner, agent, id).await;
        assert!(is_error(&missing), "{missing:?}");
        assert_eq!(text(&missing), format!("Task not found: {id}"));
    }
    let missing = answer(
        &owner,
        "no-such-task",
        &interaction_id,
        "accept",
        &uid("ans"),
    )
    .await;
    assert!(is_error(&missing), "{missing:?}");
    assert_eq!(text(&missing), "task not found");

    owner.cancel().await.expect("close the MCP client");
    anon.cancel().await.expect("close the MCP client");
    app.shutdown().await;
}

#[tokio::test]
async fn only_the_owner_answers_and_reads_every_callers_task() {
    let app = TestApp::spawn().await;
    let (task_id, interaction_id) = waiting_shell_task(&app, Who::Anon, "echo from-anon").await;
    let anon = connect(&app, Who::Anon).await;
    let owner = connect(&app, Who::Owner).await;

    // The anonymous caller reads its own task but may not answer it.
    let own = get_task(&anon, "shell", &task_id).await;
    assert!(!is_error(&own), "{own:?}");
    assert!(text(&own).contains(&interaction_id), "{}", text(&own));
    let refused = answer(&anon, &task_id, &interaction_id, "accept", &uid("ans")).await;
    assert!(is_error(&refused), "{refused:?}");
    assert_eq!(
        text(&refused),
        "only the person, or an assistant they allowed for this Agent, may answer its approvals"
    );
    assert_eq!(
        refused
            .structured_content
            .as_ref()
            .map(|v| v["error"]["code"].clone()),
        Some(json!("not_an_answerer"))
    );

    // The owner reads it too (the bridge acts for the person) and declines it.
    let seen = get_task(&owner, "shell", &task_id).await;
    assert!(!is_error(&seen), "{seen:?}");
    let declined = answer(&owner, &task_id, &interaction_id, "decline", &uid("ans")).await;
    assert!(!is_error(&declined), "{declined:?}");
    let done = app.wait_terminal(Who::Anon, "shell", &task_id).await;
    assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");
    let read = get_task(&anon, "shell", &task_id).await;
    assert!(text(&read).contains("Not run: declined"), "{}", text(&read));

    anon.cancel().await.expect("close the MCP client");
    owner.cancel().await.expect("close the MCP client");
    app.shutdown().await;
}

/// Raw streamable-HTTP requests, as `curl` would send them.
async fn post_mcp(
    app: &TestApp,
    token: Option<&str>,
    host: Option<&str>,
    body: Value,
) -> reqwest::Response {
    let mut req = app
        .client
        .post(mcp_url(app))
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2025-11-25");
    if let Some(t) = token {
        req = req.bearer_auth(t);
    }
    if let Some(h) = host {
        req = req.header(HOST, h);
    }
    send(req.body(body.to_string())).await
}

#[tokio::test]
async fn the_endpoint_is_stateless_authenticated_and_host_checked() {
    let app = TestApp::spawn().await;
    let init = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": { "name": "e2e", "version": "1" },
        },
    });
    let resp = post_mcp(&app, Some(&app.token), None, init.clone()).await;
    assert!(
        resp.headers().get("mcp-session-id").is_none(),
        "stateless: no session is created"
    );
    let v = json_body(resp, StatusCode::OK).await;
    assert_eq!(v["result"]["serverInfo"]["name"], "sextant", "{v}");

    // Without a session, any request stands alone.
    let list = json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/list" });
    let v = json_body(
        post_mcp(&app, Some(&app.token), None, list.clone()).await,
        StatusCode::OK,
    )
    .await;
    let mut names: Vec<&str> = v["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "a2a_call",
            "a2a_discover",
            "a2a_history",
            "a2a_list",
            "a2a_orchestrate",
            "answer_agent_task",
            "backfill_schedule",
            "cancel_schedule_run",
            "create_schedule",
            "delete_schedule",
            "disable_schedule",
            "enable_schedule",
            "get_agent_task",
            "get_schedule",
            "issue_agent_peers",
            "list_agent_peers",
            "list_schedule_runs",
            "list_schedules",
            "replay_schedule_run",
            "run_schedule_now",
            "update_schedule"
        ]
    );

    // A wrong token is refused before MCP sees the request.
    let resp = post_mcp(&app, Some("not-the-token"), None, list.clone()).await;
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    // A Host that is neither a loopback name nor the public URL's host is refused.
    let resp = post_mcp(&app, Some(&app.token), Some("evil.example.com"), list).await;
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);

    app.shutdown().await;
}

/// An exec agent that asks about an argument list (with a bidi override in it) or a patch,
/// never a shell `command`.
const ARGV_OR_PATCH: &str = r#"read -r line
case "$line" in
  *'"text":"argv"'*) printf '%s\n' '{"type":"interaction","kind":"tool_approval","title":"Run a program?","argv":["rm","-rf","/tmp/x y","\u202eevil"]}' ;;
  *) printf '%s\n' '{"type":"interaction","kind":"tool_approval","title":"Apply a patch?","patch":"--- a/f\n+++ b/f\n@@ -1 +1 @@\n-old\n+new\n"}' ;;
esac
read -r answer
printf '%s\n' '{"type":"final","status":"completed"}'"#;

/// An argv or patch approval shows its action (escaped text, flags, digest) in the
/// interaction's REST view and in the MCP summary, as a shell command's does.
#[tokio::test]
async fn argv_and_patch_approvals_show_their_action_everywhere() {
    let app = TestApp::spawn_with(false, Some(&exec_agent("tool", ARGV_OR_PATCH))).await;
    let owner = connect(&app, Who::Owner).await;
    for (ask, key, shown_has) in [
        ("argv", "argv", "rm -rf '/tmp/x y'"),
        ("patch", "patch", "+new"),
    ] {
        let task = app.send_task_as(Who::Owner, "tool", msg(ask)).await;
        assert_eq!(state(&task), "TASK_STATE_AUTH_REQUIRED", "{task}");
        let task_id = task["id"].as_str().expect("task id").to_string();
        let (status, _, list) = app.get_json("/api/v1/interactions", true).await;
        assert_eq!(status, StatusCode::OK, "{list}");
        let item = list["interactions"]
            .as_array()
            .and_then(|l| l.iter().find(|i| i["taskId"] == task_id.as_str()))
            .cloned()
            .unwrap_or_else(|| panic!("no interaction for {task_id}: {list}"));
        assert!(item.get("command").is_none_or(Value::is_null), "{item}");
        let action = &item["action"];
        assert!(action["exact"].get(key).is_some(), "{item}");
        let shown = action["shown"].as_str().expect("shown");
        assert!(shown.contains(shown_has), "{shown}");
        let digest = action["digest"].as_str().expect("digest");
        assert!(digest.starts_with("sha256:"), "{digest}");
        if key == "argv" {
            assert!(shown.contains("\\u{202E}evil"), "escaped: {shown}");
            assert!(
                action["flags"]
                    .as_array()
                    .is_some_and(|f| f.iter().any(|f| f["code"] == "bidi")),
                "{action}"
            );
        }

        let got = get_task(&owner, "tool", &task_id).await;
        let summary = text(&got);
        assert!(
            summary.contains(&format!("— {shown}")),
            "the summary shows the action: {summary}"
        );
        assert!(
            summary.contains(&format!("Action digest: {digest}")),
            "{summary}"
        );
        if key == "argv" {
            assert!(summary.contains("Warning: "), "{summary}");
        }
    }
    owner.cancel().await.ok();
    app.shutdown().await;
}

/// An audit record with what differs between two runs of the same operation taken out: its
/// time, its route (the surface it came through), and the ids named in `ids` (each replaced
/// by its name).
fn shape(record: &Value, ids: &[(&str, &str)]) -> Value {
    let mut r = record.clone();
    if let Some(m) = r.as_object_mut() {
        m.remove("at");
        m.remove("route");
    }
    let mut text = r.to_string();
    for (id, name) in ids {
        text = text.replace(id, name);
    }
    serde_json::from_str(&text).expect("still JSON")
}

/// The same operations done over REST and with the MCP tools (answering: a refused option,
/// then a decline; a schedule created, disabled, run now and deleted) are audited alike: one
/// record each, with the same method, outcome, Agent and reason; only the route differs.
#[tokio::test]
async fn rest_and_mcp_audit_the_same_operation_alike() {
    let app = TestApp::spawn().await;
    let owner = connect(&app, Who::Owner).await;
    let rest = |method: reqwest::Method, path: String, body: Option<Value>| {
        let app = &app;
        async move { app.request(Who::Owner, method, &path, body).await }
    };

    let (rest_task, rest_interaction) = waiting_shell_task(&app, Who::Owner, "echo rest").await;
    let (mcp_task, mcp_interaction) = waiting_shell_task(&app, Who::Owner, "echo mcp").await;
    for option in ["approve", "decline"] {
        let (status, _, v) = rest(
            reqwest::Method::POST,
            format!("/api/v1/interactions/{rest_interaction}/answer"),
            Some(json!({ "task_id": rest_task, "option": option, "message_id": uid("ans") })),
        )
        .await;
        assert_eq!(status.is_success(), option == "decline", "{option}: {v}");
        let r = answer(&owner, &mcp_task, &mcp_interaction, option, &uid("ans")).await;
        assert_eq!(is_error(&r), option != "decline", "{option}: {r:?}");
    }

    let plan = json!({ "name": "Audited", "prompt": "p", "agent_id": "echo",
                       "cron": "0 * * * *", "timezone": "UTC" });
    let (status, _, v) = rest(
        reqwest::Method::POST,
        "/api/v1/me/schedules".into(),
        Some(plan.clone()),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{v}");
    let rest_schedule = v["id"].as_str().expect("schedule id").to_string();
    let at = format!("/api/v1/me/schedules/{rest_schedule}");
    let (status, _, v) = rest(
        reqwest::Method::PATCH,
        at.clone(),
        Some(json!({ "enabled": false })),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let (status, _, v) = rest(reqwest::Method::POST, format!("{at}/run"), Some(json!({}))).await;
    assert_eq!(status, StatusCode::CREATED, "{v}");
    let rest_run = v["id"].as_str().expect("run id").to_string();
    let (status, _, v) = rest(reqwest::Method::DELETE, at, None).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{v}");

    let created = call(&owner, "create_schedule", plan).await;
    assert!(!is_error(&created), "{created:?}");
    let mcp_schedule = body(&created)["id"]
        .as_str()
        .expect("schedule id")
        .to_string();
    let id = json!({ "schedule_id": mcp_schedule });
    let off = call(&owner, "disable_schedule", id.clone()).await;
    assert!(!is_error(&off), "{off:?}");
    let now = call(&owner, "run_schedule_now", id.clone()).await;
    assert!(!is_error(&now), "{now:?}");
    let mcp_run = body(&now)["id"].as_str().expect("run id").to_string();
    let gone = call(&owner, "delete_schedule", id.clone()).await;
    assert!(!is_error(&gone), "{gone:?}");
    // Refused alike: a plan that is not there (any plan the caller cannot see).
    let (status, _, v) = rest(
        reqwest::Method::DELETE,
        format!("/api/v1/me/schedules/{rest_schedule}"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{v}");
    let again = call(&owner, "delete_schedule", id).await;
    assert!(is_error(&again), "{again:?}");

    // The records of these operations, oldest first, by the surface they came through.
    let (status, _, audit) = app.get_json("/api/v1/audit?limit=500", true).await;
    assert_eq!(status, StatusCode::OK, "{audit}");
    let methods = [
        "answer",
        "create_schedule",
        "disable_schedule",
        "run_schedule_now",
        "delete_schedule",
    ];
    let mut records: Vec<&Value> = audit["records"]
        .as_array()
        .expect("records")
        .iter()
        .filter(|r| methods.iter().any(|m| r["method"] == *m))
        .collect();
    records.reverse();
    let (over_mcp, over_rest): (Vec<&Value>, Vec<&Value>) = records
        .into_iter()
        .partition(|r| r["route"] == "/api/v1/assistant-mcp");
    assert!(
        over_rest
            .iter()
            .all(|r| r["route"]
                .as_str()
                .is_some_and(|p| p.starts_with("/api/v1/interactions/")
                    || p.starts_with("/api/v1/me/schedules"))),
        "{over_rest:?}"
    );
    let shapes = |records: &[&Value], ids: &[(&str, &str)]| -> Vec<Value> {
        records.iter().map(|r| shape(r, ids)).collect()
    };
    let rest_shapes = shapes(
        &over_rest,
        &[
            (&rest_task, "TASK"),
            (&rest_interaction, "INTERACTION"),
            (&rest_schedule, "SCHEDULE"),
            (&rest_run, "RUN"),
        ],
    );
    let mcp_shapes = shapes(
        &over_mcp,
        &[
            (&mcp_task, "TASK"),
            (&mcp_interaction, "INTERACTION"),
            (&mcp_schedule, "SCHEDULE"),
            (&mcp_run, "RUN"),
        ],
    );
    assert_eq!(rest_shapes, mcp_shapes, "REST and MCP records differ");
    let outline: Vec<(String, String, String)> = rest_shapes
        .iter()
        .map(|r| {
            let s = |k: &str| r[k].as_str().unwrap_or("").to_string();
            (s("method"), s("outcome"), s("reason"))
        })
        .collect();
    let row = |m: &str, o: &str, r: &str| (m.to_string(), o.to_string(), r.to_string());
    assert_eq!(
        outline,
        [
            row(
                "answer",
                "refused",
                &format!("that option was not declared; choose one of: {OPTIONS}")
            ),
            row("answer", "ok", "interaction INTERACTION, option decline"),
            row("create_schedule", "ok", "schedule SCHEDULE"),
            row("disable_schedule", "ok", "schedule SCHEDULE"),
            row("run_schedule_now", "ok", "run RUN"),
            row("delete_schedule", "ok", "schedule SCHEDULE"),
            row("delete_schedule", "refused", "schedule SCHEDULE: not found"),
        ]
    );
    assert_eq!(rest_shapes[0]["agent"], "shell", "{:?}", rest_shapes[0]);

    owner.cancel().await.ok();
    app.shutdown().await;
}
