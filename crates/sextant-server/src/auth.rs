//! Who is calling, for now: the console owner with the data-dir token, or an anonymous caller
//! on the loopback interface. The principal is resolved from the request's credentials and its
//! peer address only, before the body is read, and is handed to handlers as an extension.

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, Request, State};
use axum::http::header;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sextant_core::Principal;

use crate::AppState;
use crate::error::ApiError;

/// Compares two secrets in time independent of where they differ.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Resolves the principal or answers 401.
pub async fn resolve(State(app): State<AppState>, mut req: Request, next: Next) -> Response {
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0);
    let bearer = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim().to_string());
    let principal = match bearer {
        Some(v) => {
            let token = v
                .strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "));
            match token {
                Some(t) if same_secret(t.trim().as_bytes(), app.config.token.as_bytes()) => {
                    Principal::person()
                }
                _ => {
                    tracing::debug!(?peer, "refused: bearer token does not match");
                    return ApiError::Unauthorized("the bearer token is not valid here".into())
                        .into_response();
                }
            }
        }
        None => match peer {
            Some(addr) if addr.ip().is_loopback() => Principal::anonymous_local(),
            _ => {
                tracing::debug!(?peer, "refused: no credential from a non-loopback peer");
                return ApiError::Unauthorized(
                    "a bearer token is required (print it with `sextant token`)".into(),
                )
                .into_response();
            }
        },
    };
    req.extensions_mut().insert(principal);
    next.run(req).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_compare_exactly() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abc", b"abd"));
        assert!(!same_secret(b"abc", b"abcd"));
    }
}
