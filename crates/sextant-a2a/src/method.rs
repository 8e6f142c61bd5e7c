//! The method table: 1.0 names and their pre-1.0 aliases.

/// An A2A operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    SendMessage,
    SendStreamingMessage,
    GetTask,
    ListTasks,
    CancelTask,
    SubscribeToTask,
    CreatePushConfig,
    GetPushConfig,
    ListPushConfigs,
    DeletePushConfig,
    GetExtendedAgentCard,
}

/// `(1.0 name, 0.3 alias, method)`.
const TABLE: &[(&str, &str, Method)] = &[
    ("SendMessage", "message/send", Method::SendMessage),
    (
        "SendStreamingMessage",
        "message/stream",
        Method::SendStreamingMessage,
    ),
    ("GetTask", "tasks/get", Method::GetTask),
    ("ListTasks", "tasks/list", Method::ListTasks),
    ("CancelTask", "tasks/cancel", Method::CancelTask),
    (
        "SubscribeToTask",
        "tasks/resubscribe",
        Method::SubscribeToTask,
    ),
    (
        "CreateTaskPushNotificationConfig",
        "tasks/pushNotificationConfig/set",
        Method::CreatePushConfig,
    ),
    (
        "GetTaskPushNotificationConfig",
        "tasks/pushNotificationConfig/get",
        Method::GetPushConfig,
    ),
    (
        "ListTaskPushNotificationConfigs",
        "tasks/pushNotificationConfig/list",
        Method::ListPushConfigs,
    ),
    (
        "DeleteTaskPushNotificationConfig",
        "tasks/pushNotificationConfig/delete",
        Method::DeletePushConfig,
    ),
    (
        "GetExtendedAgentCard",
        "agent/getAuthenticatedExtendedCard",
        Method::GetExtendedAgentCard,
    ),
];

/// Looks a method name up; the flag is true for a 0.3 alias (answered in 0.3 JSON).
pub fn lookup(name: &str) -> Option<(Method, bool)> {
    TABLE.iter().find_map(|(v1, v03, m)| {
        if *v1 == name {
            Some((*m, false))
        } else if *v03 == name {
            Some((*m, true))
        } else {
            None
        }
    })
}

impl Method {
    /// The method's 1.0 name (`SendMessage`, `GetTask`, …).
    pub fn name(self) -> &'static str {
        TABLE
            .iter()
            .find_map(|(v1, _, m)| (*m == self).then_some(*v1))
            .unwrap_or("")
    }

    /// Whether the method answers with an SSE stream.
    pub fn is_streaming(self) -> bool {
        matches!(self, Method::SendStreamingMessage | Method::SubscribeToTask)
    }

    /// The push-notification config methods (served for Agents with push notifications).
    pub fn is_push_config(self) -> bool {
        matches!(
            self,
            Method::CreatePushConfig
                | Method::GetPushConfig
                | Method::ListPushConfigs
                | Method::DeletePushConfig
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_has_its_one_point_oh_name() {
        for (v1, _, m) in TABLE {
            assert_eq!(m.name(), *v1);
            assert_eq!(lookup(m.name()), Some((*m, false)));
        }
    }

    #[test]
    fn aliases_map_onto_the_same_method() {
        assert_eq!(lookup("SendMessage"), Some((Method::SendMessage, false)));
        assert_eq!(lookup("message/send"), Some((Method::SendMessage, true)));
        assert_eq!(
            lookup("tasks/resubscribe"),
            Some((Method::SubscribeToTask, true))
        );
        assert_eq!(lookup("sendMessage"), None);
    }
}
