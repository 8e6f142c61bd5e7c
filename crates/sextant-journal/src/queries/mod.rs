//! SQL, one module per table. Row mapping lives next to its query; every function takes a
//! plain `&Connection` so the writer's transactions and the read pool share them.

pub mod agents;
pub mod events;
pub mod inputs;
pub mod interactions;
pub mod peers;
pub mod runs;
pub mod schedules;
pub mod security;
pub mod sessions;
pub mod tasks;
