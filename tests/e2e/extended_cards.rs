//! Sextant orchestrates and discovers another Sextant by the skills of its extended card
//! (issue #35): B's public card lists one generic `chat` skill by design, its real skills are
//! on the extended card (`GetExtendedAgentCard`), which A reads with the token B issued it.
//! Without a token A sees only the public card; a token B no longer accepts falls back to the
//! public card with a note.

use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

use crate::support::*;

/// B's default Agent: its skill `translate` is on its extended card only. The peer token
/// `a` may call it, `stranger` may read it (until B revokes that token).
const B_AGENTS: &str = r#"
default_agent = "translator"

[[agents]]
id = "translator"
name = "Translator"
description = "e2e: an Agent whose real skill is on its extended card"
engine = { kind = "echo" }
access = { call = ["person", "anonymous-local", "peer:a"], read = ["peer:stranger"] }

[[agents.skills]]
id = "translate"
name = "Translate"
description = "Translates text between languages"
tags = ["language"]
"#;

/// An owner request to `app`'s console API.
async fn api(
    app: &TestApp,
    method: Method,
    path: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let (status, _, v) = app.request(Who::Owner, method, path, body).await;
    (status, v)
}

/// A peer token B issues under `name`.
async fn peer_token(b: &TestApp, name: &str) -> String {
    let (status, v) = api(
        b,
        Method::POST,
        "/api/v1/peer-tokens",
        Some(json!({ "name": name })),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{v}");
    v["token"].as_str().expect("a token").to_string()
}

async fn register(a: &TestApp, body: Value) {
    let (status, v) = api(a, Method::POST, "/api/v1/peers", Some(body)).await;
    assert_eq!(status, StatusCode::CREATED, "{v}");
}

async fn orchestrate(a: &TestApp, capability: &str) -> (StatusCode, Value) {
    api(
        a,
        Method::POST,
        "/api/v1/peers/orchestrate",
        Some(json!({ "capability": capability, "message": "bonjour", "mode": "all" })),
    )
    .await
}

async fn discover(a: &TestApp, peer: &str) -> Value {
    let (status, d) = api(
        a,
        Method::POST,
        "/api/v1/peers/discover",
        Some(json!({ "url": peer })),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{d}");
    d
}

fn skill_ids(summary: &Value) -> Vec<String> {
    summary["skills"]
        .as_array()
        .expect("skills")
        .iter()
        .filter_map(|s| s["id"].as_str().map(String::from))
        .collect()
}

#[tokio::test]
async fn orchestration_and_discovery_read_the_extended_card_of_a_peer_with_a_token() {
    let b = TestApp::spawn_with(false, Some(B_AGENTS)).await;
    let a = TestApp::spawn().await;

    // Without a token: the public card, one generic skill.
    register(&a, json!({ "name": "b-public", "url": b.url })).await;
    let (status, e) = orchestrate(&a, "translate").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{e}");
    let message = e["error"]["message"].as_str().expect("a message");
    assert!(message.contains("known capabilities: chat"), "{message}");

    // With the token B issued A: its extended card's skills, for routing and for discovery.
    let token = peer_token(&b, "a").await;
    register(&a, json!({ "name": "b", "url": b.url, "token": token })).await;
    let (status, o) = orchestrate(&a, "translate").await;
    assert_eq!(status, StatusCode::OK, "{o}");
    assert_eq!(o["peers"], json!(["b"]), "only the peer with a token: {o}");
    let r = &o["results"][0];
    assert_eq!(r["status"], "ok", "{o}");
    assert_eq!(r["skill_match"], "skill id", "{o}");
    assert!(
        r["reply"].as_str().is_some_and(|t| t.contains("bonjour")),
        "{o}"
    );
    let (status, o) = orchestrate(&a, "language").await;
    assert_eq!(
        (status, &o["peers"]),
        (StatusCode::OK, &json!(["b"])),
        "by tag: {o}"
    );

    // Discovery shows the same: the public card's skills without a token, the extended
    // card's with one; the pin is the public card's either way.
    let d = discover(&a, "b-public").await;
    assert_eq!(skill_ids(&d), ["chat"], "{d}");
    assert_eq!(d["extendedCard"]["used"], false, "{d}");
    assert!(
        d["extendedCard"]["note"]
            .as_str()
            .is_some_and(|n| n.contains("no token")),
        "{d}"
    );
    let public_pin = d["pinHash"].clone();
    let d = discover(&a, "b").await;
    assert_eq!(skill_ids(&d), ["translate"], "{d}");
    assert_eq!(d["skillsTotal"], 1);
    assert_eq!(d["extendedCard"]["used"], true, "{d}");
    assert_eq!(
        d["pinHash"], public_pin,
        "the public card stays the pinned identity"
    );
    assert_eq!(d["matchesPin"], true, "{d}");

    // A token B revoked since: the public card, with a note saying why.
    let stranger = peer_token(&b, "stranger").await;
    register(
        &a,
        json!({ "name": "b-stranger", "url": b.url, "token": stranger }),
    )
    .await;
    let (status, v) = api(&b, Method::DELETE, "/api/v1/peer-tokens/stranger", None).await;
    assert!(status.is_success(), "{status}: {v}");
    let d = discover(&a, "b-stranger").await;
    assert_eq!(skill_ids(&d), ["chat"], "{d}");
    assert_eq!(d["extendedCard"]["used"], false, "{d}");
    assert!(
        d["extendedCard"]["note"]
            .as_str()
            .is_some_and(|n| n.contains("could not be read")),
        "{d}"
    );
    let (status, o) = orchestrate(&a, "translate").await;
    assert_eq!(
        (status, &o["peers"]),
        (StatusCode::OK, &json!(["b"])),
        "{o}"
    );
    assert!(
        o["notes"].as_array().is_some_and(|n| n
            .iter()
            .any(|n| n.as_str().is_some_and(|n| n.starts_with("b-stranger: ")))),
        "{o}"
    );
    a.shutdown().await;
    b.shutdown().await;
}
