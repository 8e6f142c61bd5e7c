//! File and data parts: an Agent's declared input modes, the caps, the exec hand-off (files in
//! the turn's directory, data inline on the protocol) and output artifacts carrying files and
//! data back, returned exactly.

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::*;

/// An exec agent that hands every input part back as an artifact part: files copied by path
/// (so Sextant reads them from disk), data and URLs as they came, and writes what it saw of
/// the turn line (paths, kinds, the turn directory) to `seen.json` in its working directory.
const ROUND_TRIP: &str = r#"
import json, os, shutil, sys
turn = json.loads(sys.stdin.readline())
turn_dir = os.environ["SEXTANT_TURN_DIR"]
out, seen = [], []
for i, inp in enumerate(turn["inputs"]):
    for j, p in enumerate(inp["parts"]):
        seen.append(p)
        if p["kind"] == "file":
            assert os.path.dirname(p["path"]) == turn_dir, (p, turn_dir)
            copy = "copy-%d-%d" % (i, j)
            shutil.copy(p["path"], copy)
            out.append({"path": copy, "filename": p["filename"], "mediaType": p["media_type"]})
        elif p["kind"] == "data":
            out.append({"data": p["data"], "mediaType": "application/json"})
        elif p["kind"] == "url":
            out.append({"url": p["url"], "filename": p["filename"]})
with open("seen.json", "w") as f:
    json.dump({"parts": seen, "turn_dir": turn_dir}, f)
print(json.dumps({"type": "artifact", "name": "echo", "parts": out}))
print(json.dumps({"type": "final", "status": "completed"}))
"#;

fn files_agent(script: &str) -> String {
    format!(
        "[[agents]]\nid = \"files\"\nname = \"Files\"\ndescription = \"e2e parts agent\"\n\
         input_modes = [\"text/plain\", \"image/*\", \"application/json\", \"application/octet-stream\"]\n\
         max_part_bytes = 64\nmax_message_bytes = 100\n\
         engine = {{ kind = \"exec\", command = [\"python3\", \"-c\", {}] }}\n\n",
        serde_json::to_string(script).unwrap()
    )
}

fn parts_msg(parts: Value) -> Value {
    json!({ "messageId": uid("m"), "role": "ROLE_USER", "parts": parts })
}

#[tokio::test]
async fn files_and_data_round_trip_through_an_exec_agent_exactly() {
    let app = TestApp::spawn_with(false, Some(&files_agent(ROUND_TRIP))).await;
    // Bytes that are not UTF-8, and a filename that tries to leave the turn directory.
    let png: Vec<u8> = vec![0x89, b'P', b'N', b'G', 0, 0xff, 0xfe, b'\n', 7];
    let raw = base64(&png);
    let data = json!({ "k": [1, 2.5, "é"], "nested": { "null": null, "t": true } });
    let m = parts_msg(json!([
        { "text": "see attached" },
        { "raw": raw, "filename": "../../evil\n\u{202e}gnp.png", "mediaType": "image/png" },
        { "data": data, "mediaType": "application/json" },
        { "url": "https://example.com/a.png", "filename": "a.png", "mediaType": "image/png" },
    ]));
    let task = app.send_task("files", m.clone()).await;
    assert_eq!(state(&task), "TASK_STATE_COMPLETED", "{task}");

    // The artifact carries the file's bytes back exactly, and the data and URL as they came.
    let out = task["artifacts"][0]["parts"]
        .as_array()
        .expect("parts")
        .clone();
    assert_eq!(out.len(), 3, "{task}");
    assert_eq!(out[0]["raw"], raw, "{task}");
    assert_eq!(out[0]["filename"], "../../evil\n\u{202e}gnp.png");
    assert_eq!(out[0]["mediaType"], "image/png");
    assert_eq!(out[1]["data"], data);
    assert_eq!(out[2]["url"], "https://example.com/a.png");

    // History returns the input message exactly as sent.
    let got = app
        .get_task_as(Who::Anon, "files", task["id"].as_str().unwrap())
        .await;
    let sent = &got["history"][0];
    assert_eq!(sent["parts"], m["parts"], "{got}");

    // The engine saw the file under Sextant's own name in the turn directory, the data
    // inline, the URL unfetched; the directory is gone once the turn ended.
    let seen: Value = serde_json::from_slice(
        &std::fs::read(app.dir.path().join("work/seen.json")).expect("seen.json"),
    )
    .unwrap();
    let parts = seen["parts"].as_array().unwrap();
    assert_eq!(parts[0], json!({ "kind": "text", "text": "see attached" }));
    assert_eq!(parts[1]["kind"], "file");
    let path = parts[1]["path"].as_str().unwrap();
    assert!(path.ends_with("/0-1-_.._evil__gnp.png"), "{path}");
    assert_eq!(parts[1]["size"], png.len());
    assert_eq!(parts[1]["sha256"], sha256_hex(&png));
    assert_eq!(parts[2]["data"], data);
    assert_eq!(parts[3]["kind"], "url");
    assert!(
        parts[3].get("path").is_none(),
        "URLs are not fetched: {parts:?}"
    );
    let turn_dir = std::path::PathBuf::from(seen["turn_dir"].as_str().unwrap());
    assert!(
        turn_dir.starts_with(app.dir.path().join("work/turns")),
        "{turn_dir:?}"
    );
    assert!(
        !turn_dir.exists(),
        "the turn directory is removed after the turn"
    );
    app.shutdown().await;
}

#[tokio::test]
async fn caps_refuse_large_parts_and_messages_naming_the_field() {
    let app = TestApp::spawn_with(false, Some(&files_agent(ROUND_TRIP))).await;
    let big = base64(&[7u8; 65]);
    let r = app
        .rpc(
            "files",
            "SendMessage",
            json!({ "message": parts_msg(json!([{ "text": "x" }, { "raw": big, "mediaType": "image/png" }])) }),
        )
        .await;
    let err = assert_rpc_error(&r, -32602);
    assert_eq!(
        err["data"][1]["fieldViolations"][0]["field"], "message.parts[1]",
        "{err}"
    );
    let text = err["message"].as_str().unwrap();
    assert!(
        text.contains("65 bytes") && text.contains("at most 64 bytes per part"),
        "{text}"
    );

    let sixty = base64(&[1u8; 60]);
    let r = app
        .rpc(
            "files",
            "SendStreamingMessage",
            json!({ "message": parts_msg(json!([
                { "raw": sixty, "mediaType": "image/png" },
                { "raw": sixty, "mediaType": "image/png" },
            ])) }),
        )
        .await;
    let err = assert_rpc_error(&r, -32602);
    assert_eq!(
        err["data"][1]["fieldViolations"][0]["field"], "message.parts",
        "{err}"
    );
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("max_message_bytes"),
        "{err}"
    );

    // A type no mode covers is ContentTypeNotSupported, naming the part and the modes.
    let r = app
        .rpc(
            "files",
            "SendMessage",
            json!({ "message": parts_msg(json!([{ "raw": "dGNr", "mediaType": "application/x-unsupported" }])) }),
        )
        .await;
    let err = assert_rpc_error(&r, -32005);
    let text = err["message"].as_str().unwrap();
    assert!(
        text.contains("message.parts[0]") && text.contains("image/*"),
        "{text}"
    );
    // A URL part must be an http(s) URL.
    let r = app
        .rpc(
            "files",
            "SendMessage",
            json!({ "message": parts_msg(json!([{ "url": "file:///etc/passwd", "mediaType": "image/png" }])) }),
        )
        .await;
    let err = assert_rpc_error(&r, -32602);
    assert_eq!(
        err["data"][1]["fieldViolations"][0]["field"], "message.parts[0].url",
        "{err}"
    );

    assert_eq!(app.tasks_total().await, 0, "nothing was journalled");
    app.shutdown().await;
}

#[tokio::test]
async fn cards_declare_the_agents_input_modes() {
    let app = TestApp::spawn_with(false, Some(&files_agent(ROUND_TRIP))).await;
    let (status, _, card) = app
        .get_json("/api/v1/agents/files/.well-known/agent-card.json", false)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        card["defaultInputModes"],
        json!([
            "text/plain",
            "image/*",
            "application/json",
            "application/octet-stream"
        ])
    );
    let (_, _, echo) = app
        .get_json("/api/v1/agents/echo/.well-known/agent-card.json", false)
        .await;
    assert_eq!(echo["defaultInputModes"], json!(["text/plain"]));
    app.shutdown().await;
}

/// An artifact naming a file it cannot hand back fails the turn with the reason, rather than
/// losing the file quietly.
#[tokio::test]
async fn an_artifact_file_over_the_cap_fails_the_turn_saying_why() {
    let script = r#"
import json, sys
sys.stdin.readline()
open("big.bin", "wb").write(b"x" * 65)
print(json.dumps({"type": "artifact", "parts": [{"path": "big.bin"}]}))
"#;
    let app = TestApp::spawn_with(false, Some(&files_agent(script))).await;
    let task = app.send_task("files", msg("make a big file")).await;
    assert_eq!(state(&task), "TASK_STATE_FAILED", "{task}");
    let why = task["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or("");
    assert!(
        why.contains("big.bin") && why.contains("max_part_bytes"),
        "{why}"
    );
    app.shutdown().await;
}

fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn sha256_hex(bytes: &[u8]) -> String {
    sextant_core::ids::sha256_hex(bytes)
}

/// With `fetch_url_parts` the engine gets URL parts fetched, through the network guard: a
/// caller's URL may not reach this machine, so a loopback URL is refused (the refusal is in the
/// turn line) and nothing is sent to it.
#[tokio::test]
async fn fetched_url_parts_go_through_the_guard() {
    let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = hits.clone();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let target = format!("http://{}/secret.png", listener.local_addr().unwrap());
    let app_router = axum::Router::new().fallback(move || {
        counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        async { "secret" }
    });
    tokio::spawn(async move {
        let _ = axum::serve(listener, app_router).await;
    });
    let toml = files_agent(ROUND_TRIP).replace(
        "max_part_bytes = 64\n",
        "max_part_bytes = 64\nfetch_url_parts = true\n",
    );
    let app = TestApp::spawn_with(false, Some(&toml)).await;
    let m = parts_msg(json!([{ "url": target, "mediaType": "image/png" }]));
    let task = app.send_task("files", m).await;
    assert_eq!(state(&task), "TASK_STATE_COMPLETED", "{task}");
    let seen: Value = serde_json::from_slice(
        &std::fs::read(app.dir.path().join("work/seen.json")).expect("seen.json"),
    )
    .unwrap();
    let part = &seen["parts"][0];
    assert_eq!(part["kind"], "url", "{seen}");
    assert_eq!(part["url"], target.as_str());
    let why = part["fetch_error"].as_str().unwrap_or("");
    assert!(why.contains("refused") && why.contains("loopback"), "{why}");
    assert_eq!(
        hits.load(std::sync::atomic::Ordering::SeqCst),
        0,
        "nothing reached the target"
    );
    app.shutdown().await;
}
