//! The keys Sextant signs its Agent Cards with: `<data dir>/card-key.json` (mode 0600), made
//! on first start (ES256 unless told otherwise), rotated with `sextant card-key rotate`.
//!
//! The file lists keys newest first: the first signs, the others stay published in the JWKS
//! (`/.well-known/jwks.json`) so cards fetched before a rotation still verify until the next
//! one (`--drop-previous` retires them at once). A running server notices a rotation by the
//! file's modification time and size, checked on each card request, and signs with the new key
//! from then on: no restart. Writes go to a 0600 temporary file renamed over the old one.
//!
//! ```json
//! {"keys": [{"alg": "ES256", "kid": "<RFC 7638 thumbprint>", "created_at": "…",
//!            "pkcs8": "<base64 of the PKCS#8 private key>"}]}
//! ```

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde::{Deserialize, Serialize};
use sextant_a2a::signing::{SignAlg, SigningKey};

/// The file's name in the data dir.
pub const FILE: &str = "card-key.json";

#[derive(Debug, Clone, Serialize, Deserialize)]
struct StoredKey {
    alg: String,
    kid: String,
    created_at: String,
    pkcs8: String,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Stored {
    keys: Vec<StoredKey>,
}

/// The keys in force: the one that signs, and the earlier ones still published.
#[derive(Debug)]
pub struct Keyring {
    pub current: SigningKey,
    pub previous: Vec<SigningKey>,
    /// When the current key was made.
    pub created_at: String,
}

impl Keyring {
    /// Every published key, the signing one first.
    pub fn all(&self) -> impl Iterator<Item = &SigningKey> {
        std::iter::once(&self.current).chain(self.previous.iter())
    }
}

fn load(path: &Path) -> Result<Keyring, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let stored: Stored = serde_json::from_str(&text)
        .map_err(|e| format!("{} is not a card key file: {e}", path.display()))?;
    let mut keys = Vec::new();
    let mut created = String::new();
    for (i, k) in stored.keys.iter().enumerate() {
        let alg = SignAlg::parse(&k.alg)
            .ok_or_else(|| format!("{}: unknown algorithm {:?}", path.display(), k.alg))?;
        let der = STANDARD
            .decode(&k.pkcs8)
            .map_err(|_| format!("{}: key {} is not base64", path.display(), k.kid))?;
        let key = SigningKey::from_pkcs8(alg, &der)
            .map_err(|e| format!("{}: key {}: {e}", path.display(), k.kid))?;
        if i == 0 {
            created = k.created_at.clone();
        }
        keys.push(key);
    }
    let mut it = keys.into_iter();
    let current = it
        .next()
        .ok_or_else(|| format!("{} holds no key", path.display()))?;
    Ok(Keyring {
        current,
        previous: it.collect(),
        created_at: created,
    })
}

fn save(path: &Path, stored: &Stored) -> Result<(), String> {
    let text = serde_json::to_string_pretty(stored).map_err(|e| e.to_string())?;
    let tmp = path.with_extension(format!("json.tmp-{}", std::process::id()));
    write_private(&tmp, &text).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("cannot replace {}: {e}", path.display()))
}

#[cfg(unix)]
fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(contents.as_bytes())?;
    f.write_all(b"\n")?;
    f.sync_all()
}

#[cfg(not(unix))]
fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    std::fs::write(path, format!("{contents}\n"))
}

fn new_stored(alg: SignAlg, at: &str) -> Result<StoredKey, String> {
    let (key, pkcs8) = SigningKey::generate(alg)?;
    Ok(StoredKey {
        alg: alg.name().into(),
        kid: key.kid().into(),
        created_at: at.into(),
        pkcs8: STANDARD.encode(pkcs8),
    })
}

/// Makes a new signing key (newest first); with `keep_previous`, the key it replaces stays
/// published (older ones go), else only the new key is. Returns the keys now in force.
pub fn rotate(path: &Path, alg: SignAlg, keep_previous: bool, at: &str) -> Result<Keyring, String> {
    let mut stored = match std::fs::read_to_string(path) {
        Ok(t) => serde_json::from_str::<Stored>(&t)
            .map_err(|e| format!("{} is not a card key file: {e}", path.display()))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Stored::default(),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let fresh = new_stored(alg, at)?;
    stored.keys.truncate(if keep_previous { 1 } else { 0 });
    stored.keys.insert(0, fresh);
    save(path, &stored)?;
    load(path)
}

/// The file's identity as it is now, to notice a rotation: its modification time and size,
/// and on Unix its inode (a rotation renames a new file over the old one, so even two within
/// one clock tick differ).
type Stamp = (SystemTime, u64, u64);

fn stamp(path: &Path) -> Option<Stamp> {
    let m = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    let ino = std::os::unix::fs::MetadataExt::ino(&m);
    #[cfg(not(unix))]
    let ino = 0;
    Some((m.modified().ok()?, m.len(), ino))
}

/// Signed cards kept, at most (a card per Agent and advertised base URL, at a time).
const SIGNED_MAX: usize = 256;

/// The card keys of a running server, re-read when the file changes.
#[derive(Debug)]
pub struct CardKeys {
    path: PathBuf,
    loaded: Mutex<(Option<Stamp>, Arc<Keyring>)>,
    /// Signed cards by (signing key, card): an ECDSA signature differs each time it is made, and
    /// a card fetched twice should be the same bytes (for caches, and for anyone comparing).
    signed: Mutex<std::collections::HashMap<(String, String), Arc<serde_json::Value>>>,
}

impl CardKeys {
    /// Opens the key file, making it (with an `alg` key) if there is none.
    pub fn open_or_create(path: &Path, alg: SignAlg, at: &str) -> Result<Self, String> {
        if !path.exists() {
            rotate(path, alg, false, at)?;
        }
        let ring = load(path)?;
        Ok(Self {
            path: path.to_path_buf(),
            loaded: Mutex::new((stamp(path), Arc::new(ring))),
            signed: Mutex::default(),
        })
    }

    /// `card` signed with the current key (`sextant_a2a::signing::sign_card`), the same bytes
    /// for the same card and key.
    pub fn sign(&self, card: &serde_json::Value) -> Result<Arc<serde_json::Value>, String> {
        let keys = self.keys();
        let k = (keys.current.kid().to_string(), card.to_string());
        if let Some(v) = self
            .signed
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&k)
        {
            return Ok(v.clone());
        }
        let signed = Arc::new(sextant_a2a::signing::sign_card(card, &keys.current)?);
        let mut cache = self.signed.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= SIGNED_MAX {
            cache.clear();
        }
        cache.insert(k, signed.clone());
        Ok(signed)
    }

    /// The keys in force (re-read if the file changed; a file that cannot be read keeps the
    /// keys last read, and says so in the log).
    pub fn keys(&self) -> Arc<Keyring> {
        let now = stamp(&self.path);
        let mut g = self.loaded.lock().unwrap_or_else(|e| e.into_inner());
        if now != g.0 {
            match load(&self.path) {
                Ok(ring) => {
                    tracing::info!(kid = %ring.current.kid(), "card signing key changed");
                    *g = (now, Arc::new(ring));
                }
                Err(e) => {
                    tracing::warn!(error = %e, "card key file unreadable; signing with the last key read");
                    g.0 = now;
                }
            }
        }
        g.1.clone()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn made_on_first_use_rotated_and_noticed_by_a_running_server() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE);
        let keys = CardKeys::open_or_create(&path, SignAlg::Es256, "t0").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let first = keys.keys().current.kid().to_string();
        assert!(keys.keys().previous.is_empty());
        // Opening again keeps the key.
        let again = CardKeys::open_or_create(&path, SignAlg::EdDsa, "t1").unwrap();
        assert_eq!(again.keys().current.kid(), first);

        let ring = rotate(&path, SignAlg::EdDsa, true, "t2").unwrap();
        assert_ne!(ring.current.kid(), first);
        assert_eq!(ring.current.alg(), SignAlg::EdDsa);
        assert_eq!(ring.previous[0].kid(), first, "the old key stays published");
        // The running instance signs with the new key from the next request on.
        assert_eq!(keys.keys().current.kid(), ring.current.kid());
        assert_eq!(keys.keys().all().count(), 2);

        let dropped = rotate(&path, SignAlg::Es256, false, "t3").unwrap();
        assert!(dropped.previous.is_empty());
        let kept = rotate(&path, SignAlg::Es256, true, "t4").unwrap();
        assert_eq!(kept.previous.len(), 1, "one previous key at most");
        assert_eq!(kept.previous[0].kid(), dropped.current.kid());
        assert_eq!(keys.keys().current.kid(), kept.current.kid());
        std::fs::write(&path, "junk").unwrap();
        assert_eq!(
            keys.keys().current.kid(),
            kept.current.kid(),
            "a broken file keeps the keys"
        );
    }
}
