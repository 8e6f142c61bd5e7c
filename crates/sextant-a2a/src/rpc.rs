//! The JSON-RPC 2.0 envelope.

use serde_json::{Map, Value, json};

use crate::error::{Code, RpcError};

/// A parsed request. `id` is a string, a number or null.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcRequest {
    pub id: Value,
    pub method: String,
    /// Always an object (absent params become `{}`).
    pub params: Value,
}

/// Parses a request body. On failure returns the id to answer with (null when unknown) and the
/// error: invalid JSON → -32700; not an object, batch, wrong `jsonrpc`, bad `id` or `method`
/// → -32600; params that are not an object → -32602.
pub fn parse_request(body: &[u8]) -> Result<RpcRequest, (Value, RpcError)> {
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        (
            Value::Null,
            RpcError::new(Code::ParseError, format!("Invalid JSON: {e}")),
        )
    })?;
    let obj = match value {
        Value::Object(o) => o,
        Value::Array(_) => {
            return Err((
                Value::Null,
                RpcError::new(Code::InvalidRequest, "Batch requests are not supported"),
            ));
        }
        _ => {
            return Err((
                Value::Null,
                RpcError::new(Code::InvalidRequest, "A request must be a JSON object"),
            ));
        }
    };
    let id = match obj.get("id") {
        None | Some(Value::Null) => Value::Null,
        Some(v @ (Value::String(_) | Value::Number(_))) => v.clone(),
        Some(_) => {
            return Err((
                Value::Null,
                RpcError::new(
                    Code::InvalidRequest,
                    "id must be a string, a number or null",
                ),
            ));
        }
    };
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err((
            id,
            RpcError::new(Code::InvalidRequest, "jsonrpc must be \"2.0\""),
        ));
    }
    let method = match obj.get("method") {
        Some(Value::String(m)) if !m.is_empty() => m.clone(),
        _ => {
            return Err((
                id,
                RpcError::new(Code::InvalidRequest, "method must be a string"),
            ));
        }
    };
    let params = match obj.get("params") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(v @ Value::Object(_)) => v.clone(),
        Some(_) => {
            return Err((
                id,
                RpcError::new(Code::InvalidParams, "params must be an object"),
            ));
        }
    };
    Ok(RpcRequest { id, method, params })
}

/// A success envelope.
pub fn success(id: &Value, result: Value) -> Value {
    // Not `json!`: it would serialise `result` into a copy of itself.
    let mut envelope = serde_json::Map::new();
    envelope.insert("jsonrpc".into(), Value::from("2.0"));
    envelope.insert("id".into(), id.clone());
    envelope.insert("result".into(), result);
    Value::Object(envelope)
}

/// An error envelope.
pub fn failure(id: &Value, err: &RpcError) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": err.to_json() })
}

/// Renames snake_case keys of one object to lowerCamelCase (ProtoJSON accepts both spellings;
/// the TCK sends some params in snake_case). Only the object's own keys are touched: metadata
/// maps below it keep their keys as sent.
pub fn camelize_keys(v: &mut Value) {
    let Value::Object(obj) = v else { return };
    let snake: Vec<String> = obj.keys().filter(|k| k.contains('_')).cloned().collect();
    for key in snake {
        let mut camel = String::with_capacity(key.len());
        let mut upper = false;
        for c in key.chars() {
            if c == '_' {
                upper = true;
            } else if upper {
                camel.extend(c.to_uppercase());
                upper = false;
            } else {
                camel.push(c);
            }
        }
        if !obj.contains_key(&camel)
            && let Some(val) = obj.remove(&key)
        {
            obj.insert(camel, val);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(body: &str) -> (Value, i32) {
        let (id, e) = parse_request(body.as_bytes()).unwrap_err();
        (id, e.code.code())
    }

    #[test]
    fn envelope_errors_have_the_spec_codes() {
        assert_eq!(code("{not json"), (Value::Null, -32700));
        assert_eq!(code("[]").1, -32600);
        assert_eq!(code("3").1, -32600);
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

    #[test]
    fn snake_case_params_are_accepted() {
        let mut v = json!({"history_length": 1, "id": "t", "metadata": {"keep_me": 1}});
        camelize_keys(&mut v);
        assert_eq!(
            v,
            json!({"historyLength": 1, "id": "t", "metadata": {"keep_me": 1}})
        );
    }
}
