//! File and data parts at the door: the check every binding runs on a message before it is
//! admitted (the Agent's `input_modes` and caps, [`sextant_core::parts`]), as an A2A error.
//!
//! A part no input mode covers is ContentTypeNotSupported (-32005) naming the part, as for a
//! text-only Agent; a part or message over its cap, or a `url` part that is not an absolute
//! http(s) URL, is InvalidParams (-32602) naming the field. Nothing is journalled for a refused
//! message.

use sextant_a2a::RpcError;
use sextant_a2a::error::Code;
use sextant_core::AgentSpec;
use sextant_core::a2a::Message;

/// Checks `m`'s parts against what `agent` accepts.
pub fn check_message(m: &Message, agent: &AgentSpec) -> Result<(), RpcError> {
    let Err(refusal) = agent.check_parts(&m.parts) else {
        return Ok(());
    };
    let words = refusal.describe(&agent.id, &agent.features);
    if refusal.is_content_type() {
        Err(RpcError::new(Code::ContentTypeNotSupported, words))
    } else {
        Err(RpcError::field(&refusal.field(), words))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sextant_core::a2a::{Part, Role};

    #[test]
    fn refusals_carry_the_a2a_code_and_the_field() {
        let echo = AgentSpec::echo();
        let m = Message::new(Role::User, vec![Part::text("hi"), Part::raw(b"x".to_vec())]);
        let e = check_message(&m, &echo).unwrap_err();
        assert_eq!(e.code, Code::ContentTypeNotSupported);
        assert!(
            e.message.contains("message.parts[1] is a file (raw)"),
            "{e}"
        );

        let mut agent = AgentSpec::conformance();
        agent.features.max_part_bytes = 2;
        let m = Message::new(Role::User, vec![Part::text("hello")]);
        let e = check_message(&m, &agent).unwrap_err();
        assert_eq!(e.code, Code::InvalidParams);
        let v = e.to_json();
        assert!(v.to_string().contains("message.parts[0]"), "{v}");
        assert!(e.message.contains("max_part_bytes"), "{e}");
    }
}
