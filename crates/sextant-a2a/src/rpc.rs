//! The JSON-RPC 2.0 envelope.
//!
//! Request ids are echoed **exactly as sent** ([`RpcId`] keeps the id's JSON text): a number
//! outside the 64-bit range (`-9223372036854775809`) or written with an exponent comes back
//! byte for byte, never rounded through a float.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::error::{Code, RpcError};

/// A request id as the client wrote it: a string, a number or null, kept as its JSON text.
#[derive(Debug, Clone)]
pub struct RpcId(Box<RawValue>);

impl RpcId {
    /// The null id (an unknown or absent one).
    pub fn null() -> Self {
        // The default RawValue is `null`.
        RpcId(Box::<RawValue>::default())
    }

    /// The id's JSON text, as sent.
    pub fn raw(&self) -> &str {
        self.0.get()
    }

    /// The id as a JSON value (a huge number becomes a float here; echo with the [`RpcId`]).
    pub fn to_value(&self) -> Value {
        serde_json::from_str(self.raw()).unwrap_or(Value::Null)
    }

    /// Keeps `raw` when it is a valid id (string, number or null), else `None`.
    fn checked(raw: Box<RawValue>) -> Option<Self> {
        match raw.get().as_bytes().first() {
            Some(b'"' | b'-' | b'0'..=b'9') => Some(RpcId(raw)),
            Some(b'n') => Some(RpcId::null()),
            _ => None,
        }
    }
}

impl PartialEq for RpcId {
    fn eq(&self, other: &Self) -> bool {
        self.raw() == other.raw()
    }
}

impl Serialize for RpcId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl From<Value> for RpcId {
    /// An id Sextant chose itself (tests, internal calls).
    fn from(v: Value) -> Self {
        RawValue::from_string(v.to_string())
            .ok()
            .and_then(RpcId::checked)
            .unwrap_or_else(RpcId::null)
    }
}

/// A parsed request. `id` is a string, a number or null.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcRequest {
    pub id: RpcId,
    pub method: String,
    /// Always an object (absent params become `{}`).
    pub params: Value,
}

/// The envelope's fields; anything else in the object is ignored.
#[derive(Deserialize)]
struct Envelope {
    #[serde(default)]
    jsonrpc: Option<Value>,
    #[serde(default)]
    id: Option<Box<RawValue>>,
    #[serde(default)]
    method: Option<Value>,
    #[serde(default)]
    params: Option<Value>,
}

/// Parses a request body. On failure returns the id to answer with (null when unknown) and the
/// error: invalid JSON → -32700; not an object, batch, wrong `jsonrpc`, bad `id` or `method`
/// → -32600; params that are not an object → -32602.
pub fn parse_request(body: &[u8]) -> Result<RpcRequest, (RpcId, RpcError)> {
    // A derived struct would also take a JSON array (as a tuple): only an object is a request.
    let object = body
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|b| *b == b'{');
    let parsed = match object {
        true => serde_json::from_slice::<Envelope>(body).map_err(|e| e.to_string()),
        false => Err(String::new()),
    };
    let env: Envelope = match parsed {
        Ok(e) => e,
        // Only on the error path: find out what the body was, for the right code.
        Err(e) => {
            let why = match serde_json::from_slice::<Value>(body) {
                Err(e) => RpcError::new(Code::ParseError, format!("Invalid JSON: {e}")),
                Ok(Value::Array(_)) => {
                    RpcError::new(Code::InvalidRequest, "Batch requests are not supported")
                }
                Ok(Value::Object(_)) => {
                    RpcError::new(Code::InvalidRequest, format!("Invalid request: {e}"))
                }
                Ok(_) => RpcError::new(Code::InvalidRequest, "A request must be a JSON object"),
            };
            return Err((RpcId::null(), why));
        }
    };
    let id = match env.id {
        None => RpcId::null(),
        Some(raw) => RpcId::checked(raw).ok_or_else(|| {
            (
                RpcId::null(),
                RpcError::new(
                    Code::InvalidRequest,
                    "id must be a string, a number or null",
                ),
            )
        })?,
    };
    if env.jsonrpc.as_ref().and_then(Value::as_str) != Some("2.0") {
        return Err((
            id,
            RpcError::new(Code::InvalidRequest, "jsonrpc must be \"2.0\""),
        ));
    }
    let method = match env.method {
        Some(Value::String(m)) if !m.is_empty() => m,
        _ => {
            return Err((
                id,
                RpcError::new(Code::InvalidRequest, "method must be a string"),
            ));
        }
    };
    let params = match env.params {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(v @ Value::Object(_)) => v,
        Some(_) => {
            return Err((
                id,
                RpcError::new(Code::InvalidParams, "params must be an object"),
            ));
        }
    };
    Ok(RpcRequest { id, method, params })
}

/// The id of a request body, for an answer given before the body is parsed as a request
/// (null when there is none to read).
pub fn request_id(body: &[u8]) -> RpcId {
    serde_json::from_slice::<Envelope>(body)
        .ok()
        .and_then(|e| e.id)
        .and_then(RpcId::checked)
        .unwrap_or_else(RpcId::null)
}

#[derive(Serialize)]
struct Success<'a> {
    jsonrpc: &'static str,
    id: &'a RpcId,
    result: &'a Value,
}

#[derive(Serialize)]
struct Failure<'a> {
    jsonrpc: &'static str,
    id: &'a RpcId,
    error: Value,
}

/// A success envelope, serialised (the id as sent).
pub fn success(id: &RpcId, result: Value) -> String {
    let env = Success {
        jsonrpc: "2.0",
        id,
        result: &result,
    };
    serde_json::to_string(&env).unwrap_or_default()
}

/// An error envelope, serialised (the id as sent).
pub fn failure(id: &RpcId, err: &RpcError) -> String {
    let env = Failure {
        jsonrpc: "2.0",
        id,
        error: err.to_json(),
    };
    serde_json::to_string(&env).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    use serde_json::json;

    fn code(body: &str) -> (Value, i32) {
        let (id, e) = parse_request(body.as_bytes()).unwrap_err();
        (id.to_value(), e.code.code())
    }

    #[test]
    fn ids_are_echoed_exactly_as_sent() {
        for id in [
            "-9223372036854775809",
            "18446744073709551616",
            "1e400",
            "1.0",
            "7",
            "\"a\\u0041\"",
            "null",
        ] {
            let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"GetTask"}}"#);
            let req = parse_request(body.as_bytes()).unwrap();
            assert_eq!(req.id.raw(), id);
            let out = success(&req.id, json!({}));
            assert!(out.contains(&format!(r#""id":{id},"#)), "{out}");
            let err = failure(&req.id, &RpcError::new(Code::Internal, "x"));
            assert!(err.contains(&format!(r#""id":{id},"#)), "{err}");
        }
        let bad = br#"{"jsonrpc":"1.0","id":-9223372036854775809,"method":"GetTask"}"#;
        assert_eq!(
            parse_request(bad).unwrap_err().0.raw(),
            "-9223372036854775809"
        );
        assert_eq!(
            request_id(br#"{"id":12345678901234567890123}"#).raw(),
            "12345678901234567890123"
        );
    }

    #[test]
    fn envelope_errors_have_the_spec_codes() {
        assert_eq!(code("{not json"), (Value::Null, -32700));
        assert_eq!(code("[]").1, -32600);
        assert_eq!(code("3").1, -32600);
        // An array is a batch, never a request read as a tuple.
        assert_eq!(code(r#"["2.0", 1, "GetTask", {}]"#).1, -32600);
        assert_eq!(
            code(r#"{"jsonrpc":"1.0","id":1,"method":"GetTask"}"#),
            (json!(1), -32600)
        );
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":true,"method":"GetTask"}"#),
            (Value::Null, -32600)
        );
        assert_eq!(code(r#"{"jsonrpc":"2.0","id":"a"}"#), (json!("a"), -32600));
        assert_eq!(
            code(r#"{"jsonrpc":"2.0","id":2,"method":"GetTask","params":[1]}"#).1,
            -32602
        );
        let ok = parse_request(br#"{"jsonrpc":"2.0","id":"x","method":"GetTask"}"#).unwrap();
        assert_eq!(ok.params, json!({}));
    }
}
