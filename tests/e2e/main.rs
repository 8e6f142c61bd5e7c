//! Sextant end-to-end tests: one integration binary (`cargo test -p sextant-tests`), one
//! module per topic. Every test starts its own Sextant on a temp data dir and 127.0.0.1:0,
//! talks to it over HTTP like a real client, and shuts it down cleanly.

// Test helpers outside #[test] functions may unwrap: a panic is the failure report here.
#![allow(clippy::unwrap_used)]

mod secure;
mod support;

mod adversarial;
mod answer_rule;
mod approvals;
mod assistant;
mod auth_matrix;
mod backup;
mod cancel;
mod cards;
mod chains;
mod connections;
mod console;
mod dialects;
mod errors;
mod extended_cards;
mod extractors;
mod grpc;
mod http_json;
mod kill9;
mod legacy;
mod list_tasks;
mod long_tasks;
mod mcp;
mod parts;
mod peers;
mod perimeter;
mod permissions;
mod push;
mod restart;
mod retention;
mod schedule_grants;
mod schedules;
mod scoping;
mod send;
mod sessions_api;
mod signed_cards;
mod steer;
mod streams;
mod traces;
mod wire;
