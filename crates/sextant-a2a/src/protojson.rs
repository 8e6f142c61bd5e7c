//! ProtoJSON's vocabulary for A2A 1.0 (`specification/a2a.proto`): the proto's enums, with
//! their numbers, and the two spellings of a field's name.
//!
//! A ProtoJSON parser (Python's `google.protobuf.json_format`, a2a-js, pbjson) accepts an
//! enum value by its name or by its number (`"role": 1` is `"role": "ROLE_USER"`; Python
//! also reads a number written as a string) and a field by its JSON name (lowerCamelCase)
//! or its proto name (snake_case: `message_id` is `messageId`). Sextant answers in the
//! canonical form only (names, camelCase). Which fields of which request messages are enums
//! is the request schema's to say (`sextant-server`'s `a2a::params`); this module knows the
//! values and the spellings.

use serde_json::Value;

/// An enum of the proto: its name and its values' names and numbers.
#[derive(Debug)]
pub struct ProtoEnum {
    /// The enum's proto name (`Role`, `TaskState`).
    pub name: &'static str,
    /// `(value name, number)`, as declared.
    pub values: &'static [(&'static str, i64)],
}

/// `lf.a2a.v1.Role`.
pub const ROLE: ProtoEnum = ProtoEnum {
    name: "Role",
    values: &[("ROLE_UNSPECIFIED", 0), ("ROLE_USER", 1), ("ROLE_AGENT", 2)],
};

/// `lf.a2a.v1.TaskState`.
pub const TASK_STATE: ProtoEnum = ProtoEnum {
    name: "TaskState",
    values: &[
        ("TASK_STATE_UNSPECIFIED", 0),
        ("TASK_STATE_SUBMITTED", 1),
        ("TASK_STATE_WORKING", 2),
        ("TASK_STATE_COMPLETED", 3),
        ("TASK_STATE_FAILED", 4),
        ("TASK_STATE_CANCELED", 5),
        ("TASK_STATE_INPUT_REQUIRED", 6),
        ("TASK_STATE_REJECTED", 7),
        ("TASK_STATE_AUTH_REQUIRED", 8),
    ],
};

/// What an enum field's value is, read as ProtoJSON reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnumValue {
    /// A value of the enum, by its name.
    Known(&'static str),
    /// A string that is not a number: left to whoever reads the name (a 0.3 `"user"`, or a
    /// name the enum does not have, which the typed reader refuses naming the field).
    Name,
    /// A number, or a number in a string, the enum does not have.
    UnknownNumber(String),
    /// Neither a string nor an integer.
    NotAnEnum,
}

impl ProtoEnum {
    /// The name of the value numbered `number`.
    pub fn name_of(&self, number: i64) -> Option<&'static str> {
        self.values
            .iter()
            .find_map(|(name, n)| (*n == number).then_some(*name))
    }

    /// Reads `v` as a value of this enum: a name as it is, a number (or a number in a
    /// string) as the name it numbers.
    pub fn read(&self, v: &Value) -> EnumValue {
        let number = match v {
            Value::Number(n) => match n.as_i64() {
                Some(n) => n,
                None => return EnumValue::UnknownNumber(n.to_string()),
            },
            Value::String(s) => match self.values.iter().find(|(name, _)| name == s) {
                Some((name, _)) => return EnumValue::Known(name),
                None => match s.trim().parse::<i64>() {
                    Ok(n) => n,
                    Err(_) => return EnumValue::Name,
                },
            },
            _ => return EnumValue::NotAnEnum,
        };
        match self.name_of(number) {
            Some(name) => EnumValue::Known(name),
            None => EnumValue::UnknownNumber(number.to_string()),
        }
    }

    /// How a refusal describes the enum: `a Role (ROLE_UNSPECIFIED = 0, ROLE_USER = 1, …)`.
    pub fn describe(&self) -> String {
        let values: Vec<String> = self
            .values
            .iter()
            .map(|(name, n)| format!("{name} = {n}"))
            .collect();
        format!("a {} ({})", self.name, values.join(", "))
    }
}

/// The proto (snake_case) name of a field from its JSON name: `referenceTaskIds` is
/// `reference_task_ids`, `oauth2MetadataUrl` is `oauth2_metadata_url` (protoc's JSON name
/// is the proto name with each `_x` turned into `X`, so this is its inverse for the proto's
/// fields).
pub fn proto_name(json_name: &str) -> String {
    let mut out = String::with_capacity(json_name.len() + 4);
    for c in json_name.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn numbers_are_the_protos() {
        assert_eq!(ROLE.name_of(0), Some("ROLE_UNSPECIFIED"));
        assert_eq!(ROLE.name_of(1), Some("ROLE_USER"));
        assert_eq!(ROLE.name_of(2), Some("ROLE_AGENT"));
        assert_eq!(ROLE.name_of(3), None);
        assert_eq!(TASK_STATE.name_of(3), Some("TASK_STATE_COMPLETED"));
        assert_eq!(TASK_STATE.name_of(6), Some("TASK_STATE_INPUT_REQUIRED"));
        assert_eq!(TASK_STATE.name_of(8), Some("TASK_STATE_AUTH_REQUIRED"));
        assert_eq!(TASK_STATE.name_of(9), None);
        // The names are those the a2a-lf types write.
        for (name, _) in ROLE.values {
            let role: a2a::Role = serde_json::from_value(json!(name)).expect(name);
            assert_eq!(serde_json::to_value(role).expect("role"), json!(name));
        }
        for (name, _) in TASK_STATE.values {
            let state: a2a::TaskState = serde_json::from_value(json!(name)).expect(name);
            assert_eq!(serde_json::to_value(state).expect("state"), json!(name));
        }
    }

    #[test]
    fn values_read_by_name_or_number() {
        let known = |s| EnumValue::Known(s);
        assert_eq!(ROLE.read(&json!(1)), known("ROLE_USER"));
        assert_eq!(ROLE.read(&json!("ROLE_AGENT")), known("ROLE_AGENT"));
        assert_eq!(ROLE.read(&json!("2")), known("ROLE_AGENT"));
        assert_eq!(TASK_STATE.read(&json!(5)), known("TASK_STATE_CANCELED"));
        assert_eq!(ROLE.read(&json!("user")), EnumValue::Name);
        assert_eq!(ROLE.read(&json!(7)), EnumValue::UnknownNumber("7".into()));
        assert_eq!(ROLE.read(&json!(-1)), EnumValue::UnknownNumber("-1".into()));
        assert_eq!(
            ROLE.read(&json!(1.5)),
            EnumValue::UnknownNumber("1.5".into())
        );
        assert_eq!(
            ROLE.read(&json!("99")),
            EnumValue::UnknownNumber("99".into())
        );
        assert_eq!(ROLE.read(&json!(true)), EnumValue::NotAnEnum);
        assert_eq!(ROLE.read(&json!({})), EnumValue::NotAnEnum);
        assert!(
            ROLE.describe().contains("ROLE_USER = 1"),
            "{}",
            ROLE.describe()
        );
    }

    #[test]
    fn proto_names_are_snake_case() {
        assert_eq!(proto_name("messageId"), "message_id");
        assert_eq!(proto_name("referenceTaskIds"), "reference_task_ids");
        assert_eq!(
            proto_name("taskPushNotificationConfig"),
            "task_push_notification_config"
        );
        assert_eq!(proto_name("oauth2MetadataUrl"), "oauth2_metadata_url");
        assert_eq!(proto_name("id"), "id");
    }
}
