//! The upper limit for `bench/run.sh`: the least an A2A 1.0 JSON-RPC echo server can do over
//! the same HTTP stack as Sextant (axum on tokio) — parse the request with serde and answer.
//! No journal, no runtime, no tasks kept: `SendMessage` answers a completed task echoing the
//! user's text as an artifact named `echo`; `SendStreamingMessage` answers the same four SSE
//! events as the other servers (the task submitted, working, the artifact, completed). The text
//! `chunks=N rest` (N in 1..64) sends the rest in N chunks, by the same rule as Sextant's echo
//! and the SDK peers, so `CHUNKS=` streams carry the same events on every server. Any other
//! method is a JSON-RPC "method not found".
//!
//! The same answers over gRPC (`lf.a2a.v1.A2AService`, HTTP/2 with prior knowledge on the same
//! port, as Sextant serves it): `SendMessage` and `SendStreamingMessage` build the protobuf
//! messages directly; every other RPC is `UNIMPLEMENTED`. So `bench/run.sh`'s gRPC rows have
//! their own upper limit, driven by the same client (`grpc_load`) as Sextant's gRPC row.
//!
//! ```text
//! cargo build --release -p sextant-server --example bare_a2a
//! target/release/examples/bare_a2a [--port 0]
//! ```
//!
//! Once it listens it prints exactly one stdout line, `bare-a2a: listening on
//! http://127.0.0.1:PORT` (port 0: the kernel's choice); the card is at
//! `/.well-known/agent-card.json`, the JSON-RPC endpoint at `/`. SIGTERM stops it (exit 0).
//!
//! It lives here because this crate already depends on everything it uses (axum, hyper,
//! tonic, tokio, serde, serde_json, futures, chrono), so it adds no dependency; of the crate's
//! own code it uses only the generated protobuf messages and service trait
//! (`sextant_server::a2a::grpc::pb`). Like Sextant it sets `TCP_NODELAY` on every connection
//! and tells HTTP/2 from HTTP/1.1 by the connection's first bytes; unlike Sextant it leaves
//! tokio one worker per core (it has no journal writer thread to make room for) and uses the
//! system allocator.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use chrono::{SecondsFormat, Utc};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::service::TowerToHyperService;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use sextant_server::a2a::grpc::pb;
use tonic::Status as GrpcStatus;

const MAX_CHUNKS: usize = 64;

/// The JSON-RPC request: only what the answer needs; anything else is ignored.
#[derive(Deserialize)]
struct Request {
    id: Option<Box<RawValue>>,
    method: String,
    params: Option<Params>,
}

#[derive(Deserialize)]
struct Params {
    message: InMessage,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InMessage {
    message_id: String,
    context_id: Option<String>,
    #[serde(default)]
    parts: Vec<InPart>,
}

#[derive(Deserialize)]
struct InPart {
    text: Option<String>,
}

#[derive(Serialize)]
struct TextPart<'a> {
    text: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Message<'a> {
    message_id: &'a str,
    context_id: &'a str,
    task_id: &'a str,
    role: &'static str,
    parts: Vec<TextPart<'a>>,
}

#[derive(Serialize)]
struct Status<'a> {
    state: &'static str,
    timestamp: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Artifact<'a> {
    artifact_id: &'a str,
    name: &'static str,
    parts: Vec<TextPart<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Task<'a> {
    id: &'a str,
    context_id: &'a str,
    status: Status<'a>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    artifacts: Vec<Artifact<'a>>,
    history: [&'a Message<'a>; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StatusUpdate<'a> {
    task_id: &'a str,
    context_id: &'a str,
    status: Status<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ArtifactUpdate<'a> {
    task_id: &'a str,
    context_id: &'a str,
    artifact: Artifact<'a>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    append: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    last_chunk: bool,
}

/// The `result` of an answer or of one stream event.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
enum Payload<'a> {
    Task(Task<'a>),
    StatusUpdate(StatusUpdate<'a>),
    ArtifactUpdate(ArtifactUpdate<'a>),
}

#[derive(Serialize)]
struct Success<'a> {
    jsonrpc: &'static str,
    id: Option<&'a RawValue>,
    result: Payload<'a>,
}

#[derive(Serialize)]
struct Failure<'a> {
    jsonrpc: &'static str,
    id: Option<&'a RawValue>,
    error: RpcError,
}

#[derive(Serialize)]
struct RpcError {
    code: i32,
    message: String,
}

/// "chunks=N rest" → rest in N near-equal pieces (by character), or `None` when the text does
/// not follow the rule exactly (N one to three ASCII digits, 1..64, then a space).
fn chunked(text: &str) -> Option<Vec<&str>> {
    let (n, rest) = text.strip_prefix("chunks=")?.split_once(' ')?;
    if n.is_empty() || n.len() > 3 || !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let count: usize = n.parse().ok()?;
    if !(1..=MAX_CHUNKS).contains(&count) {
        return None;
    }
    // Byte offsets of every character, and the end: cut at character counts k * len / count.
    let bounds: Vec<usize> = rest
        .char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(rest.len()))
        .collect();
    let chars = bounds.len() - 1;
    Some(
        (0..count)
            .map(|k| &rest[bounds[k * chars / count]..bounds[(k + 1) * chars / count]])
            .collect(),
    )
}

/// Unique ids shaped like the UUIDs the other servers use, so bodies are the same size.
struct Ids(AtomicU64);

impl Ids {
    fn next(&self) -> String {
        let n = self.0.fetch_add(1, Ordering::Relaxed);
        format!("00000000-0000-4000-8000-{n:012x}")
    }
}

/// What every event of one answer shares.
struct Shared<'a> {
    task: &'a str,
    context: &'a str,
    artifact: &'a str,
    now: &'a str,
}

impl<'a> Shared<'a> {
    fn status(&self, state: &'static str) -> Status<'a> {
        Status {
            state,
            timestamp: self.now,
        }
    }

    fn status_update(&self, state: &'static str) -> Payload<'a> {
        Payload::StatusUpdate(StatusUpdate {
            task_id: self.task,
            context_id: self.context,
            status: self.status(state),
        })
    }

    fn artifact(&self, pieces: &[&'a str]) -> Artifact<'a> {
        Artifact {
            artifact_id: self.artifact,
            name: "echo",
            parts: pieces.iter().map(|&text| TextPart { text }).collect(),
        }
    }
}

struct App {
    card: String,
    ids: Ids,
}

async fn serve_card(State(app): State<Arc<App>>) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        app.card.clone(),
    )
        .into_response()
}

fn json_response(body: Vec<u8>) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

fn failure(id: Option<&RawValue>, code: i32, message: String) -> Response {
    let body = Failure {
        jsonrpc: "2.0",
        id,
        error: RpcError { code, message },
    };
    json_response(serde_json::to_vec(&body).unwrap_or_default())
}

async fn rpc(State(app): State<Arc<App>>, body: Bytes) -> Response {
    let request: Request = match serde_json::from_slice(&body) {
        Ok(r) => r,
        Err(e) => return failure(None, -32700, format!("parse error: {e}")),
    };
    let id = request.id.as_deref();
    let streaming = match request.method.as_str() {
        "SendMessage" => false,
        "SendStreamingMessage" => true,
        other => return failure(id, -32601, format!("method not found: {other}")),
    };
    let Some(Params { message }) = request.params else {
        return failure(id, -32602, "params.message is required".to_owned());
    };
    let text = message
        .parts
        .iter()
        .filter_map(|p| p.text.as_deref())
        .collect::<Vec<_>>()
        .join("\n");
    let task_id = app.ids.next();
    let context_id = message.context_id.unwrap_or_else(|| app.ids.next());
    let artifact_id = app.ids.next();
    let pieces = chunked(&text).unwrap_or_else(|| vec![text.as_str()]);
    let now = Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true);
    let shared = Shared {
        task: &task_id,
        context: &context_id,
        artifact: &artifact_id,
        now: &now,
    };
    let user = Message {
        message_id: &message.message_id,
        context_id: &context_id,
        task_id: &task_id,
        role: "ROLE_USER",
        parts: vec![TextPart { text: &text }],
    };
    let success = |result| Success {
        jsonrpc: "2.0",
        id,
        result,
    };

    if !streaming {
        let task = Task {
            id: &task_id,
            context_id: &context_id,
            status: shared.status("TASK_STATE_COMPLETED"),
            artifacts: vec![shared.artifact(&pieces)],
            history: [&user],
        };
        return json_response(
            serde_json::to_vec(&success(Payload::Task(task))).unwrap_or_default(),
        );
    }

    let mut events = vec![
        success(Payload::Task(Task {
            id: &task_id,
            context_id: &context_id,
            status: shared.status("TASK_STATE_SUBMITTED"),
            artifacts: Vec::new(),
            history: [&user],
        })),
        success(shared.status_update("TASK_STATE_WORKING")),
    ];
    for (i, piece) in pieces.iter().enumerate() {
        events.push(success(Payload::ArtifactUpdate(ArtifactUpdate {
            task_id: &task_id,
            context_id: &context_id,
            artifact: shared.artifact(std::slice::from_ref(piece)),
            append: i > 0,
            last_chunk: i + 1 == pieces.len(),
        })));
    }
    events.push(success(shared.status_update("TASK_STATE_COMPLETED")));
    // One SSE frame per event, each its own body chunk, as a server that streams would send.
    let frames: Vec<std::io::Result<Bytes>> = events
        .iter()
        .map(|event| {
            let mut frame = b"data: ".to_vec();
            serde_json::to_writer(&mut frame, event).map_err(std::io::Error::other)?;
            frame.extend_from_slice(b"\n\n");
            Ok(Bytes::from(frame))
        })
        .collect();
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        Body::from_stream(futures::stream::iter(frames)),
    )
        .into_response()
}

/// The gRPC echo: the same answers as [`rpc`], as protobuf messages.
struct Grpc {
    app: Arc<App>,
}

/// The parts of one echo answer, shared by the unary and the streaming RPC.
struct Echo {
    task: String,
    context: String,
    artifact: String,
    user: pb::Message,
    pieces: Vec<String>,
    now: pbjson_types::Timestamp,
}

fn text_part(text: &str) -> pb::Part {
    pb::Part {
        content: Some(pb::part::Content::Text(text.to_owned())),
        ..Default::default()
    }
}

impl Echo {
    fn new(app: &App, request: pb::SendMessageRequest) -> Result<Self, GrpcStatus> {
        let message = request
            .message
            .ok_or_else(|| GrpcStatus::invalid_argument("message is required"))?;
        let text = message
            .parts
            .iter()
            .filter_map(|p| match &p.content {
                Some(pb::part::Content::Text(t)) => Some(t.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n");
        let task = app.ids.next();
        let context = if message.context_id.is_empty() {
            app.ids.next()
        } else {
            message.context_id.clone()
        };
        let pieces = chunked(&text)
            .map(|p| p.into_iter().map(str::to_owned).collect())
            .unwrap_or_else(|| vec![text.clone()]);
        let now = Utc::now();
        let user = pb::Message {
            message_id: message.message_id,
            context_id: context.clone(),
            task_id: task.clone(),
            role: pb::Role::User as i32,
            parts: vec![text_part(&text)],
            ..Default::default()
        };
        Ok(Echo {
            task,
            context,
            artifact: app.ids.next(),
            user,
            pieces,
            now: pbjson_types::Timestamp {
                seconds: now.timestamp(),
                nanos: now.timestamp_subsec_millis() as i32 * 1_000_000,
            },
        })
    }

    fn status(&self, state: pb::TaskState) -> Option<pb::TaskStatus> {
        Some(pb::TaskStatus {
            state: state as i32,
            message: None,
            timestamp: Some(self.now),
        })
    }

    fn artifact(&self, pieces: &[String]) -> pb::Artifact {
        pb::Artifact {
            artifact_id: self.artifact.clone(),
            name: "echo".to_owned(),
            parts: pieces.iter().map(|p| text_part(p)).collect(),
            ..Default::default()
        }
    }

    fn task(&self, state: pb::TaskState, artifacts: Vec<pb::Artifact>) -> pb::Task {
        pb::Task {
            id: self.task.clone(),
            context_id: self.context.clone(),
            status: self.status(state),
            artifacts,
            history: vec![self.user.clone()],
            metadata: None,
        }
    }

    fn status_update(&self, state: pb::TaskState) -> pb::StreamResponse {
        pb::StreamResponse {
            payload: Some(pb::stream_response::Payload::StatusUpdate(
                pb::TaskStatusUpdateEvent {
                    task_id: self.task.clone(),
                    context_id: self.context.clone(),
                    status: self.status(state),
                    metadata: None,
                },
            )),
        }
    }

    /// The stream's events: the task submitted, working, one artifact update per piece,
    /// completed.
    fn events(&self) -> Vec<pb::StreamResponse> {
        let mut events = vec![
            pb::StreamResponse {
                payload: Some(pb::stream_response::Payload::Task(
                    self.task(pb::TaskState::Submitted, Vec::new()),
                )),
            },
            self.status_update(pb::TaskState::Working),
        ];
        for (i, piece) in self.pieces.iter().enumerate() {
            events.push(pb::StreamResponse {
                payload: Some(pb::stream_response::Payload::ArtifactUpdate(
                    pb::TaskArtifactUpdateEvent {
                        task_id: self.task.clone(),
                        context_id: self.context.clone(),
                        artifact: Some(self.artifact(std::slice::from_ref(piece))),
                        append: i > 0,
                        last_chunk: i + 1 == self.pieces.len(),
                        metadata: None,
                    },
                )),
            });
        }
        events.push(self.status_update(pb::TaskState::Completed));
        events
    }
}

type Reply<T> = Result<tonic::Response<T>, GrpcStatus>;
type Events = futures::stream::Iter<std::vec::IntoIter<Result<pb::StreamResponse, GrpcStatus>>>;

#[tonic::async_trait]
impl pb::a2a_service_server::A2aService for Grpc {
    async fn send_message(
        &self,
        request: tonic::Request<pb::SendMessageRequest>,
    ) -> Reply<pb::SendMessageResponse> {
        let echo = Echo::new(&self.app, request.into_inner())?;
        let task = echo.task(pb::TaskState::Completed, vec![echo.artifact(&echo.pieces)]);
        Ok(tonic::Response::new(pb::SendMessageResponse {
            payload: Some(pb::send_message_response::Payload::Task(task)),
        }))
    }

    type SendStreamingMessageStream = Events;

    async fn send_streaming_message(
        &self,
        request: tonic::Request<pb::SendMessageRequest>,
    ) -> Reply<Events> {
        let echo = Echo::new(&self.app, request.into_inner())?;
        let events: Vec<_> = echo.events().into_iter().map(Ok).collect();
        Ok(tonic::Response::new(futures::stream::iter(events)))
    }

    async fn get_task(&self, _: tonic::Request<pb::GetTaskRequest>) -> Reply<pb::Task> {
        Err(GrpcStatus::unimplemented("bare"))
    }

    async fn list_tasks(
        &self,
        _: tonic::Request<pb::ListTasksRequest>,
    ) -> Reply<pb::ListTasksResponse> {
        Err(GrpcStatus::unimplemented("bare"))
    }

    async fn cancel_task(&self, _: tonic::Request<pb::CancelTaskRequest>) -> Reply<pb::Task> {
        Err(GrpcStatus::unimplemented("bare"))
    }

    type SubscribeToTaskStream = Events;

    async fn subscribe_to_task(
        &self,
        _: tonic::Request<pb::SubscribeToTaskRequest>,
    ) -> Reply<Events> {
        Err(GrpcStatus::unimplemented("bare"))
    }

    async fn create_task_push_notification_config(
        &self,
        _: tonic::Request<pb::TaskPushNotificationConfig>,
    ) -> Reply<pb::TaskPushNotificationConfig> {
        Err(GrpcStatus::unimplemented("bare"))
    }

    async fn get_task_push_notification_config(
        &self,
        _: tonic::Request<pb::GetTaskPushNotificationConfigRequest>,
    ) -> Reply<pb::TaskPushNotificationConfig> {
        Err(GrpcStatus::unimplemented("bare"))
    }

    async fn list_task_push_notification_configs(
        &self,
        _: tonic::Request<pb::ListTaskPushNotificationConfigsRequest>,
    ) -> Reply<pb::ListTaskPushNotificationConfigsResponse> {
        Err(GrpcStatus::unimplemented("bare"))
    }

    async fn get_extended_agent_card(
        &self,
        _: tonic::Request<pb::GetExtendedAgentCardRequest>,
    ) -> Reply<pb::AgentCard> {
        Err(GrpcStatus::unimplemented("bare"))
    }

    async fn delete_task_push_notification_config(
        &self,
        _: tonic::Request<pb::DeleteTaskPushNotificationConfigRequest>,
    ) -> Reply<pbjson_types::Empty> {
        Err(GrpcStatus::unimplemented("bare"))
    }
}

/// Whether a connection opens with the HTTP/2 preface ("PRI …"; an HTTP/1.1 request line
/// starts with its method). Peeks, so hyper reads the bytes again.
async fn is_h2(tcp: &tokio::net::TcpStream) -> std::io::Result<bool> {
    const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
    let mut buf = [0u8; PREFACE.len()];
    loop {
        let n = tcp.peek(&mut buf).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        if buf[..n] != PREFACE[..n] {
            return Ok(false);
        }
        if n == PREFACE.len() {
            return Ok(true);
        }
        // Peeking at bytes already there does not wait for more.
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    }
}

/// Serves one connection, HTTP/2 or HTTP/1.1 by its first bytes, until it ends.
async fn serve_connection(tcp: tokio::net::TcpStream, router: Router) {
    // Without it Nagle + delayed ACK hold back small keep-alive answers.
    let _ = tcp.set_nodelay(true);
    let Ok(h2) = is_h2(&tcp).await else { return };
    let io = TokioIo::new(tcp);
    let service = TowerToHyperService::new(router);
    let _ = if h2 {
        hyper::server::conn::http2::Builder::new(TokioExecutor::new())
            .serve_connection(io, service)
            .await
    } else {
        hyper::server::conn::http1::Builder::new()
            .serve_connection(io, service)
            .await
    };
}

fn port_arg() -> std::io::Result<u16> {
    let mut args = std::env::args().skip(1);
    let mut port = 0;
    while let Some(arg) = args.next() {
        let value = match arg.as_str() {
            "--port" => args.next(),
            _ => None,
        };
        port = value
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| std::io::Error::other("usage: bare_a2a [--port PORT]"))?;
    }
    Ok(port)
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port_arg()?)).await?;
    let base = format!("http://{}", listener.local_addr()?);
    let card = serde_json::json!({
        "name": "bare-a2a",
        "description": "The least an A2A echo server can do (benchmark upper limit)",
        "version": "1.0.0",
        "supportedInterfaces": [
            {"url": format!("{base}/"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
        ],
        "capabilities": {"streaming": true, "pushNotifications": false},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "echo", "name": "Echo", "description": "Returns the input text", "tags": ["echo"]}],
    });
    let app = Arc::new(App {
        card: card.to_string(),
        ids: Ids(AtomicU64::new(1)),
    });
    let grpc = pb::a2a_service_server::A2aServiceServer::new(Grpc { app: app.clone() });
    let router = Router::new()
        .route("/.well-known/agent-card.json", get(serve_card))
        .route("/", post(rpc))
        .route_service("/lf.a2a.v1.A2AService/{*method}", grpc)
        .with_state(app);
    // Rust's stdout is line-buffered: the line is out before the first request can come.
    println!("bare-a2a: listening on {base}");
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                // A failed accept (out of descriptors) is the client's problem to see.
                let Ok((tcp, _)) = accepted else { continue };
                tokio::spawn(serve_connection(tcp, router.clone()));
            }
            _ = term.recv() => return Ok(()),
        }
    }
}
