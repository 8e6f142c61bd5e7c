//! Sextant's outbound side: calling other agents over A2A.
//!
//! - [`client`]: a reqwest-based A2A 1.0 client behind the network guard, with card validation
//!   and pinning (no axum, no tauri). The wire it speaks (SSE, trace context, card signatures)
//!   is `sextant-a2a`'s.

pub mod client;
