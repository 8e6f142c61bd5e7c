//! Identifier helpers. Ids are UUIDv7 strings: unique, and roughly time-ordered, which keeps
//! SQLite's primary-key b-trees append-mostly.

use chrono::{DateTime, SecondsFormat, Utc};
use sha2::{Digest, Sha256};

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
    fn times_are_fixed_width_utc_millis() {
        let t = DateTime::parse_from_rfc3339("2026-03-29T01:02:03.456789+02:00").unwrap();
        let s = format_time(t.with_timezone(&Utc));
        assert_eq!(s, "2026-03-28T23:02:03.456Z");
        assert_eq!(parse_time(&s).map(format_time).as_deref(), Some(s.as_str()));
    }
}
