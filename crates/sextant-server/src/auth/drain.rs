//! Refusals that leave a keep-alive connection usable.
//!
//! A request refused before its body is read (401, 400 and 429 in `auth`, 403 and 431 at the
//! `perimeter`) still has its body on the wire. hyper drains only what already sits in its read
//! buffer and otherwise closes the connection, without saying so: a keep-alive client that
//! wrote its body separately, or whose body was larger than one read, then sent its next
//! request into a closed socket. So [`refused`] reads and discards a small body
//! ([`DRAIN_MAX`], within [`DRAIN_WAIT`]) before answering, and answers a larger one, a slower
//! one, or one behind `Expect: 100-continue` with `Connection: close`, which every HTTP/1.1
//! client honours.

use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::Response;

/// The largest refused body that is read and discarded to keep the connection.
pub const DRAIN_MAX: usize = 64 * 1024;

/// How long a refused body may take to arrive before the connection is closed instead.
pub const DRAIN_WAIT: Duration = Duration::from_secs(5);

/// Whether the request announces a body (a non-zero `Content-Length`, or chunked).
fn has_body(headers: &HeaderMap) -> bool {
    if headers.contains_key(header::TRANSFER_ENCODING) {
        return true;
    }
    match headers.get(header::CONTENT_LENGTH) {
        None => false,
        Some(v) => v.to_str().ok().and_then(|s| s.trim().parse::<u64>().ok()) != Some(0),
    }
}

fn announced_len(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// `resp`, the answer to `req`, sent so the connection stays in a known state: the unread
/// body drained when small, else `Connection: close`.
pub async fn refused(req: Request, mut resp: Response) -> Response {
    let headers = req.headers();
    if !has_body(headers) {
        return resp;
    }
    let small = announced_len(headers).is_none_or(|n| n <= DRAIN_MAX as u64);
    let expects_continue = headers.contains_key(header::EXPECT);
    if small && !expects_continue && drain(req.into_body()).await {
        return resp;
    }
    resp.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    resp
}

/// Reads and discards `body`; false when it is larger than [`DRAIN_MAX`], fails, or takes
/// longer than [`DRAIN_WAIT`].
async fn drain(body: Body) -> bool {
    matches!(
        tokio::time::timeout(DRAIN_WAIT, axum::body::to_bytes(body, DRAIN_MAX)).await,
        Ok(Ok(_))
    )
}

/// Marks a response `Connection: close` (for refusals made where the request is gone, such as
/// a 413 for a body over the limit).
pub fn close(resp: &mut Response) {
    resp.headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
}

#[cfg(test)]
mod tests {
    use axum::http::StatusCode;
    use axum::response::IntoResponse;

    use super::*;

    fn request(headers: &[(&str, &str)], body: Vec<u8>) -> Request {
        let mut b = Request::builder().method("POST").uri("/x");
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(Body::from(body)).unwrap_or_default()
    }

    async fn answer(req: Request) -> Option<String> {
        let resp = refused(req, StatusCode::UNAUTHORIZED.into_response()).await;
        resp.headers()
            .get(header::CONNECTION)
            .map(|v| v.to_str().unwrap_or("").to_string())
    }

    #[tokio::test]
    async fn small_bodies_are_drained_and_large_or_expecting_ones_close() {
        assert_eq!(answer(request(&[], vec![])).await, None);
        assert_eq!(
            answer(request(&[("content-length", "5")], b"hello".to_vec())).await,
            None
        );
        let big = vec![b'x'; DRAIN_MAX + 1];
        let n = big.len().to_string();
        assert_eq!(
            answer(request(&[("content-length", &n)], big.clone())).await,
            Some("close".into())
        );
        assert_eq!(
            answer(request(&[("transfer-encoding", "chunked")], big)).await,
            Some("close".into())
        );
        assert_eq!(
            answer(request(
                &[("content-length", "5"), ("expect", "100-continue")],
                b"hello".to_vec()
            ))
            .await,
            Some("close".into())
        );
    }
}
