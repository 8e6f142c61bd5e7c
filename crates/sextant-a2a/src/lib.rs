//! The A2A wire, as Sextant speaks it: the JSON-RPC envelope ([`rpc`]), error codes with their
//! `google.rpc.ErrorInfo` details ([`error`]), the method table with the pre-1.0 aliases
//! ([`method`]), `A2A-Version` handling ([`version`]), the 0.3 JSON conversions
//! ([`compat`]) and ProtoJSON's enums and field spellings ([`protojson`]). Message and task
//! types are the official `a2a-lf` crate's (re-exported by `sextant-core` as `a2a`).
//!
//! Everything here is the wire, with no HTTP client and no network I/O: the axum layer in
//! `sextant-server` uses it inbound, `sextant-peers` (the outbound A2A client) outbound.
//! [`signing`] signs Agent Cards and checks their signatures (JWS over the RFC 8785 canonical
//! card, A2A 1.0 §8.4). [`trace`] parses and sends W3C `traceparent` and links Sextant's trace
//! spans (README "Traces"). [`sse`] reads Server-Sent Events streams (the outbound client's,
//! and the desktop shell's).

pub mod compat;
pub mod error;
pub mod method;
pub mod protojson;
pub mod rpc;
pub mod signing;
pub mod sse;
pub mod trace;
pub mod version;

pub use error::RpcError;
pub use method::Method;
pub use rpc::RpcRequest;
