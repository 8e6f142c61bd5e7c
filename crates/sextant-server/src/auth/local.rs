//! Who the anonymous loopback caller is, in one place: the credential check (`auth`) and the
//! console's loopback sign-in (`auth::console`) both ask this, and neither asks the other.

use std::net::SocketAddr;

use crate::AppState;

/// Whether a request from `peer` that carries no credential is the anonymous loopback caller:
/// in loopback-only mode (`security::Exposure`: bound to loopback, no public URL beyond it,
/// `[perimeter] anonymous_local` on) and from a loopback peer. Decided here only, so the
/// console's loopback sign-in (`super::console`) can never be more generous than this.
pub(crate) fn anonymous_local(app: &AppState, peer: Option<SocketAddr>) -> bool {
    app.security.exposure.loopback_only && peer.is_some_and(|a| a.ip().is_loopback())
}
