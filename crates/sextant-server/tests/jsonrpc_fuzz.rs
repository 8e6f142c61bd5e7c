//! Property tests over the JSON-RPC layer (`sextant_server::a2a::params::parse_call`: the envelope,
//! the method table with its 0.3 aliases, snake_case keys, every param's type (the push-config
//! methods' included), a SendMessage down to its parts): arbitrary bytes, arbitrary JSON, and well-formed calls with one field
//! replaced by a value of any type, with hostile strings throughout (NUL, bidi and zero-width
//! characters, ANSI escapes, separators).
//!
//! Properties: nothing panics; every refusal is a well-formed A2A error with one of the codes
//! the layer may give; a request whose id is valid gets it back; a field of the wrong JSON type
//! is -32602 naming that field (or a part of it), and a field of the right type is never
//! blamed for its type.
//!
//! Cases per property: `SEXTANT_FUZZ_CASES` (CI: the default, 4,000 each; the README states
//! the local run of 10^6 and more).

#![allow(clippy::unwrap_used)]

use proptest::prelude::*;
use serde_json::{Value, json};
use sextant_server::a2a::params::parse_call;

fn cases() -> u32 {
    std::env::var("SEXTANT_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4_000)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Strings a hostile caller sends: printable, control, bidi, zero-width, ANSI, separators.
fn hostile_string() -> impl Strategy<Value = String> {
    prop_oneof![
        "\\PC{0,12}",
        Just("\u{202e}evil\u{202c}".to_string()),
        Just("zero\u{200b}width\u{feff}".to_string()),
        Just("\u{1b}[31mred\u{1b}[0m".to_string()),
        Just("a\0b\r\n${IFS}c;|&`$(x)".to_string()),
        Just(String::new()),
        Just("ROLE_USER".to_string()),
        Just("TASK_STATE_COMPLETED".to_string()),
        Just("2026-01-01T00:00:00Z".to_string()),
    ]
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        hostile_string().prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((hostile_string(), inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

const METHODS: &[&str] = &[
    "SendMessage",
    "SendStreamingMessage",
    "GetTask",
    "ListTasks",
    "CancelTask",
    "SubscribeToTask",
    "GetExtendedAgentCard",
    "CreateTaskPushNotificationConfig",
    "GetTaskPushNotificationConfig",
    "ListTaskPushNotificationConfigs",
    "DeleteTaskPushNotificationConfig",
    "message/send",
    "message/stream",
    "tasks/get",
    "tasks/cancel",
    "tasks/resubscribe",
    "agent/getAuthenticatedExtendedCard",
    "tasks/pushNotificationConfig/set",
    "tasks/pushNotificationConfig/get",
    "tasks/pushNotificationConfig/list",
    "tasks/pushNotificationConfig/delete",
    "NoSuchMethod",
];

/// The codes the JSON-RPC layer may answer with before the journal is read.
const LAYER_CODES: &[i64] = &[-32700, -32600, -32601, -32602, -32003, -32005];

fn check_outcome(body: &[u8]) -> Option<(sextant_a2a::rpc::RpcId, sextant_a2a::RpcError)> {
    match parse_call(body) {
        Ok(_) => None,
        Err((id, err)) => {
            let e = err.to_json();
            let code = e["code"].as_i64().unwrap();
            assert!(LAYER_CODES.contains(&code), "code {code}: {e}");
            assert!(e["message"].as_str().is_some_and(|m| !m.is_empty()), "{e}");
            assert_eq!(e["data"][0]["domain"], "a2a-protocol.org", "{e}");
            let v = id.to_value();
            assert!(
                v.is_null() || v.is_string() || v.is_number(),
                "{}",
                id.raw()
            );
            let envelope = sextant_a2a::rpc::failure(&id, &err);
            assert!(
                serde_json::from_str::<Value>(&envelope).is_ok(),
                "{envelope}"
            );
            Some((id, err))
        }
    }
}

/// (method, path, a value of the right type) for every typed field.
fn fields() -> Vec<(&'static str, &'static str, Value)> {
    vec![
        ("SendMessage", "tenant", json!("t")),
        ("SendMessage", "metadata", json!({})),
        ("SendMessage", "configuration", json!({})),
        ("SendMessage", "message.messageId", json!("m")),
        ("SendMessage", "message.contextId", json!("c")),
        ("SendMessage", "message.taskId", json!("t")),
        ("SendMessage", "message.metadata", json!({})),
        ("SendMessage", "message.extensions", json!([])),
        ("SendMessage", "message.referenceTaskIds", json!([])),
        (
            "SendMessage",
            "configuration.acceptedOutputModes",
            json!([]),
        ),
        ("SendMessage", "configuration.historyLength", json!(1)),
        (
            "SendMessage",
            "configuration.returnImmediately",
            json!(true),
        ),
        ("GetTask", "tenant", json!("t")),
        ("GetTask", "id", json!("x")),
        ("GetTask", "historyLength", json!(1)),
        ("ListTasks", "tenant", json!("t")),
        ("ListTasks", "contextId", json!("c")),
        ("ListTasks", "status", json!("TASK_STATE_WORKING")),
        ("ListTasks", "pageSize", json!(10)),
        ("ListTasks", "pageToken", json!("")),
        ("ListTasks", "historyLength", json!(1)),
        (
            "ListTasks",
            "statusTimestampAfter",
            json!("2026-01-01T00:00:00Z"),
        ),
        ("ListTasks", "includeArtifacts", json!(false)),
        ("CancelTask", "tenant", json!("t")),
        ("CancelTask", "id", json!("x")),
        ("CancelTask", "metadata", json!({})),
        ("SubscribeToTask", "tenant", json!("t")),
        ("SubscribeToTask", "id", json!("x")),
        ("GetExtendedAgentCard", "tenant", json!("t")),
        (
            "SendMessage",
            "configuration.taskPushNotificationConfig",
            json!({}),
        ),
        (
            "SendMessage",
            "configuration.taskPushNotificationConfig.url",
            json!("https://h.example/w"),
        ),
        (
            "SendMessage",
            "configuration.taskPushNotificationConfig.authentication.scheme",
            json!("Bearer"),
        ),
        ("CreateTaskPushNotificationConfig", "taskId", json!("x")),
        ("CreateTaskPushNotificationConfig", "id", json!("c")),
        (
            "CreateTaskPushNotificationConfig",
            "url",
            json!("https://h.example/w"),
        ),
        ("CreateTaskPushNotificationConfig", "token", json!("t")),
        (
            "CreateTaskPushNotificationConfig",
            "authentication",
            json!({}),
        ),
        (
            "CreateTaskPushNotificationConfig",
            "authentication.scheme",
            json!("Bearer"),
        ),
        (
            "CreateTaskPushNotificationConfig",
            "authentication.credentials",
            json!("c"),
        ),
        ("GetTaskPushNotificationConfig", "taskId", json!("x")),
        ("GetTaskPushNotificationConfig", "id", json!("c")),
        ("ListTaskPushNotificationConfigs", "taskId", json!("x")),
        ("ListTaskPushNotificationConfigs", "pageSize", json!(5)),
        ("ListTaskPushNotificationConfigs", "pageToken", json!("")),
        ("DeleteTaskPushNotificationConfig", "taskId", json!("x")),
        ("DeleteTaskPushNotificationConfig", "id", json!("c")),
    ]
}

fn same_type(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x.is_f64() == y.is_f64() || (!x.is_f64() && !y.is_f64())
        }
        _ => std::mem::discriminant(a) == std::mem::discriminant(b),
    }
}

fn base_params(method: &str) -> Value {
    match method {
        "SendMessage" => json!({ "message": {
            "messageId": "m", "role": "ROLE_USER", "parts": [{ "text": "hi" }] } }),
        "GetTask" | "CancelTask" | "SubscribeToTask" => json!({ "id": "x" }),
        _ => json!({}),
    }
}

fn set_path(params: &mut Value, path: &str, value: Value) {
    let mut at = params;
    let mut parts = path.split('.').peekable();
    while let Some(p) = parts.next() {
        if parts.peek().is_none() {
            at[p] = value;
            return;
        }
        at = &mut at[p];
    }
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn arbitrary_bytes_never_panic(body in prop::collection::vec(any::<u8>(), 0..256)) {
        check_outcome(&body);
    }

    #[test]
    fn arbitrary_json_envelopes_never_panic(
        id in json_value(),
        method in prop_oneof![prop::sample::select(METHODS).prop_map(String::from), hostile_string()],
        params in json_value(),
        jsonrpc in prop_oneof![Just(json!("2.0")), json_value()],
    ) {
        let body = json!({ "jsonrpc": jsonrpc, "id": id, "method": method, "params": params });
        let out = check_outcome(body.to_string().as_bytes());
        // A valid id is echoed whenever the envelope got as far as the method.
        if let Some((got, err)) = out
            && (id.is_string() || id.is_number())
            && jsonrpc == "2.0"
            && err.code != sextant_a2a::error::Code::ParseError
            && err.code != sextant_a2a::error::Code::InvalidRequest
        {
            prop_assert_eq!(got.raw(), id.to_string());
        }
    }

    #[test]
    fn a_wrong_typed_field_is_named_and_a_right_typed_one_never_blamed(
        which in 0..64usize,
        value in json_value(),
        snake in any::<bool>(),
    ) {
        let fields = fields();
        let (method, path, good) = &fields[which % fields.len()];
        let mut params = base_params(method);
        set_path(&mut params, path, value.clone());
        if snake && !path.contains('.') {
            // ProtoJSON's snake_case spelling of a top-level key reads the same.
            let snake_key: String = path.chars().flat_map(|c| {
                if c.is_ascii_uppercase() { vec!['_', c.to_ascii_lowercase()] } else { vec![c] }
            }).collect();
            if let Some(o) = params.as_object_mut() && snake_key != *path {
                let v = o.remove(*path).unwrap_or(Value::Null);
                o.insert(snake_key, v);
            }
        }
        let body = json!({ "jsonrpc": "2.0", "id": 7, "method": method, "params": params });
        let out = check_outcome(body.to_string().as_bytes());
        let named = out.as_ref().map(|(_, e)| {
            e.to_json()["data"][1]["fieldViolations"][0]["field"].as_str().unwrap_or("").to_string()
        });
        let blamed = named.as_deref().is_some_and(|n| n == *path);
        if value.is_null() {
            // Null is absent: only a required field may then be named (as missing).
            let required = [
                "message.messageId",
                "message.role",
                "message.parts",
                "configuration.taskPushNotificationConfig.url",
                "configuration.taskPushNotificationConfig.authentication.scheme",
            ]
            .contains(path);
            prop_assert!(!blamed || required, "null is absent: {:?}", out);
        } else if same_type(&value, good) {
            let type_error = out.as_ref().is_some_and(|(_, e)| e.message.ends_with("must be a string")
                || e.message.ends_with("must be an integer")
                || e.message.ends_with("must be true or false"));
            prop_assert!(!(blamed && type_error), "right type blamed: {:?}", out);
        } else {
            let (_, err) = out.as_ref().expect("a wrong type is refused");
            prop_assert_eq!(err.code, sextant_a2a::error::Code::InvalidParams);
            let n = named.unwrap_or_default();
            prop_assert!(
                n == *path || n.starts_with(&format!("{path}.")) || n.starts_with(&format!("{path}[")),
                "{} {} = {}: named {:?}", method, path, value, n
            );
        }
    }
}
