-- A Session's tasks are found through its `task_created` events.
--
-- `tasks_by_session (session_id)` was one more B-tree written by every admission (measured with
-- examples/bench_journal: about a sixth of the writer's time per task) for one rare read, the
-- tasks of one Session; those are named by the Session's `task_created` events, which the
-- events primary key already finds. No statement deletes or re-keys a Session, so no foreign
-- key check needs the index either.

DROP INDEX tasks_by_session;
