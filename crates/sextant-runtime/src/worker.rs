//! The Session worker: one per live Session, the only code that talks to its engine.
//!
//! Each turn runs in a `turn` trace span, the engine's part of it in an `engine` span
//! ([`turn_span`]; README "Traces").

use std::collections::VecDeque;
use std::sync::Arc;

use sextant_core::a2a::{Message, Part, Role, TaskState};
use sextant_core::ids::new_id;
use sextant_core::projection::TaskFold;
use sextant_core::{AgentSpec, Answer, EventBody, Interaction, JournalEvent};
use sextant_journal::{NewEvent, TaskRow};
use tokio::sync::mpsc;
use tracing::Instrument;

use crate::Inner;
use crate::engine::make::make_engine;
use crate::engine::{Engine, Outcome, ScheduledRun, StopHow, Turn, TurnSink, withdrawal};

/// How many earlier messages a turn carries for stateless engines.
const HISTORY_MAX: usize = 50;

/// What a worker is asked to do.
#[derive(Debug, Clone)]
pub(crate) enum WorkItem {
    /// Run a turn for the task's undelivered inputs.
    Task {
        task_id: String,
        /// The task as admission created it, when the worker may start from that instead of
        /// reading the journal.
        fresh: Option<Box<Fresh>>,
    },
    /// Continue a task whose interaction was answered while no engine was waiting for it
    /// (Sextant restarted in between).
    Resume {
        task_id: String,
        interaction: Box<Interaction>,
        answer: Box<Answer>,
    },
    /// Go on with a turn a restart interrupted while it followed remote work (the engine's
    /// note, see [`crate::engine::Engine::follow`]).
    Follow {
        task_id: String,
        note: Box<serde_json::Value>,
    },
}

/// How a turn continues an earlier one.
enum Continue {
    Resume(Box<(Interaction, Answer)>),
    Follow(serde_json::Value),
}

/// The remote work a task's current turn recorded that it follows (the engine's note), if any.
pub(crate) fn follow_note(events: &[JournalEvent]) -> Option<serde_json::Value> {
    let start = events
        .iter()
        .rposition(|e| matches!(e.body, EventBody::TurnStarted { .. }))?;
    events[start..].iter().rev().find_map(|e| match &e.body {
        EventBody::TaskState {
            message: Some(m), ..
        } => m.metadata.as_ref()?.get(crate::engine::FOLLOW_KEY).cloned(),
        _ => None,
    })
}

impl WorkItem {
    pub(crate) fn task_id(&self) -> &str {
        match self {
            WorkItem::Task { task_id, .. }
            | WorkItem::Resume { task_id, .. }
            | WorkItem::Follow { task_id, .. } => task_id,
        }
    }
}

/// A task just created by admission: everything its first turn needs, with no journal read.
#[derive(Debug, Clone)]
pub(crate) struct Fresh {
    pub(crate) task: TaskRow,
    /// Its first input, and that input's seq.
    pub(crate) input: Message,
    pub(crate) seq: i64,
    /// The task opened its Session: no history and no grants before it.
    pub(crate) new_session: bool,
}

/// The seq up to which a `turn_started` event delivered the task's inputs.
fn delivered_through(ev: &JournalEvent) -> Option<i64> {
    match &ev.body {
        EventBody::TurnStarted { through, .. } => Some(through.unwrap_or(ev.seq)),
        _ => None,
    }
}

/// The inputs of a task that no turn has seen yet, with the seq of the last one.
pub(crate) fn undelivered_inputs(events: &[JournalEvent]) -> (Vec<Message>, i64) {
    let delivered = events
        .iter()
        .filter_map(delivered_through)
        .max()
        .unwrap_or(0);
    let mut last = delivered;
    let inputs = events
        .iter()
        .filter(|e| e.seq > delivered)
        .filter_map(|e| match &e.body {
            EventBody::TaskCreated { message } | EventBody::InputAccepted { message } => {
                last = e.seq;
                Some(message.clone())
            }
            _ => None,
        })
        .collect();
    (inputs, last)
}

/// All inputs of a task, oldest first.
fn all_inputs(events: &[JournalEvent]) -> Vec<Message> {
    events
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::TaskCreated { message } | EventBody::InputAccepted { message } => {
                Some(message.clone())
            }
            _ => None,
        })
        .collect()
}

/// An agent message with some text, for the task's status.
pub(crate) fn agent_text(task: &TaskRow, text: &str) -> Message {
    let mut m = Message::new(Role::Agent, vec![Part::text(text)]);
    m.message_id = new_id();
    m.context_id = Some(task.context_id.to_string());
    m.task_id = Some(task.task_id.to_string());
    m
}

/// The worker loop.
pub(crate) async fn run(
    inner: Arc<Inner>,
    session_id: String,
    agent: Arc<AgentSpec>,
    mut rx: mpsc::UnboundedReceiver<WorkItem>,
) {
    let mut engine = make_engine(&agent, &inner.env);
    let idle = if engine.keeps_state() {
        inner.idle_worker
    } else {
        std::time::Duration::ZERO
    };
    let mut queue: VecDeque<WorkItem> = VecDeque::new();
    loop {
        if queue.is_empty() {
            let next = tokio::select! {
                biased;
                _ = inner.stop_intake.cancelled() => None,
                t = rx.recv() => t,
                _ = tokio::time::sleep(idle) => {
                    // Leave only if nothing arrived meanwhile; dispatch sends under this lock.
                    let mut workers = inner.workers.lock().unwrap_or_else(|e| e.into_inner());
                    match rx.try_recv() {
                        Ok(t) => Some(t),
                        Err(_) => {
                            workers.remove(&session_id);
                            return;
                        }
                    }
                }
            };
            match next {
                Some(t) => queue.push_back(t),
                None => break,
            }
        }
        // Take everything already queued; a task queued twice runs once.
        while let Ok(t) = rx.try_recv() {
            queue.push_back(t);
        }
        let Some(mut item) = queue.pop_front() else {
            continue;
        };
        if let WorkItem::Task { task_id, fresh } = &mut item {
            let before = queue.len();
            queue.retain(
                |t| !matches!(t, WorkItem::Task { task_id: other, .. } if other == task_id),
            );
            // More work queued for the same task: its inputs are in the journal, not in the
            // admission that created it.
            if queue.len() != before {
                *fresh = None;
            }
        }
        if let Err(e) = turn(&inner, &agent, engine.as_mut(), item).await {
            tracing::error!(session_id, error = %e, "turn could not be journalled");
        }
        if inner.stop_intake.is_cancelled() {
            break;
        }
    }
    inner
        .workers
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&session_id);
}

/// Runs one turn: for a task's undelivered inputs, or to continue after an answer.
async fn turn(
    inner: &Inner,
    agent: &Arc<AgentSpec>,
    engine: &mut dyn Engine,
    item: WorkItem,
) -> Result<(), sextant_journal::Error> {
    let journal = &inner.journal;
    let task_id = item.task_id().to_string();
    // A paused Agent's queued tasks wait (resuming it hands them over again); a turn that has
    // started (an answer to resume, remote work to follow) goes on.
    if matches!(item, WorkItem::Task { .. })
        && inner
            .paused_agents
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&agent.id)
    {
        return Ok(());
    }
    // A task admission just created needs no reads: its only input is the one it was created
    // with, and a new Session has no history and no grants.
    let (task, inputs, through, new_session, resume) = match item {
        WorkItem::Task {
            fresh: Some(fresh), ..
        } => {
            let Fresh {
                task,
                input,
                seq,
                new_session,
            } = *fresh;
            (task, vec![input], seq, new_session, None)
        }
        item => {
            let Some(task) = journal.task(&task_id).await? else {
                return Ok(());
            };
            if task.state.is_terminal() {
                return Ok(());
            }
            let events = journal.task_events(&task_id, 0).await?;
            let fold =
                TaskFold::from_events(&task.task_id, &task.context_id, &task.session_id, &events);
            let resume = match item {
                WorkItem::Resume {
                    interaction,
                    answer,
                    ..
                } => Some(Continue::Resume(Box::new((*interaction, *answer)))),
                WorkItem::Follow { note, .. } => Some(Continue::Follow(*note)),
                WorkItem::Task { .. } => {
                    // Inputs that arrive while a decision is pending wait for it: a message is
                    // never an answer.
                    if let Some(pending) = fold.pending_interaction() {
                        // The engine that asked registered its wait before the question was
                        // journalled, so no waiter means it is gone: Sextant restarted.
                        if !inner.waiters.is_waiting(&pending.interaction_id)
                            && let Some(why) = engine.cannot_resume()
                        {
                            close_orphaned(inner, &task, pending, why).await?;
                        }
                        return Ok(());
                    }
                    None
                }
            };
            let (inputs, through) = match &resume {
                Some(_) => (all_inputs(&events), 0),
                None => undelivered_inputs(&events),
            };
            (task, inputs, through, false, resume)
        }
    };
    if inputs.is_empty() {
        return Ok(());
    }
    let span = turn_span(agent, &task, &inputs, resume.as_ref());
    let prepared = Prepared {
        task,
        inputs,
        through,
        new_session,
        resume,
    };
    run_prepared(inner, agent, engine, prepared)
        .instrument(span)
        .await
}

/// A turn's task and inputs, as [`turn`] found them.
struct Prepared {
    task: TaskRow,
    inputs: Vec<Message>,
    through: i64,
    new_session: bool,
    resume: Option<Continue>,
}

/// Runs a prepared turn (in its `turn` span).
async fn run_prepared(
    inner: &Inner,
    agent: &Arc<AgentSpec>,
    engine: &mut dyn Engine,
    prepared: Prepared,
) -> Result<(), sextant_journal::Error> {
    let Prepared {
        task,
        inputs,
        through,
        new_session,
        resume,
    } = prepared;
    let journal = &inner.journal;
    let task_id = task.task_id.clone();
    let history = if engine.wants_history() && !new_session {
        history(inner, &task).await?
    } else {
        Vec::new()
    };
    let grants = if engine.uses_interactions() && !new_session {
        grants(inner, &task).await?
    } else {
        Vec::new()
    };
    // A schedule's Run: the grants given for every Run of that schedule, and the card may
    // offer one.
    let schedule = if engine.uses_interactions() && task.message_id.starts_with("run-") {
        journal
            .run_scope(task.clone())
            .await?
            .filter(|s| s.current)
            .map(|s| ScheduledRun {
                schedule_id: s.schedule_id.into(),
                schedule_name: s.schedule_name,
                grants: s.grants,
            })
    } else {
        None
    };
    // Registered before the turn's start is journalled: a cancel committed after that start
    // finds the token; one committed before it makes the start refused (the task has ended).
    let stop = tokio_util::sync::CancellationToken::new();
    let _registered = Registered::new(inner, &task_id, stop.clone());
    let turn = Turn {
        session_id: task.session_id.to_string(),
        context_id: task.context_id.to_string(),
        task_id: task_id.to_string(),
        agent: agent.clone(),
        inputs,
        history,
        grants,
        schedule,
        cancel: inner.cancel_turns.child_token(),
        stop: stop.clone(),
        from: task.caller.remote_label(),
    };
    let sink = TurnSink::new(
        journal.clone(),
        inner.clock.clone(),
        inner.waiters.clone(),
        &turn,
        inner.stop_intake.child_token(),
        inner.running.clone(),
    );
    if resume.is_none() {
        let start = vec![EventBody::TurnStarted {
            through: Some(through),
            working: true,
        }];
        if engine.has_side_effects() {
            let at = inner.clock.now();
            let start = start
                .into_iter()
                .map(|body| NewEvent {
                    task_id: Some(task_id.to_string()),
                    body,
                    at,
                })
                .collect();
            match journal.append(&task.session_id, start).await {
                Ok(_) => {}
                // Canceled while it was queued: it never runs.
                Err(sextant_journal::Error::Conflict(_)) if ended(inner, &task_id).await => {
                    return Ok(());
                }
                Err(e) => return Err(e),
            }
        } else {
            sink.put_all(start).await?;
        }
    }
    let how = engine.stop_how();
    let engine_span = tracing::info_span!(
        target: sextant_a2a::trace::TARGET,
        "engine",
        sextant.engine = agent.engine.kind(),
        sextant.agent_id = %agent.id,
        sextant.task_id = %task_id,
    );
    let run = async {
        match resume {
            Some(Continue::Resume(resumed)) => {
                let (interaction, answer) = *resumed;
                engine.resume(turn, interaction, answer, &sink).await
            }
            Some(Continue::Follow(note)) => match engine.follow(turn, note, &sink) {
                Some(followed) => followed.await,
                None => Outcome::Failed(crate::interrupted_reason(true, false)),
            },
            None => engine.run_turn(turn, &sink).await,
        }
    }
    .instrument(engine_span);
    tokio::pin!(run);
    let mut run = crate::engine::SendWhenWaiting::new(run, &sink);
    let outcome = tokio::select! {
        o = &mut run => Some(o),
        _ = stop.cancelled() => None,
    };
    let outcome = match (outcome, how) {
        (Some(o), _) => Some(o),
        // The task is canceled (already journalled): stop the turn as its engine needs.
        (None, StopHow::Drop) => None,
        (None, StopHow::Processes) => {
            let stopping = crate::stop_groups(inner, &task_id, inner.cancel_grace);
            Some(tokio::join!(run, stopping).0)
        }
        (None, StopHow::Engine) => Some(run.await),
    };
    // A canceled turn's own end is not recorded: the journal already says how it ended.
    let Some(outcome) = outcome.filter(|_| !stop.is_cancelled()) else {
        let _ = sink.flush().await;
        return Ok(());
    };
    let with_text = |t: Option<String>| t.map(|t| agent_text(&task, &t));
    tracing::Span::current().record("sextant.outcome", outcome.name());
    let (state, message) = match outcome {
        // The turn stopped while a decision was pending (shutdown): the task keeps waiting,
        // and the answer will resume it.
        Outcome::Suspended => {
            sink.close_text().await?;
            return sink.flush().await;
        }
        Outcome::Completed(t) => (TaskState::Completed, with_text(t)),
        Outcome::Replied => (TaskState::Completed, None),
        Outcome::Failed(why) => (TaskState::Failed, Some(agent_text(&task, &why))),
        Outcome::Rejected(t) => (TaskState::Rejected, with_text(t)),
        Outcome::InputRequired(t) => (TaskState::InputRequired, with_text(t)),
    };
    match sink.finish(state, message).await {
        // Canceled just as the turn ended: the cancel's state stands.
        Err(sextant_journal::Error::Conflict(_)) if ended(inner, &task_id).await => Ok(()),
        r => r,
    }
}

/// The trace span of one turn. Its parent is the trace context admission recorded with the
/// turn's first input that has one (in the journal, so this holds after a queue wait and
/// after a restart alike); the other inputs' contexts become links. Without any (traces were
/// off when they were admitted, or they came from elsewhere) the turn starts a trace.
/// Attributes are ids, the engine kind and how the turn continues; never input text.
fn turn_span(
    agent: &AgentSpec,
    task: &TaskRow,
    inputs: &[Message],
    resume: Option<&Continue>,
) -> tracing::Span {
    let span = tracing::info_span!(
        target: sextant_a2a::trace::TARGET,
        "turn",
        sextant.agent_id = %agent.id,
        sextant.engine = agent.engine.kind(),
        sextant.task_id = %task.task_id,
        sextant.context_id = %task.context_id,
        sextant.session_id = %task.session_id,
        sextant.inputs = inputs.len(),
        sextant.continues = match resume {
            Some(Continue::Resume(_)) => "answer",
            Some(Continue::Follow(_)) => "follow",
            None => "inputs",
        },
        sextant.outcome = tracing::field::Empty,
    );
    let mut traces = inputs.iter().filter_map(sextant_a2a::trace::in_message);
    if let Some(first) = traces.next() {
        sextant_a2a::trace::set_parent(&span, &first);
        let mut linked = vec![first];
        for t in traces {
            if !linked.contains(&t) {
                sextant_a2a::trace::add_link(&span, &t);
                linked.push(t);
            }
        }
    }
    span
}

/// Whether the task has ended (a cancel got in first).
async fn ended(inner: &Inner, task_id: &str) -> bool {
    matches!(inner.journal.task(task_id).await, Ok(Some(t)) if t.state.is_terminal())
}

/// A running turn's entry in [`Inner::turns`], removed when the turn ends however it ends.
struct Registered<'a> {
    inner: &'a Inner,
    task_id: String,
}

impl<'a> Registered<'a> {
    fn new(inner: &'a Inner, task_id: &str, stop: tokio_util::sync::CancellationToken) -> Self {
        inner
            .turns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(task_id.to_string(), stop);
        Self {
            inner,
            task_id: task_id.to_string(),
        }
    }
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        self.inner
            .turns
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.task_id);
    }
}

/// Closes a decision whose engine is gone and cannot continue from an answer
/// ([`Engine::cannot_resume`]): the card leaves the pending list, withdrawn with its default
/// option, and the task fails with the reason, in one append. A person's answer recorded first
/// wins (the one-answer rule refuses this append); its resume then fails with the same reason.
async fn close_orphaned(
    inner: &Inner,
    task: &TaskRow,
    pending: &Interaction,
    why: String,
) -> Result<(), sextant_journal::Error> {
    let at = inner.clock.now();
    let failed = EventBody::TaskState {
        state: TaskState::Failed,
        message: Some(agent_text(task, &why)),
    };
    let answer = withdrawal(&pending.interaction_id, pending.default_option.clone(), why);
    let events = [EventBody::InteractionAnswered { answer }, failed]
        .into_iter()
        .map(|body| NewEvent {
            task_id: Some(task.task_id.to_string()),
            body,
            at,
        })
        .collect();
    match inner.journal.append(&task.session_id, events).await {
        Ok(_) | Err(sextant_journal::Error::Conflict(_)) => Ok(()),
        Err(e) => Err(e),
    }
}

/// What `acceptForSession` answers granted in this Session (their interactions' grant keys).
async fn grants(inner: &Inner, task: &TaskRow) -> Result<Vec<String>, sextant_journal::Error> {
    let events = inner
        .journal
        .session_events(&task.session_id, 0, 100_000)
        .await?;
    let mut raised: std::collections::HashMap<String, Option<String>> = Default::default();
    let mut out = Vec::new();
    for ev in &events {
        match &ev.body {
            EventBody::InteractionRaised { interaction } => {
                raised.insert(
                    interaction.interaction_id.clone(),
                    interaction.grant_key.clone(),
                );
            }
            EventBody::InteractionAnswered { answer } if answer.option == "acceptForSession" => {
                if let Some(Some(key)) = raised.get(&answer.interaction_id) {
                    out.push(key.clone());
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

/// Earlier user and agent messages of the Session (before this task), oldest first: the
/// callers' inputs as `Role::User`, the Agent's replies as `Role::Agent`.
async fn history(inner: &Inner, task: &TaskRow) -> Result<Vec<Message>, sextant_journal::Error> {
    let events = inner
        .journal
        .session_events(&task.session_id, 0, 10_000)
        .await?;
    let mut out: Vec<Message> = Vec::new();
    let mut answer: Option<(String, String)> = None; // (task, text) of the agent's reply in progress
    let flush = |out: &mut Vec<Message>, answer: &mut Option<(String, String)>| {
        if let Some((_, text)) = answer.take()
            && !text.trim().is_empty()
        {
            out.push(Message::new(Role::Agent, vec![Part::text(text)]));
        }
    };
    for ev in events
        .iter()
        .filter(|e| e.task_id.as_deref() != Some(task.task_id.as_str()))
    {
        match &ev.body {
            EventBody::TaskCreated { message } | EventBody::InputAccepted { message } => {
                flush(&mut out, &mut answer);
                // The caller's input is the user side of the conversation whatever role it
                // was sent with (the journal keeps that): engines label history by role, and a
                // caller's ROLE_AGENT message must not reach the Agent as its own words.
                let mut m = message.clone();
                m.role = Role::User;
                out.push(m);
            }
            EventBody::Artifact { artifact, .. } => {
                let text: String = artifact.parts.iter().filter_map(|p| p.as_text()).collect();
                let t = ev.task_id.clone().unwrap_or_default();
                match &mut answer {
                    Some((id, acc)) if *id == t => acc.push_str(&text),
                    _ => {
                        flush(&mut out, &mut answer);
                        answer = Some((t, text));
                    }
                }
            }
            EventBody::TaskState {
                message: Some(m), ..
            }
            | EventBody::Reply { message: m } => {
                flush(&mut out, &mut answer);
                out.push(m.clone());
            }
            EventBody::TaskState { .. }
            | EventBody::TurnStarted { .. }
            | EventBody::InteractionRaised { .. }
            | EventBody::InteractionAnswered { .. } => {}
        }
    }
    flush(&mut out, &mut answer);
    if out.len() > HISTORY_MAX {
        out.drain(..out.len() - HISTORY_MAX);
    }
    Ok(out)
}
