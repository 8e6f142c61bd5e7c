//! `bench/run.sh first`'s probe: how long a `SendStreamingMessage` caller waits for the
//! stream's **first event**, and for the whole stream, over JSON-RPC (SSE), HTTP+JSON (SSE) or
//! gRPC. `wrk` times only whole responses, so it cannot say this.
//!
//! `--conns N` connections (HTTP/1.1 keep-alive for the SSE bindings, one HTTP/2 channel each
//! for gRPC), each with one stream open at a time, for `--duration` seconds after `--warmup`
//! unmeasured ones. Every request carries a unique messageId and the text `--text` (default
//! `chunks=7 hello`: Sextant's echo Agent, and the bench's SDK peers, answer that in 7 artifact
//! chunks, so a stream carries 10 events). Every stream must end with the task completed, or it
//! counts as bad. Prints one line:
//!
//! ```text
//! FIRST_RESULT {"streams":…,"events":…,"bad":…,"errors":…,"duration_us":…,
//!               "first_p50_us":…,"first_p90_us":…,"first_p99_us":…,"whole_p50_us":…,"whole_p99_us":…}
//! ```
//!
//! ```text
//! cargo build --release -p sextant-server --example first_event
//! target/release/examples/first_event --target 127.0.0.1:PORT --path /api/v1/agents/echo/a2a \
//!     --binding jsonrpc --conns 32 --duration 10
//! ```
//!
//! The SSE client is a plain HTTP/1.1 request on a TCP stream and a chunked-body reader: the
//! smallest client that can see when the first event's bytes arrive.

use std::time::{Duration, Instant};

mod common;

use sextant_server::a2a::grpc::pb::a2a_service_client::A2aServiceClient;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tonic::transport::Endpoint;

#[derive(Clone, Copy, PartialEq)]
enum Binding {
    JsonRpc,
    Rest,
    Grpc,
}

#[derive(Clone)]
struct Args {
    target: String,
    path: String,
    tenant: String,
    binding: Binding,
    conns: usize,
    duration: Duration,
    warmup: Duration,
    run_id: String,
    text: String,
}

fn usage() -> ! {
    eprintln!(
        "usage: first_event --target HOST:PORT [--binding jsonrpc|rest|grpc] [--path PATH] \
         [--tenant ID] [--conns N] [--duration SECS] [--warmup SECS] [--run-id TAG] [--text TEXT]\n\
         (--path: the JSON-RPC endpoint, or the Agent's HTTP+JSON base; gRPC uses --tenant)"
    );
    std::process::exit(2)
}

fn parse() -> Args {
    let mut a = Args {
        target: String::new(),
        path: "/api/v1/agents/echo/a2a".into(),
        tenant: "echo".into(),
        binding: Binding::JsonRpc,
        conns: 1,
        duration: Duration::from_secs(10),
        warmup: Duration::ZERO,
        run_id: format!("first-{}", std::process::id()),
        text: "chunks=7 hello".into(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| usage());
        let secs = |v: String| Duration::from_secs_f64(v.parse().unwrap_or_else(|_| usage()));
        match flag.as_str() {
            "--target" => a.target = value(),
            "--path" => a.path = value(),
            "--tenant" => a.tenant = value(),
            "--binding" => {
                a.binding = match value().as_str() {
                    "jsonrpc" => Binding::JsonRpc,
                    "rest" => Binding::Rest,
                    "grpc" => Binding::Grpc,
                    _ => usage(),
                }
            }
            "--conns" => a.conns = value().parse().unwrap_or_else(|_| usage()),
            "--duration" => a.duration = secs(value()),
            "--warmup" => a.warmup = secs(value()),
            "--run-id" => a.run_id = value(),
            "--text" => a.text = value(),
            _ => usage(),
        }
    }
    if a.target.is_empty() || a.conns == 0 {
        usage()
    }
    a
}

/// One stream's timing: to its first event and to its end, and how many events it carried.
struct Timing {
    first: Duration,
    whole: Duration,
    events: u64,
    completed: bool,
}

#[derive(Default)]
struct Tally {
    first_us: Vec<u64>,
    whole_us: Vec<u64>,
    events: u64,
    bad: u64,
    errors: u64,
}

/// Reads an HTTP/1.1 response whose body is chunked SSE, noting when the first event (the
/// first blank line of the body) arrives. `Err` on anything else (a bad status included).
async fn read_sse(sock: &mut TcpStream, t0: Instant) -> std::io::Result<Timing> {
    let bad = |why: &str| std::io::Error::other(why.to_string());
    let mut buf: Vec<u8> = Vec::with_capacity(16 * 1024);
    let mut tmp = [0u8; 16 * 1024];
    // Headers.
    let head_end = loop {
        if let Some(i) = find(&buf, b"\r\n\r\n") {
            break i + 4;
        }
        let n = sock.read(&mut tmp).await?;
        if n == 0 {
            return Err(bad("closed before the headers"));
        }
        buf.extend_from_slice(&tmp[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    if !head.starts_with("http/1.1 200") || !head.contains("transfer-encoding: chunked") {
        return Err(bad("not a 200 chunked response"));
    }
    let mut raw = buf.split_off(head_end);
    let mut body: Vec<u8> = Vec::new();
    let mut first = None;
    loop {
        // One chunk: "<hex size>\r\n<data>\r\n"; size 0 ends the body ("0\r\n\r\n").
        let Some(line_end) = find(&raw, b"\r\n") else {
            read_more(sock, &mut raw, &mut tmp).await?;
            continue;
        };
        let size_text = std::str::from_utf8(&raw[..line_end]).map_err(|_| bad("chunk size"))?;
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| bad("chunk size"))?;
        if raw.len() < line_end + 2 + size + 2 {
            read_more(sock, &mut raw, &mut tmp).await?;
            continue;
        }
        body.extend_from_slice(&raw[line_end + 2..line_end + 2 + size]);
        raw.drain(..line_end + 2 + size + 2);
        if first.is_none() && find(&body, b"\n\n").is_some() {
            first = Some(t0.elapsed());
        }
        if size == 0 {
            break;
        }
    }
    let whole = t0.elapsed();
    let text = String::from_utf8_lossy(&body);
    Ok(Timing {
        first: first.unwrap_or(whole),
        whole,
        events: text.matches("data:").count() as u64,
        completed: text.contains("TASK_STATE_COMPLETED"),
    })
}

async fn read_more(sock: &mut TcpStream, raw: &mut Vec<u8>, tmp: &mut [u8]) -> std::io::Result<()> {
    let n = sock.read(tmp).await?;
    if n == 0 {
        return Err(std::io::Error::other("closed mid-body"));
    }
    raw.extend_from_slice(&tmp[..n]);
    Ok(())
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn sse_request(args: &Args, conn: usize, n: u64) -> Vec<u8> {
    let id = format!("{}-c{conn}-{n}", args.run_id);
    let message = serde_json::json!({
        "messageId": id, "role": "ROLE_USER", "parts": [{ "text": args.text }],
    });
    let (path, body) = match args.binding {
        Binding::Rest => (
            format!("{}/message:stream", args.path.trim_end_matches('/')),
            serde_json::json!({ "message": message }),
        ),
        _ => (
            args.path.clone(),
            serde_json::json!({
                "jsonrpc": "2.0", "id": n, "method": "SendStreamingMessage",
                "params": { "message": message },
            }),
        ),
    };
    let body = body.to_string();
    format!(
        "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
         Accept: text/event-stream\r\nA2A-Version: 1.0\r\nContent-Length: {}\r\n\r\n{body}",
        args.target,
        body.len()
    )
    .into_bytes()
}

async fn sse_connection(args: Args, conn: usize, start: Instant) -> Tally {
    let mut tally = Tally::default();
    let mut sock = match TcpStream::connect(&args.target).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("first_event: connect {}: {e}", args.target);
            tally.errors += 1;
            return tally;
        }
    };
    let _ = sock.set_nodelay(true);
    let (measure_from, end) = (start + args.warmup, start + args.warmup + args.duration);
    let mut n = 0;
    loop {
        let t0 = Instant::now();
        if t0 >= end {
            break;
        }
        n += 1;
        let sent = sock.write_all(&sse_request(&args, conn, n)).await;
        let timing = match sent {
            Ok(()) => read_sse(&mut sock, t0).await,
            Err(e) => Err(e),
        };
        if t0 < measure_from {
            if timing.is_err() {
                break;
            }
            continue;
        }
        match timing {
            Ok(t) => tally.note(t),
            Err(e) => {
                eprintln!("first_event: {e}");
                tally.errors += 1;
                break;
            }
        }
    }
    tally
}

async fn grpc_connection(args: Args, conn: usize, start: Instant) -> Tally {
    let mut tally = Tally::default();
    let Ok(endpoint) = Endpoint::from_shared(format!("http://{}", args.target)) else {
        usage()
    };
    let channel = match endpoint.tcp_nodelay(true).connect().await {
        Ok(c) => c,
        Err(e) => {
            eprintln!("first_event: connect {}: {e}", args.target);
            tally.errors += 1;
            return tally;
        }
    };
    let mut client = A2aServiceClient::new(channel);
    let (measure_from, end) = (start + args.warmup, start + args.warmup + args.duration);
    let mut n = 0u64;
    loop {
        let t0 = Instant::now();
        if t0 >= end {
            break;
        }
        n += 1;
        let req = common::send_request(
            &args.tenant,
            format!("{}-c{conn}-{n}", args.run_id),
            &args.text,
        );
        let timing = async {
            let mut s = client.send_streaming_message(req).await?.into_inner();
            let (mut first, mut events, mut completed) = (None, 0, false);
            while let Some(item) = s.message().await? {
                first.get_or_insert_with(|| t0.elapsed());
                events += 1;
                completed |= common::says_completed(&item);
            }
            let whole = t0.elapsed();
            Ok::<_, tonic::Status>(Timing {
                first: first.unwrap_or(whole),
                whole,
                events,
                completed,
            })
        }
        .await;
        if t0 < measure_from {
            continue;
        }
        match timing {
            Ok(t) => tally.note(t),
            Err(e) => {
                eprintln!("first_event: {e}");
                tally.errors += 1;
            }
        }
    }
    tally
}

impl Tally {
    fn note(&mut self, t: Timing) {
        if !t.completed {
            self.bad += 1;
        }
        self.first_us.push(t.first.as_micros() as u64);
        self.whole_us.push(t.whole.as_micros() as u64);
        self.events += t.events;
    }
}

fn pct(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn main() {
    let args = parse();
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("first_event: {e}");
            std::process::exit(1)
        }
    };
    let total = rt.block_on(async {
        let start = Instant::now();
        let tasks: Vec<_> = (0..args.conns)
            .map(|c| {
                let a = args.clone();
                match a.binding {
                    Binding::Grpc => tokio::spawn(grpc_connection(a, c, start)),
                    _ => tokio::spawn(sse_connection(a, c, start)),
                }
            })
            .collect();
        let mut total = Tally::default();
        for t in tasks {
            match t.await {
                Ok(t) => {
                    total.first_us.extend(t.first_us);
                    total.whole_us.extend(t.whole_us);
                    total.events += t.events;
                    total.bad += t.bad;
                    total.errors += t.errors;
                }
                Err(_) => total.errors += 1,
            }
        }
        total
    });
    let (mut first, mut whole) = (total.first_us, total.whole_us);
    first.sort_unstable();
    whole.sort_unstable();
    println!(
        "FIRST_RESULT {}",
        serde_json::json!({
            "streams": first.len(),
            "events": total.events,
            "bad": total.bad,
            "errors": total.errors,
            "duration_us": args.duration.as_micros() as u64,
            "first_p50_us": pct(&first, 0.50),
            "first_p90_us": pct(&first, 0.90),
            "first_p99_us": pct(&first, 0.99),
            "whole_p50_us": pct(&whole, 0.50),
            "whole_p99_us": pct(&whole, 0.99),
        })
    );
}
