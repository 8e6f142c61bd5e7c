//! Identifier helpers. The ids Sextant mints are UUIDv7 strings: unique, and roughly
//! time-ordered, which keeps SQLite's primary-key b-trees append-mostly.
//!
//! Each kind of id has its own type ([`TaskId`], [`SessionId`], [`ContextId`], [`AgentId`],
//! [`ScheduleId`], [`RunId`]), so a row cannot hand a Session's id where a task's is wanted.
//! Each is a transparent wrapper over its text: serde reads and writes the bare string (wire
//! JSON and exports read as they did when rows held strings), the journal stores the same
//! text, and `Deref<Target = str>` lets `&row.task_id` go wherever a `&str` is taken.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The conversions and comparisons every text newtype of this crate shares (`$name(String)`):
/// it reads as its text (`Deref<Target = str>`, `AsRef`, `Borrow`, `Display`), compares with
/// `str` and `String` both ways round, and gives its text back. How one is made is up to each
/// type (ids from any text, [`CallerKey`](crate::CallerKey) only from a principal or the
/// journal).
macro_rules! text_newtype {
    ($name:ident) => {
        impl $name {
            /// The text.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// The text, owned.
            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl std::ops::Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        // Sound: the derived `Eq`, `Ord` and `Hash` are those of the one `String` field, which
        // agree with `str`'s, so a map keyed by the value can be looked up by its text.
        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl From<$name> for String {
            fn from(v: $name) -> String {
                v.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                self.0 == *other
            }
        }

        impl PartialEq<$name> for str {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }

        impl PartialEq<$name> for &str {
            fn eq(&self, other: &$name) -> bool {
                **self == other.0
            }
        }

        impl PartialEq<$name> for String {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }
    };
}
pub(crate) use text_newtype;

/// Defines a string id newtype: any text is an id of its kind (`From<String>`, `From<&str>`);
/// `mint` adds `new()`.
macro_rules! string_id {
    ($(#[$meta:meta])* $name:ident) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(String);

        text_newtype!($name);

        impl From<String> for $name {
            fn from(s: String) -> Self {
                Self(s)
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                Self(s.to_string())
            }
        }

        impl From<&String> for $name {
            fn from(s: &String) -> Self {
                Self(s.clone())
            }
        }
    };
    ($(#[$meta:meta])* $name:ident, mint) => {
        string_id!($(#[$meta])* $name);

        impl $name {
            /// A fresh id (UUIDv7, see [`new_id`]).
            // No `Default`: a default that mints an id would hide where ids are made.
            #[allow(clippy::new_without_default)]
            pub fn new() -> Self {
                Self(new_id())
            }
        }
    };
}

string_id!(
    /// A Task's id (the A2A `Task.id`): minted by the journal's writer when a task is admitted.
    TaskId,
    mint
);
string_id!(
    /// A Session's id (one conversation with one Agent, see the journal's `sessions`).
    SessionId,
    mint
);
string_id!(
    /// An A2A `contextId`: the caller's (any text it chose) or, when it sent none, minted.
    ContextId,
    mint
);
string_id!(
    /// An Agent's id: its name in `agents.toml`, or `peer:NAME` for the outbound
    /// conversations with a peer. Never minted.
    AgentId
);
string_id!(
    /// A personal schedule's id.
    ScheduleId,
    mint
);
string_id!(
    /// One Run of a schedule.
    RunId,
    mint
);

/// A fresh identifier (UUIDv7, hyphenated).
pub fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// Formats a time the way A2A wants it on the wire and the way we store it: RFC 3339, UTC, `Z`,
/// millisecond precision. Fixed width, so stored strings sort in time order.
pub fn format_time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// Parses a stored time; stored times were written by [`format_time`].
pub fn parse_time(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// Truncates a time to millisecond precision so a value survives a store/load round trip unchanged.
pub fn millis(t: DateTime<Utc>) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(t.timestamp_millis()).unwrap_or(t)
}

/// Hex SHA-256 of some bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// A stable hash of a JSON value: object keys are sorted recursively before hashing, so two
/// semantically equal requests hash the same whatever their key order.
pub fn json_hash(v: &serde_json::Value) -> String {
    let mut out = String::new();
    canonical(v, &mut out);
    sha256_hex(out.as_bytes())
}

fn canonical(v: &serde_json::Value, out: &mut String) {
    use serde_json::Value;
    match v {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String((*k).clone()).to_string());
                out.push(':');
                canonical(&map[*k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_hash_ignores_key_order_but_not_content() {
        let a = json!({"b": [1, {"y": 2, "x": 1}], "a": "t"});
        let b = json!({"a": "t", "b": [1, {"x": 1, "y": 2}]});
        let c = json!({"a": "t", "b": [{"x": 1, "y": 2}, 1]});
        assert_eq!(json_hash(&a), json_hash(&b));
        assert_ne!(json_hash(&a), json_hash(&c));
    }

    #[test]
    fn ids_are_their_bare_text_in_json_and_compare_with_text() {
        let id = TaskId::from("t-1");
        assert_eq!(serde_json::to_string(&id).unwrap(), "\"t-1\"");
        let back: TaskId = serde_json::from_str("\"t-1\"").unwrap();
        assert_eq!(back, id);
        // In a struct too: a row's JSON is what it was when the field was a `String`.
        #[derive(Serialize)]
        struct Row {
            task_id: TaskId,
            session_id: Option<SessionId>,
        }
        let row = Row {
            task_id: id.clone(),
            session_id: Some("s-1".into()),
        };
        assert_eq!(
            serde_json::to_string(&row).unwrap(),
            r#"{"task_id":"t-1","session_id":"s-1"}"#
        );
        // Each comparison, both ways round.
        let (text, owned): (&str, String) = ("t-1", "t-1".into());
        assert_eq!(id, text);
        assert_eq!(text, id);
        assert_eq!(id, *text);
        assert_eq!(*text, id);
        assert_eq!(id, owned);
        assert_eq!(owned, id);
        let (other, other_owned): (&str, String) = ("t-2", "t-2".into());
        assert_ne!(id, other);
        assert_ne!(other_owned, id);
        assert_eq!(id.to_string(), "t-1");
        assert_eq!(&*id, "t-1");
        let map: std::collections::HashMap<TaskId, u8> = [(id.clone(), 1)].into();
        assert_eq!(map.get("t-1"), Some(&1));
        assert_eq!(String::from(id), "t-1");
    }

    #[test]
    fn minted_ids_are_fresh_uuids() {
        let (a, b) = (RunId::new(), RunId::new());
        assert_ne!(a, b);
        assert!(uuid::Uuid::parse_str(&a).is_ok_and(|u| u.get_version_num() == 7));
    }

    #[test]
    fn times_are_fixed_width_utc_millis() {
        let t = DateTime::parse_from_rfc3339("2026-03-29T01:02:03.456789+02:00").unwrap();
        let s = format_time(t.with_timezone(&Utc));
        assert_eq!(s, "2026-03-28T23:02:03.456Z");
        assert_eq!(parse_time(&s).map(format_time).as_deref(), Some(s.as_str()));
    }
}
