//! The web console: the built UI (`ui/dist`, embedded at compile time by `build.rs`) served at
//! `/`, with a strict Content-Security-Policy and the single-page-app fallback.
//!
//! - Files of the build are served by path (`/assets/*` are content-hashed: cached for a year,
//!   `immutable`). Text files go brotli- or gzip-compressed when the browser accepts it (the
//!   copies are made by `build.rs`), with `Vary: Accept-Encoding`.
//! - The console's client-side routes (`/`, `/inbox`, `/tasks`, `/tasks/{id}`, `/schedules`,
//!   `/schedules/{id}`, `/peers`, `/webhooks`, `/sessions/{id}`) answer `index.html`; `/sessions/{id}` is the console
//!   link Sextant puts in results, so it must work as a deep link. Other paths answer
//!   `index.html` with 404 (the page shows "not found").
//! - Only `GET`/`HEAD`, and never under `/api/` or `/.well-known/`: those keep the JSON 404.
//! - Built without the UI (no node on the build machine), every page is a short HTML note
//!   saying how to build it.
//!
//! The page's data path is the REST API on the same origin; see `console` for how it gets
//! the owner's credential.

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

/// One embedded file of the built UI.
pub struct UiAsset {
    /// Relative to `ui/dist`, with `/` (e.g. `assets/index-3f2a.js`).
    pub path: &'static str,
    pub bytes: &'static [u8],
    /// The file brotli- and gzip-compressed, for text files worth it.
    pub br: Option<&'static [u8]>,
    pub gzip: Option<&'static [u8]>,
}

/// The encodings a request accepts (`Accept-Encoding`, q=0 refusing), best first of those a
/// file has: brotli, then gzip, else none.
fn pick_encoding(headers: &HeaderMap, a: &UiAsset) -> Option<(&'static str, &'static [u8])> {
    let accepts = |name: &str| {
        headers
            .get_all(header::ACCEPT_ENCODING)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .any(|item| {
                let mut parts = item.split(';').map(str::trim);
                let coding = parts.next().unwrap_or("");
                let q = parts
                    .find_map(|p| p.strip_prefix("q="))
                    .and_then(|q| q.trim().parse::<f32>().ok())
                    .unwrap_or(1.0);
                (coding.eq_ignore_ascii_case(name) || coding == "*") && q > 0.0
            })
    };
    match (a.br, a.gzip) {
        (Some(br), _) if accepts("br") => Some(("br", br)),
        (_, Some(gz)) if accepts("gzip") => Some(("gzip", gz)),
        _ => None,
    }
}

/// The built UI, empty when it was not built before `cargo build`.
pub static ASSETS: &[UiAsset] = include!(concat!(env!("OUT_DIR"), "/ui_assets.rs"));

/// The policy of every UI response: only this origin's scripts, styles, images and API;
/// no inline script, no framing, no plugins.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
    img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; \
    base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const NOT_BUILT: &str = "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<title>Sextant: UI not built</title></head><body>\
<h1>Sextant is running, but its web UI was not built</h1>\
<p>This binary was compiled without <code>ui/dist</code>. Build the UI, then the binary:</p>\
<pre>npm --prefix ui ci\nnpm --prefix ui run build\ncargo build -p sextant</pre>\
<p>The API works meanwhile: see <code>/api/v1/health</code>.</p></body></html>\n";

fn asset<'a>(assets: &'a [UiAsset], path: &str) -> Option<&'a UiAsset> {
    assets.iter().find(|a| a.path == path)
}

fn content_type(path: &str) -> &'static str {
    let ext = path.rsplit_once('.').map_or("", |(_, e)| e);
    match ext {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "json" | "map" => "application/json",
        "webmanifest" => "application/manifest+json",
        "woff2" => "font/woff2",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// Whether `path` is one of the console's client-side routes.
fn is_ui_route(path: &str) -> bool {
    let mut segs = path.trim_start_matches('/').split('/');
    let first = segs.next().unwrap_or("");
    let rest: Vec<&str> = segs.collect();
    let id_ok = |id: &str| {
        !id.is_empty()
            && id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
    };
    match (first, rest.as_slice()) {
        ("" | "inbox" | "tasks" | "schedules" | "peers" | "webhooks", [] | [""]) => true,
        ("tasks" | "schedules" | "sessions", [id] | [id, ""]) => id_ok(id),
        _ => false,
    }
}

/// Adds the UI's security headers.
fn secure(mut resp: Response) -> Response {
    let h = resp.headers_mut();
    let set = |h: &mut HeaderMap, k: &'static str, v: &'static str| {
        h.insert(k, HeaderValue::from_static(v));
    };
    set(h, "content-security-policy", CSP);
    set(h, "x-frame-options", "DENY");
    set(h, "referrer-policy", "no-referrer");
    set(h, "cross-origin-opener-policy", "same-origin");
    set(h, "cross-origin-resource-policy", "same-origin");
    set(
        h,
        "permissions-policy",
        "camera=(), microphone=(), geolocation=(), usb=(), payment=()",
    );
    resp
}

fn page(
    status: StatusCode,
    bytes: &'static [u8],
    ctype: &'static str,
    cache: &'static str,
) -> Response {
    let mut resp = (status, Body::from(bytes)).into_response();
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(ctype));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    secure(resp)
}

/// A file of the build, compressed when the browser accepts it.
fn file(
    status: StatusCode,
    a: &'static UiAsset,
    headers: &HeaderMap,
    ctype: &'static str,
    cache: &'static str,
) -> Response {
    let encoded = pick_encoding(headers, a);
    let mut resp = page(status, encoded.map_or(a.bytes, |(_, b)| b), ctype, cache);
    let h = resp.headers_mut();
    if a.br.is_some() || a.gzip.is_some() {
        h.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
    }
    if let Some((coding, _)) = encoded {
        h.insert(header::CONTENT_ENCODING, HeaderValue::from_static(coding));
    }
    resp
}

fn index(assets: &'static [UiAsset], status: StatusCode, headers: &HeaderMap) -> Response {
    match asset(assets, "index.html") {
        Some(a) => file(status, a, headers, "text/html; charset=utf-8", "no-cache"),
        None => page(
            status,
            NOT_BUILT.as_bytes(),
            "text/html; charset=utf-8",
            "no-store",
        ),
    }
}

/// The router's fallback: the UI for `GET`/`HEAD` outside `/api/` and `/.well-known/`, the
/// JSON 404 for everything else.
pub async fn fallback(method: Method, uri: Uri, headers: HeaderMap) -> Response {
    serve(ASSETS, &method, uri.path(), &headers)
}

fn serve(assets: &'static [UiAsset], method: &Method, path: &str, headers: &HeaderMap) -> Response {
    let api = path == "/api" || path.starts_with("/api/") || path.starts_with("/.well-known/");
    if api || (method != Method::GET && method != Method::HEAD) {
        return ApiError::NotFound("no such route".into()).into_response();
    }
    if let Some(a) = path.strip_prefix('/').and_then(|p| asset(assets, p)) {
        if a.path == "index.html" {
            return index(assets, StatusCode::OK, headers);
        }
        let cache = if a.path.starts_with("assets/") {
            "public, max-age=31536000, immutable"
        } else {
            "no-cache"
        };
        return file(StatusCode::OK, a, headers, content_type(a.path), cache);
    }
    if is_ui_route(path) {
        index(assets, StatusCode::OK, headers)
    } else {
        index(assets, StatusCode::NOT_FOUND, headers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_routes_are_recognised() {
        for ok in [
            "/",
            "/inbox",
            "/tasks",
            "/tasks/",
            "/tasks/0193abcd-1234",
            "/schedules",
            "/schedules/01a2",
            "/peers",
            "/webhooks",
            "/sessions/0193-aa_b.c",
        ] {
            assert!(is_ui_route(ok), "{ok}");
        }
        for bad in [
            "/nope",
            "/inbox/x",
            "/tasks/a/b",
            "/sessions/",
            "/sessions",
            "/sessions/a%20b",
            "/favicon.ico",
        ] {
            assert!(!is_ui_route(bad), "{bad}");
        }
    }

    static BUILT: &[UiAsset] = &[
        UiAsset {
            path: "index.html",
            bytes: b"<div id=app></div>",
            br: Some(b"BR-INDEX"),
            gzip: Some(b"GZ-INDEX"),
        },
        UiAsset {
            path: "assets/index-abc.js",
            bytes: b"console.log(1)",
            br: Some(b"BR-JS"),
            gzip: Some(b"GZ-JS"),
        },
        UiAsset {
            path: "favicon.svg",
            bytes: b"<svg/>",
            br: None,
            gzip: None,
        },
    ];

    fn get(assets: &'static [UiAsset], path: &str) -> Response {
        serve(assets, &Method::GET, path, &HeaderMap::new())
    }

    fn get_with(path: &str, accept: &str) -> Response {
        let mut h = HeaderMap::new();
        h.insert(header::ACCEPT_ENCODING, accept.parse().unwrap());
        serve(BUILT, &Method::GET, path, &h)
    }

    async fn body(r: Response) -> Vec<u8> {
        axum::body::to_bytes(r.into_body(), 1 << 20)
            .await
            .unwrap()
            .to_vec()
    }

    #[tokio::test]
    async fn files_go_compressed_as_the_browser_accepts() {
        let r = get_with("/assets/index-abc.js", "gzip, deflate, br, zstd");
        assert_eq!(header(&r, "content-encoding"), "br");
        assert_eq!(header(&r, "vary"), "accept-encoding");
        assert!(header(&r, "cache-control").contains("immutable"));
        assert_eq!(body(r).await, b"BR-JS");
        let r = get_with("/assets/index-abc.js", "gzip");
        assert_eq!(header(&r, "content-encoding"), "gzip");
        assert_eq!(body(r).await, b"GZ-JS");
        // q=0 refuses an encoding; nothing accepted is the file itself.
        let r = get_with("/", "br;q=0, gzip;q=0.5");
        assert_eq!(header(&r, "content-encoding"), "gzip");
        assert_eq!(body(r).await, b"GZ-INDEX");
        let r = get_with("/inbox", "identity");
        assert_eq!(header(&r, "content-encoding"), "");
        assert_eq!(header(&r, "vary"), "accept-encoding");
        assert_eq!(body(r).await, b"<div id=app></div>");
        let r = get_with("/assets/index-abc.js", "*");
        assert_eq!(header(&r, "content-encoding"), "br");
        // A file without compressed copies is sent as it is, without Vary.
        let r = get_with("/favicon.svg", "br");
        assert_eq!(header(&r, "content-encoding"), "");
        assert_eq!(header(&r, "vary"), "");
        assert_eq!(header(&r, "content-security-policy"), CSP);
    }

    fn header<'a>(r: &'a Response, k: &str) -> &'a str {
        r.headers()
            .get(k)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    #[test]
    fn routes_get_the_page_and_files_get_their_type_and_cache() {
        for path in ["/", "/inbox", "/sessions/0193-ab", "/index.html"] {
            let r = get(BUILT, path);
            assert_eq!(r.status(), StatusCode::OK, "{path}");
            assert_eq!(header(&r, "content-type"), "text/html; charset=utf-8");
            assert_eq!(header(&r, "cache-control"), "no-cache");
            assert_eq!(header(&r, "content-security-policy"), CSP);
            assert_eq!(header(&r, "x-frame-options"), "DENY");
        }
        let js = get(BUILT, "/assets/index-abc.js");
        assert_eq!(
            header(&js, "content-type"),
            "text/javascript; charset=utf-8"
        );
        assert!(header(&js, "cache-control").contains("immutable"));
        assert_eq!(
            header(&get(BUILT, "/favicon.svg"), "cache-control"),
            "no-cache"
        );
        assert_eq!(get(BUILT, "/no/such/page").status(), StatusCode::NOT_FOUND);
        assert_eq!(
            header(&get(BUILT, "/no/such/page"), "content-type"),
            "text/html; charset=utf-8"
        );
    }

    #[test]
    fn the_api_and_other_methods_keep_the_json_404() {
        for path in [
            "/api/v1/nope",
            "/api",
            "/.well-known/nope",
            "/api/v1/assets/index-abc.js",
        ] {
            let r = get(BUILT, path);
            assert_eq!(r.status(), StatusCode::NOT_FOUND, "{path}");
            assert_eq!(header(&r, "content-type"), "application/json");
        }
        let post = serve(BUILT, &Method::POST, "/inbox", &HeaderMap::new());
        assert_eq!(post.status(), StatusCode::NOT_FOUND);
        assert_eq!(header(&post, "content-type"), "application/json");
    }

    #[test]
    fn without_a_built_ui_every_page_says_how_to_build_it() {
        let r = get(&[], "/sessions/x");
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(header(&r, "content-security-policy"), CSP);
        assert_eq!(
            header(&get(&[], "/assets/index-abc.js"), "cache-control"),
            "no-store"
        );
        assert!(NOT_BUILT.contains("npm --prefix ui run build"));
    }

    #[test]
    fn types_by_extension() {
        assert_eq!(
            content_type("assets/index-1.js"),
            "text/javascript; charset=utf-8"
        );
        assert_eq!(
            content_type("assets/index-1.css"),
            "text/css; charset=utf-8"
        );
        assert_eq!(content_type("favicon.svg"), "image/svg+xml");
        assert_eq!(content_type("x"), "application/octet-stream");
    }

    #[test]
    fn the_csp_allows_no_inline_script_and_only_this_origin() {
        assert!(CSP.contains("default-src 'self'"));
        assert!(CSP.contains("connect-src 'self'"));
        assert!(!CSP.contains("unsafe-inline"));
        assert!(!CSP.contains('*'));
    }
}
