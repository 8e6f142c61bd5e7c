//! Peer bearer tokens: a JSON object `{peer name: token}` in one file in the data dir
//! (`peer-tokens.json`), mode 0600, replaced atomically (written to a 0600 temp file, then
//! renamed). Kept out of the journal so a copied or shared `journal.db` (and its WAL) never
//! carries them, and never returned by any API.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The token file.
#[derive(Clone)]
pub struct TokenStore {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    map: Mutex<BTreeMap<String, String>>,
}

impl std::fmt::Debug for TokenStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenStore")
            .field("path", &self.inner.path)
            .finish_non_exhaustive()
    }
}

impl TokenStore {
    /// Reads the file (a missing file is an empty store) and tightens its mode to 0600.
    pub fn open(path: &Path) -> Result<Self, String> {
        let map = match std::fs::read(path) {
            Ok(bytes) => {
                restrict(path).map_err(|e| format!("cannot protect {}: {e}", path.display()))?;
                serde_json::from_slice(&bytes)
                    .map_err(|e| format!("{} is not a token file: {e}", path.display()))?
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BTreeMap::new(),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        Ok(Self {
            inner: Arc::new(Inner {
                path: path.to_path_buf(),
                map: Mutex::new(map),
            }),
        })
    }

    /// A peer's token.
    pub fn get(&self, name: &str) -> Option<String> {
        self.inner
            .map
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .cloned()
    }

    /// Sets (`Some`) or removes (`None`) a peer's token and rewrites the file.
    pub async fn set(&self, name: &str, token: Option<String>) -> Result<(), String> {
        let inner = self.inner.clone();
        let name = name.to_string();
        tokio::task::spawn_blocking(move || {
            let mut map = inner.map.lock().unwrap_or_else(|e| e.into_inner());
            let mut next = map.clone();
            match token {
                Some(t) => next.insert(name, t),
                None => next.remove(&name),
            };
            write_private(&inner.path, &next)?;
            *map = next;
            Ok(())
        })
        .await
        .map_err(|e| format!("token store task failed: {e}"))?
    }
}

fn write_private(path: &Path, map: &BTreeMap<String, String>) -> Result<(), String> {
    let body = serde_json::to_vec_pretty(map).map_err(|e| e.to_string())?;
    let tmp = path.with_extension("json.tmp");
    let result = (|| -> std::io::Result<()> {
        use std::io::Write;
        let _ = std::fs::remove_file(&tmp);
        let mut f = open_private(&tmp)?;
        f.write_all(&body)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    result.map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(unix)]
fn open_private(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
}

#[cfg(not(unix))]
fn open_private(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
}

#[cfg(unix)]
fn restrict(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
}

#[cfg(not(unix))]
fn restrict(_path: &Path) -> std::io::Result<()> {
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[tokio::test]
    async fn tokens_live_in_a_private_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("peer-tokens.json");
        let store = TokenStore::open(&path).unwrap();
        assert_eq!(store.get("a"), None);
        store.set("a", Some("t-1".into())).await.unwrap();
        store.set("b", Some("t-2".into())).await.unwrap();
        store.set("b", None).await.unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let again = TokenStore::open(&path).unwrap();
        assert_eq!(again.get("a").as_deref(), Some("t-1"));
        assert_eq!(again.get("b"), None);
        std::fs::write(&path, "not json").unwrap();
        assert!(
            TokenStore::open(&path)
                .unwrap_err()
                .contains("not a token file")
        );
    }
}
