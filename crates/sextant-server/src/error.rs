//! REST errors: one shape for every `/api/v1` error, `{"error": {"code", "message"}}`, and one
//! place that decides the HTTP status. 5xx bodies never carry internal detail (it is logged).

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// A REST error.
#[derive(Debug)]
pub enum ApiError {
    /// 400: the request is malformed; the message says what to fix.
    BadRequest(String),
    /// 401: no or a wrong credential.
    Unauthorized(String),
    /// 403: the caller is known but may not do this (e.g. answer as someone else).
    Forbidden(String),
    /// 403 with a code of its own that says why (`own_request`, `digest_required`, …): the
    /// answer rule's refusals, which a client acts on differently.
    Denied { code: &'static str, message: String },
    /// 404: nothing there, or nothing this caller may see.
    NotFound(String),
    /// 409: the request conflicts with the current state (answered already, task ended).
    Conflict(String),
    /// 415: a write (POST, PUT, PATCH; with a body or not) whose `Content-Type` is not JSON
    /// (`application/json` or `application/*+json`; see `extract`). Browsers cannot send that
    /// cross-site without a CORS preflight, so it also keeps web pages from driving the
    /// loopback API.
    UnsupportedMediaType(String),
    /// 413: the request body is over the configured limit (`[limits] max_body_bytes`).
    PayloadTooLarge(String),
    /// 422: one field's value is not acceptable; the body names the field.
    Invalid { field: String, message: String },
    /// 422: several fields are not acceptable; the body names the first as `field` and lists
    /// every one in `fields` (`[{field, message}]`), so a form can show them all at once.
    InvalidFields(Vec<(String, String)>),
    /// 422 with a code of its own: a peer that cannot work, refused at registration
    /// (`peer_unreachable`, `peer_a2a_0_3_only`, …; see `sextant_peers::registration`); the
    /// message says why, `fields` lists every problem (the URL first, then the card's fields).
    Unusable {
        code: &'static str,
        message: String,
        fields: Vec<(String, String)>,
    },
    /// 500: logged, not shown.
    Internal(String),
    /// 502: a remote agent Sextant called (an outbound peer) failed or answered badly; the
    /// message says how.
    BadGateway(String),
}

impl ApiError {
    pub(crate) fn parts(&self) -> (StatusCode, &'static str, String) {
        match self {
            ApiError::BadRequest(m) => (StatusCode::BAD_REQUEST, "bad_request", m.clone()),
            ApiError::Unauthorized(m) => (StatusCode::UNAUTHORIZED, "unauthorized", m.clone()),
            ApiError::Forbidden(m) => (StatusCode::FORBIDDEN, "forbidden", m.clone()),
            ApiError::Denied { code, message } => (StatusCode::FORBIDDEN, code, message.clone()),
            ApiError::NotFound(m) => (StatusCode::NOT_FOUND, "not_found", m.clone()),
            ApiError::Conflict(m) => (StatusCode::CONFLICT, "conflict", m.clone()),
            ApiError::UnsupportedMediaType(m) => (
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                m.clone(),
            ),
            ApiError::PayloadTooLarge(m) => (
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                m.clone(),
            ),
            ApiError::Invalid { message, .. } => (
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_field",
                message.clone(),
            ),
            ApiError::InvalidFields(all) => (
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_field",
                all.first().map(|(_, m)| m.clone()).unwrap_or_default(),
            ),
            ApiError::Unusable { code, message, .. } => {
                (StatusCode::UNPROCESSABLE_ENTITY, code, message.clone())
            }
            ApiError::Internal(_) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "Something went wrong".into(),
            ),
            ApiError::BadGateway(m) => (StatusCode::BAD_GATEWAY, "peer_error", m.clone()),
        }
    }
}

impl From<sextant_journal::Error> for ApiError {
    fn from(e: sextant_journal::Error) -> Self {
        ApiError::Internal(e.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if let ApiError::Internal(detail) = &self {
            tracing::error!(%detail, "internal error");
        }
        let (status, code, message) = self.parts();
        let mut body = json!({ "error": { "code": code, "message": message } });
        match &self {
            ApiError::Invalid { field, message } => {
                body["error"]["field"] = json!(field);
                body["error"]["fields"] = json!([{ "field": field, "message": message }]);
            }
            ApiError::InvalidFields(all) | ApiError::Unusable { fields: all, .. } => {
                if let Some((field, _)) = all.first() {
                    body["error"]["field"] = json!(field);
                }
                body["error"]["fields"] = all
                    .iter()
                    .map(|(field, message)| json!({ "field": field, "message": message }))
                    .collect();
            }
            _ => {}
        }
        let mut resp = (status, Json(body)).into_response();
        if status == StatusCode::UNAUTHORIZED {
            resp.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        resp
    }
}

/// REST result.
pub type ApiResult<T> = Result<T, ApiError>;
