//! Backup, restore and export of the whole profile: a backup taken while tasks are being
//! accepted restores to a journal that passes `PRAGMA integrity_check` and holds every task
//! accepted before it began; the console's downloads are the owner's only, the backup one
//! carries no secret, and the export's lines parse back into the journal's records.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use reqwest::StatusCode;
use serde_json::{Value, json};
use sextant_journal::export::Line;
use sextant_server::profile::{self, Secrets};

use crate::support::*;

/// SendMessage (returnImmediately) to echo; the accepted task's id. Accepted means journalled.
async fn submit(client: &reqwest::Client, url: &str, text: &str) -> String {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": msg(text), "configuration": { "returnImmediately": true } } });
    let resp = send(
        client
            .post(url)
            .header("Content-Type", "application/json")
            .header("A2A-Version", "1.0")
            .body(body.to_string()),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::OK);
    let v: Value = resp.json().await.unwrap();
    v["result"]["task"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("not accepted: {v}"))
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_taken_under_load_restores_every_task_accepted_before_it() {
    let app = TestApp::spawn().await;
    let accepted = Arc::new(Mutex::new(Vec::<String>::new()));
    let progress = Arc::new(tokio::sync::Notify::new());
    let stop = Arc::new(AtomicBool::new(false));
    let mut submitters = Vec::new();
    for w in 0..4 {
        let (client, url) = (app.client.clone(), app.a2a_url("echo"));
        let (accepted, progress, stop) = (accepted.clone(), progress.clone(), stop.clone());
        submitters.push(tokio::spawn(async move {
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                let id = submit(&client, &url, &format!("load {w}-{i}")).await;
                accepted.lock().unwrap().push(id);
                progress.notify_waiters();
                i += 1;
            }
        }));
    }
    // Some tasks are accepted before the backup begins, and acceptance goes on while it runs.
    loop {
        let wait = progress.notified();
        if accepted.lock().unwrap().len() >= 40 {
            break;
        }
        wait.await;
    }
    let before: Vec<String> = accepted.lock().unwrap().clone();
    // Beside the data dir, which goes away with the app.
    let keep = tempfile::tempdir().unwrap();
    let file = keep.path().join("profile.tar");
    let (dir, out) = (app.dir.path().to_path_buf(), file.clone());
    let manifest =
        tokio::task::spawn_blocking(move || sextant::backup::backup(&dir, &out, Secrets::Include))
            .await
            .unwrap()
            .expect("backup under load");
    stop.store(true, Ordering::Relaxed);
    for s in submitters {
        s.await.unwrap();
    }
    let after = accepted.lock().unwrap().len();
    assert!(after > before.len(), "acceptance went on around the backup");
    assert!(manifest.secrets_included);
    assert!(manifest.tasks as usize >= before.len(), "{manifest:?}");
    let token = app.token.clone();
    app.shutdown().await;

    // Restore into a fresh dir: a journal that passes integrity_check and has every task.
    let fresh = tempfile::tempdir().unwrap();
    let target = fresh.path().join("restored");
    let restored = sextant::backup::restore(&file, &target).expect("restore");
    assert!(restored.replaced.is_none());
    let checked = sextant_journal::backup::check(&target.join("journal.db")).unwrap();
    assert_eq!(checked.tasks, manifest.tasks);
    let running = sextant::start(loopback(&target))
        .await
        .expect("starts on it");
    assert_eq!(
        running.token, token,
        "the owner token came back with the secrets"
    );
    let journal = running.runtime.journal().clone();
    for id in &before {
        assert!(
            journal.task(id).await.unwrap().is_some(),
            "task {id}, accepted before the backup began, is missing"
        );
    }
    assert!(journal.rebuild_check().await.unwrap().is_empty());
    running.shutdown().await.unwrap();
}

/// The console's downloads: owner only; the backup leaves the secrets out and says so; the
/// export streams every record as a typed line that parses back; a restore onto the live data
/// dir is refused.
#[tokio::test]
async fn the_console_downloads_a_backup_without_secrets_and_an_export_that_parses_back() {
    let app = TestApp::spawn().await;
    let mut ids = Vec::new();
    for i in 0..3 {
        let task = app.send_task("echo", msg(&format!("export me {i}"))).await;
        ids.push(task["id"].as_str().unwrap().to_string());
    }

    for path in ["/api/v1/backup", "/api/v1/export"] {
        let (status, _, body) = app.get_json(path, false).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{path}: {body}");
        assert_eq!(body["error"]["code"], "unauthorized");
    }

    let resp = send(
        app.client
            .get(format!("{}/api/v1/backup", app.url))
            .bearer_auth(&app.token),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()["content-type"], "application/x-tar");
    let disposition = resp.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        disposition.starts_with("attachment; filename=\"sextant-backup-"),
        "{disposition}"
    );
    let tar = resp.bytes().await.unwrap();
    let unpacked = tempfile::tempdir().unwrap();
    let manifest = profile::read_backup(&tar[..], unpacked.path()).expect("a valid backup");
    assert!(!manifest.secrets_included);
    assert_eq!(manifest.tasks, 3);
    let names: Vec<&str> = manifest.files.iter().map(|f| f.name.as_str()).collect();
    assert!(
        names.contains(&"journal.db") && names.contains(&"audit.jsonl"),
        "{names:?}"
    );
    for secret in profile::SECRETS {
        assert!(!names.contains(secret), "{secret} in a download: {names:?}");
        assert!(!unpacked.path().join(secret).exists());
    }
    assert!(
        manifest
            .left_out
            .iter()
            .any(|l| l.starts_with("token: a secret")),
        "{:?}",
        manifest.left_out
    );

    let resp = send(
        app.client
            .get(format!("{}/api/v1/export", app.url))
            .bearer_auth(&app.token),
    )
    .await;
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()["content-type"], "application/x-ndjson");
    let text = resp.text().await.unwrap();
    let lines: Vec<Line> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert!(matches!(lines.first(), Some(Line::Header(_))));
    let Some(Line::End(end)) = lines.last() else {
        panic!("no end line: the export was cut short")
    };
    let journal = app.running.runtime.journal().clone();
    for id in &ids {
        let row = journal.task(id).await.unwrap().unwrap();
        // A task line is the task's row with its content hash (kept with its inputs).
        assert!(
            lines.iter().any(|l| matches!(l,
                Line::Task(t) if t.task == row && t.content_hash.is_some())),
            "task {id}"
        );
        let events = journal
            .session_events(&row.session_id, 0, 1000)
            .await
            .unwrap();
        for e in events {
            assert!(lines.contains(&Line::Event(e.clone())), "{e:?}");
        }
        let session = journal.session(&row.session_id).await.unwrap().unwrap();
        assert!(lines.contains(&Line::Session(session)));
    }
    // The backup download was audited, and the audit log is in the export.
    assert!(
        lines
            .iter()
            .any(|l| matches!(l, Line::Audit(r) if r.get("method") == Some(&json!("backup")))),
        "{text}"
    );
    assert_eq!(end.counts["task"], 3);

    // The live data dir is not restored over.
    let file = unpacked.path().join("download.tar");
    std::fs::write(&file, &tar).unwrap();
    let refused = sextant::backup::restore(&file, app.dir.path())
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("another Sextant is already running"),
        "{refused}"
    );
    assert_eq!(app.tasks_total().await, 3);
    app.shutdown().await;
}
