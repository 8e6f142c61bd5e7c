-- Live tasks get their own, small index.
--
-- `tasks_by_state (state, state_at)` served no query well (the start-up scan for unfinished
-- tasks uses NOT IN, a caller's running tasks are found through the caller) and moved every
-- task between state ranges on each state change. The partial index holds only tasks that have
-- not ended, keyed by caller: the unfinished tasks at start-up and a remote caller's running
-- tasks (its concurrency cap) read it, and a task leaves it once, when it ends.

DROP INDEX tasks_by_state;

CREATE INDEX tasks_live ON tasks(caller, created_at)
    WHERE state NOT IN ('TASK_STATE_COMPLETED', 'TASK_STATE_FAILED',
                        'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED');
