//! SQL, one module per table. Row mapping lives next to its query; every function takes a
//! plain `&Connection` so the writer's transactions and the read pool share them.

/// The condition of the partial index `tasks_live`: the task has not ended. A query must repeat
/// it term for term for the planner to use the index, hence one macro that the `const`
/// statements `concat!`. Comparisons, not `NOT IN (...)`: SQLite evaluates an index condition
/// on every insert and update of a row, and a list of more than two values costs an ephemeral
/// table (its own pager and page cache, built and freed) each time.
macro_rules! live_task {
    () => {
        "state <> 'TASK_STATE_COMPLETED' AND state <> 'TASK_STATE_FAILED' \
         AND state <> 'TASK_STATE_CANCELED' AND state <> 'TASK_STATE_REJECTED'"
    };
}

pub mod agents;
pub mod events;
pub mod grants;
pub mod inputs;
pub mod interactions;
pub mod peers;
pub mod processes;
pub mod push;
pub mod runs;
pub mod schedules;
pub mod search;
pub mod security;
pub mod sessions;
pub mod tasks;
