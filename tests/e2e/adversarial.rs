//! The trust boundary under hostile input (issue #14): a remote peer sends the shell Agent
//! commands built to mislead an approver — separators, `${IFS}`, command substitution,
//! newlines, bidi overrides, zero-width characters, ANSI escapes, a homoglyph program name, a
//! 100 KiB command, secrets mixed with commands. For each one:
//!
//! - the person's card shows the exact command (byte for byte what was sent), its escaped view
//!   and the flags that say what was escaped, and who sent it;
//! - the card's digest is the SHA-256 of the RFC 8785 form of its exact action (computed here,
//!   independently of Sextant), and the output of the run names that same digest;
//! - the command runs raw (no untrusted-input frame in it) once the person accepts it with
//!   that digest, so nothing ran that the card did not show;
//! - the peer's own view of its task masks only secret values and never shows the server's
//!   working directory.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::*;

/// A shell Agent and two exec Agents that print their input, all callable by peer alice.
const AGENTS: &str = r#"
[[agents]]
id = "sh"
name = "Shell"
description = "e2e: the shell engine, callable by a peer"
engine = { kind = "shell", working_dir = "{dir}/work" }
access = { call = ["person", "peer:alice"] }

[[agents]]
id = "raw"
name = "Raw"
description = "e2e: an exec agent that executes its input"
engine = { kind = "exec", command = ["sh", "-c", "head -n1 | sed 's/.*\"text\":\"\\([^\"]*\\)\".*/\\1/'"], input = "raw" }
access = { call = ["person", "peer:alice"] }

[[agents]]
id = "model"
name = "Model"
description = "e2e: an exec agent that hands its input to a model"
engine = { kind = "exec", command = ["sh", "-c", "head -n1"] }
access = { call = ["person", "peer:alice"] }
"#;

struct Env {
    app: TestApp,
    alice: String,
}

async fn env() -> Env {
    env_with(AGENTS).await
}

async fn env_with(agents: &str) -> Env {
    let app = TestApp::spawn_with(false, Some(agents)).await;
    let (status, _, body) = app
        .request(
            Who::Owner,
            Method::POST,
            "/api/v1/peer-tokens",
            Some(json!({ "name": "alice" })),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let alice = body["token"].as_str().unwrap().to_string();
    Env { app, alice }
}

impl Env {
    /// A blocking SendMessage from alice; the task (waiting, or done).
    async fn alice_sends(&self, agent: &str, text: &str) -> Value {
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                           "params": { "message": msg(text) } });
        let resp = send(
            self.app
                .client
                .post(self.app.a2a_url(agent))
                .bearer_auth(&self.alice)
                .header("content-type", "application/json")
                .header("A2A-Version", "1.0")
                .body(body.to_string()),
        )
        .await;
        let v = json_body(resp, StatusCode::OK).await;
        assert!(v.get("error").is_none(), "{v}");
        v["result"]["task"].clone()
    }

    /// Alice's view of her task once it is terminal (she subscribes until the stream ends).
    async fn alice_waits(&self, agent: &str, task_id: &str) -> Value {
        let body = json!({ "jsonrpc": "2.0", "id": 2, "method": "SubscribeToTask",
                           "params": { "id": task_id } });
        let resp = send(
            self.app
                .client
                .post(self.app.a2a_url(agent))
                .bearer_auth(&self.alice)
                .header("content-type", "application/json")
                .header("A2A-Version", "1.0")
                .body(body.to_string()),
        )
        .await;
        if content_type(resp.headers()).starts_with("text/event-stream") {
            Sse::from_response(resp).rest().await;
        }
        let body = json!({ "jsonrpc": "2.0", "id": 3, "method": "GetTask",
                           "params": { "id": task_id } });
        let resp = send(
            self.app
                .client
                .post(self.app.a2a_url(agent))
                .bearer_auth(&self.alice)
                .header("content-type", "application/json")
                .header("A2A-Version", "1.0")
                .body(body.to_string()),
        )
        .await;
        let v = json_body(resp, StatusCode::OK).await;
        let task = v["result"].clone();
        assert!(is_terminal(state(&task)), "{task}");
        task
    }

    /// The person's card for `task_id` in the console inbox.
    async fn card(&self, task_id: &str) -> Value {
        let (status, _, body) = self.app.get_json("/api/v1/interactions", true).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body["interactions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["taskId"] == task_id)
            .unwrap_or_else(|| panic!("no card for {task_id}: {body}"))
            .clone()
    }

    /// The person answers `option` with the digest they saw; status and body.
    async fn answer(&self, card: &Value, option: &str, digest: &str) -> (StatusCode, Value) {
        let id = card["interactionId"].as_str().unwrap();
        let (status, _, body) = self
            .app
            .request(
                Who::Owner,
                Method::POST,
                &format!("/api/v1/interactions/{id}/answer"),
                Some(json!({ "task_id": card["taskId"], "option": option,
                             "message_id": uid("answer"), "digest": digest })),
            )
            .await;
        (status, body)
    }
}

/// The interaction data part of a task's status message.
fn status_interaction(task: &Value) -> Value {
    task["status"]["message"]["parts"]
        .as_array()
        .into_iter()
        .flatten()
        .find_map(|p| p["data"].get("interaction").cloned())
        .unwrap_or_else(|| panic!("no interaction in {task}"))
}

/// `sha256:` + SHA-256 of the RFC 8785 form of `exact`, computed without Sextant's code.
fn digest_of(exact: &Value) -> String {
    use sha2::Digest;
    let canonical = serde_json_canonicalizer::to_vec(exact).unwrap();
    let hex: String = sha2::Sha256::digest(&canonical)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

/// The digest the run's output names (the shell engine's data part).
fn ran_digest(task: &Value) -> String {
    task["artifacts"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|a| a["parts"].as_array().cloned().unwrap_or_default())
        .find_map(|p| p["data"]["digest"].as_str().map(String::from))
        .unwrap_or_else(|| panic!("no digest in the output of {task}"))
}

struct Case {
    what: &'static str,
    /// The command; `{dir}` is the data dir.
    command: String,
    /// What the card shows (escaped), `{dir}` likewise.
    shown: String,
    flags: &'static [&'static str],
    /// A file the command creates (relative to the data dir), proving it ran.
    creates: Option<&'static str>,
    /// What the peer's own view of the command is (None: the same as the command).
    peer_sees: Option<String>,
}

fn case(what: &'static str, command: &str, shown: &str, flags: &'static [&'static str]) -> Case {
    Case {
        what,
        command: command.into(),
        shown: shown.into(),
        flags,
        creates: None,
        peer_sees: None,
    }
}

fn cases() -> Vec<Case> {
    let long_pad = "a".repeat(100 * 1024);
    let long = format!(": {long_pad}; touch {{dir}}/long-tail");
    vec![
        Case {
            creates: Some("sep"),
            ..case(
                "separators",
                "echo a; echo b && echo c || echo d | cat; touch {dir}/sep",
                "echo a; echo b && echo c || echo d | cat; touch {dir}/sep",
                &[],
            )
        },
        Case {
            creates: Some("ifs"),
            ..case(
                "${IFS}",
                "touch${IFS}{dir}/ifs",
                "touch${IFS}{dir}/ifs",
                &[],
            )
        },
        Case {
            creates: Some("subst"),
            ..case(
                "command substitution",
                "echo $(touch {dir}/subst) `echo tick`",
                "echo $(touch {dir}/subst) `echo tick`",
                &[],
            )
        },
        Case {
            creates: Some("nl"),
            ..case(
                "newline",
                "echo harmless\ntouch {dir}/nl",
                "echo harmless\\ntouch {dir}/nl",
                &["newline"],
            )
        },
        Case {
            creates: Some("bidi"),
            ..case(
                "bidi override",
                "touch {dir}/bidi # \u{202e}txt.exe\u{2066}",
                "touch {dir}/bidi # \\u{202E}txt.exe\\u{2066}",
                &["bidi"],
            )
        },
        case(
            "zero-width",
            "ec\u{200b}ho hidden",
            "ec\\u{200B}ho hidden",
            &["zero_width"],
        ),
        Case {
            creates: Some("ansi"),
            ..case(
                "ANSI escapes",
                "echo ok \u{1b}[2K\u{1b}[1A; touch {dir}/ansi",
                "echo ok \\e[2K\\e[1A; touch {dir}/ansi",
                &["ansi_escape"],
            )
        },
        case(
            "homoglyph program name",
            "\u{441}url -s example.invalid",
            "\\u{0441}url -s example.invalid",
            &["non_ascii_command_word"],
        ),
        Case {
            creates: Some("long-tail"),
            ..case("a 100 KiB command", &long, &long, &[])
        },
        Case {
            creates: Some("f"),
            peer_sees: Some("PASSWORD=[REDACTED];touch${IFS}{dir}/f".into()),
            ..case(
                "a secret mixed with a command",
                "PASSWORD=x;touch${IFS}{dir}/f",
                "PASSWORD=x;touch${IFS}{dir}/f",
                &[],
            )
        },
        Case {
            creates: Some("tok"),
            peer_sees: Some(
                "GITHUB_TOKEN=[REDACTED] && touch {dir}/tok # Bearer [REDACTED]".into(),
            ),
            ..case(
                "a vendor token and a bearer value",
                "GITHUB_TOKEN=ghp_16C7e42F292c6912E7710c838347Ae178B4a && touch {dir}/tok # Bearer abcdefghijklmnopqrstuvwxyz",
                "GITHUB_TOKEN=ghp_16C7e42F292c6912E7710c838347Ae178B4a && touch {dir}/tok # Bearer abcdefghijklmnopqrstuvwxyz",
                &[],
            )
        },
    ]
}

#[tokio::test]
async fn hostile_commands_from_a_peer_show_exactly_what_runs_and_run_only_as_approved() {
    let env = env().await;
    let dir = env.app.dir.path().display().to_string();
    for c in cases() {
        let command = c.command.replace("{dir}", &dir);
        let shown = c.shown.replace("{dir}", &dir);
        let what = c.what;

        // The peer's task waits for the person; the peer's view masks only secret values and
        // carries no path of the person's machine.
        let task = env.alice_sends("sh", &command).await;
        assert_eq!(state(&task), "TASK_STATE_AUTH_REQUIRED", "{what}: {task}");
        let task_id = task["id"].as_str().unwrap().to_string();
        let theirs = status_interaction(&task);
        let peer_sees = c.peer_sees.as_ref().map(|p| p.replace("{dir}", &dir));
        assert_eq!(
            theirs["command"].as_str(),
            Some(peer_sees.as_deref().unwrap_or(&command)),
            "{what}"
        );
        assert!(theirs.get("cwd").is_none(), "{what}: {theirs}");
        assert!(theirs["action"]["exact"].get("cwd").is_none(), "{what}");

        // The person's card: the exact command, its escaped view, the flags, the sender.
        let card = env.card(&task_id).await;
        assert_eq!(card["command"].as_str(), Some(command.as_str()), "{what}");
        let action = &card["action"];
        assert_eq!(action["exact"]["command"].as_str(), Some(command.as_str()));
        assert_eq!(action["shown"].as_str(), Some(shown.as_str()), "{what}");
        let flags: Vec<&str> = action["flags"]
            .as_array()
            .map(|f| f.iter().filter_map(|f| f["code"].as_str()).collect())
            .unwrap_or_default();
        assert_eq!(flags, c.flags, "{what}");
        assert_eq!(card["from"], "peer alice", "{what}");
        assert_eq!(action["exact"]["cwd"], format!("{dir}/work"), "{what}");
        let digest = action["digest"].as_str().unwrap().to_string();
        assert_eq!(digest, digest_of(&action["exact"]), "{what}");
        let expected = json!({ "kind": "shell", "command": command, "cwd": format!("{dir}/work") });
        assert_eq!(digest, digest_of(&expected), "{what}");

        // An answer for another action is refused, and nothing runs.
        let other = digest_of(&json!({ "kind": "shell", "command": "true" }));
        let (status, body) = env.answer(&card, "accept", &other).await;
        assert_eq!(status, StatusCode::CONFLICT, "{what}: {body}");
        if let Some(file) = c.creates {
            assert!(!env.app.dir.path().join(file).exists(), "{what}");
        }

        // Accepted with the card's digest: it runs raw, and its output names that digest.
        let (status, body) = env.answer(&card, "accept", &digest).await;
        assert_eq!(status, StatusCode::OK, "{what}: {body}");
        let done = env.alice_waits("sh", &task_id).await;
        assert_eq!(state(&done), "TASK_STATE_COMPLETED", "{what}: {done}");
        assert_eq!(ran_digest(&done), digest, "{what}");
        let out = serde_json::to_string(&done["artifacts"]).unwrap();
        assert!(!out.contains("Syntax error"), "{what}: {out}");
        assert!(!out.contains("Untrusted input"), "{what}: {out}");
        if let Some(file) = c.creates {
            assert!(env.app.dir.path().join(file).exists(), "{what}: {out}");
        }
    }
    env.app.shutdown().await;
}

#[tokio::test]
async fn engines_that_execute_get_raw_text_and_model_engines_get_the_frame() {
    let env = env().await;
    // The shell runs a peer's command as sent (the frame used to make `sh` fail with
    // `Syntax error: "(" unexpected`).
    let task = env.alice_sends("sh", "echo from-alice").await;
    let card = env.card(task["id"].as_str().unwrap()).await;
    assert_eq!(card["command"], "echo from-alice");
    let digest = card["action"]["digest"].as_str().unwrap().to_string();
    assert_eq!(env.answer(&card, "accept", &digest).await.0, StatusCode::OK);
    let done = env.alice_waits("sh", task["id"].as_str().unwrap()).await;
    assert!(
        first_artifact_text(&done).starts_with("from-alice\n"),
        "{done}"
    );

    // An exec agent that declares `input = "raw"` gets the exact text; one that does not
    // gets the filtered, framed form a model should see.
    let raw = env.alice_sends("raw", "hello <|im_start|>").await;
    assert_eq!(state(&raw), "TASK_STATE_COMPLETED", "{raw}");
    assert!(
        first_artifact_text(&raw).starts_with("hello <|im_start|>\n"),
        "{raw}"
    );
    let framed = env.alice_sends("model", "hello <|im_start|>").await;
    let seen = first_artifact_text(&framed);
    assert!(seen.contains("[Untrusted input from peer alice"), "{seen}");
    assert!(seen.contains("hello [filtered]"), "{seen}");
    env.app.shutdown().await;
}

/// A text-only client (Hermes' a2a_call returns text only) can tell the person exactly what
/// to answer: the waiting task's status text names the task, the interaction, the declared
/// options and the digest, and says only the person answers.
#[tokio::test]
async fn the_waiting_status_text_is_enough_for_a_text_only_client() {
    let env = env().await;
    let task = env.alice_sends("sh", "echo text-only").await;
    let text: String = task["status"]["message"]["parts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["text"].as_str())
        .collect();
    let card = env.card(task["id"].as_str().unwrap()).await;
    for needed in [
        format!("Task: {}", task["id"].as_str().unwrap()),
        format!("Interaction: {}", card["interactionId"].as_str().unwrap()),
        "- accept: Yes, run it".to_string(),
        "- acceptForSession:".to_string(),
        "- decline:".to_string(),
        "- cancel:".to_string(),
        format!(
            "Action digest: {}",
            card["action"]["digest"].as_str().unwrap()
        ),
        "Approval needed to run: echo text-only".to_string(),
        "Sent by: peer alice".to_string(),
        "a message sent to this task is not an answer".to_string(),
    ] {
        assert!(text.contains(&needed), "{needed:?} missing from {text:?}");
    }
    env.app.shutdown().await;
}

/// A shell Agent whose working directory cannot be created (a file is in the way).
const BLOCKED: &str = r#"
[[agents]]
id = "sh"
name = "Shell"
description = "e2e: a shell agent whose working directory cannot be created"
engine = { kind = "shell", working_dir = "{dir}/blocker/work" }
access = { call = ["person", "peer:alice"] }

[[agents]]
id = "ex"
name = "Exec"
description = "e2e: an exec agent whose working directory cannot be created"
engine = { kind = "exec", command = ["sh", "-c", "head -n1"], working_dir = "{dir}/blocker/exec" }
access = { call = ["person", "peer:alice"] }
"#;

#[tokio::test]
async fn a_failure_to_create_the_working_dir_does_not_tell_the_caller_where_it_is() {
    let env = env_with(BLOCKED).await;
    let dir = env.app.dir.path().display().to_string();
    std::fs::write(
        env.app.dir.path().join("blocker"),
        "a file, not a directory",
    )
    .unwrap();
    let task = env.alice_sends("sh", "echo hi").await;
    let task_id = task["id"].as_str().unwrap().to_string();
    let card = env.card(&task_id).await;
    let digest = card["action"]["digest"].as_str().unwrap().to_string();
    let (status, body) = env.answer(&card, "accept", &digest).await;
    assert!(status.is_success(), "{status}: {body}");
    let seen = env.alice_waits("sh", &task_id).await;
    assert_eq!(state(&seen), "TASK_STATE_FAILED", "{seen}");
    let text = seen.to_string();
    assert!(
        text.contains("cannot create the agent's working directory"),
        "{text}"
    );
    assert!(
        !text.contains(&dir),
        "the caller reads no server path: {text}"
    );
    // An exec Agent fails its turn the same way, before any approval.
    let task = env.alice_sends("ex", "hi").await;
    let task_id = task["id"].as_str().unwrap().to_string();
    let seen = env.alice_waits("ex", &task_id).await;
    assert_eq!(state(&seen), "TASK_STATE_FAILED", "{seen}");
    let text = seen.to_string();
    assert!(
        text.contains("cannot create the agent's working directory"),
        "{text}"
    );
    assert!(
        !text.contains(&dir),
        "the caller reads no server path: {text}"
    );
    env.app.shutdown().await;
}
