//! How domain values are stored as text: rows carry `TaskId`, `RunTrigger`, `DateTime<Utc>`, …
//! and this module turns them into exactly the text the journal has always stored (no
//! migration: an old journal reads unchanged) and back. The types live in `sextant-core`, so the orphan rule
//! keeps `rusqlite`'s `ToSql`/`FromSql` off them; [`Sql`] is the local wrapper that carries
//! them, and [`Stored`] says how each one is spelled. A stored value that does not parse is a
//! clear `FromSql` error naming the column's kind and the text, never a panic.

use chrono::{DateTime, Utc};
use rusqlite::Row;
use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};
use sextant_core::a2a::TaskState;
use sextant_core::event::{parse_state, state_wire};
use sextant_core::ids::{
    AgentId, ContextId, RunId, ScheduleId, SessionId, TaskId, format_time, parse_time,
};
use sextant_core::schedule::{
    MissedRunPolicy, OverlapPolicy, RunOutcome, RunRecord, RunTrigger, ScheduleSource,
};
use sextant_core::{CallerKey, Origin, PrincipalKind};

/// A value the journal stores as text.
pub(crate) trait Stored: Sized {
    /// What the value is, for errors ("run trigger").
    const WHAT: &'static str;
    /// The stored text.
    fn to_stored(&self) -> String;
    /// Parses the stored text; `None` when it is not one.
    fn from_stored(s: &str) -> Option<Self>;
}

impl Stored for DateTime<Utc> {
    const WHAT: &'static str = "time";
    fn to_stored(&self) -> String {
        format_time(*self)
    }
    fn from_stored(s: &str) -> Option<Self> {
        parse_time(s)
    }
}

/// Ids are stored as their text, whatever it is (a caller's `contextId` is any text it chose).
macro_rules! stored_id {
    ($($id:ty: $what:literal),* $(,)?) => {$(
        impl Stored for $id {
            const WHAT: &'static str = $what;
            fn to_stored(&self) -> String {
                self.to_string()
            }
            fn from_stored(s: &str) -> Option<Self> {
                Some(Self::from(s))
            }
        }
    )*};
}

stored_id!(
    TaskId: "task id",
    SessionId: "session id",
    ContextId: "context id",
    AgentId: "agent id",
    ScheduleId: "schedule id",
    RunId: "run id",
);

impl Stored for CallerKey {
    const WHAT: &'static str = "caller key";
    fn to_stored(&self) -> String {
        self.to_string()
    }
    fn from_stored(s: &str) -> Option<Self> {
        Some(CallerKey::from_stored(s))
    }
}

impl Stored for TaskState {
    const WHAT: &'static str = "task state";
    fn to_stored(&self) -> String {
        state_wire(self)
    }
    fn from_stored(s: &str) -> Option<Self> {
        parse_state(s)
    }
}

impl Stored for PrincipalKind {
    const WHAT: &'static str = "caller kind";
    fn to_stored(&self) -> String {
        self.as_str().to_string()
    }
    fn from_stored(s: &str) -> Option<Self> {
        // Serde knows every spelling (the one written now and the one a journal migrated
        // from `anonymous_local` once held).
        serde_json::from_value(serde_json::Value::String(s.to_string())).ok()
    }
}

impl Stored for Origin {
    const WHAT: &'static str = "session origin";
    fn to_stored(&self) -> String {
        self.as_str().to_string()
    }
    fn from_stored(s: &str) -> Option<Self> {
        Self::parse(s)
    }
}

impl Stored for RunTrigger {
    const WHAT: &'static str = "run trigger";
    fn to_stored(&self) -> String {
        self.as_str().to_string()
    }
    fn from_stored(s: &str) -> Option<Self> {
        Self::parse(s)
    }
}

impl Stored for RunRecord {
    const WHAT: &'static str = "run record";
    fn to_stored(&self) -> String {
        self.as_str().to_string()
    }
    fn from_stored(s: &str) -> Option<Self> {
        Self::parse(s)
    }
}

impl Stored for MissedRunPolicy {
    const WHAT: &'static str = "missed-run policy";
    fn to_stored(&self) -> String {
        self.as_str().to_string()
    }
    fn from_stored(s: &str) -> Option<Self> {
        Self::parse(s)
    }
}

impl Stored for OverlapPolicy {
    const WHAT: &'static str = "overlap policy";
    fn to_stored(&self) -> String {
        self.as_str().to_string()
    }
    fn from_stored(s: &str) -> Option<Self> {
        Self::parse(s)
    }
}

impl Stored for ScheduleSource {
    const WHAT: &'static str = "schedule source";
    fn to_stored(&self) -> String {
        self.as_str().to_string()
    }
    fn from_stored(s: &str) -> Option<Self> {
        Self::parse(s)
    }
}

impl Stored for RunOutcome {
    const WHAT: &'static str = "run outcome";
    fn to_stored(&self) -> String {
        self.as_str().to_string()
    }
    fn from_stored(s: &str) -> Option<Self> {
        Self::parse(s)
    }
}

/// A [`Stored`] value as an SQL parameter or column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Sql<T>(pub T);

impl<T: Stored> ToSql for Sql<T> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::from(self.0.to_stored()))
    }
}

/// Why a stored text did not parse.
#[derive(Debug, thiserror::Error)]
#[error("stored {what} {text:?} is not one this Sextant knows")]
struct Unknown {
    what: &'static str,
    text: String,
}

impl<T: Stored> FromSql for Sql<T> {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        let text = value.as_str()?;
        T::from_stored(text).map(Sql).ok_or_else(|| {
            FromSqlError::Other(Box::new(Unknown {
                what: T::WHAT,
                text: text.to_string(),
            }))
        })
    }
}

/// Column `i` of a row as a [`Stored`] value.
pub(crate) fn get<T: Stored>(r: &Row<'_>, i: usize) -> rusqlite::Result<T> {
    Ok(r.get::<_, Sql<T>>(i)?.0)
}

/// Nullable column `i` of a row as a [`Stored`] value.
pub(crate) fn get_opt<T: Stored>(r: &Row<'_>, i: usize) -> rusqlite::Result<Option<T>> {
    Ok(r.get::<_, Option<Sql<T>>>(i)?.map(|v| v.0))
}

/// Serde for a stored time: rows (and so exports) carry it in the stored text format, not
/// chrono's default rendering, so an export stays byte-identical to what it was when rows held
/// strings.
pub mod time {
    use chrono::{DateTime, Utc};
    use serde::{Deserialize, Deserializer, Serializer, de::Error as _};
    use sextant_core::ids::{format_time, parse_time};

    /// Serializes in the stored format.
    pub fn serialize<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_time(*t))
    }

    /// Parses an RFC 3339 time.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
        let s = String::deserialize(d)?;
        parse_time(&s).ok_or_else(|| D::Error::custom(format!("not an RFC 3339 time: {s:?}")))
    }

    /// The same for an optional time.
    pub mod opt {
        use super::*;

        /// Serializes in the stored format, `None` as null.
        pub fn serialize<S: Serializer>(
            t: &Option<DateTime<Utc>>,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            match t {
                Some(t) => s.serialize_some(&format_time(*t)),
                None => s.serialize_none(),
            }
        }

        /// Parses an optional RFC 3339 time.
        pub fn deserialize<'de, D: Deserializer<'de>>(
            d: D,
        ) -> Result<Option<DateTime<Utc>>, D::Error> {
            Option::<String>::deserialize(d)?
                .map(|s| {
                    parse_time(&s)
                        .ok_or_else(|| D::Error::custom(format!("not an RFC 3339 time: {s:?}")))
                })
                .transpose()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::Connection;

    /// Stores `v` and reads it back as a column, as a row does.
    fn round_trip<T: Stored>(c: &Connection, v: T) -> (String, T) {
        c.query_row("SELECT ?1, ?1", [Sql(v)], |r| Ok((r.get(0)?, get(r, 1)?)))
            .unwrap()
    }

    /// An id or caller key is stored as its bare text, any text (a caller's `contextId` is
    /// what it chose), and reads back as the same value.
    #[test]
    fn ids_are_stored_as_their_text() {
        let c = Connection::open_in_memory().unwrap();
        for text in [
            "0190f1e2-7a1b-7c3d-8e4f-a0b1c2d3e4f5",
            "peer:alice",
            "",
            "é \"x\"",
        ] {
            assert_eq!(
                round_trip(&c, TaskId::from(text)),
                (text.into(), text.into())
            );
            assert_eq!(
                round_trip(&c, SessionId::from(text)),
                (text.into(), text.into())
            );
            assert_eq!(
                round_trip(&c, ContextId::from(text)),
                (text.into(), text.into())
            );
            assert_eq!(
                round_trip(&c, AgentId::from(text)),
                (text.into(), text.into())
            );
            assert_eq!(
                round_trip(&c, ScheduleId::from(text)),
                (text.into(), text.into())
            );
            assert_eq!(
                round_trip(&c, RunId::from(text)),
                (text.into(), text.into())
            );
            let key = CallerKey::from_stored(text);
            assert_eq!(round_trip(&c, key.clone()), (text.into(), key));
        }
        // A caller key is stored as `Principal::key()` wrote it, an issuer's `:` included.
        let p = sextant_core::Principal::delegated("https://idp:8443", "alice", "agent-a");
        let (text, key) = round_trip(&c, p.caller_key());
        assert_eq!(text, "delegated:https://idp:8443:alice:agent-a");
        assert_eq!(
            (key.kind(), key),
            (Some(PrincipalKind::Delegated), p.caller_key())
        );
        // A column that is not text is an error, not an id.
        let err = c
            .query_row("SELECT 7", [], |r| get::<TaskId>(r, 0))
            .unwrap_err();
        assert!(
            matches!(err, rusqlite::Error::InvalidColumnType(..)),
            "{err}"
        );
    }
}
