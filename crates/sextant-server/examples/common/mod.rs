//! What the gRPC load examples (`grpc_load`, `first_event`) both send and check.

use sextant_server::a2a::grpc::pb;

/// A `SendMessage(Streaming)` request: one user text part under `message_id`, for `tenant`.
pub fn send_request(tenant: &str, message_id: String, text: &str) -> pb::SendMessageRequest {
    pb::SendMessageRequest {
        tenant: tenant.to_string(),
        message: Some(pb::Message {
            message_id,
            role: pb::Role::User as i32,
            parts: vec![pb::Part {
                content: Some(pb::part::Content::Text(text.to_string())),
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// Whether a task status says completed.
pub fn is_completed(status: Option<&pb::TaskStatus>) -> bool {
    status.is_some_and(|s| s.state == pb::TaskState::Completed as i32)
}

/// Whether a stream item says the task completed (a status update, or the whole task).
pub fn says_completed(item: &pb::StreamResponse) -> bool {
    match &item.payload {
        Some(pb::stream_response::Payload::StatusUpdate(u)) => is_completed(u.status.as_ref()),
        Some(pb::stream_response::Payload::Task(t)) => is_completed(t.status.as_ref()),
        _ => false,
    }
}
