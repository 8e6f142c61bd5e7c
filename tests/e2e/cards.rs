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
async fn agent_card_advertises_jsonrpc_1_0_then_0_3() {
    let app = TestApp::spawn().await;
    let (status, _, card) = app
        .get_json("/api/v1/agents/echo/.well-known/agent-card.json", false)
        .await;
    assert_eq!(status, StatusCode::OK);
    let url = format!("{}/api/v1/agents/echo/a2a", app.url);
    let ifaces = card["supportedInterfaces"].as_array().expect("interfaces");
    assert_eq!(ifaces.len(), 2, "{card}");
    assert_eq!(ifaces[0]["url"], url);
    assert_eq!(ifaces[0]["protocolBinding"], "JSONRPC");
    assert_eq!(ifaces[0]["protocolVersion"], "1.0");
    assert_eq!(ifaces[1]["url"], url);
    assert_eq!(ifaces[1]["protocolBinding"], "JSONRPC");
    assert_eq!(ifaces[1]["protocolVersion"], "0.3");
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
