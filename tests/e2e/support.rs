//! Shared harness: a Sextant started on a temp data dir and `127.0.0.1:0`, plus HTTP, JSON-RPC
//! and SSE helpers. Timeouts here are safety nets that turn a hang into a failure; no test
//! sleeps to wait for readiness. [`fake_peer`]: a fake A2A peer for the outbound tests.

pub mod fake_peer;

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use futures::StreamExt;
use futures::stream::BoxStream;
use reqwest::header::{CONTENT_TYPE, HeaderMap};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// The longest any single step (one request, one SSE frame) may take before the test fails.
pub const STEP: Duration = Duration::from_secs(30);

pub const ERROR_INFO: &str = "type.googleapis.com/google.rpc.ErrorInfo";

/// Starts Sextant on a data dir another Sextant of this test process has just stopped using.
///
/// All e2e tests share one process, so a child process another test forks at that moment holds
/// a copy of every descriptor, the data-dir lock's among them, until it execs (the lock is
/// marked close-on-exec; Linux has no close-on-fork). On a loaded machine that gap lasted long
/// enough for a restart to be refused as "another Sextant is already running". Only that
/// refusal is retried, for at most [`STEP`]; every other result, failures included, is returned
/// as it is.
pub async fn start_after_stop(config: sextant::Config) -> anyhow::Result<sextant::Running> {
    let deadline = tokio::time::Instant::now() + STEP;
    loop {
        match sextant::start(config.clone()).await {
            Err(e)
                if format!("{e:#}").contains("another Sextant is already running")
                    && tokio::time::Instant::now() < deadline =>
            {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            other => return other,
        }
    }
}

/// Who is calling: the anonymous loopback caller (no Authorization) or the console owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Who {
    Anon,
    Owner,
}

/// A unique id for messageIds and contextIds.
pub fn uid(prefix: &str) -> String {
    static N: AtomicU64 = AtomicU64::new(1);
    let n = N.fetch_add(1, Ordering::Relaxed);
    format!("{prefix}-{}-{n}", std::process::id())
}

/// A 1.0 user message with one text part and a fresh messageId.
pub fn msg(text: &str) -> Value {
    msg_with_id(&uid("m"), text)
}

/// A 1.0 user message with the given messageId.
pub fn msg_with_id(message_id: &str, text: &str) -> Value {
    json!({
        "messageId": message_id,
        "role": "ROLE_USER",
        "parts": [{ "text": text }],
    })
}

/// The message `m` with extra top-level fields (contextId, taskId, ...).
pub fn with(mut m: Value, extra: Value) -> Value {
    if let (Some(o), Value::Object(e)) = (m.as_object_mut(), extra) {
        o.extend(e);
    }
    m
}

/// One `[[agents]]` entry running `sh -c script` through the exec engine.
pub fn exec_agent(id: &str, script: &str) -> String {
    format!(
        "[[agents]]\nid = {}\nname = {}\ndescription = \"e2e exec agent\"\nengine = {{ kind = \"exec\", command = [\"sh\", \"-c\", {}] }}\n\n",
        toml_str(id),
        toml_str(id),
        toml_str(script)
    )
}

fn toml_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The config of a Sextant on `dir`, listening on `host`, port 0.
pub fn config(dir: &std::path::Path, host: &str, public_url: Option<&str>) -> sextant::Config {
    sextant::Config {
        data_dir: dir.to_path_buf(),
        host: host.into(),
        port: 0,
        public_url: public_url.map(String::from),
        conformance: false,
        turns: sextant::TurnSettings::default(),
    }
}

/// The config of a Sextant on `dir` and 127.0.0.1:0, as most tests run it.
pub fn loopback(dir: &std::path::Path) -> sextant::Config {
    config(dir, "127.0.0.1", None)
}

/// An HTTP client for a test server: no proxy, so a proxy in the environment cannot get in
/// the way of 127.0.0.1.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("http client")
}

/// A running Sextant on a temp data dir.
pub struct TestApp {
    pub running: sextant::Running,
    pub dir: tempfile::TempDir,
    pub conformance: bool,
    pub url: String,
    pub token: String,
    pub client: reqwest::Client,
}

impl TestApp {
    /// Echo only.
    pub async fn spawn() -> TestApp {
        Self::spawn_with(false, None).await
    }

    /// With the conformance agent and/or an `agents.toml` (`{dir}` in it is replaced by the
    /// data dir's path).
    pub async fn spawn_with(conformance: bool, agents_toml: Option<&str>) -> TestApp {
        let dir = tempfile::tempdir().expect("temp dir");
        if let Some(toml) = agents_toml {
            let toml = toml.replace("{dir}", &dir.path().display().to_string());
            std::fs::write(dir.path().join("agents.toml"), toml).expect("write agents.toml");
        }
        Self::start_in(dir, conformance).await
    }

    /// Starts Sextant on an existing data dir.
    pub async fn start_in(dir: tempfile::TempDir, conformance: bool) -> TestApp {
        let running = start_after_stop(sextant::Config {
            conformance,
            ..loopback(dir.path())
        })
        .await
        .expect("sextant starts");
        Self::running_in(running, dir, conformance)
    }

    /// The harness around a Sextant already started on `dir` (with `conformance` as started).
    pub fn running_in(
        running: sextant::Running,
        dir: tempfile::TempDir,
        conformance: bool,
    ) -> TestApp {
        TestApp {
            url: running.url(),
            token: running.token.clone(),
            running,
            dir,
            conformance,
            client: client(),
        }
    }

    /// Shuts down cleanly (fails the test if shutdown reports an error).
    pub async fn shutdown(self) {
        self.running.shutdown().await.expect("clean shutdown");
    }

    /// Shuts down and starts again on the same data dir (a new port).
    pub async fn restart(self) -> TestApp {
        let TestApp {
            running,
            dir,
            conformance,
            ..
        } = self;
        running.shutdown().await.expect("clean shutdown");
        Self::start_in(dir, conformance).await
    }

    pub fn a2a_url(&self, agent: &str) -> String {
        format!("{}/api/v1/agents/{agent}/a2a", self.url)
    }

    fn authorize(&self, who: Who, req: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match who {
            Who::Anon => req,
            Who::Owner => req.bearer_auth(&self.token),
        }
    }

    /// POSTs a JSON-RPC body as `who` with `A2A-Version: 1.0` plus `headers`; the raw response.
    pub async fn post_rpc(
        &self,
        who: Who,
        agent: &str,
        headers: &[(&str, &str)],
        body: Value,
    ) -> reqwest::Response {
        let mut req = self
            .client
            .post(self.a2a_url(agent))
            .header(CONTENT_TYPE, "application/json")
            .header("A2A-Version", "1.0");
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        send(self.authorize(who, req).body(body.to_string())).await
    }

    /// POSTs raw bytes to `path` with exactly the given headers (no A2A-Version added).
    pub async fn post_raw(
        &self,
        path: &str,
        headers: &[(&str, &str)],
        body: impl Into<reqwest::Body>,
    ) -> reqwest::Response {
        let mut req = self.client.post(format!("{}{path}", self.url));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        send(req.body(body)).await
    }

    /// A JSON-RPC call as the anonymous caller; the whole response object.
    pub async fn rpc(&self, agent: &str, method: &str, params: Value) -> Value {
        self.rpc_as(Who::Anon, agent, method, params).await
    }

    /// A JSON-RPC call as `who`; the whole response object (HTTP 200, JSON).
    pub async fn rpc_as(&self, who: Who, agent: &str, method: &str, params: Value) -> Value {
        let id = uid("rpc");
        let resp = self
            .post_rpc(
                who,
                agent,
                &[],
                json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }),
            )
            .await;
        let body = json_body(resp, StatusCode::OK).await;
        assert_eq!(body["jsonrpc"], "2.0", "{body}");
        assert_eq!(
            body["id"],
            json!(id),
            "the response echoes the request id: {body}"
        );
        body
    }

    /// SendMessage as `who`; the `result` (panics on a JSON-RPC error).
    pub async fn send_as(&self, who: Who, agent: &str, params: Value) -> Value {
        let r = self.rpc_as(who, agent, "SendMessage", params).await;
        assert!(r.get("error").is_none(), "SendMessage failed: {r}");
        r["result"].clone()
    }

    /// Blocking SendMessage of `message` as the anonymous caller; the task.
    pub async fn send_task(&self, agent: &str, message: Value) -> Value {
        self.send_task_as(Who::Anon, agent, message).await
    }

    pub async fn send_task_as(&self, who: Who, agent: &str, message: Value) -> Value {
        let result = self
            .send_as(who, agent, json!({ "message": message }))
            .await;
        assert!(result["task"].is_object(), "expected a task: {result}");
        result["task"].clone()
    }

    /// SendMessage with `returnImmediately: true`; the task as first accepted.
    pub async fn submit_as(&self, who: Who, agent: &str, message: Value) -> Value {
        let result = self
            .send_as(
                who,
                agent,
                json!({ "message": message, "configuration": { "returnImmediately": true } }),
            )
            .await;
        assert!(result["task"].is_object(), "expected a task: {result}");
        result["task"].clone()
    }

    /// GetTask as `who`; the task (panics on an error).
    pub async fn get_task_as(&self, who: Who, agent: &str, task_id: &str) -> Value {
        let r = self
            .rpc_as(who, agent, "GetTask", json!({ "id": task_id }))
            .await;
        assert!(r.get("error").is_none(), "GetTask failed: {r}");
        r["result"].clone()
    }

    /// Starts a streaming method as `who`; asserts the response is an SSE stream.
    pub async fn stream_as(
        &self,
        who: Who,
        agent: &str,
        method: &str,
        params: Value,
        headers: &[(&str, &str)],
    ) -> Sse {
        let body =
            json!({ "jsonrpc": "2.0", "id": "stream-1", "method": method, "params": params });
        let resp = self.post_rpc(who, agent, headers, body).await;
        Sse::from_response(resp)
    }

    /// Waits (by subscribing, no polling) until the task is terminal, then returns GetTask.
    pub async fn wait_terminal(&self, who: Who, agent: &str, task_id: &str) -> Value {
        let resp = self
            .post_rpc(
                who,
                agent,
                &[],
                json!({ "jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask",
                        "params": { "id": task_id } }),
            )
            .await;
        assert_eq!(resp.status(), StatusCode::OK);
        if content_type(resp.headers()).starts_with("text/event-stream") {
            let frames = Sse::from_response(resp).rest().await;
            assert!(
                !frames.is_empty(),
                "a subscription yields at least the task"
            );
        } else {
            // Already terminal: the subscription is refused with a plain JSON error.
            let body = json_body(resp, StatusCode::OK).await;
            assert_rpc_error(&body, -32004);
        }
        let task = self.get_task_as(who, agent, task_id).await;
        assert!(
            is_terminal(state(&task)),
            "not terminal after its stream ended: {task}"
        );
        task
    }

    /// GET `path` with the owner token (when `token`), the status and JSON body.
    pub async fn get_json(&self, path: &str, token: bool) -> (StatusCode, HeaderMap, Value) {
        let who = if token { Who::Owner } else { Who::Anon };
        self.request(who, Method::GET, path, None).await
    }

    /// One API request as `who` (see [`api_request`]); the status, headers and JSON body
    /// (Null when empty; a body that is not JSON fails the test).
    pub async fn request(
        &self,
        who: Who,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, HeaderMap, Value) {
        let bearer = (who == Who::Owner).then_some(self.token.as_str());
        let req = api_request(&self.client, &self.url, method, path, bearer, body);
        json_or_null(send(req).await).await
    }

    /// GET an SSE endpoint with the owner token and optional Last-Event-ID.
    pub async fn get_sse(&self, path: &str, last_event_id: Option<i64>) -> Sse {
        let mut req = self
            .client
            .get(format!("{}{path}", self.url))
            .bearer_auth(&self.token);
        if let Some(id) = last_event_id {
            req = req.header("Last-Event-ID", id.to_string());
        }
        let resp = send(req).await;
        assert_eq!(resp.status(), StatusCode::OK, "GET {path}");
        Sse::from_response(resp)
    }

    /// `total` of the console's `/api/v1/tasks` (every caller's tasks).
    pub async fn tasks_total(&self) -> u64 {
        let (status, _, body) = self.get_json("/api/v1/tasks", true).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body["total"].as_u64().expect("total")
    }
}

/// Sends a request; a request that hangs fails the test after [`STEP`].
pub async fn send(req: reqwest::RequestBuilder) -> reqwest::Response {
    tokio::time::timeout(STEP, req.send())
        .await
        .expect("request timed out")
        .expect("request sent")
}

/// A request to `{base}{path}` with `bearer` (when given) and a JSON body (when given). Every
/// write gets `Content-Type: application/json`, body or not: the API asks for it on every
/// write, and the perimeter refuses a tokenless write without it.
pub fn api_request(
    client: &reqwest::Client,
    base: &str,
    method: Method,
    path: &str,
    bearer: Option<&str>,
    body: Option<Value>,
) -> reqwest::RequestBuilder {
    let write = method != Method::GET && method != Method::DELETE;
    let mut req = client.request(method, format!("{base}{path}"));
    if let Some(t) = bearer {
        req = req.bearer_auth(t);
    }
    if write {
        req = req.header(CONTENT_TYPE, "application/json");
    }
    if let Some(b) = body {
        req = req.body(b.to_string());
    }
    req
}

/// The status, headers and JSON body of a response: Null when the body is empty; a body that
/// is not JSON fails the test.
pub async fn json_or_null(resp: reqwest::Response) -> (StatusCode, HeaderMap, Value) {
    let status = resp.status();
    let headers = resp.headers().clone();
    let text = resp.text().await.expect("body");
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
    };
    (status, headers, body)
}

pub fn content_type(h: &HeaderMap) -> String {
    h.get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// Asserts the status and a JSON Content-Type, and parses the body.
pub async fn json_body(resp: reqwest::Response, status: StatusCode) -> Value {
    let got = resp.status();
    let ct = content_type(resp.headers());
    let text = tokio::time::timeout(STEP, resp.text())
        .await
        .expect("body timed out")
        .expect("body");
    assert_eq!(got, status, "unexpected status; body: {text}");
    assert!(
        ct.starts_with("application/json"),
        "Content-Type {ct:?} is not JSON; body: {text}"
    );
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// The JSON-RPC error code of a response (panics when it is not an error).
pub fn error_code(resp: &Value) -> i64 {
    resp["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("expected a JSON-RPC error: {resp}"))
}

/// Asserts a JSON-RPC error with `code` in the A2A shape: the error object has exactly
/// `code`, `message` and `data`, and `data[0]` is a google.rpc.ErrorInfo in the a2a domain.
/// Returns the error object.
pub fn assert_rpc_error(resp: &Value, code: i64) -> Value {
    assert_eq!(resp["jsonrpc"], "2.0", "{resp}");
    assert!(
        resp.get("id").is_some(),
        "an error response has an id: {resp}"
    );
    assert!(
        resp.get("result").is_none(),
        "an error has no result: {resp}"
    );
    assert_eq!(error_code(resp), code, "{resp}");
    let err = &resp["error"];
    let mut keys: Vec<&str> = err
        .as_object()
        .expect("error object")
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(keys, ["code", "data", "message"], "{resp}");
    assert!(
        err["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{resp}"
    );
    let info = &err["data"][0];
    assert_eq!(info["@type"], ERROR_INFO, "{resp}");
    assert_eq!(info["domain"], "a2a-protocol.org", "{resp}");
    assert!(
        info["reason"].as_str().is_some_and(|r| !r.is_empty()),
        "{resp}"
    );
    err.clone()
}

pub fn state(task: &Value) -> &str {
    task["status"]["state"].as_str().unwrap_or("")
}

pub fn is_terminal(state: &str) -> bool {
    matches!(
        state,
        "TASK_STATE_COMPLETED"
            | "TASK_STATE_FAILED"
            | "TASK_STATE_CANCELED"
            | "TASK_STATE_REJECTED"
    )
}

/// Lifecycle rank of a state: a task's states never go down this order within one turn.
pub fn rank(state: &str) -> u8 {
    match state {
        "TASK_STATE_SUBMITTED" => 1,
        "TASK_STATE_WORKING" => 2,
        "TASK_STATE_INPUT_REQUIRED" | "TASK_STATE_AUTH_REQUIRED" => 3,
        s if is_terminal(s) => 4,
        other => panic!("unknown task state {other:?}"),
    }
}

/// The concatenated text parts of the first artifact.
pub fn first_artifact_text(task: &Value) -> String {
    task["artifacts"][0]["parts"]
        .as_array()
        .map(|parts| {
            parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<String>()
        })
        .unwrap_or_default()
}

/// The messageIds of the user messages in a task's history, in order.
pub fn user_message_ids(task: &Value) -> Vec<String> {
    task["history"]
        .as_array()
        .map(|h| {
            h.iter()
                .filter(|m| m["role"] == "ROLE_USER")
                .filter_map(|m| m["messageId"].as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// One SSE event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub id: Option<String>,
    pub event: Option<String>,
    pub data: String,
}

impl Frame {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.data)
            .unwrap_or_else(|e| panic!("SSE data is not JSON ({e}): {}", self.data))
    }

    /// The SSE id as an integer (a journal seq).
    pub fn seq(&self) -> i64 {
        self.id
            .as_deref()
            .and_then(|i| i.parse().ok())
            .unwrap_or_else(|| panic!("SSE id is not an integer: {self:?}"))
    }
}

/// An SSE response being read frame by frame.
pub struct Sse {
    pub headers: HeaderMap,
    body: BoxStream<'static, reqwest::Result<Vec<u8>>>,
    buf: Vec<u8>,
    closed: bool,
}

impl Sse {
    /// Wraps a response that must be `200 text/event-stream`.
    pub fn from_response(resp: reqwest::Response) -> Sse {
        let status = resp.status();
        let headers = resp.headers().clone();
        assert_eq!(status, StatusCode::OK, "stream status");
        assert!(
            content_type(&headers).starts_with("text/event-stream"),
            "expected an SSE stream, got Content-Type {:?}",
            content_type(&headers)
        );
        Sse {
            headers,
            body: resp.bytes_stream().map(|c| c.map(|b| b.to_vec())).boxed(),
            buf: Vec::new(),
            closed: false,
        }
    }

    /// The next frame, or `None` when the server closed the stream. Panics after [`STEP`].
    pub async fn next_frame(&mut self) -> Option<Frame> {
        self.next_frame_within(STEP)
            .await
            .expect("no SSE frame within the safety timeout")
    }

    /// The next frame within `limit`: `Err(())` on timeout, `Ok(None)` when closed.
    pub async fn next_frame_within(&mut self, limit: Duration) -> Result<Option<Frame>, ()> {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            if let Some(frame) = self.take_frame() {
                return Ok(Some(frame));
            }
            if self.closed {
                return Ok(None);
            }
            match tokio::time::timeout_at(deadline, self.body.next()).await {
                Err(_) => return Err(()),
                Ok(Some(Ok(chunk))) => self.buf.extend_from_slice(&chunk),
                Ok(Some(Err(e))) => panic!("SSE stream failed: {e}"),
                Ok(None) => self.closed = true,
            }
        }
    }

    /// Every remaining frame until the server closes the stream.
    pub async fn rest(mut self) -> Vec<Frame> {
        let mut out = Vec::new();
        while let Some(f) = self.next_frame().await {
            out.push(f);
        }
        out
    }

    /// Parses one complete event out of the buffer, skipping comment-only blocks.
    fn take_frame(&mut self) -> Option<Frame> {
        loop {
            let end = self.buf.windows(2).position(|w| w == b"\n\n")?;
            let block: Vec<u8> = self.buf.drain(..end + 2).collect();
            let block = String::from_utf8(block).expect("an SSE event is UTF-8");
            let mut frame = Frame {
                id: None,
                event: None,
                data: String::new(),
            };
            let mut has_data = false;
            for line in block.lines() {
                let line = line.strip_suffix('\r').unwrap_or(line);
                if line.is_empty() || line.starts_with(':') {
                    continue;
                }
                let (field, value) = match line.split_once(':') {
                    Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
                    None => (line, ""),
                };
                match field {
                    "id" => frame.id = Some(value.to_string()),
                    "event" => frame.event = Some(value.to_string()),
                    "data" => {
                        if has_data {
                            frame.data.push('\n');
                        }
                        frame.data.push_str(value);
                        has_data = true;
                    }
                    _ => {}
                }
            }
            if has_data || frame.id.is_some() || frame.event.is_some() {
                return Some(frame);
            }
        }
    }
}

/// Starts this test binary again as a child that runs only the ignored test `test` (a Sextant
/// serving on the data dir in `env`, to be killed with `kill -9`); the child and its URL.
pub async fn child_sextant(
    test: &str,
    env: &str,
    dir: &std::path::Path,
) -> (std::process::Child, String) {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.env(env, dir);
    child_sextant_with(test, cmd).await
}

/// [`child_sextant`] with the child's command as the caller prepared it (its environment).
pub async fn child_sextant_with(
    test: &str,
    mut cmd: std::process::Command,
) -> (std::process::Child, String) {
    use std::io::BufRead;
    let mut child = cmd
        .args(["--exact", test, "--ignored", "--nocapture"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let url = tokio::task::spawn_blocking(move || {
        std::io::BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .find_map(|l| l.strip_prefix("SEXTANT_URL=").map(String::from))
    })
    .await
    .unwrap()
    .expect("the child Sextant printed its URL");
    (child, url)
}

/// Whether process `pid` has ended (gone, or a zombie nobody reaped yet).
pub fn dead(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

/// Waits (bounded by `limit`) until `pid` has ended; whether it did.
pub async fn ends_within(pid: i32, limit: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    while tokio::time::Instant::now() < deadline {
        if dead(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    dead(pid)
}
