//! The web console's server side: the page at `/` and its deep links (with the strict CSP), the
//! console session cookie (`POST /api/v1/session/bootstrap`) and when it counts, one task by id,
//! and the schedule preview the dialog uses.

use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, COOKIE, SET_COOKIE};
use serde_json::{Value, json};

use crate::support::{TestApp, msg};

/// Bootstraps with `headers`, returning the status and the cookie value, if one was set.
async fn bootstrap(
    app: &TestApp,
    body: &str,
    headers: &[(&str, &str)],
) -> (StatusCode, Option<String>) {
    let mut req = app
        .client
        .post(format!("{}/api/v1/session/bootstrap", app.url))
        .header(CONTENT_TYPE, "application/json")
        .body(body.to_string());
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let res = req.send().await.unwrap();
    let status = res.status();
    let cookie = res
        .headers()
        .get(SET_COOKIE)
        .map(|v| v.to_str().unwrap().to_string());
    if let Some(c) = &cookie {
        assert!(c.contains("HttpOnly"), "{c}");
        assert!(c.contains("SameSite=Strict"), "{c}");
        assert!(c.contains("Path=/api"), "{c}");
    }
    let value = cookie.and_then(|c| {
        c.split(';')
            .next()
            .and_then(|kv| kv.strip_prefix("sextant_console="))
            .map(str::to_string)
    });
    (status, value)
}

/// `GET /api/v1/interactions` with the cookie and extra headers.
async fn inbox_with_cookie(app: &TestApp, cookie: &str, headers: &[(&str, &str)]) -> StatusCode {
    let mut req = app
        .client
        .get(format!("{}/api/v1/interactions", app.url))
        .header(COOKIE, format!("sextant_console={cookie}"));
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    req.send().await.unwrap().status()
}

#[tokio::test]
async fn the_page_is_served_at_its_routes_with_a_strict_csp() {
    let app = TestApp::spawn().await;
    for path in [
        "/",
        "/inbox",
        "/tasks/abc",
        "/schedules/x",
        "/sessions/0193-ab",
    ] {
        let res = app
            .client
            .get(format!("{}{path}", app.url))
            .send()
            .await
            .unwrap();
        assert_eq!(res.status(), StatusCode::OK, "{path}");
        let csp = res.headers()["content-security-policy"].to_str().unwrap();
        assert!(csp.contains("default-src 'self'") && csp.contains("connect-src 'self'"));
        assert!(!csp.contains("unsafe-inline"), "{csp}");
        assert!(
            res.headers()[CONTENT_TYPE]
                .to_str()
                .unwrap()
                .starts_with("text/html")
        );
        assert!(res.headers().get("access-control-allow-origin").is_none());
    }
    // The API keeps its JSON 404, and only GET/HEAD get the page.
    let res = app
        .client
        .get(format!("{}/api/v1/nope", app.url))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::NOT_FOUND);
    assert_eq!(res.headers()[CONTENT_TYPE], "application/json");
    app.shutdown().await;
}

#[tokio::test]
async fn a_same_origin_loopback_page_gets_a_console_session_that_acts_as_the_owner() {
    let app = TestApp::spawn().await;
    let origin = app.url.clone();
    let (status, cookie) = bootstrap(
        &app,
        "{}",
        &[("origin", &origin), ("sec-fetch-site", "same-origin")],
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let cookie = cookie.expect("a cookie");
    assert_ne!(cookie, app.token, "the cookie is not the token");

    // The owner's API, with the cookie alone.
    assert_eq!(inbox_with_cookie(&app, &cookie, &[]).await, StatusCode::OK);
    assert_eq!(
        inbox_with_cookie(&app, &cookie, &[("sec-fetch-site", "same-origin")]).await,
        StatusCode::OK
    );
    // Worth nothing when a browser says the request is cross-origin (even another port of
    // localhost), or with another origin; and a wrong value is nobody.
    for h in [
        [("sec-fetch-site", "cross-site")],
        [("sec-fetch-site", "same-site")],
        [("origin", "http://127.0.0.1:1")],
    ] {
        assert_ne!(
            inbox_with_cookie(&app, &cookie, &h).await,
            StatusCode::OK,
            "{h:?}"
        );
    }
    assert_ne!(inbox_with_cookie(&app, "forged", &[]).await, StatusCode::OK);
    app.shutdown().await;
}

#[tokio::test]
async fn the_console_session_is_refused_to_other_origins_and_rebound_hosts() {
    let app = TestApp::spawn().await;
    for headers in [
        vec![("origin", "http://evil.example")],
        vec![("sec-fetch-site", "cross-site")],
        vec![("host", "evil.example")],
    ] {
        let (status, cookie) = bootstrap(&app, "{}", &headers).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{headers:?}");
        assert!(cookie.is_none());
    }
    // A body that is not declared JSON is refused before anything else.
    let res = app
        .client
        .post(format!("{}/api/v1/session/bootstrap", app.url))
        .header(CONTENT_TYPE, "text/plain")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert!(res.status().is_client_error());
    assert!(res.headers().get(SET_COOKIE).is_none());
    app.shutdown().await;
}

#[tokio::test]
async fn a_pasted_token_signs_the_page_in_and_a_wrong_one_does_not() {
    let app = TestApp::spawn().await;
    let body = json!({ "token": app.token }).to_string();
    let (status, cookie) = bootstrap(&app, &body, &[]).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        inbox_with_cookie(&app, &cookie.expect("a cookie"), &[]).await,
        StatusCode::OK
    );
    let wrong = json!({ "token": "sxt_wrong" }).to_string();
    let (status, cookie) = bootstrap(&app, &wrong, &[]).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(cookie.is_none());
    app.shutdown().await;
}

#[tokio::test]
async fn one_task_is_read_by_id_with_its_session() {
    let app = TestApp::spawn().await;
    let task = app.send_task("echo", msg("hello")).await;
    let id = task["id"].as_str().unwrap();
    let res = app
        .client
        .get(format!("{}/api/v1/tasks/{id}", app.url))
        .bearer_auth(&app.token)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let t: Value = res.json().await.unwrap();
    assert_eq!(t["taskId"], id);
    assert_eq!(t["agentId"], "echo");
    assert!(t["sessionId"].as_str().is_some_and(|s| !s.is_empty()));
    let missing = app
        .client
        .get(format!("{}/api/v1/tasks/no-such-task", app.url))
        .bearer_auth(&app.token)
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    app.shutdown().await;
}

#[tokio::test]
async fn the_schedule_preview_gives_words_and_fire_times_or_the_field_error() {
    let app = TestApp::spawn().await;
    let preview = |body: Value| {
        app.client
            .post(format!("{}/api/v1/me/schedules/preview", app.url))
            .bearer_auth(&app.token)
            .json(&body)
            .send()
    };
    let res = preview(json!({"cron": "30 7 * * 1-5", "timezone": "Europe/Berlin"}))
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let p: Value = res.json().await.unwrap();
    assert_eq!(p["next_runs"].as_array().unwrap().len(), 5);
    assert!(p["description"].as_str().unwrap().contains("07:30"));
    assert!(
        p["next_runs"][0]["local"]
            .as_str()
            .unwrap()
            .contains("T07:30:00+0")
    );

    // The same error a create gets, on the same field.
    let bad = json!({"name": "n", "prompt": "p", "cron": "0 9 30 2 *", "timezone": "UTC", "agent_id": "echo"});
    let created = app
        .client
        .post(format!("{}/api/v1/me/schedules", app.url))
        .bearer_auth(&app.token)
        .json(&bad)
        .send()
        .await
        .unwrap();
    assert_eq!(created.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let created: Value = created.json().await.unwrap();
    let res = preview(json!({"cron": "0 9 30 2 *", "timezone": "UTC"}))
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let p: Value = res.json().await.unwrap();
    assert_eq!(p["error"], created["error"]);
    let res = preview(json!({"cron": "0 9 * * *", "timezone": "Europe/Berln"}))
        .await
        .unwrap();
    let p: Value = res.json().await.unwrap();
    assert_eq!(p["error"]["field"], "timezone");
    // Nothing was saved.
    let list: Value = app
        .client
        .get(format!("{}/api/v1/me/schedules", app.url))
        .bearer_auth(&app.token)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(list["schedules"].as_array().unwrap().len(), 0);
    app.shutdown().await;
}

/// A form hears of every bad field at once, each in words that name it.
#[tokio::test]
async fn a_schedule_write_names_every_bad_field_at_once() {
    let app = TestApp::spawn().await;
    let bad = json!({"name": " ", "prompt": "p", "cron": "61 * * * *", "timezone": "Asia/Tokio", "agent_id": "nobody"});
    let res = app
        .client
        .post(format!("{}/api/v1/me/schedules", app.url))
        .bearer_auth(&app.token)
        .json(&bad)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let body: Value = res.json().await.unwrap();
    let fields: Vec<&str> = body["error"]["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["field"].as_str().unwrap())
        .collect();
    assert_eq!(fields, ["name", "timezone", "cron", "agent_id"], "{body}");
    assert_eq!(body["error"]["field"], "name", "the first one, as before");
    let cron = &body["error"]["fields"][2]["message"];
    assert!(
        cron.as_str()
            .unwrap()
            .ends_with("minute must be 0–59, not 61"),
        "{cron}"
    );
    app.shutdown().await;
}

/// A page signed in with the token stays signed in across reloads (its cookie is checked, not
/// the token asked again); a cookie from before a restart is told apart from none at all.
#[tokio::test]
async fn the_console_session_is_checked_and_an_ended_one_says_so() {
    let app = TestApp::spawn().await;
    let session = |cookie: Option<String>| {
        let mut req = app.client.get(format!("{}/api/v1/session", app.url));
        if let Some(c) = cookie {
            req = req.header(COOKIE, format!("sextant_console={c}"));
        }
        async move {
            let res = req.send().await.unwrap();
            (
                res.status(),
                res.json::<Value>().await.unwrap_or(Value::Null),
            )
        }
    };
    let body = json!({ "token": app.token }).to_string();
    let (_, cookie) = bootstrap(&app, &body, &[]).await;
    let (status, me) = session(cookie.clone()).await;
    assert_eq!(status, StatusCode::OK, "{me}");
    assert_eq!(me["principal"], "you");
    let (status, none) = session(None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(none["error"]["code"], "unauthorized");
    // A cookie of an earlier start (or any other value) has ended.
    let (status, ended) = session(Some("0".repeat(64))).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(ended["error"]["code"], "session_ended");
    assert!(
        ended["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Sextant restarted")
    );
    app.shutdown().await;
}

/// Issues a per-peer token `name` through the API, as the owner; the token.
async fn peer_token(app: &TestApp, name: &str) -> String {
    let res = app
        .client
        .post(format!("{}/api/v1/peer-tokens", app.url))
        .bearer_auth(&app.token)
        .header(CONTENT_TYPE, "application/json")
        .body(json!({ "name": name }).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::CREATED);
    let v: Value = res.json().await.unwrap();
    v["token"].as_str().expect("token shown once").to_string()
}

/// `POST /api/v1/session/logout` with the cookie (if any) and `headers`: the status and the
/// `Set-Cookie` it answered with.
async fn logout(
    app: &TestApp,
    cookie: Option<&str>,
    headers: &[(&str, &str)],
) -> (StatusCode, Option<String>) {
    let mut req = app
        .client
        .post(format!("{}/api/v1/session/logout", app.url))
        .header(CONTENT_TYPE, "application/json")
        .body("{}");
    if let Some(c) = cookie {
        req = req.header(COOKIE, format!("sextant_console={c}"));
    }
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let res = req.send().await.unwrap();
    let set = res
        .headers()
        .get(SET_COOKIE)
        .map(|v| v.to_str().unwrap().to_string());
    (res.status(), set)
}

/// `GET /api/v1/session` with the cookie: the status and the error code, if any.
async fn session_status(app: &TestApp, cookie: &str) -> (StatusCode, Value) {
    let res = app
        .client
        .get(format!("{}/api/v1/session", app.url))
        .header(COOKIE, format!("sextant_console={cookie}"))
        .send()
        .await
        .unwrap();
    let status = res.status();
    let v: Value = res.json().await.unwrap_or(Value::Null);
    (status, v["error"]["code"].clone())
}

/// A bootstrap refused with the REST error body, and no cookie.
async fn assert_refused(app: &TestApp, body: &str, headers: &[(&str, &str)]) -> StatusCode {
    let mut req = app
        .client
        .post(format!("{}/api/v1/session/bootstrap", app.url))
        .header(CONTENT_TYPE, "application/json")
        .body(body.to_string());
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let res = req.send().await.unwrap();
    let status = res.status();
    assert!(
        status == StatusCode::UNAUTHORIZED || status == StatusCode::FORBIDDEN,
        "{status} for {headers:?}"
    );
    assert!(res.headers().get(SET_COOKIE).is_none(), "{headers:?}");
    let v: Value = res.json().await.unwrap();
    assert!(v["error"]["code"].is_string(), "{v}");
    assert!(v["error"]["message"].is_string(), "{v}");
    status
}

/// A caller that proves it is someone else (a peer's token, a token that is no token here)
/// does not become the owner by also calling from loopback; the owner token in the header
/// is proof enough.
#[tokio::test]
async fn a_bootstrap_with_another_callers_token_is_refused() {
    let app = TestApp::spawn().await;
    let peer = format!("Bearer {}", peer_token(&app, "alice").await);
    assert_eq!(
        assert_refused(&app, "{}", &[("authorization", &peer)]).await,
        StatusCode::UNAUTHORIZED
    );
    // Not even with the owner token in the body: one request, one caller.
    let with_owner = json!({ "token": app.token }).to_string();
    assert_eq!(
        assert_refused(&app, &with_owner, &[("authorization", &peer)]).await,
        StatusCode::UNAUTHORIZED
    );
    let (status, cookie) = bootstrap(&app, "{}", &[("authorization", "Bearer sxt_nope")]).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(cookie.is_none());
    let owner = format!("Bearer {}", app.token);
    let (status, cookie) = bootstrap(&app, "{}", &[("authorization", &owner)]).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        inbox_with_cookie(&app, &cookie.expect("a cookie"), &[]).await,
        StatusCode::OK
    );
    app.shutdown().await;
}

/// Behind a public URL (a reverse proxy or tunnel forwarding to loopback), every caller
/// arrives from loopback, often with a loopback `Host`: loopback trust gives nobody the owner
/// cookie there; the pasted token still signs in.
#[tokio::test]
async fn behind_a_public_url_a_loopback_host_is_not_the_owner() {
    let dir = tempfile::tempdir().unwrap();
    let running = sextant::start(crate::support::config(
        dir.path(),
        "127.0.0.1",
        Some("https://sextant.example.com"),
    ))
    .await
    .expect("sextant starts");
    let app = TestApp::running_in(running, dir, false);
    let port = app.url.rsplit(':').next().unwrap().to_string();
    let numeric = format!("127.0.0.1:{port}");
    let named = format!("localhost:{port}");
    for host in [numeric.as_str(), named.as_str(), "localhost", "127.0.0.1"] {
        assert_eq!(
            assert_refused(&app, "{}", &[("host", host)]).await,
            StatusCode::FORBIDDEN,
            "{host}"
        );
    }
    let body = json!({ "token": app.token }).to_string();
    let (status, cookie) = bootstrap(&app, &body, &[("host", &numeric)]).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        inbox_with_cookie(&app, &cookie.expect("a cookie"), &[]).await,
        StatusCode::OK
    );
    app.shutdown().await;
}

/// Behind a configured reverse proxy, or with a proxy's forwarding headers, loopback proves
/// nothing either.
#[tokio::test]
async fn behind_a_proxy_loopback_trust_is_off() {
    let app = TestApp::spawn().await;
    for h in [
        ("x-forwarded-for", "203.0.113.9"),
        ("x-real-ip", "203.0.113.9"),
        ("via", "1.1 tunnel"),
    ] {
        assert_eq!(
            assert_refused(&app, "{}", &[h]).await,
            StatusCode::FORBIDDEN,
            "{h:?}"
        );
    }
    let dir = app.dir;
    app.running.shutdown().await.unwrap();
    std::fs::write(
        dir.path().join("security.toml"),
        "[perimeter]\ntrusted_proxies = [\"127.0.0.1\"]\n",
    )
    .unwrap();
    let app = TestApp::start_in(dir, false).await;
    assert_eq!(assert_refused(&app, "{}", &[]).await, StatusCode::FORBIDDEN);
    let body = json!({ "token": app.token }).to_string();
    assert_eq!(bootstrap(&app, &body, &[]).await.0, StatusCode::OK);
    app.shutdown().await;
}

/// `[perimeter] anonymous_local = false`: no anonymous loopback caller, and no loopback sign-in.
#[tokio::test]
async fn without_anonymous_local_access_loopback_does_not_sign_in() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("security.toml"),
        "[perimeter]\nanonymous_local = false\n",
    )
    .unwrap();
    let app = TestApp::start_in(dir, false).await;
    let origin = app.url.clone();
    assert_eq!(
        assert_refused(
            &app,
            "{}",
            &[("origin", &origin), ("sec-fetch-site", "same-origin")]
        )
        .await,
        StatusCode::FORBIDDEN
    );
    let body = json!({ "token": app.token }).to_string();
    let (status, cookie) = bootstrap(&app, &body, &[]).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        inbox_with_cookie(&app, &cookie.expect("a cookie"), &[]).await,
        StatusCode::OK
    );
    app.shutdown().await;
}

/// Every sign-in is its own session: two sign-ins get two cookies, and signing one out leaves
/// the other; the signed-out cookie is refused from then on (not quietly taken for the
/// anonymous caller).
#[tokio::test]
async fn each_sign_in_is_its_own_session_and_signs_out_alone() {
    let app = TestApp::spawn().await;
    let (_, a) = bootstrap(&app, "{}", &[]).await;
    let body = json!({ "token": app.token }).to_string();
    let (_, b) = bootstrap(&app, &body, &[]).await;
    let (a, b) = (a.expect("a cookie"), b.expect("a cookie"));
    assert_ne!(a, b, "each sign-in gets its own cookie");
    assert_eq!(inbox_with_cookie(&app, &a, &[]).await, StatusCode::OK);
    assert_eq!(inbox_with_cookie(&app, &b, &[]).await, StatusCode::OK);

    // Another page cannot sign the person out.
    let (status, set) = logout(&app, Some(&a), &[("origin", "http://evil.example")]).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(set.is_none());
    let (status, set) = logout(&app, Some(&a), &[("sec-fetch-site", "same-site")]).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(set.is_none());
    assert_eq!(inbox_with_cookie(&app, &a, &[]).await, StatusCode::OK);

    let (status, set) = logout(&app, Some(&a), &[]).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let set = set.expect("the cookie is cleared");
    assert!(set.starts_with("sextant_console=;"), "{set}");
    assert!(
        set.contains("Max-Age=0") && set.contains("Path=/api"),
        "{set}"
    );
    assert_eq!(
        inbox_with_cookie(&app, &a, &[]).await,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        session_status(&app, &a).await,
        (StatusCode::UNAUTHORIZED, json!("session_ended"))
    );
    assert_eq!(inbox_with_cookie(&app, &b, &[]).await, StatusCode::OK);
    assert_eq!(session_status(&app, &b).await.0, StatusCode::OK);
    // Signing out again, or without a cookie, is not an error.
    assert_eq!(logout(&app, Some(&a), &[]).await.0, StatusCode::NO_CONTENT);
    assert_eq!(logout(&app, None, &[]).await.0, StatusCode::NO_CONTENT);
    app.shutdown().await;
}

/// A session ends after 12 h unused (each use restarts that count) and 7 days after it began.
#[tokio::test]
async fn a_console_session_expires() {
    use chrono::Duration;
    let clock = sextant_core::ManualClock::new(
        chrono::DateTime::parse_from_rfc3339("2026-12-01T10:00:00Z")
            .unwrap()
            .to_utc(),
    );
    let dir = tempfile::tempdir().unwrap();
    let running = sextant::start_with_clock(
        crate::support::loopback(dir.path()),
        std::sync::Arc::new(clock.clone()),
    )
    .await
    .expect("sextant starts");
    let app = TestApp::running_in(running, dir, false);
    let (_, idle) = bootstrap(&app, "{}", &[]).await;
    let (_, used) = bootstrap(&app, "{}", &[]).await;
    let (idle, used) = (idle.expect("a cookie"), used.expect("a cookie"));
    clock.advance(Duration::hours(11));
    assert_eq!(inbox_with_cookie(&app, &used, &[]).await, StatusCode::OK);
    clock.advance(Duration::hours(2));
    assert_eq!(
        inbox_with_cookie(&app, &idle, &[]).await,
        StatusCode::UNAUTHORIZED,
        "13 h unused"
    );
    assert_eq!(
        session_status(&app, &idle).await,
        (StatusCode::UNAUTHORIZED, json!("session_ended"))
    );
    assert_eq!(
        inbox_with_cookie(&app, &used, &[]).await,
        StatusCode::OK,
        "used 2 h ago"
    );
    // Used every 11 h, it still ends 7 days after it began.
    // 13 h in; 14 more uses take it to 167 h, the next step past 168 h.
    for _ in 0..14 {
        clock.advance(Duration::hours(11));
        assert_eq!(inbox_with_cookie(&app, &used, &[]).await, StatusCode::OK);
    }
    clock.advance(Duration::hours(11));
    assert_eq!(
        inbox_with_cookie(&app, &used, &[]).await,
        StatusCode::UNAUTHORIZED,
        "over 7 days old"
    );
    // The page signs in again (its dead cookie does not stand in the way).
    let (status, fresh) = bootstrap(
        &app,
        "{}",
        &[("cookie", &format!("sextant_console={used}"))],
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        inbox_with_cookie(&app, &fresh.expect("a cookie"), &[]).await,
        StatusCode::OK
    );
    app.shutdown().await;
}
