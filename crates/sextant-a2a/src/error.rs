//! JSON-RPC errors with A2A codes. Every error carries a `google.rpc.ErrorInfo` in `data`
//! (domain `a2a-protocol.org`, an UPPER_SNAKE reason), and validation errors add a
//! `google.rpc.BadRequest` naming the field; the object has only `code`, `message` and `data`.

use serde_json::{Value, json};

/// The error codes (spec §5.4, §9.5). One table: code, ErrorInfo reason, default message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Code {
    ParseError,
    InvalidRequest,
    MethodNotFound,
    InvalidParams,
    Internal,
    TaskNotFound,
    TaskNotCancelable,
    PushNotificationNotSupported,
    UnsupportedOperation,
    ContentTypeNotSupported,
    InvalidAgentResponse,
    ExtendedAgentCardNotConfigured,
    ExtensionSupportRequired,
    VersionNotSupported,
}

impl Code {
    /// `(code, reason, message)`.
    pub fn info(self) -> (i32, &'static str, &'static str) {
        match self {
            Code::ParseError => (-32700, "PARSE_ERROR", "Invalid JSON payload"),
            Code::InvalidRequest => (
                -32600,
                "INVALID_REQUEST",
                "Request payload validation error",
            ),
            Code::MethodNotFound => (-32601, "METHOD_NOT_FOUND", "Method not found"),
            Code::InvalidParams => (-32602, "INVALID_PARAMS", "Invalid parameters"),
            Code::Internal => (-32603, "INTERNAL_ERROR", "Internal error"),
            Code::TaskNotFound => (-32001, "TASK_NOT_FOUND", "Task not found"),
            Code::TaskNotCancelable => (-32002, "TASK_NOT_CANCELABLE", "Task cannot be canceled"),
            Code::PushNotificationNotSupported => (
                -32003,
                "PUSH_NOTIFICATION_NOT_SUPPORTED",
                "Push Notification is not supported",
            ),
            Code::UnsupportedOperation => (
                -32004,
                "UNSUPPORTED_OPERATION",
                "This operation is not supported",
            ),
            Code::ContentTypeNotSupported => (
                -32005,
                "CONTENT_TYPE_NOT_SUPPORTED",
                "Incompatible content types",
            ),
            Code::InvalidAgentResponse => {
                (-32006, "INVALID_AGENT_RESPONSE", "Invalid agent response")
            }
            Code::ExtendedAgentCardNotConfigured => (
                -32007,
                "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
                "Extended agent card is not configured",
            ),
            Code::ExtensionSupportRequired => (
                -32008,
                "EXTENSION_SUPPORT_REQUIRED",
                "Extension support required",
            ),
            Code::VersionNotSupported => (-32009, "VERSION_NOT_SUPPORTED", "Version not supported"),
        }
    }

    /// The numeric code.
    pub fn code(self) -> i32 {
        self.info().0
    }
}

/// A JSON-RPC error to send.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: Code,
    pub message: String,
    /// `(field, description)` pairs for a `google.rpc.BadRequest` detail.
    pub violations: Vec<(String, String)>,
}

impl RpcError {
    /// An error with a specific message.
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            violations: Vec::new(),
        }
    }

    /// An error with the code's default message.
    pub fn of(code: Code) -> Self {
        Self::new(code, code.info().2)
    }

    /// Invalid params, naming the field.
    pub fn field(field: &str, description: impl Into<String>) -> Self {
        let description = description.into();
        Self {
            code: Code::InvalidParams,
            message: format!("{field}: {description}"),
            violations: vec![(field.to_string(), description)],
        }
    }

    /// The `error` object.
    pub fn to_json(&self) -> Value {
        let (code, reason, _) = self.code.info();
        let mut data = vec![json!({
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": reason,
            "domain": "a2a-protocol.org",
            "metadata": {},
        })];
        if !self.violations.is_empty() {
            let v: Vec<Value> = self
                .violations
                .iter()
                .map(|(f, d)| json!({ "field": f, "description": d }))
                .collect();
            data.push(json!({
                "@type": "type.googleapis.com/google.rpc.BadRequest",
                "fieldViolations": v,
            }));
        }
        json!({ "code": code, "message": self.message, "data": data })
    }
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.message, self.code.code())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_carry_error_info_and_only_three_keys() {
        let e = RpcError::of(Code::TaskNotFound).to_json();
        let keys: Vec<&String> = e.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), 3);
        assert_eq!(e["code"], -32001);
        assert_eq!(e["data"][0]["reason"], "TASK_NOT_FOUND");
        assert_eq!(e["data"][0]["domain"], "a2a-protocol.org");
        let f = RpcError::field("message.parts", "must not be empty").to_json();
        assert_eq!(f["code"], -32602);
        assert_eq!(f["data"][1]["fieldViolations"][0]["field"], "message.parts");
    }
}
