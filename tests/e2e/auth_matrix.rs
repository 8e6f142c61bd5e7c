//! The auth matrix: every principal kind × every A2A method and REST route × own / another's
//! resources → the expected outcome, with zero leaks; and revocation taking effect on the next
//! call (tokens, the deny list, JWT-named callers, open streams). The A2A matrix runs over
//! each binding: JSON-RPC and HTTP+JSON in full, gRPC for send, get, subscribe, cancel, list
//! and the extended card (assistant tokens are not served there).
//!
//! Principals: the owner (data-dir token), the anonymous loopback caller, two peers (per-peer
//! tokens), an assistant (capability token for one Agent, on its own routes), a service (a JWT
//! without `act`) and two delegated agents acting for the same user (JWTs with `act`).

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::secure::{Binding, Secure, code, jwt, spawn};
use crate::support::{msg, uid, with};

const AGENTS: &str = r#"
[[agents]]
id = "open"
name = "Open"
description = "e2e: every principal kind may call"
engine = { kind = "echo" }
access = { call = ["person", "anonymous-local", "assistant:*", "peer:alice", "peer:bob",
                   "jwt:https://idp.test:*", "actor:https://idp.test:*"] }

[[agents]]
id = "watch"
name = "Watch"
description = "e2e: peers and JWT holders may only read"
engine = { kind = "echo" }
access = { call = ["person"], read = ["peer:*", "jwt:https://idp.test:*", "actor:https://idp.test:*"] }

[[agents]]
id = "slow"
name = "Slow"
description = "e2e: a long turn"
engine = { kind = "exec", command = ["sh", "-c", "sleep 15; echo done"] }
access = { call = ["person", "peer:alice"] }
"#;

/// One caller of the matrix.
#[derive(Debug, Clone)]
struct Caller {
    name: &'static str,
    bearer: Option<String>,
    /// The A2A prefix it uses for Agent `open`.
    prefix: String,
    /// Whether it may send to `open`.
    calls: bool,
}

async fn callers(app: &Secure) -> Vec<Caller> {
    let alice = app.peer_token("alice").await;
    let bob = app.peer_token("bob").await;
    let helper = app.assistant_token("helper", "open").await;
    let public = "/api/v1/agents/open".to_string();
    let c = |name, bearer: Option<String>, calls| Caller {
        name,
        bearer,
        prefix: public.clone(),
        calls,
    };
    vec![
        c("owner", Some(app.owner.clone()), true),
        c("anon", None, true),
        c("alice", Some(alice), true),
        c("bob", Some(bob), true),
        Caller {
            name: "assistant",
            bearer: Some(helper),
            prefix: "/api/v1/assistant-a2a/agents/open".into(),
            calls: true,
        },
        c("service", Some(jwt("svc", None)), false),
        c(
            "delegated-a",
            Some(jwt("alice-user", Some("agent-a"))),
            true,
        ),
        c(
            "delegated-b",
            Some(jwt("alice-user", Some("agent-b"))),
            true,
        ),
    ]
}

/// `get_agent_task` for `task` of Agent `agent` on the assistants' MCP bridge, as `bearer`.
async fn mcp_get_task(
    app: &Secure,
    bearer: Option<&str>,
    agent: &str,
    task: &str,
) -> (StatusCode, Value) {
    let call = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "get_agent_task", "arguments": { "agent_id": agent, "task_id": task } } });
    let headers = [
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let (status, _, v) = app
        .req(
            bearer,
            Method::POST,
            "/api/v1/assistant-mcp",
            Some(call),
            &headers,
        )
        .await;
    (status, v)
}

#[tokio::test]
async fn every_principal_sees_only_its_own_tasks_on_every_a2a_method() {
    own_tasks_only(Binding::JsonRpc).await;
}

/// The same matrix through the HTTP+JSON binding: the same outcomes, each in its shape.
#[tokio::test]
async fn every_principal_sees_only_its_own_tasks_over_http_json() {
    own_tasks_only(Binding::HttpJson).await;
}

async fn own_tasks_only(binding: Binding) {
    let app = spawn(AGENTS, "[limits]\nrate_limit_per_minute = 10000\n").await;
    let callers = callers(&app).await;

    // SendMessage: each caller that may call gets its own task; a service may only read.
    let mut tasks: Vec<(String, String, String, String)> = Vec::new(); // caller, task, ctx, session
    for c in &callers {
        let (status, r) = app
            .call(
                binding,
                c.bearer.as_deref(),
                &c.prefix,
                "SendMessage",
                json!({ "message": msg(&format!("hello from {}", c.name)) }),
            )
            .await;
        // A refusal is HTTP 200 in JSON-RPC, its own status (400 here) in HTTP+JSON.
        let refused = match binding {
            Binding::JsonRpc => StatusCode::OK,
            Binding::HttpJson => StatusCode::BAD_REQUEST,
        };
        let expected = if c.calls { StatusCode::OK } else { refused };
        assert_eq!(status, expected, "{}: {r}", c.name);
        if !c.calls {
            assert_eq!(code(&r), -32004, "{}: read-only: {r}", c.name);
            assert!(
                r["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("read-only")
            );
            continue;
        }
        let t = &r["result"]["task"];
        assert_eq!(
            t["status"]["state"], "TASK_STATE_COMPLETED",
            "{}: {r}",
            c.name
        );
        tasks.push((
            c.name.to_string(),
            t["id"].as_str().unwrap().to_string(),
            t["contextId"].as_str().unwrap().to_string(),
            t["metadata"]["sessionId"].as_str().unwrap().to_string(),
        ));
    }
    assert_eq!(tasks.len(), 7);

    // The answer for a task that does not exist: another caller's task must look the same.
    let unknown = "no-such-task-0000";
    for reader in &callers {
        let b = reader.bearer.as_deref();
        let (_, missing) = app
            .call(
                binding,
                b,
                &reader.prefix,
                "GetTask",
                json!({ "id": unknown }),
            )
            .await;
        assert_eq!(code(&missing), -32001, "{}: {missing}", reader.name);
        let not_found = |r: &Value, id: &str| {
            assert_eq!(code(r), -32001, "{} reading {id}: {r}", reader.name);
            assert_eq!(
                r["error"]["message"].as_str().unwrap().replace(id, "ID"),
                missing["error"]["message"]
                    .as_str()
                    .unwrap()
                    .replace(unknown, "ID"),
                "{}: another caller's task must look like an unknown one",
                reader.name
            );
            assert_eq!(r["error"]["data"], missing["error"]["data"]);
        };
        for (owner, task, ctx, _) in &tasks {
            let own = owner == reader.name;
            let (_, got) = app
                .call(binding, b, &reader.prefix, "GetTask", json!({ "id": task }))
                .await;
            let (_, sub) = app
                .call(
                    binding,
                    b,
                    &reader.prefix,
                    "SubscribeToTask",
                    json!({ "id": task }),
                )
                .await;
            let (_, cancel) = app
                .call(
                    binding,
                    b,
                    &reader.prefix,
                    "CancelTask",
                    json!({ "id": task }),
                )
                .await;
            if own {
                assert_eq!(got["result"]["id"], json!(task), "{}: {got}", reader.name);
                assert_eq!(code(&sub), -32004, "own terminal task: {sub}");
                assert_eq!(code(&cancel), -32002, "own task: {cancel}");
            } else {
                not_found(&got, task);
                not_found(&sub, task);
                if reader.calls {
                    not_found(&cancel, task);
                } else {
                    // Canceling stops work: read-only access may not, whatever it names.
                    assert_eq!(code(&cancel), -32004, "{}: {cancel}", reader.name);
                }
            }
            // A follow-up naming another caller's task finds nothing.
            if reader.calls && !own {
                let follow = app
                    .send_via(
                        binding,
                        b,
                        &reader.prefix,
                        json!({ "message": with(msg("me too"), json!({ "taskId": task })) }),
                    )
                    .await;
                assert_eq!(code(&follow), -32001, "{} → {owner}: {follow}", reader.name);
            }
            let _ = ctx;
        }
        // ListTasks: exactly the caller's own tasks.
        let (_, list) = app
            .call(
                binding,
                b,
                &reader.prefix,
                "ListTasks",
                json!({ "pageSize": 100 }),
            )
            .await;
        let mut listed: Vec<&str> = list["result"]["tasks"]
            .as_array()
            .unwrap_or_else(|| panic!("{}: {list}", reader.name))
            .iter()
            .filter_map(|t| t["id"].as_str())
            .collect();
        listed.sort_unstable();
        let mut own: Vec<&str> = tasks
            .iter()
            .filter(|t| t.0 == reader.name)
            .map(|t| t.1.as_str())
            .collect();
        own.sort_unstable();
        assert_eq!(listed, own, "{}: ListTasks shows only its own", reader.name);
        assert_eq!(list["result"]["totalSize"], json!(own.len()));
    }

    // The same contextId from another caller is another, empty conversation; two agents
    // acting for the same user are two callers.
    let ctx_of = |n: &str| tasks.iter().find(|t| t.0 == n).unwrap().clone();
    for (reader, owner) in [
        ("bob", "alice"),
        ("delegated-b", "delegated-a"),
        ("anon", "owner"),
    ] {
        let c = callers.iter().find(|c| c.name == reader).unwrap();
        let (_, ctx, session) = {
            let t = ctx_of(owner);
            (t.1, t.2, t.3)
        };
        let r = app
            .send_via(
                binding,
                c.bearer.as_deref(),
                &c.prefix,
                json!({ "message": with(msg("same context id"), json!({ "contextId": ctx })) }),
            )
            .await;
        let t = &r["result"]["task"];
        assert_eq!(t["contextId"], json!(ctx), "{r}");
        assert_ne!(
            t["metadata"]["sessionId"],
            json!(session),
            "{reader} joined {owner}'s"
        );
        assert_eq!(
            t["history"].as_array().map(Vec::len),
            Some(1),
            "empty conversation: {r}"
        );
    }

    // GetExtendedAgentCard: credentials required; then the real skills.
    for c in &callers {
        let (status, r) = app
            .call(
                binding,
                c.bearer.as_deref(),
                &c.prefix,
                "GetExtendedAgentCard",
                json!({}),
            )
            .await;
        if c.bearer.is_none() {
            assert_eq!(status, StatusCode::UNAUTHORIZED, "{r}");
        } else {
            assert_eq!(status, StatusCode::OK, "{}: {r}", c.name);
            assert_eq!(r["result"]["name"], "Open", "{}: {r}", c.name);
            let url = r["result"]["supportedInterfaces"][0]["url"]
                .as_str()
                .unwrap();
            assert!(url.ends_with(&format!("{}/a2a", c.prefix)), "{url}");
        }
    }

    // An Agent a caller has no rights on does not exist for it (the unknown-Agent answer).
    let (unknown_status, unknown_agent) = app
        .call(
            binding,
            Some(&app.owner),
            "/api/v1/agents/nope",
            "GetTask",
            json!({ "id": "x" }),
        )
        .await;
    for c in callers
        .iter()
        .filter(|c| ["alice", "bob", "service", "delegated-a"].contains(&c.name))
    {
        for method in [
            "SendMessage",
            "GetTask",
            "ListTasks",
            "GetExtendedAgentCard",
        ] {
            let (status, r) = app
                .call(
                    binding,
                    c.bearer.as_deref(),
                    "/api/v1/agents/echo",
                    method,
                    json!({ "id": "x", "message": msg("x") }),
                )
                .await;
            assert_eq!(status, unknown_status, "{} {method} on echo: {r}", c.name);
            assert_eq!(code(&r), code(&unknown_agent));
            assert_eq!(
                r["error"]["message"]
                    .as_str()
                    .unwrap()
                    .replace("echo", "ID"),
                unknown_agent["error"]["message"]
                    .as_str()
                    .unwrap()
                    .replace("nope", "ID")
            );
        }
    }
    // Read-only Agent: reads work, sends are refused; the assistant never reaches it.
    for c in callers
        .iter()
        .filter(|c| ["alice", "service", "delegated-a"].contains(&c.name))
    {
        let b = c.bearer.as_deref();
        let r = app
            .send_via(
                binding,
                b,
                "/api/v1/agents/watch",
                json!({ "message": msg("x") }),
            )
            .await;
        assert_eq!(code(&r), -32004, "{}: {r}", c.name);
        let (_, r) = app
            .call(binding, b, "/api/v1/agents/watch", "ListTasks", json!({}))
            .await;
        assert_eq!(r["result"]["tasks"], json!([]), "{}: {r}", c.name);
    }
    let helper = callers.iter().find(|c| c.name == "assistant").unwrap();
    for agent in ["watch", "echo", "nope"] {
        let (status, r) = app
            .call(
                binding,
                helper.bearer.as_deref(),
                &format!("/api/v1/assistant-a2a/agents/{agent}"),
                "ListTasks",
                json!({}),
            )
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "assistant on {agent}: {r}");
    }
    app.shutdown().await;
}

#[tokio::test]
async fn rest_routes_by_principal() {
    let app = spawn(AGENTS, "[limits]\nrate_limit_per_minute = 10000\n").await;
    let callers = callers(&app).await;
    let alice = callers.iter().find(|c| c.name == "alice").unwrap().clone();
    let r = app
        .send_message(
            alice.bearer.as_deref(),
            "/api/v1/agents/open",
            json!({ "message": msg("mine") }),
        )
        .await;
    let alice_task = r["result"]["task"]["id"].as_str().unwrap().to_string();
    let alice_session = r["result"]["task"]["metadata"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();

    let owner_only = [
        "/api/v1/agents".to_string(),
        "/api/v1/sessions".into(),
        format!("/api/v1/sessions/{alice_session}"),
        "/api/v1/tasks".into(),
        "/api/v1/interactions".into(),
        "/api/v1/audit".into(),
        "/api/v1/peer-tokens".into(),
        "/api/v1/assistant-tokens".into(),
        "/api/v1/agents/open/access".into(),
    ];
    for c in &callers {
        let expected = match c.name {
            "owner" => StatusCode::OK,
            "anon" | "assistant" => StatusCode::UNAUTHORIZED,
            _ => StatusCode::FORBIDDEN,
        };
        for path in &owner_only {
            let (status, headers, body) = app.get(c.bearer.as_deref(), path).await;
            assert_eq!(status, expected, "{} GET {path}: {body}", c.name);
            if status == StatusCode::UNAUTHORIZED {
                assert_eq!(headers["www-authenticate"], "Bearer");
            }
            if status != StatusCode::OK {
                assert!(!body.to_string().contains(&alice_task), "leak in {path}");
            }
        }
        // Personal schedules: anyone but an assistant has their own (empty) list.
        let (status, _, body) = app.get(c.bearer.as_deref(), "/api/v1/me/schedules").await;
        let expected = if c.name == "assistant" {
            StatusCode::UNAUTHORIZED
        } else {
            StatusCode::OK
        };
        assert_eq!(status, expected, "{}: {body}", c.name);
        // Answers: only the owner answers (a missing interaction is 404 for them).
        let answer = json!({ "task_id": alice_task, "option": "accept", "message_id": uid("a") });
        let (status, _, body) = app
            .req(
                c.bearer.as_deref(),
                Method::POST,
                "/api/v1/interactions/nope/answer",
                Some(answer),
                &[],
            )
            .await;
        let expected = match c.name {
            "owner" => StatusCode::NOT_FOUND,
            "assistant" => StatusCode::UNAUTHORIZED,
            _ => StatusCode::FORBIDDEN,
        };
        assert_eq!(status, expected, "{} answer: {body}", c.name);
        // Issuing tokens is the owner's.
        let (status, _, _) = app
            .req(
                c.bearer.as_deref(),
                Method::POST,
                "/api/v1/peer-tokens",
                Some(json!({ "name": format!("x-{}", c.name) })),
                &[],
            )
            .await;
        let expected = match c.name {
            "owner" => StatusCode::CREATED,
            "anon" | "assistant" => StatusCode::UNAUTHORIZED,
            _ => StatusCode::FORBIDDEN,
        };
        assert_eq!(status, expected, "{} issues a token", c.name);
        // The public card needs nothing; the assistant card is the assistant's only.
        let (status, _, card) = app
            .get(
                c.bearer.as_deref(),
                "/api/v1/agents/open/.well-known/agent-card.json",
            )
            .await;
        assert_eq!(
            status,
            if c.name == "assistant" {
                StatusCode::UNAUTHORIZED
            } else {
                StatusCode::OK
            },
            "{}",
            c.name
        );
        if status == StatusCode::OK {
            assert_eq!(card["skills"][0]["id"], "chat");
        }
        let (status, _, _) = app
            .get(
                c.bearer.as_deref(),
                "/api/v1/assistant-a2a/agents/open/.well-known/agent-card.json",
            )
            .await;
        let expected = if c.name == "assistant" {
            StatusCode::OK
        } else {
            StatusCode::UNAUTHORIZED
        };
        assert_eq!(status, expected, "{} assistant card", c.name);
    }
    let helper = callers.iter().find(|c| c.name == "assistant").unwrap();
    let (status, _, _) = app
        .get(
            helper.bearer.as_deref(),
            "/api/v1/assistant-a2a/agents/echo/.well-known/agent-card.json",
        )
        .await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "the assistant reaches one Agent"
    );

    // The MCP bridge: the assistant reads its own tasks of its Agent and nothing else: not
    // another caller's (it is not listed in the Agent's `access.answer`, which would let it
    // read and answer them: answer_rule.rs), not another Agent's; peers and JWT holders are
    // refused.
    let helper_bearer = helper.bearer.as_deref();
    let (status, v) = mcp_get_task(&app, helper_bearer, "open", &alice_task).await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["result"]["isError"], true, "{v}");
    assert_eq!(
        v["result"]["structuredContent"]["error"]["code"], -32001,
        "{v}"
    );
    let (_, v) = mcp_get_task(&app, helper_bearer, "echo", &alice_task).await;
    assert_eq!(v["result"]["isError"], true, "{v}");
    assert_eq!(
        v["result"]["structuredContent"]["error"]["code"], -32001,
        "{v}"
    );
    for c in callers
        .iter()
        .filter(|c| ["alice", "service", "delegated-a"].contains(&c.name))
    {
        let (status, _) = mcp_get_task(&app, c.bearer.as_deref(), "open", &alice_task).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{} on MCP", c.name);
    }
    // The anonymous caller reads only its own tasks through MCP.
    let (_, v) = mcp_get_task(&app, None, "open", &alice_task).await;
    assert_eq!(v["result"]["isError"], true, "{v}");
    // Request content cannot select another identity: an assistant token on the public route,
    // or the owner's token on the assistant route, is refused.
    let (status, _) = app
        .rpc(
            helper.bearer.as_deref(),
            "/api/v1/agents/open",
            "ListTasks",
            json!({ "principal": "person" }),
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, _) = app
        .rpc(
            Some(&app.owner),
            "/api/v1/assistant-a2a/agents/open",
            "ListTasks",
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    app.shutdown().await;
}

#[tokio::test]
async fn revocation_takes_effect_on_the_next_call() {
    let app = spawn(AGENTS, "[limits]\nrate_limit_per_minute = 10000\n").await;
    let alice = app.peer_token("alice").await;
    let bob = app.peer_token("bob").await;
    let helper = app.assistant_token("helper", "open").await;
    let open = "/api/v1/agents/open";
    let list = |who: String, prefix: &'static str| {
        let app = &app;
        async move { app.rpc(Some(&who), prefix, "ListTasks", json!({})).await.0 }
    };
    assert_eq!(list(alice.clone(), open).await, StatusCode::OK);
    app.revoke("/api/v1/peer-tokens/alice").await;
    assert_eq!(list(alice.clone(), open).await, StatusCode::UNAUTHORIZED);

    // Revoked from the CLI (the journal, not the API): the server sees it on the next call.
    let carol = sextant::tokens::create(
        app.dir.path(),
        sextant_access::tokens::Kind::Peer,
        "carol",
        None,
    )
    .await
    .unwrap()
    .token;
    let (status, _) = app
        .rpc(Some(&carol), "/api/v1/agents/echo", "ListTasks", json!({}))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "carol is not on echo's list");
    sextant::tokens::revoke(app.dir.path(), sextant_access::tokens::Kind::Peer, "carol")
        .await
        .unwrap();
    let (status, _) = app
        .rpc(Some(&carol), "/api/v1/agents/echo", "ListTasks", json!({}))
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    // Both CLI commands are in the audit log, as the API's are.
    let owner = app.owner.clone();
    let (_, _, audit) = app.get(Some(&owner), "/api/v1/audit?limit=200").await;
    let methods: Vec<String> = audit["records"]
        .as_array()
        .unwrap_or_else(|| panic!("{audit}"))
        .iter()
        .filter(|r| r["reason"] == "name carol")
        .map(|r| {
            format!(
                "{} via {}",
                r["method"].as_str().unwrap_or(""),
                r["route"].as_str().unwrap_or("")
            )
        })
        .collect();
    assert_eq!(
        methods,
        [
            "revoke peer token via sextant CLI",
            "issue peer token via sextant CLI"
        ],
        "{audit}"
    );

    // The assistant token, on its route and on the MCP bridge.
    let assistant = "/api/v1/assistant-a2a/agents/open";
    assert_eq!(list(helper.clone(), assistant).await, StatusCode::OK);
    app.revoke("/api/v1/assistant-tokens/helper").await;
    assert_eq!(
        list(helper.clone(), assistant).await,
        StatusCode::UNAUTHORIZED
    );

    // The deny list (by key, and by pattern for JWT callers), persisted across a restart.
    let r = app
        .send_message(Some(&bob), open, json!({ "message": msg("b") }))
        .await;
    let bob_task = r["result"]["task"]["id"].as_str().unwrap().to_string();
    let deny = json!({ "denied": ["peer:sextant:bob", "jwt:https://idp.test:alice-user"] });
    let owner = app.owner.clone();
    let (status, _, v) = app
        .req(
            Some(&owner),
            Method::PUT,
            "/api/v1/agents/open/access",
            Some(deny),
            &[],
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    let (status, r) = app
        .rpc(Some(&bob), open, "GetTask", json!({ "id": bob_task }))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{r}");
    let delegated = jwt("alice-user", Some("agent-z"));
    let (status, _) = app
        .rpc(Some(&delegated), open, "ListTasks", json!({}))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let app = app.restart().await;
    let (status, _) = app
        .rpc(Some(&bob), open, "GetTask", json!({ "id": bob_task }))
        .await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "the revocation survived the restart"
    );
    let owner = app.owner.clone();
    let (_, _, access) = app.get(Some(&owner), "/api/v1/agents/open/access").await;
    assert_eq!(
        access["denied"].as_array().map(Vec::len),
        Some(2),
        "{access}"
    );
    let (status, _, _) = app
        .req(
            Some(&owner),
            Method::PUT,
            "/api/v1/agents/open/access",
            Some(json!({ "denied": [] })),
            &[],
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, r) = app
        .rpc(Some(&bob), open, "GetTask", json!({ "id": bob_task }))
        .await;
    assert_eq!(status, StatusCode::OK, "{r}");
    assert_eq!(r["result"]["id"], json!(bob_task));

    // An open stream ends once its caller's token is revoked.
    let dave = app.peer_token("alice").await;
    let r = app
        .send_message(
            Some(&dave),
            "/api/v1/agents/slow",
            json!({ "message": msg("wait"), "configuration": { "returnImmediately": true } }),
        )
        .await;
    let slow = r["result"]["task"]["id"].as_str().unwrap().to_string();
    let resp = app
        .client
        .post(format!("{}/api/v1/agents/slow/a2a", app.url))
        .bearer_auth(&dave)
        .header("Content-Type", "application/json")
        .body(json!({ "jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": { "id": slow } }).to_string())
        .send()
        .await
        .unwrap();
    let mut stream = crate::support::Sse::from_response(resp);
    assert!(
        stream.next_frame().await.is_some(),
        "the current task first"
    );
    app.revoke("/api/v1/peer-tokens/alice").await;
    let started = std::time::Instant::now();
    loop {
        match stream.next_frame_within(Duration::from_secs(12)).await {
            Ok(None) => break,
            Ok(Some(f)) => assert!(
                !f.data.contains("TASK_STATE_COMPLETED"),
                "the stream must end before the task does: {f:?}"
            ),
            Err(()) => panic!("the stream was not cut after the revocation"),
        }
    }
    assert!(started.elapsed() < Duration::from_secs(12));
    let (_, t) = app
        .rpc(Some(&owner), "/api/v1/agents/slow", "ListTasks", json!({}))
        .await;
    let _ = t;
    app.shutdown().await;
}

/// The matrix over the third binding, gRPC: every principal kind that may call gets its own
/// task, reads it, finds every other caller's task NOT_FOUND with the same ErrorInfo and
/// message as an unknown task's (by GetTask, SubscribeToTask and CancelTask), cannot
/// subscribe to or cancel its own finished task, and lists only its own; the service JWT may
/// not send or cancel; the extended card needs credentials; an assistant token, scoped by the
/// Agent in a path gRPC does not have, is refused.
#[tokio::test]
async fn every_principal_sees_only_its_own_tasks_over_grpc() {
    use sextant_server::a2a::grpc::pb;
    use sextant_server::a2a::grpc::pb::a2a_service_client::A2aServiceClient;
    use tonic::{Code, Request};
    use tonic_types::StatusExt;

    let app = spawn(AGENTS, "[limits]\nrate_limit_per_minute = 10000\n").await;
    let callers = callers(&app).await;
    let (_, _, card) = app
        .get(None, "/api/v1/agents/open/.well-known/agent-card.json")
        .await;
    let iface = card["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["protocolBinding"] == "GRPC")
        .cloned()
        .unwrap_or_else(|| panic!("no GRPC interface: {card}"));
    assert_eq!(iface["tenant"], "open");
    let channel = tonic::transport::Channel::from_shared(format!(
        "http://{}",
        iface["url"].as_str().unwrap()
    ))
    .unwrap()
    .connect()
    .await
    .unwrap();
    let mut c = A2aServiceClient::new(channel);
    fn req<T>(bearer: Option<&str>, msg: T) -> Request<T> {
        let mut r = Request::new(msg);
        r.metadata_mut()
            .insert("a2a-version", "1.0".parse().unwrap());
        if let Some(b) = bearer {
            r.metadata_mut()
                .insert("authorization", format!("Bearer {b}").parse().unwrap());
        }
        r
    }
    let send = |text: String| pb::SendMessageRequest {
        tenant: "open".into(),
        message: Some(pb::Message {
            message_id: uid("m"),
            role: pb::Role::User as i32,
            parts: vec![pb::Part {
                content: Some(pb::part::Content::Text(text)),
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..Default::default()
    };
    let get = |id: &str| pb::GetTaskRequest {
        tenant: "open".into(),
        id: id.into(),
        ..Default::default()
    };
    let subscribe = |id: &str| pb::SubscribeToTaskRequest {
        tenant: "open".into(),
        id: id.into(),
    };
    let cancel = |id: &str| pb::CancelTaskRequest {
        tenant: "open".into(),
        id: id.into(),
        ..Default::default()
    };
    /// A subscription that must fail: its status, whether the server refused the call or
    /// ended the stream with it.
    async fn subscribe_error(
        c: &mut A2aServiceClient<tonic::transport::Channel>,
        r: Request<pb::SubscribeToTaskRequest>,
    ) -> tonic::Status {
        match c.subscribe_to_task(r).await {
            Err(s) => s,
            Ok(stream) => {
                let mut stream = stream.into_inner();
                match stream.message().await {
                    Err(s) => s,
                    Ok(item) => panic!("the subscription must fail: {item:?}"),
                }
            }
        }
    }

    let mut tasks: Vec<(&str, String)> = Vec::new();
    for caller in &callers {
        let b = caller.bearer.as_deref();
        let sent = c
            .send_message(req(b, send(format!("grpc from {}", caller.name))))
            .await;
        if caller.name == "assistant" {
            let status = sent.expect_err("assistant tokens are not served on gRPC");
            assert_eq!(status.code(), Code::Unauthenticated, "{status:?}");
            continue;
        }
        if !caller.calls {
            let status = sent.expect_err("read-only");
            assert_eq!(
                status.code(),
                Code::Unimplemented,
                "{}: {status:?}",
                caller.name
            );
            let info = status.get_details_error_info().expect("ErrorInfo");
            assert_eq!(info.reason, "UNSUPPORTED_OPERATION");
            continue;
        }
        let sent = sent
            .unwrap_or_else(|s| panic!("{}: {s:?}", caller.name))
            .into_inner();
        let Some(pb::send_message_response::Payload::Task(task)) = sent.payload else {
            panic!("{}: a task: {sent:?}", caller.name);
        };
        tasks.push((caller.name, task.id));
    }
    assert_eq!(tasks.len(), 6, "{tasks:?}");

    for reader in callers.iter().filter(|c| c.name != "assistant") {
        let b = reader.bearer.as_deref();
        let unknown = "no-such-task-0000";
        let missing = c
            .get_task(req(b, get(unknown)))
            .await
            .expect_err("unknown task");
        assert_eq!(
            missing.code(),
            Code::NotFound,
            "{}: {missing:?}",
            reader.name
        );
        for (owner, id) in &tasks {
            let got = c.get_task(req(b, get(id))).await;
            let sub = subscribe_error(&mut c, req(b, subscribe(id))).await;
            let cancel = c
                .cancel_task(req(b, cancel(id)))
                .await
                .expect_err("nobody may cancel a finished task");
            if *owner == reader.name {
                let t = got.unwrap_or_else(|s| panic!("{} own: {s:?}", reader.name));
                assert_eq!(&t.into_inner().id, id);
                // Its own finished task: nothing to follow, nothing to cancel.
                assert_eq!(
                    sub.code(),
                    Code::Unimplemented,
                    "own terminal task: {sub:?}"
                );
                assert_eq!(
                    cancel.code(),
                    Code::FailedPrecondition,
                    "own task: {cancel:?}"
                );
            } else {
                let looks_unknown = |s: &tonic::Status| {
                    assert_eq!(
                        s.code(),
                        Code::NotFound,
                        "{} → {owner}'s: {s:?}",
                        reader.name
                    );
                    assert_eq!(
                        s.message().replace(id.as_str(), "ID"),
                        missing.message().replace(unknown, "ID"),
                        "{}: another caller's task must look like an unknown one",
                        reader.name
                    );
                    assert_eq!(
                        s.get_details_error_info().map(|i| i.reason),
                        missing.get_details_error_info().map(|i| i.reason)
                    );
                };
                looks_unknown(&got.expect_err("another caller's task"));
                looks_unknown(&sub);
                if reader.calls {
                    looks_unknown(&cancel);
                } else {
                    // Canceling stops work: read-only access may not, whatever it names.
                    assert_eq!(
                        cancel.code(),
                        Code::Unimplemented,
                        "{}: {cancel:?}",
                        reader.name
                    );
                    assert_eq!(
                        cancel.get_details_error_info().map(|i| i.reason).as_deref(),
                        Some("UNSUPPORTED_OPERATION")
                    );
                }
            }
        }
        let list = c
            .list_tasks(req(
                b,
                pb::ListTasksRequest {
                    tenant: "open".into(),
                    page_size: Some(100),
                    ..Default::default()
                },
            ))
            .await
            .unwrap_or_else(|s| panic!("{}: {s:?}", reader.name))
            .into_inner();
        let mut listed: Vec<&str> = list.tasks.iter().map(|t| t.id.as_str()).collect();
        listed.sort_unstable();
        let mut own: Vec<&str> = tasks
            .iter()
            .filter(|t| t.0 == reader.name)
            .map(|t| t.1.as_str())
            .collect();
        own.sort_unstable();
        assert_eq!(listed, own, "{}: ListTasks shows only its own", reader.name);
    }

    // GetExtendedAgentCard: credentials required; then the real card.
    for caller in callers.iter().filter(|c| c.name != "assistant") {
        let card = c
            .get_extended_agent_card(req(
                caller.bearer.as_deref(),
                pb::GetExtendedAgentCardRequest {
                    tenant: "open".into(),
                },
            ))
            .await;
        if caller.bearer.is_none() {
            let s = card.expect_err("the extended card needs credentials");
            assert_eq!(s.code(), Code::Unauthenticated, "{s:?}");
        } else {
            let card = card
                .unwrap_or_else(|s| panic!("{}: {s:?}", caller.name))
                .into_inner();
            assert_eq!(card.name, "Open", "{}", caller.name);
        }
    }
    app.shutdown().await;
}

/// Built-in Agents for remote callers (issue #35 item 8): a per-peer token is not on the
/// built-in `echo`'s default access list, so echo does not exist for it; an `agents.toml`
/// entry with echo's id and an access list naming the peer configures the built-in, and the
/// same kind of token then calls it (its engine still the built-in echo). The token's
/// creation says which Agents it may call.
#[tokio::test]
async fn a_peer_token_calls_the_built_in_echo_once_agents_toml_names_it() {
    let params = || json!({ "message": msg("hello echo") });

    let plain = spawn("", "").await;
    let bot = plain.peer_token("bot").await;
    let refused = plain
        .send_message(Some(&bot), "/api/v1/agents/echo", params())
        .await;
    assert!(
        refused["result"].is_null() && refused["error"].is_object(),
        "the default echo is not the peer's to call: {refused}"
    );
    plain.shutdown().await;

    let named = spawn(
        r#"
[[agents]]
id = "echo"
access = { call = ["person", "anonymous-local", "peer:bot"] }
max_message_bytes = 100000
"#,
        "",
    )
    .await;
    let owner = named.owner.clone();
    let (status, _, created) = named
        .req(
            Some(&owner),
            Method::POST,
            "/api/v1/peer-tokens",
            Some(json!({ "name": "bot" })),
            &[],
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(
        created["agents"],
        json!(["echo"]),
        "the answer says which Agents the token may call: {created}"
    );
    let bot = created["token"].as_str().unwrap().to_string();
    let answered = named
        .send_message(Some(&bot), "/api/v1/agents/echo", params())
        .await;
    let task = &answered["result"]["task"];
    assert_eq!(
        task["status"]["state"], "TASK_STATE_COMPLETED",
        "{answered}"
    );
    assert!(
        answered.to_string().contains("hello echo"),
        "the built-in echo answered: {answered}"
    );
    // The shell is still not the peer's.
    let shell = named
        .send_message(Some(&bot), "/api/v1/agents/shell", params())
        .await;
    assert!(shell["error"].is_object(), "{shell}");
    named.shutdown().await;
}

/// A built-in's entry in `agents.toml` configures it; one that would make it something else
/// (another engine, a command) stops Sextant at start with the reason.
#[tokio::test]
async fn redefining_a_built_in_agents_engine_is_refused_with_the_reason() {
    for (toml, want) in [
        (
            "[[agents]]\nid = \"echo\"\nname = \"Mine\"\ndescription = \"d\"\n\
             engine = { kind = \"exec\", command = [\"sh\", \"-c\", \"cat\"] }\n",
            "its engine stays \"echo\"",
        ),
        (
            "[[agents]]\nid = \"shell\"\ncommand = [\"sh\"]\n",
            "command cannot be set for it",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("agents.toml"), toml).unwrap();
        let err = match sextant::start(crate::support::loopback(dir.path())).await {
            Ok(running) => {
                running.shutdown().await.unwrap();
                panic!("{toml}: Sextant started")
            }
            Err(e) => format!("{e:#}"),
        };
        assert!(err.contains(want), "{toml}: {want:?} not in {err:?}");
        assert!(
            err.contains("is built in"),
            "{toml}: the reason says echo and shell are built in: {err:?}"
        );
    }
}
