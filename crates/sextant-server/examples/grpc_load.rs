//! `bench/run.sh`'s load generator for the gRPC binding (`BINDINGS=… grpc`): what `wrk` and
//! `bench/send_message.lua` do for JSON-RPC and HTTP+JSON, over gRPC, and reported in the same
//! `WRK_RESULT {json}` line, so one summary reads all three.
//!
//! `--conns N` HTTP/2 connections (each its own channel), each with one request in flight at a
//! time, as wrk keeps one per connection; requests for `--duration` seconds after `--warmup`
//! unmeasured ones. Every `SendMessage` carries a unique messageId (`<run-id>-c<conn>-<n>`), so
//! no request is a cheaper duplicate. With `--verify` (the default) every answer must be a
//! completed task; `--stream` sends `SendStreamingMessage` and counts the stream's events;
//! `--list` sends `ListTasks` (pageSize 20). Latency percentiles are exact (every sample is
//! kept). Runs on two tokio workers, as `wrk -t2` runs two threads.
//!
//! ```text
//! cargo build --release -p sextant-server --example grpc_load
//! target/release/examples/grpc_load --target 127.0.0.1:PORT --tenant echo --conns 32 --duration 10
//! ```
//!
//! It lives beside `bare_a2a` because it uses this crate's generated gRPC client
//! (`sextant_server::a2a::grpc::pb`); tonic's channel is a dev-dependency for it and the tests.

use std::time::{Duration, Instant};

mod common;

use sextant_server::a2a::grpc::pb;
use sextant_server::a2a::grpc::pb::a2a_service_client::A2aServiceClient;
use tonic::transport::{Channel, Endpoint};

#[derive(Clone)]
struct Args {
    target: String,
    tenant: String,
    conns: usize,
    duration: Duration,
    warmup: Duration,
    run_id: String,
    text: String,
    verify: bool,
    stream: bool,
    list: bool,
}

fn usage() -> ! {
    eprintln!(
        "usage: grpc_load --target HOST:PORT [--tenant ID] [--conns N] [--duration SECS] \
         [--warmup SECS] [--run-id TAG] [--text TEXT] [--no-verify] [--stream | --list]"
    );
    std::process::exit(2)
}

fn parse() -> Args {
    let mut a = Args {
        target: String::new(),
        tenant: String::new(),
        conns: 1,
        duration: Duration::from_secs(10),
        warmup: Duration::ZERO,
        run_id: format!("grpc-{}", std::process::id()),
        text: "hello from grpc_load".into(),
        verify: true,
        stream: false,
        list: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| usage());
        let secs = |v: String| Duration::from_secs_f64(v.parse().unwrap_or_else(|_| usage()));
        match flag.as_str() {
            "--target" => a.target = value(),
            "--tenant" => a.tenant = value(),
            "--conns" => a.conns = value().parse().unwrap_or_else(|_| usage()),
            "--duration" => a.duration = secs(value()),
            "--warmup" => a.warmup = secs(value()),
            "--run-id" => a.run_id = value(),
            "--text" => a.text = value(),
            "--no-verify" => a.verify = false,
            "--stream" => a.stream = true,
            "--list" => a.list = true,
            _ => usage(),
        }
    }
    if a.target.is_empty() || a.conns == 0 || (a.stream && a.list) {
        usage()
    }
    a
}

/// What one connection saw.
#[derive(Default)]
struct Tally {
    latencies_us: Vec<u64>,
    events: u64,
    bad: u64,
    errors: u64,
}

fn request(args: &Args, conn: usize, n: u64) -> pb::SendMessageRequest {
    common::send_request(
        &args.tenant,
        format!("{}-c{conn}-{n}", args.run_id),
        &args.text,
    )
}

/// One call; `Ok(events)` when it succeeded and (with `--verify`) was what the bench expects.
async fn call(
    client: &mut A2aServiceClient<Channel>,
    args: &Args,
    conn: usize,
    n: u64,
) -> Result<Result<u64, ()>, tonic::Status> {
    if args.list {
        let r = client
            .list_tasks(pb::ListTasksRequest {
                tenant: args.tenant.clone(),
                page_size: Some(20),
                ..Default::default()
            })
            .await?;
        let _ = r.into_inner();
        return Ok(Ok(0));
    }
    if args.stream {
        let mut s = client
            .send_streaming_message(request(args, conn, n))
            .await?
            .into_inner();
        let (mut events, mut done) = (0, false);
        while let Some(item) = s.message().await? {
            events += 1;
            done |= common::says_completed(&item);
        }
        return Ok(if done || !args.verify {
            Ok(events)
        } else {
            Err(())
        });
    }
    let r = client
        .send_message(request(args, conn, n))
        .await?
        .into_inner();
    let ok = match r.payload {
        Some(pb::send_message_response::Payload::Task(t)) => {
            common::is_completed(t.status.as_ref())
        }
        _ => false,
    };
    Ok(if ok || !args.verify { Ok(0) } else { Err(()) })
}

async fn connection(args: Args, conn: usize, start: Instant) -> Tally {
    let mut tally = Tally::default();
    let endpoint = match Endpoint::from_shared(format!("http://{}", args.target)) {
        Ok(e) => e.tcp_nodelay(true),
        Err(_) => usage(),
    };
    let channel = match endpoint.connect().await {
        Ok(c) => c,
        Err(e) => {
            eprintln!("grpc_load: connect {}: {e}", args.target);
            tally.errors += 1;
            return tally;
        }
    };
    let mut client = A2aServiceClient::new(channel);
    let measure_from = start + args.warmup;
    let end = measure_from + args.duration;
    let mut n = 0u64;
    loop {
        let t0 = Instant::now();
        if t0 >= end {
            break;
        }
        n += 1;
        let outcome = call(&mut client, &args, conn, n).await;
        if t0 < measure_from {
            continue;
        }
        match outcome {
            Ok(Ok(events)) => tally.events += events,
            Ok(Err(())) => tally.bad += 1,
            Err(_) => tally.errors += 1,
        }
        tally.latencies_us.push(t0.elapsed().as_micros() as u64);
    }
    tally
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn main() {
    let args = parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap_or_else(|e| {
            eprintln!("grpc_load: tokio: {e}");
            std::process::exit(1)
        });
    runtime.block_on(async {
        let start = Instant::now();
        let tasks: Vec<_> = (0..args.conns)
            .map(|c| tokio::spawn(connection(args.clone(), c, start)))
            .collect();
        let mut all = Tally::default();
        for t in tasks {
            match t.await {
                Ok(t) => {
                    all.latencies_us.extend(t.latencies_us);
                    all.events += t.events;
                    all.bad += t.bad;
                    all.errors += t.errors;
                }
                Err(_) => all.errors += 1,
            }
        }
        let measured = start.elapsed().saturating_sub(args.warmup);
        let mut l = all.latencies_us;
        l.sort_unstable();
        let requests = l.len() as u64;
        let mean = if l.is_empty() {
            0.0
        } else {
            l.iter().sum::<u64>() as f64 / l.len() as f64
        };
        let secs = measured.as_secs_f64();
        println!(
            "Requests/sec: {:.2}",
            if secs > 0.0 {
                requests as f64 / secs
            } else {
                0.0
            }
        );
        println!(
            "WRK_RESULT {{\"requests\":{requests},\"duration_us\":{},\"bytes\":0,\
             \"errors_connect\":0,\"errors_read\":0,\"errors_write\":0,\"errors_status\":{},\
             \"errors_timeout\":0,\"p50_us\":{},\"p90_us\":{},\"p99_us\":{},\"mean_us\":{mean:.1},\
             \"max_us\":{},\"verified\":{},\"bad\":{},\"events\":{}}}",
            measured.as_micros(),
            all.errors,
            percentile(&l, 50.0),
            percentile(&l, 90.0),
            percentile(&l, 99.0),
            l.last().copied().unwrap_or(0),
            args.verify,
            all.bad,
            all.events,
        );
    });
}
