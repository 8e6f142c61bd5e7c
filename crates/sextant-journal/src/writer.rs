//! The writer thread: group commit of admissions and appends.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError};

use chrono::{DateTime, Utc};
use rusqlite::Connection;
use sextant_core::a2a::{Message, TaskState};
use sextant_core::event::{is_interrupted, is_terminal};
use sextant_core::ids::{AgentId, ContextId, SessionId, TaskId, format_time, new_id};
use sextant_core::{AgentSpec, CallerKey, EventBody, JournalEvent, PrincipalKind};
use tokio::sync::oneshot;

use crate::error::{Error, Result};
use crate::hub::{Hub, Live};
use crate::queries::push::PushConfigRow;
use crate::queries::{agents, events, inputs, interactions, push, search, sessions, tasks};
use crate::wal::Wal;
use crate::{SessionRow, TaskRow};

/// How many queued jobs one transaction takes at most.
const MAX_BATCH: usize = 256;

/// How long the writer waits for the next job of a turn it answered early (see
/// `Journal::admit_early`) before it commits without it: a short turn (an echo, a refusal, a
/// quick reply) sends its start, output and end within tens of microseconds of each other. A
/// long turn's admission commits this much later than it could have; its caller waits for the
/// turn anyway.
#[cfg(not(test))]
const EARLY_GAP: std::time::Duration = std::time::Duration::from_micros(500);

/// The longest a batch waits for early-answered turns in all, whatever keeps arriving.
#[cfg(not(test))]
const EARLY_WINDOW: std::time::Duration = std::time::Duration::from_millis(2);

/// Longer in this crate's tests, which count commits on a machine busy with other tests: a
/// test thread stalled past 500 µs would split a turn from its admission now and then.
#[cfg(test)]
const EARLY_GAP: std::time::Duration = std::time::Duration::from_millis(100);
#[cfg(test)]
const EARLY_WINDOW: std::time::Duration = std::time::Duration::from_millis(400);

/// A batch of this many jobs commits without waiting for turns. Under load a commit is shared
/// by many tasks anyway, so a turn that misses its admission's costs little, while waiting
/// costs a wake-up of this thread for every job that arrives meanwhile; the wait is for the
/// lone caller, whose turn would otherwise pay a commit of its own.
const EARLY_MAX: usize = 8;

/// Queued search text is indexed once this many texts wait ([`search::flush`]): one FTS5
/// segment per this many texts instead of one per commit, few enough that a flush is a small
/// part of the commit that carries it.
pub(crate) const FLUSH_AT: usize = 512;

/// Queued search text is also indexed once the writer has had nothing to do for this long,
/// so an idle journal holds none for long.
#[cfg(not(test))]
const IDLE_FLUSH: std::time::Duration = std::time::Duration::from_millis(200);
/// Longer in this crate's tests, so a test can see text still queued on a busy machine.
#[cfg(test)]
const IDLE_FLUSH: std::time::Duration = std::time::Duration::from_secs(2);

/// One input to admit.
#[derive(Debug, Clone)]
pub struct Admission {
    /// `Principal::key()` of the caller, and its kind.
    pub caller: CallerKey,
    pub caller_kind: PrincipalKind,
    pub agent_id: AgentId,
    /// The caller's contextId, if it sent one.
    pub context_id: Option<ContextId>,
    /// The caller's taskId, if it continues an existing task.
    pub task_id: Option<TaskId>,
    /// The message as received; the journal fills in `contextId` and `taskId`.
    pub message: Message,
    /// Hash of the request content, for idempotent retries.
    pub content_hash: String,
    /// The idempotency key: normally the messageId; see `AgentSpec::dedupe_message_ids`.
    pub input_key: String,
    /// Where the Session came from when it is created.
    pub origin: sextant_core::Origin,
    /// Refuse the input if the caller already has this many tasks submitted or working. The
    /// count is taken by the writer in the admission's own transaction, so inputs that arrive
    /// together cannot all pass it (a read before the admission let a burst through).
    pub max_active_tasks: Option<u32>,
    /// Refuse the input if its Session already holds this many inputs (the anti-loop cap on
    /// an agent caller's turns in one context). Counted by the writer like
    /// [`Admission::max_active_tasks`], so a burst into one context cannot pass it together.
    pub max_context_inputs: Option<u32>,
    /// A push-notification config given with the message (`SendMessage.configuration`):
    /// stored with the input, so it covers the task from its first event (`task_id` is
    /// filled in). Ignored for an identical retry, which writes nothing.
    pub push_config: Option<PushConfigRow>,
    pub at: DateTime<Utc>,
}

/// An admitted input.
#[derive(Debug, Clone)]
pub enum Admitted {
    /// A new Task (and maybe a new Session) was created.
    Created {
        task: TaskRow,
        session_created: bool,
        event: Arc<JournalEvent>,
    },
    /// A further input to an existing task was accepted.
    FollowUp {
        task: TaskRow,
        event: Arc<JournalEvent>,
    },
    /// An identical retry: nothing was written; this is the task the first attempt made.
    Duplicate { task: TaskRow },
}

impl Admitted {
    /// The task the input belongs to.
    pub fn task(&self) -> &TaskRow {
        match self {
            Admitted::Created { task, .. }
            | Admitted::FollowUp { task, .. }
            | Admitted::Duplicate { task } => task,
        }
    }
}

/// Why an input was not admitted (nothing was written). The runtime hands it on unchanged
/// (`AdmitError::Refused`), so every caller matches one set of variants.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Refusal {
    /// The messageId was used before by this caller for different content.
    #[error("messageId was already used for a different message (task {task_id})")]
    MessageIdReused { task_id: String },
    /// The taskId names no task this caller can see on this Agent.
    #[error("task not found")]
    TaskNotFound,
    /// The task already ended; follow-ups must start a new task.
    #[error("the task is {state} and takes no more messages")]
    TaskTerminal { state: String },
    /// contextId and taskId disagree.
    #[error("contextId does not match the task's context {task_context}")]
    ContextMismatch { task_context: String },
    /// The caller already has [`Admission::max_active_tasks`] tasks submitted or working.
    #[error("{limit} tasks of this caller are already running")]
    TooManyTasks { limit: u32 },
    /// The Session already holds [`Admission::max_context_inputs`] inputs.
    #[error("this context has reached its limit of {limit} agent-to-agent turns")]
    TurnCap { limit: u32 },
}

/// An event to append.
#[derive(Debug, Clone)]
pub struct NewEvent {
    pub task_id: Option<String>,
    pub body: EventBody,
    pub at: DateTime<Utc>,
}

pub(crate) enum Job {
    UpsertAgents {
        agents: Vec<AgentSpec>,
        at: DateTime<Utc>,
        reply: oneshot::Sender<Result<()>>,
    },
    Admit {
        admission: Box<Admission>,
        /// Subscribe to the new task's Session before its first event is published.
        watch: bool,
        /// Answer a created task before the commit (see `Journal::admit_early`).
        early: bool,
        reply: oneshot::Sender<Result<AdmitOut>>,
    },
    Append {
        session_id: String,
        events: Vec<NewEvent>,
        guard: Option<TurnGuard>,
        reply: oneshot::Sender<Result<Vec<Arc<JournalEvent>>>>,
    },
    /// Creates or replaces a push-notification config (the writer knows which tasks have
    /// configs, so every later event of the task is queued for it in its own transaction).
    PutPush {
        row: Box<PushConfigRow>,
        reply: oneshot::Sender<Result<PushPut>>,
    },
    /// Deletes a push-notification config and what it was still owed.
    DeletePush {
        task_id: String,
        config_id: String,
        reply: oneshot::Sender<Result<bool>>,
    },
    /// Indexes the queued search text in this batch ([`search::flush`]); answered after the
    /// commit, so a search that waited for it sees every text committed before it asked.
    FlushSearch { reply: oneshot::Sender<Result<()>> },
    /// Any other write: a closure over the transaction (in its own savepoint), for tables
    /// whose writes publish no events (schedules, runs). See `Journal::call`.
    Call {
        f: CallFn,
        reply: oneshot::Sender<Result<CallOut>>,
    },
    /// A write that runs alone, in a transaction of its own between two batches, with foreign
    /// key enforcement off: the retention job's deletes (`retention::delete_batch`). A parent
    /// row's delete makes SQLite look for its children, and `tasks.session_id`,
    /// `inputs.task_id` and `interactions.session_id` have no index (on purpose: every
    /// admission would pay for one), so each delete scanned those tables whole: measured
    /// 4 ms per Session in a journal of 20,000 tasks, growing with the journal (0.12 ms with
    /// the checks off). The retention job deletes every child before its parent by
    /// construction, and its tests run `PRAGMA foreign_key_check`. The writer's cache is
    /// dropped afterwards: the job deleted rows it may hold.
    Alone {
        f: CallFn,
        reply: oneshot::Sender<Result<CallOut>>,
    },
}

/// What creating a push-notification config did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PushPut {
    Created,
    /// A config with the same id existed; it was replaced (and re-enabled).
    Replaced,
    /// No such task.
    TaskNotFound,
}

/// What an admission job answers: the outcome and, when asked for and a task was created, the
/// live events of its Session from the task's first event on.
pub(crate) struct AdmitOut {
    pub(crate) outcome: Result<Admitted, Refusal>,
    pub(crate) live: Option<Live>,
}

/// The type-erased result of a [`Job::Call`]; `Journal::call` downcasts it back.
pub(crate) type CallOut = Box<dyn std::any::Any + Send>;
/// The type-erased closure of a [`Job::Call`].
pub(crate) type CallFn = Box<dyn FnOnce(&Connection) -> Result<CallOut> + Send>;

/// A finished job, answered only after the transaction commits.
enum Done {
    Unit(oneshot::Sender<Result<()>>, Result<()>),
    Admit {
        /// `None` once answered early, before the commit.
        reply: Option<oneshot::Sender<Result<AdmitOut>>>,
        watch: bool,
        early: bool,
        outcome: Result<Result<Admitted, Refusal>>,
    },
    Append(
        oneshot::Sender<Result<Vec<Arc<JournalEvent>>>>,
        Result<Vec<Arc<JournalEvent>>>,
        Option<TurnGuard>,
    ),
    Call(oneshot::Sender<Result<CallOut>>, Result<CallOut>),
    PutPush(oneshot::Sender<Result<PushPut>>, Result<PushPut>),
    DeletePush(oneshot::Sender<Result<bool>>, Result<bool>),
}

/// Shared by the appends of one turn that are sent without waiting for each other: once one of
/// them fails, the writer refuses the later ones, so a turn never ends "completed" over output
/// that was not recorded.
#[derive(Debug, Clone, Default)]
pub struct TurnGuard(Arc<std::sync::atomic::AtomicBool>);

impl TurnGuard {
    /// Whether an append under this guard failed.
    pub fn tripped(&self) -> bool {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn trip(&self) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

impl Done {
    fn published(&self) -> Vec<Arc<JournalEvent>> {
        match self {
            Done::Admit {
                outcome: Ok(Ok(Admitted::Created { event, .. } | Admitted::FollowUp { event, .. })),
                ..
            } => vec![event.clone()],
            Done::Append(_, Ok(evs), _) => evs.clone(),
            _ => Vec::new(),
        }
    }

    /// For a watched admission that created a task, a subscription to its Session. Taken
    /// after the commit and before the job's events are published, so the subscriber sees the
    /// task's first event and every later one.
    fn subscribe(&self, hub: &Hub) -> Option<Live> {
        match self {
            Done::Admit {
                reply: Some(_),
                watch: true,
                outcome: Ok(Ok(Admitted::Created { task, .. })),
                ..
            } => Some(hub.subscribe(&task.session_id)),
            _ => None,
        }
    }

    /// Answers an early admission that created a task now, before the commit, with a
    /// subscription that will yield the task's events once they are committed. Returns the
    /// task's id if it did.
    fn answer_early(&mut self, hub: &Hub) -> Option<String> {
        let Done::Admit {
            reply,
            early: true,
            outcome: Ok(Ok(created @ Admitted::Created { .. })),
            ..
        } = self
        else {
            return None;
        };
        let tx = reply.take()?;
        let live = Some(hub.subscribe(&created.task().session_id));
        let out = AdmitOut {
            outcome: Ok(created.clone()),
            live,
        };
        drop(tx.send(Ok(out)));
        Some(created.task().task_id.to_string())
    }

    /// Answers the caller (`live`: see [`Done::subscribe`]).
    fn send(self, live: Option<Live>) {
        match self {
            Done::Unit(tx, r) => drop(tx.send(r)),
            Done::Admit { reply, outcome, .. } => {
                if let Some(reply) = reply {
                    let out = outcome.map(|outcome| AdmitOut { outcome, live });
                    drop(reply.send(out));
                }
            }
            Done::Append(tx, r, _) => drop(tx.send(r)),
            Done::Call(tx, r) => drop(tx.send(r)),
            Done::PutPush(tx, r) => drop(tx.send(r)),
            Done::DeletePush(tx, r) => drop(tx.send(r)),
        }
    }

    /// Tells the caller its job was not committed. An early-answered admission's caller holds
    /// a subscription instead: its Session's live channel is closed, so it ends with nothing
    /// (other live readers of that Session see it end too, and read the journal again).
    fn fail(self, why: &str, hub: &Hub) {
        let err = || Error::Unavailable(format!("the commit failed: {why}"));
        match self {
            Done::Unit(tx, _) => drop(tx.send(Err(err()))),
            Done::Admit {
                reply: Some(reply), ..
            } => drop(reply.send(Err(err()))),
            Done::Admit {
                reply: None,
                outcome: Ok(Ok(admitted)),
                ..
            } => hub.close(&admitted.task().session_id),
            Done::Admit { reply: None, .. } => {}
            Done::Append(tx, _, guard) => {
                if let Some(g) = guard {
                    g.trip();
                }
                drop(tx.send(Err(err())))
            }
            Done::Call(tx, _) => drop(tx.send(Err(err()))),
            Done::PutPush(tx, _) => drop(tx.send(Err(err()))),
            Done::DeletePush(tx, _) => drop(tx.send(Err(err()))),
        }
    }
}

/// Entries each writer cache holds at most before it is emptied (it refills from the tables).
const CACHE_MAX: usize = 16_384;

/// What the writer knows about committed rows, so that appending an event reads nothing: each
/// Session's last seq and each live task's state. Only this writer writes those columns; a
/// write by another process (a `sextant token` command, say) changes `PRAGMA data_version`, and
/// the cache is dropped at the next batch.
///
/// It also holds the push-notification configs of tasks that have not ended (`push`, loaded
/// from the table at the first batch after the cache was dropped), so an append knows without
/// a read which configs its event is owed to.
#[derive(Default)]
struct Cache {
    seqs: HashMap<String, i64>,
    states: HashMap<String, TaskState>,
    push: Option<HashMap<String, Vec<String>>>,
}

/// The cached columns of one task, to write back once per batch.
#[derive(Debug, Clone)]
struct TaskTouch {
    last_seq: i64,
    /// The latest state change (state, time, and the outcome when it ends the task) in the
    /// batch, if any.
    state: Option<(TaskState, DateTime<Utc>, Option<sextant_core::TaskOutcome>)>,
}

/// Changes not yet written back: of the current job (inside its savepoint) or of the batch.
/// `sessions.last_seq / updated_at` and `tasks.state / state_at / last_seq` are written once
/// per batch instead of once per event.
#[derive(Default)]
struct Pending {
    seqs: HashMap<String, i64>,
    states: HashMap<String, TaskState>,
    sessions: HashMap<String, (i64, String)>,
    tasks: HashMap<String, TaskTouch>,
    /// A task's push-config ids as they are after this job or batch (the whole list).
    push: HashMap<String, Vec<String>>,
    /// Push deliveries were queued (or re-enabled): the delivery worker is told after commit.
    push_queued: bool,
    /// Each task's latest answer or output appended here: when the task ends in the same
    /// batch (an echo turn's output and its `completed`), its outcome needs no read.
    acts: HashMap<String, tasks::LastAct>,
    /// Text to queue for the search index, (task id, text), written in
    /// [`Pending::write_back`]; the queue is indexed in bulk ([`search::flush`]).
    texts: Vec<(String, String)>,
    /// How many texts [`Pending::write_back`] queued in this batch.
    queued: usize,
    /// A [`Job::FlushSearch`] asked for the queue to be indexed at the end of this batch.
    flush: bool,
}

impl Pending {
    fn merge(&mut self, job: Pending) {
        self.seqs.extend(job.seqs);
        self.states.extend(job.states);
        self.push.extend(job.push);
        self.push_queued |= job.push_queued;
        self.acts.extend(job.acts);
        self.texts.extend(job.texts);
        self.flush |= job.flush;
        self.sessions.extend(job.sessions);
        for (id, t) in job.tasks {
            match self.tasks.get_mut(&id) {
                Some(prev) => {
                    prev.last_seq = t.last_seq;
                    if t.state.is_some() {
                        prev.state = t.state;
                    }
                }
                None => {
                    self.tasks.insert(id, t);
                }
            }
        }
    }

    /// Writes the touched Session and task rows and queues the text to index.
    fn write_back(&mut self, c: &Connection) -> Result<()> {
        for (id, (seq, at)) in self.sessions.drain() {
            sessions::touch(c, &id, seq, &at)?;
        }
        for (id, t) in self.tasks.drain() {
            let state = t.state.as_ref().map(|(s, at, o)| (s, *at, *o));
            tasks::touch(c, &id, t.last_seq, state)?;
        }
        for (task_id, text) in self.texts.drain(..) {
            search::queue(c, &task_id, &text)?;
            self.queued += 1;
        }
        Ok(())
    }
}

/// One job's view: its own changes over the batch's over the cache over the tables.
struct Ctx<'a> {
    c: &'a Connection,
    cache: &'a Cache,
    batch: &'a Pending,
    job: Pending,
    /// The job has written rows: an error from here on is not a clean refusal.
    wrote: bool,
}

impl Ctx<'_> {
    fn last_seq(&self, session_id: &str) -> Result<i64> {
        if let Some(s) = (self.job.seqs.get(session_id))
            .or_else(|| self.batch.seqs.get(session_id))
            .or_else(|| self.cache.seqs.get(session_id))
        {
            return Ok(*s);
        }
        sessions::last_seq(self.c, session_id)?.ok_or(Error::NotFound)
    }

    fn state(&self, task_id: &str) -> Result<TaskState> {
        if let Some(s) = (self.job.states.get(task_id))
            .or_else(|| self.batch.states.get(task_id))
            .or_else(|| self.cache.states.get(task_id))
        {
            return Ok(s.clone());
        }
        Ok(tasks::get(self.c, task_id)?.ok_or(Error::NotFound)?.state)
    }

    /// The push configs a new event of `task_id` is owed to.
    fn push_configs(&self, task_id: &str) -> Vec<String> {
        (self.job.push.get(task_id))
            .or_else(|| self.batch.push.get(task_id))
            .or_else(|| self.cache.push.as_ref().and_then(|m| m.get(task_id)))
            .cloned()
            .unwrap_or_default()
    }

    /// A task row as it is with this job's and the batch's unwritten changes.
    fn task(&self, task_id: &str) -> Result<Option<TaskRow>> {
        let Some(mut row) = tasks::get(self.c, task_id)? else {
            return Ok(None);
        };
        for touch in [self.batch.tasks.get(task_id), self.job.tasks.get(task_id)]
            .into_iter()
            .flatten()
        {
            row.last_seq = touch.last_seq;
            if let Some((state, at, outcome)) = &touch.state {
                row.state = state.clone();
                row.state_at = *at;
                row.outcome = *outcome;
            }
        }
        Ok(Some(row))
    }

    /// Refuses a list of events to append, before anything is written, if one of them would
    /// move an ended task or names an unknown Session. A turn's output (`turn_output`: an
    /// append under a [`TurnGuard`]) is refused altogether once its task has ended: a task
    /// canceled while its turn runs keeps what the turn reported before, and nothing after.
    fn check(&self, session_id: &str, events: &[NewEvent], turn_output: bool) -> Result<()> {
        self.last_seq(session_id)?;
        let mut states: HashMap<&str, TaskState> = HashMap::new();
        for e in events {
            if turn_output
                && let Some(id) = &e.task_id
                && !states.contains_key(id.as_str())
                && !matches!(e.body, EventBody::TaskCreated { .. })
            {
                let current = self.state(id)?;
                if current.is_terminal() {
                    return Err(Error::Conflict(format!(
                        "task {id} is already {}; its turn's output is not recorded",
                        sextant_core::event::state_wire(&current)
                    )));
                }
            }
            let (Some(id), Some(next)) = (&e.task_id, e.body.new_state()) else {
                continue;
            };
            if matches!(e.body, EventBody::TaskCreated { .. }) {
                continue;
            }
            let current = match states.get(id.as_str()) {
                Some(s) => s.clone(),
                None => self.state(id)?,
            };
            if current.is_terminal() {
                return Err(Error::Conflict(format!(
                    "task {id} is already {}; it cannot move to {}",
                    sextant_core::event::state_wire(&current),
                    sextant_core::event::state_wire(&next)
                )));
            }
            states.insert(id, next);
        }
        Ok(())
    }

    /// Appends one event: takes the next seq, writes the row, notes what to write back.
    fn append(
        &mut self,
        session_id: &str,
        task_id: Option<String>,
        body: EventBody,
        at: DateTime<Utc>,
    ) -> Result<JournalEvent> {
        self.append_in(session_id, None, task_id, body, at)
    }

    /// [`Ctx::append`] for an admitted input, whose Session's contextId (`context_id`) is at
    /// hand: the stored message leaves it out (see `events::insert`).
    fn append_in(
        &mut self,
        session_id: &str,
        context_id: Option<&str>,
        task_id: Option<String>,
        body: EventBody,
        at: DateTime<Utc>,
    ) -> Result<JournalEvent> {
        let at = sextant_core::ids::millis(at);
        let at_s = format_time(at);
        let new_state = body.new_state();
        let ends = new_state.as_ref().is_some_and(|s| s.is_terminal());
        // A task's first event creates it: there is no earlier state to check.
        let creates = matches!(body, EventBody::TaskCreated { .. });
        if let (Some(id), Some(new_state), false) = (&task_id, &new_state, creates) {
            let current = self.state(id)?;
            if current.is_terminal() {
                return Err(Error::Conflict(format!(
                    "task {id} is already {}; it cannot move to {}",
                    sextant_core::event::state_wire(&current),
                    sextant_core::event::state_wire(new_state)
                )));
            }
        }
        let seq = self.last_seq(session_id)? + 1;
        let ev = JournalEvent {
            session_id: session_id.to_string(),
            seq,
            task_id,
            at,
            body,
        };
        self.wrote = true;
        events::insert(self.c, &ev, context_id)?;
        // The outbox: every config the task has is owed this event, queued in the event's own
        // transaction, so a crash can never leave an event committed and its push forgotten.
        // Nothing after the terminal state is pushed (a subscriber's stream ends there too).
        if let Some(id) = &ev.task_id
            && pushed(&ev.body)
        {
            let configs = self.push_configs(id);
            if !configs.is_empty() && (new_state.is_some() || !self.state(id)?.is_terminal()) {
                for config in configs {
                    push::enqueue(self.c, id, &config, session_id, seq, &at_s)?;
                    self.job.push_queued = true;
                }
            }
        }
        if let (Some(id), Some(text)) = (&ev.task_id, search::event_text(&ev.body)) {
            self.job.texts.push((id.clone(), text));
        }
        if let (Some(id), Some(act)) = (&ev.task_id, tasks::LastAct::of(&ev.body)) {
            self.job.acts.insert(id.clone(), act);
        }
        self.job.seqs.insert(session_id.to_string(), seq);
        self.job
            .sessions
            .insert(session_id.to_string(), (seq, at_s.clone()));
        if let Some(id) = &ev.task_id {
            let touch = self.job.tasks.entry(id.clone()).or_insert(TaskTouch {
                last_seq: seq,
                state: None,
            });
            touch.last_seq = seq;
            if let Some(state) = new_state {
                self.job.states.insert(id.clone(), state.clone());
                // A task ends once: then what it ended on (its last answer or output) may
                // decide the outcome (`tasks::outcome_reads_last_act` says when); an act
                // appended in this batch is known without a read.
                let outcome = if !tasks::outcome_reads_last_act(&state) {
                    tasks::outcome(&state, None)
                } else if let Some(act) =
                    (self.job.acts.get(id)).or_else(|| self.batch.acts.get(id))
                {
                    tasks::outcome(&state, Some(act))
                } else {
                    let first_seq = tasks::get(self.c, id)?.map_or(0, |t| t.first_seq);
                    let last = tasks::last_act(self.c, session_id, id, first_seq)?;
                    tasks::outcome(&state, last.as_ref())
                };
                touch.state = Some((state, at, outcome));
            }
        }
        match &ev.body {
            EventBody::InteractionRaised { interaction } => {
                interactions::insert(self.c, interaction, session_id, &at_s, seq)?
            }
            EventBody::InteractionAnswered { answer } => {
                interactions::resolve(self.c, &answer.interaction_id, answer.expired, seq)?
            }
            _ => {}
        }
        if ends && let Some(id) = &ev.task_id {
            interactions::close_for_task(self.c, id, seq)?;
        }
        Ok(ev)
    }
}

/// Whether an event is sent to a task's webhooks: what a subscriber of the task sees (status
/// changes, artifacts, a message answer), and the task's creation (a `task` snapshot, for a
/// config that came with the message). Inputs after the first, a turn's start without a state
/// change and interactions are not (the state change that follows an interaction is).
pub(crate) fn pushed(body: &EventBody) -> bool {
    match body {
        EventBody::TaskCreated { .. }
        | EventBody::TaskState { .. }
        | EventBody::TurnStarted { working: true, .. }
        | EventBody::Artifact { .. }
        | EventBody::Reply { .. } => true,
        EventBody::InputAccepted { .. }
        | EventBody::TurnStarted { working: false, .. }
        | EventBody::InteractionRaised { .. }
        | EventBody::InteractionAnswered { .. } => false,
    }
}

/// The writer thread's state.
struct Writer {
    conn: Connection,
    hub: Hub,
    /// Where a committed batch's answers and events go out (see [`Deliver`]).
    deliver: Deliver,
    /// What the writer tells the `Journal` handles.
    shared: Arc<Shared>,
    /// Told after a commit that may have queued push deliveries.
    push_ready: Arc<tokio::sync::Notify>,
    cache: Cache,
    /// `PRAGMA data_version` at the last batch: it changes when another connection commits.
    data_version: Option<i64>,
    /// A [`Job::Alone`] taken off the queue while a batch was being gathered: it runs next,
    /// after that batch.
    alone: Option<Job>,
}

/// What the writer keeps for the `Journal` handles to read.
#[derive(Default)]
pub(crate) struct Shared {
    /// Texts queued for the search index and not yet indexed, as committed: a search asks for
    /// a flush only when it is not zero (`Journal::flush_search`).
    pub(crate) unindexed: std::sync::atomic::AtomicUsize,
    /// Batches committed (for tests that count commits).
    pub(crate) commits: std::sync::atomic::AtomicU64,
    /// Jobs run in batches ([`crate::Journal::writer_jobs`]).
    pub(crate) jobs: std::sync::atomic::AtomicU64,
}

/// A job run on the async runtime after a batch (see [`Deliver`]).
type Delivery = Box<dyn FnOnce() + Send>;

/// Who answers a committed batch's callers and publishes its events.
///
/// Each answer or event wakes a task on the async runtime, and a wake from this thread, when
/// the runtime's workers are parked, is a write to their event fd and a trip through
/// `epoll_wait`. A lone request's batch woke the runtime about ten times that way, one
/// wake-up after another (its worker went back to sleep between them), which cost as much CPU
/// as the commit. Handed to one task on the runtime as a single closure, the batch wakes it
/// once, and the answers and events inside it are wakes from the runtime itself. One task,
/// fed in order, keeps every batch's events after the batch before.
///
/// Only on a multi-thread runtime: on a current-thread one, a caller that blocks that thread
/// while it waits for the journal (from another thread's runtime) would wait for ever. Without a
/// runtime, or once it is gone, the writer delivers itself, as it always did.
pub(crate) enum Deliver {
    Inline,
    Task(tokio::sync::mpsc::UnboundedSender<Delivery>),
}

impl Deliver {
    /// The task on the runtime of the calling thread, if it is a multi-thread one.
    pub(crate) fn start() -> Self {
        use tokio::runtime::{Handle, RuntimeFlavor};
        let Ok(rt) = Handle::try_current() else {
            return Deliver::Inline;
        };
        if rt.runtime_flavor() != RuntimeFlavor::MultiThread {
            return Deliver::Inline;
        }
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Delivery>();
        rt.spawn(async move {
            while let Some(f) = rx.recv().await {
                f();
            }
        });
        Deliver::Task(tx)
    }

    fn run(&mut self, f: impl FnOnce() + Send + 'static) {
        if let Deliver::Task(tx) = self {
            match tx.send(Box::new(f)) {
                Ok(()) => return,
                // The runtime shut down: deliver here from now on.
                Err(back) => {
                    *self = Deliver::Inline;
                    (back.0)();
                    return;
                }
            }
        }
        f();
    }
}

/// Runs a cached statement that returns no rows (transaction control).
fn exec(c: &Connection, sql: &str) -> rusqlite::Result<()> {
    c.prepare_cached(sql)?.execute([]).map(drop)
}

/// The writer loop: runs until every `Journal` handle is dropped.
pub(crate) fn run(
    conn: Connection,
    mut wal: Wal,
    jobs: Receiver<Job>,
    hub: Hub,
    push_ready: Arc<tokio::sync::Notify>,
    deliver: Deliver,
    shared: Arc<Shared>,
) {
    let mut w = Writer {
        conn,
        hub,
        deliver,
        shared,
        push_ready,
        cache: Cache::default(),
        data_version: None,
        alone: None,
    };
    loop {
        let first = match w.alone.take() {
            Some(job) => job,
            None if w.shared.unindexed.load(Ordering::Relaxed) > 0 => {
                match jobs.recv_timeout(IDLE_FLUSH) {
                    Ok(job) => job,
                    // Idle with text waiting: index it (nobody waits for the answer).
                    Err(RecvTimeoutError::Timeout) => Job::FlushSearch {
                        reply: oneshot::channel().0,
                    },
                    Err(RecvTimeoutError::Disconnected) => break,
                }
            }
            None => match jobs.recv() {
                Ok(job) => job,
                Err(_) => break,
            },
        };
        if let Job::Alone { f, reply } = first {
            w.run_alone(f, reply);
            wal.after_batch(&w.conn);
            continue;
        }
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH && w.alone.is_none() {
            match jobs.try_recv() {
                Ok(job @ Job::Alone { .. }) => w.alone = Some(job),
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        w.run_batch(batch, &jobs);
        wal.after_batch(&w.conn);
    }
    tracing::debug!("journal writer stopped");
}

impl Writer {
    /// Runs a [`Job::Alone`]: foreign keys off (a pragma that only takes effect outside a
    /// transaction), its own IMMEDIATE transaction, foreign keys back on whatever happened.
    fn run_alone(&mut self, f: CallFn, reply: oneshot::Sender<Result<CallOut>>) {
        let c = &self.conn;
        let r = exec(c, "PRAGMA foreign_keys = OFF")
            .map_err(Error::from)
            .and_then(|()| exec(c, "BEGIN IMMEDIATE").map_err(Error::from))
            .and_then(|()| match f(c) {
                Ok(out) => exec(c, "COMMIT").map(|()| out).map_err(Error::from),
                Err(e) => Err(e),
            });
        if !c.is_autocommit() {
            let _ = exec(c, "ROLLBACK");
        }
        if let Err(e) = exec(c, "PRAGMA foreign_keys = ON") {
            // Every later write would run unchecked: stop the writer rather than go on so
            // (its callers then get `Error::Closed`).
            tracing::error!(error = %e, "journal: cannot turn foreign keys back on");
            panic!("journal writer: cannot turn foreign keys back on: {e}");
        }
        self.cache = Cache::default();
        drop(reply.send(r));
    }

    /// Runs `batch` in one transaction; `rx` gives the jobs that arrive meanwhile (see
    /// [`Done::answer_early`]).
    fn run_batch(&mut self, batch: Vec<Job>, rx: &Receiver<Job>) {
        // IMMEDIATE takes the write lock up front: when another process writes the same file
        // (a `sextant token` command, say), this waits on busy_timeout instead of failing later
        // with a stale snapshot half-way through the batch.
        if let Err(e) = exec(&self.conn, "BEGIN IMMEDIATE") {
            tracing::error!(error = %e, "journal: cannot begin a transaction");
            for job in batch {
                fail_job(job, &e.to_string());
            }
            return;
        }
        self.check_data_version();
        if self.cache.push.is_none() {
            match push::live_index(&self.conn) {
                Ok(list) => {
                    let mut map: HashMap<String, Vec<String>> = HashMap::new();
                    for (task, config) in list {
                        map.entry(task).or_default().push(config);
                    }
                    self.cache.push = Some(map);
                }
                // Without it an append could not know what it owes: nothing may be written.
                Err(e) => {
                    tracing::error!(error = %e, "journal: cannot read the push configs");
                    let _ = exec(&self.conn, "ROLLBACK");
                    for job in batch {
                        fail_job(job, &e.to_string());
                    }
                    return;
                }
            }
        }
        let mut pending = Pending::default();
        let mut done = Vec::with_capacity(batch.len());
        let mut jobs = batch.into_iter();
        let mut broken = None;
        // Tasks answered early whose first turn has not stopped yet, and whether a job came
        // whose caller waits for this commit (see `EARLY_GAP`).
        let mut turning: Vec<String> = Vec::new();
        let mut hurry = false;
        let opened = std::time::Instant::now();
        loop {
            for job in jobs.by_ref() {
                hurry |= !matches!(
                    job,
                    Job::Admit { early: true, .. } | Job::Append { guard: Some(_), .. }
                );
                let (mut d, fatal) = self.run_job(&mut pending, job);
                if fatal.is_some() {
                    done.push(d);
                    broken = fatal;
                    break;
                }
                if let Some(task_id) = d.answer_early(&self.hub) {
                    turning.push(task_id);
                }
                done.push(d);
            }
            // Admissions answered early let their callers start the tasks' turns. What those
            // send meanwhile joins this batch, so a short turn commits with its task's
            // admission: one commit instead of two. The writer waits for it while the turn
            // goes on and nobody else waits.
            turning.retain(|id| {
                !pending
                    .states
                    .get(id)
                    .is_some_and(|s| is_terminal(s) || is_interrupted(s))
            });
            if broken.is_some() || turning.is_empty() || hurry || done.len() >= EARLY_MAX {
                break;
            }
            let Some(left) = EARLY_WINDOW.checked_sub(opened.elapsed()) else {
                break;
            };
            let first = match rx.recv_timeout(left.min(EARLY_GAP)) {
                Ok(job @ Job::Alone { .. }) => {
                    self.alone = Some(job);
                    break;
                }
                Ok(job) => job,
                Err(_) => break,
            };
            let room = MAX_BATCH.saturating_sub(done.len());
            let mut more: Vec<Job> = vec![first];
            while more.len() < room && self.alone.is_none() {
                match rx.try_recv() {
                    Ok(job @ Job::Alone { .. }) => self.alone = Some(job),
                    Ok(job) => more.push(job),
                    Err(_) => break,
                }
            }
            jobs = more.into_iter();
        }
        // A job failed half-way: nothing of this batch may commit.
        if let Some(why) = broken {
            tracing::error!(error = %why, "journal: a write failed; abandoning the batch");
            let _ = exec(&self.conn, "ROLLBACK");
            self.cache = Cache::default();
            let hub = self.hub.clone();
            self.deliver.run(move || {
                for d in done {
                    d.fail(&why, &hub);
                }
                for job in jobs {
                    fail_job(job, &why);
                }
            });
            return;
        }
        let before = self.shared.unindexed.load(Ordering::Relaxed);
        // The queued search text is indexed when asked, or once enough of it waits.
        let committed = pending.write_back(&self.conn).and_then(|()| {
            let mut waiting = before + pending.queued;
            if waiting > 0 && (pending.flush || waiting >= FLUSH_AT) {
                search::flush(&self.conn)?;
                waiting = 0;
            }
            exec(&self.conn, "COMMIT")?;
            Ok(waiting)
        });
        match committed {
            Ok(waiting) => {
                self.shared.unindexed.store(waiting, Ordering::Relaxed);
                self.shared.commits.fetch_add(1, Ordering::Relaxed);
                let queued = pending.push_queued;
                self.remember(pending);
                let (hub, push_ready) = (self.hub.clone(), self.push_ready.clone());
                self.deliver.run(move || {
                    for d in done {
                        let live = d.subscribe(&hub);
                        for ev in d.published() {
                            hub.publish(ev);
                        }
                        d.send(live);
                    }
                    if queued {
                        push_ready.notify_one();
                    }
                });
            }
            Err(e) => {
                tracing::error!(error = %e, "journal: commit failed");
                if !self.conn.is_autocommit() {
                    let _ = exec(&self.conn, "ROLLBACK");
                }
                self.cache = Cache::default();
                let (hub, why) = (self.hub.clone(), e.to_string());
                self.deliver.run(move || {
                    for d in done {
                        d.fail(&why, &hub);
                    }
                });
            }
        }
    }

    /// Drops the cache if another connection committed since the last batch.
    fn check_data_version(&mut self) {
        let v = self
            .conn
            .prepare_cached("PRAGMA data_version")
            .and_then(|mut st| st.query_row([], |r| r.get::<_, i64>(0)))
            .ok();
        if v.is_none() || v != self.data_version {
            self.cache = Cache::default();
        }
        self.data_version = v;
    }

    /// Folds a committed batch into the cache. Tasks that ended leave it: nothing appends a
    /// state to them again, and the rare late append reads the row.
    fn remember(&mut self, batch: Pending) {
        let cache = &mut self.cache;
        if cache.seqs.len() > CACHE_MAX {
            cache.seqs.clear();
        }
        if cache.states.len() > CACHE_MAX {
            cache.states.clear();
        }
        cache.seqs.extend(batch.seqs);
        if let Some(push) = &mut cache.push {
            for (id, configs) in batch.push {
                if configs.is_empty() {
                    push.remove(&id);
                } else {
                    push.insert(id, configs);
                }
            }
        }
        for (id, state) in batch.states {
            if state.is_terminal() {
                // An ended task is owed nothing more (its last event was queued already).
                if let Some(push) = &mut cache.push {
                    push.remove(&id);
                }
                cache.states.remove(&id);
            } else {
                cache.states.insert(id, state);
            }
        }
    }

    /// Runs one job. Admissions and plain appends check everything that can refuse them before
    /// they write, so they need no savepoint (whose page copies cost more than the job); an
    /// error after they wrote is a database failure, returned as the second value: the batch
    /// is then abandoned. Other jobs run in their own savepoint: on error their writes are
    /// rolled back and the batch goes on.
    fn run_job(&mut self, pending: &mut Pending, job: Job) -> (Done, Option<String>) {
        self.shared.jobs.fetch_add(1, Ordering::Relaxed);
        let c = &self.conn;
        let job = match job {
            Job::Call { f, reply } => {
                // Closures see the tables, so the batch's unwritten changes go in first.
                if let Err(e) = pending.write_back(c) {
                    let why = e.to_string();
                    return (Done::Call(reply, Err(e)), Some(why));
                }
                let r = in_savepoint(c, || f(c));
                return (Done::Call(reply, r), None);
            }
            job => job,
        };
        let mut ctx = Ctx {
            c,
            cache: &self.cache,
            batch: pending,
            job: Pending::default(),
            wrote: false,
        };
        let done = match job {
            Job::FlushSearch { reply } => {
                ctx.job.flush = true;
                Done::Unit(reply, Ok(()))
            }
            Job::UpsertAgents { agents, at, reply } => {
                let at = format_time(at);
                let r = in_savepoint(c, || {
                    agents.iter().try_for_each(|a| agents::upsert(c, a, &at))
                });
                Done::Unit(reply, r)
            }
            Job::Admit {
                admission,
                watch,
                early,
                reply,
            } => {
                // A refusal is a successful read-only outcome: nothing was written.
                let outcome = admit(&mut ctx, &admission);
                Done::Admit {
                    reply: Some(reply),
                    watch,
                    early,
                    outcome,
                }
            }
            Job::Append {
                guard: Some(guard),
                reply,
                ..
            } if guard.tripped() => {
                let refused = Err(Error::Conflict(
                    "an earlier output of this turn could not be recorded".into(),
                ));
                Done::Append(reply, refused, Some(guard))
            }
            Job::Append {
                session_id,
                events,
                guard,
                reply,
            } => {
                // Interactions also write their own table, which can refuse after the event.
                let plain = !events.iter().any(|e| {
                    matches!(
                        e.body,
                        EventBody::InteractionRaised { .. } | EventBody::InteractionAnswered { .. }
                    )
                });
                let turn_output = guard.is_some();
                let run = |ctx: &mut Ctx<'_>| -> Result<Vec<Arc<JournalEvent>>> {
                    ctx.check(&session_id, &events, turn_output)?;
                    events
                        .into_iter()
                        .map(|e| {
                            ctx.append(&session_id, e.task_id, e.body, e.at)
                                .map(Arc::new)
                        })
                        .collect()
                };
                let r = if plain {
                    run(&mut ctx)
                } else {
                    let r = in_savepoint(c, || run(&mut ctx));
                    ctx.wrote = false;
                    r
                };
                if r.is_err()
                    && let Some(g) = &guard
                {
                    g.trip();
                }
                Done::Append(reply, r, guard)
            }
            Job::PutPush { row, reply } => {
                let r = in_savepoint(c, || put_push(&mut ctx, &row));
                ctx.wrote = false;
                Done::PutPush(reply, r)
            }
            Job::DeletePush {
                task_id,
                config_id,
                reply,
            } => {
                let r = in_savepoint(c, || {
                    let existed = push::delete(c, &task_id, &config_id)?;
                    let mut list = ctx.push_configs(&task_id);
                    list.retain(|i| *i != config_id);
                    ctx.job.push.insert(task_id.clone(), list);
                    Ok(existed)
                });
                ctx.wrote = false;
                Done::DeletePush(reply, r)
            }
            Job::Call { .. } => unreachable!("handled above"),
            // `run` and `run_batch` keep these out of batches.
            Job::Alone { reply, .. } => Done::Call(
                reply,
                Err(Error::Failed("a lone write was sent into a batch".into())),
            ),
        };
        let failed = match &done {
            Done::Unit(_, r) => r.as_ref().err(),
            Done::Admit { outcome, .. } => outcome.as_ref().err(),
            Done::Append(_, r, _) => r.as_ref().err(),
            Done::Call(_, r) => r.as_ref().err(),
            Done::PutPush(_, r) => r.as_ref().err(),
            Done::DeletePush(_, r) => r.as_ref().err(),
        };
        match failed {
            None => {
                pending.merge(ctx.job);
                (done, None)
            }
            Some(e) if ctx.wrote => {
                let why = e.to_string();
                (done, Some(why))
            }
            Some(_) => (done, None),
        }
    }
}

/// [`Refusal::TurnCap`] if the admission caps its Session's inputs and the Session is full.
fn turn_cap(c: &Connection, a: &Admission, session_id: &str) -> Result<Option<Refusal>> {
    Ok(match a.max_context_inputs {
        Some(limit)
            if crate::queries::security::session_inputs(c, session_id)? >= u64::from(limit) =>
        {
            Some(Refusal::TurnCap { limit })
        }
        _ => None,
    })
}

/// Runs `f` in a savepoint: released on success, rolled back (and released) on error.
fn in_savepoint<T>(c: &Connection, f: impl FnOnce() -> Result<T>) -> Result<T> {
    exec(c, "SAVEPOINT job")?;
    match f() {
        Ok(v) => {
            exec(c, "RELEASE job")?;
            Ok(v)
        }
        Err(e) => {
            if let Err(undo) = exec(c, "ROLLBACK TO job").and_then(|()| exec(c, "RELEASE job")) {
                tracing::error!(error = %undo, "journal: could not roll back a failed job");
            }
            Err(e)
        }
    }
}

fn fail_job(job: Job, why: &str) {
    let err = || Error::Unavailable(why.to_string());
    match job {
        Job::UpsertAgents { reply, .. } | Job::FlushSearch { reply } => {
            drop(reply.send(Err(err())))
        }
        Job::Admit { reply, .. } => drop(reply.send(Err(err()))),
        Job::Append { reply, guard, .. } => {
            if let Some(g) = guard {
                g.trip();
            }
            drop(reply.send(Err(err())))
        }
        Job::Call { reply, .. } | Job::Alone { reply, .. } => drop(reply.send(Err(err()))),
        Job::PutPush { reply, .. } => drop(reply.send(Err(err()))),
        Job::DeletePush { reply, .. } => drop(reply.send(Err(err()))),
    }
}

/// Stores a push config; a config of a task that has not ended joins the task's list, so the
/// task's next events are queued for it.
fn put_push(ctx: &mut Ctx<'_>, row: &PushConfigRow) -> Result<PushPut> {
    let Some(task) = ctx.task(&row.task_id)? else {
        return Ok(PushPut::TaskNotFound);
    };
    let replaced = push::put(ctx.c, row)?;
    // A replaced config is re-enabled: what it still owes is due now.
    ctx.job.push_queued |= replaced;
    if !task.state.is_terminal() {
        let mut list = ctx.push_configs(&row.task_id);
        if !list.contains(&row.config_id) {
            list.push(row.config_id.clone());
        }
        ctx.job.push.insert(row.task_id.to_string(), list);
    }
    Ok(if replaced {
        PushPut::Replaced
    } else {
        PushPut::Created
    })
}

fn admit(ctx: &mut Ctx<'_>, a: &Admission) -> Result<Result<Admitted, Refusal>> {
    let c = ctx.c;
    let message_id = a.message.message_id.as_str();
    if let Some((task_id, hash)) = inputs::find(c, &a.caller, &a.agent_id, &a.input_key)? {
        if hash != a.content_hash {
            return Ok(Err(Refusal::MessageIdReused { task_id }));
        }
        let task = ctx.task(&task_id)?.ok_or(Error::NotFound)?;
        return Ok(Ok(Admitted::Duplicate { task }));
    }
    // After the retry check: a message already accepted is answered with its task, cap or not.
    if let Some(limit) = a.max_active_tasks
        && crate::queries::security::active_tasks(c, &a.caller)? >= u64::from(limit)
    {
        return Ok(Err(Refusal::TooManyTasks { limit }));
    }

    if let Some(task_id) = &a.task_id {
        let Some(task) = ctx
            .task(task_id)?
            .filter(|t| t.caller == a.caller && t.agent_id == a.agent_id)
        else {
            return Ok(Err(Refusal::TaskNotFound));
        };
        if let Some(cx) = &a.context_id
            && *cx != task.context_id
        {
            return Ok(Err(Refusal::ContextMismatch {
                task_context: task.context_id.into_string(),
            }));
        }
        if task.state.is_terminal() {
            return Ok(Err(Refusal::TaskTerminal {
                state: sextant_core::event::state_wire(&task.state),
            }));
        }
        if let Some(refusal) = turn_cap(c, a, &task.session_id)? {
            return Ok(Err(refusal));
        }
        if let Some(p) = &a.push_config {
            let row = PushConfigRow {
                task_id: task.task_id.clone(),
                ..p.clone()
            };
            ctx.wrote = true;
            put_push(ctx, &row)?;
        }
        let mut message = a.message.clone();
        message.task_id = Some(task.task_id.to_string());
        message.context_id = Some(task.context_id.to_string());
        let ev = ctx.append_in(
            &task.session_id,
            Some(task.context_id.as_str()),
            Some(task.task_id.to_string()),
            EventBody::InputAccepted { message },
            a.at,
        )?;
        inputs::insert(
            c,
            &a.caller,
            &a.agent_id,
            &a.input_key,
            &task.task_id,
            &a.content_hash,
            ev.seq,
        )?;
        let task = TaskRow {
            last_seq: ev.seq,
            ..task
        };
        return Ok(Ok(Admitted::FollowUp {
            task,
            event: Arc::new(ev),
        }));
    }

    let at_s = format_time(sextant_core::ids::millis(a.at));
    // Without a contextId the caller starts a new conversation: a fresh id names no Session.
    let existing = match &a.context_id {
        Some(cx) => sessions::by_context(c, &a.caller, &a.agent_id, cx)?,
        None => None,
    };
    let context_id = a.context_id.clone().unwrap_or_else(ContextId::new);
    let (session, session_created) = match existing {
        Some(s) => {
            if let Some(refusal) = turn_cap(c, a, &s.session_id)? {
                return Ok(Err(refusal));
            }
            (s, false)
        }
        None => {
            let s = SessionRow {
                session_id: SessionId::new(),
                agent_id: a.agent_id.clone(),
                caller: a.caller.clone(),
                caller_kind: a.caller_kind,
                context_id: context_id.clone(),
                origin: a.origin,
                created_at: sextant_core::ids::millis(a.at),
                // As they will be once the first event below is in: nothing to write back.
                updated_at: sextant_core::ids::millis(a.at),
                last_seq: 1,
            };
            ctx.wrote = true;
            sessions::insert(c, &s)?;
            ctx.job.seqs.insert(s.session_id.to_string(), 0);
            (s, true)
        }
    };
    let task_id = new_id();
    // A config given with the message is owed the task's first event too (a `task` snapshot).
    if let Some(p) = &a.push_config {
        ctx.job
            .push
            .insert(task_id.clone(), vec![p.config_id.clone()]);
    }
    let mut message = a.message.clone();
    message.task_id = Some(task_id.clone());
    message.context_id = Some(context_id.to_string());
    let ev = ctx.append_in(
        &session.session_id,
        Some(context_id.as_str()),
        Some(task_id.clone()),
        EventBody::TaskCreated { message },
        a.at,
    )?;
    // The rows are written with their cache columns already right: nothing to write back.
    ctx.job.tasks.remove(&task_id);
    if session_created {
        ctx.job.sessions.remove(session.session_id.as_str());
    }
    let task = TaskRow {
        task_id: task_id.as_str().into(),
        session_id: session.session_id.clone(),
        caller: a.caller.clone(),
        agent_id: a.agent_id.clone(),
        context_id,
        message_id: message_id.to_string(),
        created_at: sextant_core::ids::millis(a.at),
        first_seq: ev.seq,
        state: TaskState::Submitted,
        state_at: ev.at,
        last_seq: ev.seq,
        outcome: None,
    };
    tasks::insert(c, &task)?;
    if let Some(p) = &a.push_config {
        let row = PushConfigRow {
            task_id: task.task_id.clone(),
            ..p.clone()
        };
        push::put(c, &row)?;
        // The task_created delivery was queued before the config row existed.
        push::recount(c, &task_id, &p.config_id, &at_s)?;
    }
    inputs::insert(
        c,
        &a.caller,
        &a.agent_id,
        &a.input_key,
        &task_id,
        &a.content_hash,
        ev.seq,
    )?;
    Ok(Ok(Admitted::Created {
        task,
        session_created,
        event: Arc::new(ev),
    }))
}
