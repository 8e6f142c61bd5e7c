//! The bytes an Agent Card signature covers (A2A 1.0 §8.4.1), in the two readings that exist.
//!
//! **The spec's reading** ([`Reading::Spec`]): the card as its proto message has it, field
//! presence included (§5.7), without `signatures`, canonicalised with RFC 8785 (JCS):
//!
//! - fields the proto does not define are not part of the message, so they are dropped
//!   (hybrid 0.3 fields such as a top-level `url`, typos, extensions of the JSON);
//! - a REQUIRED field is always present, even empty (`"description": ""`, `"skills": []`), and
//!   one that is absent reads as its default;
//! - an `optional` field is present exactly when it was set (`"streaming": false` stays);
//! - any other field is left out when it has its default (`""`, `false`, `0`, `[]`, `{}`); a
//!   message field (an object) is present when it is there, even empty;
//! - `google.protobuf.Struct` values (`AgentExtension.params`) are kept as they are.
//!
//! **The SDKs' reading** ([`Reading::Sdk`]): the official Python (a2a-sdk 1.3.0) and JS
//! (@a2a-js/sdk 1.3.0) SDKs round-trip the card through their proto types, then delete *every*
//! empty string, list and object, and `null`s, recursively (their `_clean_empty` /
//! `cleanEmpty`), REQUIRED fields included, and then apply JCS. Both agree with each other on
//! every card Sextant can read; they disagree with the spec whenever a card has an empty
//! REQUIRED field or an empty message field (`"mtlsSecurityScheme": {}` vanishes).
//!
//! Sextant signs its own cards in the spec's reading, and adds a second signature over the
//! SDKs' reading when the two differ, so every verifier finds one it can check (both SDKs and
//! the spec accept a card when at least one signature verifies). It accepts a peer's signature
//! in either reading. `docs/card-signing.md` lists exactly where the readings differ.

use serde_json::{Map, Value};

/// A way to turn a card into the signed bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
#[ts(export)]
pub enum Reading {
    /// A2A 1.0 §8.4.1: proto field presence, REQUIRED fields kept even empty, then JCS.
    Spec,
    /// The official Python and JS SDKs (1.3.0): the spec's normal form with every empty value
    /// removed, then JCS.
    Sdk,
}

impl Reading {
    pub const ALL: [Reading; 2] = [Reading::Spec, Reading::Sdk];
}

/// How a proto field is present in JSON.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Presence {
    /// `(google.api.field_behavior) = REQUIRED`: always there.
    Required,
    /// `optional`: there when it was set.
    Optional,
    /// Neither: there unless it has its default.
    Implicit,
}

/// What a field holds.
#[derive(Clone, Copy)]
enum Ty {
    Str,
    Bool,
    /// A message (its fields).
    Msg(&'static [Field]),
    /// `google.protobuf.Struct`: any JSON object, kept as is.
    Struct,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Single,
    Repeated,
    /// `map<string, T>`.
    Map,
}

/// One proto field: its JSON name, its proto (snake_case) name, which JSON parsers also accept.
#[derive(Clone, Copy)]
struct Field {
    json: &'static str,
    proto: &'static str,
    ty: Ty,
    shape: Shape,
    presence: Presence,
}

const fn f(
    json: &'static str,
    proto: &'static str,
    ty: Ty,
    shape: Shape,
    presence: Presence,
) -> Field {
    Field {
        json,
        proto,
        ty,
        shape,
        presence,
    }
}

use Presence::{Implicit, Optional, Required};
use Shape::{Map as MapOf, Repeated, Single};
use Ty::{Bool, Msg, Str, Struct};

// The schema of `lf.a2a.v1.AgentCard` (specification/a2a.proto, A2A 1.0), what a card holds.
const AGENT_CARD: &[Field] = &[
    f("name", "name", Str, Single, Required),
    f("description", "description", Str, Single, Required),
    f(
        "supportedInterfaces",
        "supported_interfaces",
        Msg(AGENT_INTERFACE),
        Repeated,
        Required,
    ),
    f(
        "provider",
        "provider",
        Msg(AGENT_PROVIDER),
        Single,
        Implicit,
    ),
    f("version", "version", Str, Single, Required),
    f(
        "documentationUrl",
        "documentation_url",
        Str,
        Single,
        Optional,
    ),
    f(
        "capabilities",
        "capabilities",
        Msg(AGENT_CAPABILITIES),
        Single,
        Required,
    ),
    f(
        "securitySchemes",
        "security_schemes",
        Msg(SECURITY_SCHEME),
        MapOf,
        Implicit,
    ),
    f(
        "securityRequirements",
        "security_requirements",
        Msg(SECURITY_REQUIREMENT),
        Repeated,
        Implicit,
    ),
    f(
        "defaultInputModes",
        "default_input_modes",
        Str,
        Repeated,
        Required,
    ),
    f(
        "defaultOutputModes",
        "default_output_modes",
        Str,
        Repeated,
        Required,
    ),
    f("skills", "skills", Msg(AGENT_SKILL), Repeated, Required),
    // `signatures` (13) is what is being computed: never part of the payload.
    f("iconUrl", "icon_url", Str, Single, Optional),
];
const AGENT_INTERFACE: &[Field] = &[
    f("url", "url", Str, Single, Required),
    f("protocolBinding", "protocol_binding", Str, Single, Required),
    f("tenant", "tenant", Str, Single, Implicit),
    f("protocolVersion", "protocol_version", Str, Single, Required),
];
const AGENT_PROVIDER: &[Field] = &[
    f("url", "url", Str, Single, Required),
    f("organization", "organization", Str, Single, Required),
];
const AGENT_CAPABILITIES: &[Field] = &[
    f("streaming", "streaming", Bool, Single, Optional),
    f(
        "pushNotifications",
        "push_notifications",
        Bool,
        Single,
        Optional,
    ),
    f(
        "extensions",
        "extensions",
        Msg(AGENT_EXTENSION),
        Repeated,
        Implicit,
    ),
    f(
        "extendedAgentCard",
        "extended_agent_card",
        Bool,
        Single,
        Optional,
    ),
];
const AGENT_EXTENSION: &[Field] = &[
    f("uri", "uri", Str, Single, Implicit),
    f("description", "description", Str, Single, Implicit),
    f("required", "required", Bool, Single, Implicit),
    f("params", "params", Struct, Single, Implicit),
];
const AGENT_SKILL: &[Field] = &[
    f("id", "id", Str, Single, Required),
    f("name", "name", Str, Single, Required),
    f("description", "description", Str, Single, Required),
    f("tags", "tags", Str, Repeated, Required),
    f("examples", "examples", Str, Repeated, Implicit),
    f("inputModes", "input_modes", Str, Repeated, Implicit),
    f("outputModes", "output_modes", Str, Repeated, Implicit),
    f(
        "securityRequirements",
        "security_requirements",
        Msg(SECURITY_REQUIREMENT),
        Repeated,
        Implicit,
    ),
];
// A oneof: each member is a message field, present when set.
const SECURITY_SCHEME: &[Field] = &[
    f(
        "apiKeySecurityScheme",
        "api_key_security_scheme",
        Msg(API_KEY_SCHEME),
        Single,
        Implicit,
    ),
    f(
        "httpAuthSecurityScheme",
        "http_auth_security_scheme",
        Msg(HTTP_AUTH_SCHEME),
        Single,
        Implicit,
    ),
    f(
        "oauth2SecurityScheme",
        "oauth2_security_scheme",
        Msg(OAUTH2_SCHEME),
        Single,
        Implicit,
    ),
    f(
        "openIdConnectSecurityScheme",
        "open_id_connect_security_scheme",
        Msg(OIDC_SCHEME),
        Single,
        Implicit,
    ),
    f(
        "mtlsSecurityScheme",
        "mtls_security_scheme",
        Msg(MTLS_SCHEME),
        Single,
        Implicit,
    ),
];
const API_KEY_SCHEME: &[Field] = &[
    f("description", "description", Str, Single, Implicit),
    f("location", "location", Str, Single, Required),
    f("name", "name", Str, Single, Required),
];
const HTTP_AUTH_SCHEME: &[Field] = &[
    f("description", "description", Str, Single, Implicit),
    f("scheme", "scheme", Str, Single, Required),
    f("bearerFormat", "bearer_format", Str, Single, Implicit),
];
const OAUTH2_SCHEME: &[Field] = &[
    f("description", "description", Str, Single, Implicit),
    f("flows", "flows", Msg(OAUTH_FLOWS), Single, Required),
    f(
        "oauth2MetadataUrl",
        "oauth2_metadata_url",
        Str,
        Single,
        Implicit,
    ),
];
const OIDC_SCHEME: &[Field] = &[
    f("description", "description", Str, Single, Implicit),
    f(
        "openIdConnectUrl",
        "open_id_connect_url",
        Str,
        Single,
        Required,
    ),
];
const MTLS_SCHEME: &[Field] = &[f("description", "description", Str, Single, Implicit)];
const OAUTH_FLOWS: &[Field] = &[
    f(
        "authorizationCode",
        "authorization_code",
        Msg(AUTH_CODE_FLOW),
        Single,
        Implicit,
    ),
    f(
        "clientCredentials",
        "client_credentials",
        Msg(CLIENT_CREDENTIALS_FLOW),
        Single,
        Implicit,
    ),
    f("implicit", "implicit", Msg(IMPLICIT_FLOW), Single, Implicit),
    f("password", "password", Msg(PASSWORD_FLOW), Single, Implicit),
    f(
        "deviceCode",
        "device_code",
        Msg(DEVICE_CODE_FLOW),
        Single,
        Implicit,
    ),
];
const AUTH_CODE_FLOW: &[Field] = &[
    f(
        "authorizationUrl",
        "authorization_url",
        Str,
        Single,
        Required,
    ),
    f("tokenUrl", "token_url", Str, Single, Required),
    f("refreshUrl", "refresh_url", Str, Single, Implicit),
    f("scopes", "scopes", Str, MapOf, Required),
    f("pkceRequired", "pkce_required", Bool, Single, Implicit),
];
const CLIENT_CREDENTIALS_FLOW: &[Field] = &[
    f("tokenUrl", "token_url", Str, Single, Required),
    f("refreshUrl", "refresh_url", Str, Single, Implicit),
    f("scopes", "scopes", Str, MapOf, Required),
];
const DEVICE_CODE_FLOW: &[Field] = &[
    f(
        "deviceAuthorizationUrl",
        "device_authorization_url",
        Str,
        Single,
        Required,
    ),
    f("tokenUrl", "token_url", Str, Single, Required),
    f("refreshUrl", "refresh_url", Str, Single, Implicit),
    f("scopes", "scopes", Str, MapOf, Required),
];
const IMPLICIT_FLOW: &[Field] = &[
    f(
        "authorizationUrl",
        "authorization_url",
        Str,
        Single,
        Implicit,
    ),
    f("refreshUrl", "refresh_url", Str, Single, Implicit),
    f("scopes", "scopes", Str, MapOf, Implicit),
];
const PASSWORD_FLOW: &[Field] = &[
    f("tokenUrl", "token_url", Str, Single, Implicit),
    f("refreshUrl", "refresh_url", Str, Single, Implicit),
    f("scopes", "scopes", Str, MapOf, Implicit),
];
const SECURITY_REQUIREMENT: &[Field] =
    &[f("schemes", "schemes", Msg(STRING_LIST), MapOf, Implicit)];
const STRING_LIST: &[Field] = &[f("list", "list", Str, Repeated, Implicit)];

/// The card in the spec's normal form (see the module docs): proto fields only, with their
/// presence, without `signatures`. `Err` names a field whose value has the wrong JSON type (a
/// card no proto parser reads has no canonical form).
pub fn normalize(card: &Value) -> Result<Value, String> {
    message(card, AGENT_CARD, "card")
}

fn message(v: &Value, fields: &[Field], at: &str) -> Result<Value, String> {
    let Value::Object(obj) = v else {
        return Err(format!("{at} is not an object"));
    };
    let mut out = Map::new();
    for fd in fields {
        let got = obj
            .get(fd.json)
            .or_else(|| obj.get(fd.proto))
            .filter(|v| !v.is_null());
        let path = format!("{at}.{}", fd.json);
        if let Some(v) = field(got, fd, &path)? {
            out.insert(fd.json.to_string(), v);
        }
    }
    Ok(Value::Object(out))
}

/// A field's normal form, or `None` when it is left out.
fn field(got: Option<&Value>, fd: &Field, path: &str) -> Result<Option<Value>, String> {
    match fd.shape {
        Shape::Single => {
            let v = match got {
                Some(v) => Some(single(v, fd.ty, path)?),
                None => None,
            };
            Ok(match (v, fd.presence, fd.ty) {
                (Some(v), Presence::Optional, _) => Some(v),
                // A message or Struct that is there counts as set, even empty.
                (Some(v), _, Ty::Msg(_) | Ty::Struct) => Some(v),
                (Some(v), Presence::Required, _) => Some(v),
                (Some(v), Presence::Implicit, _) if !is_default(&v) => Some(v),
                (Some(_), Presence::Implicit, _) => None,
                (None, Presence::Required, ty) => Some(default_of(ty)),
                (None, _, _) => None,
            })
        }
        Shape::Repeated => {
            let items = match got {
                None => Vec::new(),
                Some(Value::Array(a)) => a
                    .iter()
                    .enumerate()
                    .map(|(i, v)| single(v, fd.ty, &format!("{path}[{i}]")))
                    .collect::<Result<Vec<_>, _>>()?,
                Some(_) => return Err(format!("{path} is not a list")),
            };
            Ok((!items.is_empty() || fd.presence == Presence::Required)
                .then_some(Value::Array(items)))
        }
        Shape::Map => {
            let mut m = Map::new();
            match got {
                None => {}
                Some(Value::Object(o)) => {
                    for (k, v) in o {
                        m.insert(k.clone(), single(v, fd.ty, &format!("{path}.{k}"))?);
                    }
                }
                Some(_) => return Err(format!("{path} is not an object")),
            }
            Ok((!m.is_empty() || fd.presence == Presence::Required).then_some(Value::Object(m)))
        }
    }
}

fn single(v: &Value, ty: Ty, path: &str) -> Result<Value, String> {
    match (ty, v) {
        (Ty::Str, Value::String(_)) | (Ty::Bool, Value::Bool(_)) => Ok(v.clone()),
        (Ty::Msg(fields), _) => message(v, fields, path),
        (Ty::Struct, Value::Object(_)) => Ok(v.clone()),
        (Ty::Str, _) => Err(format!("{path} is not a string")),
        (Ty::Bool, _) => Err(format!("{path} is not a boolean")),
        (Ty::Struct, _) => Err(format!("{path} is not an object")),
    }
}

fn is_default(v: &Value) -> bool {
    match v {
        Value::String(s) => s.is_empty(),
        Value::Bool(b) => !b,
        _ => false,
    }
}

fn default_of(ty: Ty) -> Value {
    match ty {
        Ty::Str => Value::String(String::new()),
        Ty::Bool => Value::Bool(false),
        Ty::Msg(_) | Ty::Struct => Value::Object(Map::new()),
    }
}

/// The SDKs' `_clean_empty` / `cleanEmpty`: removes empty strings, `null`s, and lists and
/// objects that are (or become) empty, recursively. `None` when nothing is left.
pub fn clean_empty(v: &Value) -> Option<Value> {
    match v {
        Value::Null => None,
        Value::String(s) if s.is_empty() => None,
        Value::Array(a) => {
            let kept: Vec<Value> = a.iter().filter_map(clean_empty).collect();
            (!kept.is_empty()).then_some(Value::Array(kept))
        }
        Value::Object(o) => {
            let kept: Map<String, Value> = o
                .iter()
                .filter_map(|(k, v)| clean_empty(v).map(|v| (k.clone(), v)))
                .collect();
            (!kept.is_empty()).then_some(Value::Object(kept))
        }
        other => Some(other.clone()),
    }
}

/// The bytes a signature over `card` covers in `reading`.
pub fn payload(card: &Value, reading: Reading) -> Result<Vec<u8>, String> {
    let normal = normalize(card)?;
    let v = match reading {
        Reading::Spec => normal,
        Reading::Sdk => clean_empty(&normal).unwrap_or_else(|| Value::Object(Map::new())),
    };
    serde_json_canonicalizer::to_vec(&v)
        .map_err(|e| format!("the card cannot be canonicalised: {e}"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    fn text(card: &Value, r: Reading) -> String {
        String::from_utf8(payload(card, r).unwrap()).unwrap()
    }

    /// The example of §8.4.1 gives exactly the result the spec prints.
    #[test]
    fn the_specs_example() {
        let card = json!({
            "name": "Example Agent",
            "description": "",
            "capabilities": {"streaming": false, "pushNotifications": false, "extensions": []},
            "skills": []
        });
        let normal = normalize(&card).unwrap();
        // The spec's printed result leaves out the REQUIRED fields its fragment does not
        // show (version, supportedInterfaces, modes); a whole card has them.
        let mut shown = normal.clone();
        for k in [
            "version",
            "supportedInterfaces",
            "defaultInputModes",
            "defaultOutputModes",
        ] {
            shown.as_object_mut().unwrap().remove(k);
        }
        assert_eq!(
            serde_json_canonicalizer::to_string(&shown).unwrap(),
            r#"{"capabilities":{"pushNotifications":false,"streaming":false},"description":"","name":"Example Agent","skills":[]}"#
        );
        assert_eq!(normal["version"], "");
        assert_eq!(normal["supportedInterfaces"], json!([]));
    }

    #[test]
    fn unknown_fields_go_signatures_go_and_proto_names_are_read() {
        let card = json!({
            "name": "A", "description": "d", "version": "1",
            "url": "http://legacy-0.3", "protocolVersion": "0.3", "preferredTransport": "JSONRPC",
            "supported_interfaces": [{"url": "https://a/rpc", "protocol_binding": "JSONRPC",
                                      "protocolVersion": "1.0", "tenant": "", "extra": 1}],
            "capabilities": {"streaming": true, "extensions": [{"uri": "urn:x", "required": false, "params": {}}]},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "S", "description": "x", "tags": []}],
            "signatures": [{"protected": "x", "signature": "y"}],
            "documentationUrl": "",
        });
        assert_eq!(
            text(&card, Reading::Spec),
            concat!(
                r#"{"capabilities":{"extensions":[{"params":{},"uri":"urn:x"}],"streaming":true},"#,
                r#""defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"#,
                r#""description":"d","documentationUrl":"","name":"A","#,
                r#""skills":[{"description":"x","id":"s","name":"S","tags":[]}],"#,
                r#""supportedInterfaces":[{"protocolBinding":"JSONRPC","protocolVersion":"1.0","url":"https://a/rpc"}],"#,
                r#""version":"1"}"#
            )
        );
        // The SDKs also drop the empty REQUIRED tags, the set-but-empty optional URL and the
        // empty params object.
        assert_eq!(
            text(&card, Reading::Sdk),
            concat!(
                r#"{"capabilities":{"extensions":[{"uri":"urn:x"}],"streaming":true},"#,
                r#""defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"#,
                r#""description":"d","name":"A","#,
                r#""skills":[{"description":"x","id":"s","name":"S"}],"#,
                r#""supportedInterfaces":[{"protocolBinding":"JSONRPC","protocolVersion":"1.0","url":"https://a/rpc"}],"#,
                r#""version":"1"}"#
            )
        );
    }

    /// A card without empty values reads the same both ways (Sextant's own cards do).
    #[test]
    fn full_cards_read_the_same_both_ways() {
        let card = json!({
            "name": "Café ☕ 𝄞", "description": "d", "version": "1",
            "supportedInterfaces": [{"url": "https://a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "capabilities": {"streaming": true, "pushNotifications": false},
            "securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "S", "description": "x", "tags": ["t"]}],
        });
        assert_eq!(text(&card, Reading::Spec), text(&card, Reading::Sdk));
        assert!(
            text(&card, Reading::Spec).contains("Café ☕ 𝄞"),
            "JCS keeps UTF-8"
        );
    }

    #[test]
    fn a_field_of_the_wrong_type_has_no_canonical_form() {
        let card = json!({"name": 3});
        assert!(normalize(&card).unwrap_err().contains("card.name"));
        let card = json!({"name": "a", "skills": [{"tags": "x"}]});
        assert!(
            normalize(&card)
                .unwrap_err()
                .contains("card.skills[0].tags")
        );
        assert!(normalize(&json!([])).is_err());
    }
}
