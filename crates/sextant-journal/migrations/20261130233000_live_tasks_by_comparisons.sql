-- `tasks_live` keeps its rows and changes how its condition is written.
--
-- SQLite evaluates a partial index's condition for every row the statement inserts or updates,
-- for both the old row and the new one. `state NOT IN (<four values>)` compiles to an ephemeral
-- table built from the list each time. That table has its own pager and page cache, which are
-- allocated and then freed again. Measured with examples/bench_journal, the update of a task's
-- cached state spent most of its time on this, about a fifth of the writer's time per task.
-- Four comparisons say the same and cost nothing. The queries that read the index repeat them
-- (`live_task!` in queries/mod.rs).

DROP INDEX tasks_live;

CREATE INDEX tasks_live ON tasks(caller, created_at)
    WHERE state <> 'TASK_STATE_COMPLETED' AND state <> 'TASK_STATE_FAILED'
      AND state <> 'TASK_STATE_CANCELED' AND state <> 'TASK_STATE_REJECTED';
