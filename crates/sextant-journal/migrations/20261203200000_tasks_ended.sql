-- Every caller's ended tasks, newest first: with `tasks_live` (the unfinished ones), the
-- console's task lists with no caller (`GET /api/v1/tasks`: the Overview's recent tasks, the
-- Tasks page) read a page's rows instead of the journal.
--
-- Until now no index had that order without a caller in front, so each such page read every
-- task and sorted them all (`SCAN tasks` + `USE TEMP B-TREE FOR ORDER BY`): 50 ms for six
-- tasks of 86,000, growing with the journal, and the console reads its Overview again after
-- every burst of task changes. `queries::tasks::page_sql` now merges the newest unfinished
-- tasks (a few, from `tasks_live`) with a walk down this index that stops after the page.
--
-- Partial, on ended tasks only: a task enters it once, when it ends (its `state_at` is then
-- the newest, so the entry goes at the index's edge), and never moves again. An index of
-- every task would move each task's entry at every state change: 10–15 % more journal CPU
-- per task in `bench_journal`, against 5 % for this one.
--
-- Its condition is `queries::ended_task!`, term for term (comparisons, not `IN`: see
-- `live_task!`).
CREATE INDEX tasks_ended ON tasks(state_at DESC, task_id DESC)
    WHERE state = 'TASK_STATE_COMPLETED' OR state = 'TASK_STATE_FAILED'
       OR state = 'TASK_STATE_CANCELED' OR state = 'TASK_STATE_REJECTED';
