//! The JSON type of every field of every A2A method's params, checked before a handler reads
//! any of them.
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
use sextant_a2a::rpc::{RpcId, camelize_keys, parse_request};
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
}

impl Ty {
    fn expected(&self) -> &'static str {
        match self {
            Ty::Str => "must be a string",
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
    ("role", Ty::Str),
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
    ("status", Ty::Str),
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
/// §11.5): camelCase names of `method`'s fields, each value read as the field's type (a
/// decimal integer, `true`/`false`, a string). A name the method does not know is ignored, as
/// an unknown JSON field is; a value that does not read as its type, a known name given
/// twice, or an object-typed field are -32602 naming the field.
pub fn from_query(method: Method, query: Option<&str>) -> Result<Value, RpcError> {
    let fields = schema(method).unwrap_or(&[]);
    let mut params = serde_json::Map::new();
    for (name, value) in url::form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
        let Some((name, ty)) = fields.iter().find(|(n, _)| *n == name) else {
            continue;
        };
        let v = match ty {
            Ty::Str => Value::String(value.into_owned()),
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
        (Ty::Str, Value::String(_)) | (Ty::Bool, Value::Bool(_)) | (Ty::Map, Value::Object(_)) => {
            true
        }
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

/// Params as the handlers read them: keys camelCased (ProtoJSON accepts snake_case too; the
/// message's and configuration's own keys as well), every field's type checked, and 0.3
/// SendMessage and push-config params converted to 1.0. The one path [`crate::a2a`] and the fuzz suite share.
pub fn prepare(method: Method, legacy: bool, mut params: Value) -> Result<Value, RpcError> {
    camelize_keys(&mut params);
    let send = matches!(method, Method::SendMessage | Method::SendStreamingMessage);
    if send {
        for key in ["configuration", "message"] {
            if let Some(v) = params.get_mut(key) {
                camelize_keys(v);
            }
        }
        if let Some(v) = params.pointer_mut("/configuration/taskPushNotificationConfig") {
            camelize_keys(v);
        }
    }
    check(method, &params)?;
    if send && legacy {
        compat::send_params_to_v1(&mut params);
    }
    if legacy && method.is_push_config() {
        compat::push_params_to_v1(method, &mut params);
    }
    Ok(params)
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
