//! How a webhook delivery is signed, so a receiver can check it came from Sextant, unaltered,
//! and refuse replays. The scheme is Standard Webhooks (<https://www.standardwebhooks.com/>),
//! which has verifiers in many languages:
//!
//! ```text
//! webhook-id: <delivery id>            stable across retries of the same delivery
//! webhook-timestamp: <unix seconds>    when this attempt was signed
//! webhook-signature: v1,<base64 of HMAC-SHA256(key, "<id>.<timestamp>.<body>")>
//! ```
//!
//! `body` is the exact bytes of the request body. The key is the config's `token`: the bytes
//! after `whsec_`, base64-decoded, when it has that form (Sextant generates such tokens for
//! configs registered without one), else the token's UTF-8 bytes. Receivers should compare the
//! signature in constant time, refuse a timestamp more than five minutes from their clock, and
//! remember the `webhook-id`s they accepted within that window (a retry of a delivery they
//! already took carries the same id).

use aws_lc_rs::hmac;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

/// The prefix of a generated token (the Standard Webhooks secret form).
pub const SECRET_PREFIX: &str = "whsec_";

/// The HMAC key of a token (see the module docs).
pub fn key_bytes(token: &str) -> Vec<u8> {
    if let Some(rest) = token.strip_prefix(SECRET_PREFIX)
        && let Ok(bytes) = STANDARD.decode(rest)
        && !bytes.is_empty()
    {
        return bytes;
    }
    token.as_bytes().to_vec()
}

/// A fresh token for a config registered without one: `whsec_` + base64 of 32 random bytes.
pub fn new_token() -> Result<String, String> {
    let mut key = [0u8; 32];
    getrandom::fill(&mut key).map_err(|e| format!("no randomness: {e}"))?;
    Ok(format!("{SECRET_PREFIX}{}", STANDARD.encode(key)))
}

/// The `webhook-signature` value for one attempt.
pub fn signature(token: &str, id: &str, timestamp: i64, body: &[u8]) -> String {
    let key = hmac::Key::new(hmac::HMAC_SHA256, &key_bytes(token));
    let mut ctx = hmac::Context::with_key(&key);
    ctx.update(id.as_bytes());
    ctx.update(b".");
    ctx.update(timestamp.to_string().as_bytes());
    ctx.update(b".");
    ctx.update(body);
    format!("v1,{}", STANDARD.encode(ctx.sign().as_ref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The example of the Standard Webhooks specification: a receiver using any of its
    /// libraries accepts what Sextant sends.
    #[test]
    fn matches_the_standard_webhooks_example() {
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
        let body = br#"{"test": 2432232314}"#;
        assert_eq!(
            signature(secret, id, 1614265330, body),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn plain_tokens_are_their_bytes_and_every_byte_counts() {
        assert_eq!(key_bytes("tck-token"), b"tck-token");
        assert_eq!(key_bytes("whsec_%%"), b"whsec_%%");
        let t = new_token().unwrap_or_default();
        assert!(t.starts_with(SECRET_PREFIX) && key_bytes(&t).len() == 32);
        let a = signature("k", "1", 5, b"{}");
        assert_ne!(a, signature("k", "1", 5, b"{ }"));
        assert_ne!(a, signature("k", "1", 6, b"{}"));
        assert_ne!(a, signature("k", "2", 5, b"{}"));
        assert_ne!(a, signature("j", "1", 5, b"{}"));
    }
}
