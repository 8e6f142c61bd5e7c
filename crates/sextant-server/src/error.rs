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
    /// 404: nothing there, or nothing this caller may see.
    NotFound(String),
    /// 500: logged, not shown.
    Internal(String),
}

impl ApiError {
    fn parts(&self) -> (StatusCode, &'static str, String) {
        match self {
            ApiError::BadRequest(m) => (StatusCode::BAD_REQUEST, "bad_request", m.clone()),
            ApiError::Unauthorized(m) => (StatusCode::UNAUTHORIZED, "unauthorized", m.clone()),
            ApiError::NotFound(m) => (StatusCode::NOT_FOUND, "not_found", m.clone()),
            ApiError::Internal(_) => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "Something went wrong".into(),
            ),
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
        let mut resp = (
            status,
            Json(json!({ "error": { "code": code, "message": message } })),
        )
            .into_response();
        if status == StatusCode::UNAUTHORIZED {
            resp.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        resp
    }
}

/// REST result.
pub type ApiResult<T> = Result<T, ApiError>;
