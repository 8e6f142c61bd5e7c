//! Agent cards as a client reads them: plain-language validation, a summary, the JSON-RPC
//! interface to call, and the **pin**.
//!
//! The pin is the SHA-256 (lowercase hex) of the RFC 8785 (JCS) canonical JSON of
//! `{"securitySchemes": …, "skills": …, "supportedInterfaces": …}` taken from the card exactly
//! as received (absent fields count as `{}` / `[]`). Those three say where Sextant sends
//! messages, how it authenticates, and what the peer claims to do; a change to any of them
//! (a new interface URL, a new auth scheme, a new or changed skill) changes the pin. Names,
//! descriptions, versions and capabilities may change freely.

use std::collections::{BTreeMap, BTreeSet};

use a2a::{AgentCard, AgentInterface};
use serde::Serialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use ts_rs::TS;
use url::Url;

/// Skills shown in a summary, at most.
pub const SUMMARY_SKILLS: usize = 20;
/// Longest description kept in a summary.
const SUMMARY_TEXT: usize = 500;

/// The three pinned parts of a card, as received.
pub fn pinned_parts(raw: &Value) -> Value {
    let get = |k: &str, empty: Value| match raw.get(k) {
        None | Some(Value::Null) => empty,
        Some(v) => v.clone(),
    };
    json!({
        "securitySchemes": get("securitySchemes", json!({})),
        "skills": get("skills", json!([])),
        "supportedInterfaces": get("supportedInterfaces", json!([])),
    })
}

/// SHA-256 (hex) of the JCS canonical form of `parts`.
pub fn hash_parts(parts: &Value) -> Result<String, String> {
    let canonical = serde_json_canonicalizer::to_vec(parts)
        .map_err(|e| format!("the card cannot be canonicalised: {e}"))?;
    Ok(hex::encode(Sha256::digest(&canonical)))
}

/// The pin of a card: [`hash_parts`] of [`pinned_parts`].
pub fn pin_hash(raw: &Value) -> Result<String, String> {
    hash_parts(&pinned_parts(raw))
}

fn text(v: &Value, k: &str) -> String {
    v.get(k).and_then(Value::as_str).unwrap_or("").to_string()
}

/// `s` cut to `max` characters, with `…` when cut.
fn cut(s: &str, max: usize) -> String {
    sextant_core::text::cut(s, max).to_string()
}

fn interface_key(i: &Value) -> String {
    let tenant = text(i, "tenant");
    let mut k = format!(
        "{} {} at {}",
        text(i, "protocolBinding"),
        text(i, "protocolVersion"),
        text(i, "url")
    );
    if !tenant.is_empty() {
        k.push_str(&format!(" (tenant {tenant})"));
    }
    k
}

fn array<'a>(v: &'a Value, k: &str) -> &'a [Value] {
    v.get(k)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// What changed between two sets of pinned parts, in plain words (empty when equal).
pub fn describe_changes(old: &Value, new: &Value) -> Vec<String> {
    let mut out = Vec::new();

    let old_if: Vec<String> = array(old, "supportedInterfaces")
        .iter()
        .map(interface_key)
        .collect();
    let new_if: Vec<String> = array(new, "supportedInterfaces")
        .iter()
        .map(interface_key)
        .collect();
    for i in new_if.iter().filter(|i| !old_if.contains(i)) {
        out.push(format!("interface added: {i}"));
    }
    for i in old_if.iter().filter(|i| !new_if.contains(i)) {
        out.push(format!("interface removed: {i}"));
    }
    let same_set = old_if.iter().collect::<BTreeSet<_>>() == new_if.iter().collect::<BTreeSet<_>>();
    if same_set && old_if != new_if {
        out.push(format!(
            "interface order changed (preferred is now {})",
            new_if.first().map_or("none", String::as_str)
        ));
    } else if same_set && array(old, "supportedInterfaces") != array(new, "supportedInterfaces") {
        out.push("interface details changed".into());
    }

    let schemes = |v: &Value| -> BTreeMap<String, Value> {
        v.get("securitySchemes")
            .and_then(Value::as_object)
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .unwrap_or_default()
    };
    let (old_s, new_s) = (schemes(old), schemes(new));
    for (name, v) in &new_s {
        match old_s.get(name) {
            None => out.push(format!(
                "security scheme added: {name} ({})",
                scheme_label(v)
            )),
            Some(o) if o != v => out.push(format!(
                "security scheme changed: {name} (was {}, now {})",
                scheme_label(o),
                scheme_label(v)
            )),
            Some(_) => {}
        }
    }
    for (name, v) in &old_s {
        if !new_s.contains_key(name) {
            out.push(format!(
                "security scheme removed: {name} ({})",
                scheme_label(v)
            ));
        }
    }

    let skills = |v: &Value| -> Vec<(String, Value)> {
        array(v, "skills")
            .iter()
            .map(|s| (text(s, "id"), s.clone()))
            .collect()
    };
    let (old_k, new_k) = (skills(old), skills(new));
    let find = |list: &[(String, Value)], id: &str| {
        list.iter().find(|(i, _)| i == id).map(|(_, v)| v.clone())
    };
    for (id, v) in &new_k {
        match find(&old_k, id) {
            None => out.push(format!("skill added: {id} ({})", text(v, "name"))),
            Some(o) if o != *v => {
                let mut fields: BTreeSet<String> = BTreeSet::new();
                for m in [o.as_object(), v.as_object()].into_iter().flatten() {
                    for k in m.keys() {
                        if o.get(k) != v.get(k) {
                            fields.insert(k.clone());
                        }
                    }
                }
                let fields: Vec<String> = fields.into_iter().collect();
                out.push(format!("skill changed: {id} ({})", fields.join(", ")));
            }
            Some(_) => {}
        }
    }
    for (id, v) in &old_k {
        if find(&new_k, id).is_none() {
            out.push(format!("skill removed: {id} ({})", text(v, "name")));
        }
    }
    let old_ids: Vec<&String> = old_k.iter().map(|(i, _)| i).collect();
    let new_ids: Vec<&String> = new_k.iter().map(|(i, _)| i).collect();
    if out.is_empty() && old_ids != new_ids {
        out.push("skill order changed".into());
    }
    if out.is_empty() && old != new {
        out.push("the pinned parts changed in a way that has no simpler description".into());
    }
    out
}

/// One security scheme in a few words.
pub fn scheme_label(v: &Value) -> String {
    if let Some(s) = v.get("httpAuthSecurityScheme") {
        let scheme = text(s, "scheme");
        return format!("HTTP {}", if scheme.is_empty() { "auth" } else { &scheme });
    }
    if let Some(s) = v.get("apiKeySecurityScheme") {
        return format!("API key in {} {:?}", text(s, "location"), text(s, "name"));
    }
    if let Some(s) = v.get("oauth2SecurityScheme") {
        let flows: Vec<String> = s
            .get("flows")
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        return format!("OAuth 2 ({})", flows.join(", "));
    }
    if let Some(s) = v.get("openIdConnectSecurityScheme") {
        return format!("OpenID Connect ({})", text(s, "openIdConnectUrl"));
    }
    if v.get("mtlsSecurityScheme").is_some() {
        return "mutual TLS".into();
    }
    "unknown scheme".into()
}

/// Whether an interface is A2A 1.x JSON-RPC.
fn is_jsonrpc_v1(binding: &str, version: &str) -> bool {
    binding.eq_ignore_ascii_case("JSONRPC") && version.trim().split('.').next() == Some("1")
}

/// The interface Sextant calls: the first JSON-RPC interface for A2A 1.x (the card lists
/// them in preference order).
pub fn select_interface(card: &AgentCard) -> Option<&AgentInterface> {
    card.supported_interfaces
        .iter()
        .find(|i| is_jsonrpc_v1(&i.protocol_binding, &i.protocol_version))
}

fn same_origin(a: &Url, b: &Url) -> bool {
    a.origin() == b.origin()
}

/// One problem with a card: where it is (a path into the card, `card.skills[0].tags`; `card`
/// for the whole card) and what is wrong, in plain words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardProblem {
    pub field: String,
    pub message: String,
    /// Whether Sextant cannot call the peer because of it (no JSON-RPC 1.0 interface, a card
    /// that does not read as an A2A 1.0 card, …); the others are worth knowing only.
    pub blocks_calls: bool,
}

impl CardProblem {
    fn new(field: impl Into<String>, message: impl Into<String>, blocks_calls: bool) -> Self {
        let field = field.into();
        Self {
            field: if field.is_empty() {
                "card".into()
            } else {
                format!("card.{field}")
            },
            message: message.into(),
            blocks_calls,
        }
    }
}

/// Whether a card looks like an A2A 0.3 card: no 1.0 interface in `supportedInterfaces`, and
/// 0.3's top-level `url`, a top-level `protocolVersion` of 0.x, or 0.x interfaces only.
pub fn looks_like_v03(raw: &Value) -> bool {
    let v03_version = raw
        .get("protocolVersion")
        .and_then(Value::as_str)
        .is_some_and(|v| v.trim().starts_with("0."));
    let interfaces = array(raw, "supportedInterfaces");
    let has_v1 = interfaces
        .iter()
        .any(|i| text(i, "protocolVersion").trim().starts_with('1'));
    let has_v03 = interfaces
        .iter()
        .any(|i| text(i, "protocolVersion").trim().starts_with("0."));
    !has_v1 && (raw.get("url").is_some() || v03_version || has_v03)
}

/// Whether a gRPC interface's `url` is a target gRPC can dial: the proto's own `host:port`
/// (what Sextant's cards list), or a URL with a host.
fn is_grpc_target(url: &str) -> bool {
    if let Ok(u) = Url::parse(url)
        && u.host().is_some()
    {
        return true;
    }
    Url::parse(&format!("http://{url}")).is_ok_and(|u| {
        u.host().is_some() && u.port().is_some() && u.path() == "/" && !url.contains('/')
    })
}

/// Plain-language problems with a card (empty: nothing to report). `card_url` is where it was
/// fetched from.
pub fn validate(raw: &Value, card_url: &Url) -> Vec<String> {
    check(raw, card_url)
        .into_iter()
        .map(|p| p.message)
        .collect()
}

/// Every problem with a card, each with where it is ([`CardProblem`]). `card_url` is where it
/// was fetched from.
pub fn check(raw: &Value, card_url: &Url) -> Vec<CardProblem> {
    let mut p: Vec<CardProblem> = Vec::new();
    let Some(obj) = raw.as_object() else {
        return vec![CardProblem::new("", "the card is not a JSON object", true)];
    };
    for (field, what, required) in [
        ("name", "a name", true),
        ("description", "a description", false),
        ("version", "a version", true),
    ] {
        match obj.get(field) {
            Some(Value::String(s)) if !s.trim().is_empty() => {}
            Some(v) if !v.is_string() && !v.is_null() => p.push(CardProblem::new(
                field,
                format!("the card's {field} must be a string, not {}", kind_of(v)),
                true,
            )),
            got => p.push(CardProblem::new(
                field,
                format!("the card has no {field} (it needs {what})"),
                required && got.is_none_or(Value::is_null),
            )),
        }
    }
    let interfaces = array(raw, "supportedInterfaces");
    if let Some(v) = obj.get("supportedInterfaces")
        && !v.is_array()
    {
        p.push(CardProblem::new(
            "supportedInterfaces",
            format!("supportedInterfaces must be a list, not {}", kind_of(v)),
            true,
        ));
    } else if interfaces.is_empty() {
        p.push(if obj.contains_key("url") {
            CardProblem::new(
                "supportedInterfaces",
                "the card lists no supportedInterfaces; it looks like an A2A 0.3 card, and \
                 Sextant calls A2A 1.0 agents only",
                true,
            )
        } else {
            CardProblem::new(
                "supportedInterfaces",
                "the card lists no interfaces (supportedInterfaces is empty)",
                true,
            )
        });
    }
    let mut jsonrpc: Option<(usize, Option<Url>)> = None;
    let mut only_03 = false;
    for (n, i) in interfaces.iter().enumerate() {
        let which = format!("interface #{}", n + 1);
        let at = format!("supportedInterfaces[{n}]");
        let url = text(i, "url");
        let binding = text(i, "protocolBinding");
        let version = text(i, "protocolVersion");
        let chosen = jsonrpc.is_none() && is_jsonrpc_v1(&binding, &version);
        if binding.is_empty() {
            p.push(CardProblem::new(
                format!("{at}.protocolBinding"),
                format!("{which} has no protocolBinding"),
                false,
            ));
        }
        if version.is_empty() {
            p.push(CardProblem::new(
                format!("{at}.protocolVersion"),
                format!("{which} has no protocolVersion"),
                false,
            ));
        }
        let grpc = binding.eq_ignore_ascii_case("GRPC");
        let parsed = if url.is_empty() {
            p.push(CardProblem::new(
                format!("{at}.url"),
                format!("{which} has no url"),
                chosen,
            ));
            None
        } else if grpc {
            // gRPC's target is `host:port` in the proto's own form; Sextant does not call it.
            if !is_grpc_target(&url) {
                p.push(CardProblem::new(
                    format!("{at}.url"),
                    format!("{which} (gRPC) has an invalid target {url:?}: use host:port"),
                    false,
                ));
            }
            None
        } else {
            match Url::parse(&url) {
                Ok(u) => Some(u),
                Err(e) => {
                    p.push(CardProblem::new(
                        format!("{at}.url"),
                        format!("{which} has an invalid url {url:?}: {e}"),
                        chosen,
                    ));
                    None
                }
            }
        };
        if let Some(u) = &parsed
            && u.scheme() == "http"
            && !matches!(u.host(), Some(url::Host::Ipv4(ip)) if ip.is_loopback())
            && !matches!(u.host(), Some(url::Host::Ipv6(ip)) if ip.is_loopback())
            && u.host_str() != Some("localhost")
        {
            p.push(CardProblem::new(
                format!("{at}.url"),
                format!(
                    "{which} ({url}) uses plain http outside loopback; Sextant calls such \
                     interfaces only over https"
                ),
                chosen,
            ));
        }
        if binding.eq_ignore_ascii_case("JSONRPC") && version.trim().starts_with("0.") {
            only_03 = true;
        }
        if chosen {
            jsonrpc = Some((n, parsed));
        }
    }
    match &jsonrpc {
        None if !interfaces.is_empty() => p.push(if only_03 {
            CardProblem::new(
                "supportedInterfaces",
                "the card offers JSON-RPC for A2A 0.3 only; Sextant calls A2A 1.0 agents",
                true,
            )
        } else {
            CardProblem::new(
                "supportedInterfaces",
                "the card offers no JSON-RPC interface for A2A 1.0, so Sextant cannot call it",
                true,
            )
        }),
        Some((n, Some(u))) if !same_origin(u, card_url) => p.push(CardProblem::new(
            format!("supportedInterfaces[{n}].url"),
            format!(
                "the JSON-RPC interface ({}) is on another origin than the card ({}); a \
                 registered token is sent only to the peer's own origin",
                u.origin().ascii_serialization(),
                card_url.origin().ascii_serialization()
            ),
            false,
        )),
        _ => {}
    }
    match obj.get("capabilities") {
        Some(Value::Object(_)) => {}
        None | Some(Value::Null) => p.push(CardProblem::new(
            "capabilities",
            "the card has no capabilities object",
            true,
        )),
        Some(v) => p.push(CardProblem::new(
            "capabilities",
            format!(
                "the card has no capabilities object (capabilities is {})",
                kind_of(v)
            ),
            true,
        )),
    }
    for field in ["defaultInputModes", "defaultOutputModes"] {
        match obj.get(field) {
            Some(v) if !v.is_array() && !v.is_null() => p.push(CardProblem::new(
                field,
                format!("{field} must be a list of media types, not {}", kind_of(v)),
                true,
            )),
            _ if array(raw, field).is_empty() => p.push(CardProblem::new(
                field,
                format!("the card has no {field}"),
                false,
            )),
            _ => {}
        }
    }
    let inputs = array(raw, "defaultInputModes");
    if !inputs.is_empty()
        && !inputs.iter().any(|m| {
            m.as_str()
                .is_some_and(|m| m.starts_with("text/") || m == "*/*" || m == "text")
        })
    {
        p.push(CardProblem::new(
            "defaultInputModes",
            "the card accepts no text input mode, but Sextant sends text",
            false,
        ));
    }
    let skills = array(raw, "skills");
    match obj.get("skills") {
        Some(v) if !v.is_array() && !v.is_null() => p.push(CardProblem::new(
            "skills",
            format!("skills must be a list of skills, not {}", kind_of(v)),
            true,
        )),
        _ if skills.is_empty() => {
            p.push(CardProblem::new(
                "skills",
                "the card declares no skills",
                false,
            ));
        }
        _ => {}
    }
    let mut seen = BTreeSet::new();
    for (n, s) in skills.iter().enumerate() {
        let id = text(s, "id");
        let which = if id.is_empty() {
            format!("skill #{}", n + 1)
        } else {
            format!("skill {id:?}")
        };
        for field in ["id", "name", "description"] {
            if text(s, field).trim().is_empty() {
                p.push(CardProblem::new(
                    format!("skills[{n}].{field}"),
                    format!("{which} has no {field}"),
                    // The typed card needs a skill's id and name.
                    field != "description" && s.get(field).is_none_or(Value::is_null),
                ));
            }
        }
        // Absent is ProtoJSON's empty list (the SDKs sign cards without empty `tags`).
        if s.get("tags").is_some_and(|t| !t.is_array()) {
            p.push(CardProblem::new(
                format!("skills[{n}].tags"),
                format!("{which} has no tags list"),
                false,
            ));
        }
        if !id.is_empty() && !seen.insert(id.clone()) {
            p.push(CardProblem::new(
                format!("skills[{n}].id"),
                format!("skill id {id:?} is declared twice"),
                false,
            ));
        }
    }
    let schemes: BTreeSet<String> = raw
        .get("securitySchemes")
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect())
        .unwrap_or_default();
    for (n, req) in array(raw, "securityRequirements").iter().enumerate() {
        let names: Vec<String> = req
            .get("schemes")
            .and_then(Value::as_object)
            .or_else(|| req.as_object())
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        for name in names {
            if !schemes.contains(&name) {
                p.push(CardProblem::new(
                    format!("securityRequirements[{n}]"),
                    format!(
                        "a security requirement names the scheme {name:?}, which \
                         securitySchemes does not define"
                    ),
                    false,
                ));
            }
        }
    }
    // What the typed reader says, unless a check above already named that field.
    if let Err(e) = serde_path_to_error::deserialize::<_, AgentCard>(with_empty_lists(raw)) {
        let path = e.path().to_string();
        let path = if path == "." { String::new() } else { path };
        let field = if path.is_empty() {
            "card".to_string()
        } else {
            format!("card.{path}")
        };
        let why = plain_serde(&e.into_inner().to_string());
        let covered = p.iter().any(|q| {
            q.blocks_calls
                && (q.field == field
                    || field.starts_with(&format!("{}.", q.field))
                    || field.starts_with(&format!("{}[", q.field))
                    || (path.is_empty() && q.field != "card"))
        });
        if !covered {
            p.push(CardProblem {
                field,
                message: format!("the card does not match the A2A 1.0 card schema: {why}"),
                blocks_calls: true,
            });
        }
    }
    p
}

/// `raw` with the repeated fields ProtoJSON leaves out when empty put back as `[]`: a skill's
/// `tags` (the official SDKs omit an empty list, and sign the card so), which the typed card
/// requires.
pub fn with_empty_lists(raw: &Value) -> Value {
    let mut v = raw.clone();
    if let Some(skills) = v.get_mut("skills").and_then(Value::as_array_mut) {
        for s in skills.iter_mut().filter_map(Value::as_object_mut) {
            s.entry("tags").or_insert_with(|| Value::Array(Vec::new()));
        }
    }
    v
}

/// What kind of JSON value `v` is, in a word.
pub fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "true or false",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// serde's words for a type mismatch, with its Rust names said plainly (`a sequence` → `a
/// list`, `a map` → `an object`); a missing field as "`x` is missing".
fn plain_serde(why: &str) -> String {
    let why = why
        .replace("a sequence", "a list")
        .replace("a map", "an object")
        .replace("struct ", "");
    match why.strip_prefix("missing field `") {
        Some(rest) => format!("{} is missing", rest.trim_end_matches('`')),
        None => why,
    }
}

/// A card in brief, as `POST /api/v1/peers/discover` and the `a2a_discover` tool return it
/// (keys in camelCase, like the card). Fields the card defines freely (`provider`, skill `tags`,
/// the default modes, …) are passed on as the card has them, so they are any JSON.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct CardSummary {
    pub name: String,
    /// Cut at 500 characters.
    pub description: String,
    pub version: String,
    /// The card's `provider` (`null` when absent).
    pub provider: Value,
    /// The card's `documentationUrl` (`null` when absent).
    pub documentation_url: Value,
    /// Where the card was read.
    pub card_url: String,
    /// The interface Sextant would call (`select_interface`), if any.
    pub jsonrpc_url: Option<String>,
    /// That interface's tenant.
    pub tenant: Option<String>,
    pub interfaces: Vec<CardInterface>,
    pub capabilities: CardCapabilities,
    pub auth: CardAuth,
    /// The card's `defaultInputModes` (`[]` when absent).
    pub default_input_modes: Value,
    /// The card's `defaultOutputModes` (`[]` when absent).
    pub default_output_modes: Value,
    /// The first 20 skills (`SUMMARY_SKILLS`).
    pub skills: Vec<CardSkill>,
    /// How many skills the card lists.
    pub skills_total: usize,
    /// The card's pin (`pin_hash`); `null` if it cannot be computed.
    pub pin_hash: Option<String>,
    /// Whether `problems` is empty.
    pub valid: bool,
    /// What is wrong with the card, in plain words (`validate`).
    pub problems: Vec<String>,
    /// For a registered peer (absent otherwise, like the next three): its name.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub registered_as: Option<String>,
    /// Its pin (`null`: not pinned yet).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub pinned_hash: Option<Option<String>>,
    /// Whether this card matches its pin.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub matches_pin: Option<bool>,
    /// Whether it is enabled (not disabled by a card change).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub enabled: Option<bool>,
    /// The card's signatures (A2A 1.0 §8.4): whether it is signed, by which keys, and whether
    /// a signature verified.
    pub signature: CardSignature,
    /// For a card that declares an extended card: whether `skills` are that card's
    /// (`crate::extended`). Absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub extended_card: Option<ExtendedCardUse>,
}

/// Whether a summary's skills come from the peer's extended card (read with the token
/// Sextant holds for it) or from its public card.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct ExtendedCardUse {
    /// `true`: `skills` are the extended card's; the pin and signature are still the public
    /// card's.
    pub used: bool,
    /// Why the public card's skills are shown instead (no token, the read failed, …).
    pub note: Option<String>,
}

/// What a card summary says about its signatures.
#[derive(Debug, Clone, Default, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct CardSignature {
    pub signed: bool,
    /// The `kid`s its signatures name.
    pub kids: Vec<String>,
    /// Whether a signature verified (`null`: not checked, or unsigned).
    pub verified: Option<bool>,
    /// The key that verified it (RFC 7638 thumbprint).
    pub thumbprint: Option<String>,
    /// Why it did not verify, or could not be checked.
    pub problem: Option<String>,
}

/// One of a card's `supportedInterfaces`: the fields it has of these four, as it has them.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct CardInterface {
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub url: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub protocol_binding: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub protocol_version: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tenant: Option<Value>,
}

/// A card's capabilities (absent flags are `false`).
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct CardCapabilities {
    pub streaming: bool,
    pub push_notifications: bool,
    pub extended_agent_card: bool,
    pub extensions: Vec<CardExtension>,
}

/// One A2A extension a card declares.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct CardExtension {
    pub uri: String,
    pub required: bool,
}

/// How a card asks to be authenticated.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct CardAuth {
    pub schemes: Vec<CardScheme>,
    /// The scheme names of each security requirement (any one requirement suffices).
    pub required: Vec<Vec<String>>,
    /// The whole in one line (`auth_summary`).
    pub summary: String,
}

/// One security scheme: its name in the card, and what it is in a few words (`scheme_label`).
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct CardScheme {
    pub name: String,
    pub kind: String,
}

/// One skill of a card summary.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct CardSkill {
    pub id: String,
    pub name: String,
    /// Cut at 500 characters.
    pub description: String,
    /// The skill's `tags` as the card has them (`[]` when absent).
    pub tags: Value,
    /// The skill's `examples` as the card has them (`[]` when absent).
    pub examples: Value,
}

/// A summary of a card for people and tools: name, skills, interfaces, capabilities, auth,
/// the pin, and the problems [`validate`] found. The registration fields are left unset.
pub fn summary(raw: &Value, card_url: &Url) -> CardSummary {
    let skills = array(raw, "skills");
    let shown: Vec<CardSkill> = skills
        .iter()
        .take(SUMMARY_SKILLS)
        .map(|s| CardSkill {
            id: text(s, "id"),
            name: text(s, "name"),
            description: cut(&text(s, "description"), SUMMARY_TEXT),
            tags: s.get("tags").cloned().unwrap_or(json!([])),
            examples: s.get("examples").cloned().unwrap_or(json!([])),
        })
        .collect();
    let interfaces: Vec<CardInterface> = array(raw, "supportedInterfaces")
        .iter()
        .map(|i| CardInterface {
            url: i.get("url").cloned(),
            protocol_binding: i.get("protocolBinding").cloned(),
            protocol_version: i.get("protocolVersion").cloned(),
            tenant: i.get("tenant").cloned(),
        })
        .collect();
    let caps = raw.get("capabilities").cloned().unwrap_or(json!({}));
    let flag = |k: &str| caps.get(k).and_then(Value::as_bool).unwrap_or(false);
    let extensions: Vec<CardExtension> = caps
        .get("extensions")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|e| CardExtension {
                    uri: text(e, "uri"),
                    required: e.get("required").and_then(Value::as_bool).unwrap_or(false),
                })
                .collect()
        })
        .unwrap_or_default();
    let schemes: Vec<CardScheme> = raw
        .get("securitySchemes")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(name, v)| CardScheme {
                    name: name.clone(),
                    kind: scheme_label(v),
                })
                .collect()
        })
        .unwrap_or_default();
    let required: Vec<Vec<String>> = array(raw, "securityRequirements")
        .iter()
        .map(|r| {
            r.get("schemes")
                .and_then(Value::as_object)
                .or_else(|| r.as_object())
                .map(|m| m.keys().cloned().collect())
                .unwrap_or_default()
        })
        .collect();
    let typed: Option<AgentCard> = serde_json::from_value(raw.clone()).ok();
    let chosen = typed.as_ref().and_then(select_interface);
    let problems = validate(raw, card_url);
    CardSummary {
        name: text(raw, "name"),
        description: cut(&text(raw, "description"), SUMMARY_TEXT),
        version: text(raw, "version"),
        provider: raw.get("provider").cloned().unwrap_or(Value::Null),
        documentation_url: raw.get("documentationUrl").cloned().unwrap_or(Value::Null),
        card_url: card_url.as_str().to_string(),
        jsonrpc_url: chosen.map(|i| i.url.clone()),
        tenant: chosen.and_then(|i| i.tenant.clone()),
        interfaces,
        capabilities: CardCapabilities {
            streaming: flag("streaming"),
            push_notifications: flag("pushNotifications"),
            extended_agent_card: flag("extendedAgentCard"),
            extensions,
        },
        auth: CardAuth {
            schemes,
            required,
            summary: auth_summary(raw),
        },
        default_input_modes: raw.get("defaultInputModes").cloned().unwrap_or(json!([])),
        default_output_modes: raw.get("defaultOutputModes").cloned().unwrap_or(json!([])),
        skills: shown,
        skills_total: skills.len(),
        pin_hash: pin_hash(raw).ok(),
        valid: problems.is_empty(),
        problems,
        registered_as: None,
        pinned_hash: None,
        matches_pin: None,
        enabled: None,
        signature: CardSignature {
            signed: sextant_a2a::signing::is_signed(raw),
            kids: sextant_a2a::signing::signature_kids(raw),
            ..CardSignature::default()
        },
        extended_card: None,
    }
}

/// One line about how the card asks to be authenticated.
pub fn auth_summary(raw: &Value) -> String {
    let schemes = raw.get("securitySchemes").and_then(Value::as_object);
    let required = !array(raw, "securityRequirements").is_empty();
    match schemes {
        None => "no authentication declared".into(),
        Some(m) if m.is_empty() => "no authentication declared".into(),
        Some(m) => {
            let list: Vec<String> = m
                .iter()
                .map(|(n, v)| format!("{n}: {}", scheme_label(v)))
                .collect();
            format!(
                "{} ({})",
                list.join("; "),
                if required { "required" } else { "optional" }
            )
        }
    }
}

/// The skill ids and tags a card advertises, lowercased (for matching capabilities).
pub fn advertised(parts_or_card: &Value) -> (Vec<String>, Vec<String>) {
    let skills = array(parts_or_card, "skills");
    let ids = skills
        .iter()
        .map(|s| text(s, "id").to_lowercase())
        .filter(|s| !s.is_empty())
        .collect();
    let tags = skills
        .iter()
        .flat_map(|s| array(s, "tags").iter())
        .filter_map(Value::as_str)
        .map(str::to_lowercase)
        .collect();
    (ids, tags)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jcs_matches_the_rfc_8785_examples() {
        // RFC 8785 §3.2.2.
        let input: Value = serde_json::from_str(
            r#"{
              "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
              "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
              "literals": [null, true, false]
            }"#,
        )
        .expect("json");
        let out = serde_json_canonicalizer::to_string(&input).expect("jcs");
        assert_eq!(
            out,
            "{\"literals\":[null,true,false],\"numbers\":[333333333.3333333,1e+30,4.5,0.002,1e-27],\"string\":\"€$\\u000f\\nA'B\\\"\\\\\\\\\\\"/\"}"
        );
        // RFC 8785 §3.2.3: keys sorted by UTF-16 code units.
        let input: Value = serde_json::from_str(
            r#"{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}"#,
        )
        .expect("json");
        let out = serde_json_canonicalizer::to_string(&input).expect("jcs");
        let keys = [
            "\\r",
            "1",
            "\u{80}",
            "\u{f6}",
            "\u{20ac}",
            "\u{1f600}",
            "\u{fb33}",
        ];
        let mut at = 0;
        for k in keys {
            let pos = out[at..]
                .find(&format!("\"{k}\":"))
                .unwrap_or_else(|| panic!("{k:?} out of order in {out}"));
            at += pos + 1;
        }
    }

    fn card() -> Value {
        json!({
            "name": "peer", "description": "a peer", "version": "1.0.0",
            "supportedInterfaces": [{"url": "http://127.0.0.1:9/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "capabilities": {"streaming": true},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "securitySchemes": {"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
            "skills": [{"id": "echo", "name": "Echo", "description": "echoes", "tags": ["echo", "Test"]}]
        })
    }

    #[test]
    fn the_pin_covers_interfaces_schemes_and_skills_only() {
        let a = card();
        let h = pin_hash(&a).expect("hash");
        assert_eq!(h.len(), 64);
        // Key order and unrelated fields do not matter.
        let mut b: Value = serde_json::from_str(&a.to_string()).expect("json");
        b["description"] = json!("now with more words");
        b["version"] = json!("2.0.0");
        b["capabilities"] = json!({"streaming": false});
        assert_eq!(pin_hash(&b).expect("hash"), h);
        // Absent and empty are the same.
        let mut c = a.clone();
        c["securitySchemes"] = json!({});
        let mut d = a.clone();
        if let Some(o) = d.as_object_mut() {
            o.remove("securitySchemes");
        }
        assert_eq!(pin_hash(&c).expect("c"), pin_hash(&d).expect("d"));
        assert_ne!(pin_hash(&c).expect("c"), h);
        for change in [
            json!({"supportedInterfaces": [{"url": "http://127.0.0.1:10/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]}),
            json!({"skills": [{"id": "echo", "name": "Echo", "description": "echoes", "tags": ["echo"]}]}),
            json!({"securitySchemes": {"key": {"apiKeySecurityScheme": {"location": "header", "name": "X-Key"}}}}),
        ] {
            let mut e = a.clone();
            if let (Some(o), Some(ch)) = (e.as_object_mut(), change.as_object()) {
                o.extend(ch.clone());
            }
            assert_ne!(pin_hash(&e).expect("hash"), h, "{change}");
        }
    }

    #[test]
    fn changes_are_described_plainly() {
        let old = pinned_parts(&card());
        let mut new_card = card();
        new_card["supportedInterfaces"][0]["url"] = json!("https://evil.example/rpc");
        new_card["skills"].as_array_mut().expect("skills").push(
            json!({"id": "shell", "name": "Shell", "description": "runs things", "tags": []}),
        );
        new_card["skills"][0]["description"] = json!("echoes, differently");
        new_card["securitySchemes"] = json!({});
        let changes = describe_changes(&old, &pinned_parts(&new_card));
        let all = changes.join("\n");
        for want in [
            "interface added: JSONRPC 1.0 at https://evil.example/rpc",
            "interface removed: JSONRPC 1.0 at http://127.0.0.1:9/rpc",
            "skill added: shell (Shell)",
            "skill changed: echo (description)",
            "security scheme removed: bearer (HTTP Bearer)",
        ] {
            assert!(all.contains(want), "{want:?} not in:\n{all}");
        }
        assert!(describe_changes(&old, &old).is_empty());
    }

    #[test]
    fn validation_reports_problems_in_plain_words() {
        let url = Url::parse("http://127.0.0.1:9/.well-known/agent-card.json").expect("url");
        assert!(
            validate(&card(), &url).is_empty(),
            "{:?}",
            validate(&card(), &url)
        );
        let bad = json!({
            "name": "", "version": "1",
            "supportedInterfaces": [{"url": "http://10.0.0.1/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "0.3"}],
            "skills": [{"id": "a", "name": "A", "tags": []}, {"id": "a", "name": "B", "description": "d", "tags": []}],
            "securityRequirements": [{"schemes": {"oauth": {"list": []}}}]
        });
        let problems = validate(&bad, &url).join("\n");
        for want in [
            "no name",
            "no description",
            "plain http outside loopback",
            "0.3 only",
            "no capabilities",
            "no defaultInputModes",
            "skill \"a\" has no description",
            "declared twice",
            "\"oauth\", which securitySchemes does not define",
        ] {
            assert!(problems.contains(want), "{want:?} not in:\n{problems}");
        }
        let other_origin = json!({
            "name": "n", "description": "d", "version": "1",
            "supportedInterfaces": [{"url": "https://elsewhere.example/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "capabilities": {}, "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "a", "name": "A", "description": "d", "tags": []}]
        });
        let p = validate(&other_origin, &url).join("\n");
        assert!(p.contains("another origin"), "{p}");
        assert_eq!(
            validate(&json!([1]), &url),
            ["the card is not a JSON object"]
        );
    }

    /// Sextant's own card lists gRPC at `host:port`, the proto's form for a gRPC target: that
    /// is a valid interface, not "an invalid url" (issue #35 item 7).
    #[test]
    fn a_grpc_interface_at_host_and_port_is_valid() {
        let url = Url::parse("http://127.0.0.1:9/.well-known/agent-card.json").expect("url");
        let mut c = card();
        c["supportedInterfaces"]
            .as_array_mut()
            .expect("interfaces")
            .push(json!({"url": "127.0.0.1:9", "protocolBinding": "GRPC", "protocolVersion": "1.0", "tenant": "echo"}));
        assert_eq!(validate(&c, &url), Vec::<String>::new());
        c["supportedInterfaces"][1]["url"] = json!("localhost:9900");
        assert_eq!(validate(&c, &url), Vec::<String>::new());
        c["supportedInterfaces"][1]["url"] = json!("https://grpc.example.com");
        assert_eq!(validate(&c, &url), Vec::<String>::new());
        for bad in ["no port here", "host:port/path", ""] {
            c["supportedInterfaces"][1]["url"] = json!(bad);
            let p = check(&c, &url);
            assert!(
                p.iter()
                    .any(|p| p.field == "card.supportedInterfaces[1].url" && !p.blocks_calls),
                "{bad:?}: {p:?}"
            );
        }
    }

    /// Each problem says where it is, and whether it stops calls; a card with several wrong
    /// fields reports every one at once, in plain words rather than serde's.
    #[test]
    fn problems_name_their_field_and_whether_they_stop_calls() {
        let url = Url::parse("http://127.0.0.1:9/.well-known/agent-card.json").expect("url");
        let wrong = json!({
            "name": "n", "description": "d",
            "supportedInterfaces": [{"url": "http://127.0.0.1:9/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "capabilities": [], "defaultInputModes": "text/plain", "defaultOutputModes": ["text/plain"],
            "skills": "everything"
        });
        let p = check(&wrong, &url);
        let blocking: Vec<&str> = p
            .iter()
            .filter(|p| p.blocks_calls)
            .map(|p| p.field.as_str())
            .collect();
        assert_eq!(
            blocking,
            [
                "card.version",
                "card.capabilities",
                "card.defaultInputModes",
                "card.skills"
            ],
            "{p:?}"
        );
        let all = p
            .iter()
            .map(|p| p.message.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        for want in [
            "the card has no version",
            "capabilities is a list",
            "defaultInputModes must be a list of media types, not a string",
            "skills must be a list of skills, not a string",
        ] {
            assert!(all.contains(want), "{want:?} not in:\n{all}");
        }
        assert!(!all.contains("invalid type"), "{all}");

        // Empty skills, a missing description: worth saying, but calls still work.
        let mut fine = card();
        fine["skills"] = json!([]);
        fine["description"] = json!("");
        let p = check(&fine, &url);
        assert!(!p.is_empty() && p.iter().all(|p| !p.blocks_calls), "{p:?}");

        // A wrong type deep inside: serde's path, said plainly.
        let mut deep = card();
        deep["skills"][0]["tags"] = json!("echo");
        let p = check(&deep, &url);
        let typed = p
            .iter()
            .find(|p| p.field == "card.skills[0].tags" && p.blocks_calls)
            .unwrap_or_else(|| panic!("{p:?}"));
        assert!(typed.message.contains("expected a list"), "{typed:?}");
    }

    #[test]
    fn a_03_card_is_recognised() {
        assert!(looks_like_v03(
            &json!({"url": "https://x/", "protocolVersion": "0.3.0"})
        ));
        assert!(looks_like_v03(
            &json!({"protocolVersion": "0.2.5", "supportedInterfaces": []})
        ));
        assert!(!looks_like_v03(&card()));
        // A 1.0 card with the 0.3 fields beside (what Sextant and the Python SDK serve a 0.3
        // client) is a 1.0 card.
        let mut both = card();
        both["url"] = json!("http://127.0.0.1:9/rpc");
        both["protocolVersion"] = json!("0.3.0");
        assert!(!looks_like_v03(&both));
    }

    #[test]
    fn summaries_pick_the_jsonrpc_interface_and_skills() {
        let url = Url::parse("http://127.0.0.1:9/.well-known/agent-card.json").expect("url");
        let s = serde_json::to_value(summary(&card(), &url)).expect("json");
        assert_eq!(s["jsonrpcUrl"], "http://127.0.0.1:9/rpc");
        assert_eq!(s["capabilities"]["streaming"], true);
        assert_eq!(s["skills"][0]["id"], "echo");
        assert_eq!(s["valid"], true);
        assert_eq!(s["auth"]["summary"], "bearer: HTTP Bearer (optional)");
        assert_eq!(s["pinHash"], json!(pin_hash(&card()).ok()));
        let (ids, tags) = advertised(&card());
        assert_eq!(ids, ["echo"]);
        assert_eq!(tags, ["echo", "test"]);
    }
}
