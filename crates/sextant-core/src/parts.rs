//! What an Agent takes in a message besides text, and the check every binding runs before an
//! input is admitted.
//!
//! An Agent declares its input media types in `agents.toml` (`input_modes`, the card's
//! `defaultInputModes`). Without them it takes text only, as every Agent did before: text
//! parts, nothing else. With them, a part is accepted when one of them matches it: a text part
//! by its `mediaType` (default `text/plain`), a data part by its `mediaType` or
//! `application/json`, a file part (`raw` bytes or a `url`) by its `mediaType` (default
//! `application/octet-stream`). Modes may be exact (`image/png`) or ranges (`image/*`, `*/*`);
//! parameters (`; charset=…`) are ignored, case too. Files and data reach only engines that
//! take them (`exec`, and the conformance engine): for any other Agent they are refused
//! whatever the modes say.
//!
//! Accepted parts are journalled as received, so they come back exactly in history; each part
//! and each message are capped (`max_part_bytes`, `max_message_bytes`). A part's size is what
//! it carries: the decoded bytes of `raw`, the UTF-8 of `text` and `url`, the JSON of `data`.
//! URL parts are kept as given and never fetched by Sextant, unless the Agent sets
//! `fetch_url_parts` (the `exec` engine then fetches them through the network guard).

use serde::{Deserialize, Serialize};

use crate::a2a::{Artifact, Part, PartContent};

/// Builds an artifact: `parts` under `name`, with no description or metadata (engines'
/// output, and the replies of outbound calls).
pub fn artifact(id: impl Into<String>, name: &str, parts: Vec<Part>) -> Artifact {
    Artifact {
        artifact_id: id.into(),
        name: Some(name.into()),
        description: None,
        parts,
        metadata: None,
        extensions: None,
    }
}

/// What an Agent takes in and offers (flattened into its `agents.toml` entry).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Features {
    /// Media types (or ranges) accepted in messages; the card's `defaultInputModes`. `None`:
    /// text parts only (shown as `text/plain`).
    pub input_modes: Option<Vec<String>>,
    /// Largest part accepted, in bytes (see the module docs for how a part is measured).
    pub max_part_bytes: u64,
    /// Largest message accepted, all its parts together, in bytes.
    pub max_message_bytes: u64,
    /// Whether the engine fetches `url` parts (through the network guard). Off: URLs are handed
    /// on as given.
    pub fetch_url_parts: bool,
    /// Whether callers may register push-notification webhooks for this Agent's tasks (the
    /// card's `capabilities.pushNotifications`).
    pub push_notifications: bool,
}

/// Default `max_part_bytes`: 4 MiB.
pub const DEFAULT_MAX_PART: u64 = 4 << 20;
/// Default `max_message_bytes`: 6 MiB (a request body is at most 10 MiB, and base64 adds a third).
pub const DEFAULT_MAX_MESSAGE: u64 = 6 << 20;

impl Default for Features {
    fn default() -> Self {
        Self {
            input_modes: None,
            max_part_bytes: DEFAULT_MAX_PART,
            max_message_bytes: DEFAULT_MAX_MESSAGE,
            fetch_url_parts: false,
            push_notifications: false,
        }
    }
}

/// Why a message's parts were refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PartRefusal {
    /// No input mode matches the part (A2A ContentTypeNotSupportedError).
    Unsupported {
        index: usize,
        /// `a file (raw)`, `a file (url)`, `data` or `text`.
        kind: &'static str,
        media_type: String,
    },
    /// One part is over `max_part_bytes`.
    PartTooLarge { index: usize, size: u64, limit: u64 },
    /// The parts together are over `max_message_bytes`.
    MessageTooLarge { size: u64, limit: u64 },
    /// A `url` part that is not an absolute http(s) URL.
    BadUrl { index: usize, why: String },
}

impl PartRefusal {
    /// The field the refusal is about (`message.parts[2]`, or `message.parts`).
    pub fn field(&self) -> String {
        match self {
            PartRefusal::Unsupported { index, .. } | PartRefusal::PartTooLarge { index, .. } => {
                format!("message.parts[{index}]")
            }
            PartRefusal::BadUrl { index, .. } => format!("message.parts[{index}].url"),
            PartRefusal::MessageTooLarge { .. } => "message.parts".into(),
        }
    }

    /// Whether this is a content-type refusal (the others are invalid parameters).
    pub fn is_content_type(&self) -> bool {
        matches!(self, PartRefusal::Unsupported { .. })
    }

    /// The refusal in plain words, for the agent `agent_id` with these features.
    pub fn describe(&self, agent_id: &str, features: &Features) -> String {
        match self {
            PartRefusal::Unsupported {
                index,
                kind,
                media_type,
            } => format!(
                "message.parts[{index}] is {kind} of type {media_type}; agent {agent_id:?} accepts {}",
                match &features.input_modes {
                    None => "text parts only".to_string(),
                    Some(m) => m.join(", "),
                }
            ),
            PartRefusal::PartTooLarge { size, limit, .. } => format!(
                "is {}; agent {agent_id:?} accepts at most {} per part (max_part_bytes)",
                human_bytes(*size),
                human_bytes(*limit)
            ),
            PartRefusal::MessageTooLarge { size, limit } => format!(
                "hold {} together; agent {agent_id:?} accepts at most {} per message \
                 (max_message_bytes)",
                human_bytes(*size),
                human_bytes(*limit)
            ),
            PartRefusal::BadUrl { why, .. } => why.clone(),
        }
    }
}

/// `1.5 MiB`, `300 bytes`.
pub fn human_bytes(n: u64) -> String {
    if n < 1024 {
        return format!("{n} bytes");
    }
    let (v, unit) = if n < 1 << 20 {
        (n as f64 / 1024.0, "KiB")
    } else {
        (n as f64 / (1u64 << 20) as f64, "MiB")
    };
    let s = format!("{v:.1}");
    format!("{} {unit}", s.strip_suffix(".0").unwrap_or(&s))
}

/// A media type without parameters, lowercased (`Text/Plain; charset=utf-8` → `text/plain`).
pub fn bare_media_type(m: &str) -> String {
    m.split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// Whether a mode (`image/png`, `image/*`, `*/*`) covers a media type.
pub fn mode_matches(mode: &str, media_type: &str) -> bool {
    let (mode, media) = (bare_media_type(mode), bare_media_type(media_type));
    if mode == "*/*" || mode == "*" || mode == media {
        return true;
    }
    match (mode.split_once('/'), media.split_once('/')) {
        (Some((mt, "*")), Some((t, _))) => mt == t,
        _ => false,
    }
}

/// Whether a string is a media type or range Sextant understands (`type/subtype`, `type/*`,
/// `*/*`).
pub fn valid_mode(mode: &str) -> bool {
    let m = bare_media_type(mode);
    let Some((t, s)) = m.split_once('/') else {
        return false;
    };
    let token = |x: &str| {
        !x.is_empty()
            && x.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b) || b == b'*')
    };
    token(t) && token(s) && (t != "*" || s == "*") && (!t.contains('*') || t == "*")
}

/// What kind of part this is, in words, and the media type it is matched with.
pub fn part_kind(p: &Part) -> (&'static str, String) {
    let given = p.media_type.as_deref().map(bare_media_type);
    match &p.content {
        PartContent::Text(_) => ("text", given.unwrap_or_else(|| "text/plain".into())),
        PartContent::Data(_) => ("data", given.unwrap_or_else(|| "application/json".into())),
        PartContent::Raw(_) => (
            "a file (raw)",
            given.unwrap_or_else(|| "application/octet-stream".into()),
        ),
        PartContent::Url(_) => (
            "a file (url)",
            given.unwrap_or_else(|| "application/octet-stream".into()),
        ),
    }
}

/// How many bytes a part carries.
pub fn part_size(p: &Part) -> u64 {
    match &p.content {
        PartContent::Text(t) | PartContent::Url(t) => t.len() as u64,
        PartContent::Raw(b) => b.len() as u64,
        PartContent::Data(v) => serde_json::to_vec(v).map_or(0, |b| b.len() as u64),
    }
}

impl Features {
    /// The declared modes, or `text/plain` when none are.
    pub fn modes(&self) -> Vec<String> {
        self.input_modes
            .clone()
            .unwrap_or_else(|| vec!["text/plain".into()])
    }

    /// Whether the declared modes reach beyond text.
    pub fn accepts_more_than_text(&self) -> bool {
        self.input_modes
            .iter()
            .flatten()
            .any(|m| !bare_media_type(m).starts_with("text/"))
    }

    /// Whether a part is accepted; `takes_files`: whether the Agent's engine takes file and
    /// data parts at all.
    pub fn accepts(&self, p: &Part, takes_files: bool) -> bool {
        let (_, media) = part_kind(p);
        let text = matches!(p.content, PartContent::Text(_));
        let Some(modes) = &self.input_modes else {
            return text;
        };
        if !text && !takes_files {
            return false;
        }
        match &p.content {
            // A data part is JSON whatever it calls itself.
            PartContent::Data(_) => modes
                .iter()
                .any(|m| mode_matches(m, &media) || mode_matches(m, "application/json")),
            _ => modes.iter().any(|m| mode_matches(m, &media)),
        }
    }

    /// Checks a message's parts: each accepted (see [`Features::accepts`]), each URL an
    /// absolute http(s) URL, each part and all of them together within the caps. The first
    /// problem found is the answer; nothing is changed.
    pub fn check(&self, parts: &[Part], takes_files: bool) -> Result<(), PartRefusal> {
        let mut total: u64 = 0;
        for (index, p) in parts.iter().enumerate() {
            if !self.accepts(p, takes_files) {
                let (kind, media_type) = part_kind(p);
                return Err(PartRefusal::Unsupported {
                    index,
                    kind,
                    media_type,
                });
            }
            if let PartContent::Url(u) = &p.content {
                check_url(u).map_err(|why| PartRefusal::BadUrl { index, why })?;
            }
            let size = part_size(p);
            if size > self.max_part_bytes {
                return Err(PartRefusal::PartTooLarge {
                    index,
                    size,
                    limit: self.max_part_bytes,
                });
            }
            total = total.saturating_add(size);
        }
        if total > self.max_message_bytes {
            return Err(PartRefusal::MessageTooLarge {
                size: total,
                limit: self.max_message_bytes,
            });
        }
        Ok(())
    }

    /// Checks the settings a person wrote; the message names the field.
    pub fn validate(&self) -> Result<(), String> {
        let modes = self.input_modes.as_deref().unwrap_or(&[]);
        if self.input_modes.is_some() && modes.is_empty() {
            return Err("input_modes must name at least one media type".into());
        }
        if let Some(bad) = modes.iter().find(|m| !valid_mode(m)) {
            return Err(format!(
                "input_modes: {bad:?} is not a media type (type/subtype, type/* or */*)"
            ));
        }
        if self.max_part_bytes == 0 || self.max_message_bytes == 0 {
            return Err("max_part_bytes and max_message_bytes must be > 0".into());
        }
        Ok(())
    }
}

/// Why a URL part's URL is not acceptable, if it is not.
fn check_url(u: &str) -> Result<(), String> {
    let scheme = u.split_once(':').map(|(s, _)| s.to_ascii_lowercase());
    let rest_ok = u
        .split_once("://")
        .is_some_and(|(_, r)| !r.is_empty() && !r.starts_with('/'));
    match scheme.as_deref() {
        Some("http" | "https") if rest_ok && !u.chars().any(char::is_control) => Ok(()),
        _ => Err(format!(
            "must be an absolute http or https URL with a host (got {:?})",
            u.chars().take(80).collect::<String>()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn files() -> Features {
        Features {
            input_modes: Some(vec![
                "text/plain".into(),
                "image/*".into(),
                "application/json".into(),
            ]),
            max_part_bytes: 10,
            max_message_bytes: 15,
            ..Features::default()
        }
    }

    #[test]
    fn modes_match_exactly_by_range_and_ignore_parameters() {
        assert!(mode_matches("image/*", "image/png"));
        assert!(mode_matches("*/*", "application/x-anything"));
        assert!(mode_matches("Text/Plain", "text/plain; charset=utf-8"));
        assert!(!mode_matches("image/*", "text/plain"));
        assert!(!mode_matches("image/png", "image/jpeg"));
        assert!(valid_mode("image/*") && valid_mode("*/*") && valid_mode("text/plain"));
        for bad in ["image", "*/png", "", "a/", "ima ge/png", "im*/png"] {
            assert!(!valid_mode(bad), "{bad}");
        }
    }

    #[test]
    fn the_default_takes_text_and_names_the_refused_part() {
        let f = Features::default();
        assert!(f.check(&[Part::text("hi")], true).is_ok());
        let err = f
            .check(&[Part::text("hi"), Part::data(json!({"k": 1}))], true)
            .unwrap_err();
        assert_eq!(err.field(), "message.parts[1]");
        assert!(err.is_content_type());
        let words = err.describe("echo", &f);
        assert!(words.contains("parts[1] is data"), "{words}");
        assert!(words.contains("accepts text parts only"), "{words}");
        // Without declared modes a text file is refused too: only text parts get through.
        let txt = Part::url("https://example.com/a.txt").with_media_type("text/plain");
        assert!(matches!(
            f.check(&[txt], true),
            Err(PartRefusal::Unsupported { index: 0, .. })
        ));
        // Declared modes do not reach an engine that takes no files.
        let png = || Part::raw(b"x".to_vec()).with_media_type("image/png");
        assert!(files().check(&[png()], true).is_ok());
        assert!(
            files()
                .check(&[png()], false)
                .unwrap_err()
                .is_content_type()
        );
        assert!(files().check(&[Part::text("hi")], false).is_ok());
    }

    #[test]
    fn declared_modes_accept_files_and_data_and_refuse_the_rest() {
        let f = files();
        let png = Part::raw(b"png".to_vec()).with_media_type("image/png");
        let data = Part::data(json!([1]));
        assert!(f.check(&[png, data], true).is_ok());
        // A file without a media type is application/octet-stream.
        let unknown = Part::raw(b"x".to_vec());
        let e = f.check(&[unknown], true).unwrap_err();
        assert!(
            e.describe("a", &f).contains("application/octet-stream"),
            "{e:?}"
        );
        let pdf = Part::url("https://example.com/a.pdf").with_media_type("application/pdf");
        assert!(f.check(&[pdf], true).unwrap_err().is_content_type());
    }

    #[test]
    fn caps_count_decoded_bytes_per_part_and_per_message() {
        let f = files();
        let ten = || Part::raw(vec![0u8; 10]).with_media_type("image/png");
        assert!(f.check(&[ten()], true).is_ok());
        let eleven = Part::raw(vec![0u8; 11]).with_media_type("image/png");
        let e = f.check(&[Part::text("ok"), eleven], true).unwrap_err();
        assert_eq!(
            e,
            PartRefusal::PartTooLarge {
                index: 1,
                size: 11,
                limit: 10
            }
        );
        assert!(!e.is_content_type());
        assert!(e.describe("a", &f).contains("at most 10 bytes per part"));
        let e = f.check(&[ten(), ten()], true).unwrap_err();
        assert_eq!(
            e,
            PartRefusal::MessageTooLarge {
                size: 20,
                limit: 15
            }
        );
        assert_eq!(e.field(), "message.parts");
        assert_eq!(human_bytes(3 << 20), "3 MiB");
        assert_eq!(human_bytes(1536), "1.5 KiB");
    }

    #[test]
    fn url_parts_must_be_http_urls() {
        let f = Features {
            input_modes: Some(vec!["*/*".into()]),
            ..Features::default()
        };
        assert!(f.check(&[Part::url("https://example.com/x")], true).is_ok());
        for bad in [
            "file:///etc/passwd",
            "javascript:alert(1)",
            "https://",
            "http:///x",
            "relative/path",
            "https://a.example/\nx",
        ] {
            let e = f.check(&[Part::url(bad)], true).unwrap_err();
            assert_eq!(e.field(), "message.parts[0].url", "{bad}");
        }
    }

    #[test]
    fn features_flatten_into_an_agent_entry_with_defaults() {
        let f: Features = serde_json::from_value(json!({"input_modes": ["*/*"]})).unwrap();
        assert_eq!(f.max_part_bytes, DEFAULT_MAX_PART);
        assert!(!f.push_notifications);
        assert!(f.validate().is_ok());
        let bad = Features {
            input_modes: Some(vec![]),
            ..Features::default()
        };
        assert!(bad.validate().unwrap_err().contains("input_modes"));
    }
}
