//! Extended cards (A2A `GetExtendedAgentCard`): what a peer shows a caller it knows.
//!
//! A public card may be minimal by design (a Sextant's lists one generic `chat` skill; the
//! real skills are on its extended card). So when a registered peer's public card declares
//! `capabilities.extendedAgentCard` and Sextant holds a token for that peer, the extended card
//! is read with the token, over the interface Sextant calls the peer on (JSON-RPC
//! `GetExtendedAgentCard`), and its skills are what `a2a_orchestrate` routes by and what
//! `a2a_discover` shows.
//!
//! - **The public card stays the identity.** The pin and the signature check are on the public
//!   card. The extended card is read only after the public card checked out against its pin
//!   ([`Peers::connect`], or `a2a_discover` of a card that matches its pin), and only its
//!   skills are used: its interfaces, security schemes and the rest are ignored.
//! - **Data, bounded and screened.** At most the card limit (256 KiB) is read, at most
//!   [`MAX_SKILLS`] skills kept, each string cut and screened like other peer text
//!   (credential-shaped strings scrubbed, prompt-injection markup filtered).
//! - **Cached with the card refresh.** Each check of the public card (every use of the peer)
//!   reads it again once the last read is older than [`FRESH`], at once when the pin or the
//!   token changed; `a2a_orchestrate` reads it first for a peer it has none for. Kept in
//!   memory: after a restart the first use reads it again.
//! - **A failure falls back to the public card**, with a note saying why (orchestrate's
//!   `notes`, discover's `extendedCard.note`). Without a token only the public card is used.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sextant_journal::PeerRow;
use sha2::{Digest, Sha256};

use futures::StreamExt;

use crate::client::{Endpoint, FetchedCard};
use crate::{PeerError, Peers};

/// How long a read extended card is used before the next check of the public card reads it
/// again.
pub const FRESH: Duration = Duration::from_secs(300);
/// The longest an extended card is waited for.
const WAIT: Duration = Duration::from_secs(30);
/// Peers checked at once before an orchestration.
const AT_ONCE: usize = 6;
/// Most skills kept from an extended card.
pub const MAX_SKILLS: usize = 100;
const MAX_TAGS: usize = 20;
const MAX_EXAMPLES: usize = 10;
const ID_CHARS: usize = 100;
const NAME_CHARS: usize = 200;
const TEXT_CHARS: usize = 500;

/// What reading a peer's extended card came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The public card declares no extended card.
    NotDeclared,
    /// Its skills, screened (`{"id", "name", "description", "tags", "examples"}` each).
    Skills(Vec<Value>),
    /// It could not be read: why, in a few words.
    Failed(String),
}

/// One peer's last read.
#[derive(Debug, Clone)]
struct Entry {
    /// The public card's pin it was read under.
    pin: String,
    /// SHA-256 of the token it was read with.
    token: [u8; 32],
    at: Instant,
    outcome: Outcome,
}

/// The extended cards read, by peer name (in memory).
#[derive(Debug, Default)]
pub(crate) struct Cache {
    entries: Mutex<HashMap<String, Entry>>,
}

fn fingerprint(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

impl Cache {
    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The last read for `name` under this pin and token, and when it was made.
    fn get(&self, name: &str, pin: &str, token: &str) -> Option<(Outcome, Instant)> {
        self.entries()
            .get(name)
            .filter(|e| e.pin == pin && e.token == fingerprint(token))
            .map(|e| (e.outcome.clone(), e.at))
    }

    fn put(&self, name: &str, pin: &str, token: &str, outcome: Outcome) {
        self.entries().insert(
            name.to_string(),
            Entry {
                pin: pin.to_string(),
                token: fingerprint(token),
                at: Instant::now(),
                outcome,
            },
        );
    }

    fn forget(&self, name: &str) {
        self.entries().remove(name);
    }
}

/// Whether a card declares an extended card.
pub fn declares(raw: &Value) -> bool {
    raw.pointer("/capabilities/extendedAgentCard")
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// A peer's string, cut to `max` characters and screened like other peer text.
fn screen(s: &str, max: usize) -> String {
    let scrubbed = sextant_core::redact::scrub_outbound(s, false);
    sextant_core::untrusted::filter_inbound(&sextant_core::text::cut(&scrubbed, max).to_string())
}

fn strings(v: &Value, most: usize, max: usize) -> Vec<Value> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .take(most)
                .map(|s| json!(screen(s, max)))
                .collect()
        })
        .unwrap_or_default()
}

/// The skills of an extended card, bounded and screened: only their id, name, description,
/// tags and examples, as strings; skills without an id are left out.
pub fn screen_skills(card: &Value) -> Vec<Value> {
    let text = |s: &Value, k: &str, max: usize| {
        screen(s.get(k).and_then(Value::as_str).unwrap_or(""), max)
    };
    card.get("skills")
        .and_then(Value::as_array)
        .map(|skills| {
            skills
                .iter()
                .filter(|s| {
                    s.get("id")
                        .and_then(Value::as_str)
                        .is_some_and(|i| !i.trim().is_empty())
                })
                .take(MAX_SKILLS)
                .map(|s| {
                    json!({
                        "id": text(s, "id", ID_CHARS),
                        "name": text(s, "name", NAME_CHARS),
                        "description": text(s, "description", TEXT_CHARS),
                        "tags": strings(&s["tags"], MAX_TAGS, ID_CHARS),
                        "examples": strings(&s["examples"], MAX_EXAMPLES, TEXT_CHARS),
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

impl Peers {
    /// The extended card last read for the registered peer `row`, when it still applies:
    /// Sextant holds a token for the peer now (the one it was read with) and the peer is
    /// pinned to the public card it was read under. With whether it is older than [`FRESH`].
    pub(crate) fn extended(&self, row: &PeerRow) -> Option<(Outcome, bool)> {
        let token = self.inner.tokens.get(&row.name)?;
        let pin = row.pinned_hash.as_deref()?;
        self.inner
            .extended
            .get(&row.name, pin, &token)
            .map(|(o, at)| (o, at.elapsed() >= FRESH))
    }

    /// The skills to match and show for `row`: its extended card's when one applies
    /// ([`Peers::extended`]).
    pub(crate) fn extended_skills(&self, row: &PeerRow) -> Option<Vec<Value>> {
        match self.extended(row)? {
            (Outcome::Skills(s), _) => Some(s),
            _ => None,
        }
    }

    /// Why the extended card of `row` is not used though it declares one, if it could not be
    /// read.
    pub(crate) fn extended_note(&self, row: &PeerRow) -> Option<String> {
        match self.extended(row)? {
            (Outcome::Failed(why), _) => Some(why),
            _ => None,
        }
    }

    /// Before an orchestration: for each usable pinned peer Sextant holds a token for and has
    /// no fresh read of, checks its public card as a call does (which reads the extended card,
    /// [`Peers::refresh_extended`]), a few at a time. A peer whose card could not be checked
    /// is matched as it was pinned; the notes say which and why.
    pub(crate) async fn read_extended_cards(&self) -> Result<Vec<String>, PeerError> {
        let rows = self.journal().peers().await?;
        let due: Vec<String> = rows
            .iter()
            .filter(|r| r.paused_at.is_none() && r.disabled.is_none() && r.pinned_hash.is_some())
            .filter(|r| self.inner.tokens.get(&r.name).is_some())
            .filter(|r| self.extended(r).is_none_or(|(_, old)| old))
            .map(|r| r.name.clone())
            .collect();
        let notes = futures::stream::iter(due)
            .map(|name| async move {
                match self.check_and_connect(&name).await {
                    Ok(_) => None,
                    Err(e) => Some(format!("{name}: its card could not be checked ({e})")),
                }
            })
            .buffer_unordered(AT_ONCE)
            .filter_map(|n| async move { n })
            .collect()
            .await;
        Ok(notes)
    }

    /// After the public card `fetched` of the registered peer `name` checked out against its
    /// pin `pin`: reads its extended card over `ep` (with the peer's token), unless a read
    /// under the same pin and token is fresh. `None` without a token (nothing is read, and
    /// nothing kept). Never fails: a failure is the outcome, and is kept too.
    pub(crate) async fn refresh_extended(
        &self,
        name: &str,
        pin: &str,
        fetched: &FetchedCard,
        ep: &Endpoint,
    ) -> Option<Outcome> {
        let cache = &self.inner.extended;
        let Some(token) = self.inner.tokens.get(name) else {
            cache.forget(name);
            return None;
        };
        if let Some((o, at)) = cache.get(name, pin, &token)
            && at.elapsed() < FRESH
        {
            return Some(o);
        }
        let outcome = if !declares(&fetched.raw) {
            Outcome::NotDeclared
        } else if !ep
            .bearer
            .as_ref()
            .is_some_and(|b| b.origin == ep.url.origin())
        {
            Outcome::Failed(format!(
                "its extended card was not read: the interface Sextant calls ({}) is on \
                 another origin than its card, and the token is sent only to the card's",
                ep.url
            ))
        } else {
            let mut ep = ep.clone();
            ep.timeout = ep.timeout.min(WAIT);
            match self.client().get_extended_agent_card(&ep).await {
                Ok(card) => Outcome::Skills(screen_skills(&card)),
                Err(e) => Outcome::Failed(format!("its extended card could not be read: {e}")),
            }
        };
        if let Outcome::Failed(why) = &outcome {
            tracing::info!(peer = %name, %why, "using the peer's public card");
        }
        cache.put(name, pin, &token, outcome.clone());
        Some(outcome)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn skills_are_bounded_and_screened() {
        let many: Vec<Value> = (0..MAX_SKILLS + 5)
            .map(|i| json!({"id": format!("s{i}"), "name": "n"}))
            .collect();
        assert_eq!(screen_skills(&json!({ "skills": many })).len(), MAX_SKILLS);
        let card = json!({"skills": [
            {"id": "translate", "name": "Translate", "description": "x".repeat(TEXT_CHARS + 50),
             "tags": ["language", 7, "t".repeat(ID_CHARS + 1)], "examples": ["hello"],
             "extra": {"kept": false}},
            {"name": "no id"},
            {"id": "leak", "name": "send Bearer abcdefghijklmnopqrstuvwxyz0123"},
        ]});
        let s = screen_skills(&card);
        assert_eq!(s.len(), 2, "{s:?}");
        assert_eq!(s[0]["id"], "translate");
        assert!(s[0]["description"].as_str().unwrap().chars().count() <= TEXT_CHARS + 1);
        assert_eq!(s[0]["tags"].as_array().unwrap().len(), 2, "strings only");
        assert!(s[0].get("extra").is_none());
        assert!(
            !s[1]["name"].as_str().unwrap().contains("abcdefghijklmnop"),
            "credential-shaped text is scrubbed: {}",
            s[1]
        );
        assert!(screen_skills(&json!({"skills": "no"})).is_empty());
        assert!(declares(
            &json!({"capabilities": {"extendedAgentCard": true}})
        ));
        assert!(!declares(&json!({"capabilities": {}})));
    }

    #[test]
    fn a_read_applies_to_its_pin_and_token_only() {
        let c = Cache::default();
        c.put("p", "pin1", "tok", Outcome::NotDeclared);
        assert!(c.get("p", "pin1", "tok").is_some());
        assert!(c.get("p", "pin2", "tok").is_none(), "re-pinned");
        assert!(c.get("p", "pin1", "other").is_none(), "another token");
        c.forget("p");
        assert!(c.get("p", "pin1", "tok").is_none());
    }
}
