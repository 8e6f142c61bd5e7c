//! The A2A wire, as Sextant speaks it: the JSON-RPC envelope ([`rpc`]), error codes with their
//! `google.rpc.ErrorInfo` details ([`error`]), the method table with the pre-1.0 aliases
//! ([`method`]), `A2A-Version` handling ([`version`]) and the 0.3 JSON conversions
//! ([`compat`]). Message and task types are the official `a2a-lf` crate's (re-exported by
//! `sextant-core` as `a2a`).
//!
//! Everything above is pure serde/JSON: no HTTP, no I/O. The axum layer in `sextant-server` uses
//! it. [`client`] is the outbound side: a reqwest-based A2A 1.0 client behind the network guard,
//! with card validation and pinning (no axum, no tauri). [`signing`] signs Agent Cards and
//! checks their signatures (JWS over the RFC 8785 canonical card, A2A 1.0 §8.4). [`trace`]
//! parses and sends W3C `traceparent` and links Sextant's trace spans (README "Traces").
//! [`sse`] reads Server-Sent Events streams (the client's, and the desktop shell's).

pub mod client;
pub mod compat;
pub mod error;
pub mod method;
pub mod rpc;
pub mod signing;
pub mod sse;
pub mod trace;
pub mod version;

pub use error::RpcError;
pub use method::Method;
pub use rpc::RpcRequest;
