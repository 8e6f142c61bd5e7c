//! Peers' signed cards: the signature is checked when a card is pinned, and its key is pinned
//! with it (docs/card-signing.md).
//!
//! - At pinning (registration, first use, re-pin) a signed card's signature must verify with a
//!   key the peer's owner gave (`card_jwks`) or the one published at the card's origin
//!   (`/.well-known/jwks.json`, through the guard); never a `jku`. A signature that does not
//!   verify, or whose key cannot be read, refuses the pin with the reason. An unsigned card
//!   pins no key (and pins exactly as it always did: the pin hash ignores signatures).
//! - At every use the card must still carry a valid signature by the pinned key (checked with
//!   that key alone, no fetch). A card signed by another key, no longer signed, or with a
//!   signature that fails disables the peer, as a changed card does, until the person re-pins
//!   it. A peer whose card starts being signed has its key pinned the first time it is seen,
//!   if it verifies (the card itself must still match its pin).

use std::time::Duration;

use crate::client::FetchedCard;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sextant_a2a::signing::{self, Reading, SignatureError, Verified};
use sextant_journal::PeerRow;
use ts_rs::TS;

use super::{PeerError, Peers};

/// A pinned card key, as stored (`peers.pinned_key`) and shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[ts(export)]
pub struct PinnedKey {
    pub kid: String,
    pub alg: String,
    /// RFC 7638 thumbprint of the key.
    pub thumbprint: String,
    /// Which canonical reading the pinned card's signature covered (`spec` or `sdk`).
    pub reading: String,
    /// The public key (a JWK).
    #[ts(type = "unknown")]
    pub jwk: Value,
}

impl PinnedKey {
    fn from_verified(v: &Verified) -> Self {
        Self {
            kid: v.kid.clone(),
            alg: v.alg.clone(),
            thumbprint: v.thumbprint.clone(),
            reading: match v.reading {
                Reading::Spec => "spec".into(),
                Reading::Sdk => "sdk".into(),
            },
            jwk: v.jwk.clone(),
        }
    }

    /// The stored JSON.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Reads the stored JSON.
    pub fn from_value(v: &Value) -> Option<Self> {
        serde_json::from_value(v.clone()).ok()
    }
}

/// What is wrong with a pinned peer's current card's signature.
#[derive(Debug, Clone, PartialEq)]
pub enum KeyProblem {
    /// The card is signed, by another key than the pinned one.
    Changed { new_kids: Vec<String> },
    /// The card is not signed any more.
    Removed,
    /// The pinned key's signature does not verify.
    Invalid(String),
}

impl KeyProblem {
    /// The `PeerDisabled.reason`.
    pub fn reason(&self) -> &'static str {
        match self {
            KeyProblem::Changed { .. } => "signing_key_changed",
            KeyProblem::Removed => "signature_removed",
            KeyProblem::Invalid(_) => "signature_invalid",
        }
    }

    /// What happened, in plain words.
    pub fn describe(&self, pinned: &PinnedKey) -> String {
        match self {
            KeyProblem::Changed { new_kids } => format!(
                "the card is now signed by key {} instead of the pinned key {} ({})",
                new_kids.join(", "),
                pinned.kid,
                pinned.alg
            ),
            KeyProblem::Removed => format!(
                "the card is not signed any more (it was signed by key {})",
                pinned.kid
            ),
            KeyProblem::Invalid(why) => {
                format!(
                    "the signature by the pinned key {} fails: {why}",
                    pinned.kid
                )
            }
        }
    }
}

/// Checks a card against the key pinned with it (no fetch).
pub fn check_pinned(card: &Value, pinned: &PinnedKey) -> Result<(), KeyProblem> {
    if !signing::is_signed(card) {
        return Err(KeyProblem::Removed);
    }
    let mut jwk = pinned.jwk.clone();
    jwk["kid"] = Value::String(pinned.kid.clone());
    match signing::verify_card(card, &[jwk]) {
        Ok(v) if v.thumbprint == pinned.thumbprint => Ok(()),
        Ok(_) => Err(KeyProblem::Invalid(
            "it verified with a key whose thumbprint differs".into(),
        )),
        Err(SignatureError::NoKey { .. }) => Err(KeyProblem::Changed {
            new_kids: signing::signature_kids(card),
        }),
        Err(SignatureError::Unsigned) => Err(KeyProblem::Removed),
        Err(SignatureError::Invalid(why)) => Err(KeyProblem::Invalid(why)),
    }
}

impl Peers {
    /// The key to pin with a card: `None` for an unsigned card; for a signed one, the key its
    /// signature verifies with (the peer's `card_jwks`, else the card origin's JWKS). A
    /// signature that cannot be verified is an error saying why.
    pub(crate) async fn key_to_pin(
        &self,
        name: &str,
        fetched: &FetchedCard,
        card_jwks: Option<&Value>,
        allow_private: bool,
        timeout: Duration,
    ) -> Result<Option<PinnedKey>, PeerError> {
        if !signing::is_signed(&fetched.raw) {
            return Ok(None);
        }
        let keys = match card_jwks {
            Some(set) => signing::jwks_keys(set),
            None => {
                let set = self
                    .client()
                    .fetch_jwks(&fetched.url, allow_private, timeout)
                    .await
                    .map_err(|e| {
                        PeerError::Remote(format!(
                            "{name}: the card is signed, and its key set cannot be read ({e}); \
                             Sextant reads keys only from the card's origin \
                             ({}) or from card_jwks given at registration, never from a jku",
                            signing::JWKS_PATH
                        ))
                    })?;
                signing::jwks_keys(&set)
            }
        };
        match signing::verify_card(&fetched.raw, &keys) {
            Ok(v) => Ok(Some(PinnedKey::from_verified(&v))),
            Err(e) => Err(PeerError::Remote(format!("{name}: {e}"))),
        }
    }

    /// The pinned key of a row, if it has one.
    pub(crate) fn pinned_key(row: &PeerRow) -> Option<PinnedKey> {
        row.pinned_key.as_ref().and_then(PinnedKey::from_value)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;
    use sextant_a2a::signing::{SignAlg, SigningKey, sign_card};

    fn card() -> Value {
        json!({
            "name": "P", "description": "d", "version": "1",
            "supportedInterfaces": [{"url": "https://p/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "capabilities": {}, "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "S", "description": "x", "tags": ["t"]}],
        })
    }

    #[test]
    fn the_pinned_key_decides_and_each_problem_has_its_reason() {
        let (key, _) = SigningKey::generate(SignAlg::Es256).unwrap();
        let signed = sign_card(&card(), &key).unwrap();
        let v = signing::verify_card(&signed, &signing::jwks_keys(&signing::jwks([&key]))).unwrap();
        let pinned = PinnedKey::from_verified(&v);
        assert_eq!(
            PinnedKey::from_value(&pinned.to_value()),
            Some(pinned.clone())
        );
        assert_eq!(check_pinned(&signed, &pinned), Ok(()));

        let (other, _) = SigningKey::generate(SignAlg::Es256).unwrap();
        let resigned = sign_card(&card(), &other).unwrap();
        let e = check_pinned(&resigned, &pinned).unwrap_err();
        assert_eq!(e.reason(), "signing_key_changed");
        assert!(
            e.describe(&pinned).contains(other.kid()),
            "{}",
            e.describe(&pinned)
        );
        assert_eq!(check_pinned(&card(), &pinned), Err(KeyProblem::Removed));
        let mut tampered = signed.clone();
        tampered["skills"][0]["description"] = json!("y");
        assert_eq!(
            check_pinned(&tampered, &pinned).unwrap_err().reason(),
            "signature_invalid"
        );
    }
}
