//! JWT verification (`[jwt]` in `security.toml`), with `jsonwebtoken`. The settings as written,
//! and the checks that need no key file, are [`JwtSettings`] (`sextant-access`).
//!
//! - The algorithm is **pinned**: the token header's `alg` must equal the configured one, checked
//!   before any key is looked up; `none` does not exist here.
//! - `exp`, `iss`, `aud` and `sub` are required; `iss` must equal the configured issuer, `aud`
//!   must contain a configured audience; `nbf` is honoured when present; leeway 30 s by default.
//! - Keys come from files: a shared secret (HS*: at least 32/48/64 bytes, RFC 7518 §3.2), a PEM
//!   public key, or a JWKS document (keys chosen by `kid`). They are read once at start-up.
//! - A token with an RFC 8693 `act` claim (`{"sub": "agent-id", "iss"?: …}`) is a
//!   [`Delegated`](sextant_core::PrincipalKind::Delegated) principal: the agent `act.sub` acting
//!   for the user `sub`. Any other valid token is a
//!   [`Service`](sextant_core::PrincipalKind::Service). The signature covers `act`, so it is as
//!   verified as `sub`.
//!
//! Failures are a [`JwtError`] (callers can branch on the kind; its `Display` is the short
//! reason that is logged and audited; the HTTP answer is a plain 401 with
//! `WWW-Authenticate: Bearer`).

use std::path::Path;

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation, decode, decode_header};
use serde::Deserialize;
use sextant_access::settings::{JwtSettings, resolve};
use sextant_core::Principal;

/// The `jsonwebtoken` algorithm of a name [`JwtSettings::validate`] accepts
/// ([`JWT_ALGORITHMS`](sextant_access::settings::JWT_ALGORITHMS)).
fn algorithm(name: &str) -> Option<Algorithm> {
    Some(match name {
        "HS256" => Algorithm::HS256,
        "HS384" => Algorithm::HS384,
        "HS512" => Algorithm::HS512,
        "RS256" => Algorithm::RS256,
        "RS384" => Algorithm::RS384,
        "RS512" => Algorithm::RS512,
        "PS256" => Algorithm::PS256,
        "PS384" => Algorithm::PS384,
        "PS512" => Algorithm::PS512,
        "ES256" => Algorithm::ES256,
        "ES384" => Algorithm::ES384,
        "EdDSA" => Algorithm::EdDSA,
        _ => return None,
    })
}

/// Why a token was refused. `Display` is the short reason logged and audited.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JwtError {
    /// The header could not be read.
    #[error("malformed token: {0}")]
    Malformed(String),
    /// The header's `alg` is not the pinned algorithm (checked before any key is looked up).
    #[error("algorithm {got:?} is not the configured {want:?}")]
    WrongAlgorithm { got: Algorithm, want: Algorithm },
    /// The header's `kid` is over 256 bytes.
    #[error("kid is too long")]
    KidTooLong,
    /// No key of the JWKS has this `kid`.
    #[error("no key with kid {0:?}")]
    UnknownKid(Option<String>),
    #[error("expired")]
    Expired,
    #[error("not valid yet (nbf)")]
    NotYetValid,
    #[error("wrong audience")]
    WrongAudience,
    #[error("wrong issuer")]
    WrongIssuer,
    #[error("bad signature")]
    BadSignature,
    #[error("algorithm not allowed")]
    AlgorithmNotAllowed,
    /// A required claim (`exp`, `iss`, `aud`, `sub`) is absent.
    #[error("missing claim {0}")]
    MissingClaim(String),
    /// Any other refusal by `jsonwebtoken` (its error kind, as debug text).
    #[error("invalid token: {0}")]
    Invalid(String),
    #[error("sub must be a non-empty string of at most 256 characters")]
    BadSubject,
    #[error("act must be an object with a non-empty sub (RFC 8693)")]
    BadActor,
}

/// The decoding keys.
enum Keys {
    One(DecodingKey),
    /// From a JWKS: by `kid` (a key without `kid` is used for tokens without one).
    Set(Vec<(Option<String>, DecodingKey)>),
}

/// A configured verifier.
pub struct JwtVerifier {
    issuer: String,
    algorithm: Algorithm,
    keys: Keys,
    validation: Validation,
}

/// Claims Sextant reads (the validated ones are checked by `jsonwebtoken`).
#[derive(Debug, Deserialize)]
struct Claims {
    #[serde(default)]
    sub: Option<String>,
    #[serde(default)]
    act: Option<serde_json::Value>,
}

fn read(data_dir: &Path, p: &Path) -> Result<Vec<u8>, String> {
    let path = resolve(data_dir, p);
    std::fs::read(&path).map_err(|e| format!("[jwt] cannot read {}: {e}", path.display()))
}

fn min_secret(alg: Algorithm) -> usize {
    match alg {
        Algorithm::HS384 => 48,
        Algorithm::HS512 => 64,
        _ => 32,
    }
}

impl JwtVerifier {
    /// Reads the key files and builds the verifier; every problem is an error naming the
    /// setting.
    pub fn new(s: &JwtSettings, data_dir: &Path) -> Result<Self, String> {
        s.validate()?;
        if jsonwebtoken::crypto::CryptoProvider::try_get_default().is_none() {
            return Err("[jwt] no crypto provider is built in".into());
        }
        let issuer = s.issuer.clone().unwrap_or_default();
        let audience = s.audience_list();
        let alg = algorithm(s.algorithm.as_deref().unwrap_or("")).ok_or("[jwt] algorithm")?;
        let bad = |what: &str, e: jsonwebtoken::errors::Error| format!("[jwt] {what}: {e}");
        let keys = if let Some(p) = &s.secret_file {
            let secret = read(data_dir, p)?;
            let secret = secret.trim_ascii().to_vec();
            if secret.len() < min_secret(alg) {
                return Err(format!(
                    "[jwt] secret_file: {alg:?} needs a secret of at least {} bytes",
                    min_secret(alg)
                ));
            }
            Keys::One(DecodingKey::from_secret(&secret).map_err(|e| bad("secret_file", e))?)
        } else if let Some(p) = &s.public_key_file {
            let pem = read(data_dir, p)?;
            let key = match alg {
                Algorithm::ES256 | Algorithm::ES384 => DecodingKey::from_ec_pem(&pem),
                Algorithm::EdDSA => DecodingKey::from_ed_pem(&pem),
                _ => DecodingKey::from_rsa_pem(&pem),
            };
            Keys::One(key.map_err(|e| bad("public_key_file", e))?)
        } else if let Some(p) = &s.jwks_file {
            let text = read(data_dir, p)?;
            let set: JwkSet = serde_json::from_slice(&text)
                .map_err(|e| format!("[jwt] jwks_file is not a JWKS document: {e}"))?;
            let mut keys = Vec::new();
            for jwk in &set.keys {
                let key = DecodingKey::from_jwk(jwk).map_err(|e| bad("jwks_file", e))?;
                keys.push((jwk.common.key_id.clone(), key));
            }
            if keys.is_empty() {
                return Err("[jwt] jwks_file has no keys".into());
            }
            Keys::Set(keys)
        } else {
            return Err("[jwt] no key configured".into());
        };
        let mut validation = Validation::new(alg);
        validation.set_issuer(&[issuer.as_str()]);
        validation.set_audience(&audience);
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.validate_nbf = true;
        validation.leeway = s.leeway_secs;
        Ok(Self {
            issuer,
            algorithm: alg,
            keys,
            validation,
        })
    }

    /// The configured issuer.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// Verifies `token` and returns its principal, or the reason it was refused.
    pub fn verify(&self, token: &str) -> Result<Principal, JwtError> {
        let header = decode_header(token).map_err(|e| JwtError::Malformed(e.to_string()))?;
        // The pinned algorithm first, before any key is looked up.
        if header.alg != self.algorithm {
            return Err(JwtError::WrongAlgorithm {
                got: header.alg,
                want: self.algorithm,
            });
        }
        let key = match &self.keys {
            Keys::One(k) => k,
            Keys::Set(keys) => {
                let kid = header.kid.as_deref();
                if kid.is_some_and(|k| k.len() > 256) {
                    return Err(JwtError::KidTooLong);
                }
                keys.iter()
                    .find(|(k, _)| k.as_deref() == kid)
                    .or_else(|| (keys.len() == 1 && kid.is_none()).then(|| &keys[0]))
                    .map(|(_, key)| key)
                    .ok_or_else(|| JwtError::UnknownKid(kid.map(str::to_string)))?
            }
        };
        let data = decode::<Claims>(token, key, &self.validation).map_err(|e| match e.kind() {
            ErrorKind::ExpiredSignature => JwtError::Expired,
            ErrorKind::ImmatureSignature => JwtError::NotYetValid,
            ErrorKind::InvalidAudience => JwtError::WrongAudience,
            ErrorKind::InvalidIssuer => JwtError::WrongIssuer,
            ErrorKind::InvalidSignature => JwtError::BadSignature,
            ErrorKind::InvalidAlgorithm => JwtError::AlgorithmNotAllowed,
            ErrorKind::MissingRequiredClaim(c) => JwtError::MissingClaim(c.clone()),
            other => JwtError::Invalid(format!("{other:?}")),
        })?;
        let sub = data
            .claims
            .sub
            .filter(|s| !s.is_empty() && s.len() <= 256)
            .ok_or(JwtError::BadSubject)?;
        match data.claims.act {
            None => Ok(Principal::service(&self.issuer, sub)),
            Some(act) => {
                let actor = act
                    .get("sub")
                    .and_then(|v| v.as_str())
                    .filter(|s| !s.is_empty() && s.len() <= 256)
                    .ok_or(JwtError::BadActor)?;
                let actor = match act.get("iss").and_then(|v| v.as_str()) {
                    Some(iss) if iss != self.issuer => format!("{actor}@{iss}"),
                    _ => actor.to_string(),
                };
                Ok(Principal::delegated(&self.issuer, sub, actor))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use jsonwebtoken::{EncodingKey, Header, encode};
    use serde_json::json;
    use sextant_core::PrincipalKind;

    const SECRET: &str = "0123456789abcdef0123456789abcdef-test-secret";

    fn verifier(dir: &Path) -> JwtVerifier {
        std::fs::write(dir.join("jwt.secret"), SECRET).unwrap();
        let s: JwtSettings = serde_json::from_value(json!({
            "issuer": "https://idp.test", "audience": "sextant", "algorithm": "HS256",
            "secret_file": "jwt.secret",
        }))
        .unwrap();
        JwtVerifier::new(&s, dir).unwrap()
    }

    fn sign(claims: serde_json::Value) -> String {
        encode(
            &Header::new(Algorithm::HS256),
            &claims,
            &EncodingKey::from_secret(SECRET.as_bytes()).unwrap(),
        )
        .unwrap()
    }

    fn exp() -> u64 {
        jsonwebtoken::get_current_timestamp() + 600
    }

    #[test]
    fn delegated_and_service_tokens_resolve() {
        let dir = tempfile::tempdir().unwrap();
        let v = verifier(dir.path());
        let base =
            json!({ "iss": "https://idp.test", "aud": "sextant", "exp": exp(), "sub": "alice" });
        let p = v.verify(&sign(base.clone())).unwrap();
        assert_eq!(p.kind, PrincipalKind::Service);
        let mut d = base.clone();
        d["act"] = json!({ "sub": "agent-7" });
        let p = v.verify(&sign(d)).unwrap();
        assert_eq!(p.kind, PrincipalKind::Delegated);
        assert_eq!(p.key(), "delegated:https://idp.test:alice:agent-7");
    }

    #[test]
    fn failures_have_reasons() {
        let dir = tempfile::tempdir().unwrap();
        let v = verifier(dir.path());
        let ok = json!({ "iss": "https://idp.test", "aud": "sextant", "exp": exp(), "sub": "a" });
        let with = |k: &str, val: serde_json::Value| {
            let mut c = ok.clone();
            c[k] = val;
            sign(c)
        };
        let without = |k: &str| {
            let mut c = ok.clone();
            c.as_object_mut().unwrap().remove(k);
            sign(c)
        };
        assert_eq!(
            v.verify(&with("exp", json!(1000))).unwrap_err().to_string(),
            "expired"
        );
        assert_eq!(
            v.verify(&with("aud", json!("other")))
                .unwrap_err()
                .to_string(),
            "wrong audience"
        );
        assert_eq!(
            v.verify(&with("iss", json!("https://evil")))
                .unwrap_err()
                .to_string(),
            "wrong issuer"
        );
        assert!(
            v.verify(&without("aud"))
                .unwrap_err()
                .to_string()
                .contains("aud")
        );
        assert!(
            v.verify(&without("exp"))
                .unwrap_err()
                .to_string()
                .contains("exp")
        );
        assert!(
            v.verify(&without("iss"))
                .unwrap_err()
                .to_string()
                .contains("iss")
        );
        assert!(
            v.verify(&with("act", json!("agent")))
                .unwrap_err()
                .to_string()
                .contains("act")
        );
        // Another algorithm (even with the right secret) is refused before the key is used.
        let hs384 = encode(
            &Header::new(Algorithm::HS384),
            &ok,
            &EncodingKey::from_secret(SECRET.as_bytes()).unwrap(),
        )
        .unwrap();
        assert!(
            v.verify(&hs384)
                .unwrap_err()
                .to_string()
                .contains("algorithm")
        );
        // A wrong signature.
        let forged = encode(
            &Header::new(Algorithm::HS256),
            &ok,
            &EncodingKey::from_secret(b"another secret that is long enough!!").unwrap(),
        )
        .unwrap();
        assert_eq!(v.verify(&forged).unwrap_err().to_string(), "bad signature");
        // The kinds callers branch on.
        assert_eq!(
            v.verify(&with("exp", json!(1000))).unwrap_err(),
            JwtError::Expired
        );
        assert_eq!(
            v.verify(&without("aud")).unwrap_err(),
            JwtError::MissingClaim("aud".into())
        );
        assert_eq!(
            v.verify(&hs384).unwrap_err(),
            JwtError::WrongAlgorithm {
                got: Algorithm::HS384,
                want: Algorithm::HS256
            }
        );
        assert_eq!(v.verify(&forged).unwrap_err(), JwtError::BadSignature);
        assert_eq!(
            v.verify(&with("act", json!("agent"))).unwrap_err(),
            JwtError::BadActor
        );
        // alg=none (unsigned) is malformed or not the pinned algorithm.
        let none = format!(
            "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.{}.",
            base64_url(&ok.to_string())
        );
        assert!(v.verify(&none).is_err());
    }

    fn base64_url(s: &str) -> String {
        use base64::Engine;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s)
    }

    #[test]
    fn short_secrets_are_refused_clearly() {
        let s = |v: serde_json::Value| serde_json::from_value::<JwtSettings>(v).unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("short"), "too short").unwrap();
        let short = s(
            json!({ "issuer": "i", "audience": "a", "algorithm": "HS256", "secret_file": "short" }),
        );
        assert!(
            JwtVerifier::new(&short, dir.path())
                .err()
                .unwrap()
                .contains("at least 32 bytes")
        );
    }

    #[test]
    fn every_accepted_algorithm_name_is_one_jsonwebtoken_knows() {
        for name in sextant_access::settings::JWT_ALGORITHMS {
            assert!(algorithm(name).is_some(), "{name}");
        }
        assert_eq!(algorithm("none"), None);
    }
}
