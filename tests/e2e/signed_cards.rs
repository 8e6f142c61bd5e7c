//! Peers' signed cards: the key is pinned with the card, a changed key (or a removed or failing
//! signature) disables the peer as a changed card does, an invalid signature is refused with
//! the reason, and keys come from the card's origin or the person, never from a `jku`. Also
//! Sextant against Sextant: its own signed card pins, and a key rotation is noticed.

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sextant_a2a::signing::{SignAlg, SigningKey, jwks, sign_card};

use crate::support::*;

#[derive(Clone, Default)]
struct Served {
    card: Arc<Mutex<Value>>,
    jwks: Arc<Mutex<Value>>,
    jwks_gets: Arc<Mutex<usize>>,
}

async fn start_peer(served: Served) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let app = Router::new()
        .route(
            "/.well-known/agent-card.json",
            get(|State(s): State<Served>| async move {
                axum::Json(s.card.lock().unwrap().clone()).into_response()
            }),
        )
        .route(
            "/.well-known/jwks.json",
            get(|State(s): State<Served>| async move {
                *s.jwks_gets.lock().unwrap() += 1;
                axum::Json(s.jwks.lock().unwrap().clone()).into_response()
            }),
        )
        .route(
            "/rpc",
            post(|body: Bytes| async move {
                let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                // The registration's probe: GetTask of a task that does not exist.
                if req["method"] == "GetTask" {
                    return axum::Json(json!({"jsonrpc": "2.0", "id": req["id"],
                        "error": {"code": -32001, "message": "Task not found"}}))
                    .into_response();
                }
                axum::Json(
                    json!({"jsonrpc": "2.0", "id": req["id"], "result": {"task": {
                    "id": "remote-1", "contextId": req["params"]["message"]["contextId"],
                    "status": {"state": "TASK_STATE_COMPLETED",
                               "message": {"messageId": "r1", "role": "ROLE_AGENT",
                                           "parts": [{"text": "signed hello"}]}}}}}),
                )
                .into_response()
            }),
        )
        .with_state(served);
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    url
}

fn card(url: &str, description: &str) -> Value {
    json!({
        "name": "Signed peer", "description": description, "version": "1.0.0",
        "supportedInterfaces": [{"url": format!("{url}/rpc"), "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}],
        "capabilities": {"streaming": false},
        "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "hello", "name": "Hello", "description": "says hello", "tags": ["hi"]}],
    })
}

async fn api(
    app: &TestApp,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let (status, _, v) = app.request(Who::Owner, method, path, body).await;
    (status, v)
}

async fn call(app: &TestApp) -> (StatusCode, Value) {
    api(
        app,
        reqwest::Method::POST,
        "/api/v1/peers/call",
        Some(json!({"agent": "signed", "message": "hello"})),
    )
    .await
}

#[tokio::test]
async fn a_signed_cards_key_is_pinned_and_a_changed_key_disables_the_peer() {
    let served = Served::default();
    let url = start_peer(served.clone()).await;
    let (k1, _) = SigningKey::generate(SignAlg::Es256).unwrap();
    let (k2, _) = SigningKey::generate(SignAlg::EdDsa).unwrap();
    let set = |card: Value, key: Option<&SigningKey>| {
        *served.card.lock().unwrap() = match key {
            Some(k) => sign_card(&card, k).unwrap(),
            None => card,
        };
    };
    set(card(&url, "v1"), Some(&k1));
    *served.jwks.lock().unwrap() = jwks([&k1]);
    let app = TestApp::spawn().await;

    let (status, v) = api(
        &app,
        reqwest::Method::POST,
        "/api/v1/peers",
        Some(json!({"name": "signed", "url": url})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{v}");
    assert_eq!(v["pin"]["key"]["kid"], k1.kid(), "{v}");
    assert_eq!(v["pin"]["key"]["alg"], "ES256");
    let hash = v["pin"]["hash"].as_str().unwrap().to_string();
    let (status, r) = call(&app).await;
    assert_eq!(status, StatusCode::OK, "{r}");
    let gets = *served.jwks_gets.lock().unwrap();
    assert_eq!(
        gets, 1,
        "the key set is read when pinning, not on every use"
    );

    // Signed by another key (both published): the peer is disabled, its pin hash unchanged.
    set(card(&url, "v1"), Some(&k2));
    *served.jwks.lock().unwrap() = jwks([&k1, &k2]);
    let (status, r) = call(&app).await;
    assert_eq!(status, StatusCode::CONFLICT, "{r}");
    let (_, peer) = api(&app, reqwest::Method::GET, "/api/v1/peers/signed", None).await;
    assert_eq!(peer["enabled"], false);
    assert_eq!(peer["disabled"]["reason"], "signing_key_changed", "{peer}");
    assert_eq!(peer["disabled"]["old_hash"], hash.as_str());
    let change = peer["disabled"]["changes"][0].as_str().unwrap();
    assert!(
        change.contains(k2.kid()) && change.contains(k1.kid()),
        "{change}"
    );
    assert!(
        r["error"]["message"].as_str().unwrap().contains("/pin"),
        "{r}"
    );
    // Re-pinning takes the new key.
    let (status, v) = api(
        &app,
        reqwest::Method::POST,
        "/api/v1/peers/signed/pin",
        Some(json!({})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["pin"]["key"]["kid"], k2.kid());
    assert_eq!(call(&app).await.0, StatusCode::OK);

    // A signature that fails (a field outside the pin changed) disables it too.
    let mut tampered = sign_card(&card(&url, "v1"), &k2).unwrap();
    tampered["description"] = json!("v2");
    *served.card.lock().unwrap() = tampered;
    assert_eq!(call(&app).await.0, StatusCode::CONFLICT);
    let (_, peer) = api(&app, reqwest::Method::GET, "/api/v1/peers/signed", None).await;
    assert_eq!(peer["disabled"]["reason"], "signature_invalid", "{peer}");

    // The signature removed: disabled; re-pinned as an unsigned card, it has no key.
    set(card(&url, "v1"), None);
    api(
        &app,
        reqwest::Method::POST,
        "/api/v1/peers/signed/pin",
        Some(json!({})),
    )
    .await;
    set(card(&url, "v1"), Some(&k2));
    assert_eq!(
        call(&app).await.0,
        StatusCode::OK,
        "a card that starts being signed pins its key"
    );
    let (_, peer) = api(&app, reqwest::Method::GET, "/api/v1/peers/signed", None).await;
    assert_eq!(peer["pin"]["key"]["kid"], k2.kid(), "{peer}");
    set(card(&url, "v1"), None);
    assert_eq!(call(&app).await.0, StatusCode::CONFLICT);
    let (_, peer) = api(&app, reqwest::Method::GET, "/api/v1/peers/signed", None).await;
    assert_eq!(peer["disabled"]["reason"], "signature_removed", "{peer}");
    app.shutdown().await;
}

#[tokio::test]
async fn invalid_signatures_are_refused_with_a_reason_and_keys_never_come_from_a_jku() {
    let served = Served::default();
    let url = start_peer(served.clone()).await;
    let (k1, _) = SigningKey::generate(SignAlg::Es256).unwrap();
    let (other, _) = SigningKey::generate(SignAlg::Es256).unwrap();
    let app = TestApp::spawn().await;
    let register = |body: Value| api(&app, reqwest::Method::POST, "/api/v1/peers", Some(body));

    // A signature that does not verify.
    let mut bad = sign_card(&card(&url, "v1"), &k1).unwrap();
    bad["skills"][0]["description"] = json!("changed after signing");
    *served.card.lock().unwrap() = bad;
    *served.jwks.lock().unwrap() = jwks([&k1]);
    let (status, e) = register(json!({"name": "signed", "url": url})).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("does not verify"),
        "{e}"
    );

    // Signed with a key the origin does not publish: no key; and a jku is never followed.
    let jku_hits = Arc::new(Mutex::new(0usize));
    let hits = jku_hits.clone();
    let jku_listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let jku = format!("http://{}/keys", jku_listener.local_addr().unwrap());
    tokio::spawn(async move {
        let app = Router::new().fallback(move || {
            *hits.lock().unwrap() += 1;
            async { "{}" }
        });
        let _ = axum::serve(jku_listener, app).await;
    });
    let header = json!({"alg": "ES256", "typ": "JOSE", "kid": other.kid(), "jku": jku});
    let protected = sextant_a2a::signing::jws::b64url(header.to_string().as_bytes());
    let payload = sextant_a2a::signing::canonical::payload(
        &card(&url, "v1"),
        sextant_a2a::signing::Reading::Spec,
    )
    .unwrap();
    let input = format!(
        "{protected}.{}",
        sextant_a2a::signing::jws::b64url(&payload)
    );
    let mut with_jku = card(&url, "v1");
    with_jku["signatures"] = json!([{ "protected": protected,
        "signature": sextant_a2a::signing::jws::b64url(&other.sign(input.as_bytes()).unwrap()) }]);
    *served.card.lock().unwrap() = with_jku;
    let (status, e) = register(json!({"name": "signed", "url": url})).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{e}");
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no key is known"),
        "{e}"
    );
    assert_eq!(*jku_hits.lock().unwrap(), 0, "the jku was not fetched");

    // The person may give the key; then the card registers, and the origin's set is not read.
    let before = *served.jwks_gets.lock().unwrap();
    let (status, e) =
        register(json!({"name": "signed", "url": url, "card_jwks": jwks([&other])})).await;
    assert_eq!(status, StatusCode::CREATED, "{e}");
    assert_eq!(e["pin"]["key"]["kid"], other.kid());
    assert_eq!(e["has_card_jwks"], true);
    assert_eq!(*served.jwks_gets.lock().unwrap(), before);
    let (status, e) =
        register(json!({"name": "other", "url": url, "card_jwks": {"keys": [{"kty": "EC"}]}}))
            .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{e}");
    assert_eq!(e["error"]["field"], "card_jwks");
    // Discover says what it found.
    let (_, d) = api(
        &app,
        reqwest::Method::POST,
        "/api/v1/peers/discover",
        Some(json!({"url": "signed"})),
    )
    .await;
    assert_eq!(d["signature"]["signed"], true, "{d}");
    assert_eq!(d["signature"]["verified"], true, "{d}");
    app.shutdown().await;
}

/// One Sextant registering another: its card verifies with the JWKS it publishes, the key is
/// pinned, and a rotation on the other side disables it until it is re-pinned.
#[tokio::test]
async fn sextant_pins_another_sextants_key_and_notices_a_rotation() {
    let b = TestApp::spawn().await;
    let a = TestApp::spawn().await;
    let (status, v) = api(
        &a,
        reqwest::Method::POST,
        "/api/v1/peers",
        Some(json!({"name": "signed", "url": b.url})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{v}");
    let (_, jwks) = {
        let (s, _, j) = b.get_json("/.well-known/jwks.json", false).await;
        (s, j)
    };
    assert_eq!(v["pin"]["key"]["kid"], jwks["keys"][0]["kid"], "{v}");
    let ring = sextant_server::card_keys::rotate(
        &b.dir.path().join("card-key.json"),
        SignAlg::Es256,
        false,
        "now",
    )
    .unwrap();
    let (_, d) = api(
        &a,
        reqwest::Method::POST,
        "/api/v1/peers/discover",
        Some(json!({"url": "signed"})),
    )
    .await;
    assert_eq!(d["signature"]["verified"], false, "{d}");
    assert!(
        d["signature"]["problem"]
            .as_str()
            .unwrap()
            .contains(ring.current.kid()),
        "{d}"
    );
    let (status, r) = call(&a).await;
    assert_eq!(status, StatusCode::CONFLICT, "{r}");
    let (_, peer) = api(&a, reqwest::Method::GET, "/api/v1/peers/signed", None).await;
    assert_eq!(peer["disabled"]["reason"], "signing_key_changed", "{peer}");
    let (status, v) = api(
        &a,
        reqwest::Method::POST,
        "/api/v1/peers/signed/pin",
        Some(json!({})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v}");
    assert_eq!(v["pin"]["key"]["kid"], ring.current.kid());
    a.shutdown().await;
    b.shutdown().await;
}
