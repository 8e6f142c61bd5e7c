//! Who is calling. The principal is resolved from the request's credentials (and, for the
//! anonymous caller, its peer address) only: before the body is read, never from its content.
//! It is handed to handlers as a [`Principal`] extension, with the [`Credential`] it came from.
//!
//! | credential | principal |
//! |---|---|
//! | `Authorization: Bearer <owner token>` (`sextant token`) | Person |
//! | the cookie of a live console session (see `console`) | Person |
//! | `Bearer sxp_…` (an active per-peer token) | Peer |
//! | `Bearer sxa_…` (an active assistant token; assistant routes only) | Assistant |
//! | `Bearer <JWT>` verified per `[jwt]` (see `jwt`) | Delegated (with `act`) or Service |
//! | none, from a loopback peer, in loopback-only mode | AnonymousLocal |
//!
//! Anything else is 401 with `WWW-Authenticate: Bearer` (the reason is logged and audited, not
//! shown); so is a console cookie whose session has ended, even from loopback. Two
//! `Authorization` headers are 400. Issued tokens are looked up on every request, so a
//! revocation takes effect on the next one.
//!
//! Surfaces: the general routes refuse assistant tokens (a capability token is not a general
//! API credential); the assistant A2A routes take only an assistant's per-Agent credentials
//! (a token issued for that one Agent); the agents MCP bridge takes the console owner, the
//! anonymous loopback caller and assistant tokens of both kinds; the personal schedules API
//! takes what the general routes take plus an assistant's workspace token (it manages the
//! owner's plans for them).
//!
//! After authentication, the per-identity rate limit (`ratelimit`) is applied: 429 with
//! `Retry-After`. Every refusal here comes before the body is read, and is sent through
//! `drain::refused` so a keep-alive client's next request still works.
//!
//! The room: [`perimeter`] (what every request passes before this), [`jwt`] (JWT verification),
//! [`ratelimit`] (the per-identity limits), [`console`] (the console page's session cookie) and
//! [`drain`] (refusals that keep a keep-alive connection usable).

pub mod console;
pub mod drain;
pub mod jwt;
pub mod local;
pub mod perimeter;
pub mod ratelimit;

use std::net::SocketAddr;

use axum::Json;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use sextant_core::{Principal, PrincipalKind, Rights};

use crate::AppState;
use crate::error::ApiError;
use local::anonymous_local;
use sextant_access::tokens::{is_issued_shape, token_hash};

/// Compares two secrets in time independent of where they differ.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Which credentials a group of routes takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    /// Everything but the two assistant surfaces.
    General,
    /// `/api/v1/assistant-a2a/agents/{agent_id}/…`: assistant tokens only.
    AssistantA2a,
    /// `/api/v1/assistant-mcp`: the owner, the anonymous loopback caller, assistant tokens.
    Mcp,
    /// `/api/v1/me/schedules…`: the general credentials, plus an assistant's workspace token.
    Schedules,
}

/// How the principal of a request was authenticated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    /// The owner token.
    OwnerToken,
    /// The console page's session cookie.
    ConsoleCookie,
    /// A token Sextant issued, by its stored hash (re-checked by long-lived streams).
    Issued { hash: String },
    /// A verified JWT.
    Jwt,
    /// None: the anonymous loopback caller.
    None,
}

/// What an assistant token grants, resolved from Sextant's records on every request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssistantGrant {
    /// The token's name (the assistant principal's subject).
    pub name: String,
    /// The workspace it is scoped to (always this Sextant's, or it was refused).
    pub workspace: String,
    /// The one Agent it may reach; `None` for the assistant's workspace token, which reaches
    /// the MCP bridge and the schedules API for every Agent the assistant may call.
    pub agent_id: Option<String>,
    /// The principal key of the owner it acts for.
    pub owner: String,
    /// The id of the assistant's workspace token (its own, or the one a per-Agent credential
    /// was issued under).
    pub assistant_credential: String,
}

impl AssistantGrant {
    /// The owner this assistant acts for (whose plans it manages), if that owner is the
    /// console's person.
    pub fn owner_principal(&self) -> Option<Principal> {
        (self.owner == Principal::person().key()).then(Principal::person)
    }

    /// Whether this is the assistant's workspace token (not a per-Agent credential).
    pub fn is_workspace_token(&self) -> bool {
        self.agent_id.is_none()
    }

    /// Whether it reaches `agent_id` (a workspace token reaches any; the Agent's access list
    /// still decides).
    pub fn reaches(&self, agent_id: &str) -> bool {
        self.agent_id.as_deref().is_none_or(|a| a == agent_id)
    }
}

/// A refused request: the status, what the caller is told, and the reason that is logged.
struct Refusal {
    status: StatusCode,
    message: String,
    reason: String,
}

fn unauthorized(message: impl Into<String>, reason: impl Into<String>) -> Refusal {
    Refusal {
        status: StatusCode::UNAUTHORIZED,
        message: message.into(),
        reason: reason.into(),
    }
}

/// The one bearer token of a request: `Ok(None)` without an `Authorization` header.
fn bearer(headers: &HeaderMap) -> Result<Option<String>, Refusal> {
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    let Some(value) = values.next() else {
        return Ok(None);
    };
    if values.next().is_some() {
        return Err(Refusal {
            status: StatusCode::BAD_REQUEST,
            message: "send exactly one Authorization header".into(),
            reason: "several Authorization headers".into(),
        });
    }
    let value = value
        .to_str()
        .map_err(|_| unauthorized("the Authorization header is not valid", "malformed_header"))?;
    let mut parts = value.split_whitespace();
    match (parts.next(), parts.next(), parts.next()) {
        (Some(scheme), Some(token), None) if scheme.eq_ignore_ascii_case("bearer") => {
            Ok(Some(token.to_string()))
        }
        _ => Err(unauthorized(
            "use Authorization: Bearer <token>",
            "malformed_header",
        )),
    }
}

/// Resolves the principal of a request on `surface`.
async fn authenticate(
    app: &AppState,
    headers: &HeaderMap,
    peer: Option<SocketAddr>,
    surface: Surface,
) -> Result<(Principal, Credential, Option<AssistantGrant>), Refusal> {
    let token = bearer(headers)?;
    let Some(token) = token else {
        // The web console's page: its same-origin session cookie (see `console`).
        if surface != Surface::AssistantA2a {
            if let Some(p) = crate::auth::console::console_cookie_principal(app, headers) {
                return Ok((p, Credential::ConsoleCookie, None));
            }
            // A console cookie that no longer works (signed out, expired, from an earlier
            // start) is a credential that failed: 401, so the page signs in again, rather
            // than quietly becoming the anonymous caller.
            if crate::auth::console::sends_cookie(app, headers) {
                return Err(unauthorized(
                    "this browser's console sign-in has ended; sign in again",
                    "console_session_ended",
                ));
            }
        }
        if surface != Surface::AssistantA2a && anonymous_local(app, peer) {
            return Ok((Principal::anonymous_local(), Credential::None, None));
        }
        let message = match surface {
            Surface::AssistantA2a => "this route takes an assistant capability token",
            _ if app.security.exposure.loopback_only => {
                "a bearer token is required from beyond this machine \
                 (the owner's: `sextant token`; a peer's: `sextant peer-token create NAME`)"
            }
            _ => "a bearer token is required (Sextant is reachable beyond loopback)",
        };
        return Err(unauthorized(message, "no_credential"));
    };
    if same_secret(token.as_bytes(), app.config.token.as_bytes()) {
        return match surface {
            Surface::AssistantA2a => Err(unauthorized(
                "this route takes an assistant capability token, not the owner token",
                "owner_token_on_assistant_route",
            )),
            _ => Ok((Principal::person(), Credential::OwnerToken, None)),
        };
    }
    if is_issued_shape(&token) {
        let hash = token_hash(&token);
        let cred = app
            .runtime
            .journal()
            .credential_by_hash(&hash)
            .await
            .map_err(|e| {
                tracing::error!(error = %e, "credential lookup failed");
                Refusal {
                    status: StatusCode::SERVICE_UNAVAILABLE,
                    message: "credentials cannot be checked right now".into(),
                    reason: "credential lookup failed".into(),
                }
            })?;
        let Some(cred) = cred else {
            return Err(unauthorized(
                "the bearer token is not valid here",
                "unknown_credential",
            ));
        };
        if cred.revoked_at.is_some() {
            return Err(unauthorized(
                "the bearer token is not valid here",
                format!("revoked {} token {:?}", cred.kind, cred.name),
            ));
        }
        let credential = Credential::Issued { hash };
        let general = matches!(surface, Surface::General | Surface::Schedules);
        return match (cred.kind.as_str(), surface) {
            ("peer", _) if general => Ok((Principal::peer(&cred.name), credential, None)),
            ("peer", _) => Err(unauthorized(
                "a peer token is not valid on the assistant routes",
                "peer_token_on_assistant_route",
            )),
            ("assistant", Surface::General) => Err(unauthorized(
                "an assistant capability token is valid only on \
                 /api/v1/assistant-a2a/agents/{agent_id}/, /api/v1/assistant-mcp and \
                 /api/v1/me/schedules",
                format!("assistant token {:?} used on a general route", cred.name),
            )),
            ("assistant", _) => {
                let workspace = cred.workspace.unwrap_or_default();
                if workspace != app.security.workspace {
                    return Err(unauthorized(
                        "the bearer token is not valid here",
                        format!("assistant token {:?} of another workspace", cred.name),
                    ));
                }
                let grant = AssistantGrant {
                    name: cred.name.clone(),
                    workspace: workspace.clone(),
                    agent_id: cred.agent_id.map(String::from),
                    owner: cred.owner.into(),
                    assistant_credential: cred.parent_id.unwrap_or(cred.credential_id),
                };
                match (surface, grant.is_workspace_token()) {
                    (Surface::AssistantA2a, true) => Err(unauthorized(
                        "an assistant's workspace token does not call an Agent directly; ask \
                         for that Agent's peer credential (the MCP tool issue_agent_peers, or \
                         `sextant assistant-token peers NAME`)",
                        format!(
                            "workspace token of assistant {:?} on an A2A route",
                            cred.name
                        ),
                    )),
                    (Surface::Schedules, false) => Err(unauthorized(
                        "this credential reaches one Agent's A2A surface; the schedules API \
                         takes the assistant's workspace token",
                        format!(
                            "per-Agent token of assistant {:?} on the schedules API",
                            cred.name
                        ),
                    )),
                    _ => Ok((
                        Principal::assistant(workspace, cred.name),
                        credential,
                        Some(grant),
                    )),
                }
            }
            _ => Err(unauthorized(
                "the bearer token is not valid here",
                "unknown credential kind",
            )),
        };
    }
    if let Some(jwt) = &app.security.jwt {
        return match jwt.verify(&token) {
            Ok(p) if matches!(surface, Surface::General | Surface::Schedules) => {
                Ok((p, Credential::Jwt, None))
            }
            Ok(p) => Err(unauthorized(
                "a JWT is not valid on the assistant routes",
                format!("JWT of {} on an assistant route", p.key()),
            )),
            Err(why) => Err(unauthorized(
                "the bearer token is not valid here",
                format!("JWT refused: {why}"),
            )),
        };
    }
    Err(unauthorized(
        "the bearer token is not valid here",
        "unknown_credential",
    ))
}

/// The 429 answer.
fn too_many(wait: std::time::Duration) -> Response {
    let secs = crate::auth::ratelimit::retry_after_secs(wait);
    let mut resp = (
        StatusCode::TOO_MANY_REQUESTS,
        Json(json!({ "error": {
            "code": "rate_limited",
            "message": format!("too many requests from this caller; retry in {secs} s"),
        }})),
    )
        .into_response();
    if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
        resp.headers_mut().insert(header::RETRY_AFTER, v);
    }
    resp
}

async fn run(app: AppState, mut req: Request, next: Next, surface: Surface) -> Response {
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0);
    let route = req.uri().path().to_string();
    let (principal, credential, grant) =
        match authenticate(&app, req.headers(), peer, surface).await {
            Ok(r) => r,
            Err(r) => {
                tracing::debug!(?peer, route, reason = %r.reason, "request refused");
                crate::audited::request_refused(&app, None, r.reason, &route, peer);
                let resp = match r.status {
                    StatusCode::UNAUTHORIZED => ApiError::Unauthorized(r.message).into_response(),
                    StatusCode::BAD_REQUEST => ApiError::BadRequest(r.message).into_response(),
                    _ => ApiError::Internal(r.message).into_response(),
                };
                return crate::auth::drain::refused(req, resp).await;
            }
        };
    if let Err(wait) = app.security.rate.check(&principal) {
        tracing::debug!(principal = %principal.key(), route, "rate limited");
        crate::audited::request_refused(&app, Some(&principal), "rate limited", &route, peer);
        return crate::auth::drain::refused(req, too_many(wait)).await;
    }
    let ext = req.extensions_mut();
    ext.insert(principal);
    ext.insert(credential);
    if let Some(g) = grant {
        ext.insert(g);
    }
    next.run(req).await
}

/// Resolves the principal on the general routes, or answers 401 / 429.
pub async fn resolve(State(app): State<AppState>, req: Request, next: Next) -> Response {
    run(app, req, next, Surface::General).await
}

/// On the public routes (cards, health): no credential is needed, but one that is sent must
/// be valid here (an assistant token, for one, is refused as everywhere but its own routes).
pub async fn optional(State(app): State<AppState>, req: Request, next: Next) -> Response {
    if req.headers().contains_key(header::AUTHORIZATION) {
        run(app, req, next, Surface::General).await
    } else {
        next.run(req).await
    }
}

/// Resolves the principal on the assistant A2A routes (assistant tokens only).
pub async fn resolve_assistant(State(app): State<AppState>, req: Request, next: Next) -> Response {
    run(app, req, next, Surface::AssistantA2a).await
}

/// Resolves the principal on the agents MCP bridge.
pub async fn resolve_mcp(State(app): State<AppState>, req: Request, next: Next) -> Response {
    run(app, req, next, Surface::Mcp).await
}

/// Resolves the principal on the personal schedules API (an assistant's workspace token is
/// welcome there: it manages its owner's plans).
pub async fn resolve_schedules(State(app): State<AppState>, req: Request, next: Next) -> Response {
    run(app, req, next, Surface::Schedules).await
}

/// Whether what authorised a long-lived response (a stream) still holds: the issued token is
/// still active, and the principal may still read `agent_id`. Streams re-check this
/// periodically, so no decision outlives a revocation.
pub async fn still_valid(
    app: &AppState,
    principal: &Principal,
    credential: &Credential,
    agent_id: &str,
) -> bool {
    if let Credential::Issued { hash } = credential {
        match app.runtime.journal().credential_by_hash(hash).await {
            Ok(Some(c)) if c.revoked_at.is_none() => {}
            _ => return false,
        }
    }
    principal.kind == PrincipalKind::Person
        || app
            .runtime
            .authorize(principal, agent_id, Rights::Read)
            .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_compare_exactly() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abc", b"abd"));
        assert!(!same_secret(b"abc", b"abcd"));
    }

    #[test]
    fn bearer_headers_parse_strictly() {
        let h = |vals: &[&str]| {
            let mut m = HeaderMap::new();
            for v in vals {
                m.append(header::AUTHORIZATION, v.parse().unwrap());
            }
            m
        };
        assert_eq!(bearer(&h(&[])).ok().flatten(), None);
        assert_eq!(
            bearer(&h(&["Bearer abc"])).ok().flatten().as_deref(),
            Some("abc")
        );
        assert_eq!(
            bearer(&h(&["bearer  abc "])).ok().flatten().as_deref(),
            Some("abc")
        );
        assert!(bearer(&h(&["Basic abc"])).is_err());
        assert!(bearer(&h(&["Bearer a b"])).is_err());
        assert!(bearer(&h(&["Bearer"])).is_err());
        let two = bearer(&h(&["Bearer a", "Bearer b"])).err().unwrap();
        assert_eq!(two.status, StatusCode::BAD_REQUEST);
    }
}
