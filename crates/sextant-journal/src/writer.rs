//! The writer thread: group commit of admissions and appends.

use std::sync::Arc;
use std::sync::mpsc::Receiver;

use chrono::{DateTime, Utc};
use rusqlite::{Connection, Transaction};
use sextant_core::a2a::Message;
use sextant_core::ids::{format_time, new_id};
use sextant_core::{AgentSpec, EventBody, JournalEvent};
use tokio::sync::oneshot;

use crate::error::{Error, Result};
use crate::hub::Hub;
use crate::queries::{agents, events, inputs, interactions, sessions, tasks};
use crate::{SessionRow, TaskRow};

/// How many queued jobs one transaction takes at most.
const MAX_BATCH: usize = 256;

/// One input to admit.
#[derive(Debug, Clone)]
pub struct Admission {
    /// `Principal::key()` of the caller, and its kind.
    pub caller: String,
    pub caller_kind: String,
    pub agent_id: String,
    /// The caller's contextId, if it sent one.
    pub context_id: Option<String>,
    /// The caller's taskId, if it continues an existing task.
    pub task_id: Option<String>,
    /// The message as received; the journal fills in `contextId` and `taskId`.
    pub message: Message,
    /// Hash of the request content, for idempotent retries.
    pub content_hash: String,
    /// The idempotency key: normally the messageId; see `AgentSpec::dedupe_message_ids`.
    pub input_key: String,
    /// Where the Session came from when it is created (`a2a`, `schedule`, ...).
    pub origin: String,
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

/// Why an input was not admitted (nothing was written).
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// The messageId was used before by this caller for different content.
    MessageIdReused { task_id: String },
    /// The taskId names no task this caller can see on this Agent.
    TaskNotFound,
    /// The task already ended; follow-ups must start a new task.
    TaskTerminal { state: String },
    /// contextId and taskId disagree.
    ContextMismatch { task_context: String },
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
        reply: oneshot::Sender<Result<Result<Admitted, Refusal>>>,
    },
    Append {
        session_id: String,
        events: Vec<NewEvent>,
        reply: oneshot::Sender<Result<Vec<Arc<JournalEvent>>>>,
    },
    /// Any other write: a closure over the transaction (in its own savepoint), for tables
    /// whose writes publish no events (schedules, runs). See `Journal::call`.
    Call {
        f: CallFn,
        reply: oneshot::Sender<Result<CallOut>>,
    },
}

/// The type-erased result of a [`Job::Call`]; `Journal::call` downcasts it back.
pub(crate) type CallOut = Box<dyn std::any::Any + Send>;
/// The type-erased closure of a [`Job::Call`].
pub(crate) type CallFn = Box<dyn FnOnce(&Connection) -> Result<CallOut> + Send>;

/// A finished job, answered only after the transaction commits.
enum Done {
    Unit(oneshot::Sender<Result<()>>, Result<()>),
    Admit(
        oneshot::Sender<Result<Result<Admitted, Refusal>>>,
        Result<Result<Admitted, Refusal>>,
    ),
    Append(
        oneshot::Sender<Result<Vec<Arc<JournalEvent>>>>,
        Result<Vec<Arc<JournalEvent>>>,
    ),
    Call(oneshot::Sender<Result<CallOut>>, Result<CallOut>),
}

impl Done {
    fn published(&self) -> Vec<Arc<JournalEvent>> {
        match self {
            Done::Admit(_, Ok(Ok(Admitted::Created { event, .. })))
            | Done::Admit(_, Ok(Ok(Admitted::FollowUp { event, .. }))) => vec![event.clone()],
            Done::Append(_, Ok(evs)) => evs.clone(),
            _ => Vec::new(),
        }
    }

    fn send(self) {
        match self {
            Done::Unit(tx, r) => drop(tx.send(r)),
            Done::Admit(tx, r) => drop(tx.send(r)),
            Done::Append(tx, r) => drop(tx.send(r)),
            Done::Call(tx, r) => drop(tx.send(r)),
        }
    }

    fn fail(self, why: &str) {
        let err = || Error::Conflict(format!("journal commit failed: {why}"));
        match self {
            Done::Unit(tx, _) => drop(tx.send(Err(err()))),
            Done::Admit(tx, _) => drop(tx.send(Err(err()))),
            Done::Append(tx, _) => drop(tx.send(Err(err()))),
            Done::Call(tx, _) => drop(tx.send(Err(err()))),
        }
    }
}

/// The writer loop: runs until every `Journal` handle is dropped.
pub(crate) fn run(mut conn: Connection, jobs: Receiver<Job>, hub: Hub) {
    while let Ok(first) = jobs.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let mut done = Vec::with_capacity(batch.len());
        // IMMEDIATE takes the write lock up front: when another process writes the same file
        // (two Sextants on one data dir), this waits on busy_timeout instead of failing later
        // with a stale snapshot half-way through the batch.
        let tx = match conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate) {
            Ok(tx) => tx,
            Err(e) => {
                tracing::error!(error = %e, "journal: cannot begin a transaction");
                for job in batch {
                    fail_job(job, &e.to_string());
                }
                continue;
            }
        };
        let mut tx = tx;
        for job in batch {
            done.push(run_job(&mut tx, job));
        }
        match tx.commit() {
            Ok(()) => {
                for d in done {
                    for ev in d.published() {
                        hub.publish(ev);
                    }
                    d.send();
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "journal: commit failed");
                for d in done {
                    d.fail(&e.to_string());
                }
            }
        }
    }
    tracing::debug!("journal writer stopped");
}

fn fail_job(job: Job, why: &str) {
    let err = || Error::Conflict(format!("journal unavailable: {why}"));
    match job {
        Job::UpsertAgents { reply, .. } => drop(reply.send(Err(err()))),
        Job::Admit { reply, .. } => drop(reply.send(Err(err()))),
        Job::Append { reply, .. } => drop(reply.send(Err(err()))),
        Job::Call { reply, .. } => drop(reply.send(Err(err()))),
    }
}

/// Runs one job inside its own savepoint: on error its writes are rolled back and the batch
/// goes on.
fn run_job(tx: &mut Transaction<'_>, job: Job) -> Done {
    fn in_savepoint<T>(
        tx: &mut Transaction<'_>,
        f: impl FnOnce(&Connection) -> Result<T>,
    ) -> Result<T> {
        let sp = tx.savepoint()?;
        let out = f(&sp)?;
        sp.commit()?;
        Ok(out)
    }
    match job {
        Job::UpsertAgents { agents, at, reply } => {
            let at = format_time(at);
            let r = in_savepoint(tx, |c| {
                agents.iter().try_for_each(|a| agents::upsert(c, a, &at))
            });
            Done::Unit(reply, r)
        }
        Job::Admit { admission, reply } => {
            // A refusal is a successful read-only outcome: the savepoint commits nothing.
            let r = in_savepoint(tx, |c| admit(c, &admission));
            Done::Admit(reply, r)
        }
        Job::Append {
            session_id,
            events,
            reply,
        } => {
            let r = in_savepoint(tx, |c| {
                events
                    .into_iter()
                    .map(|e| append(c, &session_id, e.task_id, e.body, e.at).map(Arc::new))
                    .collect()
            });
            Done::Append(reply, r)
        }
        Job::Call { f, reply } => {
            let r = in_savepoint(tx, f);
            Done::Call(reply, r)
        }
    }
}

/// Appends one event: takes the next seq, writes the row, updates the task cache.
fn append(
    c: &Connection,
    session_id: &str,
    task_id: Option<String>,
    body: EventBody,
    at: DateTime<Utc>,
) -> Result<JournalEvent> {
    let at = sextant_core::ids::millis(at);
    let at_s = format_time(at);
    if let (Some(id), Some(new_state)) = (&task_id, body.new_state()) {
        let current = tasks::get(c, id)?.ok_or(Error::NotFound)?;
        if current.state.is_terminal() {
            return Err(Error::Conflict(format!(
                "task {id} is already {}; it cannot move to {}",
                sextant_core::event::state_wire(&current.state),
                sextant_core::event::state_wire(&new_state)
            )));
        }
    }
    let seq = sessions::next_seq(c, session_id, &at_s)?;
    let ev = JournalEvent {
        session_id: session_id.to_string(),
        seq,
        task_id,
        at,
        body,
    };
    events::insert(c, &ev)?;
    if let Some(id) = &ev.task_id {
        let state = ev.body.new_state();
        tasks::touch(c, id, seq, state.as_ref().map(|s| (s, at_s.as_str())))?;
    }
    match &ev.body {
        EventBody::InteractionRaised { interaction } => {
            interactions::insert(c, interaction, session_id, &at_s, seq)?
        }
        EventBody::InteractionAnswered { answer } => {
            interactions::resolve(c, &answer.interaction_id, answer.expired, seq)?
        }
        _ => {}
    }
    Ok(ev)
}

fn admit(c: &Connection, a: &Admission) -> Result<Result<Admitted, Refusal>> {
    let message_id = a.message.message_id.as_str();
    if let Some((task_id, hash)) = inputs::find(c, &a.caller, &a.agent_id, &a.input_key)? {
        if hash != a.content_hash {
            return Ok(Err(Refusal::MessageIdReused { task_id }));
        }
        let task = tasks::get(c, &task_id)?.ok_or(Error::NotFound)?;
        return Ok(Ok(Admitted::Duplicate { task }));
    }

    if let Some(task_id) = &a.task_id {
        let Some(task) =
            tasks::get(c, task_id)?.filter(|t| t.caller == a.caller && t.agent_id == a.agent_id)
        else {
            return Ok(Err(Refusal::TaskNotFound));
        };
        if let Some(ctx) = &a.context_id
            && *ctx != task.context_id
        {
            return Ok(Err(Refusal::ContextMismatch {
                task_context: task.context_id,
            }));
        }
        if task.state.is_terminal() {
            return Ok(Err(Refusal::TaskTerminal {
                state: sextant_core::event::state_wire(&task.state),
            }));
        }
        let mut message = a.message.clone();
        message.task_id = Some(task.task_id.clone());
        message.context_id = Some(task.context_id.clone());
        let ev = append(
            c,
            &task.session_id,
            Some(task.task_id.clone()),
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
        let task = tasks::get(c, &task.task_id)?.ok_or(Error::NotFound)?;
        return Ok(Ok(Admitted::FollowUp {
            task,
            event: Arc::new(ev),
        }));
    }

    let at_s = format_time(sextant_core::ids::millis(a.at));
    let context_id = a.context_id.clone().unwrap_or_else(new_id);
    let (session, session_created) =
        match sessions::by_context(c, &a.caller, &a.agent_id, &context_id)? {
            Some(s) => (s, false),
            None => {
                let s = SessionRow {
                    session_id: new_id(),
                    agent_id: a.agent_id.clone(),
                    caller: a.caller.clone(),
                    caller_kind: a.caller_kind.clone(),
                    context_id: context_id.clone(),
                    origin: a.origin.clone(),
                    created_at: at_s.clone(),
                    updated_at: at_s.clone(),
                    last_seq: 0,
                };
                sessions::insert(c, &s)?;
                (s, true)
            }
        };
    let task_id = new_id();
    tasks::insert(
        c,
        &TaskRow {
            task_id: task_id.clone(),
            session_id: session.session_id.clone(),
            caller: a.caller.clone(),
            agent_id: a.agent_id.clone(),
            context_id: context_id.clone(),
            message_id: message_id.to_string(),
            content_hash: a.content_hash.clone(),
            created_at: at_s.clone(),
            state: sextant_core::a2a::TaskState::Submitted,
            state_at: at_s,
            last_seq: 0,
        },
    )?;
    let mut message = a.message.clone();
    message.task_id = Some(task_id.clone());
    message.context_id = Some(context_id);
    let ev = append(
        c,
        &session.session_id,
        Some(task_id.clone()),
        EventBody::TaskCreated { message },
        a.at,
    )?;
    inputs::insert(
        c,
        &a.caller,
        &a.agent_id,
        &a.input_key,
        &task_id,
        &a.content_hash,
        ev.seq,
    )?;
    let task = tasks::get(c, &task_id)?.ok_or(Error::NotFound)?;
    Ok(Ok(Admitted::Created {
        task,
        session_created,
        event: Arc::new(ev),
    }))
}
