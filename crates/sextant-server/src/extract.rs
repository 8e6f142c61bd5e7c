//! The REST API's extractors: what a `/api/v1` handler takes instead of reading the request
//! itself, so every route checks the same things the same way and refuses with the one error
//! shape ([`crate::error`]).
//!
//! - [`ApiJson<T>`]: a JSON body. The `Content-Type` must be JSON (`application/json` or
//!   `application/*+json`, parameters such as `charset` allowed), else 415; an empty body reads
//!   as `{}` (writes whose fields are all optional may send none); a body that is not JSON, or
//!   not the JSON this route takes, is 400 saying why; one over the body limit is 413.
//! - [`JsonContentType`]: the same `Content-Type` rule for a write that reads no body (the
//!   rule holds on every write, body or not: see [`ApiError::UnsupportedMediaType`] for why).
//! - [`Owner`]: the console owner, for the owner-only routes: anyone else is refused as
//!   [`owner_only`] says (401 for the anonymous loopback caller, 403 for other authenticated
//!   callers; the MCP tools that are the owner's ask it too).
//!
//! Extractors run in the order of the handler's arguments and the body extractor runs last, so
//! a handler taking `Owner` and `ApiJson` refuses a caller who is not the owner before it
//! looks at the body.
//!
//! The A2A JSON-RPC endpoints do not use these: they answer in JSON-RPC errors, not REST ones
//! (`a2a`), and share only the `Content-Type` predicate ([`crate::content_type::is_json`]).

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, StatusCode, header};
use serde::de::DeserializeOwned;
use sextant_core::Principal;

use crate::error::{ApiError, ApiResult};

/// A REST request's JSON body, read as `T` (see the module docs for the rules).
#[derive(Debug, Clone)]
pub struct ApiJson<T>(pub T);

impl<T, S> FromRequest<S> for ApiJson<T>
where
    T: DeserializeOwned,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        require_json(req.headers())?;
        let body = Bytes::from_request(req, state)
            .await
            .map_err(|e| unreadable(e.status(), &e.body_text()))?;
        parse(&body).map(ApiJson)
    }
}

/// A write that reads no body still says `Content-Type: application/json` (see the module
/// docs).
#[derive(Debug, Clone, Copy)]
pub struct JsonContentType;

impl<S: Send + Sync> FromRequestParts<S> for JsonContentType {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        require_json(&parts.headers).map(|()| JsonContentType)
    }
}

/// The console owner, the only caller of an owner-only route.
#[derive(Debug, Clone)]
pub struct Owner(pub Principal);

impl<S: Send + Sync> FromRequestParts<S> for Owner {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        // `auth` puts the caller's principal here before any handler runs; a route without it
        // in front is a wiring mistake, not the caller's.
        let p = parts.extensions.get::<Principal>().ok_or_else(|| {
            ApiError::Internal("an owner-only route is not behind authentication".into())
        })?;
        owner_only(p)?;
        Ok(Owner(p.clone()))
    }
}

/// Refuses anyone but the console owner: 401 for the anonymous loopback caller (who can
/// present the console token), 403 for other authenticated callers.
pub(crate) fn owner_only(p: &Principal) -> ApiResult<()> {
    match p.kind {
        _ if p.is_owner() => Ok(()),
        // Authenticated, but not the owner: peers and JWT holders use A2A, not the console.
        k if k != sextant_core::PrincipalKind::AnonymousLocal => Err(ApiError::Forbidden(
            "the console API is the console owner's; other callers use the A2A endpoints".into(),
        )),
        _ => Err(ApiError::Unauthorized(
            "the console API needs the console token: Authorization: Bearer $(sextant token)"
                .into(),
        )),
    }
}

/// Refuses a request whose `Content-Type` is not JSON (415).
pub(crate) fn require_json(headers: &HeaderMap) -> ApiResult<()> {
    let value = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    if crate::content_type::is_json(value) {
        Ok(())
    } else {
        Err(ApiError::UnsupportedMediaType(
            "send Content-Type: application/json (also on requests without a body)".into(),
        ))
    }
}

/// Reads a JSON body as `T`; an empty (or blank) body reads as `{}`.
pub(crate) fn parse<T: DeserializeOwned>(body: &[u8]) -> ApiResult<T> {
    let body: &[u8] = if body.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        body
    };
    serde_json::from_slice(body).map_err(|e| {
        ApiError::BadRequest(match e.classify() {
            serde_json::error::Category::Data => {
                format!("the body is JSON, but not what this request takes: {e}")
            }
            _ => format!("the body is not JSON: {e}"),
        })
    })
}

/// The error for a body that could not be read: over the limit (413), or cut off.
fn unreadable(status: StatusCode, detail: &str) -> ApiError {
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::PayloadTooLarge(
            "the request body is larger than this Sextant accepts ([limits] max_body_bytes)".into(),
        )
    } else {
        ApiError::BadRequest(format!("the request body could not be read: {detail}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::Router;
    use axum::body::Body;
    use axum::extract::DefaultBodyLimit;
    use axum::response::Response;
    use axum::routing::post;
    use serde_json::{Map, Value, json};
    use tower::ServiceExt;

    /// Echoes the body it was given, as `ApiJson` read it.
    async fn echo(ApiJson(v): ApiJson<Map<String, Value>>) -> axum::Json<Value> {
        axum::Json(Value::Object(v))
    }

    /// Says who the owner is.
    async fn owner(Owner(p): Owner) -> String {
        p.key()
    }

    fn app(principal: Option<Principal>) -> Router {
        Router::new()
            .route("/echo", post(echo))
            .route("/owner", post(owner))
            .route("/written", post(|_: JsonContentType| async { "ok" }))
            .layer(DefaultBodyLimit::max(64))
            .layer(axum::middleware::from_fn(
                move |mut req: Request, next: axum::middleware::Next| {
                    let principal = principal.clone();
                    async move {
                        if let Some(p) = principal {
                            req.extensions_mut().insert(p);
                        }
                        next.run(req).await
                    }
                },
            ))
    }

    async fn send(
        principal: Option<Principal>,
        path: &str,
        ct: Option<&str>,
        body: &'static str,
    ) -> (StatusCode, Value) {
        let mut req = Request::post(path);
        if let Some(ct) = ct {
            req = req.header(header::CONTENT_TYPE, ct);
        }
        let resp: Response = app(principal)
            .oneshot(req.body(Body::from(body)).unwrap())
            .await
            .unwrap();
        let status = resp.status();
        let bytes = axum::body::to_bytes(resp.into_body(), 1 << 16)
            .await
            .unwrap();
        let v = serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into()));
        (status, v)
    }

    fn code(v: &Value) -> &str {
        v["error"]["code"].as_str().unwrap_or_default()
    }

    #[tokio::test]
    async fn json_types_are_accepted_with_their_parameters() {
        for ct in [
            "application/json",
            "application/json; charset=utf-8",
            "Application/JSON;charset=UTF-8",
            "application/merge-patch+json",
        ] {
            let (status, v) = send(None, "/echo", Some(ct), r#"{"a":1}"#).await;
            assert_eq!((status, &v), (StatusCode::OK, &json!({"a": 1})), "{ct}");
        }
        // An empty body reads as `{}`.
        let (status, v) = send(None, "/echo", Some("application/json"), "  ").await;
        assert_eq!((status, v), (StatusCode::OK, json!({})));
    }

    #[tokio::test]
    async fn another_content_type_is_415_in_the_error_shape() {
        for ct in [
            Some("text/plain"),
            Some("application/x-www-form-urlencoded"),
            None,
        ] {
            for path in ["/echo", "/written"] {
                let (status, v) = send(None, path, ct, r#"{"a":1}"#).await;
                assert_eq!(
                    status,
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "{path} {ct:?}: {v}"
                );
                assert_eq!(code(&v), "unsupported_media_type", "{v}");
                assert!(
                    v["error"]["message"]
                        .as_str()
                        .is_some_and(|m| m.contains("Content-Type: application/json")),
                    "{v}"
                );
            }
        }
    }

    #[tokio::test]
    async fn a_bad_body_is_400_saying_what_is_wrong() {
        let json = Some("application/json");
        let (status, v) = send(None, "/echo", json, r#"{"a":"#).await;
        assert_eq!((status, code(&v)), (StatusCode::BAD_REQUEST, "bad_request"));
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("the body is not JSON")
        );
        let (status, v) = send(None, "/echo", json, "[1]").await;
        assert_eq!((status, code(&v)), (StatusCode::BAD_REQUEST, "bad_request"));
        let message = v["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with("the body is JSON, but not what this request takes")
                && message.contains("expected a map"),
            "{message}"
        );
        // Over the limit: 413, in the error shape.
        let big =
            r#"{"a":"0123456789012345678901234567890123456789012345678901234567890123456789"}"#;
        let (status, v) = send(None, "/echo", json, big).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{v}");
        assert_eq!(code(&v), "payload_too_large", "{v}");
    }

    #[tokio::test]
    async fn only_the_owner_gets_past_owner() {
        let json = Some("application/json");
        let (status, v) = send(Some(Principal::person()), "/owner", json, "").await;
        assert_eq!(
            (status, v),
            (StatusCode::OK, json!(Principal::person().key()))
        );
        // Exactly what `owner_only` answers, for each kind of caller.
        for p in [
            Principal::anonymous_local(),
            Principal::assistant("ws", "helper"),
        ] {
            let (status, v) = send(Some(p.clone()), "/owner", json, "").await;
            let Err(want) = owner_only(&p) else {
                panic!("{p:?} is not the owner");
            };
            let (want_status, want_code, want_message) = want.parts();
            assert_eq!(status, want_status, "{p:?}: {v}");
            assert_eq!(
                v,
                json!({ "error": { "code": want_code, "message": want_message } }),
                "{p:?}"
            );
        }
        let (status, _) = send(Some(Principal::anonymous_local()), "/owner", json, "").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        let (status, _) = send(
            Some(Principal::assistant("ws", "helper")),
            "/owner",
            json,
            "",
        )
        .await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        // Without a principal (no `auth` in front) it is a server error, never a pass.
        let (status, v) = send(None, "/owner", json, "").await;
        assert_eq!(
            (status, code(&v)),
            (StatusCode::INTERNAL_SERVER_ERROR, "internal")
        );
    }
}
