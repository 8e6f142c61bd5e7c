//! What the files in and around the A2A service agree on without importing it: the surfaces
//! it is served on and their URL prefixes, and which `A2A-Version` a request names. The
//! bindings, cards and the perimeter read these here, so that none of them reaches back into
//! the service (`scripts/import-cycles.py`); this module imports nothing of the crate.

use axum::http::HeaderMap;

/// Where the assistant capability routes live (the URL of every peer
/// `sextant_access::assistant_peers` issues).
pub const ASSISTANT_PREFIX: &str = sextant_access::assistant_peers::ROUTE_PREFIX;

/// The gRPC service's path prefix (its full name, as gRPC routes it).
pub const GRPC_PATH_PREFIX: &str = "/lf.a2a.v1.A2AService/";

/// Which A2A surface a call came in on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RpcSurface {
    /// `/api/v1/agents/{agent_id}/…`.
    Public,
    /// `/api/v1/assistant-a2a/agents/{agent_id}/…` (assistant capability tokens).
    Assistant,
}

impl RpcSurface {
    /// Where this surface serves `agent_id`: the HTTP+JSON binding's base URL path, to which
    /// the JSON-RPC endpoint adds `/a2a`.
    pub fn agent_path(self, agent_id: &str) -> String {
        match self {
            RpcSurface::Public => format!("/api/v1/agents/{agent_id}"),
            RpcSurface::Assistant => format!("{ASSISTANT_PREFIX}/{agent_id}"),
        }
    }
}

/// The `A2A-Version` a request names: its header, else its query parameter (A2A 1.0 lets a
/// client send it either way).
pub fn version_param(headers: &HeaderMap, query: Option<&str>) -> Option<String> {
    // A header that is not ASCII (a fullwidth `１.0`) is a version too, and not one served:
    // reading it as absent would serve it as 1.0. Two headers name no one version: they are
    // joined (`1.0, 9.9`), which no version is, so the request is refused like any unserved
    // version rather than served as whichever came first.
    let values: Vec<String> = headers
        .get_all("a2a-version")
        .iter()
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        .collect();
    let header = (!values.is_empty()).then(|| values.join(", "));
    header.or_else(|| {
        query.and_then(|q| {
            q.split('&').find_map(|kv| {
                let (k, v) = kv.split_once('=')?;
                k.eq_ignore_ascii_case("a2a-version").then(|| v.to_string())
            })
        })
    })
}
