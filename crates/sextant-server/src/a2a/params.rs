//! The JSON type of every field of every A2A method's params, checked before a handler reads
//! any of them; and ProtoJSON's other spellings of them, read as the canonical ones first.
//!
//! **ProtoJSON** ([`normalize`], the first step of [`prepare`], which every binding's params
//! go through): a field may be named by its JSON name (`messageId`) or its proto name
//! (`message_id`), as Python's `json_format`, a2a-js and pbjson read it; an enum field
//! (`message.role`, ListTasks' `status`) may carry its value's name or number (`"role": 1`
//! is `ROLE_USER`, Hermes sends that). Both are rewritten to the canonical form (JSON names,
//! enum names) before anything else reads the params, so the checks, the 0.3 conversion and
//! the typed reading below see one spelling. A field named both ways is -32602 (which one
//! counts would be a guess), and so is a number the enum does not have, naming the field.
//! Only the fields the schema knows are renamed: metadata maps and `Part.data` keep their
//! keys as sent. Answers are always canonical.
//!
//! A field of the wrong JSON type is -32602 with a `google.rpc.BadRequest` naming it by its
//! path (`contextId`, `message.parts[2].mediaType`, `configuration.historyLength`), never
//! ignored: a `contextId: true` that was read as "no filter" listed every task of the caller.
//! `null` is the same as an absent field (ProtoJSON's default), and unknown fields are ignored
//! (ProtoJSON parsers may, and the SDKs add fields across minor versions). What a field's value
//! means (a known state, a positive page size, a token from a previous page) is the handler's
//! check; this module knows only shapes.
//!
//! The push-config methods have schemas too; an Agent without push notifications refuses them
//! before their params are read (`a2a`), so only a push-enabled Agent's callers see these
//! checks.

use serde_json::Value;
use sextant_a2a::error::Code;
use sextant_a2a::protojson::{self, EnumValue, ProtoEnum};
use sextant_a2a::rpc::{RpcId, parse_request};
use sextant_a2a::{Method, RpcError, compat};

/// A field's JSON type.
#[derive(Debug, Clone, Copy)]
pub enum Ty {
    Str,
    /// An integer (a number without a fraction).
    Int,
    Bool,
    /// An object of known fields.
    Obj(&'static [(&'static str, Ty)]),
    /// An object with any keys (metadata maps).
    Map,
    /// An array whose items are all of one type.
    List(&'static Ty),
    /// Any JSON value (`Part.data`).
    Any,
    /// A proto enum: its name (a string) once [`normalize`] has read a number as its name.
    Enum(&'static ProtoEnum),
}

impl Ty {
    fn expected(&self) -> &'static str {
        match self {
            Ty::Str | Ty::Enum(_) => "must be a string",
            Ty::Int => "must be an integer",
            Ty::Bool => "must be true or false",
            Ty::Obj(_) | Ty::Map => "must be an object",
            Ty::List(_) => "must be an array",
            Ty::Any => "",
        }
    }
}

const STR: Ty = Ty::Str;

const PART: &[(&str, Ty)] = &[
    ("text", Ty::Str),
    ("raw", Ty::Str),
    ("url", Ty::Str),
    ("data", Ty::Any),
    ("filename", Ty::Str),
    ("mediaType", Ty::Str),
    ("metadata", Ty::Map),
    // 0.3 parts (converted after this check): `kind` and a `file` object.
    ("kind", Ty::Str),
    ("file", Ty::Map),
];
const PART_TY: Ty = Ty::Obj(PART);

const MESSAGE: &[(&str, Ty)] = &[
    ("messageId", Ty::Str),
    ("contextId", Ty::Str),
    ("taskId", Ty::Str),
    ("role", Ty::Enum(&protojson::ROLE)),
    ("parts", Ty::List(&PART_TY)),
    ("metadata", Ty::Map),
    ("extensions", Ty::List(&STR)),
    ("referenceTaskIds", Ty::List(&STR)),
    ("kind", Ty::Str),
];

/// A 1.0 `AuthenticationInfo`, with 0.3's `schemes` (converted after this check).
const PUSH_AUTH: &[(&str, Ty)] = &[
    ("scheme", Ty::Str),
    ("credentials", Ty::Str),
    ("schemes", Ty::List(&STR)),
];

/// A 0.3 `PushNotificationConfig` (the config without its task).
const PUSH_CONFIG_V03: &[(&str, Ty)] = &[
    ("id", Ty::Str),
    ("url", Ty::Str),
    ("token", Ty::Str),
    ("authentication", Ty::Obj(PUSH_AUTH)),
];

/// A 1.0 `TaskPushNotificationConfig`: the CreateTaskPushNotificationConfig params, and
/// `configuration.taskPushNotificationConfig` of a SendMessage.
const PUSH_CONFIG: &[(&str, Ty)] = &[
    ("tenant", Ty::Str),
    ("id", Ty::Str),
    ("taskId", Ty::Str),
    ("url", Ty::Str),
    ("token", Ty::Str),
    ("authentication", Ty::Obj(PUSH_AUTH)),
    // 0.3's `tasks/pushNotificationConfig/set`: the config nests under this name.
    ("pushNotificationConfig", Ty::Obj(PUSH_CONFIG_V03)),
    ("metadata", Ty::Map),
];

/// Get and Delete: 1.0 names the task `taskId` and the config `id`; 0.3 names the task `id`
/// and the config `pushNotificationConfigId` (same types, converted after this check).
const PUSH_CONFIG_REF: &[(&str, Ty)] = &[
    ("tenant", Ty::Str),
    ("taskId", Ty::Str),
    ("id", Ty::Str),
    ("pushNotificationConfigId", Ty::Str),
    ("metadata", Ty::Map),
];

const LIST_PUSH_CONFIGS: &[(&str, Ty)] = &[
    ("tenant", Ty::Str),
    ("taskId", Ty::Str),
    ("pageSize", Ty::Int),
    ("pageToken", Ty::Str),
    // 0.3 names the task `id`.
    ("id", Ty::Str),
    ("metadata", Ty::Map),
];

const CONFIGURATION: &[(&str, Ty)] = &[
    ("acceptedOutputModes", Ty::List(&STR)),
    ("taskPushNotificationConfig", Ty::Obj(PUSH_CONFIG)),
    // 0.3's name of the same setting, and its shape (no task id).
    ("pushNotificationConfig", Ty::Obj(PUSH_CONFIG_V03)),
    ("historyLength", Ty::Int),
    ("returnImmediately", Ty::Bool),
    // 0.3's inverse of returnImmediately.
    ("blocking", Ty::Bool),
];

const SEND: &[(&str, Ty)] = &[
    ("tenant", Ty::Str),
    ("message", Ty::Obj(MESSAGE)),
    ("configuration", Ty::Obj(CONFIGURATION)),
    ("metadata", Ty::Map),
];

const GET_TASK: &[(&str, Ty)] = &[
    ("tenant", Ty::Str),
    ("id", Ty::Str),
    ("historyLength", Ty::Int),
    // 0.3 clients send it on tasks/get.
    ("metadata", Ty::Map),
];

const LIST_TASKS: &[(&str, Ty)] = &[
    ("tenant", Ty::Str),
    ("contextId", Ty::Str),
    ("status", Ty::Enum(&protojson::TASK_STATE)),
    ("pageSize", Ty::Int),
    ("pageToken", Ty::Str),
    ("historyLength", Ty::Int),
    ("statusTimestampAfter", Ty::Str),
    ("includeArtifacts", Ty::Bool),
];

const CANCEL_TASK: &[(&str, Ty)] = &[("tenant", Ty::Str), ("id", Ty::Str), ("metadata", Ty::Map)];

const SUBSCRIBE: &[(&str, Ty)] = &[("tenant", Ty::Str), ("id", Ty::Str), ("metadata", Ty::Map)];

const EXTENDED_CARD: &[(&str, Ty)] = &[("tenant", Ty::Str)];

/// The fields of `method`'s params (`None` for a method whose params are not read).
pub fn schema(method: Method) -> Option<&'static [(&'static str, Ty)]> {
    Some(match method {
        Method::SendMessage | Method::SendStreamingMessage => SEND,
        Method::GetTask => GET_TASK,
        Method::ListTasks => LIST_TASKS,
        Method::CancelTask => CANCEL_TASK,
        Method::SubscribeToTask => SUBSCRIBE,
        Method::GetExtendedAgentCard => EXTENDED_CARD,
        Method::CreatePushConfig => PUSH_CONFIG,
        Method::GetPushConfig | Method::DeletePushConfig => PUSH_CONFIG_REF,
        Method::ListPushConfigs => LIST_PUSH_CONFIGS,
    })
}

/// The params of a GET or DELETE in the HTTP+JSON binding, from its query string (spec
/// §11.5): `method`'s fields by their JSON (camelCase) or proto (snake_case) names, each value
/// read as the field's type (a decimal integer, `true`/`false`, a string; an enum's name or
/// number, read by [`normalize`] later). A name the method does not know is ignored, as an
/// unknown JSON field is; a value that does not read as its type, a field given twice (by
/// either name), or an object-typed field are -32602 naming the field.
pub fn from_query(method: Method, query: Option<&str>) -> Result<Value, RpcError> {
    let fields = schema(method).unwrap_or(&[]);
    let mut params = serde_json::Map::new();
    for (name, value) in url::form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
        let Some((name, ty)) = fields
            .iter()
            .find(|(n, _)| *n == name || protojson::proto_name(n) == name)
        else {
            continue;
        };
        let v = match ty {
            Ty::Str | Ty::Enum(_) => Value::String(value.into_owned()),
            Ty::Int => match value.trim().parse::<i64>() {
                Ok(n) => Value::from(n),
                Err(_) => return Err(RpcError::field(name, ty.expected())),
            },
            Ty::Bool => match value.as_ref() {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                _ => return Err(RpcError::field(name, ty.expected())),
            },
            _ => {
                return Err(RpcError::field(
                    name,
                    "cannot be given as a query parameter; send it in a request body",
                ));
            }
        };
        if params.insert((*name).to_string(), v).is_some() {
            return Err(RpcError::field(name, "is given more than once"));
        }
    }
    Ok(Value::Object(params))
}

/// Checks the type of every known field of `params` (an object, keys camelCased) for
/// `method`: the first wrong one is -32602 naming its path.
pub fn check(method: Method, params: &Value) -> Result<(), RpcError> {
    match schema(method) {
        Some(fields) => check_object(fields, params, ""),
        None => Ok(()),
    }
}

fn check_object(fields: &[(&str, Ty)], v: &Value, path: &str) -> Result<(), RpcError> {
    let Some(obj) = v.as_object() else {
        return Err(RpcError::field(path, "must be an object"));
    };
    for (name, ty) in fields {
        match obj.get(*name) {
            None | Some(Value::Null) => {}
            Some(v) => {
                let here = if path.is_empty() {
                    (*name).to_string()
                } else {
                    format!("{path}.{name}")
                };
                check_value(ty, v, &here)?;
            }
        }
    }
    Ok(())
}

fn check_value(ty: &Ty, v: &Value, path: &str) -> Result<(), RpcError> {
    let fits = match (ty, v) {
        (Ty::Any, _) => true,
        (Ty::Str | Ty::Enum(_), Value::String(_))
        | (Ty::Bool, Value::Bool(_))
        | (Ty::Map, Value::Object(_)) => true,
        (Ty::Int, Value::Number(n)) => n.is_i64() || n.is_u64(),
        (Ty::Obj(fields), Value::Object(_)) => return check_object(fields, v, path),
        (Ty::List(item), Value::Array(items)) => {
            for (i, x) in items.iter().enumerate() {
                let here = format!("{path}[{i}]");
                if x.is_null() {
                    return Err(RpcError::field(&here, item.expected()));
                }
                check_value(item, x, &here)?;
            }
            true
        }
        _ => false,
    };
    if fits {
        Ok(())
    } else {
        Err(RpcError::field(path, ty.expected()))
    }
}

/// Params as the handlers read them: ProtoJSON's spellings made canonical ([`normalize`]),
/// every field's type checked, and 0.3 SendMessage and push-config params converted to 1.0.
/// The one path [`crate::a2a`] and the fuzz suite share.
pub fn prepare(method: Method, legacy: bool, mut params: Value) -> Result<Value, RpcError> {
    normalize(method, &mut params)?;
    check(method, &params)?;
    let send = matches!(method, Method::SendMessage | Method::SendStreamingMessage);
    if send && legacy {
        compat::send_params_to_v1(&mut params);
    }
    if legacy && method.is_push_config() {
        compat::push_params_to_v1(method, &mut params);
    }
    Ok(params)
}

/// Rewrites `params` (of `method`) to canonical ProtoJSON, as far as the schema knows its
/// fields: a field named by its proto name gets its JSON name, an enum value given by its
/// number gets its name (see the module docs). -32602 naming the field for a field given by
/// both names and for a number the enum does not have. A value of the wrong JSON type is
/// left for [`check`] to name.
pub fn normalize(method: Method, params: &mut Value) -> Result<(), RpcError> {
    match schema(method) {
        Some(fields) => normalize_object(fields, params, ""),
        None => Ok(()),
    }
}

fn normalize_object(fields: &[(&str, Ty)], v: &mut Value, path: &str) -> Result<(), RpcError> {
    let Some(obj) = v.as_object_mut() else {
        return Ok(());
    };
    for (name, ty) in fields {
        let here = if path.is_empty() {
            (*name).to_string()
        } else {
            format!("{path}.{name}")
        };
        let proto = protojson::proto_name(name);
        if proto != *name
            && let Some(value) = obj.remove(&proto)
        {
            if obj.get(*name).is_some_and(|v| !v.is_null()) && !value.is_null() {
                return Err(RpcError::field(
                    &here,
                    format!("is given twice, as {name:?} and as {proto:?}: send one"),
                ));
            }
            if !value.is_null() {
                obj.insert((*name).to_string(), value);
            }
        }
        if let Some(value) = obj.get_mut(*name) {
            normalize_value(ty, value, &here)?;
        }
    }
    Ok(())
}

fn normalize_value(ty: &Ty, v: &mut Value, path: &str) -> Result<(), RpcError> {
    match ty {
        Ty::Obj(fields) => normalize_object(fields, v, path),
        Ty::List(item) => match v.as_array_mut() {
            Some(items) => {
                for (i, x) in items.iter_mut().enumerate() {
                    normalize_value(item, x, &format!("{path}[{i}]"))?;
                }
                Ok(())
            }
            None => Ok(()),
        },
        Ty::Enum(e) => match e.read(v) {
            EnumValue::Known(name) => {
                *v = Value::String(name.to_string());
                Ok(())
            }
            EnumValue::UnknownNumber(n) => Err(RpcError::field(
                path,
                format!("{n} is not {}", e.describe()),
            )),
            EnumValue::Name | EnumValue::NotAnEnum => Ok(()),
        },
        Ty::Str | Ty::Int | Ty::Bool | Ty::Map | Ty::Any => Ok(()),
    }
}

/// A JSON-RPC request checked as far as it can be without the journal: the envelope, the
/// method, and the params' shapes (a SendMessage's down to its parts). `Err` holds the id to
/// answer with and the error.
pub fn parse_call(body: &[u8]) -> Result<(RpcId, Method, Value), (RpcId, RpcError)> {
    let req = parse_request(body)?;
    let id = req.id;
    let Some((method, legacy)) = sextant_a2a::method::lookup(&req.method) else {
        let err = RpcError::new(
            Code::MethodNotFound,
            format!("Method not found: {}", req.method),
        );
        return Err((id, err));
    };
    // Whether the Agent sends push notifications is the handler's to say; the shapes of the
    // push-config params are checked here as for a push-enabled Agent.
    let params = prepare(method, legacy, req.params).map_err(|e| (id.clone(), e))?;
    if matches!(method, Method::SendMessage | Method::SendStreamingMessage) {
        let _: sextant_core::a2a::SendMessageRequest =
            typed("SendMessageRequest", params.clone()).map_err(|e| (id.clone(), e))?;
    }
    Ok((id, method, params))
}

/// Deserialises checked params into `T`; a failure names the path serde stopped at.
pub fn typed<T: serde::de::DeserializeOwned>(what: &str, params: Value) -> Result<T, RpcError> {
    serde_path_to_error::deserialize(params).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner().to_string();
        if path.is_empty() || path == "." {
            RpcError::new(Code::InvalidParams, format!("Invalid {what}: {inner}"))
        } else {
            RpcError::field(&path, inner)
        }
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn field_of(e: &RpcError) -> String {
        e.to_json()["data"][1]["fieldViolations"][0]["field"]
            .as_str()
            .unwrap_or("")
            .to_string()
    }

    #[test]
    fn wrong_types_are_named_by_path() {
        let cases = [
            (Method::ListTasks, json!({ "contextId": true }), "contextId"),
            (Method::ListTasks, json!({ "pageSize": 1.5 }), "pageSize"),
            (Method::GetTask, json!({ "id": 5 }), "id"),
            (
                Method::SendMessage,
                json!({ "message": { "parts": [{ "text": "x" }, { "mediaType": 3 }] } }),
                "message.parts[1].mediaType",
            ),
            (
                Method::SendMessage,
                json!({ "message": { "extensions": [null] } }),
                "message.extensions[0]",
            ),
            (
                Method::SendMessage,
                json!({ "configuration": { "historyLength": "3" } }),
                "configuration.historyLength",
            ),
        ];
        for (method, params, path) in cases {
            let e = check(method, &params).expect_err(path);
            assert_eq!(field_of(&e), path, "{params}");
        }
    }

    #[test]
    fn null_and_unknown_fields_pass() {
        let p = json!({ "contextId": null, "somethingNew": [1, 2], "pageSize": 5 });
        assert!(check(Method::ListTasks, &p).is_ok());
    }

    #[test]
    fn push_config_fields_are_typed() {
        let cases = [
            (Method::CreatePushConfig, json!({ "taskId": 1 }), "taskId"),
            (Method::CreatePushConfig, json!({ "url": ["u"] }), "url"),
            (
                Method::CreatePushConfig,
                json!({ "authentication": { "scheme": 1 } }),
                "authentication.scheme",
            ),
            (
                Method::CreatePushConfig,
                json!({ "pushNotificationConfig": { "authentication": { "schemes": "Bearer" } } }),
                "pushNotificationConfig.authentication.schemes",
            ),
            (Method::GetPushConfig, json!({ "id": false }), "id"),
            (Method::DeletePushConfig, json!({ "taskId": {} }), "taskId"),
            (
                Method::ListPushConfigs,
                json!({ "pageSize": "2" }),
                "pageSize",
            ),
            (
                Method::ListPushConfigs,
                json!({ "pageToken": 2 }),
                "pageToken",
            ),
            (
                Method::SendMessage,
                json!({ "configuration": { "taskPushNotificationConfig": { "token": 5 } } }),
                "configuration.taskPushNotificationConfig.token",
            ),
            (
                Method::SendMessage,
                json!({ "configuration": { "taskPushNotificationConfig": "https://x" } }),
                "configuration.taskPushNotificationConfig",
            ),
        ];
        for (method, params, path) in cases {
            let e = check(method, &params).expect_err(path);
            assert_eq!(field_of(&e), path, "{params}");
        }
    }

    fn prepared(method: Method, params: Value) -> Value {
        prepare(method, false, params).expect("prepared")
    }

    #[test]
    fn enums_are_read_by_number_or_name() {
        let send = |role: Value| {
            let p = json!({ "message": { "messageId": "m", "role": role, "parts": [{ "text": "x" }] } });
            prepared(Method::SendMessage, p)["message"]["role"].clone()
        };
        assert_eq!(send(json!(1)), "ROLE_USER");
        assert_eq!(send(json!(2)), "ROLE_AGENT");
        assert_eq!(
            send(json!("1")),
            "ROLE_USER",
            "json_format reads a number in a string"
        );
        assert_eq!(
            send(json!(0)),
            "ROLE_UNSPECIFIED",
            "refused later, as its name is"
        );
        assert_eq!(send(json!("ROLE_AGENT")), "ROLE_AGENT");
        let list = |status: Value| prepared(Method::ListTasks, json!({ "status": status }));
        assert_eq!(list(json!(3))["status"], "TASK_STATE_COMPLETED");
        assert_eq!(list(json!(8))["status"], "TASK_STATE_AUTH_REQUIRED");
        assert_eq!(
            list(json!("TASK_STATE_WORKING"))["status"],
            "TASK_STATE_WORKING"
        );
        // The 0.3 names are left for the 0.3 conversion.
        let legacy = prepare(
            Method::SendMessage,
            true,
            json!({ "message": { "messageId": "m", "role": "user", "parts": [{ "kind": "text", "text": "x" }] } }),
        )
        .expect("0.3");
        assert_eq!(legacy["message"]["role"], "ROLE_USER");
        let legacy = prepare(
            Method::SendMessage,
            true,
            json!({ "message": { "messageId": "m", "role": 2, "parts": [{ "kind": "text", "text": "x" }] } }),
        )
        .expect("0.3 with a number");
        assert_eq!(legacy["message"]["role"], "ROLE_AGENT");
    }

    #[test]
    fn unknown_enum_numbers_are_refused_naming_the_field() {
        let cases = [
            (
                Method::SendMessage,
                json!({ "message": { "messageId": "m", "role": 7, "parts": [] } }),
                "message.role",
            ),
            (
                Method::SendMessage,
                json!({ "message": { "message_id": "m", "role": -1 } }),
                "message.role",
            ),
            (
                Method::SendMessage,
                json!({ "message": { "role": 1.5 } }),
                "message.role",
            ),
            (
                Method::SendMessage,
                json!({ "message": { "role": "9" } }),
                "message.role",
            ),
            (Method::ListTasks, json!({ "status": 42 }), "status"),
            (Method::ListTasks, json!({ "status": "9" }), "status"),
        ];
        for (method, params, path) in cases {
            let e = prepare(method, false, params.clone()).expect_err(path);
            assert_eq!(e.code, Code::InvalidParams, "{params}");
            assert_eq!(field_of(&e), path, "{params}");
            assert!(e.message.contains("is not a "), "{}", e.message);
        }
        // Not a string nor a number: the type check names it.
        let e = prepare(Method::ListTasks, false, json!({ "status": true })).expect_err("bool");
        assert_eq!(field_of(&e), "status");
        assert!(e.message.contains("must be a string"), "{}", e.message);
    }

    #[test]
    fn proto_field_names_are_read_as_json_names() {
        let p = prepared(
            Method::ListTasks,
            json!({ "context_id": "c", "page_size": 2, "page_token": "t", "history_length": 1,
                    "status_timestamp_after": "2026-01-01T00:00:00Z", "include_artifacts": true,
                    "tenant": "x" }),
        );
        assert_eq!(
            p,
            json!({ "contextId": "c", "pageSize": 2, "pageToken": "t", "historyLength": 1,
                    "statusTimestampAfter": "2026-01-01T00:00:00Z", "includeArtifacts": true,
                    "tenant": "x" })
        );
        let p = prepared(Method::GetTask, json!({ "id": "t", "history_length": 0 }));
        assert_eq!(p, json!({ "id": "t", "historyLength": 0 }));
        let p = prepared(
            Method::CreatePushConfig,
            json!({ "task_id": "t", "url": "https://h/w", "authentication": { "scheme": "Bearer" } }),
        );
        assert_eq!(p["taskId"], "t");
        assert!(p.get("task_id").is_none());
        let p = prepared(
            Method::ListPushConfigs,
            json!({ "task_id": "t", "page_size": 5, "page_token": "p" }),
        );
        assert_eq!(p, json!({ "taskId": "t", "pageSize": 5, "pageToken": "p" }));
        // A snake_case name the request does not have stays as it is (and is ignored).
        let p = prepared(Method::GetTask, json!({ "id": "t", "not_a_field": 1 }));
        assert_eq!(p, json!({ "id": "t", "not_a_field": 1 }));
    }

    #[test]
    fn a_hermes_send_message_is_read_whole() {
        // Hermes' SendMessage: the role by number, every id and setting by its proto name,
        // down to the parts and the inline push config; metadata keys stay as sent.
        let params = json!({
            "message": {
                "message_id": "m1", "context_id": "c1", "task_id": "t1", "role": 1,
                "parts": [
                    { "text": "hi", "media_type": "text/plain" },
                    { "data": { "snake_key": 1 }, "metadata": { "keep_me": true } },
                ],
                "reference_task_ids": ["t0"],
                "metadata": { "trace_id": "x" },
            },
            "configuration": {
                "accepted_output_modes": ["text/plain"],
                "history_length": 3,
                "return_immediately": true,
                "task_push_notification_config": {
                    "url": "https://h/w", "task_id": "t1",
                    "authentication": { "scheme": "Bearer", "credentials": "c" },
                },
            },
            "metadata": { "some_key": "v" },
        });
        let p = prepared(Method::SendMessage, params);
        assert_eq!(
            p,
            json!({
                "message": {
                    "messageId": "m1", "contextId": "c1", "taskId": "t1", "role": "ROLE_USER",
                    "parts": [
                        { "text": "hi", "mediaType": "text/plain" },
                        { "data": { "snake_key": 1 }, "metadata": { "keep_me": true } },
                    ],
                    "referenceTaskIds": ["t0"],
                    "metadata": { "trace_id": "x" },
                },
                "configuration": {
                    "acceptedOutputModes": ["text/plain"],
                    "historyLength": 3,
                    "returnImmediately": true,
                    "taskPushNotificationConfig": {
                        "url": "https://h/w", "taskId": "t1",
                        "authentication": { "scheme": "Bearer", "credentials": "c" },
                    },
                },
                "metadata": { "some_key": "v" },
            })
        );
        let req: sextant_core::a2a::SendMessageRequest =
            typed("SendMessageRequest", p).expect("typed");
        assert_eq!(req.message.role, sextant_core::a2a::Role::User);
        assert_eq!(req.message.message_id, "m1");
        assert_eq!(req.message.context_id.as_deref(), Some("c1"));
        // Through the whole JSON-RPC path as well.
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
            "message": { "message_id": "m", "role": 1, "parts": [{ "text": "x" }] } } });
        let (_, method, p) = parse_call(body.to_string().as_bytes()).expect("parsed");
        assert_eq!(method, Method::SendMessage);
        assert_eq!(p["message"]["role"], "ROLE_USER");
        assert_eq!(p["message"]["messageId"], "m");
    }

    #[test]
    fn a_field_named_both_ways_is_refused() {
        let cases = [
            (
                Method::GetTask,
                json!({ "historyLength": 1, "history_length": 2 }),
                "historyLength",
            ),
            (
                Method::SendMessage,
                json!({ "message": { "messageId": "a", "message_id": "b" } }),
                "message.messageId",
            ),
            (
                Method::SendMessage,
                json!({ "configuration": { "historyLength": 1, "history_length": 1 } }),
                "configuration.historyLength",
            ),
        ];
        for (method, params, path) in cases {
            let e = prepare(method, false, params.clone()).expect_err(path);
            assert_eq!(field_of(&e), path, "{params}");
        }
        // A null one is an absent one.
        let p = prepared(
            Method::GetTask,
            json!({ "historyLength": null, "history_length": 2 }),
        );
        assert_eq!(p, json!({ "historyLength": 2 }));
        let p = prepared(
            Method::GetTask,
            json!({ "historyLength": 2, "history_length": null }),
        );
        assert_eq!(p, json!({ "historyLength": 2 }));
    }

    #[test]
    fn query_params_take_proto_names_and_enum_numbers() {
        let q = "context_id=c&status=3&page_size=2&include_artifacts=true";
        let p = from_query(Method::ListTasks, Some(q)).expect("query");
        assert_eq!(
            p,
            json!({ "contextId": "c", "status": "3", "pageSize": 2, "includeArtifacts": true })
        );
        assert_eq!(
            prepared(Method::ListTasks, p)["status"],
            "TASK_STATE_COMPLETED"
        );
        let e = from_query(Method::GetTask, Some("historyLength=1&history_length=2"))
            .expect_err("twice");
        assert_eq!(field_of(&e), "historyLength");
        let p = from_query(Method::ListTasks, Some("status=42")).expect("query");
        let e = prepare(Method::ListTasks, false, p).expect_err("42");
        assert_eq!(field_of(&e), "status");
    }

    #[test]
    fn query_params_read_as_their_fields_types() {
        let q = "contextId=c%201&status=TASK_STATE_WORKING&pageSize=20&includeArtifacts=true\
                 &historyLength=0&statusTimestampAfter=2026-12-02T10%3A00%3A00Z&unknown=x&A2A-Version=1.0";
        let p = from_query(Method::ListTasks, Some(q)).unwrap();
        assert_eq!(
            p,
            json!({
                "contextId": "c 1", "status": "TASK_STATE_WORKING", "pageSize": 20,
                "includeArtifacts": true, "historyLength": 0,
                "statusTimestampAfter": "2026-12-02T10:00:00Z",
            })
        );
        assert_eq!(from_query(Method::GetTask, None).unwrap(), json!({}));
        let bad = [
            (Method::GetTask, "historyLength=ten", "historyLength"),
            (Method::GetTask, "historyLength=1.5", "historyLength"),
            (
                Method::ListTasks,
                "includeArtifacts=yes",
                "includeArtifacts",
            ),
            (
                Method::ListTasks,
                "includeArtifacts=TRUE",
                "includeArtifacts",
            ),
            (Method::ListTasks, "pageSize=1&pageSize=2", "pageSize"),
            (Method::GetTask, "metadata=x", "metadata"),
        ];
        for (method, q, field) in bad {
            let e = from_query(method, Some(q)).expect_err(q);
            assert_eq!(field_of(&e), field, "{q}");
        }
    }
}
