//! Agent cards: where they are served, what they advertise, and their cache headers.

use reqwest::StatusCode;
use reqwest::header::{CACHE_CONTROL, ETAG, IF_NONE_MATCH, LAST_MODIFIED};

use crate::support::*;

#[tokio::test]
async fn default_card_is_served_at_well_known_and_legacy_paths() {
    let app = TestApp::spawn().await;
    // Whichever Agent the console marks as the default is the one served at the root.
    let (_, _, agents) = app.get_json("/api/v1/agents", true).await;
    let defaults: Vec<&str> = agents["agents"]
        .as_array()
        .expect("agents")
        .iter()
        .filter(|a| a["default"] == true)
        .filter_map(|a| a["agentId"].as_str())
        .collect();
    assert_eq!(defaults.len(), 1, "exactly one default agent: {agents}");
    let default_id = defaults[0];

    let (status, headers, card) = app.get_json("/.well-known/agent-card.json", false).await;
    assert_eq!(status, StatusCode::OK);
    assert!(content_type(&headers).starts_with("application/json"));
    assert_eq!(
        card["supportedInterfaces"][0]["url"],
        format!("{}/api/v1/agents/{default_id}/a2a", app.url)
    );
    let (_, _, own) = app
        .get_json(
            &format!("/api/v1/agents/{default_id}/.well-known/agent-card.json"),
            false,
        )
        .await;
    assert_eq!(card, own, "the root card is the default agent's card");
    assert_eq!(card["capabilities"]["streaming"], true);

    let (status, _, legacy) = app.get_json("/.well-known/agent.json", false).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(legacy, card, "the legacy path serves the same card");
    app.shutdown().await;
}

#[tokio::test]
async fn default_agent_in_agents_toml_chooses_the_root_card() {
    let app = TestApp::spawn_with(false, Some("default_agent = \"echo\"\n")).await;
    let (status, _, card) = app.get_json("/.well-known/agent-card.json", false).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(card["name"], "Echo", "{card}");
    assert_eq!(
        card["supportedInterfaces"][0]["url"],
        format!("{}/api/v1/agents/echo/a2a", app.url)
    );
    app.shutdown().await;
}

#[tokio::test]
async fn conformance_mode_makes_the_conformance_agent_the_default_card() {
    let app = TestApp::spawn_with(true, None).await;
    let (status, _, card) = app.get_json("/.well-known/agent-card.json", false).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        card["supportedInterfaces"][0]["url"],
        format!("{}/api/v1/agents/conformance/a2a", app.url)
    );
    app.shutdown().await;
}

#[tokio::test]
async fn agent_card_advertises_jsonrpc_1_0_then_0_3_then_http_json_then_grpc() {
    let app = TestApp::spawn().await;
    let (status, _, card) = app
        .get_json("/api/v1/agents/echo/.well-known/agent-card.json", false)
        .await;
    assert_eq!(status, StatusCode::OK);
    let url = format!("{}/api/v1/agents/echo/a2a", app.url);
    let ifaces = card["supportedInterfaces"].as_array().expect("interfaces");
    assert_eq!(ifaces.len(), 4, "{card}");
    assert_eq!(ifaces[0]["url"], url);
    assert_eq!(ifaces[0]["protocolBinding"], "JSONRPC");
    assert_eq!(ifaces[0]["protocolVersion"], "1.0");
    assert_eq!(ifaces[1]["url"], url);
    assert_eq!(ifaces[1]["protocolBinding"], "JSONRPC");
    assert_eq!(ifaces[1]["protocolVersion"], "0.3");
    assert_eq!(ifaces[2]["url"], format!("{}/api/v1/agents/echo", app.url));
    assert_eq!(ifaces[2]["protocolBinding"], "HTTP+JSON");
    assert_eq!(ifaces[2]["protocolVersion"], "1.0");
    // gRPC at host:port (a channel target), the Agent named by `tenant`.
    assert_eq!(ifaces[3]["url"], app.url.trim_start_matches("http://"));
    assert_eq!(ifaces[3]["protocolBinding"], "GRPC");
    assert_eq!(ifaces[3]["protocolVersion"], "1.0");
    assert_eq!(ifaces[3]["tenant"], "echo");
    // The public card is minimal: one generic skill; the real ones are on the extended card.
    assert_eq!(card["skills"].as_array().map(Vec::len), Some(1), "{card}");
    assert_eq!(card["skills"][0]["id"], "chat");
    assert_eq!(card["capabilities"]["extendedAgentCard"], true);
    assert!(card["securitySchemes"]["bearer"].is_object(), "{card}");
    app.shutdown().await;
}

#[tokio::test]
async fn card_has_cache_headers_and_if_none_match_gets_304() {
    let app = TestApp::spawn().await;
    let path = "/api/v1/agents/echo/.well-known/agent-card.json";
    let (status, headers, _) = app.get_json(path, false).await;
    assert_eq!(status, StatusCode::OK);
    let etag = headers
        .get(ETAG)
        .and_then(|v| v.to_str().ok())
        .expect("ETag")
        .to_string();
    assert!(etag.ends_with('"') && etag.contains('"'), "ETag {etag:?}");
    let modified = headers
        .get(LAST_MODIFIED)
        .and_then(|v| v.to_str().ok())
        .expect("Last-Modified");
    assert!(modified.ends_with(" GMT"), "Last-Modified {modified:?}");
    let cache = headers
        .get(CACHE_CONTROL)
        .and_then(|v| v.to_str().ok())
        .expect("Cache-Control");
    let max_age: u64 = cache
        .split(',')
        .find_map(|d| d.trim().strip_prefix("max-age="))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no max-age in {cache:?}"));
    assert!(max_age > 0);

    let resp = app
        .client
        .get(format!("{}{path}", app.url))
        .header(IF_NONE_MATCH, &etag)
        .send()
        .await
        .expect("request");
    assert_eq!(resp.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(
        resp.headers().get(ETAG).and_then(|v| v.to_str().ok()),
        Some(etag.as_str())
    );
    assert!(resp.bytes().await.expect("body").is_empty());

    let resp = app
        .client
        .get(format!("{}{path}", app.url))
        .header(IF_NONE_MATCH, "W/\"something-else\"")
        .send()
        .await
        .expect("request");
    assert_eq!(resp.status(), StatusCode::OK, "a stale ETag gets the card");
    app.shutdown().await;
}

#[tokio::test]
async fn forwarded_headers_change_the_advertised_url_only_from_a_trusted_proxy() {
    let path = "/api/v1/agents/echo/.well-known/agent-card.json";
    let fetch = |app: &TestApp| {
        app.client
            .get(format!("{}{path}", app.url))
            .header("X-Forwarded-Host", "agents.example.com")
            .header("X-Forwarded-Proto", "https")
            .send()
    };
    // From a caller the configuration does not name, forwarded headers are ignored.
    let app = TestApp::spawn().await;
    let card = json_body(fetch(&app).await.expect("request"), StatusCode::OK).await;
    assert_eq!(
        card["supportedInterfaces"][0]["url"],
        format!("{}/api/v1/agents/echo/a2a", app.url)
    );
    let TestApp { running, dir, .. } = app;
    running.shutdown().await.expect("clean shutdown");
    std::fs::write(
        dir.path().join("security.toml"),
        "[perimeter]\ntrusted_proxies = [\"127.0.0.1\"]\n",
    )
    .unwrap();
    // From a trusted proxy they are believed.
    let app = TestApp::start_in(dir, false).await;
    let resp = fetch(&app).await.expect("request");
    let fwd_etag = resp.headers().get(ETAG).cloned();
    let card = json_body(resp, StatusCode::OK).await;
    assert_eq!(
        card["supportedInterfaces"][0]["url"],
        "https://agents.example.com/api/v1/agents/echo/a2a"
    );
    assert_eq!(card["provider"]["url"], "https://agents.example.com");
    let (_, headers, _) = app.get_json(path, false).await;
    assert_ne!(
        headers.get(ETAG).cloned(),
        fwd_etag,
        "a different card has a different ETag"
    );
    app.shutdown().await;
}

#[tokio::test]
async fn unknown_agent_card_is_a_404_json_error() {
    let app = TestApp::spawn().await;
    let (status, headers, body) = app
        .get_json("/api/v1/agents/nobody/.well-known/agent-card.json", false)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(content_type(&headers).starts_with("application/json"));
    assert_eq!(body["error"]["code"], "not_found", "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty())
    );
    app.shutdown().await;
}

/// Every card is signed (A2A 1.0 §8.4) with the key published at /.well-known/jwks.json; the
/// signature covers the card as served; a rotation while running takes effect on the next card
/// and keeps the old key published.
#[tokio::test]
async fn cards_are_signed_with_the_published_key_and_rotation_needs_no_restart() {
    use sextant_a2a::signing::{Reading, SignAlg, jwks_keys, verify_card};
    let app = TestApp::spawn().await;
    let (status, headers, jwks) = app.get_json("/.well-known/jwks.json", false).await;
    assert_eq!(status, StatusCode::OK);
    assert!(headers.get(ETAG).is_some() && headers.get(CACHE_CONTROL).is_some());
    let keys = jwks_keys(&jwks);
    assert_eq!(keys.len(), 1, "{jwks}");
    assert_eq!(keys[0]["alg"], "ES256");
    assert!(keys[0].get("d").is_none(), "no private member: {jwks}");

    let path = "/api/v1/agents/echo/.well-known/agent-card.json";
    let (_, _, card) = app.get_json(path, false).await;
    let sig = &card["signatures"][0];
    let header: serde_json::Value = serde_json::from_slice(
        &sextant_a2a::signing::jws::unb64url(sig["protected"].as_str().unwrap()).unwrap(),
    )
    .unwrap();
    assert_eq!(header["typ"], "JOSE");
    assert_eq!(header["alg"], "ES256");
    assert_eq!(header["kid"], keys[0]["kid"]);
    assert!(header.get("jku").is_none());
    let v = verify_card(&card, &keys).expect("the card verifies with the JWKS");
    assert_eq!(v.reading, Reading::Spec);
    let mut forged = card.clone();
    forged["supportedInterfaces"][0]["url"] = serde_json::json!("https://evil.example/a2a");
    assert!(verify_card(&forged, &keys).is_err());
    // The root card and the extended card are signed too.
    let (_, _, root) = app.get_json("/.well-known/agent-card.json", false).await;
    assert!(verify_card(&root, &keys).is_ok());
    let ext = app
        .rpc_as(
            Who::Owner,
            "echo",
            "GetExtendedAgentCard",
            serde_json::json!({}),
        )
        .await;
    assert!(verify_card(&ext["result"], &keys).is_ok(), "{ext}");

    let card_key = app.dir.path().join("card-key.json");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&card_key).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the signing key is the owner's only");
    }
    let ring = sextant_server::card_keys::rotate(&card_key, SignAlg::EdDsa, true, "now").unwrap();
    let (_, _, jwks) = app.get_json("/.well-known/jwks.json", false).await;
    let keys = jwks_keys(&jwks);
    assert_eq!(keys.len(), 2, "the new key and the one it replaced: {jwks}");
    let (_, _, card) = app.get_json(path, false).await;
    let v = verify_card(&card, &keys).unwrap();
    assert_eq!(v.kid, ring.current.kid());
    assert_eq!(v.alg, "EdDSA");
    app.shutdown().await;
}

/// The assistant route's card has the same cache headers and 304 as the public ones.
#[tokio::test]
async fn the_assistant_card_is_cached_and_signed_like_the_others() {
    let app = TestApp::spawn().await;
    let (status, _, issued) = app
        .request(
            Who::Owner,
            reqwest::Method::POST,
            "/api/v1/assistant-tokens",
            Some(serde_json::json!({ "name": "claude", "agent_id": "echo" })),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{issued}");
    let token = issued["token"].as_str().unwrap().to_string();
    let url = format!(
        "{}/api/v1/assistant-a2a/agents/echo/.well-known/agent-card.json",
        app.url
    );
    let resp = app
        .client
        .get(&url)
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let etag = resp
        .headers()
        .get(ETAG)
        .expect("ETag")
        .to_str()
        .unwrap()
        .to_string();
    assert!(resp.headers().get(CACHE_CONTROL).is_some());
    let card: serde_json::Value = resp.json().await.unwrap();
    assert!(card["signatures"][0]["protected"].is_string(), "{card}");
    let again = app
        .client
        .get(&url)
        .bearer_auth(&token)
        .header(IF_NONE_MATCH, &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
    app.shutdown().await;
}

/// GET `path` with these request headers: the status, headers and body bytes.
async fn get_card(
    app: &TestApp,
    path: &str,
    headers: &[(&str, &str)],
) -> (StatusCode, reqwest::header::HeaderMap, Vec<u8>) {
    let mut req = app.client.get(format!("{}{path}", app.url));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let resp = req.send().await.expect("request");
    let (status, h) = (resp.status(), resp.headers().clone());
    (status, h, resp.bytes().await.expect("body").to_vec())
}

/// The keys of a JSON object, sorted.
fn keys(v: &serde_json::Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().expect("object").keys().cloned().collect();
    k.sort();
    k
}

/// A card request naming `1.0` gets exactly the 1.0 card (the keys of the 1.0 schema and
/// nothing else, the same bytes however 1.0 is named); one without `A2A-Version`, or with a 0.3
/// one, gets it with the 0.3 fields a 0.3 client needs added beside the 1.0 ones. Each shape is
/// signed as served and has its own ETag, and every card response varies by `A2A-Version`.
#[tokio::test]
async fn the_card_request_s_a2a_version_picks_the_1_0_card_or_the_0_3_compatible_one() {
    use sextant_a2a::signing::{jwks_keys, verify_card};
    let app = TestApp::spawn().await;
    let path = "/api/v1/agents/echo/.well-known/agent-card.json";
    let url = format!("{}/api/v1/agents/echo/a2a", app.url);
    let (_, _, jwks) = app.get_json("/.well-known/jwks.json", false).await;
    let jwk = jwks_keys(&jwks);

    let (status, h1, v1_bytes) = get_card(&app, path, &[("A2A-Version", "1.0")]).await;
    assert_eq!(status, StatusCode::OK);
    let v1: serde_json::Value = serde_json::from_slice(&v1_bytes).unwrap();
    assert_eq!(
        keys(&v1),
        [
            "capabilities",
            "defaultInputModes",
            "defaultOutputModes",
            "description",
            "name",
            "provider",
            "securitySchemes",
            "signatures",
            "skills",
            "supportedInterfaces",
            "version",
        ],
        "{v1}"
    );
    assert_eq!(
        keys(&v1["securitySchemes"]["bearer"]),
        ["httpAuthSecurityScheme"]
    );
    assert!(verify_card(&v1, &jwk).is_ok());
    for same in [
        &[("A2A-Version", "1.0.3")][..],
        &[("a2a-version", "1.0.0")][..],
    ] {
        let (_, _, bytes) = get_card(&app, path, same).await;
        assert_eq!(bytes, v1_bytes, "{same:?} is 1.0 too");
    }
    let (_, _, by_query) = get_card(&app, &format!("{path}?A2A-Version=1.0"), &[]).await;
    assert_eq!(
        by_query, v1_bytes,
        "the version as a query parameter counts"
    );

    let (status, h0, none_bytes) = get_card(&app, path, &[]).await;
    assert_eq!(status, StatusCode::OK);
    let v03: serde_json::Value = serde_json::from_slice(&none_bytes).unwrap();
    assert_eq!(v03["url"], url, "{v03}");
    assert_eq!(v03["preferredTransport"], "JSONRPC");
    assert_eq!(v03["protocolVersion"], "0.3.0");
    assert_eq!(v03["supportsAuthenticatedExtendedCard"], true);
    let bearer = &v03["securitySchemes"]["bearer"];
    assert_eq!(bearer["type"], "http", "{bearer}");
    assert_eq!(bearer["scheme"], "Bearer");
    assert!(
        verify_card(&v03, &jwk).is_ok(),
        "the 0.3 shape is signed as served"
    );
    // Nothing of the 1.0 card changed or went: take the added fields away and it is the 1.0
    // card's content (its signature aside, which covers what was served).
    let mut back = v03.clone();
    let o = back.as_object_mut().unwrap();
    for k in [
        "url",
        "preferredTransport",
        "protocolVersion",
        "supportsAuthenticatedExtendedCard",
        "signatures",
    ] {
        o.remove(k);
    }
    o["securitySchemes"]["bearer"]
        .as_object_mut()
        .unwrap()
        .retain(|k, _| k == "httpAuthSecurityScheme");
    let mut unsigned = v1.clone();
    unsigned.as_object_mut().unwrap().remove("signatures");
    assert_eq!(back, unsigned);

    for v03_header in ["0.3", "0.3.0"] {
        let (_, _, bytes) = get_card(&app, path, &[("A2A-Version", v03_header)]).await;
        assert_eq!(
            bytes, none_bytes,
            "A2A-Version {v03_header} gets the 0.3 card"
        );
    }
    // The root card follows the same rule.
    let (_, _, root) = get_card(&app, "/.well-known/agent-card.json", &[]).await;
    let root: serde_json::Value = serde_json::from_slice(&root).unwrap();
    assert!(root["url"].is_string(), "{root}");
    let (_, _, root) = get_card(
        &app,
        "/.well-known/agent-card.json",
        &[("A2A-Version", "1.0")],
    )
    .await;
    let root: serde_json::Value = serde_json::from_slice(&root).unwrap();
    assert!(root.get("url").is_none(), "{root}");

    // Two bodies, two ETags; each revalidates under its own version; both vary by it.
    let etag = |h: &reqwest::header::HeaderMap| h.get(ETAG).unwrap().to_str().unwrap().to_string();
    let (e1, e0) = (etag(&h1), etag(&h0));
    assert_ne!(e1, e0);
    for h in [&h1, &h0] {
        let vary: Vec<&str> = h
            .get_all(reqwest::header::VARY)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect();
        assert!(
            vary.iter().any(|v| v
                .split(',')
                .any(|t| t.trim().eq_ignore_ascii_case("a2a-version"))),
            "Vary: {vary:?}"
        );
    }
    let (s, h, _) = get_card(
        &app,
        path,
        &[("A2A-Version", "1.0"), ("If-None-Match", &e1)],
    )
    .await;
    assert_eq!(s, StatusCode::NOT_MODIFIED);
    assert!(h.get(reqwest::header::VARY).is_some());
    let (s, _, _) = get_card(&app, path, &[("If-None-Match", &e0)]).await;
    assert_eq!(s, StatusCode::NOT_MODIFIED);
    let (s, _, _) = get_card(&app, path, &[("If-None-Match", &e1)]).await;
    assert_eq!(
        s,
        StatusCode::OK,
        "the 1.0 card's ETag is not the 0.3 card's"
    );

    // The 0.3 alias of GetExtendedAgentCard answers with the 0.3-readable card; the 1.0
    // method with the 1.0 card.
    let resp = app
        .post_raw(
            "/api/v1/agents/echo/a2a",
            &[
                ("Content-Type", "application/json"),
                ("Authorization", &format!("Bearer {}", app.token)),
            ],
            serde_json::json!({ "jsonrpc": "2.0", "id": 1,
                "method": "agent/getAuthenticatedExtendedCard" })
            .to_string(),
        )
        .await;
    let ext = json_body(resp, StatusCode::OK).await;
    assert_eq!(ext["result"]["url"], url, "{ext}");
    assert_eq!(ext["result"]["securitySchemes"]["bearer"]["type"], "http");
    assert!(verify_card(&ext["result"], &jwk).is_ok());
    let ext = app
        .rpc_as(
            Who::Owner,
            "echo",
            "GetExtendedAgentCard",
            serde_json::json!({}),
        )
        .await;
    assert!(ext["result"].get("url").is_none(), "{ext}");
    app.shutdown().await;
}
