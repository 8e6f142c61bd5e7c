//! JSON-RPC errors with A2A codes. Every error carries a `google.rpc.ErrorInfo` in `data`
//! (domain `a2a-protocol.org`, an UPPER_SNAKE reason), and validation errors add a
//! `google.rpc.BadRequest` naming the field; the object has only `code`, `message` and `data`.
//!
//! The HTTP+JSON binding (spec §11.6) answers the same error as a `google.rpc.Status` in the
//! AIP-193 shape, `{"error": {code, status, message, details}}`, its HTTP status from
//! [`Code::http_status`] and the same details. Where the spec's table (§5.4) and the
//! conformance kit (a2a-tck 1.0-dev) disagree, the kit's status is used: 409 for a task that
//! cannot be canceled, 415 for an unsupported content type, 502 for an invalid agent response.
//! Clients read the ErrorInfo `reason`, which is the same either way (the Python SDK maps
//! errors by it, not by status).

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

    /// The HTTP status the HTTP+JSON binding answers this error with.
    pub fn http_status(self) -> u16 {
        match self {
            Code::ParseError
            | Code::InvalidRequest
            | Code::InvalidParams
            | Code::PushNotificationNotSupported
            | Code::UnsupportedOperation
            | Code::ExtendedAgentCardNotConfigured
            | Code::ExtensionSupportRequired
            | Code::VersionNotSupported => 400,
            Code::MethodNotFound | Code::TaskNotFound => 404,
            Code::TaskNotCancelable => 409,
            Code::ContentTypeNotSupported => 415,
            Code::Internal => 500,
            Code::InvalidAgentResponse => 502,
        }
    }

    /// The `google.rpc.Code` name (`google.rpc.Status.status` in the AIP-193 shape; the gRPC
    /// status of the same error).
    pub fn rpc_status(self) -> &'static str {
        match self {
            Code::ParseError
            | Code::InvalidRequest
            | Code::InvalidParams
            | Code::ContentTypeNotSupported => "INVALID_ARGUMENT",
            Code::MethodNotFound | Code::TaskNotFound => "NOT_FOUND",
            Code::TaskNotCancelable
            | Code::PushNotificationNotSupported
            | Code::UnsupportedOperation
            | Code::ExtendedAgentCardNotConfigured
            | Code::ExtensionSupportRequired
            | Code::VersionNotSupported => "FAILED_PRECONDITION",
            Code::Internal | Code::InvalidAgentResponse => "INTERNAL",
        }
    }

    /// The gRPC status code (a `google.rpc.Code` number) the gRPC binding answers this error
    /// with. It is [`Code::rpc_status`] except where the conformance kit (a2a-tck 1.0-dev,
    /// `ERROR_BINDINGS`) expects otherwise, as the HTTP statuses follow it too:
    /// `UNIMPLEMENTED` (12) for PushNotificationNotSupported, UnsupportedOperation and
    /// VersionNotSupported (the server does not implement what was asked, which gRPC clients
    /// treat as final), and `UNIMPLEMENTED` for an unknown method, as gRPC itself answers one.
    pub fn grpc_code(self) -> i32 {
        const INVALID_ARGUMENT: i32 = 3;
        const NOT_FOUND: i32 = 5;
        const FAILED_PRECONDITION: i32 = 9;
        const UNIMPLEMENTED: i32 = 12;
        const INTERNAL: i32 = 13;
        match self {
            Code::ParseError
            | Code::InvalidRequest
            | Code::InvalidParams
            | Code::ContentTypeNotSupported => INVALID_ARGUMENT,
            Code::TaskNotFound => NOT_FOUND,
            Code::TaskNotCancelable
            | Code::ExtendedAgentCardNotConfigured
            | Code::ExtensionSupportRequired => FAILED_PRECONDITION,
            Code::MethodNotFound
            | Code::PushNotificationNotSupported
            | Code::UnsupportedOperation
            | Code::VersionNotSupported => UNIMPLEMENTED,
            Code::Internal | Code::InvalidAgentResponse => INTERNAL,
        }
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

    /// The JSON-RPC `error` object.
    pub fn to_json(&self) -> Value {
        json!({ "code": self.code.code(), "message": self.message, "data": self.details() })
    }

    /// The HTTP+JSON binding's error body (AIP-193): `{"error": {code, status, message,
    /// details}}`, `code` being the HTTP status the response carries.
    pub fn to_http_json(&self, status: u16) -> Value {
        json!({ "error": {
            "code": status,
            "status": self.code.rpc_status(),
            "message": self.message,
            "details": self.details(),
        } })
    }

    /// The `google.protobuf.Any` details both bindings carry: an ErrorInfo, and a BadRequest
    /// naming the fields of a validation error.
    pub fn details(&self) -> Vec<Value> {
        let (_, reason, _) = self.code.info();
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
        data
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

    #[test]
    fn grpc_codes_follow_the_conformance_kit() {
        // a2a-tck 1.0-dev tck/requirements/base.py ERROR_BINDINGS.
        let expected = [
            (Code::TaskNotFound, 5),
            (Code::TaskNotCancelable, 9),
            (Code::PushNotificationNotSupported, 12),
            (Code::UnsupportedOperation, 12),
            (Code::ContentTypeNotSupported, 3),
            (Code::InvalidAgentResponse, 13),
            (Code::ExtendedAgentCardNotConfigured, 9),
            (Code::ExtensionSupportRequired, 9),
            (Code::VersionNotSupported, 12),
            (Code::InvalidParams, 3),
        ];
        for (code, grpc) in expected {
            assert_eq!(code.grpc_code(), grpc, "{code:?}");
        }
    }

    #[test]
    fn http_json_errors_are_aip_193_with_the_same_details() {
        let e = RpcError::of(Code::TaskNotFound);
        let body = e.to_http_json(Code::TaskNotFound.http_status());
        assert_eq!(body["error"]["code"], 404);
        assert_eq!(body["error"]["status"], "NOT_FOUND");
        assert_eq!(body["error"]["message"], "Task not found");
        assert_eq!(body["error"]["details"], e.to_json()["data"]);
        assert_eq!(Code::TaskNotCancelable.http_status(), 409);
        assert_eq!(Code::ContentTypeNotSupported.http_status(), 415);
        assert_eq!(Code::VersionNotSupported.http_status(), 400);
        let f = RpcError::field("historyLength", "must be an integer").to_http_json(400);
        assert_eq!(f["error"]["status"], "INVALID_ARGUMENT");
        assert_eq!(
            f["error"]["details"][1]["fieldViolations"][0]["field"],
            "historyLength"
        );
    }
}
