//! Who may reach Sextant and what is kept of it, without HTTP: the parts of access control
//! the `sextant` CLI uses as much as the server does.
//!
//! - [`tokens`]: per-peer (`sxp_…`) and assistant (`sxa_…`) tokens: minting, hashing, names,
//!   and issuing one into the journal.
//! - [`assistant_peers`]: an assistant's peers (the owner's Agents it may call) and their
//!   per-Agent credentials, issued on demand, and the Hermes `a2a_agents:` block.
//! - [`settings`]: the `security.toml` format (`[jwt]`, `[limits]`, `[perimeter]`,
//!   `[redaction]`, `[audit]`, `[retention]`) and its checks.
//! - [`audit`]: the append-only audit log (`audit.jsonl`), its writer thread and rotation.
//!
//! Not here: the services built from the settings (JWT verification, rate limits, the
//! perimeter) and the HTTP routes over these, in `sextant-server` (`security`, `auth/`,
//! `api/credentials.rs`, `api/audit.rs`); whether a principal may call an Agent, decided by
//! `sextant-runtime` (`Runtime::check_access`) because admission enforces it.

pub mod assistant_peers;
pub mod audit;
pub mod settings;
pub mod tokens;
