//! The gRPC binding (spec §10, issue #18): the generated client over h2c on the server's one
//! port, the Agent named by `tenant`, results equal to what JSON-RPC answers, the kit's status
//! codes with ErrorInfo details, and the same caller scoping.

use serde_json::{Value, json};
use sextant_server::a2a::grpc::pb;
use sextant_server::a2a::grpc::pb::a2a_service_client::A2aServiceClient;
use tonic::transport::Channel;
use tonic::{Code, Request, Status};
use tonic_types::StatusExt;

use crate::support::*;

type Client = A2aServiceClient<Channel>;

/// A client of the card's gRPC interface (`host:port`, as gRPC clients take it).
async fn client(target: &str) -> Client {
    let channel = Channel::from_shared(format!("http://{target}"))
        .unwrap()
        .connect()
        .await
        .unwrap();
    A2aServiceClient::new(channel)
}

/// The gRPC interface an Agent's card lists.
async fn grpc_interface(app: &TestApp, agent: &str) -> Value {
    let (status, _, card) = app
        .get_json(
            &format!("/api/v1/agents/{agent}/.well-known/agent-card.json"),
            false,
        )
        .await;
    assert_eq!(status, 200, "{card}");
    card["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["protocolBinding"] == "GRPC")
        .cloned()
        .unwrap_or_else(|| panic!("no GRPC interface: {card}"))
}

/// `msg` as `who`, with `A2A-Version: 1.0`.
fn request<T>(who: Who, app: &TestApp, msg: T) -> Request<T> {
    let mut req = Request::new(msg);
    req.metadata_mut()
        .insert("a2a-version", "1.0".parse().unwrap());
    if who == Who::Owner {
        req.metadata_mut().insert(
            "authorization",
            format!("Bearer {}", app.token).parse().unwrap(),
        );
    }
    req
}

fn text_message(text: &str) -> pb::Message {
    pb::Message {
        message_id: uid("m"),
        role: pb::Role::User as i32,
        parts: vec![pb::Part {
            content: Some(pb::part::Content::Text(text.into())),
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn send_request(tenant: &str, text: &str) -> pb::SendMessageRequest {
    pb::SendMessageRequest {
        tenant: tenant.into(),
        message: Some(text_message(text)),
        ..Default::default()
    }
}

/// A message as ProtoJSON (what the other bindings answer).
fn protojson<T: serde::Serialize>(m: &T) -> Value {
    serde_json::to_value(m).unwrap()
}

/// Asserts a status: its code and its ErrorInfo (reason, domain). Returns the status.
fn assert_status(got: Result<impl std::fmt::Debug, Status>, code: Code, reason: &str) -> Status {
    let status = got.expect_err("an error status");
    assert_eq!(status.code(), code, "{status:?}");
    let info = status
        .get_details_error_info()
        .unwrap_or_else(|| panic!("no ErrorInfo: {status:?}"));
    assert_eq!(info.reason, reason, "{status:?}");
    assert_eq!(info.domain, "a2a-protocol.org", "{status:?}");
    status
}

#[tokio::test]
async fn the_card_lists_grpc_with_the_agent_as_tenant() {
    let app = TestApp::spawn().await;
    let iface = grpc_interface(&app, "echo").await;
    let host = app.url.trim_start_matches("http://");
    assert_eq!(
        iface,
        json!({ "url": host, "protocolBinding": "GRPC", "protocolVersion": "1.0", "tenant": "echo" })
    );
    app.shutdown().await;
}

#[tokio::test]
async fn send_get_list_and_cancel_answer_what_json_rpc_answers() {
    let app = TestApp::spawn().await;
    let iface = grpc_interface(&app, "echo").await;
    let mut c = client(iface["url"].as_str().unwrap()).await;
    let tenant = iface["tenant"].as_str().unwrap();

    let sent = c
        .send_message(request(Who::Anon, &app, send_request(tenant, "hello grpc")))
        .await
        .unwrap()
        .into_inner();
    let Some(pb::send_message_response::Payload::Task(task)) = sent.payload else {
        panic!("a task: {sent:?}");
    };
    let done = app.wait_terminal(Who::Anon, "echo", &task.id).await;
    assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{done}");

    // GetTask: the same task, byte for byte in ProtoJSON, as JSON-RPC's.
    let got = c
        .get_task(request(
            Who::Anon,
            &app,
            pb::GetTaskRequest {
                tenant: tenant.into(),
                id: task.id.clone(),
                ..Default::default()
            },
        ))
        .await
        .unwrap()
        .into_inner();
    // The same task as JSON-RPC's, but for what the protobuf types cannot keep: numbers in
    // metadata are doubles (`google.protobuf.Struct`), and pbjson writes timestamps with
    // `+00:00` for `Z` (the same instant; on the wire it is seconds and nanos).
    let rpc = app.rpc("echo", "GetTask", json!({ "id": task.id })).await;
    let mut ours = protojson(&got);
    let mut theirs = rpc["result"].clone();
    for t in [&mut ours, &mut theirs] {
        t.as_object_mut().unwrap().remove("metadata");
        t["status"].as_object_mut().unwrap().remove("timestamp");
    }
    assert_eq!(ours, theirs);
    assert_eq!(
        protojson(&got)["metadata"]["sessionId"],
        rpc["result"]["metadata"]["sessionId"]
    );
    assert!(first_artifact_text(&protojson(&got)).contains("hello grpc"));

    // ListTasks within the task's context.
    let list = c
        .list_tasks(request(
            Who::Anon,
            &app,
            pb::ListTasksRequest {
                tenant: tenant.into(),
                context_id: task.context_id.clone(),
                ..Default::default()
            },
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(list.tasks.len(), 1, "{list:?}");
    assert_eq!(list.tasks[0].id, task.id);

    // CancelTask of a completed task: FAILED_PRECONDITION.
    let cancel = c
        .cancel_task(request(
            Who::Anon,
            &app,
            pb::CancelTaskRequest {
                tenant: tenant.into(),
                id: task.id.clone(),
                ..Default::default()
            },
        ))
        .await;
    assert_status(cancel, Code::FailedPrecondition, "TASK_NOT_CANCELABLE");

    // An unknown task: NOT_FOUND.
    let unknown = c
        .get_task(request(
            Who::Anon,
            &app,
            pb::GetTaskRequest {
                tenant: tenant.into(),
                id: "no-such-task".into(),
                ..Default::default()
            },
        ))
        .await;
    assert_status(unknown, Code::NotFound, "TASK_NOT_FOUND");

    // Another caller's task: NOT_FOUND, as over the other bindings.
    let owners = c
        .send_message(request(Who::Owner, &app, send_request(tenant, "mine")))
        .await
        .unwrap()
        .into_inner();
    let Some(pb::send_message_response::Payload::Task(theirs)) = owners.payload else {
        panic!("a task: {owners:?}");
    };
    let hidden = c
        .get_task(request(
            Who::Anon,
            &app,
            pb::GetTaskRequest {
                tenant: tenant.into(),
                id: theirs.id.clone(),
                ..Default::default()
            },
        ))
        .await;
    assert_status(hidden, Code::NotFound, "TASK_NOT_FOUND");
    app.shutdown().await;
}

#[tokio::test]
async fn streams_are_server_streaming_rpcs() {
    let app = TestApp::spawn().await;
    let iface = grpc_interface(&app, "echo").await;
    let mut c = client(iface["url"].as_str().unwrap()).await;
    let mut stream = c
        .send_streaming_message(request(
            Who::Anon,
            &app,
            send_request("echo", "chunks=3 abc"),
        ))
        .await
        .unwrap()
        .into_inner();
    let mut items = Vec::new();
    while let Some(item) = stream.message().await.unwrap() {
        items.push(item);
    }
    let artifacts = items
        .iter()
        .filter(|i| {
            matches!(
                i.payload,
                Some(pb::stream_response::Payload::ArtifactUpdate(_))
            )
        })
        .count();
    assert_eq!(artifacts, 3, "{items:?}");
    let Some(pb::stream_response::Payload::StatusUpdate(last)) =
        items.last().and_then(|i| i.payload.clone())
    else {
        panic!("ends with a status update: {items:?}");
    };
    let state = last.status.map(|s| s.state).unwrap_or_default();
    assert_eq!(state, pb::TaskState::Completed as i32, "{items:?}");

    // SubscribeToTask of the settled task: its task, then the stream ends.
    let task_id = last.task_id.clone();
    let mut again = c
        .subscribe_to_task(request(
            Who::Anon,
            &app,
            pb::SubscribeToTaskRequest {
                tenant: "echo".into(),
                id: task_id.clone(),
            },
        ))
        .await;
    match &mut again {
        Ok(s) => {
            let mut n = 0;
            while let Ok(Some(_)) = s.get_mut().message().await {
                n += 1;
            }
            assert!(n <= 1, "a settled task's subscription ends at once");
        }
        // Or refused, as over the other bindings: UnsupportedOperation, UNIMPLEMENTED.
        Err(s) => {
            assert_eq!(s.code(), Code::Unimplemented, "{s:?}");
            let info = s.get_details_error_info().unwrap();
            assert_eq!(info.reason, "UNSUPPORTED_OPERATION");
        }
    }
    app.shutdown().await;
}

#[tokio::test]
async fn versions_tenants_and_credentials_are_checked() {
    let app = TestApp::spawn().await;
    let iface = grpc_interface(&app, "echo").await;
    let mut c = client(iface["url"].as_str().unwrap()).await;

    // An A2A-Version this server does not speak: UNIMPLEMENTED (the kit's code).
    let mut req = request(Who::Anon, &app, send_request("echo", "v9"));
    req.metadata_mut()
        .insert("a2a-version", "9.0".parse().unwrap());
    assert_status(
        c.send_message(req).await,
        Code::Unimplemented,
        "VERSION_NOT_SUPPORTED",
    );

    // An unknown tenant: NOT_FOUND, as an unknown Agent is over the other bindings.
    let unknown = c
        .send_message(request(Who::Anon, &app, send_request("no-such-agent", "x")))
        .await;
    assert_eq!(unknown.expect_err("not found").code(), Code::NotFound);
    // No tenant (a client that ignores the interface's `tenant`, as the TCK's does): the
    // default Agent, the one the root card describes, whose GRPC interface names it.
    let (_, _, root) = app.get_json("/.well-known/agent-card.json", false).await;
    let default_agent = root["supportedInterfaces"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["protocolBinding"] == "GRPC")
        .and_then(|i| i["tenant"].as_str())
        .unwrap_or_else(|| panic!("no GRPC tenant on the root card: {root}"))
        .to_string();
    let none = c
        .send_message(request(Who::Anon, &app, send_request("", "x")))
        .await
        .expect("the default Agent answers")
        .into_inner();
    let Some(pb::send_message_response::Payload::Task(task)) = none.payload else {
        panic!("a task: {none:?}");
    };
    let by_name = app.get_task_as(Who::Anon, &default_agent, &task.id).await;
    assert_eq!(by_name["id"], json!(task.id), "{by_name}");

    // A field's error carries a BadRequest naming it.
    let empty = pb::SendMessageRequest {
        tenant: "echo".into(),
        message: Some(pb::Message {
            parts: vec![],
            ..text_message("x")
        }),
        ..Default::default()
    };
    let bad = c.send_message(request(Who::Anon, &app, empty)).await;
    let status = bad.expect_err("invalid params");
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
    let fields = status
        .get_details_bad_request()
        .map(|b| b.field_violations)
        .unwrap_or_default();
    assert!(!fields.is_empty(), "{status:?}");

    // A wrong bearer token is refused before the service, as on every route.
    let mut req = request(Who::Anon, &app, send_request("echo", "x"));
    req.metadata_mut()
        .insert("authorization", "Bearer wrong".parse().unwrap());
    let refused = c.send_message(req).await.expect_err("refused");
    assert_eq!(refused.code(), Code::Unauthenticated, "{refused:?}");

    // Without a token, a gRPC path takes gRPC's content type only (no page can send it
    // cross-site), and the perimeter's refusal arrives as a gRPC status.
    let h2 = reqwest::Client::builder()
        .http2_prior_knowledge()
        .build()
        .unwrap();
    let r = h2
        .post(format!("{}/lf.a2a.v1.A2AService/SendMessage", app.url))
        .header("content-type", "text/plain")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.headers().get("grpc-status").and_then(|v| v.to_str().ok()),
        Some("7"),
        "PERMISSION_DENIED: {:?}",
        r.headers()
    );

    // Every call is audited with its gRPC route.
    let (_, _, audit) = app.get_json("/api/v1/audit?limit=200", true).await;
    let routes: Vec<&str> = audit["records"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["route"].as_str())
        .collect();
    assert!(
        routes.contains(&"GRPC /lf.a2a.v1.A2AService/SendMessage"),
        "{routes:?}"
    );
    app.shutdown().await;
}
