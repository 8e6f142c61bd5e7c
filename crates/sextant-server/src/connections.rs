//! The accept loop: connection limits, read timeouts, graceful shutdown.
//!
//! `axum::serve` has no header or body timeout and no connection cap, so a client that opened
//! connections and left them half-sent kept them forever, and a few hundred of them used up
//! the process's file descriptors and stopped Sextant from answering anyone. Here, from
//! `[limits]` in `security.toml`:
//!
//! - **HTTP/1.1 and HTTP/2** on the one port: a connection that opens with the HTTP/2
//!   preface (prior knowledge, h2c: what gRPC clients send to a plain `host:port`) is served
//!   as HTTP/2, any other as HTTP/1.1. The first bytes must arrive within the header timeout,
//!   or the connection is closed. There is no TLS here: beyond loopback Sextant sits behind a
//!   TLS proxy (README "Perimeter"), which must speak HTTP/2 to it for gRPC.
//! - **Header timeout** (`header_timeout_secs`, 20 s): hyper's header read timeout (HTTP/1.1).
//!   Its clock runs whenever the connection waits for a request head, from the connection's
//!   opening or its previous response, so it is also the **idle timeout** of a kept-alive
//!   connection. It does not run while a response is being sent: an SSE stream or a blocking
//!   `SendMessage` that waits for minutes is not cut.
//!   An HTTP/2 connection has no request heads to time between streams: it is pinged every
//!   header timeout and closed when a ping goes unanswered for as long, and it carries at most
//!   [`H2_STREAMS`] requests at once (HTTP/1.1 carries one), so the per-address cap still
//!   bounds what one peer has open.
//! - **Body timeout** (`body_timeout_secs`, 60 s): a request body must have arrived this long
//!   after its head; then reading it fails, the request is refused and the connection closed.
//!   A body that is already buffered costs no timer.
//! - **Connection limits**: at most `max_connections` open connections (4096), at most
//!   `max_connections_per_address` (64) from one peer address, and the last
//!   `console_connections` (32) of the total only for 127.0.0.1 and ::1, the addresses the
//!   console (desktop window or browser on this machine) uses: a flood from elsewhere cannot take
//!   the console's room. Those two addresses are not capped per address (the benchmarks and
//!   the person's own tools use them). A connection over a limit gets a short 503 with
//!   `Connection: close` and is closed at once, before hyper reads anything.
//! - **The owner's reserve** (`owner_connections`, 16, beyond `max_connections`): every loopback
//!   client shares the console's room (a local proxy makes all traffic loopback), so 128 idle
//!   loopback connections used to lock the person out. A connection over the limits is taken
//!   into the reserve instead of refused while it has a place, and there each request must
//!   carry the owner's credential (the owner token, a live console session): any other gets
//!   the 503 and the connection is closed. A reserve connection that has not yet shown the
//!   owner's credential is closed to make room for a newer one when the reserve is full, so
//!   connections that hold a place and send nothing cannot keep the person out either; once a
//!   connection has shown it, it keeps its place.
//! - `max_connections` is lowered at start to fit the process's open-file limit (less a
//!   margin for the journal, logs and engines), with a warning.

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use bytes::Bytes;
use http_body::{Body as HttpBody, Frame, SizeHint};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Descriptors kept for everything but connections (journal, audit log, engines' pipes).
const FD_MARGIN: usize = 128;

/// The most requests one HTTP/2 connection carries at once (hyper's default is 200): enough
/// for a client's open streams beside its calls, small enough that the per-address
/// connection cap still means something.
pub const H2_STREAMS: u32 = 100;

/// What an HTTP/2 prior-knowledge connection opens with (RFC 9113 §3.4).
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

/// The settings of the accept loop.
#[derive(Debug, Clone, Copy)]
pub struct ConnLimits {
    pub header_timeout: Duration,
    pub body_timeout: Duration,
    pub max_connections: usize,
    pub per_address: usize,
    pub console_room: usize,
    /// Connections beyond `max_connections` for the owner's credential only.
    pub owner_room: usize,
}

impl ConnLimits {
    /// From `[limits]`, with `max_connections` fitted to the open-file limit.
    pub fn from_file(l: &sextant_access::settings::LimitsFile) -> Self {
        let mut max = l.max_connections;
        let mut room = l.console_connections;
        if let Some(nofile) = open_file_limit() {
            let fits = nofile.saturating_sub(FD_MARGIN).max(2);
            if fits < max {
                tracing::warn!(
                    configured = max,
                    open_file_limit = nofile,
                    allowed = fits,
                    "max_connections lowered to fit the open-file limit (raise `ulimit -n` for more)"
                );
                max = fits;
                room = room.min(max / 2);
            }
        }
        Self {
            header_timeout: Duration::from_secs(l.header_timeout_secs),
            body_timeout: Duration::from_secs(l.body_timeout_secs),
            max_connections: max,
            per_address: l.max_connections_per_address,
            console_room: room,
            owner_room: l.owner_connections.min(max),
        }
    }
}

/// The soft limit on open files (Linux: `/proc/self/limits`), if it can be read and is finite.
fn open_file_limit() -> Option<usize> {
    let limits = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

/// Whether `ip` is one of the console's addresses.
fn is_console_address(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4 == std::net::Ipv4Addr::LOCALHOST,
        IpAddr::V6(v6) => {
            v6 == std::net::Ipv6Addr::LOCALHOST
                || v6.to_ipv4_mapped() == Some(std::net::Ipv4Addr::LOCALHOST)
        }
    }
}

/// Open connections, overall and per address, and the owner's reserve.
#[derive(Default)]
struct Counts {
    total: usize,
    per_address: HashMap<IpAddr, usize>,
    /// Connections in the owner's reserve.
    reserve: usize,
    /// The reserve connections that have not shown the owner's credential yet, oldest first:
    /// the ones a newer connection may take the place of.
    unproven: std::collections::VecDeque<(u64, CancellationToken)>,
    next_id: u64,
}

/// The connection table; a [`Slot`] holds one entry until its connection ends.
struct Table {
    limits: ConnLimits,
    counts: Mutex<Counts>,
}

/// Why a connection was not admitted.
#[derive(Debug, PartialEq, Eq)]
enum Full {
    Total,
    Address,
}

impl Table {
    /// A place for a connection from `ip`: an ordinary one, or else one in the owner's
    /// reserve ([`Slot::reserve`] set), or `Full` when neither is left.
    fn admit(self: &Arc<Self>, ip: IpAddr) -> Result<Slot, Full> {
        let console = is_console_address(ip);
        let mut c = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        let cap = if console {
            self.limits.max_connections
        } else {
            self.limits.max_connections - self.limits.console_room
        };
        let full = if c.total >= cap {
            Some(Full::Total)
        } else if !console
            && c.per_address.get(&ip).copied().unwrap_or(0) >= self.limits.per_address
        {
            Some(Full::Address)
        } else {
            None
        };
        if let Some(why) = full {
            return self.reserve(&mut c).ok_or(why);
        }
        if !console {
            *c.per_address.entry(ip).or_insert(0) += 1;
        }
        c.total += 1;
        Ok(Slot {
            table: self.clone(),
            ip: (!console).then_some(ip),
            reserve: None,
        })
    }

    /// A place in the owner's reserve: a free one, or the oldest unproven connection's (which
    /// is closed). `None` when every place is held by a connection that showed the owner's
    /// credential.
    fn reserve(self: &Arc<Self>, c: &mut Counts) -> Option<Slot> {
        if c.reserve >= self.limits.owner_room {
            let (_, evicted) = c.unproven.pop_front()?;
            evicted.cancel();
            // Its slot still counts until its connection task drops it, a moment later.
        }
        c.reserve += 1;
        let id = c.next_id;
        c.next_id += 1;
        let close = CancellationToken::new();
        c.unproven.push_back((id, close.clone()));
        Some(Slot {
            table: self.clone(),
            ip: None,
            reserve: Some(Reserve { id, close }),
        })
    }

    /// The reserve connection `id` showed the owner's credential: it keeps its place.
    fn prove(&self, id: u64) {
        let mut c = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        c.unproven.retain(|(i, _)| *i != id);
    }
}

/// One admitted connection's place in the table.
struct Slot {
    table: Arc<Table>,
    ip: Option<IpAddr>,
    /// Set for a place in the owner's reserve.
    reserve: Option<Reserve>,
}

/// A reserve place: its id in the unproven queue, and what closes its connection when a newer
/// one takes the place.
#[derive(Clone)]
struct Reserve {
    id: u64,
    close: CancellationToken,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut c = self.table.counts.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(r) = &self.reserve {
            c.reserve -= 1;
            c.unproven.retain(|(i, _)| *i != r.id);
            return;
        }
        c.total -= 1;
        if let Some(ip) = self.ip
            && let Some(n) = c.per_address.get_mut(&ip)
        {
            *n -= 1;
            if *n == 0 {
                c.per_address.remove(&ip);
            }
        }
    }
}

/// Whether a request carries the owner's credential (the owner token, a live console
/// session): what a connection in the owner's reserve must show on every request.
pub type IsOwner = Arc<dyn Fn(&http::HeaderMap) -> bool + Send + Sync>;

/// The answer to a connection over a limit, written without reading the request.
fn full_response(why: &Full) -> Vec<u8> {
    let message = match why {
        Full::Total => "Sextant has as many connections open as it allows; retry later",
        Full::Address => "too many connections from this address; close some and retry",
    };
    let body = format!(r#"{{"error":{{"code":"too_many_connections","message":"{message}"}}}}"#);
    format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Serves `router` on `listener` until `shutdown` resolves, then lets open connections finish
/// their responses (streams end at shutdown) and returns.
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    limits: ConnLimits,
    is_owner: IsOwner,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let table = Arc::new(Table {
        limits,
        counts: Mutex::default(),
    });
    let stop = CancellationToken::new();
    let conns = TaskTracker::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (tcp, peer) = tokio::select! {
            r = listener.accept() => match r {
                Ok(c) => c,
                Err(e) => {
                    // Out of descriptors (EMFILE) or a connection reset before accept: wait a
                    // moment rather than spin.
                    tracing::debug!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = shutdown.as_mut() => break,
        };
        let slot = match table.admit(peer.ip()) {
            Ok(s) => s,
            Err(why) => {
                tracing::debug!(%peer, ?why, "connection refused: over the connection limit");
                // Best effort and never waiting: a client that does not read gets nothing.
                let _ = tcp.try_write(&full_response(&why));
                drop(tcp);
                continue;
            }
        };
        crate::no_delay(&tcp);
        let owner_only = slot.reserve.clone().map(|r| OwnerOnly {
            table: table.clone(),
            id: r.id,
            is_owner: is_owner.clone(),
        });
        let service = connection_service(router.clone(), peer, limits.body_timeout, owner_only);
        let stop = stop.clone();
        let tracker = conns.clone();
        // Two tasks per connection: this one waits for the first bytes, then hands the
        // connection to a task sized for its protocol's connection alone, and ends. In one
        // task, the sniffing's timer and futures and this block's state stayed beside the
        // connection for its whole life (an idle HTTP/1.1 stream's connection kept 672 bytes
        // more: bench/README, "Idle subscriptions").
        let evicted = slot
            .reserve
            .as_ref()
            .map(|r| r.close.clone())
            .unwrap_or_default();
        conns.spawn(async move {
            let opened = tokio::time::Instant::now();
            let h2 = tokio::select! {
                // A reserve place taken by a newer connection before this one sent anything.
                _ = evicted.cancelled() => return,
                r = tokio::time::timeout(limits.header_timeout, is_h2(&tcp)) => match r {
                    Ok(Ok(h2)) => h2,
                    Ok(Err(e)) => {
                        tracing::trace!(%peer, error = %e, "connection ended before a request");
                        return;
                    }
                    Err(_) => {
                        tracing::trace!(%peer, "connection sent nothing within the header timeout");
                        return;
                    }
                },
                _ = stop.cancelled() => return,
            };
            let io = TokioIo::new(tcp);
            if h2 {
                let mut builder = hyper::server::conn::http2::Builder::new(TokioExecutor::new());
                builder
                    .timer(TokioTimer::new())
                    .keep_alive_interval(limits.header_timeout)
                    .keep_alive_timeout(limits.header_timeout)
                    .max_concurrent_streams(H2_STREAMS);
                let conn = builder.serve_connection(io, service);
                tracker.spawn(drive(conn, stop, peer, slot, |c| c.graceful_shutdown()));
            } else {
                // The header timeout counts from the connection's opening, sniffing included.
                let left = limits.header_timeout.saturating_sub(opened.elapsed());
                let mut builder = hyper::server::conn::http1::Builder::new();
                builder
                    .timer(TokioTimer::new())
                    .header_read_timeout(left.max(Duration::from_millis(1)))
                    .keep_alive(true);
                let conn = builder.serve_connection(io, service);
                tracker.spawn(drive(conn, stop, peer, slot, |c| c.graceful_shutdown()));
            }
        });
    }
    drop(listener);
    stop.cancel();
    conns.close();
    conns.wait().await;
    Ok(())
}

/// Whether a connection opens with the HTTP/2 preface. Peeks, so hyper reads the bytes
/// again; a partial preface is peeked again after a short wait (peeking at bytes already
/// there does not wait for more). Callers bound it with the header timeout.
async fn is_h2(tcp: &tokio::net::TcpStream) -> std::io::Result<bool> {
    let mut buf = [0u8; H2_PREFACE.len()];
    loop {
        let n = tcp.peek(&mut buf).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        if buf[..n] != H2_PREFACE[..n] {
            return Ok(false);
        }
        if n == H2_PREFACE.len() {
            return Ok(true);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Serves one connection until it ends, or until `stop` (then gracefully: the response
/// being sent finishes, streams end at shutdown). Holds the connection's `slot` till then.
async fn drive<C>(
    conn: C,
    stop: CancellationToken,
    peer: SocketAddr,
    slot: Slot,
    graceful: impl FnOnce(Pin<&mut C>),
) where
    C: std::future::Future<Output = hyper::Result<()>>,
{
    // A reserve place taken by a newer connection ends this one at once (it never showed the
    // owner's credential, so nothing of the owner's is cut).
    let evicted = slot
        .reserve
        .as_ref()
        .map(|r| r.close.clone())
        .unwrap_or_default();
    let _slot = slot;
    let mut conn = std::pin::pin!(conn);
    tokio::select! {
        _ = evicted.cancelled() => {
            tracing::debug!(%peer, "reserve connection closed for a newer one");
            return;
        }
        r = conn.as_mut() => {
            if let Err(e) = r {
                tracing::trace!(%peer, error = %e, "connection ended");
            }
            return;
        }
        _ = stop.cancelled() => graceful(conn.as_mut()),
    }
    if let Err(e) = conn.await {
        tracing::trace!(%peer, error = %e, "connection ended at shutdown");
    }
}

/// What a reserve connection's requests are checked with.
#[derive(Clone)]
struct OwnerOnly {
    table: Arc<Table>,
    id: u64,
    is_owner: IsOwner,
}

/// The service of one connection: the router, with the peer address as `ConnectInfo` and the
/// body behind its timeout. On a reserve connection (`owner_only`), a request without the
/// owner's credential gets the 503 of a full table and closes the connection.
fn connection_service(
    router: Router,
    peer: SocketAddr,
    body_timeout: Duration,
    owner_only: Option<OwnerOnly>,
) -> TowerToHyperService<
    impl tower::Service<
        http::Request<Incoming>,
        Response = axum::response::Response,
        Error = Infallible,
        Future = impl Send,
    > + Clone
    + Send,
> {
    use axum::response::IntoResponse;
    use tower::ServiceExt;
    let svc = router.map_request(move |req: http::Request<Incoming>| {
        let (mut parts, body) = req.into_parts();
        parts.extensions.insert(ConnectInfo(peer));
        http::Request::from_parts(parts, Body::new(TimedBody::new(body, body_timeout)))
    });
    let svc = tower::util::BoxCloneSyncService::new(svc);
    let guarded = tower::service_fn(move |req: http::Request<Incoming>| {
        let svc = svc.clone();
        let owner_only = owner_only.clone();
        async move {
            if let Some(o) = &owner_only {
                if !(o.is_owner)(req.headers()) {
                    return Ok(reserve_refusal().into_response());
                }
                o.table.prove(o.id);
            }
            svc.oneshot(req).await
        }
    });
    TowerToHyperService::new(guarded)
}

/// The answer on a reserve connection to a request without the owner's credential: the same
/// 503 a full table gives, and the connection closes after it.
fn reserve_refusal() -> axum::response::Response {
    let mut r = axum::response::Response::new(Body::from(
        r#"{"error":{"code":"too_many_connections","message":"Sextant has as many connections open as it allows; retry later"}}"#,
    ));
    *r.status_mut() = http::StatusCode::SERVICE_UNAVAILABLE;
    let h = r.headers_mut();
    h.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    h.insert(
        http::header::RETRY_AFTER,
        http::HeaderValue::from_static("1"),
    );
    h.insert(
        http::header::CONNECTION,
        http::HeaderValue::from_static("close"),
    );
    r
}

/// The body took longer than the body timeout.
#[derive(Debug)]
pub struct BodyTimeout;

impl std::fmt::Display for BodyTimeout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the request body did not arrive within the body timeout")
    }
}

impl std::error::Error for BodyTimeout {}

/// A request body that fails once its deadline passes. The timer is made only when the body
/// first has to wait, so a body that arrived with its head costs none.
struct TimedBody {
    inner: Incoming,
    limit: Duration,
    started: tokio::time::Instant,
    timer: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl TimedBody {
    fn new(inner: Incoming, limit: Duration) -> Self {
        Self {
            inner,
            limit,
            started: tokio::time::Instant::now(),
            timer: None,
        }
    }
}

impl HttpBody for TimedBody {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        match Pin::new(&mut self.inner).poll_frame(cx) {
            Poll::Ready(r) => Poll::Ready(r.map(|f| f.map_err(Into::into))),
            Poll::Pending => {
                let deadline = self.started + self.limit;
                let timer = self
                    .timer
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
                match timer.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Some(Err(Box::new(BodyTimeout)))),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(max: usize, per: usize, room: usize) -> Arc<Table> {
        table_with_reserve(max, per, room, 0)
    }

    fn table_with_reserve(max: usize, per: usize, room: usize, owner: usize) -> Arc<Table> {
        Arc::new(Table {
            limits: ConnLimits {
                header_timeout: Duration::from_secs(1),
                body_timeout: Duration::from_secs(1),
                max_connections: max,
                per_address: per,
                console_room: room,
                owner_room: owner,
            },
            counts: Mutex::default(),
        })
    }

    #[test]
    fn limits_per_address_overall_and_the_console_room() {
        let t = table(6, 2, 2);
        let a: IpAddr = "192.0.2.1".parse().unwrap_or(IpAddr::from([0, 0, 0, 0]));
        let b: IpAddr = "192.0.2.2".parse().unwrap_or(IpAddr::from([0, 0, 0, 0]));
        let console: IpAddr = "127.0.0.1".parse().unwrap_or(IpAddr::from([0, 0, 0, 0]));
        let mut held = vec![t.admit(a).ok(), t.admit(a).ok()];
        assert_eq!(t.admit(a).err(), Some(Full::Address));
        held.push(t.admit(b).ok());
        held.push(t.admit(b).ok());
        // 4 of 6 open: the last 2 are the console's.
        let c: IpAddr = "192.0.2.3".parse().unwrap_or(IpAddr::from([0, 0, 0, 0]));
        assert_eq!(t.admit(c).err(), Some(Full::Total));
        held.push(t.admit(console).ok());
        held.push(t.admit(console).ok());
        assert!(held.iter().all(Option::is_some));
        assert_eq!(t.admit(console).err(), Some(Full::Total));
        // Closing frees the place.
        held.truncate(3);
        assert!(t.admit(c).is_ok());
        drop(held);
        assert_eq!(t.counts.lock().map(|c| c.total).unwrap_or(99), 0);
        assert!(
            t.counts
                .lock()
                .map(|c| c.per_address.is_empty())
                .unwrap_or(false)
        );
    }

    #[test]
    fn the_owner_reserve_takes_the_oldest_unproven_place_and_keeps_proven_ones() {
        let t = table_with_reserve(1, 1, 0, 2);
        let a: IpAddr = "192.0.2.1".parse().unwrap_or(IpAddr::from([0, 0, 0, 0]));
        let normal = t.admit(a).ok();
        assert!(normal.as_ref().is_some_and(|s| s.reserve.is_none()));
        // Over the limits: into the reserve, twice.
        let first = t.admit(a).ok();
        let second = t.admit(a).ok();
        let (Some(first), Some(second)) = (first, second) else {
            panic!("the reserve has two places");
        };
        let (Some(r1), Some(r2)) = (first.reserve.clone(), second.reserve.clone()) else {
            panic!("both are reserve places");
        };
        // The second shows the owner's credential; a third takes the first's place.
        t.prove(r2.id);
        let third = t.admit(a).ok();
        assert!(
            r1.close.is_cancelled(),
            "the oldest unproven place is given up"
        );
        assert!(!r2.close.is_cancelled());
        drop(first);
        // Now the third is the only unproven one: a fourth takes its place; the proven one
        // is never taken, so with both held by the owner the table is full.
        let fourth = t.admit(a).ok();
        assert!(
            third
                .as_ref()
                .and_then(|s| s.reserve.as_ref())
                .is_some_and(|r| r.close.is_cancelled())
        );
        drop(third);
        if let Some(r) = fourth.as_ref().and_then(|s| s.reserve.as_ref()) {
            t.prove(r.id);
        }
        assert_eq!(t.admit(a).err(), Some(Full::Total));
        drop((normal, second, fourth));
        let c = t
            .counts
            .lock()
            .map(|c| (c.total, c.reserve, c.unproven.len()));
        assert_eq!(c.unwrap_or((9, 9, 9)), (0, 0, 0));
    }

    #[test]
    fn the_open_file_limit_is_read() {
        if cfg!(target_os = "linux") {
            assert!(open_file_limit().is_some_and(|n| n > 0));
        }
    }
}
