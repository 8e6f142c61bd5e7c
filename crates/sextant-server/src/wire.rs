//! Typed shapes of the console API's JSON bodies and stream events (`/api/v1`), shared with the
//! web UI: each derives `ts_rs::TS`, and `cargo test` exports it to `ui/src/bindings/` (see
//! `.cargo/config.toml`), where scripts/test.sh checks the generated files for drift.
//!
//! Handlers build these structs and serialize them, so the TypeScript the UI compiles against is
//! the JSON the server sends. Keys are camelCase like the A2A wire, except the schedules API
//! (snake_case, `sextant_scheduler::view`), whose views are exported from that crate.
//!
//! Not here: the A2A JSON-RPC wire (`sextant-a2a`), the schedules API's views, and the peers
//! API's (`sextant_peers`, whose views are exported from that crate, and the discover
//! summary, `sextant_peers::client::card::CardSummary`).

use serde::Serialize;
use serde_json::Value;
use sextant_core::a2a::TaskState;
use sextant_core::ids::format_time;
use sextant_core::interaction::Interaction;
use sextant_core::projection::Block;
use sextant_core::schedule::RunTrigger;
use sextant_core::{Origin, PrincipalKind, TaskOutcome};
use sextant_journal::queries::search::TaskDigest;
use sextant_journal::{SessionRow, TaskRow};
use sextant_scheduler::view::NextRun;
use ts_rs::TS;

/// An Agent, as `GET /api/v1/agents` lists it.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct AgentSummary {
    pub agent_id: String,
    pub name: String,
    pub description: String,
    /// The engine kind (`shell`, `echo`, `exec`, `codex`, …).
    pub engine: String,
    /// Whether it is the Agent at `/.well-known/agent-card.json`.
    pub default: bool,
    pub card_url: String,
    /// Its public A2A card.
    pub card: Value,
    /// The owner paused it: new messages are refused, queued tasks wait.
    pub paused: bool,
}

/// `GET /api/v1/agents`.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct AgentList {
    pub agents: Vec<AgentSummary>,
}

/// One Session (a conversation with one Agent, owned by its caller).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct SessionSummary {
    pub session_id: String,
    pub agent_id: String,
    /// The caller's principal key (`person:sextant:owner`, `anonymous-local:loopback:anonymous`).
    pub caller: String,
    pub caller_kind: PrincipalKind,
    pub context_id: String,
    /// What started it: `a2a`, `schedule` or `outbound`.
    pub origin: Origin,
    pub created_at: String,
    pub updated_at: String,
    /// The journal seq of its latest event (`Last-Event-ID` to resume its stream after it).
    pub last_seq: i64,
    /// The console page of the Session (`{base}/sessions/{id}`).
    pub url: String,
}

impl SessionSummary {
    /// The summary of `s`, with links under `base`.
    pub fn new(s: &SessionRow, base: &str) -> Self {
        Self {
            session_id: s.session_id.to_string(),
            agent_id: s.agent_id.to_string(),
            caller: s.caller.to_string(),
            caller_kind: s.caller_kind,
            context_id: s.context_id.to_string(),
            origin: s.origin,
            created_at: format_time(s.created_at),
            updated_at: format_time(s.updated_at),
            last_seq: s.last_seq,
            url: format!("{base}/sessions/{}", s.session_id),
        }
    }
}

/// One task (one logical input of a Session) and its current state.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct TaskSummary {
    pub task_id: String,
    pub session_id: String,
    pub agent_id: String,
    /// The caller's principal key.
    pub caller: String,
    pub context_id: String,
    pub message_id: String,
    pub created_at: String,
    /// `TASK_STATE_SUBMITTED`, `TASK_STATE_WORKING`, … (the A2A 1.0 names).
    #[ts(as = "sextant_core::event::TaskStateName")]
    pub state: TaskState,
    /// When it entered that state.
    pub state_at: String,
    /// The journal seq of its latest event.
    pub last_seq: i64,
    /// What happened, once it ended: `completed`, `failed`, `canceled`, `rejected`, `declined`
    /// (a person said no) or `expired` (nobody answered; the default applied). `null` while
    /// it runs. The A2A state alone cannot say it: a declined shell command completes.
    pub outcome: Option<TaskOutcome>,
    /// What the task is, in the task list and on the task page (`null` elsewhere): the first
    /// line of its input.
    pub title: Option<String>,
    /// A line of its result, or of its error or status message when it did not end well.
    pub result: Option<String>,
    /// What started its Session (`a2a`, `schedule`, …) and its caller's kind (`person`,
    /// `peer`, `assistant`, …); `null` outside the task list and the task page, and when the
    /// Session is gone or holds a value this Sextant cannot read.
    pub origin: Option<Origin>,
    pub caller_kind: Option<PrincipalKind>,
    /// The schedule whose Run started it, if one did.
    pub schedule_id: Option<String>,
    pub schedule_name: Option<String>,
    /// For a text search: a few words around the match, the match between U+0002 and U+0003.
    pub matched: Option<String>,
}

impl TaskSummary {
    /// The summary with what the task is.
    pub fn with_digest(t: &TaskRow, d: TaskDigest, matched: Option<String>) -> Self {
        Self {
            title: d.title,
            result: d.result,
            origin: d.origin,
            caller_kind: d.caller_kind,
            schedule_id: d.schedule_id.map(String::from),
            schedule_name: d.schedule_name,
            matched,
            ..Self::from(t)
        }
    }
}

impl From<&TaskRow> for TaskSummary {
    fn from(t: &TaskRow) -> Self {
        Self {
            task_id: t.task_id.to_string(),
            session_id: t.session_id.to_string(),
            agent_id: t.agent_id.to_string(),
            caller: t.caller.to_string(),
            context_id: t.context_id.to_string(),
            message_id: t.message_id.clone(),
            created_at: format_time(t.created_at),
            state: t.state.clone(),
            state_at: format_time(t.state_at),
            last_seq: t.last_seq,
            outcome: t.outcome,
            title: None,
            result: None,
            origin: None,
            caller_kind: None,
            schedule_id: None,
            schedule_name: None,
            matched: None,
        }
    }
}

/// `GET /api/v1/sessions`.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct SessionsPage {
    pub sessions: Vec<SessionSummary>,
    pub total: u64,
    /// Pass as `cursor` for the next page; `null` on the last one.
    pub next_cursor: Option<String>,
}

/// `GET /api/v1/tasks`.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct TasksPage {
    pub tasks: Vec<TaskSummary>,
    pub total: u64,
    /// Pass as `cursor` for the next page; `null` on the last one.
    pub next_cursor: Option<String>,
}

/// The schedule Run that created a Session.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct RunLink {
    pub run_id: String,
    pub schedule_id: String,
    /// `cron`, `catchup`, `backfill`, `manual` or `replay`.
    pub trigger: RunTrigger,
    /// The Run in the schedules API.
    pub url: String,
}

/// `GET /api/v1/sessions/{id}`: a Session with its tasks and public transcript.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct SessionDetail {
    pub session: SessionSummary,
    pub tasks: Vec<TaskSummary>,
    /// Every block so far, in seq order (blocks of one journal event share its seq).
    pub transcript: Vec<Block>,
    /// The schedule Run that created it, if one did.
    pub run: Option<RunLink>,
}

/// One pending interaction in the approvals inbox: the interaction as the engine declared it,
/// plus where it comes from.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct PendingInteraction {
    #[serde(flatten)]
    pub interaction: Interaction,
    pub agent_id: String,
    pub agent_name: Option<String>,
    /// The caller's principal key (who started the task).
    pub caller: String,
    /// The caller's kind (`person`, `peer`, `assistant`, …); `null` when the Session is gone
    /// or holds a kind this Sextant cannot read.
    pub caller_kind: Option<PrincipalKind>,
    /// What started the Session (`a2a`, `schedule`, …; `null` as for `caller_kind`), and the
    /// schedule whose Run did, if one did.
    pub origin: Option<Origin>,
    pub schedule_id: Option<String>,
    pub schedule_name: Option<String>,
    /// The Session's first message (what the person or agent asked for), shortened.
    pub first_message: Option<String>,
    pub context_id: String,
    pub session_id: String,
    /// The console page of the Session.
    pub session_url: String,
    /// The waiting task's state (`TASK_STATE_AUTH_REQUIRED` or `TASK_STATE_INPUT_REQUIRED`).
    #[ts(as = "sextant_core::event::TaskStateName")]
    pub task_state: TaskState,
    pub raised_at: String,
    /// Where the answer goes (`POST`).
    pub answer_url: String,
}

/// `GET /api/v1/interactions`: pending, newest first.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct InteractionList {
    pub interactions: Vec<PendingInteraction>,
}

/// The task as it is right after an answer was journalled.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct AnsweredTask {
    pub task_id: String,
    pub session_id: String,
    pub agent_id: String,
    pub context_id: String,
    #[ts(as = "sextant_core::event::TaskStateName")]
    pub state: TaskState,
    pub state_at: String,
}

/// One result of `POST /api/v1/interactions/answer` (answers sent together, each journalled
/// as its own answer).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct BulkAnswerResult {
    pub interaction_id: String,
    /// The HTTP status this answer alone would have had (200, 404, 409, 422, …).
    pub status: u16,
    /// The task after the answer, when it was taken.
    pub task: Option<AnsweredTask>,
    /// Why it was not, in the REST error's words.
    pub error: Option<BulkAnswerError>,
}

/// Why one answer of a bulk answer was not taken.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct BulkAnswerError {
    pub code: String,
    pub message: String,
}

/// `POST /api/v1/interactions/answer`.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct BulkAnswerReply {
    pub results: Vec<BulkAnswerResult>,
}

/// `POST /api/v1/interactions/{id}/answer`.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct AnswerReply {
    pub interaction_id: String,
    pub task: AnsweredTask,
}

/// `event: task` of `GET /api/v1/tasks/events`: a task changed state.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct TaskChange {
    pub task_id: String,
    pub session_id: String,
    pub agent_id: String,
    pub caller: String,
    pub context_id: String,
    /// The new state (A2A 1.0 name).
    #[ts(as = "sextant_core::event::TaskStateName")]
    pub state: TaskState,
    /// What happened, when the change ended the task (see [`TaskSummary::outcome`]).
    pub outcome: Option<TaskOutcome>,
    /// The schedule whose Run started the task's Session, if one did, and its name.
    pub schedule_id: Option<String>,
    pub schedule_name: Option<String>,
    /// The first line of its input, on the change that created it (`TASK_STATE_SUBMITTED`).
    pub title: Option<String>,
    /// A line of its result or error, on the change that ended it.
    pub result: Option<String>,
    pub at: String,
    /// The journal seq of the change (per Session).
    pub seq: i64,
}

/// `GET /api/v1/tasks/counts`: every caller's unfinished tasks, counted by the server (a
/// page of the list would under-count).
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct TaskCounts {
    /// Not ended: the sum of the four below.
    pub unfinished: u64,
    pub submitted: u64,
    pub working: u64,
    /// Waiting for a person: input or an approval.
    pub waiting: u64,
    pub input_required: u64,
    pub auth_required: u64,
}

/// `event: interaction` of `GET /api/v1/tasks/events`: raised or answered.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct InteractionChange {
    #[serde(flatten)]
    pub change: InteractionChangeKind,
    pub interaction_id: String,
    pub task_id: Option<String>,
    pub session_id: String,
    pub seq: i64,
}

/// What happened to the interaction.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(tag = "type", rename_all = "snake_case")]
#[ts(export)]
pub enum InteractionChangeKind {
    /// A new decision is waiting; `detail` is the public interaction.
    Raised { detail: Box<Interaction> },
    /// It was answered (by a person, or by expiry applying the default).
    Answered { detail: AnswerDetail },
}

/// Who answered what.
#[derive(Debug, Clone, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct AnswerDetail {
    pub option: String,
    pub answered_by: String,
    pub expired: bool,
}

/// `POST /api/v1/me/schedules/preview`: what a timing means in a zone, before saving.
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct SchedulePreview {
    /// The cron expression previewed (`null` for a one-shot time).
    pub cron: Option<String>,
    /// The one-shot local time previewed.
    pub once_at: Option<String>,
    /// When plain words (`when`) were previewed: what they were read as.
    pub understood: Option<sextant_scheduler::words::Understood>,
    pub timezone: String,
    /// The expression in plain words (the same words a saved schedule shows).
    pub description: String,
    /// The next fire times after now.
    pub next_runs: Vec<NextRun>,
}

/// `POST /api/v1/session/bootstrap`: the console page's session was set up (as a cookie).
#[derive(Debug, Clone, Serialize, TS)]
#[ts(export)]
pub struct ConsoleSession {
    /// Who the page acts as (`you`).
    pub principal: String,
}
