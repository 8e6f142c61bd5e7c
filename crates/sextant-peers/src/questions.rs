//! A remote task's questions as local interactions, and the person's answers as the
//! follow-up messages that go back to it: shared by the `a2a` engine ([`crate::engine`]),
//! `a2a_call`'s cards ([`crate::call`]) and the answers to those cards ([`crate::answer`]).
//!
//! A remote `TASK_STATE_INPUT_REQUIRED` / `TASK_STATE_AUTH_REQUIRED` becomes an interaction
//! ([`remote_interaction`]). Its options are the ones the peer declared in a data part of its
//! status message (`{"options": [{"id", "label"}], "fields": [...]}`, also nested under
//! `interaction`), plus a local `cancel` when the peer declared none; without declared
//! options a question gets `reply` (with a free-text `reply` field) / `cancel`, and an
//! authorization request `continue` / `cancel`. The answer ([`follow_up`]) goes back to the
//! **same remote task**: its text is the reply (generic `reply`), or the chosen option id
//! followed by the reason; a data part carries the structured answer
//! `{"answer": {"option", "reason", "values", "interactionId"}}`.

use serde_json::{Value, json};
use sextant_core::ApprovedAction;
use sextant_core::a2a::{Message, Part, PartContent, Role, TaskState};
use sextant_core::action::{Mode, escape};
use sextant_core::event::state_wire;
use sextant_core::ids::new_id;
use sextant_core::interaction::{FormField, InteractionOption};
use sextant_core::{Answer, Interaction, InteractionKind};

use crate::client::Accumulated;

/// The option that cancels the remote task when the peer declared none of its own.
pub const CANCEL: &str = "cancel";
/// The generic answer to a question (with the `reply` field).
pub const REPLY: &str = "reply";
/// The generic answer to an authorization request.
pub const CONTINUE: &str = "continue";
/// Most options mirrored from a peer.
const MAX_OPTIONS: usize = 20;

/// A peer's text as a person reads it: invisible and misleading characters escaped.
fn shown(s: &str) -> String {
    escape(s, Mode::Text).text
}

/// `s` cut to `max` characters, with `…` when cut.
fn cut(s: &str, max: usize) -> String {
    sextant_core::text::cut(s, max).to_string()
}

/// Options, fields, default and interaction id a peer declared in its status message.
#[derive(Debug, Default, PartialEq)]
struct Declared {
    options: Vec<InteractionOption>,
    fields: Vec<FormField>,
    default_option: Option<String>,
    interaction_id: Option<String>,
}

fn declared(status: Option<&Message>) -> Option<Declared> {
    let status = status?;
    for p in &status.parts {
        let PartContent::Data(v) = &p.content else {
            continue;
        };
        let obj = v.get("interaction").unwrap_or(v);
        let Some(opts) = obj.get("options").and_then(Value::as_array) else {
            continue;
        };
        let mut d = Declared::default();
        for o in opts.iter().take(MAX_OPTIONS) {
            let Some(id) = o.get("id").and_then(Value::as_str).map(str::trim) else {
                continue;
            };
            if id.is_empty() || d.options.iter().any(|x| x.id == id) {
                continue;
            }
            let label = o
                .get("label")
                .and_then(Value::as_str)
                .filter(|l| !l.trim().is_empty())
                .unwrap_or(id);
            d.options.push(InteractionOption {
                id: id.to_string(),
                label: cut(&shown(label), 200),
                description: o
                    .get("description")
                    .and_then(Value::as_str)
                    .map(|s| cut(&shown(s), 500)),
                shortcut: None,
            });
        }
        if d.options.is_empty() {
            continue;
        }
        for f in obj
            .get("fields")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
            .iter()
            .take(MAX_OPTIONS)
        {
            if let Some(id) = f
                .get("id")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
            {
                d.fields.push(FormField {
                    id: id.to_string(),
                    label: f
                        .get("label")
                        .and_then(Value::as_str)
                        .unwrap_or(id)
                        .to_string(),
                    required: f.get("required").and_then(Value::as_bool).unwrap_or(false),
                    secret: f.get("secret").and_then(Value::as_bool).unwrap_or(false),
                });
            }
        }
        d.default_option = obj
            .get("defaultOption")
            .and_then(Value::as_str)
            .filter(|o| d.options.iter().any(|x| x.id == *o))
            .map(String::from);
        d.interaction_id = obj
            .get("interactionId")
            .and_then(Value::as_str)
            .map(String::from);
        return Some(d);
    }
    None
}

fn option(id: &str, label: &str, key: &str) -> InteractionOption {
    InteractionOption {
        id: id.into(),
        label: label.into(),
        description: None,
        shortcut: Some(key.into()),
    }
}

/// The local interaction for a remote task that waits, and the text shown with it.
pub(crate) fn remote_interaction(
    peer: &str,
    acc: &Accumulated,
    expires_at: chrono::DateTime<chrono::Utc>,
) -> (Interaction, String) {
    let auth = acc.state == Some(TaskState::AuthRequired);
    let question = acc.status_text();
    let question = if question.trim().is_empty() {
        if auth {
            format!("{peer} needs authorization to go on.")
        } else {
            format!("{peer} needs more input to go on.")
        }
    } else {
        question.trim().to_string()
    };
    let declared = declared(acc.status_message.as_ref());
    let (kind, mut options, fields, reason_allowed, default_option, remote_id) = match declared {
        Some(d) => {
            let kind = if auth {
                InteractionKind::ToolApproval
            } else if d.fields.is_empty() {
                InteractionKind::Decision
            } else {
                InteractionKind::Form
            };
            (
                kind,
                d.options,
                d.fields,
                true,
                d.default_option,
                d.interaction_id,
            )
        }
        None if auth => (
            InteractionKind::ToolApproval,
            vec![option(
                CONTINUE,
                "Done: I have authorized it, continue",
                "y",
            )],
            Vec::new(),
            true,
            None,
            None,
        ),
        None => (
            InteractionKind::Form,
            vec![option(REPLY, "Send my reply", "y")],
            vec![FormField {
                id: REPLY.into(),
                label: format!("Your reply to {peer}"),
                required: false,
                secret: false,
            }],
            false,
            None,
            None,
        ),
    };
    let local_cancel = !options.iter().any(|o| o.id == CANCEL);
    if local_cancel {
        options.push(option(CANCEL, "Cancel the remote task", "c"));
    }
    let default_option = default_option
        .or_else(|| {
            ["decline", CANCEL]
                .iter()
                .find(|d| options.iter().any(|o| o.id == **d))
                .map(|d| d.to_string())
        })
        .unwrap_or_else(|| CANCEL.into());
    let interaction = Interaction {
        interaction_id: new_id(),
        task_id: String::new(),
        kind,
        title: if auth {
            format!("{peer} needs authorization")
        } else {
            format!("{peer} asks for input")
        },
        description: Some(shown(&question)),
        command: None,
        cwd: None,
        action: Some(Box::new(ApprovedAction::new(
            json!({
                "kind": "remote",
                "peer": peer,
                "remoteTaskId": acc.task_id,
                "question": question,
                "options": options.iter().map(|o| o.id.as_str()).collect::<Vec<_>>(),
            }),
            escape(&question, Mode::Text),
        ))),
        from: None,
        options,
        fields,
        reason_allowed,
        scope: "turn".into(),
        expires_at: Some(expires_at),
        default_option,
        grant_key: None,
        engine_ref: json!({
            "peer": peer,
            "remoteTaskId": acc.task_id,
            "remoteContextId": acc.context_id,
            "remoteState": acc.state.as_ref().map(state_wire),
            "remoteInteractionId": remote_id,
            "remoteMark": crate::follow::mark(acc),
            "localCancel": local_cancel,
        }),
    };
    (interaction, format!("{peer} asks: {}", shown(&question)))
}

/// The follow-up message carrying the person's answer to the waiting remote task.
pub(crate) fn follow_up(interaction: &Interaction, answer: &Answer) -> Message {
    let er = &interaction.engine_ref;
    let generic = er["remoteInteractionId"].is_null()
        && !interaction
            .options
            .iter()
            .any(|o| o.id != REPLY && o.id != CONTINUE && o.id != CANCEL);
    let reason = answer
        .reason
        .as_deref()
        .map(str::trim)
        .filter(|r| !r.is_empty());
    let text = if generic && answer.option == REPLY {
        answer
            .values
            .get(REPLY)
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .or(reason)
            .unwrap_or("(no reply)")
            .to_string()
    } else if generic && answer.option == CONTINUE {
        match reason {
            Some(r) => format!("Done: authorized. {r}"),
            None => "Done: authorized; please continue.".into(),
        }
    } else {
        match reason {
            Some(r) => format!("{}\n{r}", answer.option),
            None => answer.option.clone(),
        }
    };
    let data = json!({ "answer": {
        "option": answer.option,
        "reason": reason,
        "values": answer.values,
        "interactionId": er["remoteInteractionId"],
    }});
    let mut m = Message::new(
        Role::User,
        vec![
            Part::text(text),
            Part::data(data).with_media_type("application/json"),
        ],
    );
    m.message_id = new_id();
    m.task_id = er["remoteTaskId"].as_str().map(String::from);
    m.context_id = er["remoteContextId"].as_str().map(String::from);
    m
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn waiting(state: &str, parts: Value) -> Accumulated {
        let mut acc = Accumulated::default();
        acc.apply(
            &serde_json::from_value(json!({"statusUpdate": {
                "taskId": "rt", "contextId": "rc",
                "status": {"state": state, "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": parts}}
            }}))
            .unwrap(),
        );
        acc
    }

    fn answer(option: &str, reason: Option<&str>, values: Value) -> Answer {
        Answer {
            interaction_id: "i".into(),
            option: option.into(),
            reason: reason.map(String::from),
            values: values.as_object().cloned().unwrap_or_default(),
            message_id: "a".into(),
            answered_by: "you".into(),
            expired: false,
            digest: None,
        }
    }

    #[test]
    fn a_plain_question_becomes_a_reply_form_with_cancel() {
        let acc = waiting(
            "TASK_STATE_INPUT_REQUIRED",
            json!([{"text": "Which city? token=sk-abcdefghijklmnop"}]),
        );
        let (i, prompt) = remote_interaction("helper", &acc, chrono::Utc::now());
        assert_eq!(i.kind, InteractionKind::Form);
        assert_eq!(i.option_ids(), [REPLY, CANCEL]);
        assert_eq!(i.default_option, CANCEL);
        assert_eq!(i.fields[0].id, REPLY);
        // The person's card shows the peer's question exactly (other readers get it scrubbed
        // on the way out), and the action binds the question and the options.
        assert!(prompt.contains("token=sk-abcdefghijklmnop"), "{prompt}");
        let action = i.action.as_ref().unwrap();
        assert_eq!(
            action.exact["question"],
            "Which city? token=sk-abcdefghijklmnop"
        );
        assert_eq!(action.exact["options"], json!([REPLY, CANCEL]));
        assert_eq!(i.engine_ref["remoteTaskId"], "rt");
        let m = follow_up(&i, &answer(REPLY, None, json!({"reply": "Paris"})));
        assert_eq!(m.task_id.as_deref(), Some("rt"));
        assert_eq!(m.context_id.as_deref(), Some("rc"));
        assert_eq!(m.parts[0].as_text(), Some("Paris"));
        let PartContent::Data(d) = &m.parts[1].content else {
            panic!("a data part")
        };
        assert_eq!(d["answer"]["option"], REPLY);
        assert_eq!(d["answer"]["values"]["reply"], "Paris");
    }

    #[test]
    fn declared_options_are_mirrored_in_order() {
        let acc = waiting(
            "TASK_STATE_AUTH_REQUIRED",
            json!([
                {"text": "Deploy to prod?"},
                {"data": {"interaction": {
                    "interactionId": "ri",
                    "options": [{"id": "approve", "label": "Ship it"}, {"id": "deny"}, {"id": ""}],
                    "defaultOption": "deny"
                }}}
            ]),
        );
        let (i, _) = remote_interaction("deployer", &acc, chrono::Utc::now());
        assert_eq!(i.kind, InteractionKind::ToolApproval);
        assert_eq!(i.option_ids(), ["approve", "deny", CANCEL]);
        assert_eq!(i.options[0].label, "Ship it");
        assert_eq!(i.default_option, "deny");
        let m = follow_up(&i, &answer("approve", Some("go ahead"), json!({})));
        assert_eq!(m.parts[0].as_text(), Some("approve\ngo ahead"));
        let PartContent::Data(d) = &m.parts[1].content else {
            panic!("a data part")
        };
        assert_eq!(d["answer"]["interactionId"], "ri");
        // A peer that declares its own cancel keeps it: no local one is added.
        let own = waiting(
            "TASK_STATE_INPUT_REQUIRED",
            json!([{"data": {"options": [{"id": "yes"}, {"id": "cancel", "label": "Stop"}]}}]),
        );
        let (i, _) = remote_interaction("p", &own, chrono::Utc::now());
        assert_eq!(i.option_ids(), ["yes", CANCEL]);
        assert_eq!(i.engine_ref["localCancel"], false);
        assert_eq!(i.kind, InteractionKind::Decision);
    }

    #[test]
    fn an_authorization_request_without_options_offers_continue() {
        let acc = waiting(
            "TASK_STATE_AUTH_REQUIRED",
            json!([{"text": "Log in at https://x"}]),
        );
        let (i, _) = remote_interaction("p", &acc, chrono::Utc::now());
        assert_eq!(i.option_ids(), [CONTINUE, CANCEL]);
        assert!(i.reason_allowed);
        let m = follow_up(&i, &answer(CONTINUE, None, json!({})));
        assert_eq!(
            m.parts[0].as_text(),
            Some("Done: authorized; please continue.")
        );
    }
}
