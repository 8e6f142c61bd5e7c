//! Benchmark (not a test): 10,000 personal schedules.
//!
//! ```text
//! cargo run --release -p sextant-scheduler --example bench_schedules [-- IDLE_SECS]
//! ```
//!
//! 1. Next-fire computation: parse + validate 10,000 expressions across time zones, then the
//!    next fire and the next 5 of each (what every schedule view shows).
//! 2. The loop at rest: 10,000 enabled schedules in a journal, none due for a while; the
//!    loop runs on the system clock and the process's CPU time is read from
//!    `/proc/self/stat` before and after `IDLE_SECS` (default 60) seconds.
//! 3. One tick when nothing is due, and one tick that claims and starts 1,000 Runs due in the
//!    same minute (echo Agent, manual clock).

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, Datelike, Timelike, Utc};
use sextant_core::{AgentSpec, Clock, ManualClock, Principal, ScheduleSource, SystemClock};
use sextant_journal::Journal;
use sextant_runtime::{Runtime, RuntimeConfig};
use sextant_scheduler::{CronSpec, ScheduleFields, Scheduler};
use tokio_util::sync::CancellationToken;

const N: usize = 10_000;
const ZONES: &[&str] = &[
    "UTC",
    "Europe/Berlin",
    "Europe/London",
    "America/New_York",
    "America/Los_Angeles",
    "America/Sao_Paulo",
    "Asia/Kolkata",
    "Asia/Tokyo",
    "Australia/Sydney",
    "Pacific/Auckland",
];

/// A spread of realistic expressions: weekday mornings, hourly, every 15 minutes, monthly,
/// last-day-of-month, nth weekday, ranges and lists.
fn expression(i: usize) -> String {
    let m = i % 60;
    let h = (i / 60) % 24;
    match i % 8 {
        0 => format!("{m} {h} * * 1-5"),
        1 => format!("{m} * * * *"),
        2 => "*/15 * * * *".to_string(),
        3 => format!("{m} {h} 1 * *"),
        4 => format!("{m} {h} L * *"),
        5 => format!("{m} {h} * * MON#2"),
        6 => format!("{m} {h},{} * * SAT,SUN", (h + 12) % 24),
        _ => format!("0 {m} {h} * * *"),
    }
}

/// Process CPU time (user + system, including threads that have exited), from
/// `/proc/self/stat`. Its unit is the kernel's clock tick (`getconf CLK_TCK`, usually 10 ms),
/// so the idle phase runs long enough for that to be fine-grained.
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which is in parentheses and may contain spaces).
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let fields: Vec<u64> = rest
        .split_whitespace()
        .map(|f| f.parse().unwrap_or(0))
        .collect();
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name and state.
    let ticks = fields.get(11).copied().unwrap_or(0) + fields.get(12).copied().unwrap_or(0);
    Duration::from_secs_f64(ticks as f64 / clock_ticks_per_sec())
}

fn clock_ticks_per_sec() -> f64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0)
}

async fn rig(dir: &std::path::Path, clock: Arc<dyn Clock>) -> (Scheduler, Runtime) {
    let journal = Journal::open(dir.join("journal.db")).expect("journal");
    let agents = vec![AgentSpec::echo()];
    journal
        .upsert_agents(agents.clone(), clock.now())
        .await
        .expect("agents");
    // The benchmark's journal is fresh: there is nothing to recover.
    let (runtime, _recovery) = Runtime::builder(
        journal,
        clock,
        agents,
        RuntimeConfig {
            work_dir: dir.join("work"),
            codex_homes: dir.join("codex"),
            person_codex_home: None,
            idle_worker: Duration::from_secs(60),
            cancel_grace: std::time::Duration::from_secs(5),
        },
    )
    .build();
    (Scheduler::new(runtime.clone()), runtime)
}

fn fields(name: String, cron: String, tz: &str) -> ScheduleFields {
    ScheduleFields {
        name: Some(name),
        prompt: Some("benchmark".into()),
        cron: Some(cron),
        timezone: Some(tz.into()),
        agent_id: Some("echo".into()),
        ..Default::default()
    }
}

#[tokio::main]
async fn main() {
    let idle_secs: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(60);
    let now = SystemClock.now();

    // 1. Pure next-fire computation.
    let inputs: Vec<(String, &str)> = (0..N)
        .map(|i| (expression(i), ZONES[i % ZONES.len()]))
        .collect();
    let t = Instant::now();
    let specs: Vec<CronSpec> = inputs
        .iter()
        .map(|(e, z)| CronSpec::validate(e, z, now).expect("valid"))
        .collect();
    let validate = t.elapsed();
    let t = Instant::now();
    let mut fired = 0;
    for s in &specs {
        fired += s.next_after(now).is_some() as usize;
    }
    let next1 = t.elapsed();
    let t = Instant::now();
    let mut listed = 0;
    for s in &specs {
        listed += s.upcoming(now, 5).len();
    }
    let next5 = t.elapsed();
    assert_eq!(fired, N);
    assert_eq!(listed, 5 * N);
    println!("next-fire, {N} schedules across {} zones:", ZONES.len());
    println!(
        "  parse + validate (8 fires each): {:>8.1} ms total, {:>6.2} us/schedule",
        validate.as_secs_f64() * 1e3,
        validate.as_secs_f64() * 1e6 / N as f64
    );
    println!(
        "  next fire:                       {:>8.1} ms total, {:>6.2} us/schedule",
        next1.as_secs_f64() * 1e3,
        next1.as_secs_f64() * 1e6 / N as f64
    );
    println!(
        "  next 5 fires (schedule view):    {:>8.1} ms total, {:>6.2} us/schedule",
        next5.as_secs_f64() * 1e3,
        next5.as_secs_f64() * 1e6 / N as f64
    );

    // 2. The loop at rest over 10,000 schedules: yearly slots in another month, so none is
    // due while we measure.
    let dir = tempfile::tempdir().expect("temp dir");
    let (scheduler, runtime) = rig(dir.path(), Arc::new(SystemClock)).await;
    let other_month = (now.month() % 12) + 1;
    let me = Principal::person();
    let t = Instant::now();
    for i in 0..N {
        let cron = format!(
            "{} {} {} {other_month} *",
            i % 60,
            (i / 60) % 24,
            1 + (i % 28)
        );
        scheduler
            .create(
                &me,
                fields(format!("s{i}"), cron, ZONES[i % ZONES.len()]),
                ScheduleSource::Api,
            )
            .await
            .expect("create");
    }
    let created = t.elapsed();
    println!("loop at rest, {N} enabled schedules (none due):");
    println!(
        "  create via the API path:          {:>8.1} ms total, {:>6.2} us/schedule",
        created.as_secs_f64() * 1e3,
        created.as_secs_f64() * 1e6 / N as f64
    );
    let t = Instant::now();
    let none = scheduler.run_due_now().await.expect("tick");
    assert!(none.is_empty());
    println!(
        "  one tick, nothing due:            {:>8.2} ms",
        t.elapsed().as_secs_f64() * 1e3
    );
    let cancel = CancellationToken::new();
    let handle = scheduler.start(cancel.clone());
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (cpu0, wall0) = (cpu_time(), Instant::now());
    tokio::time::sleep(Duration::from_secs(idle_secs)).await;
    let (cpu, wall) = (cpu_time().saturating_sub(cpu0), wall0.elapsed());
    println!(
        "  idle CPU over {:.0} s:              {:>8.2} ms ({:.4}% of one core)",
        wall.as_secs_f64(),
        cpu.as_secs_f64() * 1e3,
        100.0 * cpu.as_secs_f64() / wall.as_secs_f64()
    );
    handle.shutdown().await;
    runtime.shutdown(Duration::from_secs(5)).await;
    drop(dir);

    // 3. A burst: 1,000 schedules due in the same minute.
    let dir = tempfile::tempdir().expect("temp dir");
    let start: DateTime<Utc> = now.with_second(30).unwrap_or(now);
    let clock = ManualClock::new(start);
    let (scheduler, runtime) = rig(dir.path(), Arc::new(clock.clone())).await;
    for i in 0..1000 {
        scheduler
            .create(
                &me,
                fields(format!("b{i}"), "* * * * *".into(), "UTC"),
                ScheduleSource::Api,
            )
            .await
            .expect("create");
    }
    clock.set(start + chrono::Duration::seconds(30));
    let t = Instant::now();
    let runs = scheduler.run_due_now().await.expect("tick");
    let burst = t.elapsed();
    assert_eq!(runs.len(), 1000);
    println!("burst:");
    println!(
        "  claim + start 1,000 due Runs:     {:>8.1} ms ({:.2} ms/Run)",
        burst.as_secs_f64() * 1e3,
        burst.as_secs_f64() * 1e3 / 1000.0
    );
    runtime.shutdown(Duration::from_secs(30)).await;
}
