//! JWS (RFC 7515) pieces for Agent Card signatures: signing keys (ES256 on P-256, or EdDSA on
//! Ed25519), public keys from JWKs, RFC 7638 thumbprints. Everything cryptographic is
//! aws-lc-rs's.
//!
//! Verification takes the algorithm from the protected header but only with a key of the
//! matching type (an EC key never verifies an RSA signature, say), and never `none` or an
//! HMAC algorithm: a card's signature is checked against a public key only.

use aws_lc_rs::rand::SystemRandom;
use aws_lc_rs::signature::{
    self, ECDSA_P256_SHA256_FIXED, ECDSA_P256_SHA256_FIXED_SIGNING, ECDSA_P384_SHA384_FIXED,
    ED25519, EcdsaKeyPair, Ed25519KeyPair, KeyPair, RsaPublicKeyComponents, UnparsedPublicKey,
};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64URL;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// base64url without padding, as JOSE writes it.
pub fn b64url(bytes: &[u8]) -> String {
    B64URL.encode(bytes)
}

/// Decodes base64url (padding tolerated).
pub fn unb64url(s: &str) -> Result<Vec<u8>, String> {
    B64URL
        .decode(s.trim_end_matches('='))
        .map_err(|_| "not base64url".to_string())
}

/// The algorithms Sextant signs its cards with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignAlg {
    /// ECDSA P-256 with SHA-256 (`ES256`), the default: every JOSE library verifies it.
    Es256,
    /// Ed25519 (`EdDSA`).
    EdDsa,
}

impl SignAlg {
    /// The JOSE `alg` name.
    pub fn name(self) -> &'static str {
        match self {
            SignAlg::Es256 => "ES256",
            SignAlg::EdDsa => "EdDSA",
        }
    }

    /// Reads `ES256` or `EdDSA` (also `Ed25519`).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "ES256" | "es256" => Some(SignAlg::Es256),
            "EdDSA" | "eddsa" | "Ed25519" | "ed25519" => Some(SignAlg::EdDsa),
            _ => None,
        }
    }
}

enum Pair {
    Ec(EcdsaKeyPair),
    Ed(Ed25519KeyPair),
}

/// A private signing key with its public JWK and `kid` (the JWK's RFC 7638 thumbprint).
pub struct SigningKey {
    alg: SignAlg,
    pair: Pair,
    jwk: Value,
    kid: String,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SigningKey")
            .field("alg", &self.alg)
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// A fresh key; returns it with its PKCS#8 encoding (to store).
    pub fn generate(alg: SignAlg) -> Result<(Self, Vec<u8>), String> {
        let pkcs8 = match alg {
            SignAlg::Es256 => EcdsaKeyPair::generate(&ECDSA_P256_SHA256_FIXED_SIGNING)
                .and_then(|k| k.to_pkcs8v1())
                .map_err(|_| "cannot generate a P-256 key".to_string())?
                .as_ref()
                .to_vec(),
            SignAlg::EdDsa => Ed25519KeyPair::generate()
                .and_then(|k| k.to_pkcs8())
                .map_err(|_| "cannot generate an Ed25519 key".to_string())?
                .as_ref()
                .to_vec(),
        };
        Ok((Self::from_pkcs8(alg, &pkcs8)?, pkcs8))
    }

    /// A key from its PKCS#8 encoding.
    pub fn from_pkcs8(alg: SignAlg, pkcs8: &[u8]) -> Result<Self, String> {
        let (pair, jwk) = match alg {
            SignAlg::Es256 => {
                let k = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8)
                    .map_err(|e| format!("not a P-256 PKCS#8 key: {e}"))?;
                let point = k.public_key().as_ref().to_vec();
                if point.len() != 65 || point[0] != 4 {
                    return Err("unexpected P-256 public key encoding".into());
                }
                let jwk = json!({
                    "kty": "EC", "crv": "P-256",
                    "x": b64url(&point[1..33]), "y": b64url(&point[33..65]),
                });
                (Pair::Ec(k), jwk)
            }
            SignAlg::EdDsa => {
                let k = Ed25519KeyPair::from_pkcs8(pkcs8)
                    .or_else(|_| Ed25519KeyPair::from_pkcs8_maybe_unchecked(pkcs8))
                    .map_err(|e| format!("not an Ed25519 PKCS#8 key: {e}"))?;
                let jwk = json!({
                    "kty": "OKP", "crv": "Ed25519", "x": b64url(k.public_key().as_ref()),
                });
                (Pair::Ed(k), jwk)
            }
        };
        let kid = thumbprint(&jwk)?;
        Ok(Self {
            alg,
            pair,
            jwk,
            kid,
        })
    }

    pub fn alg(&self) -> SignAlg {
        self.alg
    }

    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// The public key as a JWK with `kid`, `alg` and `use: sig`, as the JWKS publishes it.
    pub fn public_jwk(&self) -> Value {
        let mut j = self.jwk.clone();
        j["kid"] = json!(self.kid);
        j["alg"] = json!(self.alg.name());
        j["use"] = json!("sig");
        j
    }

    /// Signs the JWS signing input.
    pub fn sign(&self, input: &[u8]) -> Result<Vec<u8>, String> {
        match &self.pair {
            Pair::Ec(k) => k
                .sign(&SystemRandom::new(), input)
                .map(|s| s.as_ref().to_vec())
                .map_err(|_| "signing failed".to_string()),
            Pair::Ed(k) => Ok(k.sign(input).as_ref().to_vec()),
        }
    }
}

fn member<'a>(jwk: &'a Value, k: &str) -> Result<&'a str, String> {
    jwk.get(k)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("the JWK has no {k:?}"))
}

/// The RFC 7638 thumbprint of a public JWK (base64url SHA-256 of its required members in
/// lexicographic order).
pub fn thumbprint(jwk: &Value) -> Result<String, String> {
    let kty = member(jwk, "kty")?;
    let canonical = match kty {
        "EC" => format!(
            r#"{{"crv":{},"kty":"EC","x":{},"y":{}}}"#,
            json!(member(jwk, "crv")?),
            json!(member(jwk, "x")?),
            json!(member(jwk, "y")?)
        ),
        "OKP" => format!(
            r#"{{"crv":{},"kty":"OKP","x":{}}}"#,
            json!(member(jwk, "crv")?),
            json!(member(jwk, "x")?)
        ),
        "RSA" => format!(
            r#"{{"e":{},"kty":"RSA","n":{}}}"#,
            json!(member(jwk, "e")?),
            json!(member(jwk, "n")?)
        ),
        other => return Err(format!("unsupported key type {other:?}")),
    };
    Ok(b64url(&Sha256::digest(canonical.as_bytes())))
}

/// The algorithms accepted on peers' cards, and the key type each needs.
const VERIFY_ALGS: &[(&str, &str)] = &[
    ("ES256", "EC"),
    ("ES384", "EC"),
    ("EdDSA", "OKP"),
    ("Ed25519", "OKP"),
    ("RS256", "RSA"),
    ("RS384", "RSA"),
    ("RS512", "RSA"),
    ("PS256", "RSA"),
    ("PS384", "RSA"),
    ("PS512", "RSA"),
];

/// Whether `alg` is one a card signature may use (public-key algorithms only).
pub fn accepted_alg(alg: &str) -> bool {
    VERIFY_ALGS.iter().any(|(a, _)| *a == alg)
}

/// Verifies `sig` over `input` with the public JWK under `alg`; `Err` says why not.
pub fn verify(jwk: &Value, alg: &str, input: &[u8], sig: &[u8]) -> Result<(), String> {
    let Some((_, kty)) = VERIFY_ALGS.iter().find(|(a, _)| *a == alg) else {
        return Err(format!(
            "the algorithm {alg:?} is not accepted (ES256, ES384, EdDSA, RS256-512, PS256-512)"
        ));
    };
    let have = member(jwk, "kty")?;
    if have != *kty {
        return Err(format!("a {have} key cannot verify {alg}"));
    }
    if let Some(key_alg) = jwk.get("alg").and_then(Value::as_str)
        && key_alg != alg
        && !(matches!(key_alg, "EdDSA" | "Ed25519") && matches!(alg, "EdDSA" | "Ed25519"))
    {
        return Err(format!(
            "the key is for {key_alg}, the signature says {alg}"
        ));
    }
    let bad = || "the signature does not match".to_string();
    match alg {
        "ES256" | "ES384" => {
            let (crv, verifier, len) = if alg == "ES256" {
                ("P-256", &ECDSA_P256_SHA256_FIXED, 32)
            } else {
                ("P-384", &ECDSA_P384_SHA384_FIXED, 48)
            };
            if member(jwk, "crv")? != crv {
                return Err(format!("{alg} needs a {crv} key"));
            }
            let x = unb64url(member(jwk, "x")?)?;
            let y = unb64url(member(jwk, "y")?)?;
            if x.len() != len || y.len() != len {
                return Err("the EC key's coordinates have the wrong length".into());
            }
            let mut point = vec![4u8];
            point.extend_from_slice(&x);
            point.extend_from_slice(&y);
            UnparsedPublicKey::new(verifier, &point)
                .verify(input, sig)
                .map_err(|_| bad())
        }
        "EdDSA" | "Ed25519" => {
            if member(jwk, "crv")? != "Ed25519" {
                return Err("EdDSA is accepted with Ed25519 keys only".into());
            }
            let x = unb64url(member(jwk, "x")?)?;
            UnparsedPublicKey::new(&ED25519, &x)
                .verify(input, sig)
                .map_err(|_| bad())
        }
        _ => {
            let n = unb64url(member(jwk, "n")?)?;
            let e = unb64url(member(jwk, "e")?)?;
            let params = match alg {
                "RS256" => &signature::RSA_PKCS1_2048_8192_SHA256,
                "RS384" => &signature::RSA_PKCS1_2048_8192_SHA384,
                "RS512" => &signature::RSA_PKCS1_2048_8192_SHA512,
                "PS256" => &signature::RSA_PSS_2048_8192_SHA256,
                "PS384" => &signature::RSA_PSS_2048_8192_SHA384,
                _ => &signature::RSA_PSS_2048_8192_SHA512,
            };
            RsaPublicKeyComponents { n: &n, e: &e }
                .verify(params, input, sig)
                .map_err(|_| bad())
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn keys_sign_and_verify_and_survive_their_encoding() {
        for alg in [SignAlg::Es256, SignAlg::EdDsa] {
            let (k, pkcs8) = SigningKey::generate(alg).unwrap();
            let again = SigningKey::from_pkcs8(alg, &pkcs8).unwrap();
            assert_eq!(k.kid(), again.kid());
            let jwk = k.public_jwk();
            assert_eq!(thumbprint(&jwk).unwrap(), k.kid());
            let sig = k.sign(b"input").unwrap();
            verify(&jwk, alg.name(), b"input", &sig).unwrap();
            assert!(verify(&jwk, alg.name(), b"inpuT", &sig).is_err());
            assert!(
                verify(&jwk, "RS256", b"input", &sig).is_err(),
                "key type pinned"
            );
            assert!(verify(&jwk, "HS256", b"input", &sig).is_err());
            assert!(verify(&jwk, "none", b"input", &[]).is_err());
        }
        assert!(SigningKey::from_pkcs8(SignAlg::Es256, b"junk").is_err());
    }

    /// RFC 7638 §3.1's example key has the thumbprint the RFC gives.
    #[test]
    fn thumbprint_of_the_rfc_example() {
        let jwk = json!({
            "kty": "RSA",
            "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
            "e": "AQAB", "alg": "RS256", "kid": "2011-04-29"
        });
        assert_eq!(
            thumbprint(&jwk).unwrap(),
            "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
        );
    }
}
