//! `sessions`: one conversation with one Agent, keyed by (caller, agent, contextId).

use rusqlite::{Connection, OptionalExtension, Row, params};
use serde::{Deserialize, Serialize};

use chrono::{DateTime, Utc};
use sextant_core::ids::{AgentId, ContextId, SessionId};
use sextant_core::{CallerKey, Origin, PrincipalKind};

use crate::error::Result;
use crate::stored::{self, Sql};

/// A stored Session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRow {
    pub session_id: SessionId,
    pub agent_id: AgentId,
    pub caller: CallerKey,
    pub caller_kind: PrincipalKind,
    pub context_id: ContextId,
    pub origin: Origin,
    #[serde(with = "crate::stored::time")]
    pub created_at: DateTime<Utc>,
    #[serde(with = "crate::stored::time")]
    pub updated_at: DateTime<Utc>,
    pub last_seq: i64,
}

pub(crate) const COLUMNS: &str = "session_id, agent_id, caller, caller_kind, context_id, origin, \
                       created_at, updated_at, last_seq";

pub(crate) fn row(r: &Row<'_>) -> rusqlite::Result<SessionRow> {
    Ok(SessionRow {
        session_id: stored::get(r, 0)?,
        agent_id: stored::get(r, 1)?,
        caller: stored::get(r, 2)?,
        caller_kind: stored::get(r, 3)?,
        context_id: stored::get(r, 4)?,
        origin: stored::get(r, 5)?,
        created_at: stored::get(r, 6)?,
        updated_at: stored::get(r, 7)?,
        last_seq: r.get(8)?,
    })
}

/// A row with its id beside it, for [`super::skip_unreadable`].
pub(crate) fn row_with_id(r: &Row<'_>) -> rusqlite::Result<(String, rusqlite::Result<SessionRow>)> {
    Ok((r.get(0)?, row(r)))
}

/// One Session by id.
pub fn get(c: &Connection, session_id: &str) -> Result<Option<SessionRow>> {
    Ok(c.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM sessions WHERE session_id = ?1"
    ))?
    .query_row([session_id], row)
    .optional()?)
}

/// The Session of a context key.
pub fn by_context(
    c: &Connection,
    caller: &str,
    agent_id: &str,
    context_id: &str,
) -> Result<Option<SessionRow>> {
    Ok(c.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM sessions WHERE caller = ?1 AND agent_id = ?2 AND context_id = ?3"
    ))?
    .query_row(params![caller, agent_id, context_id], row)
    .optional()?)
}

/// Creates a Session.
pub fn insert(c: &Connection, s: &SessionRow) -> Result<()> {
    c.prepare_cached(&format!(
        "INSERT INTO sessions ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
    ))?
    .execute(params![
        s.session_id.as_str(),
        s.agent_id.as_str(),
        s.caller.as_str(),
        Sql(s.caller_kind),
        s.context_id.as_str(),
        Sql(s.origin),
        Sql(s.created_at),
        Sql(s.updated_at),
        s.last_seq
    ])?;
    Ok(())
}

/// Where a Session came from and who started it, for a label on one of its tasks or
/// decisions (a task list, the approvals inbox).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Labels {
    /// What started it.
    pub origin: Option<Origin>,
    /// The kind of its caller.
    pub caller_kind: Option<PrincipalKind>,
}

/// The [`Labels`] of a Session. Each is `None` when there is no such Session, or when its
/// stored text is not one this Sextant knows (logged, once per row and reason, as a list's
/// unreadable row is): a label must not fail the list of tasks or decisions it is shown in.
pub fn labels(c: &Connection, session_id: &str) -> Result<Labels> {
    let read = c
        .prepare_cached("SELECT origin, caller_kind FROM sessions WHERE session_id = ?1")?
        .query_row([session_id], |r| {
            Ok((
                r.get::<_, Sql<Origin>>(0),
                r.get::<_, Sql<PrincipalKind>>(1),
            ))
        })
        .optional()?;
    let Some((origin, caller_kind)) = read else {
        return Ok(Labels::default());
    };
    Ok(Labels {
        origin: readable(session_id, origin)?,
        caller_kind: readable(session_id, caller_kind)?,
    })
}

/// A label's value, or `None` (logged) when its stored text does not read; any other error
/// (the database's) is returned.
fn readable<T>(session_id: &str, v: rusqlite::Result<Sql<T>>) -> rusqlite::Result<Option<T>> {
    match v {
        Ok(Sql(v)) => Ok(Some(v)),
        Err(
            e @ (rusqlite::Error::FromSqlConversionFailure(..)
            | rusqlite::Error::InvalidColumnType(..)),
        ) => {
            super::report_unreadable("session's label", session_id, &e);
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// A Session's last seq.
pub fn last_seq(c: &Connection, session_id: &str) -> Result<Option<i64>> {
    Ok(
        c.prepare_cached("SELECT last_seq FROM sessions WHERE session_id = ?1")?
            .query_row([session_id], |r| r.get(0))
            .optional()?,
    )
}

/// Records a Session's last seq and activity time (the writer does it once per batch).
pub fn touch(c: &Connection, session_id: &str, last_seq: i64, at: &str) -> Result<()> {
    c.prepare_cached("UPDATE sessions SET last_seq = ?2, updated_at = ?3 WHERE session_id = ?1")?
        .execute(params![session_id, last_seq, at])?;
    Ok(())
}

/// Who a conversation is from, as the console sorts them (`origin=` of its two lists): the
/// person's own (from the console, or Sextant calling a peer for them), other agents' (a peer,
/// an assistant, any token that is not the person's), or a schedule's Runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provenance {
    Mine,
    Agents,
    Schedules,
}

impl Provenance {
    /// Every provenance, in the console's order.
    pub const ALL: [Provenance; 3] = [Provenance::Mine, Provenance::Agents, Provenance::Schedules];

    /// Its word in a query (`mine`, `agents`, `schedules`).
    pub fn as_str(self) -> &'static str {
        match self {
            Provenance::Mine => "mine",
            Provenance::Agents => "agents",
            Provenance::Schedules => "schedules",
        }
    }

    /// The provenance a word names; `None` for any other text.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == s)
    }

    /// Its condition on a `sessions` row (constant SQL: no parameters). A Run's caller is the
    /// schedule's owner, so a schedule's Sessions are told apart by their origin first. The
    /// loopback caller without a token is the person at their own machine; `anonymous_local`
    /// is how a journal from before the spelling changed may still hold it.
    pub(crate) fn sql(self) -> &'static str {
        match self {
            Provenance::Schedules => "origin = 'schedule'",
            Provenance::Mine => {
                "origin <> 'schedule' \
                 AND caller_kind IN ('person', 'anonymous-local', 'anonymous_local')"
            }
            Provenance::Agents => {
                "origin <> 'schedule' \
                 AND caller_kind NOT IN ('person', 'anonymous-local', 'anonymous_local')"
            }
        }
    }
}

/// A page of Sessions, most recently active first; `cursor` is the (updated_at, session_id) of
/// the last row of the previous page. Also returns the total count. A Session whose stored
/// values do not read (an origin a newer Sextant wrote) is left out (and logged), and the page
/// reads on past it, so it still holds `limit` Sessions when there are that many after the
/// cursor (a caller's look-ahead row included), as `runs::list` does. `from` keeps the
/// Sessions of one [`Provenance`].
pub fn list(
    c: &Connection,
    caller: Option<&str>,
    from: Option<Provenance>,
    cursor: Option<(String, String)>,
    limit: u32,
) -> Result<(Vec<SessionRow>, u64)> {
    let from_sql = from.map_or("1", Provenance::sql);
    let mut stmt = c.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM sessions
         WHERE (?1 IS NULL OR caller = ?1) AND ({from_sql})
           AND (?2 = 0 OR updated_at < ?3 OR (updated_at = ?3 AND session_id < ?4))
         ORDER BY updated_at DESC, session_id DESC LIMIT ?5"
    ))?;
    let rows = super::page_skipping_unreadable(
        "session",
        limit,
        cursor.unwrap_or_default(),
        |(at, id), want| {
            stmt.query_map(params![caller, !id.is_empty() as i64, at, id, want], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(7)?, row(r)))
            })?
            .collect()
        },
    )?;
    // From the tally the triggers keep (a row per caller), not a count of every Session; the
    // tally has no origins, so a list of one provenance counts its Sessions.
    let total: i64 = match from {
        None => c
            .prepare_cached(
                "SELECT COALESCE(SUM(n), 0) FROM session_tally WHERE (?1 IS NULL OR caller = ?1)",
            )?
            .query_row(params![caller], |r| r.get(0))?,
        Some(p) => c
            .prepare_cached(&format!(
                "SELECT COUNT(*) FROM sessions WHERE (?1 IS NULL OR caller = ?1) AND ({})",
                p.sql()
            ))?
            .query_row(params![caller], |r| r.get(0))?,
    };
    Ok((rows, total as u64))
}
