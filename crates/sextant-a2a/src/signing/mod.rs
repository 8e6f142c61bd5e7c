//! Signed Agent Cards (A2A 1.0 §8.4): Sextant's signatures on its own cards, and checks of
//! peers' card signatures.
//!
//! A signature is a detached JWS: `{"protected": b64url(header), "signature": b64url(sig)}`
//! (plus an unprotected `header` object) over `b64url(protected) "." b64url(payload)`, where the
//! payload is the canonical card ([`canonical`]). Sextant's protected header is exactly
//! `{"alg", "typ": "JOSE", "kid"}`, `kid` being the RFC 7638 thumbprint of the public key.
//!
//! [`sign_card`] signs in the spec's reading and, when the official SDKs' reading of the same
//! card differs (an empty REQUIRED field, say), adds a second signature over theirs, marked
//! in its unprotected header, so each verifier finds one it checks. [`verify_card`] accepts a
//! signature in either reading; it needs the public keys given (never a `jku`: a card must
//! not choose where Sextant connects), refuses `crit`, `b64: false`, unknown or symmetric
//! algorithms, and says why when nothing verifies.

pub mod canonical;
pub mod jws;

use serde::Serialize;
use serde_json::{Value, json};
use ts_rs::TS;

pub use canonical::Reading;
pub use jws::{SignAlg, SigningKey};

/// Where Sextant publishes its card keys (a JWKS), on its own origin.
pub const JWKS_PATH: &str = "/.well-known/jwks.json";

/// The unprotected header of a signature over the SDKs' reading (informative only: it is not
/// covered by the signature).
const SDK_READING_HEADER: &str = "sextant-canonicalization";

/// The card with `signatures` (replacing any there were) made with `key`.
pub fn sign_card(card: &Value, key: &SigningKey) -> Result<Value, String> {
    let header = json!({ "alg": key.alg().name(), "typ": "JOSE", "kid": key.kid() });
    let protected = jws::b64url(header.to_string().as_bytes());
    let spec = canonical::payload(card, Reading::Spec)?;
    let sdk = canonical::payload(card, Reading::Sdk)?;
    let mut signatures = vec![signature(&protected, &spec, key, None)?];
    if sdk != spec {
        signatures.push(signature(
            &protected,
            &sdk,
            key,
            Some(json!({ SDK_READING_HEADER: "a2a-sdk" })),
        )?);
    }
    let mut out = card.clone();
    if let Some(o) = out.as_object_mut() {
        o.insert("signatures".into(), Value::Array(signatures));
    }
    Ok(out)
}

fn signature(
    protected: &str,
    payload: &[u8],
    key: &SigningKey,
    header: Option<Value>,
) -> Result<Value, String> {
    let input = format!("{protected}.{}", jws::b64url(payload));
    let sig = key.sign(input.as_bytes())?;
    let mut s = json!({ "protected": protected, "signature": jws::b64url(&sig) });
    if let Some(h) = header {
        s["header"] = h;
    }
    Ok(s)
}

/// A JWKS of these public keys.
pub fn jwks<'a>(keys: impl IntoIterator<Item = &'a SigningKey>) -> Value {
    json!({ "keys": keys.into_iter().map(SigningKey::public_jwk).collect::<Vec<_>>() })
}

/// What a verified card signature was made with.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct Verified {
    pub kid: String,
    pub alg: String,
    /// The RFC 7638 thumbprint of the key that verified it.
    pub thumbprint: String,
    /// Which canonical reading it covers.
    pub reading: Reading,
    /// The public key (a JWK), to pin.
    #[ts(type = "unknown")]
    pub jwk: Value,
}

/// Why a card's signatures do not verify.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    /// The card has no `signatures` (or an empty list).
    #[error("the card is not signed")]
    Unsigned,
    /// No key is known for any of the signatures' `kid`s.
    #[error("no key is known for the card's signature (kid {kids})")]
    NoKey { kids: String },
    /// Keys were found, and nothing verified: the reasons, one per signature.
    #[error("the card's signature does not verify: {0}")]
    Invalid(String),
}

/// The key ids a card's signatures name (unreadable headers skipped).
pub fn signature_kids(card: &Value) -> Vec<String> {
    signatures(card)
        .iter()
        .filter_map(|s| protected_header(s).ok())
        .filter_map(|h| h.get("kid").and_then(Value::as_str).map(String::from))
        .collect()
}

/// Whether the card carries signatures.
pub fn is_signed(card: &Value) -> bool {
    !signatures(card).is_empty()
}

fn signatures(card: &Value) -> &[Value] {
    card.get("signatures")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn protected_header(sig: &Value) -> Result<Value, String> {
    let p = sig
        .get("protected")
        .and_then(Value::as_str)
        .ok_or("a signature has no protected header")?;
    let bytes = jws::unb64url(p).map_err(|e| format!("the protected header is {e}"))?;
    let v: Value = serde_json::from_slice(&bytes)
        .map_err(|_| "the protected header is not JSON".to_string())?;
    if !v.is_object() {
        return Err("the protected header is not a JSON object".into());
    }
    Ok(v)
}

/// Checks a card's signatures with the public keys `keys` (JWKs with `kid`s). The first
/// signature that verifies, in either reading, wins; `Err` says why none did.
pub fn verify_card(card: &Value, keys: &[Value]) -> Result<Verified, SignatureError> {
    let sigs = signatures(card);
    if sigs.is_empty() {
        return Err(SignatureError::Unsigned);
    }
    let mut payloads = Vec::new();
    for r in Reading::ALL {
        match canonical::payload(card, r) {
            Ok(p) => payloads.push((r, p)),
            Err(e) => return Err(SignatureError::Invalid(e)),
        }
    }
    let mut reasons = Vec::new();
    let mut kids = Vec::new();
    let mut any_key = false;
    for (n, s) in sigs.iter().enumerate() {
        let which = format!("signature {}", n + 1);
        let header = match protected_header(s) {
            Ok(h) => h,
            Err(e) => {
                reasons.push(format!("{which}: {e}"));
                continue;
            }
        };
        let Some(alg) = header.get("alg").and_then(Value::as_str) else {
            reasons.push(format!("{which}: the protected header has no alg"));
            continue;
        };
        let Some(kid) = header.get("kid").and_then(Value::as_str) else {
            reasons.push(format!("{which}: the protected header has no kid"));
            continue;
        };
        kids.push(kid.to_string());
        if header.get("crit").is_some() {
            reasons.push(format!(
                "{which}: it names critical header parameters (crit)"
            ));
            continue;
        }
        if header.get("b64") == Some(&Value::Bool(false)) {
            reasons.push(format!(
                "{which}: an unencoded payload (b64: false) is not accepted"
            ));
            continue;
        }
        if !jws::accepted_alg(alg) {
            reasons.push(format!("{which}: the algorithm {alg:?} is not accepted"));
            continue;
        }
        let Some(jwk) = keys
            .iter()
            .find(|k| k.get("kid").and_then(Value::as_str) == Some(kid))
        else {
            continue;
        };
        any_key = true;
        let Some(sig) = s
            .get("signature")
            .and_then(Value::as_str)
            .and_then(|v| jws::unb64url(v).ok())
        else {
            reasons.push(format!("{which}: its signature is not base64url"));
            continue;
        };
        let protected = s.get("protected").and_then(Value::as_str).unwrap_or("");
        let mut why = String::new();
        for (reading, payload) in &payloads {
            let input = format!("{protected}.{}", jws::b64url(payload));
            match jws::verify(jwk, alg, input.as_bytes(), &sig) {
                Ok(()) => {
                    let thumbprint = jws::thumbprint(jwk).map_err(SignatureError::Invalid)?;
                    return Ok(Verified {
                        kid: kid.to_string(),
                        alg: alg.to_string(),
                        thumbprint,
                        reading: *reading,
                        jwk: public_only(jwk),
                    });
                }
                Err(e) => why = e,
            }
        }
        reasons.push(format!("{which} (kid {kid}): {why}"));
    }
    if !any_key && reasons.is_empty() {
        return Err(SignatureError::NoKey {
            kids: kids.join(", "),
        });
    }
    if !any_key && !kids.is_empty() {
        reasons.push(format!("no key is known for kid {}", kids.join(", ")));
    }
    Err(SignatureError::Invalid(reasons.join("; ")))
}

/// The public members of a JWK (a JWKS from elsewhere may carry more than it should).
pub fn public_only(jwk: &Value) -> Value {
    let keep = ["kty", "crv", "x", "y", "n", "e", "kid", "alg", "use"];
    match jwk.as_object() {
        Some(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| keep.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        ),
        None => Value::Null,
    }
}

/// The keys of a JWKS (`{"keys": [...]}`), or of a single JWK; the public members only.
pub fn jwks_keys(v: &Value) -> Vec<Value> {
    let list: Vec<&Value> = match v.get("keys").and_then(Value::as_array) {
        Some(a) => a.iter().collect(),
        None if v.get("kty").is_some() => vec![v],
        None => Vec::new(),
    };
    list.into_iter().map(public_only).collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn card() -> Value {
        json!({
            "name": "Sextant", "description": "d", "version": "1",
            "supportedInterfaces": [{"url": "https://a/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
            "capabilities": {"streaming": true, "pushNotifications": false},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "s", "name": "S", "description": "x", "tags": ["t"]}],
        })
    }

    #[test]
    fn a_signed_card_verifies_and_any_change_breaks_it() {
        for alg in [SignAlg::Es256, SignAlg::EdDsa] {
            let (key, _) = SigningKey::generate(alg).unwrap();
            let signed = sign_card(&card(), &key).unwrap();
            let sigs = signed["signatures"].as_array().unwrap();
            assert_eq!(sigs.len(), 1, "one reading suffices for a full card");
            let header = protected_header(&sigs[0]).unwrap();
            assert_eq!(
                header,
                json!({"alg": alg.name(), "typ": "JOSE", "kid": key.kid()})
            );
            let keys = jwks_keys(&jwks([&key]));
            let v = verify_card(&signed, &keys).unwrap();
            assert_eq!((v.kid.as_str(), v.reading), (key.kid(), Reading::Spec));
            // Fields outside the schema are not covered; everything in it is.
            let mut extra = signed.clone();
            extra["unknownField"] = json!(1);
            assert!(verify_card(&extra, &keys).is_ok());
            let mut changed = signed.clone();
            changed["supportedInterfaces"][0]["url"] = json!("https://evil/rpc");
            let e = verify_card(&changed, &keys).unwrap_err();
            assert!(e.to_string().contains("does not match"), "{e}");
            let (other, _) = SigningKey::generate(alg).unwrap();
            let e = verify_card(&signed, &jwks_keys(&jwks([&other]))).unwrap_err();
            assert!(matches!(e, SignatureError::NoKey { .. }), "{e}");
        }
        assert_eq!(
            verify_card(&card(), &[]).unwrap_err(),
            SignatureError::Unsigned
        );
    }

    /// A card with an empty REQUIRED field reads differently for the spec and the SDKs: it
    /// gets one signature per reading, each of which verifies.
    #[test]
    fn cards_the_readings_disagree_on_get_both_signatures() {
        let mut c = card();
        c["skills"][0]["tags"] = json!([]);
        let (key, _) = SigningKey::generate(SignAlg::Es256).unwrap();
        let signed = sign_card(&c, &key).unwrap();
        let sigs = signed["signatures"].as_array().unwrap().clone();
        assert_eq!(sigs.len(), 2);
        assert_eq!(sigs[1]["header"][SDK_READING_HEADER], "a2a-sdk");
        let keys = jwks_keys(&jwks([&key]));
        for (s, reading) in sigs.iter().zip([Reading::Spec, Reading::Sdk]) {
            let mut one = signed.clone();
            one["signatures"] = json!([s]);
            assert_eq!(verify_card(&one, &keys).unwrap().reading, reading);
        }
    }

    #[test]
    fn hostile_headers_are_refused_with_a_reason() {
        let (key, _) = SigningKey::generate(SignAlg::Es256).unwrap();
        let keys = jwks_keys(&jwks([&key]));
        let sign_with = |header: Value| {
            let protected = jws::b64url(header.to_string().as_bytes());
            let payload = canonical::payload(&card(), Reading::Spec).unwrap();
            let input = format!("{protected}.{}", jws::b64url(&payload));
            let mut c = card();
            c["signatures"] = json!([{ "protected": protected,
                "signature": jws::b64url(&key.sign(input.as_bytes()).unwrap()) }]);
            c
        };
        for (header, why) in [
            (
                json!({"alg": "ES256", "kid": key.kid(), "crit": ["exp"]}),
                "crit",
            ),
            (json!({"alg": "HS256", "kid": key.kid()}), "not accepted"),
            (json!({"alg": "none", "kid": key.kid()}), "not accepted"),
            (json!({"alg": "ES256"}), "no kid"),
            (
                json!({"alg": "ES256", "kid": key.kid(), "b64": false}),
                "b64",
            ),
        ] {
            let e = verify_card(&sign_with(header.clone()), &keys).unwrap_err();
            assert!(e.to_string().contains(why), "{header}: {e}");
        }
        // A jku is just a header field: it is never fetched, and the given keys decide.
        let c =
            sign_with(json!({"alg": "ES256", "kid": key.kid(), "jku": "http://169.254.169.254/"}));
        assert!(verify_card(&c, &keys).is_ok());
        let mut junk = card();
        junk["signatures"] = json!([{ "protected": "%%%", "signature": "x" }]);
        assert!(verify_card(&junk, &keys).is_err());
    }

    #[test]
    fn jwks_give_public_members_only() {
        let v = json!({"keys": [{"kty": "EC", "crv": "P-256", "x": "a", "y": "b", "d": "SECRET", "kid": "k"}]});
        let keys = jwks_keys(&v);
        assert_eq!(keys[0].get("d"), None);
        assert_eq!(keys[0]["kid"], "k");
        assert_eq!(jwks_keys(&json!({"kty": "OKP", "x": "a"})).len(), 1);
        assert!(jwks_keys(&json!({"nope": 1})).is_empty());
    }
}
