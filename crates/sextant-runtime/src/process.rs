//! Turn processes: every command a turn runs lives in its own process group, dies with
//! Sextant, and is journalled, so a Sextant killed with `kill -9` leaves nothing running.
//!
//! - [`spawn`] starts a command as the leader of a new process group (`setpgid(0, 0)`), with
//!   the parent-death signal set to `SIGKILL` (Linux `PR_SET_PDEATHSIG`), and records the
//!   group in the journal (`turn_processes`) before the turn goes on. Linux sends that signal
//!   when the *thread* that forked the child exits, not the process: a child forked from one
//!   of tokio's blocking-pool threads, which exit after a while idle, would be killed in the
//!   middle of its turn. So every spawn happens on one thread that lives as long as the
//!   process (`sextant-spawner`).
//! - [`ProcessGroup`] signals the whole group: [`ProcessGroup::kill`], and
//!   [`ProcessGroup::stop`] (`SIGTERM`, then `SIGKILL` after a grace period) — what a
//!   cancellation of a running turn will use.
//! - [`GroupGuard`] ends the group when the turn's process is done with (a command's
//!   background processes do not outlive its turn) and forgets the journal record;
//!   dropping it (timeout, shutdown) ends the group too.
//! - [`end_leftovers`] runs at start-up, before recovery marks interrupted turns: it ends
//!   every group a previous Sextant recorded and did not forget. A group is signalled only if
//!   it is provably the one recorded: same boot, and either its leader is alive with the
//!   recorded start time, or the leader is gone and members remain (Linux never hands out a
//!   process id that is still some group's id, so such members are the recorded group's).
//!
//! The parent-death signal reaches the direct child only; its own children are in the group,
//! and the start-up sweep ends them.

use std::io;
use std::sync::OnceLock;
use std::sync::mpsc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use sextant_core::ids::TaskId;
use sextant_journal::{Journal, ProcessRow};
use tokio::process::{Child, Command};
use tokio::sync::oneshot;

/// One running command's process group, as recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessGroup {
    pgid: i32,
    leader_start: u64,
    boot_id: String,
}

impl ProcessGroup {
    /// The group id (the leader's pid).
    pub fn pgid(&self) -> i32 {
        self.pgid
    }

    fn pid(&self) -> Option<rustix::process::Pid> {
        rustix::process::Pid::from_raw(self.pgid)
    }

    /// Sends `signal` to every process of the group; a group that is gone is not an error.
    pub fn signal(&self, signal: rustix::process::Signal) -> io::Result<()> {
        let Some(pid) = self.pid() else {
            return Ok(());
        };
        match rustix::process::kill_process_group(pid, signal) {
            Ok(()) | Err(rustix::io::Errno::SRCH) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Ends every process of the group at once (`SIGKILL`).
    pub fn kill(&self) {
        if let Err(e) = self.signal(rustix::process::Signal::KILL) {
            tracing::warn!(pgid = self.pgid, error = %e, "could not end a process group");
        }
    }

    /// Whether any process of the group is still there.
    pub fn is_alive(&self) -> bool {
        self.pid()
            .is_some_and(|pid| rustix::process::test_kill_process_group(pid).is_ok())
    }

    /// Asks the group to stop (`SIGTERM`), and ends what is left after `grace` (`SIGKILL`).
    pub async fn stop(&self, grace: Duration) {
        if let Err(e) = self.signal(rustix::process::Signal::TERM) {
            tracing::warn!(pgid = self.pgid, error = %e, "could not signal a process group");
        }
        let deadline = tokio::time::Instant::now() + grace;
        while self.is_alive() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.kill();
    }
}

/// The process groups of running turns, by task id: what a cancellation of a task signals
/// ([`crate::Runtime::stop_processes`]).
pub type Running =
    std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, Vec<ProcessGroup>>>>;

/// Ends a turn's process group when the turn is done with it, and forgets its record.
pub struct GroupGuard {
    group: ProcessGroup,
    record: Option<(Journal, i64)>,
    /// Where the group is listed while it runs (task id).
    listed: Option<(Running, String)>,
}

impl GroupGuard {
    fn unlist(&mut self) {
        if let Some((running, task)) = self.listed.take() {
            let mut map = running.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(groups) = map.get_mut(&task) {
                groups.retain(|g| g.pgid != self.group.pgid);
                if groups.is_empty() {
                    map.remove(&task);
                }
            }
        }
    }
}

impl GroupGuard {
    /// The group.
    pub fn group(&self) -> &ProcessGroup {
        &self.group
    }

    /// Ends what is left of the group and forgets its record (the command is done).
    pub async fn finish(mut self) {
        self.group.kill();
        self.unlist();
        if let Some((journal, id)) = self.record.take()
            && let Err(e) = journal.process_ended(id).await
        {
            tracing::warn!(error = %e, "could not forget a finished process group");
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.group.kill();
        self.unlist();
        if let Some((journal, id)) = self.record.take()
            && let Ok(rt) = tokio::runtime::Handle::try_current()
        {
            // A record left behind is harmless: at the next start its group is empty.
            rt.spawn(async move {
                let _ = journal.process_ended(id).await;
            });
        }
    }
}

/// Where a turn's process is recorded.
pub struct Owner<'a> {
    pub journal: &'a Journal,
    pub session_id: &'a str,
    pub task_id: &'a str,
    pub now: DateTime<Utc>,
    /// Where running groups are listed by task (none in tests that need no cancellation).
    pub running: Option<&'a Running>,
}

/// Starts `cmd` in a new process group that dies with Sextant, and records the group in the
/// journal before returning. `kill_on_drop` is set on the child; the guard ends the group.
pub async fn spawn(mut cmd: Command, owner: Owner<'_>) -> io::Result<(Child, GroupGuard)> {
    cmd.process_group(0).kill_on_drop(true);
    die_with_parent(&mut cmd);
    let child = spawn_on_spawner(cmd).await?;
    let pgid = child
        .id()
        .and_then(|p| i32::try_from(p).ok())
        .ok_or_else(|| io::Error::other("the child exited before its group was known"))?;
    let group = ProcessGroup {
        pgid,
        leader_start: start_time(pgid).unwrap_or_default(),
        boot_id: boot_id().unwrap_or_default(),
    };
    let mut guard = GroupGuard {
        group: group.clone(),
        record: None,
        listed: None,
    };
    if let Some(running) = owner.running {
        running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(owner.task_id.to_string())
            .or_default()
            .push(group.clone());
        guard.listed = Some((running.clone(), owner.task_id.to_string()));
    }
    let row = ProcessRow {
        process_id: 0,
        pgid,
        leader_start: group.leader_start,
        boot_id: group.boot_id.clone(),
        session_id: owner.session_id.into(),
        task_id: owner.task_id.into(),
        started_at: owner.now,
    };
    // Unrecorded, the group could outlive a crash unnoticed: if the journal cannot take the
    // record, the command does not go on (the guard ends it).
    let id = owner
        .journal
        .record_process(row)
        .await
        .map_err(|e| io::Error::other(format!("could not record the process group: {e}")))?;
    guard.record = Some((owner.journal.clone(), id));
    Ok((child, guard))
}

/// Sets the parent-death signal (`SIGKILL`) in the child, and refuses to run it if Sextant
/// died before that took effect.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn die_with_parent(cmd: &mut Command) {
    let parent = rustix::process::getpid();
    // SAFETY: `pre_exec` runs the closure in the child between fork and exec, where only
    // async-signal-safe work is allowed. The closure makes two raw system calls through rustix
    // (prctl(PR_SET_PDEATHSIG), getppid), compares two integers and builds an io::Error from
    // a raw errno; it allocates nothing, takes no lock and touches no shared state.
    unsafe {
        cmd.pre_exec(move || {
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))?;
            if rustix::process::getppid() != Some(parent) {
                return Err(rustix::io::Errno::SRCH.into());
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_cmd: &mut Command) {}

struct SpawnJob {
    cmd: Command,
    runtime: tokio::runtime::Handle,
    reply: oneshot::Sender<io::Result<Child>>,
}

/// The long-lived thread every turn's command is forked from (see the module docs).
fn spawner() -> Option<&'static mpsc::Sender<SpawnJob>> {
    static SPAWNER: OnceLock<Option<mpsc::Sender<SpawnJob>>> = OnceLock::new();
    SPAWNER
        .get_or_init(|| {
            let (tx, rx) = mpsc::channel::<SpawnJob>();
            let started = std::thread::Builder::new()
                .name("sextant-spawner".into())
                .spawn(move || {
                    for mut job in rx {
                        // The child is reaped by the caller's runtime.
                        let _entered = job.runtime.enter();
                        let _ = job.reply.send(job.cmd.spawn());
                    }
                });
            match started {
                Ok(_) => Some(tx),
                Err(e) => {
                    tracing::error!(error = %e, "cannot start the spawner thread");
                    None
                }
            }
        })
        .as_ref()
}

async fn spawn_on_spawner(mut cmd: Command) -> io::Result<Child> {
    let Some(tx) = spawner() else {
        // No spawner thread: fork from here (a tokio worker, which lives as long as the
        // runtime) rather than not at all.
        return cmd.spawn();
    };
    let (reply, rx) = oneshot::channel();
    let job = SpawnJob {
        cmd,
        runtime: tokio::runtime::Handle::current(),
        reply,
    };
    tx.send(job)
        .map_err(|_| io::Error::other("the spawner thread is gone"))?;
    rx.await
        .map_err(|_| io::Error::other("the spawner thread did not answer"))?
}

/// A process's start time (clock ticks since boot), from `/proc/PID/stat`.
fn start_time(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat_field(&stat, 22)?.parse().ok()
}

/// Field `n` (1-based, as in proc(5)) of a `/proc/PID/stat` line. The command name (field 2)
/// may hold spaces and parentheses, so fields are counted after its last `)`.
fn stat_field(stat: &str, n: usize) -> Option<&str> {
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(n.checked_sub(3)?)
}

/// The kernel's boot id.
fn boot_id() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// The processes whose group is `pgid`: (pid, start time).
fn members(pgid: i32) -> Vec<(i32, u64)> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let group: i32 = stat_field(&stat, 5)?.parse().ok()?;
            // A zombie has done all it will do; it is its parent's to reap.
            let state = stat_field(&stat, 3)?;
            (group == pgid && state != "Z")
                .then(|| Some((pid, stat_field(&stat, 22)?.parse().ok()?)))
                .flatten()
        })
        .collect()
}

/// What [`end_leftovers`] did with one recorded group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Leftover {
    /// Processes of the group were still running; they were ended.
    Ended { pgid: i32, processes: usize },
    /// Nothing of the group was left.
    Gone,
    /// The id now belongs to something else (another boot, or a new leader): left alone.
    NotOurs,
}

/// Decides whether the recorded group is still ours, from what `/proc` shows now.
fn judge(row: &ProcessRow, boot: Option<&str>, found: &[(i32, u64)]) -> Leftover {
    if row.boot_id.is_empty() || boot != Some(row.boot_id.as_str()) {
        return Leftover::NotOurs;
    }
    if found.is_empty() {
        return Leftover::Gone;
    }
    match found.iter().find(|(pid, _)| *pid == row.pgid) {
        Some((_, start)) if *start != row.leader_start => Leftover::NotOurs,
        _ => Leftover::Ended {
            pgid: row.pgid,
            processes: found.len(),
        },
    }
}

/// Ends the process groups a previous Sextant recorded and did not forget (see the module
/// docs), forgets their records, and returns what was done, by task id.
pub async fn end_leftovers(
    journal: &Journal,
) -> Result<Vec<(TaskId, Leftover)>, sextant_journal::Error> {
    let rows = journal.recorded_processes().await?;
    let mut out = Vec::new();
    for row in rows {
        let found = members(row.pgid);
        let verdict = judge(&row, boot_id().as_deref(), &found);
        if let Leftover::Ended { pgid, processes } = verdict {
            tracing::warn!(pgid, processes, task_id = %row.task_id, "ending a process group left by a previous Sextant");
            ProcessGroup {
                pgid,
                leader_start: row.leader_start,
                boot_id: row.boot_id.clone(),
            }
            .kill();
        }
        journal.process_ended(row.process_id).await?;
        out.push((row.task_id.clone(), verdict));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(pgid: i32, start: u64) -> ProcessRow {
        ProcessRow {
            process_id: 1,
            pgid,
            leader_start: start,
            boot_id: "b".into(),
            session_id: "s".into(),
            task_id: "t".into(),
            started_at: chrono::DateTime::UNIX_EPOCH,
        }
    }

    #[test]
    fn only_the_recorded_group_is_judged_ours() {
        let r = row(100, 5000);
        // Another boot: never ours.
        assert_eq!(judge(&r, Some("other"), &[(100, 5000)]), Leftover::NotOurs);
        assert_eq!(judge(&r, None, &[(100, 5000)]), Leftover::NotOurs);
        // The leader with the recorded start time: ours.
        assert_eq!(
            judge(&r, Some("b"), &[(100, 5000), (101, 5001)]),
            Leftover::Ended {
                pgid: 100,
                processes: 2
            }
        );
        // The leader is gone and members remain: the id cannot have been reused.
        assert_eq!(
            judge(&r, Some("b"), &[(101, 5001)]),
            Leftover::Ended {
                pgid: 100,
                processes: 1
            }
        );
        // A new leader under the same id: not ours.
        assert_eq!(judge(&r, Some("b"), &[(100, 9999)]), Leftover::NotOurs);
        assert_eq!(judge(&r, Some("b"), &[]), Leftover::Gone);
    }

    #[test]
    fn stat_fields_are_counted_after_the_command_name() {
        let stat = "4242 (a) b (c)) S 1 4242 4242 0 -1 4194304 0 0 0 0 0 0 0 0 20 0 1 0 777 0";
        assert_eq!(stat_field(stat, 3), Some("S"));
        assert_eq!(stat_field(stat, 5), Some("4242"));
        assert_eq!(stat_field(stat, 22), Some("777"));
    }

    /// A spawned command leads its own group, has SIGKILL as its parent-death signal, and is
    /// recorded until its guard finishes, which ends its background children too.
    #[tokio::test]
    async fn a_spawned_command_leads_a_recorded_group_that_dies_with_its_guard() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::open(dir.path().join("j.db")).unwrap();
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg("sleep 30 & echo $! ; wait")
            .stdout(std::process::Stdio::piped());
        let owner = Owner {
            journal: &journal,
            session_id: "s",
            task_id: "t",
            now: Utc::now(),
            running: None,
        };
        let (mut child, guard) = spawn(cmd, owner).await.unwrap();
        let pgid = guard.group().pgid();
        assert_eq!(Some(pgid as u32), child.id());
        let recorded = journal.recorded_processes().await.unwrap();
        assert_eq!(recorded.len(), 1);
        assert_eq!(recorded[0].pgid, pgid);
        assert_eq!(recorded[0].task_id, "t");
        // The background sleep is in the group.
        let mut out = String::new();
        use tokio::io::AsyncBufReadExt;
        let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        if let Some(l) = lines.next_line().await.unwrap() {
            out = l;
        }
        let sleeper: i32 = out.trim().parse().unwrap();
        let stat = std::fs::read_to_string(format!("/proc/{sleeper}/stat")).unwrap();
        assert_eq!(stat_field(&stat, 5), Some(pgid.to_string().as_str()));
        assert!(guard.group().is_alive());
        guard.finish().await;
        let _ = child.wait().await;
        // SIGKILL is delivered asynchronously: give the kernel a moment (bounded).
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while !members(pgid).is_empty() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(members(pgid).is_empty(), "the group is gone");
        assert!(journal.recorded_processes().await.unwrap().is_empty());
    }
}
