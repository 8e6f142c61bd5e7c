//! Sextant's domain: the nouns every other crate shares, and the pure logic that needs no I/O.
//!
//! - [`principal`]: who is calling. Identity is resolved from credentials by the server and
//!   travels as a [`Principal`] value; nothing here reads request content.
//! - [`access`]: Agent access lists (who may call, who may only read) and their patterns.
//! - [`untrusted`]: the filter and frame put around text from remote callers before an engine
//!   sees it; [`redact`] scrubs credentials from what goes back out.
//! - [`clock`]: wall time behind a trait so schedules and expiries can be tested with a manual clock.
//! - [`agent`]: a managed Agent and its engine configuration (as declared in `agents.toml`).
//! - [`event`]: the body of a Session journal event. The journal stores these; every Task view is
//!   computed from them.
//! - [`action`]: the exact action an approval is about, its digest, and its escaped view.
//! - [`interaction`]: decisions engines stop for (declared options, expiry, default) and the
//!   rule that decides whether an answer is acceptable.
//! - [`parts`]: the media types an Agent takes besides text, the caps on parts, the check
//!   every binding runs before it admits a message, and [`parts::artifact`] (parts as an artifact).
//! - [`schedule`]: the names personal schedules and their Runs are stored and shown with.
//! - [`session`]: the labels stored beside Sessions and tasks (what started a Session, how a
//!   task ended).
//! - [`projection`]: the fold from journal events to an A2A `Task` and to public transcript blocks.
//!   Because it is pure it can be run at any time over the journal, which is what makes the cached
//!   task state in SQLite rebuildable.
//! - [`text`]: cutting text to a length in characters or bytes without splitting a character.
//! - [`ids`]: the id types ([`ids::TaskId`], [`ids::SessionId`], …), minting ids, and the one
//!   text format times are stored and sent in.
//!
//! Not here: SQL (sextant-journal), HTTP (sextant-server), processes (sextant-runtime).

pub mod access;
pub mod action;
pub mod agent;
pub mod clock;
pub mod event;
pub mod ids;
pub mod interaction;
pub mod parts;
pub mod principal;
pub mod projection;
pub mod redact;
pub mod schedule;
pub mod session;
pub mod text;
pub mod untrusted;

pub use a2a;
pub use access::{AccessList, Rights};
pub use action::ApprovedAction;
pub use agent::{AgentSpec, EngineSpec};
pub use clock::{Clock, ManualClock, SystemClock};
pub use event::{EventBody, JournalEvent};
pub use interaction::{Answer, Interaction, InteractionKind, InteractionOption};
pub use principal::{CallerKey, Principal, PrincipalKind};
pub use schedule::{
    MissedRunPolicy, OverlapPolicy, RunOutcome, RunRecord, RunTrigger, ScheduleSource,
};
pub use session::{Origin, TaskOutcome};
