//! `task_text`: the full-text index (SQLite FTS5) of what each task said and was told: its
//! inputs, its outputs and status messages, the decisions it stopped for and the reasons given
//! with their answers. One row per journal event that carries text, with the event's task.
//!
//! The writer queues an event's text in `task_text_pending` in the transaction that appends
//! the event ([`queue`]) and moves what has gathered into the index in one transaction
//! ([`flush`]): FTS5 writes a new index segment for every transaction that inserts into it,
//! which cost a lone request's commit five to nine pages. A search first has the writer flush
//! (`Journal::flush_search`), so it sees every committed event's text; `Journal::open` flushes
//! what a crash left queued. [`rebuild`] drops and rebuilds the index from the events (the
//! migration that created it asks for a first rebuild, which `Journal::open` runs).
//!
//! Also here: what a task *is* for a list ([`digest`]): the first line of its input, a snippet
//! of its result or error, and where it came from.

use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;
use sextant_core::a2a::{Message, Part};
use sextant_core::ids::ScheduleId;
use sextant_core::{EventBody, Origin, PrincipalKind};

use crate::error::{Error, Result};
use crate::queries::sessions;
use crate::queries::tasks::TaskRow;
use crate::stored;

/// The most text of one event that is indexed: output past it is not searchable (a command's
/// output is cut at 64 KiB already; a transcript's text blocks are far shorter).
pub const MAX_INDEXED: usize = 32 * 1024;

/// Characters the search snippets use to mark a match (`snippet()`): taken out of indexed text
/// so that a match mark is always one.
pub const MARK_START: char = '\u{2}';
pub const MARK_END: char = '\u{3}';

fn parts_text(parts: &[Part]) -> String {
    let mut out = String::new();
    for t in parts.iter().filter_map(Part::as_text) {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(t);
    }
    out
}

fn message_text(m: &Message) -> String {
    parts_text(&m.parts)
}

/// The searchable text of an event, if it has any.
pub fn event_text(body: &EventBody) -> Option<String> {
    let text = match body {
        EventBody::TaskCreated { message }
        | EventBody::InputAccepted { message }
        | EventBody::Reply { message } => message_text(message),
        EventBody::TaskState { message, .. } => message.as_ref().map(message_text)?,
        EventBody::Artifact { artifact, .. } => parts_text(&artifact.parts),
        EventBody::InteractionRaised { interaction } => [
            Some(interaction.title.as_str()),
            interaction.command.as_deref(),
            interaction.description.as_deref(),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("\n"),
        EventBody::InteractionAnswered { answer } => answer.reason.clone()?,
        EventBody::TurnStarted { .. } => return None,
    };
    let mut text: String = text
        .chars()
        .filter(|c| *c != MARK_START && *c != MARK_END)
        .collect();
    if text.trim().is_empty() {
        return None;
    }
    let kept = sextant_core::text::cut_bytes(&text, MAX_INDEXED).kept.len();
    text.truncate(kept);
    Some(text)
}

/// Indexes one event's text ([`event_text`]) now: for [`rebuild`], which makes one segment of
/// the whole journal anyway.
fn insert(c: &Connection, task_id: &str, text: &str) -> Result<()> {
    c.prepare_cached("INSERT INTO task_text (body, task_id) VALUES (?1, ?2)")?
        .execute(params![text, task_id])?;
    Ok(())
}

/// Queues one appended event's text ([`event_text`]) for the index; the writer calls it in the
/// event's transaction, and [`flush`] indexes it.
pub fn queue(c: &Connection, task_id: &str, text: &str) -> Result<()> {
    c.prepare_cached("INSERT INTO task_text_pending (task_id, body) VALUES (?1, ?2)")?
        .execute(params![task_id, text])?;
    Ok(())
}

/// Moves every queued text into the index, in the order it was queued (one FTS5 segment);
/// returns how many. Run inside a transaction.
pub fn flush(c: &Connection) -> Result<usize> {
    let n = c
        .prepare_cached(
            "INSERT INTO task_text (body, task_id)
             SELECT body, task_id FROM task_text_pending ORDER BY rowid",
        )?
        .execute([])?;
    if n > 0 {
        c.prepare_cached("DELETE FROM task_text_pending")?
            .execute([])?;
    }
    Ok(n)
}

/// How many texts wait for [`flush`].
pub fn queued(c: &Connection) -> Result<usize> {
    let n: i64 = c.query_row("SELECT count(*) FROM task_text_pending", [], |r| r.get(0))?;
    Ok(usize::try_from(n).unwrap_or(0))
}

/// Whether the index must be (re)built: the migration that created it leaves `built = 0`.
pub fn needs_rebuild(c: &Connection) -> Result<bool> {
    let built: Option<i64> = c
        .query_row("SELECT built FROM task_text_state", [], |r| r.get(0))
        .optional()?;
    Ok(built != Some(1))
}

/// Drops the index and builds it again from every event of the journal; returns how many rows
/// it has. Run inside a transaction (the writer's, or start-up's).
pub fn rebuild(c: &Connection) -> Result<u64> {
    c.execute("DELETE FROM task_text", [])?;
    // Everything queued is in the events read below.
    c.execute("DELETE FROM task_text_pending", [])?;
    let mut n = 0u64;
    {
        let mut st = c.prepare(
            "SELECT task_id, body FROM events
             WHERE task_id IS NOT NULL AND kind <> 'turn_started'",
        )?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            let task_id: String = r.get(0)?;
            let body: String = r.get(1)?;
            let body: EventBody = serde_json::from_str(&body)
                .map_err(|e| Error::Corrupt(format!("event body: {e}")))?;
            if let Some(text) = event_text(&body) {
                insert(c, &task_id, &text)?;
                n += 1;
            }
        }
    }
    c.execute("INSERT INTO task_text(task_text) VALUES ('optimize')", [])?;
    c.execute("DELETE FROM task_text_state", [])?;
    c.execute("INSERT INTO task_text_state (built) VALUES (1)", [])?;
    Ok(n)
}

/// What a person typed, as an FTS5 query that matches tasks containing every word (each as a
/// prefix, so `deplo` finds `deploy`). Each word is quoted, so nothing typed is FTS5 syntax:
/// quotes, `*`, `:`, `NEAR`, `-` and the like are searched as text. `None` when nothing
/// searchable was typed.
pub fn fts_query(typed: &str) -> Option<String> {
    let words: Vec<String> = typed
        .split(|c: char| c.is_whitespace() || c.is_control())
        .filter(|w| w.chars().any(char::is_alphanumeric))
        .take(16)
        .map(|w| format!("\"{}\"*", w.replace('"', "\"\"")))
        .collect();
    (!words.is_empty()).then(|| words.join(" "))
}

/// Where a match of `query` is in a task's text: a few words around it, the match between
/// [`MARK_START`] and [`MARK_END`].
pub fn snippet(c: &Connection, query: &str, task_id: &str) -> Result<Option<String>> {
    Ok(c.prepare_cached(
        "SELECT snippet(task_text, 0, char(2), char(3), '…', 12) FROM task_text
             WHERE task_text MATCH ?1 AND task_id = ?2 LIMIT 1",
    )?
    .query_row(params![query, task_id], |r| r.get(0))
    .optional()?)
}

/// What a task is, for a list of tasks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct TaskDigest {
    /// The first line of its input, shortened.
    pub title: Option<String>,
    /// A line of its result (for a task that ended well) or of its error / status message.
    pub result: Option<String>,
    /// The schedule whose Run started its Session, if one did.
    pub schedule_id: Option<ScheduleId>,
    pub schedule_name: Option<String>,
    /// What started its Session (`a2a`, `schedule`, `outbound`); `None` when its Session is
    /// gone or its stored value does not read ([`sessions::labels`]).
    pub origin: Option<Origin>,
    /// The kind of its caller; `None` as `origin` is.
    pub caller_kind: Option<PrincipalKind>,
}

/// The longest title or result line a digest gives.
pub const LINE_MAX: usize = 160;

/// The first non-empty line of `text`, with runs of white space as one space, shortened to
/// [`LINE_MAX`] characters (with `…`). Of a framed text (a peer's words, see
/// `sextant_core::untrusted`), the first line of the caller's own words: the frame is for the
/// engine, the line for a person.
pub fn first_line(text: &str) -> Option<String> {
    let line = sextant_core::untrusted::unframed(text)
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())?;
    let line: String = line
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .chars()
        .filter(|c| !c.is_control())
        .collect();
    if sextant_core::text::cut(&line, LINE_MAX).cut {
        // The marker counts within the limit.
        let kept = sextant_core::text::cut(&line, LINE_MAX - 1).kept;
        return Some(format!("{}…", kept.trim_end()));
    }
    Some(line)
}

/// The schedule (id, and name while it exists) whose Run created a Session, if one did.
pub fn session_schedule(
    c: &Connection,
    session_id: &str,
) -> Result<Option<(ScheduleId, Option<String>)>> {
    Ok(c.prepare_cached(
        "SELECT r.schedule_id, s.name FROM runs r
             LEFT JOIN schedules s ON s.schedule_id = r.schedule_id
             WHERE r.session_id = ?1 LIMIT 1",
    )?
    .query_row([session_id], |r| Ok((stored::get(r, 0)?, r.get(1)?)))
    .optional()?)
}

/// The longest opening message [`session_opening`] gives.
pub const OPENING_MAX: usize = 600;

/// The text of a Session's first message (the input that started it), shortened to
/// [`OPENING_MAX`] characters.
pub fn session_opening(c: &Connection, session_id: &str) -> Result<Option<String>> {
    let body: Option<String> = c
        .prepare_cached("SELECT body FROM events WHERE session_id = ?1 ORDER BY seq LIMIT 1")?
        .query_row([session_id], |r| r.get(0))
        .optional()?;
    let Some(body) = body else { return Ok(None) };
    let body: EventBody =
        serde_json::from_str(&body).map_err(|e| Error::Corrupt(format!("event body: {e}")))?;
    let EventBody::TaskCreated { message } = body else {
        return Ok(None);
    };
    let text = message_text(&message);
    let text = sextant_core::untrusted::unframed(&text).trim();
    if text.is_empty() {
        return Ok(None);
    }
    if sextant_core::text::cut(text, OPENING_MAX).cut {
        // The marker counts within the limit.
        let kept = sextant_core::text::cut(text, OPENING_MAX - 1).kept;
        return Ok(Some(format!("{}…", kept.trim_end())));
    }
    Ok(Some(text.to_string()))
}

/// How many of a task's latest events [`digest`] looks at for its result.
const RESULT_LOOKBACK: u32 = 32;

/// The digest of a task (a few indexed reads).
pub fn digest(c: &Connection, t: &TaskRow) -> Result<TaskDigest> {
    let decode = |body: String| -> Result<EventBody> {
        serde_json::from_str(&body).map_err(|e| Error::Corrupt(format!("event body: {e}")))
    };
    let first: Option<String> = c
        .prepare_cached("SELECT body FROM events WHERE session_id = ?1 AND seq = ?2")?
        .query_row(params![t.session_id.as_str(), t.first_seq], |r| r.get(0))
        .optional()?;
    let title = match first.map(decode).transpose()? {
        Some(EventBody::TaskCreated { message }) => first_line(&message_text(&message)),
        _ => None,
    };
    // The latest output and the latest status message of the task.
    let mut output = None;
    let mut status = None;
    {
        let mut st = c.prepare_cached(
            "SELECT body FROM events
             WHERE session_id = ?1 AND seq BETWEEN ?2 AND ?3 AND task_id = ?4
               AND kind IN ('artifact', 'reply', 'task_state')
             ORDER BY seq DESC LIMIT ?5",
        )?;
        let mut rows = st.query(params![
            t.session_id.as_str(),
            t.first_seq,
            t.last_seq,
            t.task_id.as_str(),
            RESULT_LOOKBACK
        ])?;
        while let Some(r) = rows.next()? {
            let body = decode(r.get(0)?)?;
            let text = match &body {
                EventBody::TaskState {
                    message: Some(m), ..
                } => first_line(&message_text(m)).map(|l| (false, l)),
                EventBody::Artifact { artifact, .. } => {
                    first_line(&parts_text(&artifact.parts)).map(|l| (true, l))
                }
                EventBody::Reply { message } => {
                    first_line(&message_text(message)).map(|l| (true, l))
                }
                _ => None,
            };
            match text {
                Some((true, l)) if output.is_none() => output = Some(l),
                Some((false, l)) if status.is_none() => status = Some(l),
                _ => {}
            }
            if output.is_some() && status.is_some() {
                break;
            }
        }
    }
    let ended_well = matches!(t.outcome, Some(sextant_core::TaskOutcome::Completed) | None);
    let result = if ended_well {
        output.or(status)
    } else {
        status.or(output)
    };
    let (schedule_id, schedule_name) = session_schedule(c, &t.session_id)?.unzip();
    let schedule_name = schedule_name.flatten();
    let sessions::Labels {
        origin,
        caller_kind,
    } = sessions::labels(c, &t.session_id)?;
    Ok(TaskDigest {
        title,
        result,
        schedule_id,
        schedule_name,
        origin,
        caller_kind,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_text_becomes_quoted_prefix_words() {
        assert_eq!(
            fts_query("deploy prod").as_deref(),
            Some("\"deploy\"* \"prod\"*")
        );
        // FTS5 syntax is searched as text, never parsed.
        assert_eq!(
            fts_query("a\"b OR NEAR(x) -y *").as_deref(),
            Some("\"a\"\"b\"* \"OR\"* \"NEAR(x)\"* \"-y\"*")
        );
        assert_eq!(fts_query("  \t\n "), None);
        assert_eq!(fts_query("* - \"\""), None);
        assert_eq!(fts_query("${IFS}x").as_deref(), Some("\"${IFS}x\"*"));
        assert_eq!(
            fts_query(&"w ".repeat(100)).map(|q| q.matches('*').count()),
            Some(16)
        );
    }

    #[test]
    fn a_framed_texts_first_line_is_the_callers_own() {
        let framed = format!(
            "{}\nping\n{}",
            sextant_core::untrusted::frame_header(&sextant_core::Principal::peer("caller")),
            sextant_core::untrusted::FRAME_END
        );
        assert_eq!(first_line(&framed).as_deref(), Some("ping"));
    }

    #[test]
    fn first_lines_are_short_single_lines() {
        assert_eq!(
            first_line("\n\n  hello   world \nmore").as_deref(),
            Some("hello world")
        );
        assert_eq!(first_line("   \n\t"), None);
        let long = "x".repeat(500);
        let l = first_line(&long).unwrap();
        assert_eq!(l.chars().count(), LINE_MAX);
        assert!(l.ends_with('…'));
        assert_eq!(first_line("a\u{1b}[31mred").as_deref(), Some("a[31mred"));
    }

    #[test]
    fn event_text_is_bounded_and_free_of_match_marks() {
        let big = EventBody::Reply {
            message: Message::new(
                sextant_core::a2a::Role::Agent,
                vec![Part::text("é".repeat(MAX_INDEXED))],
            ),
        };
        let t = event_text(&big).unwrap();
        assert!(t.len() <= MAX_INDEXED && t.is_char_boundary(t.len()));
        let marked = EventBody::Reply {
            message: Message::new(
                sextant_core::a2a::Role::Agent,
                vec![Part::text("a\u{2}b\u{3}c")],
            ),
        };
        assert_eq!(event_text(&marked).as_deref(), Some("abc"));
        assert_eq!(
            event_text(&EventBody::TurnStarted {
                through: None,
                working: true
            }),
            None
        );
    }
}
