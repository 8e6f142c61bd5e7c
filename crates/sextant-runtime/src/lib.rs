//! Sextant's runtime: Session workers, engines and the live view of tasks.
//!
//! - [`Runtime::admit`] is the only way an input for an Agent enters the system: it checks the
//!   Agent, refuses a second input while the same Session is still being created, commits the
//!   input to the journal (the commit point), then hands the task to the Session's worker.
//!   Sextant's own outbound calls are the one other writer of tasks, and they do not come
//!   through here: `sextant-peers` journals each exchange itself, as a task of an outbound
//!   Session (origin `outbound`), because it is a record of what Sextant sent and got back,
//!   not work for an Agent of this runtime: no local Agent, access list, cap or worker applies
//!   to it (`sextant_peers::call` says how it is written).
//! - One worker per live Session ([`worker`]) owns that Session's queue and its [`Engine`]; it
//!   runs one turn at a time and journals every event the engine reports, then the final state.
//!   A worker that has been idle for a while stops; the next input starts a new one.
//! - [`stream`] turns the journal plus the live hub into gap-free, seq-ordered event streams for
//!   subscribers, and [`Runtime::wait_settled`] serves blocking callers.
//! - [`Runtime::builder`] puts a runtime together; its start-up work is a [`Recovery`], run
//!   once: it re-delivers inputs that were accepted but never run, and fails turns that a crash
//!   interrupted (their output so far is kept).
//! - [`Runtime::cancel`] cancels one task (queued, running or waiting for a decision): the
//!   decision is journalled first, then the turn is stopped as its engine needs (`cancel`);
//!   an Agent can be paused and all its work stopped (`pause`).
//!
//! - [`access`]: who may call which Agent (its access list plus the owner's revocations);
//!   [`Runtime::admit`] checks it on every input, the server on every read, and the scheduler
//!   on every Run. Admission also applies the per-principal caps ([`Limits`]) and frames text
//!   from remote principals as untrusted input ([`sextant_core::untrusted`]).
//!
//! - Traces (README "Traces"): admission, each turn, its engine run and each wait for an
//!   answer run in trace spans (`sextant_a2a::trace`). Admission records its span's context
//!   with the accepted message, in the journal, so a turn is admission's child even when it
//!   runs after a queue wait or after a restart.
//!
//! - [`outbound`]: what the runtime asks of Sextant's outbound side (`sextant-peers`, which
//!   depends on this crate): the `a2a` engine, fetched URL parts, answers to outbound cards and
//!   remote cancels, through the [`Outbound`] given to [`RuntimeBuilder::outbound`].
//!
//! - `test_support` (feature `test-support`, and this crate's tests): a runtime over a fresh
//!   journal for tests.
//!
//! Not here: HTTP and wire formats (sextant-server), calls to other agents and their
//! HTTP client (sextant-peers), SQL (sextant-journal).

pub mod access;
mod cancel;
pub mod engine;
pub mod interactions;
pub mod outbound;
mod pause;
mod pending;
pub mod process;
pub mod stream;
#[cfg(any(test, feature = "test-support"))]
pub mod test_support;
mod worker;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sextant_core::a2a::Message;
use sextant_core::ids::{ContextId, TaskId};
use sextant_core::projection::TaskFold;
use sextant_core::{AgentSpec, Clock, EventBody, Principal, Rights};
use sextant_journal::{Admission, Admitted, Journal, Refusal, TaskRow};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument;

pub use access::{AccessError, Grant};
pub use cancel::{CancelOutcome, CancelRequest};
pub use engine::make::EngineEnv;
pub use engine::{AskError, Engine, Outcome, ScheduledRun, Turn, TurnSink};
pub use interactions::{AnswerError, AnswerRequest, Denied};
pub use outbound::Outbound;

/// Why an input was not admitted.
#[derive(Debug, thiserror::Error)]
pub enum AdmitError {
    #[error("unknown agent")]
    UnknownAgent,
    /// The principal may not call this Agent (not listed, read-only, or revoked). Callers
    /// answer it exactly like [`AdmitError::UnknownAgent`] ("not found", never "forbidden");
    /// the reason is for logs and the audit record.
    #[error("{0}")]
    AccessDenied(AccessError),
    /// The journal refused the input (nothing was written): a reused messageId, an unknown
    /// or ended task, a context mismatch, the caller's task cap, the context's turn cap.
    #[error(transparent)]
    Refused(Refusal),
    /// Another input is creating this Session right now; retry.
    #[error("this conversation is still being created; retry the message")]
    SessionBusy,
    #[error("Sextant is shutting down")]
    ShuttingDown,
    /// The task waits for a decision; a message is never an answer.
    #[error("the task is waiting for a decision on interaction {interaction_id}")]
    AwaitingDecision { interaction_id: String },
    /// The owner paused the Agent: new inputs are refused, queued ones wait.
    #[error(
        "agent {agent:?} is paused by its owner: new messages are refused until it is resumed \
         (tasks already queued wait)"
    )]
    AgentPaused { agent: String },
    #[error(transparent)]
    Journal(#[from] sextant_journal::Error),
}

/// An input to admit.
#[derive(Debug, Clone)]
pub struct Input {
    pub principal: Principal,
    pub agent_id: String,
    pub message: Message,
    /// Where a new Session comes from.
    pub origin: sextant_core::Origin,
    /// The request's access decision, when the caller already checked it
    /// ([`Runtime::grant`]): admission then does not check the principal's rights again.
    /// `None`: admission checks them itself.
    pub grant: Option<access::Grant>,
}

/// An admitted input, with (for a new task) its events as they are committed.
pub struct Accepted {
    pub admitted: Admitted,
    live: Option<stream::Seeded>,
}

/// Per-principal caps applied at admission (0 = no cap). They bind remote principals only
/// (peers, assistants, JWT holders): the person and the anonymous loopback caller are local.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most tasks one remote principal may have submitted or working at once.
    pub max_concurrent_tasks: u32,
    /// Most inputs an agent principal (peer, delegated, service) may send in one context
    /// (Session). Contexts driven by a person or their assistant are never capped.
    pub max_agent_turns_per_context: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_concurrent_tasks: 8,
            max_agent_turns_per_context: 50,
        }
    }
}

/// Runtime settings.
#[derive(Debug, Clone)]
pub struct RuntimeConfig {
    /// Default working directory for local engines.
    pub work_dir: PathBuf,
    /// Where each Codex Agent's own `CODEX_HOME` is made (`<data dir>/codex`), one folder per
    /// Agent id.
    pub codex_homes: PathBuf,
    /// The person's own Codex home (`$CODEX_HOME`, else `~/.codex`), whose `auth.json` and
    /// `config.toml` an Agent's own Codex home links to; `None`: nothing is linked.
    pub person_codex_home: Option<PathBuf>,
    /// How long a worker with nothing to do stays alive.
    pub idle_worker: Duration,
    /// How long a canceled turn's processes have between `SIGTERM` and `SIGKILL`.
    pub cancel_grace: Duration,
}

/// The runtime handle. Clones share everything.
#[derive(Clone)]
pub struct Runtime {
    inner: Arc<Inner>,
}

pub(crate) struct Inner {
    pub(crate) journal: Journal,
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) agents: HashMap<String, Arc<AgentSpec>>,
    pub(crate) env: EngineEnv,
    pub(crate) idle_worker: Duration,
    /// Session id → the worker's queue. Sends and worker exits both happen under this lock, so
    /// an input is never handed to a worker that is leaving, and a Session never has two.
    pub(crate) workers: Mutex<HashMap<String, mpsc::UnboundedSender<worker::WorkItem>>>,
    /// Engines waiting for answers to interactions.
    pub(crate) waiters: Arc<pending::Waiters>,
    /// The process groups of running turns, by task id.
    pub(crate) running: process::Running,
    /// Each running turn's stop token ([`Turn::stop`]), by task id.
    pub(crate) turns: Mutex<HashMap<String, CancellationToken>>,
    /// Agents the owner paused (see [`Runtime::set_agent_paused`]).
    pub(crate) paused_agents: std::sync::RwLock<HashSet<String>>,
    /// See [`RuntimeConfig::cancel_grace`].
    pub(crate) cancel_grace: Duration,
    /// Who may call which Agent; checked on every admission.
    access: access::AccessPolicy,
    /// Per-principal caps, checked on every admission.
    limits: Limits,
    /// Context keys whose Session is being created right now.
    creating: Mutex<HashSet<(String, String, String)>>,
    accepting: AtomicBool,
    /// Workers stop taking new turns when this fires.
    pub(crate) stop_intake: CancellationToken,
    /// Running turns are interrupted when this fires (after the drain period).
    pub(crate) cancel_turns: CancellationToken,
    pub(crate) tracker: TaskTracker,
}

/// Removes a context key from the "being created" set when admission ends, however it ends.
struct CreatingGuard<'a> {
    set: &'a Mutex<HashSet<(String, String, String)>>,
    key: (String, String, String),
}

impl Drop for CreatingGuard<'_> {
    fn drop(&mut self) {
        self.set
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.key);
    }
}

/// How a [`Runtime`] is put together: [`Runtime::builder`] takes what every runtime needs,
/// the optional parts follow, and [`RuntimeBuilder::build`] hands out the runtime with its
/// one [`Recovery`]. What stays fixed for the runtime's life is given here, before the
/// runtime exists and can be shared, so nothing can be set too late or set twice.
#[must_use = "a builder does nothing until it is built"]
pub struct RuntimeBuilder {
    journal: Journal,
    clock: Arc<dyn Clock>,
    agents: Vec<AgentSpec>,
    config: RuntimeConfig,
    outbound: Option<Arc<dyn Outbound>>,
    limits: Limits,
}

impl RuntimeBuilder {
    /// The outbound side (`sextant_peers::Peers`: `a2a` engines, fetched URL parts, answers
    /// to outbound cards, remote cancels; see [`outbound`]); without it the runtime has none.
    /// Shared, not moved in: the server keeps its own `Arc` of the same peers service for the
    /// peers API, the MCP peer tools and push delivery.
    pub fn outbound(mut self, outbound: Arc<dyn Outbound>) -> Self {
        self.outbound = Some(outbound);
        self
    }

    /// The per-principal caps (see [`Limits`]); [`Limits::default`] without it.
    pub fn limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// The runtime, and its start-up work. The runtime takes input at once; run the
    /// [`Recovery`] (once, it is consumed) when the start has got far enough that inputs from
    /// the last run may be delivered. A runtime whose recovery never runs (a test's) serves
    /// new input only.
    pub fn build(self) -> (Runtime, Recovery) {
        let agents = self
            .agents
            .into_iter()
            .map(|a| (a.id.clone(), Arc::new(a)))
            .collect();
        let runtime = Runtime {
            inner: Arc::new(Inner {
                journal: self.journal,
                clock: self.clock,
                agents,
                env: EngineEnv {
                    work_dir: self.config.work_dir,
                    outbound: self.outbound,
                    codex_homes: self.config.codex_homes,
                    person_codex_home: self.config.person_codex_home,
                },
                idle_worker: self.config.idle_worker,
                workers: Mutex::default(),
                waiters: Arc::default(),
                running: Arc::default(),
                turns: Mutex::default(),
                paused_agents: Default::default(),
                cancel_grace: self.config.cancel_grace,
                access: access::AccessPolicy::default(),
                limits: self.limits,
                creating: Mutex::default(),
                accepting: AtomicBool::new(true),
                stop_intake: CancellationToken::new(),
                cancel_turns: CancellationToken::new(),
                tracker: TaskTracker::new(),
            }),
        };
        let recovery = Recovery {
            runtime: runtime.clone(),
        };
        (runtime, recovery)
    }
}

/// A runtime's start-up work, handed out once by [`RuntimeBuilder::build`]; [`Recovery::run`]
/// consumes it, so it cannot run twice.
#[must_use = "inputs from the last run are not delivered until the recovery runs"]
pub struct Recovery {
    runtime: Runtime,
}

impl Recovery {
    /// Re-delivers accepted inputs that never ran, fails turns a crash interrupted, loads the
    /// owner's revocations and paused Agents, and starts the interaction expiry loop; how many
    /// tasks it handed to workers. Pending interactions stay pending: their answer resumes the
    /// task.
    pub async fn run(self) -> Result<usize, sextant_journal::Error> {
        let rt = &self.runtime;
        // First end what interrupted turns left running (their process groups), so nothing
        // of theirs acts after this start has told anyone they stopped.
        let leftovers = process::end_leftovers(&rt.inner.journal).await?;
        let ended: HashSet<TaskId> = leftovers
            .into_iter()
            .filter(|(_, l)| matches!(l, process::Leftover::Ended { .. }))
            .map(|(task, _)| task)
            .collect();
        rt.load_access().await?;
        rt.load_paused_agents().await?;
        rt.inner.tracker.spawn(rt.clone().expiry_loop());
        let tasks = rt.inner.journal.unfinished_tasks().await?;
        let mut redelivered = 0;
        for t in tasks {
            if t.state == sextant_core::a2a::TaskState::Working {
                let events = rt.inner.journal.task_events(&t.task_id, 0).await?;
                // A turn that was following a remote task (a peer slower than its time limit)
                // goes on following it: a late answer still completes the task.
                let note = worker::follow_note(&events);
                // An outbound call (`a2a_call`) that was following a remote task: the outbound
                // side goes on following it (no Agent of this runtime runs it).
                if let Some(note) = note.as_ref().filter(|n| n["outbound"] == true)
                    && let Some(out) = rt.inner.env.outbound.clone()
                {
                    let resumed = out.resume_call(t.clone(), note.clone());
                    rt.inner.tracker.spawn(async move {
                        if let Err(e) = resumed.await {
                            tracing::warn!(error = %e, "could not go on following an outbound call");
                        }
                    });
                    redelivered += 1;
                    continue;
                }
                if worker::undelivered_inputs(&events).0.is_empty()
                    && let Some(note) = note
                {
                    rt.dispatch_item(
                        &t.session_id,
                        &t.agent_id,
                        worker::WorkItem::Follow {
                            task_id: t.task_id.to_string(),
                            note: Box::new(note),
                        },
                    );
                    redelivered += 1;
                    continue;
                }
                if worker::undelivered_inputs(&events).0.is_empty() {
                    let side_effects = rt.agent(&t.agent_id).is_none_or(|a| {
                        engine::make::make_engine(&a, &rt.inner.env).has_side_effects()
                    });
                    let why = interrupted_reason(side_effects, ended.contains(&t.task_id));
                    let why = why.as_str();
                    rt.inner
                        .journal
                        .append_one(
                            &t.session_id,
                            &t.task_id,
                            EventBody::TaskState {
                                state: sextant_core::a2a::TaskState::Failed,
                                message: Some(worker::agent_text(&t, why)),
                            },
                            rt.inner.clock.now(),
                        )
                        .await?;
                    continue;
                }
            }
            rt.dispatch(&t.session_id, &t.agent_id, &t.task_id);
            redelivered += 1;
        }
        Ok(redelivered)
    }
}

impl Runtime {
    /// Starts building a runtime over `journal` serving `agents` (see [`RuntimeBuilder`]).
    pub fn builder(
        journal: Journal,
        clock: Arc<dyn Clock>,
        agents: Vec<AgentSpec>,
        config: RuntimeConfig,
    ) -> RuntimeBuilder {
        RuntimeBuilder {
            journal,
            clock,
            agents,
            config,
            outbound: None,
            limits: Limits::default(),
        }
    }

    /// The journal.
    pub fn journal(&self) -> &Journal {
        &self.inner.journal
    }

    /// The outbound side, if set up.
    pub fn outbound(&self) -> Option<&Arc<dyn Outbound>> {
        self.inner.env.outbound.as_ref()
    }

    /// The clock.
    pub fn clock(&self) -> &Arc<dyn Clock> {
        &self.inner.clock
    }

    /// One Agent.
    pub fn agent(&self, id: &str) -> Option<Arc<AgentSpec>> {
        self.inner.agents.get(id).cloned()
    }

    /// Every Agent, sorted by id.
    pub fn agents(&self) -> Vec<Arc<AgentSpec>> {
        let mut v: Vec<_> = self.inner.agents.values().cloned().collect();
        v.sort_by(|a, b| a.id.cmp(&b.id));
        v
    }

    /// Whether `principal` may call `agent_id` right now (an unknown Agent is refused too);
    /// the error says why (its `Display` is the reason, fit to show the principal). Never cache
    /// the answer: the owner can revoke access at any time.
    pub fn check_access(&self, principal: &Principal, agent_id: &str) -> Result<(), AccessError> {
        self.authorize(principal, agent_id, Rights::Call).map(drop)
    }

    /// [`Runtime::authorize`] as a [`access::Grant`] for this one request: a server checks a
    /// request's rights once and hands the grant to admission with the input.
    pub fn grant(
        &self,
        principal: &Principal,
        agent_id: &str,
        need: Rights,
    ) -> Result<access::Grant, AccessError> {
        self.authorize(principal, agent_id, need)
            .map(|rights| access::Grant::new(principal, agent_id, rights))
    }

    /// What `principal` may do with `agent_id` right now, provided it is at least `need`
    /// (the Agent's access list, then the owner's revocations). Never cache the answer.
    pub fn authorize(
        &self,
        principal: &Principal,
        agent_id: &str,
        need: Rights,
    ) -> Result<Rights, AccessError> {
        let agent = self
            .inner
            .agents
            .get(agent_id)
            .ok_or_else(|| AccessError::UnknownAgent(agent_id.to_string()))?;
        self.inner.access.authorize(principal, agent, need)
    }

    /// Replaces the list of principal keys (or access patterns) denied `agent_id` in memory
    /// only (empty: no revocation). Takes effect on the next input. The server persists
    /// changes with [`Runtime::update_denied`].
    pub fn set_denied(&self, agent_id: &str, principals: Vec<String>) {
        self.inner.access.set_denied(agent_id, principals);
    }

    /// Replaces the deny list of `agent_id` in the journal, then in memory: it survives
    /// restarts and takes effect on the next operation.
    pub async fn update_denied(
        &self,
        agent_id: &str,
        principals: Vec<String>,
    ) -> Result<(), sextant_journal::Error> {
        self.inner
            .journal
            .set_denials(agent_id, principals.clone(), self.inner.clock.now())
            .await?;
        self.inner.access.set_denied(agent_id, principals);
        Ok(())
    }

    /// Loads the owner's revocations from the journal (start-up, [`Recovery::run`]).
    async fn load_access(&self) -> Result<(), sextant_journal::Error> {
        let mut by_agent: HashMap<String, Vec<String>> = HashMap::new();
        for (agent, principal) in self.inner.journal.denials().await? {
            by_agent.entry(agent).or_default().push(principal);
        }
        for (agent, list) in by_agent {
            self.inner.access.set_denied(&agent, list);
        }
        Ok(())
    }

    /// The per-principal caps in force.
    pub fn limits(&self) -> Limits {
        self.inner.limits
    }

    /// The principal keys denied access to `agent_id`, sorted.
    pub fn denied(&self, agent_id: &str) -> Vec<String> {
        self.inner.access.denied(agent_id)
    }

    /// Whether the Agent's engine may answer `input` with a Message rather than a task.
    pub fn may_reply_with_message(&self, agent_id: &str, input: &Message) -> bool {
        self.agent(agent_id).is_some_and(|a| {
            engine::make::make_engine(&a, &self.inner.env).may_reply_with_message(input)
        })
    }

    /// Admits one input (see the crate docs). On success the input is durable and its task is
    /// queued on the Session's worker.
    pub async fn admit(&self, input: Input) -> Result<Admitted, AdmitError> {
        Ok(self.accept(input).await?.admitted)
    }

    /// [`Runtime::admit`], keeping a live view of a new task's events from its first one on,
    /// for [`Runtime::wait_accepted`] and [`Runtime::accepted_events`]: the caller that waits
    /// for its own new task then reads nothing from the journal.
    pub async fn accept(&self, input: Input) -> Result<Accepted, AdmitError> {
        self.accept_with(input, false, None).await
    }

    /// [`Runtime::accept`] for a caller that next waits for the task to settle
    /// ([`Runtime::wait_accepted`]) and tells its own caller nothing before: a new task is
    /// handed back and started before its admission commits, so its first turn usually
    /// commits with it (see `Journal::admit_early`). Engines with side effects still wait for
    /// their `turn_started` to commit. If the admission is not committed after all, the wait
    /// fails and the task does not exist.
    pub async fn accept_early(&self, input: Input) -> Result<Accepted, AdmitError> {
        self.accept_with(input, true, None).await
    }

    /// [`Runtime::accept`] (or, with `early`, [`Runtime::accept_early`]) with a
    /// push-notification config that came with the message: journalled in the admission's
    /// transaction, so it covers the task from its first event (an identical retry stores
    /// nothing). The caller checked that the Agent sends push notifications.
    pub async fn accept_with_push(
        &self,
        input: Input,
        push: sextant_journal::PushConfigRow,
        early: bool,
    ) -> Result<Accepted, AdmitError> {
        self.accept_with(input, early, Some(push)).await
    }

    /// Admission in its trace span (a child of the caller's span: an inbound A2A call's, or
    /// none). The span's context is recorded with the message, so the task's turn continues
    /// this trace whenever and wherever it runs.
    async fn accept_with(
        &self,
        input: Input,
        early: bool,
        push_config: Option<sextant_journal::PushConfigRow>,
    ) -> Result<Accepted, AdmitError> {
        let span = tracing::info_span!(
            target: sextant_a2a::trace::TARGET,
            "admission",
            otel.status_code = tracing::field::Empty,
            sextant.agent_id = %input.agent_id,
            sextant.origin = input.origin.as_str(),
            sextant.task_id = tracing::field::Empty,
            sextant.context_id = tracing::field::Empty,
            sextant.session_id = tracing::field::Empty,
            sextant.admitted = tracing::field::Empty,
        );
        let accepted = self
            .accept_traced(input, early, push_config)
            .instrument(span.clone())
            .await;
        match &accepted {
            Ok(a) => {
                let task = a.admitted.task();
                span.record("sextant.task_id", task.task_id.as_str());
                span.record("sextant.context_id", task.context_id.as_str());
                span.record("sextant.session_id", task.session_id.as_str());
                span.record(
                    "sextant.admitted",
                    match &a.admitted {
                        Admitted::Created { .. } => "created",
                        Admitted::FollowUp { .. } => "follow-up",
                        Admitted::Duplicate { .. } => "duplicate",
                    },
                );
            }
            Err(_) => {
                span.record("otel.status_code", "ERROR");
            }
        }
        accepted
    }

    /// Admission's steps, in order: each refusal is checked where it was before it, and the
    /// journal's commit is the last word.
    async fn accept_traced(
        &self,
        input: Input,
        early: bool,
        push_config: Option<sextant_journal::PushConfigRow>,
    ) -> Result<Accepted, AdmitError> {
        self.check_caller(&input)?;
        let caller = input.principal.caller_key();
        let message = self.frame_and_trace(&input.principal, &input.agent_id, input.message);
        self.refuse_while_awaiting_decision(&caller, &input.agent_id, &message)
            .await?;
        let content_hash = content_hash(&message);
        let _guard = self
            .claim_new_context(&caller, &input.agent_id, &message)
            .await?;
        let agent = self.unpaused_agent(&input.agent_id)?;
        let input_key = input_key(&agent, &message);
        let (max_active_tasks, max_context_inputs) = self.caps(&input.principal);
        let admission = Admission {
            caller,
            caller_kind: input.principal.kind,
            agent_id: input.agent_id.into(),
            context_id: message.context_id.as_deref().map(ContextId::from),
            task_id: message.task_id.as_deref().map(TaskId::from),
            message,
            content_hash,
            input_key,
            origin: input.origin,
            max_active_tasks,
            max_context_inputs,
            push_config,
            at: self.inner.clock.now(),
        };
        let (admitted, live) = self.commit_admission(admission, early).await?;
        self.hand_to_worker(&admitted);
        Ok(Accepted { admitted, live })
    }

    /// Admission's first gate: Sextant is taking input, the Agent exists, and the principal
    /// may call it.
    fn check_caller(&self, input: &Input) -> Result<(), AdmitError> {
        if !self.inner.accepting.load(Ordering::SeqCst) {
            return Err(AdmitError::ShuttingDown);
        }
        if !self.inner.agents.contains_key(&input.agent_id) {
            return Err(AdmitError::UnknownAgent);
        }
        // The request's own decision, when its server made one, stands: rights are checked
        // once per request.
        if input
            .grant
            .as_ref()
            .is_some_and(|g| g.allows(&input.principal, &input.agent_id, Rights::Call))
        {
            return Ok(());
        }
        // A principal that may not call this Agent is told so precisely here; the server
        // answers it as "not found", as A2A reads of another caller's task do.
        if let Err(why) = self.authorize(&input.principal, &input.agent_id, Rights::Call) {
            tracing::debug!(agent_id = %input.agent_id, %why, "input refused");
            return Err(AdmitError::AccessDenied(why));
        }
        Ok(())
    }

    /// The message as it is journalled: framed when it is untrusted text for a model, and
    /// carrying admission's trace context.
    fn frame_and_trace(
        &self,
        principal: &Principal,
        agent_id: &str,
        mut message: Message,
    ) -> Message {
        // Text from outside the machine's own user is untrusted input. For an engine that
        // hands text to a model it is filtered and framed before it is journalled, so the
        // engine (and the transcript) sees the frame; an engine that executes its input gets
        // the exact text (a frame would become part of the command), and its card names the
        // sender instead.
        let framed = self
            .inner
            .agents
            .get(agent_id)
            .is_some_and(|a| a.engine.input_form() == sextant_core::agent::InputForm::Framed);
        if principal.is_remote() && framed {
            sextant_core::untrusted::frame_message(&mut message, principal);
        }
        // The turn that runs this input continues admission's trace (none when traces are
        // off); a value the caller put in the metadata is replaced. Not part of the content
        // hash: a retry from a traced client carries a new span id and is still the same input.
        sextant_a2a::trace::set_in_message(&mut message, sextant_a2a::trace::current().as_ref());
        message
    }

    /// A message to a task that waits for a decision is not an approval: refuse it, and
    /// leave the interaction pending.
    async fn refuse_while_awaiting_decision(
        &self,
        caller: &str,
        agent_id: &str,
        message: &Message,
    ) -> Result<(), AdmitError> {
        if let Some(task_id) = &message.task_id
            && let Some(task) = self.inner.journal.task(task_id).await?
            && task.caller == caller
            && task.agent_id == agent_id
            && sextant_core::event::is_interrupted(&task.state)
        {
            let fold = self.project(&task).await?;
            if let Some(i) = fold.pending_interaction() {
                return Err(AdmitError::AwaitingDecision {
                    interaction_id: i.interaction_id.clone(),
                });
            }
        }
        Ok(())
    }

    /// A new Session for a caller-chosen contextId: refuse a second input while the first
    /// one is still creating it, rather than racing two workers into existence. The guard
    /// holds the claim until admission ends.
    async fn claim_new_context(
        &self,
        caller: &str,
        agent_id: &str,
        message: &Message,
    ) -> Result<Option<CreatingGuard<'_>>, AdmitError> {
        let (None, Some(ctx)) = (&message.task_id, &message.context_id) else {
            return Ok(None);
        };
        let key = (caller.to_string(), agent_id.to_string(), ctx.clone());
        let exists = self
            .inner
            .journal
            .session_by_context(&key.0, &key.1, &key.2)
            .await?;
        if exists.is_some() {
            return Ok(None);
        }
        let mut set = self
            .inner
            .creating
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if !set.insert(key.clone()) {
            return Err(AdmitError::SessionBusy);
        }
        Ok(Some(CreatingGuard {
            set: &self.inner.creating,
            key,
        }))
    }

    /// The Agent, unless its owner paused it.
    fn unpaused_agent(&self, agent_id: &str) -> Result<Arc<AgentSpec>, AdmitError> {
        let agent = self.agent(agent_id).ok_or(AdmitError::UnknownAgent)?;
        if self.agent_paused(&agent.id) {
            return Err(AdmitError::AgentPaused {
                agent: agent.id.clone(),
            });
        }
        Ok(agent)
    }

    /// The per-principal caps ([`Limits`]) that bind `principal`'s admission: most active
    /// tasks, most inputs in one context. The journal's writer counts them in the admission's
    /// own transaction: a read before it would let a burst through together.
    fn caps(&self, principal: &Principal) -> (Option<u32>, Option<u32>) {
        let limits = self.limits();
        let active = match limits.max_concurrent_tasks {
            limit if principal.is_remote() && limit > 0 => Some(limit),
            _ => None,
        };
        let per_context = match limits.max_agent_turns_per_context {
            limit if principal.is_agent() && limit > 0 => Some(limit),
            _ => None,
        };
        (active, per_context)
    }

    /// The commit point: the journal admits the input (or refuses it) in one transaction.
    async fn commit_admission(
        &self,
        admission: Admission,
        early: bool,
    ) -> Result<(Admitted, Option<stream::Seeded>), AdmitError> {
        let journal = &self.inner.journal;
        let (admitted, live) = if early {
            journal.admit_early(admission).await?
        } else {
            journal.admit_watched(admission, true).await?
        };
        let admitted = admitted.map_err(AdmitError::Refused)?;
        Ok((admitted, live))
    }

    /// Queues an admitted task on its Session's worker: a new one with its input (so the
    /// worker need not read it back), a follow-up by id; a duplicate is already there.
    fn hand_to_worker(&self, admitted: &Admitted) {
        match admitted {
            Admitted::Created {
                task,
                session_created,
                event,
            } => {
                let fresh = match &event.body {
                    EventBody::TaskCreated { message } => Some(Box::new(worker::Fresh {
                        task: task.clone(),
                        input: message.clone(),
                        seq: event.seq,
                        new_session: *session_created,
                    })),
                    _ => None,
                };
                self.dispatch_item(
                    &task.session_id,
                    &task.agent_id,
                    worker::WorkItem::Task {
                        task_id: task.task_id.to_string(),
                        fresh,
                    },
                );
            }
            Admitted::FollowUp { task, .. } => {
                self.dispatch(&task.session_id, &task.agent_id, &task.task_id)
            }
            Admitted::Duplicate { .. } => {}
        }
    }

    /// Hands a task to its Session's worker, starting the worker if needed.
    fn dispatch(&self, session_id: &str, agent_id: &str, task_id: &str) {
        self.dispatch_item(
            session_id,
            agent_id,
            worker::WorkItem::Task {
                task_id: task_id.to_string(),
                fresh: None,
            },
        );
    }

    /// Hands work to a Session's worker, starting the worker if needed.
    pub(crate) fn dispatch_item(&self, session_id: &str, agent_id: &str, item: worker::WorkItem) {
        let Some(agent) = self.agent(agent_id) else {
            tracing::warn!(
                agent_id,
                session_id,
                "work for an agent that is no longer configured"
            );
            return;
        };
        let mut workers = self.inner.workers.lock().unwrap_or_else(|e| e.into_inner());
        let item = match workers.get(session_id) {
            Some(tx) => match tx.send(item) {
                Ok(()) => return,
                Err(mpsc::error::SendError(item)) => item,
            },
            None => item,
        };
        let (tx, rx) = mpsc::unbounded_channel();
        let _ = tx.send(item);
        workers.insert(session_id.to_string(), tx);
        let inner = self.inner.clone();
        let session_id = session_id.to_string();
        self.inner
            .tracker
            .spawn(worker::run(inner, session_id, agent, rx));
    }

    /// Folds a task's journal into its current view.
    pub async fn project(&self, task: &TaskRow) -> Result<TaskFold, sextant_journal::Error> {
        let events = self.inner.journal.task_events(&task.task_id, 0).await?;
        Ok(TaskFold::from_events(
            &task.task_id,
            &task.context_id,
            &task.session_id,
            &events,
        ))
    }

    /// Waits until the task reaches, after seq `after_seq`, a terminal or interrupted state or
    /// a Message answer, and returns its view then. Dropping the future (a caller that stops
    /// waiting) changes nothing for the task.
    pub async fn wait_settled(
        &self,
        task: &TaskRow,
        after_seq: i64,
    ) -> Result<TaskFold, sextant_journal::Error> {
        Ok(self.wait_settled_events(task, after_seq).await?.0)
    }

    /// [`Runtime::wait_settled`], also returning the task's events up to that point (so a
    /// caller that renders the transcript need not read the journal again).
    pub async fn wait_settled_events(
        &self,
        task: &TaskRow,
        after_seq: i64,
    ) -> Result<(TaskFold, Vec<sextant_core::JournalEvent>), sextant_journal::Error> {
        let events = stream::task_events(&self.inner.journal, task, 0, stream::StopAt::Never);
        Self::settle(task, after_seq, events).await
    }

    /// Folds `events` (the task's, from its first) until the task settles after `after_seq`.
    async fn settle(
        task: &TaskRow,
        after_seq: i64,
        events: impl futures::Stream<
            Item = Result<Arc<sextant_core::JournalEvent>, sextant_journal::Error>,
        >,
    ) -> Result<(TaskFold, Vec<sextant_core::JournalEvent>), sextant_journal::Error> {
        use futures::StreamExt;
        let mut fold = TaskFold::new(&task.task_id, &task.context_id, &task.session_id);
        let mut seen = Vec::new();
        futures::pin_mut!(events);
        while let Some(ev) = events.next().await {
            let ev = ev?;
            seen.push((*ev).clone());
            let decisive = ev.seq > after_seq
                && (ev.body.new_state().is_some() || matches!(ev.body, EventBody::Reply { .. }));
            fold.apply(&ev);
            let settled = fold.is_terminal()
                || sextant_core::event::is_interrupted(&fold.state)
                || fold.reply.is_some();
            if decisive && settled {
                break;
            }
        }
        Ok((fold, seen))
    }

    /// [`Runtime::wait_settled_events`] for an accepted input: a new task is followed from
    /// its admission's live view without reading the journal (unless the view lags).
    pub async fn wait_accepted(
        &self,
        accepted: Accepted,
    ) -> Result<(TaskFold, Vec<sextant_core::JournalEvent>), sextant_journal::Error> {
        let after = match &accepted.admitted {
            Admitted::Created { event, .. } | Admitted::FollowUp { event, .. } => event.seq,
            Admitted::Duplicate { .. } => 0,
        };
        let task = accepted.admitted.task().clone();
        match accepted.live {
            Some(live) => {
                let events = stream::task_events_seeded(
                    &self.inner.journal,
                    &task,
                    live,
                    stream::StopAt::Never,
                );
                let (fold, seen) = Self::settle(&task, after, events).await?;
                // The live view ended before the task's first event: its admission, answered
                // before the commit (`accept_early`), was not committed after all.
                if seen.is_empty() {
                    return Err(sextant_journal::Error::Conflict(format!(
                        "task {} was not recorded: the journal could not commit it",
                        task.task_id
                    )));
                }
                Ok((fold, seen))
            }
            None => self.wait_settled_events(&task, after).await,
        }
    }

    /// The events of an accepted input's task after `after_seq`, live (see
    /// [`stream::task_events`]); a new task's come from its admission's live view.
    pub fn accepted_events(
        &self,
        accepted: Accepted,
        after_seq: i64,
        stop: stream::StopAt,
    ) -> impl futures::Stream<Item = Result<Arc<sextant_core::JournalEvent>, sextant_journal::Error>>
    + Send
    + 'static {
        use futures::StreamExt;
        let task = accepted.admitted.task().clone();
        match accepted.live {
            Some(live) if after_seq == 0 => {
                stream::task_events_seeded(&self.inner.journal, &task, live, stop).boxed()
            }
            _ => stream::task_events(&self.inner.journal, &task, after_seq, stop).boxed(),
        }
    }

    /// The process groups the task's running turn has started (none when it runs no local
    /// process).
    pub fn process_groups(&self, task_id: &str) -> Vec<process::ProcessGroup> {
        self.inner
            .running
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(task_id)
            .cloned()
            .unwrap_or_default()
    }

    /// Stops what the task's running turn has started: `SIGTERM` to each of its process
    /// groups, `SIGKILL` to what is left after `grace`. The building block of cancelling a
    /// running task; the turn then ends as its command's exit makes it end.
    pub async fn stop_processes(&self, task_id: &str, grace: Duration) -> usize {
        stop_groups(&self.inner, task_id, grace).await
    }

    /// Stops accepting input, lets running turns finish for up to `drain`, then interrupts
    /// what is still running (journalling it as failed). Queued inputs stay in the journal as
    /// submitted and are delivered at the next start.
    pub async fn shutdown(&self, drain: Duration) {
        self.inner.accepting.store(false, Ordering::SeqCst);
        self.inner.stop_intake.cancel();
        self.inner.tracker.close();
        if tokio::time::timeout(drain, self.inner.tracker.wait())
            .await
            .is_err()
        {
            tracing::warn!("turns still running after the drain period; interrupting them");
            self.inner.cancel_turns.cancel();
            let _ = tokio::time::timeout(Duration::from_secs(10), self.inner.tracker.wait()).await;
        }
    }
}

/// What identifies an input's content for retry detection: its parts and where it goes.
fn content_hash(message: &Message) -> String {
    sextant_core::ids::json_hash(&serde_json::json!({
        "parts": message.parts,
        "contextId": message.context_id,
        "taskId": message.task_id,
        "role": message.role,
    }))
}

/// The key a retry of the same message is recognised by: its message id, or a unique one for
/// an Agent that does not dedupe (see `AgentSpec::dedupe_message_ids`).
fn input_key(agent: &AgentSpec, message: &Message) -> String {
    if agent.dedupe_message_ids {
        message.message_id.clone()
    } else {
        format!("{}#{}", message.message_id, sextant_core::ids::new_id())
    }
}

/// `SIGTERM` to each process group of the task's running turn, `SIGKILL` to what is left
/// after `grace`; how many groups there were.
pub(crate) async fn stop_groups(inner: &Inner, task_id: &str, grace: Duration) -> usize {
    let groups = inner
        .running
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(task_id)
        .cloned()
        .unwrap_or_default();
    let n = groups.len();
    futures::future::join_all(groups.iter().map(|g| g.stop(grace))).await;
    n
}

/// What a task interrupted by a crash says at the next start. A turn that may have acted
/// outside the journal (run a command, called a peer) is not safe to retry blindly: the
/// person is told it may have run, and to check before sending it again.
fn interrupted_reason(side_effects: bool, processes_ended: bool) -> String {
    if !side_effects {
        return "Sextant stopped while this turn was running; output so far is kept. Send the \
                message again to retry."
            .into();
    }
    let ended = if processes_ended {
        " Processes it left running were ended at this start."
    } else {
        ""
    };
    format!(
        "Sextant stopped while this turn was running, so its command may have run, in whole or \
         in part, before it stopped.{ended} Output so far is kept. Check what it did before \
         sending the message again: a retry runs it again."
    )
}

#[cfg(test)]
mod tests;
