//! The HTTP+JSON binding (spec §11), per Agent under `/api/v1/agents/{agent_id}` (and the
//! assistant surface's `/api/v1/assistant-a2a/agents/{agent_id}`):
//!
//! | Route | Method |
//! |---|---|
//! | `POST /message:send` | SendMessage |
//! | `POST /message:stream` | SendStreamingMessage (SSE) |
//! | `GET /tasks/{id}` | GetTask |
//! | `GET /tasks` | ListTasks |
//! | `POST /tasks/{id}:cancel` | CancelTask |
//! | `GET` or `POST /tasks/{id}:subscribe` | SubscribeToTask (SSE) |
//! | `POST /tasks/{id}/pushNotificationConfigs` | CreateTaskPushNotificationConfig |
//! | `GET /tasks/{id}/pushNotificationConfigs/{configId}` | GetTaskPushNotificationConfig |
//! | `GET /tasks/{id}/pushNotificationConfigs` | ListTaskPushNotificationConfigs |
//! | `DELETE /tasks/{id}/pushNotificationConfigs/{configId}` | DeleteTaskPushNotificationConfig |
//! | `GET /extendedAgentCard` | GetExtendedAgentCard |
//!
//! (The proto's `http` option says GET for `:subscribe`, the spec's text and the Python SDK
//! POST: both are served.) Bodies are the ProtoJSON request messages, the same params the
//! JSON-RPC binding carries; a GET's or DELETE's fields come from query parameters, by their
//! camelCase or proto names (`params::from_query`); the URL's ids win, and a body naming
//! another id (by either name) is refused. The service behind is [`super::serve`], the same
//! for both bindings: one set of checks, one audit record per call.
//!
//! A POST body must say a JSON Content-Type (`application/json`, `application/a2a+json`):
//! anything else is 415, and so is a body without one; an empty POST (`:subscribe`,
//! `:cancel`) may omit it. Answers are `application/json` (what the TCK checks for); errors
//! are `google.rpc.Status` in the AIP-193 shape with the HTTP status in `error.code` and the
//! same ErrorInfo / BadRequest details as JSON-RPC (`sextant_a2a::error`). Streams are SSE
//! whose `data` is a `StreamResponse`, with the journal seq as the SSE id (`Last-Event-ID`
//! resumes); an error mid-stream is an `error` event carrying the AIP-193 body.

use std::collections::HashMap;
use std::convert::Infallible;

use axum::body::Bytes;
use axum::extract::{Extension, Path, RawQuery, State};
use axum::http::{HeaderMap, HeaderValue, Method as Verb, StatusCode, Uri, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use serde_json::{Map, Value};
use sextant_a2a::error::Code;
use sextant_a2a::{Method, RpcError};
use sextant_core::Principal;

use super::surface::{ASSISTANT_PREFIX, RpcSurface};
use super::{Failure, Frame, Frames, Inbound, Served, serve};
use crate::AppState;
use crate::auth::{AssistantGrant, Credential};

/// An operation named by a route: the method and the fields its URL carries.
struct Operation {
    method: Method,
    /// `(field, value)` from the path: `id`, `taskId`.
    path: Vec<(&'static str, String)>,
    /// Whether the request body is read (POST); otherwise the query string is.
    body: bool,
}

impl Operation {
    fn new(method: Method, body: bool) -> Self {
        Operation {
            method,
            path: Vec::new(),
            body,
        }
    }

    fn with(mut self, field: &'static str, value: &str) -> Self {
        self.path.push((field, value.to_string()));
        self
    }
}

/// What a route and verb name, or why they name nothing.
fn operation(verb: &Verb, tail: &str) -> Result<Operation, Failure> {
    let post = *verb == Verb::POST;
    let get = *verb == Verb::GET;
    let wrong_verb = || Failure {
        error: RpcError::new(
            Code::MethodNotFound,
            format!("{verb} is not served on this A2A route"),
        ),
        status: Some(StatusCode::METHOD_NOT_ALLOWED),
    };
    let unknown = || Failure {
        error: RpcError::new(
            Code::MethodNotFound,
            format!("no A2A operation at {tail:?}"),
        ),
        status: None,
    };
    let only = |ok: bool, op: Operation| if ok { Ok(op) } else { Err(wrong_verb()) };
    match tail {
        "message:send" => only(post, Operation::new(Method::SendMessage, true)),
        "message:stream" => only(post, Operation::new(Method::SendStreamingMessage, true)),
        "tasks" => only(get, Operation::new(Method::ListTasks, false)),
        "extendedAgentCard" => only(get, Operation::new(Method::GetExtendedAgentCard, false)),
        _ => {
            let rest = tail.strip_prefix("tasks/").ok_or_else(unknown)?;
            let (task, sub) = match rest.split_once('/') {
                Some((task, sub)) => (task, Some(sub)),
                None => (rest, None),
            };
            if task.is_empty() {
                return Err(unknown());
            }
            match sub {
                None => match task.rsplit_once(':') {
                    Some((id, "cancel")) if !id.is_empty() => only(
                        post,
                        Operation::new(Method::CancelTask, true).with("id", id),
                    ),
                    Some((id, "subscribe")) if !id.is_empty() => only(
                        get || post,
                        Operation::new(Method::SubscribeToTask, post).with("id", id),
                    ),
                    Some(_) => Err(unknown()),
                    None => only(get, Operation::new(Method::GetTask, false).with("id", task)),
                },
                Some("pushNotificationConfigs") => match *verb {
                    Verb::POST => {
                        Ok(Operation::new(Method::CreatePushConfig, true).with("taskId", task))
                    }
                    Verb::GET => {
                        Ok(Operation::new(Method::ListPushConfigs, false).with("taskId", task))
                    }
                    _ => Err(wrong_verb()),
                },
                Some(sub) => {
                    let config = sub
                        .strip_prefix("pushNotificationConfigs/")
                        .filter(|c| !c.is_empty() && !c.contains('/'))
                        .ok_or_else(unknown)?;
                    let method = match *verb {
                        Verb::GET => Method::GetPushConfig,
                        Verb::DELETE => Method::DeletePushConfig,
                        _ => return Err(wrong_verb()),
                    };
                    Ok(Operation::new(method, false)
                        .with("taskId", task)
                        .with("id", config))
                }
            }
        }
    }
}

/// The params of `op`: its body (POST) or query (GET, DELETE), with the URL's fields.
fn params(
    op: &Operation,
    headers: &HeaderMap,
    query: Option<&str>,
    body: &Bytes,
) -> Result<Value, Failure> {
    let mut params = if op.body {
        body_object(headers, body)?
    } else {
        match super::params::from_query(op.method, query)? {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    };
    for (field, value) in &op.path {
        // The body may name the field by its proto name too (`task_id`): either spelling
        // must agree with the URL, which then gives the one field.
        let proto = sextant_a2a::protojson::proto_name(field);
        for name in [(*field).to_string(), proto] {
            match params.remove(&name) {
                None | Some(Value::Null) => {}
                Some(Value::String(s)) if s == *value => {}
                Some(_) => {
                    return Err(RpcError::field(
                        field,
                        format!("does not match the {field} in the URL ({value:?})"),
                    )
                    .into());
                }
            }
        }
        params.insert((*field).to_string(), Value::String(value.clone()));
    }
    Ok(Value::Object(params))
}

/// A POST's body as a JSON object (an empty body is `{}`), after its Content-Type.
fn body_object(headers: &HeaderMap, body: &Bytes) -> Result<Map<String, Value>, Failure> {
    let content_type = headers.get(header::CONTENT_TYPE);
    let json = content_type.is_some_and(|v| crate::content_type::is_json(v.to_str().ok()));
    if content_type.is_some() && !json || content_type.is_none() && !body.is_empty() {
        return Err(RpcError::new(
            Code::ContentTypeNotSupported,
            "Content-Type must be application/json (or application/a2a+json) for A2A \
             HTTP+JSON requests",
        )
        .into());
    }
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(_) => Err(RpcError::new(
            Code::InvalidRequest,
            "the request body must be a JSON object",
        )
        .into()),
        Err(e) => Err(RpcError::new(Code::ParseError, format!("Invalid JSON payload: {e}")).into()),
    }
}

/// Every HTTP+JSON route, public and assistant (see the module docs).
#[allow(clippy::too_many_arguments)]
pub async fn call(
    State(app): State<AppState>,
    Path(path): Path<HashMap<String, String>>,
    Extension(principal): Extension<Principal>,
    credential: Option<Extension<Credential>>,
    grant: Option<Extension<AssistantGrant>>,
    verb: Verb,
    uri: Uri,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let agent_id = path.get("agent_id").cloned().unwrap_or_default();
    let surface = if uri.path().starts_with(ASSISTANT_PREFIX) {
        RpcSurface::Assistant
    } else {
        RpcSurface::Public
    };
    // The assistant surface answers an Agent its token does not reach as no Agent at all
    // (`assistant`); the service's own access checks come after.
    if surface == RpcSurface::Assistant
        && !grant.is_some_and(|g| crate::a2a::assistant::in_scope(&app, &principal, &g, &agent_id))
    {
        let error = RpcError::new(Code::InvalidRequest, format!("no agent {agent_id:?} here"));
        return failure(Failure {
            error,
            status: Some(StatusCode::NOT_FOUND),
        });
    }
    let prefix = surface.agent_path(&agent_id);
    // The route's own text after the Agent (`tasks/{id}:cancel`), from the decoded `{*rest}`
    // where the route has one.
    let tail = match path.get("rest") {
        Some(rest) => format!("tasks/{rest}"),
        None => uri
            .path()
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .to_string(),
    };
    let op = match operation(&verb, &tail) {
        Ok(op) => op,
        Err(f) => return failure(f),
    };
    let params = match params(&op, &headers, query.as_deref(), &body) {
        Ok(p) => p,
        Err(f) => return failure(f),
    };
    let served = serve(Inbound {
        app,
        agent_id,
        principal,
        credential: credential.map_or(Credential::None, |c| c.0),
        surface,
        headers,
        query,
        route: format!("{verb} {prefix}/{tail}"),
        named: op.method.name().to_string(),
        method: Some((op.method, false)),
        params,
    })
    .await;
    match served {
        Served::Json {
            result,
            push_extension,
        } => {
            // DeleteTaskPushNotificationConfig answers `google.protobuf.Empty`: `{}`.
            let result = if result.is_null() {
                Value::Object(Map::new())
            } else {
                result
            };
            let mut resp = json(StatusCode::OK, &result);
            if push_extension {
                super::say_push_extension(&mut resp);
            }
            resp
        }
        Served::Stream(frames) => sse(frames),
        Served::Failed(f) => failure(f),
    }
}

fn json(status: StatusCode, body: &Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// The HTTP status of an error, and its AIP-193 body.
fn error_body(f: &Failure) -> (StatusCode, Value) {
    let status = f.status.unwrap_or_else(|| {
        StatusCode::from_u16(f.error.code.http_status()).unwrap_or(StatusCode::BAD_REQUEST)
    });
    let mut body = f.error.to_http_json(status.as_u16());
    // A status the error's code does not give says its own `google.rpc.Code`.
    let named = match status {
        StatusCode::NOT_FOUND => Some("NOT_FOUND"),
        StatusCode::UNAUTHORIZED => Some("UNAUTHENTICATED"),
        StatusCode::METHOD_NOT_ALLOWED => Some("UNIMPLEMENTED"),
        _ => None,
    };
    if let (Some(name), Some(_)) = (named, f.status) {
        body["error"]["status"] = Value::from(name);
    }
    (status, body)
}

fn failure(f: Failure) -> Response {
    let (status, body) = error_body(&f);
    let mut resp = json(status, &body);
    if status == StatusCode::UNAUTHORIZED {
        resp.headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    resp
}

/// A stream as SSE: each item's `data` a `StreamResponse`, an error an `error` event whose
/// `data` is the AIP-193 body.
fn sse(frames: Frames) -> Response {
    let events = frames.map(|frame| {
        let event = match frame {
            Frame::Item(seq, item) => {
                let ev = Event::default().data(item.to_string());
                match seq {
                    Some(s) => ev.id(s.to_string()),
                    None => ev,
                }
            }
            Frame::Error(error) => {
                let (_, body) = error_body(&error.into());
                Event::default().event("error").data(body.to_string())
            }
        };
        Ok::<_, Infallible>(event)
    });
    Sse::new(events)
        .keep_alive(KeepAlive::new().interval(crate::SSE_KEEP_ALIVE))
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    type Named = (Method, Vec<(&'static str, String)>);

    fn op(verb: Verb, tail: &str) -> Result<Named, StatusCode> {
        operation(&verb, tail)
            .map(|o| (o.method, o.path))
            .map_err(|f| {
                f.status
                    .unwrap_or(StatusCode::from_u16(f.error.code.http_status()).unwrap())
            })
    }

    #[test]
    fn routes_name_their_operations() {
        let id = |v: &str| vec![("id", v.to_string())];
        assert_eq!(
            op(Verb::POST, "message:send"),
            Ok((Method::SendMessage, vec![]))
        );
        assert_eq!(
            op(Verb::POST, "message:stream"),
            Ok((Method::SendStreamingMessage, vec![]))
        );
        assert_eq!(op(Verb::GET, "tasks"), Ok((Method::ListTasks, vec![])));
        assert_eq!(op(Verb::GET, "tasks/t1"), Ok((Method::GetTask, id("t1"))));
        assert_eq!(
            op(Verb::POST, "tasks/t1:cancel"),
            Ok((Method::CancelTask, id("t1")))
        );
        assert_eq!(
            op(Verb::POST, "tasks/t1:subscribe"),
            Ok((Method::SubscribeToTask, id("t1")))
        );
        assert_eq!(
            op(Verb::GET, "tasks/t1:subscribe"),
            Ok((Method::SubscribeToTask, id("t1")))
        );
        let task = |m| Ok((m, vec![("taskId", "t1".to_string())]));
        assert_eq!(
            op(Verb::POST, "tasks/t1/pushNotificationConfigs"),
            task(Method::CreatePushConfig)
        );
        assert_eq!(
            op(Verb::GET, "tasks/t1/pushNotificationConfigs"),
            task(Method::ListPushConfigs)
        );
        let both = |m| {
            Ok((
                m,
                vec![("taskId", "t1".to_string()), ("id", "c1".to_string())],
            ))
        };
        assert_eq!(
            op(Verb::GET, "tasks/t1/pushNotificationConfigs/c1"),
            both(Method::GetPushConfig)
        );
        assert_eq!(
            op(Verb::DELETE, "tasks/t1/pushNotificationConfigs/c1"),
            both(Method::DeletePushConfig)
        );
        assert_eq!(
            op(Verb::GET, "extendedAgentCard"),
            Ok((Method::GetExtendedAgentCard, vec![]))
        );
    }

    #[test]
    fn wrong_verbs_and_unknown_routes_are_refused() {
        let not_allowed = Err(StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(op(Verb::GET, "message:send"), not_allowed);
        assert_eq!(op(Verb::DELETE, "tasks/t1"), not_allowed);
        assert_eq!(op(Verb::GET, "tasks/t1:cancel"), not_allowed);
        assert_eq!(
            op(Verb::PUT, "tasks/t1/pushNotificationConfigs"),
            not_allowed
        );
        assert_eq!(
            op(Verb::POST, "tasks/t1/pushNotificationConfigs/c1"),
            not_allowed
        );
        let not_found = Err(StatusCode::NOT_FOUND);
        assert_eq!(op(Verb::POST, "tasks/t1:pause"), not_found);
        assert_eq!(op(Verb::POST, "tasks/:cancel"), not_found);
        assert_eq!(op(Verb::GET, "tasks/t1/other"), not_found);
        assert_eq!(
            op(Verb::GET, "tasks/t1/pushNotificationConfigs/c1/x"),
            not_found
        );
        assert_eq!(
            op(Verb::GET, "tasks/t1/pushNotificationConfigs/"),
            not_found
        );
    }

    #[test]
    fn path_ids_win_and_a_body_naming_another_is_refused() {
        let mut h = HeaderMap::new();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/a2a+json"),
        );
        let cancel = Operation::new(Method::CancelTask, true).with("id", "t1");
        let p = params(
            &cancel,
            &h,
            None,
            &Bytes::from_static(b"{\"id\":\"t1\",\"metadata\":{}}"),
        );
        assert_eq!(
            p.ok(),
            Some(serde_json::json!({ "id": "t1", "metadata": {} }))
        );
        let other = params(&cancel, &h, None, &Bytes::from_static(b"{\"id\":\"t2\"}"));
        assert_eq!(other.err().map(|f| f.error.code), Some(Code::InvalidParams));
        let get = Operation::new(Method::GetTask, false).with("id", "t1");
        let p = params(
            &get,
            &HeaderMap::new(),
            Some("historyLength=2&id=t9"),
            &Bytes::new(),
        );
        assert!(p.is_err(), "a query naming another id is refused");
    }

    #[test]
    fn bodies_need_a_json_content_type_unless_empty() {
        let code = |ct: Option<&'static str>, body: &'static [u8]| {
            let mut h = HeaderMap::new();
            if let Some(ct) = ct {
                h.insert(header::CONTENT_TYPE, HeaderValue::from_static(ct));
            }
            body_object(&h, &Bytes::from_static(body))
                .err()
                .map(|f| f.error.code)
        };
        assert_eq!(code(Some("application/json"), b"{}"), None);
        assert_eq!(
            code(Some("application/a2a+json; charset=utf-8"), b"{}"),
            None
        );
        assert_eq!(code(None, b""), None);
        assert_eq!(code(Some("application/json"), b""), None);
        assert_eq!(
            code(Some("text/plain"), b"{}"),
            Some(Code::ContentTypeNotSupported)
        );
        assert_eq!(
            code(Some("text/plain"), b""),
            Some(Code::ContentTypeNotSupported)
        );
        assert_eq!(code(None, b"{}"), Some(Code::ContentTypeNotSupported));
        assert_eq!(
            code(Some("application/json"), b"[1]"),
            Some(Code::InvalidRequest)
        );
        assert_eq!(code(Some("application/json"), b"{"), Some(Code::ParseError));
    }

    #[test]
    fn errors_carry_their_status_in_the_body() {
        let (status, body) = error_body(&RpcError::of(Code::TaskNotFound).into());
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(body["error"]["code"], 404);
        assert_eq!(body["error"]["details"][0]["reason"], "TASK_NOT_FOUND");
        let unseen = Failure {
            error: RpcError::new(Code::InvalidRequest, "no agent"),
            status: Some(StatusCode::NOT_FOUND),
        };
        let (status, body) = error_body(&unseen);
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(body["error"]["status"], "NOT_FOUND");
    }
}
