//! The data dir is private to its owner: Sextant makes it 0700 and every file in it 0600 (the
//! journal with its `-wal` and `-shm` while the server runs, the token, the lock, the audit
//! log, the keys), and at start it tightens a dir an older Sextant left 0755 with a 0644
//! journal. Unix only.
#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::json;

use crate::support::*;

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .permissions()
        .mode()
        & 0o777
}

/// Every regular file directly in `dir`, with its mode.
fn files(dir: &Path) -> Vec<(String, u32)> {
    let mut out: Vec<(String, u32)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                mode(&e.path()),
            )
        })
        .collect();
    out.sort();
    out
}

/// One accepted task, so the journal has written to its WAL.
async fn one_task(app: &TestApp) {
    let resp = app
        .rpc(
            "echo",
            "SendMessage",
            json!({ "message": msg("hello"), "configuration": { "returnImmediately": true } }),
        )
        .await;
    assert!(resp["result"]["task"]["id"].is_string(), "{resp}");
}

fn assert_private(dir: &Path) {
    assert_eq!(mode(dir), 0o700, "the data dir");
    let found = files(dir);
    for name in [
        "journal.db",
        "journal.db-wal",
        "journal.db-shm",
        "token",
        "sextant.lock",
    ] {
        assert!(found.iter().any(|(n, _)| n == name), "{name} in {found:?}");
    }
    let loose: Vec<_> = found.iter().filter(|(_, m)| *m != 0o600).collect();
    assert!(
        loose.is_empty(),
        "files not 0600: {loose:?} (all: {found:?})"
    );
}

#[tokio::test]
async fn a_new_data_dir_is_0700_and_its_files_0600_while_the_server_runs() {
    let tmp = tempfile::tempdir().unwrap();
    // A dir Sextant creates itself (the temp dir is 0700 already).
    let dir = tmp.path().join("data");
    let running = start_after_stop(loopback(&dir))
        .await
        .expect("sextant starts");
    let app = TestApp::running_in(running, tmp, false);
    one_task(&app).await;
    assert_private(&dir);
    // A backup written by `sextant backup` is private too.
    let file = app.dir.path().join("profile.tar");
    sextant::backup::backup(&dir, &file, sextant_server::profile::Secrets::Include).unwrap();
    assert_eq!(mode(&file), 0o600);
    app.shutdown().await;
}

#[tokio::test]
async fn a_data_dir_an_older_sextant_left_readable_is_tightened_at_start() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    std::fs::create_dir(&dir).unwrap();
    // What an older Sextant left: a 0755 dir, a 0644 journal (with its WAL), settings, lock.
    drop(sextant_journal::Journal::open(dir.join("journal.db")).unwrap());
    std::fs::write(dir.join("agents.toml"), "# mine\n").unwrap();
    std::fs::write(dir.join("sextant.lock"), "").unwrap();
    std::fs::write(dir.join("journal.db-wal"), "").unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    for f in [
        "journal.db",
        "journal.db-wal",
        "agents.toml",
        "sextant.lock",
    ] {
        std::fs::set_permissions(dir.join(f), std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let running = start_after_stop(loopback(&dir))
        .await
        .expect("sextant starts");
    let app = TestApp::running_in(running, tmp, false);
    one_task(&app).await;
    assert_private(&dir);
    assert_eq!(
        std::fs::read_to_string(dir.join("agents.toml")).unwrap(),
        "# mine\n"
    );
    app.shutdown().await;
}
