//! Sealing of push-notification secrets (a config's token and authentication) before they go
//! into the journal: AES-256-GCM under a key in the data dir (`push.key`, 32 random bytes as
//! hex, mode 0600, made on first start). A copied journal then carries no webhook credential,
//! as peer tokens live outside it too. Losing the key loses the secrets: deliveries of the
//! configs sealed with it stop with that reason, and their owners register them again.

use std::path::Path;

use aws_lc_rs::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

/// Seals and opens with one key.
pub struct Sealer {
    key: LessSafeKey,
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sealer(***)")
    }
}

impl Sealer {
    /// A sealer over 32 key bytes.
    pub fn new(key: &[u8; 32]) -> Self {
        // A 32-byte key is exactly what AES-256-GCM takes, so this cannot fail.
        let unbound = UnboundKey::new(&AES_256_GCM, key)
            .unwrap_or_else(|_| unreachable!("AES-256-GCM takes a 32-byte key"));
        Self {
            key: LessSafeKey::new(unbound),
        }
    }

    /// Reads the key file, or creates it (0600) with a fresh random key.
    pub fn open_or_create(path: &Path) -> Result<Self, String> {
        match std::fs::read_to_string(path) {
            Ok(text) => {
                let bytes = hex::decode(text.trim())
                    .map_err(|e| format!("{} is not a hex key: {e}", path.display()))?;
                let key: [u8; 32] = bytes.try_into().map_err(|_| {
                    format!("{} must hold 32 bytes (64 hex digits)", path.display())
                })?;
                Ok(Self::new(&key))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let mut key = [0u8; 32];
                getrandom::fill(&mut key).map_err(|e| format!("no randomness: {e}"))?;
                write_private(path, &hex::encode(key))
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
                Ok(Self::new(&key))
            }
            Err(e) => Err(format!("cannot read {}: {e}", path.display())),
        }
    }

    /// `base64(nonce || ciphertext || tag)` of `plain`, with a fresh random nonce.
    pub fn seal(&self, plain: &[u8]) -> Result<String, String> {
        let mut nonce = [0u8; NONCE_LEN];
        getrandom::fill(&mut nonce).map_err(|e| format!("no randomness: {e}"))?;
        let mut data = plain.to_vec();
        self.key
            .seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::empty(), &mut data)
            .map_err(|_| "sealing failed".to_string())?;
        let mut out = nonce.to_vec();
        out.extend_from_slice(&data);
        Ok(STANDARD.encode(out))
    }

    /// The plain bytes of a sealed value, or why not (another key, or altered).
    pub fn open(&self, sealed: &str) -> Result<Vec<u8>, String> {
        let bytes = STANDARD
            .decode(sealed)
            .map_err(|_| "the sealed secrets are not base64".to_string())?;
        if bytes.len() < NONCE_LEN {
            return Err("the sealed secrets are too short".into());
        }
        let (nonce, rest) = bytes.split_at(NONCE_LEN);
        let nonce: [u8; NONCE_LEN] = nonce
            .try_into()
            .map_err(|_| "the sealed secrets are too short".to_string())?;
        let mut data = rest.to_vec();
        let plain = self
            .key
            .open_in_place(Nonce::assume_unique_for_key(nonce), Aad::empty(), &mut data)
            .map_err(|_| {
                "the config's secrets cannot be opened (push.key changed or the journal was \
                 altered); register the config again"
                    .to_string()
            })?;
        Ok(plain.to_vec())
    }
}

#[cfg(unix)]
fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(contents.as_bytes())?;
    f.write_all(b"\n")
}

#[cfg(not(unix))]
fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    std::fs::write(path, format!("{contents}\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sealed_secrets_open_only_with_their_key() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("push.key");
        let a = Sealer::open_or_create(&path).unwrap_or_else(|e| panic!("{e}"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path)
                .unwrap_or_else(|e| panic!("{e}"))
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let sealed = a.seal(b"Bearer s3cret").unwrap_or_else(|e| panic!("{e}"));
        assert!(!sealed.contains("s3cret"));
        assert_ne!(
            sealed,
            a.seal(b"Bearer s3cret").unwrap_or_default(),
            "fresh nonces"
        );
        let again = Sealer::open_or_create(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(again.open(&sealed).unwrap_or_default(), b"Bearer s3cret");
        let other = Sealer::new(&[7u8; 32]);
        assert!(other.open(&sealed).unwrap_err().contains("push.key"));
        let mut altered = STANDARD.decode(&sealed).unwrap_or_default();
        let last = altered.len() - 1;
        altered[last] ^= 1;
        assert!(a.open(&STANDARD.encode(altered)).is_err());
        assert!(a.open("%%").is_err());
    }
}
