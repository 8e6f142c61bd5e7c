//! The retention job: applies `security.toml`'s `[retention]` to the journal at start-up and
//! then every [`EVERY`], and the `sextant retention` command's one-off run and dry run.
//!
//! The job decides when to run by the [`Clock`] (a run is due when none ran yet, [`EVERY`]
//! after the last one, or when the clock went back), and looks at the clock every [`TICK`] of
//! real time. The deletes themselves are the journal's ([`sextant_journal::retention`]): in
//! the journal's writer, in small batches, so the async runtime never waits on SQL and live
//! writes are held up only briefly.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use sextant_access::settings::RetentionFile;
use sextant_core::Clock;
use sextant_journal::Journal;
use sextant_journal::retention::{self, Report};
use tokio_util::sync::CancellationToken;

/// How often the job runs (by the clock).
pub const EVERY: chrono::Duration = chrono::Duration::hours(1);

/// How often (real time) the job asks the clock whether a run is due.
pub const TICK: Duration = Duration::from_secs(60);

/// Free bytes left on the free list, in a journal that cannot give them back (no incremental
/// auto-vacuum), beyond which the job says how to get them back.
const FREE_HINT_BYTES: u64 = 64 * 1024 * 1024;

/// The retention job of one journal.
#[derive(Clone)]
pub struct Retention {
    journal: Journal,
    clock: Arc<dyn Clock>,
    settings: RetentionFile,
    data_dir: PathBuf,
    /// When the last run started.
    last: Arc<Mutex<Option<DateTime<Utc>>>>,
    /// One run at a time (the loop's and a test's `run_now` may meet).
    running: Arc<tokio::sync::Mutex<()>>,
}

impl Retention {
    /// The job for `settings` (which the caller validated). `None` when retention is off.
    pub fn new(
        journal: Journal,
        clock: Arc<dyn Clock>,
        settings: RetentionFile,
        data_dir: &Path,
    ) -> Option<Self> {
        settings.enabled().then(|| Self {
            journal,
            clock,
            settings,
            data_dir: data_dir.to_path_buf(),
            last: Arc::new(Mutex::new(None)),
            running: Arc::new(tokio::sync::Mutex::new(())),
        })
    }

    /// Whether a run is due at `now`.
    pub fn due(&self, now: DateTime<Utc>) -> bool {
        match *self.last.lock().unwrap_or_else(|e| e.into_inner()) {
            None => true,
            // A clock that went back (a corrected machine clock) runs the job again rather
            // than wait for a time that may be far off.
            Some(last) => now < last || now - last >= EVERY,
        }
    }

    /// Runs once now, whether due or not.
    pub async fn run_now(&self) -> Result<Report> {
        let _one = self.running.lock().await;
        let now = self.clock.now();
        *self.last.lock().unwrap_or_else(|e| e.into_inner()) = Some(now);
        let export = self
            .settings
            .export_before_delete
            .then(|| retention::export_path(&self.data_dir, now));
        let report = self
            .journal
            .retain(self.settings.policy(), now, export)
            .await
            .context("retention")?;
        log(&report);
        Ok(report)
    }

    /// Runs if due; `None` if it was not.
    pub async fn run_if_due(&self) -> Option<Result<Report>> {
        if !self.due(self.clock.now()) {
            return None;
        }
        Some(self.run_now().await)
    }

    /// Runs the job until `cancel`: once now, then whenever due.
    pub fn start(self, cancel: CancellationToken) -> tokio::task::JoinHandle<()> {
        tokio::spawn(async move {
            loop {
                if let Some(Err(e)) = self.run_if_due().await {
                    tracing::warn!(error = format!("{e:#}"), "retention run failed");
                }
                tokio::select! {
                    _ = cancel.cancelled() => return,
                    _ = tokio::time::sleep(TICK) => {}
                }
            }
        })
    }
}

fn log(r: &Report) {
    if r.sessions > 0 {
        tracing::info!(
            sessions = r.sessions,
            tasks = r.tasks,
            events = r.events,
            kept = r.kept,
            export = r.export.as_ref().map(|p| p.display().to_string()),
            used_before = r.used_before,
            used_after = r.used_after,
            "retention: deleted old Sessions"
        );
    }
    if let Some(rec) = &r.reclaimed
        && rec.auto_vacuum != 2
        && rec.free_pages * 4096 > FREE_HINT_BYTES
    {
        tracing::info!(
            free_pages = rec.free_pages,
            "retention: the freed space is reused by new writes; to shrink the file, stop \
             Sextant and run `sextant retention --vacuum` once"
        );
    }
}

/// Bytes in MB (kB under one MB), for people.
pub fn mb(bytes: u64) -> String {
    if bytes < 1_000_000 {
        format!("{:.1} kB", bytes as f64 / 1e3)
    } else {
        format!("{:.1} MB", bytes as f64 / 1e6)
    }
}

fn no_policy() -> anyhow::Error {
    anyhow::anyhow!(
        "no retention policy: set keep_days or keep_gb under [retention] in security.toml, \
         or give --keep-days / --keep-gb"
    )
}

/// `sextant retention --dry-run`: prints the Sessions `settings` would delete at `now`, one a
/// line on stdout, and a summary on stderr. Reads only (beside a running Sextant too).
pub fn dry_run(data_dir: &Path, settings: &RetentionFile, now: DateTime<Utc>) -> Result<()> {
    use std::io::Write;
    if !settings.enabled() {
        return Err(no_policy());
    }
    let path = data_dir.join("journal.db");
    let c = sextant_journal::export::open_for_export(&path)
        .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let plan = retention::plan(&c, &settings.policy(), now, usize::MAX)?;
    let mut out = std::io::stdout().lock();
    for s in &plan.candidates {
        writeln!(
            out,
            "{}  {}  {} tasks  {}  {}  ~{}",
            s.updated_at,
            s.session_id,
            s.tasks.len(),
            s.caller,
            s.agent_id,
            mb(s.est_bytes)
        )?;
    }
    eprintln!(
        "sextant: would delete {} Sessions ({} tasks, about {} of the journal's {}); {} kept \
         (pending work, a schedule's latest Run, or active in the last hour){}",
        plan.candidates.len(),
        plan.tasks(),
        mb(plan.est_bytes()),
        mb(plan.used_bytes),
        plan.kept,
        if settings.export_before_delete {
            "; they would be exported to retention/ first"
        } else {
            ""
        }
    );
    Ok(())
}

/// `sextant retention`: applies `settings` once at `now` (and with `vacuum`, then switches the
/// journal to incremental auto-vacuum). Needs the data dir: refused while Sextant runs.
pub fn run_once(
    data_dir: &Path,
    settings: &RetentionFile,
    vacuum: bool,
    now: DateTime<Utc>,
) -> Result<()> {
    if !settings.enabled() && !vacuum {
        return Err(no_policy());
    }
    // A running Sextant applies the policy itself; two writers would only contend.
    let _lock = crate::data_dir_lock::DataDirLock::acquire(data_dir)?;
    let path = data_dir.join("journal.db");
    if settings.enabled() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let r = rt.block_on(async {
            let journal = Journal::open(&path).context("opening the journal")?;
            let export = settings
                .export_before_delete
                .then(|| retention::export_path(data_dir, now));
            journal
                .retain(settings.policy(), now, export)
                .await
                .context("retention")
        })?;
        eprintln!(
            "sextant: deleted {} Sessions ({} tasks, {} events); {} kept; the journal uses {} \
             (was {}){}",
            r.sessions,
            r.tasks,
            r.events,
            r.kept,
            mb(r.used_after),
            mb(r.used_before),
            r.export
                .as_ref()
                .map(|p| format!("; exported to {}", p.display()))
                .unwrap_or_default()
        );
        if let Some(rec) = r.reclaimed.as_ref().filter(|r| r.auto_vacuum != 2)
            && !vacuum
        {
            eprintln!(
                "  {} free pages are reused by new writes; `sextant retention --vacuum` \
                 shrinks the file",
                rec.free_pages
            );
        }
    }
    if vacuum {
        let converted = retention::convert_to_incremental(&path)?;
        let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        eprintln!(
            "sextant: {} ({} on disk)",
            if converted {
                "the journal was vacuumed and now gives freed space back as it goes"
            } else {
                "the journal already gives freed space back (incremental auto-vacuum)"
            },
            mb(size)
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use sextant_core::ManualClock;

    fn t0() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-11-01T00:00:00Z")
            .unwrap()
            .to_utc()
    }

    async fn job(dir: &tempfile::TempDir, clock: &ManualClock, keep_days: u32) -> Retention {
        let journal = Journal::open(dir.path().join("journal.db")).unwrap();
        let settings = RetentionFile {
            keep_days: Some(keep_days),
            ..RetentionFile::default()
        };
        Retention::new(journal, Arc::new(clock.clone()), settings, dir.path()).unwrap()
    }

    #[test]
    fn retention_off_starts_no_job() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(dir.path().join("journal.db")).unwrap();
        let clock = Arc::new(ManualClock::new(t0()));
        assert!(Retention::new(journal, clock, RetentionFile::default(), dir.path()).is_none());
    }

    /// Due at once, then again only an hour of the clock later (or when the clock went back).
    #[tokio::test]
    async fn the_job_runs_at_start_and_then_hourly_by_the_clock() {
        let dir = tempfile::tempdir().unwrap();
        let clock = ManualClock::new(t0());
        let job = job(&dir, &clock, 30).await;
        assert!(job.run_if_due().await.is_some());
        assert!(job.run_if_due().await.is_none());
        clock.advance(chrono::Duration::minutes(59));
        assert!(job.run_if_due().await.is_none());
        clock.advance(chrono::Duration::minutes(1));
        assert!(job.run_if_due().await.unwrap().is_ok());
        assert!(!job.due(clock.now()));
        clock.advance(chrono::Duration::minutes(-5));
        assert!(job.due(clock.now()));
    }

    /// The job's cut-off is the clock's now: a Session goes once the clock is past its age.
    #[tokio::test]
    async fn the_job_deletes_by_the_clocks_time() {
        let dir = tempfile::tempdir().unwrap();
        let clock = ManualClock::new(t0());
        let job = job(&dir, &clock, 2).await;
        let j = job.journal.clone();
        j.upsert_agents(vec![sextant_core::AgentSpec::echo()], t0())
            .await
            .unwrap();
        let mut m = sextant_core::a2a::Message::new(
            sextant_core::a2a::Role::User,
            vec![sextant_core::a2a::Part::text("hi")],
        );
        m.message_id = "m1".into();
        let task = j
            .admit(sextant_journal::Admission {
                caller: sextant_core::CallerKey::from_stored("alice"),
                caller_kind: sextant_core::PrincipalKind::Person,
                agent_id: "echo".into(),
                context_id: None,
                task_id: None,
                message: m,
                content_hash: "h".into(),
                input_key: "m1".into(),
                origin: sextant_core::Origin::A2a,
                max_active_tasks: None,
                max_context_inputs: None,
                push_config: None,
                at: t0(),
            })
            .await
            .unwrap()
            .unwrap()
            .task()
            .clone();
        j.append_one(
            &task.session_id,
            &task.task_id,
            sextant_core::EventBody::TaskState {
                state: sextant_core::a2a::TaskState::Completed,
                message: None,
            },
            t0(),
        )
        .await
        .unwrap();
        clock.advance(chrono::Duration::days(1));
        assert_eq!(job.run_now().await.unwrap().sessions, 0);
        assert!(j.task(&task.task_id).await.unwrap().is_some());
        clock.advance(chrono::Duration::days(2));
        assert!(job.run_if_due().await.is_some());
        assert!(j.task(&task.task_id).await.unwrap().is_none());
    }
}
