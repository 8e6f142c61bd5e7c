//! The harness for a Sextant that checks credentials: JWT verification with a test issuer,
//! the owner token, and request helpers that send any credential and headers. Shared by the
//! auth matrix and the perimeter tests.

use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::{api_request, client, loopback, send, uid};

pub const ISS: &str = "https://idp.test";
pub const SECRET: &str = "e2e-jwt-secret-0123456789abcdef-0123456789";

/// `security.toml`: JWT verification (HS256, the test secret) plus `extra`.
pub fn security_toml(extra: &str) -> String {
    format!(
        "[jwt]\nissuer = \"{ISS}\"\naudience = \"sextant\"\nalgorithm = \"HS256\"\n\
         secret_file = \"jwt.secret\"\n\n{extra}"
    )
}

/// A JWT from the test issuer for `sub` (acting agent `act`), valid for 10 minutes.
pub fn jwt(sub: &str, act: Option<&str>) -> String {
    let exp = jsonwebtoken::get_current_timestamp() + 600;
    let mut claims = json!({ "iss": ISS, "aud": "sextant", "exp": exp, "sub": sub });
    if let Some(a) = act {
        claims["act"] = json!({ "sub": a });
    }
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &claims,
        &jsonwebtoken::EncodingKey::from_secret(SECRET.as_bytes()).unwrap(),
    )
    .unwrap()
}

/// Which A2A binding a test call goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Binding {
    JsonRpc,
    HttpJson,
}

/// A Sextant with JWT verification, started on a temp data dir.
pub struct Secure {
    pub running: sextant::Running,
    pub dir: tempfile::TempDir,
    pub url: String,
    pub owner: String,
    pub client: reqwest::Client,
}

/// Writes `agents.toml`, `security.toml` (with `security_extra`) and the JWT secret into a new
/// data dir, and starts Sextant on 127.0.0.1.
pub async fn spawn(agents_toml: &str, security_extra: &str) -> Secure {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("agents.toml"), agents_toml).unwrap();
    std::fs::write(
        dir.path().join("security.toml"),
        security_toml(security_extra),
    )
    .unwrap();
    std::fs::write(dir.path().join("jwt.secret"), SECRET).unwrap();
    start_in(dir).await
}

pub async fn start_in(dir: tempfile::TempDir) -> Secure {
    let running = sextant::start(loopback(dir.path()))
        .await
        .expect("sextant starts");
    Secure {
        url: running.url(),
        owner: running.token.clone(),
        running,
        dir,
        client: client(),
    }
}

impl Secure {
    pub async fn shutdown(self) {
        self.running.shutdown().await.expect("clean shutdown");
    }

    pub async fn restart(self) -> Secure {
        let Secure { running, dir, .. } = self;
        running.shutdown().await.expect("clean shutdown");
        start_in(dir).await
    }

    /// One request (see [`api_request`]) with extra `headers`; status, headers and JSON body:
    /// Null when empty or not JSON, since some refusals (a 413) and the UI page are not JSON.
    pub async fn req(
        &self,
        bearer: Option<&str>,
        method: Method,
        path: &str,
        body: Option<Value>,
        headers: &[(&str, &str)],
    ) -> (StatusCode, HeaderMap, Value) {
        let mut req = api_request(&self.client, &self.url, method, path, bearer, body);
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let resp = send(req).await;
        let status = resp.status();
        let headers = resp.headers().clone();
        let text = resp.text().await.unwrap_or_default();
        (
            status,
            headers,
            serde_json::from_str(&text).unwrap_or(Value::Null),
        )
    }

    /// GET `path` with `bearer` (when given); as [`Secure::req`].
    pub async fn get(&self, bearer: Option<&str>, path: &str) -> (StatusCode, HeaderMap, Value) {
        self.req(bearer, Method::GET, path, None, &[]).await
    }

    /// A JSON-RPC call at `{prefix}/a2a` (prefix: `/api/v1/agents/ID` or the assistant one).
    pub async fn rpc(
        &self,
        bearer: Option<&str>,
        prefix: &str,
        method: &str,
        params: Value,
    ) -> (StatusCode, Value) {
        let body =
            json!({ "jsonrpc": "2.0", "id": uid("rpc"), "method": method, "params": params });
        let (status, _, v) = self
            .req(
                bearer,
                Method::POST,
                &format!("{prefix}/a2a"),
                Some(body),
                &[("A2A-Version", "1.0")],
            )
            .await;
        (status, v)
    }

    /// SendMessage with `params` at `{prefix}/a2a`; the JSON-RPC response (result or error).
    pub async fn send_message(&self, bearer: Option<&str>, prefix: &str, params: Value) -> Value {
        self.rpc(bearer, prefix, "SendMessage", params).await.1
    }

    /// An A2A call through `binding`, answered in JSON-RPC's shape whatever the binding, so
    /// one set of assertions covers both: over HTTP+JSON a result is `{"result": body}` and
    /// an AIP-193 error `{"error": {code, message, data}}`, its code read back from the
    /// ErrorInfo reason and `data` its `details`. The HTTP status is the binding's own.
    pub async fn call(
        &self,
        binding: Binding,
        bearer: Option<&str>,
        prefix: &str,
        method: &str,
        params: Value,
    ) -> (StatusCode, Value) {
        if binding == Binding::JsonRpc {
            return self.rpc(bearer, prefix, method, params).await;
        }
        let id = params["id"].as_str().unwrap_or_default().to_string();
        let (verb, path, body) = match method {
            "SendMessage" => (Method::POST, format!("{prefix}/message:send"), Some(params)),
            "GetTask" => (Method::GET, format!("{prefix}/tasks/{id}"), None),
            "CancelTask" => (
                Method::POST,
                format!("{prefix}/tasks/{id}:cancel"),
                Some(params),
            ),
            "SubscribeToTask" => (
                Method::POST,
                format!("{prefix}/tasks/{id}:subscribe"),
                Some(params),
            ),
            "ListTasks" => {
                let query: Vec<String> = params
                    .as_object()
                    .into_iter()
                    .flatten()
                    .map(|(k, v)| match v {
                        Value::String(s) => format!("{k}={s}"),
                        other => format!("{k}={other}"),
                    })
                    .collect();
                (
                    Method::GET,
                    format!("{prefix}/tasks?{}", query.join("&")),
                    None,
                )
            }
            "GetExtendedAgentCard" => (Method::GET, format!("{prefix}/extendedAgentCard"), None),
            other => panic!("no HTTP+JSON route for {other} in this harness"),
        };
        let (status, headers, v) = self
            .req(bearer, verb, &path, body, &[("A2A-Version", "1.0")])
            .await;
        let content_type = headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        assert!(
            content_type.starts_with("application/json"),
            "{method} over HTTP+JSON answered {content_type:?} ({status}): {v}"
        );
        if status.is_success() {
            return (status, json!({ "result": v }));
        }
        let e = &v["error"];
        assert_eq!(
            e["code"],
            status.as_u16(),
            "AIP-193: error.code is the status: {v}"
        );
        let reason = e["details"][0]["reason"].as_str().unwrap_or_default();
        let code = match reason {
            "INVALID_REQUEST" => -32600,
            "METHOD_NOT_FOUND" => -32601,
            "INVALID_PARAMS" => -32602,
            "INTERNAL_ERROR" => -32603,
            "TASK_NOT_FOUND" => -32001,
            "TASK_NOT_CANCELABLE" => -32002,
            "PUSH_NOTIFICATION_NOT_SUPPORTED" => -32003,
            "UNSUPPORTED_OPERATION" => -32004,
            "CONTENT_TYPE_NOT_SUPPORTED" => -32005,
            "VERSION_NOT_SUPPORTED" => -32009,
            other => panic!("unexpected ErrorInfo reason {other:?}: {v}"),
        };
        (
            status,
            json!({ "error": { "code": code, "message": e["message"], "data": e["details"] } }),
        )
    }

    /// SendMessage through `binding` (see [`Secure::call`]); the JSON-RPC-shaped answer.
    pub async fn send_via(
        &self,
        binding: Binding,
        bearer: Option<&str>,
        prefix: &str,
        params: Value,
    ) -> Value {
        self.call(binding, bearer, prefix, "SendMessage", params)
            .await
            .1
    }

    /// Issues a token through the API (as the owner); the token.
    pub async fn issue(&self, path: &str, body: Value) -> String {
        let owner = self.owner.clone();
        let (status, _, v) = self
            .req(Some(&owner), Method::POST, path, Some(body), &[])
            .await;
        assert_eq!(status, StatusCode::CREATED, "{v}");
        v["token"].as_str().expect("token shown once").to_string()
    }

    /// Issues a per-peer token for `name`; the token.
    pub async fn peer_token(&self, name: &str) -> String {
        self.issue("/api/v1/peer-tokens", json!({ "name": name }))
            .await
    }

    /// Issues an assistant token for `name` on Agent `agent_id`; the token.
    pub async fn assistant_token(&self, name: &str, agent_id: &str) -> String {
        self.issue(
            "/api/v1/assistant-tokens",
            json!({ "name": name, "agent_id": agent_id }),
        )
        .await
    }

    /// Revokes a token through the API (as the owner): `path` is its `/api/v1/…-tokens/NAME`.
    pub async fn revoke(&self, path: &str) {
        let owner = self.owner.clone();
        let (status, _, v) = self
            .req(Some(&owner), Method::DELETE, path, None, &[])
            .await;
        assert_eq!(status, StatusCode::NO_CONTENT, "DELETE {path}: {v}");
    }
}

pub fn code(v: &Value) -> i64 {
    v["error"]["code"].as_i64().unwrap_or(0)
}
