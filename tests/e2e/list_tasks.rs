//! ListTasks: filters, pagination, and what each listed task includes.

use std::collections::HashSet;

use serde_json::{Value, json};

use crate::support::*;

const AGENT: &str = "conformance";

/// Seven tasks, created one after another: three with artifacts in context A, two waiting
/// for input in context B, two with artifacts in contexts of their own.
struct Fixture {
    app: TestApp,
    ctx_a: String,
    ctx_b: String,
    /// Task ids in creation order.
    created: Vec<String>,
    in_a: Vec<String>,
    in_b: Vec<String>,
}

async fn fixture() -> Fixture {
    let app = TestApp::spawn_with(true, None).await;
    let ctx_a = uid("ctx-a");
    let ctx_b = uid("ctx-b");
    let (mut created, mut in_a, mut in_b) = (Vec::new(), Vec::new(), Vec::new());
    let plan = [
        ("tck-artifact-text", Some(&ctx_a)),
        ("tck-input-required", Some(&ctx_b)),
        ("tck-artifact-text", None),
        ("tck-artifact-text", Some(&ctx_a)),
        ("tck-input-required", Some(&ctx_b)),
        ("tck-artifact-text", None),
        ("tck-artifact-text", Some(&ctx_a)),
    ];
    for (behaviour, ctx) in plan {
        let mut m = msg_with_id(&uid(behaviour), "list me");
        if let Some(c) = ctx {
            m = with(m, json!({ "contextId": c }));
        }
        let t = app.send_task(AGENT, m).await;
        let id = t["id"].as_str().expect("id").to_string();
        match ctx {
            Some(c) if *c == ctx_a => in_a.push(id.clone()),
            Some(_) => in_b.push(id.clone()),
            None => {}
        }
        created.push(id);
    }
    Fixture {
        app,
        ctx_a,
        ctx_b,
        created,
        in_a,
        in_b,
    }
}

async fn list(app: &TestApp, params: Value) -> Value {
    let r = app.rpc(AGENT, "ListTasks", params).await;
    assert!(r.get("error").is_none(), "ListTasks failed: {r}");
    r["result"].clone()
}

fn ids(result: &Value) -> Vec<String> {
    result["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| t["id"].as_str().expect("id").to_string())
        .collect()
}

fn set(v: &[String]) -> HashSet<String> {
    v.iter().cloned().collect()
}

#[tokio::test]
async fn list_tasks_filters_by_context_id_and_status() {
    let f = fixture().await;
    let r = list(&f.app, json!({ "contextId": f.ctx_a })).await;
    assert_eq!(set(&ids(&r)), set(&f.in_a), "{r}");
    assert_eq!(r["totalSize"], 3);

    let r = list(&f.app, json!({ "status": "TASK_STATE_INPUT_REQUIRED" })).await;
    assert_eq!(set(&ids(&r)), set(&f.in_b), "{r}");
    assert_eq!(r["totalSize"], 2);
    for t in r["tasks"].as_array().expect("tasks") {
        assert_eq!(state(t), "TASK_STATE_INPUT_REQUIRED");
        assert_eq!(t["contextId"], f.ctx_b);
    }

    let r = list(&f.app, json!({ "status": "TASK_STATE_COMPLETED" })).await;
    assert_eq!(r["totalSize"], 5, "{r}");

    let r = list(
        &f.app,
        json!({ "contextId": f.ctx_a, "status": "TASK_STATE_INPUT_REQUIRED" }),
    )
    .await;
    assert_eq!(ids(&r), Vec::<String>::new());
    assert_eq!(r["totalSize"], 0);
    assert_eq!(r["nextPageToken"], "");
    f.app.shutdown().await;
}

#[tokio::test]
async fn list_tasks_pages_visit_every_task_once_newest_first() {
    let f = fixture().await;
    let mut seen: Vec<String> = Vec::new();
    let mut token = String::new();
    let mut pages = 0;
    loop {
        let mut params = json!({ "pageSize": 2 });
        if !token.is_empty() {
            params["pageToken"] = json!(token);
        }
        let r = list(&f.app, params).await;
        pages += 1;
        assert!(pages <= 4, "7 tasks in pages of 2 is 4 pages");
        assert_eq!(r["totalSize"], 7, "{r}");
        assert_eq!(r["pageSize"], 2, "{r}");
        let page = ids(&r);
        assert!(!page.is_empty() && page.len() <= 2, "{r}");
        seen.extend(page);
        token = r["nextPageToken"]
            .as_str()
            .expect("nextPageToken")
            .to_string();
        if token.is_empty() {
            break;
        }
    }
    assert_eq!(pages, 4);
    let mut newest_first = f.created.clone();
    newest_first.reverse();
    assert_eq!(seen, newest_first, "every task once, newest first");
    f.app.shutdown().await;
}

#[tokio::test]
async fn list_tasks_includes_artifacts_and_history_only_as_asked() {
    let f = fixture().await;
    let r = list(&f.app, json!({})).await;
    assert_eq!(ids(&r).len(), 7);
    for t in r["tasks"].as_array().expect("tasks") {
        assert!(
            t.get("artifacts").is_none(),
            "artifacts only when asked: {t}"
        );
        assert!(
            t["history"].as_array().is_some_and(|h| !h.is_empty()),
            "{t}"
        );
        assert!(t["metadata"]["sessionId"].is_string(), "{t}");
    }

    let r = list(
        &f.app,
        json!({ "includeArtifacts": true, "contextId": f.ctx_a }),
    )
    .await;
    for t in r["tasks"].as_array().expect("tasks") {
        assert_eq!(
            first_artifact_text(t),
            "Generated text content",
            "artifacts when asked: {t}"
        );
    }

    let r = list(&f.app, json!({ "historyLength": 0 })).await;
    for t in r["tasks"].as_array().expect("tasks") {
        assert!(
            t.get("history").is_none(),
            "historyLength 0 means no history: {t}"
        );
    }
    let r = list(&f.app, json!({ "historyLength": 1 })).await;
    for t in r["tasks"].as_array().expect("tasks") {
        assert_eq!(t["history"].as_array().map(Vec::len), Some(1), "{t}");
    }
    f.app.shutdown().await;
}

#[tokio::test]
async fn list_tasks_accepts_snake_case_params() {
    let f = fixture().await;
    let r = list(
        &f.app,
        json!({ "page_size": 1, "context_id": f.ctx_b, "include_artifacts": true,
                "history_length": 0 }),
    )
    .await;
    let page = ids(&r);
    assert_eq!(page.len(), 1, "page_size is honoured: {r}");
    assert!(f.in_b.contains(&page[0]), "context_id is honoured: {r}");
    assert_eq!(r["totalSize"], 2);
    assert_ne!(r["nextPageToken"], "");
    assert!(r["tasks"][0].get("history").is_none());

    let r = list(
        &f.app,
        json!({ "page_size": 1, "context_id": f.ctx_b, "page_token": r["nextPageToken"] }),
    )
    .await;
    let second = ids(&r);
    assert_eq!(second.len(), 1);
    assert_ne!(second, page, "page_token moves on");
    assert_eq!(r["nextPageToken"], "");
    f.app.shutdown().await;
}

/// Every page of ListTasks as the anonymous caller with `params`; each page's raw byte length
/// and its tasks.
async fn all_pages(app: &TestApp, params: Value) -> Vec<(usize, Vec<Value>)> {
    let mut pages = Vec::new();
    let mut token = String::new();
    loop {
        let mut p = params.clone();
        p["pageToken"] = json!(token);
        let resp = app
            .post_rpc(
                Who::Anon,
                "echo",
                &[],
                json!({ "jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": p }),
            )
            .await;
        let bytes = resp.bytes().await.expect("body");
        let body: Value = serde_json::from_slice(&bytes).expect("JSON");
        let r = &body["result"];
        let tasks = r["tasks"]
            .as_array()
            .cloned()
            .unwrap_or_else(|| panic!("{body}"));
        pages.push((bytes.len(), tasks));
        token = r["nextPageToken"].as_str().unwrap_or("").to_string();
        if token.is_empty() {
            return pages;
        }
        assert!(pages.len() < 50, "pagination ends");
    }
}

#[tokio::test]
async fn a_list_over_large_tasks_stays_within_its_byte_budget() {
    let app = TestApp::spawn().await;
    // Six echo tasks of 600 KiB each (history and artifact: 1.2 MB of JSON each), and twelve
    // of 100 KiB. Unbudgeted, one page of all of them was about 10 MB.
    let mut large = HashSet::new();
    for i in 0..6 {
        let t = app
            .send_task("echo", msg(&format!("{i}{}", "L".repeat(600 * 1024))))
            .await;
        large.insert(t["id"].as_str().expect("id").to_string());
    }
    let mut medium = HashSet::new();
    for i in 0..12 {
        let t = app
            .send_task("echo", msg(&format!("{i}{}", "m".repeat(100 * 1024))))
            .await;
        medium.insert(t["id"].as_str().expect("id").to_string());
    }
    const PAGE: usize = 1024 * 1024;
    // The envelope and the page fields on top of the tasks' budget.
    const SLACK: usize = 4 * 1024;
    for params in [json!({}), json!({ "includeArtifacts": true })] {
        let pages = all_pages(&app, params.clone()).await;
        let sizes: Vec<usize> = pages.iter().map(|p| p.0).collect();
        assert!(
            pages.len() > 1,
            "the page was cut early: {params} {sizes:?}"
        );
        let mut seen = HashSet::new();
        for (bytes, tasks) in &pages {
            assert!(*bytes <= PAGE + SLACK, "a page of {bytes} bytes ({params})");
            assert!(!tasks.is_empty(), "no empty page");
            for t in tasks {
                let id = t["id"].as_str().expect("id").to_string();
                assert!(seen.insert(id.clone()), "{id} listed twice");
                if large.contains(&id) {
                    assert!(t["metadata"]["truncated"].is_string(), "{params}");
                    assert!(t.get("artifacts").is_none() && t.get("history").is_none());
                } else {
                    assert!(t["metadata"].get("truncated").is_none());
                    assert!(t["history"].as_array().is_some_and(|h| !h.is_empty()));
                    assert_eq!(
                        t.get("artifacts").is_some(),
                        params.get("includeArtifacts").is_some(),
                        "{params}"
                    );
                }
            }
        }
        let all: HashSet<String> = large.union(&medium).cloned().collect();
        assert_eq!(seen, all, "every task is listed once across the pages");
    }
    // GetTask still returns a large task whole.
    let id = large.iter().next().expect("a large task");
    let whole = app.get_task_as(Who::Anon, "echo", id).await;
    assert!(first_artifact_text(&whole).len() > 600 * 1024);
    app.shutdown().await;
}
