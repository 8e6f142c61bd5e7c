-- A task's events are read through its Session's primary key, not a second index.
--
-- `events_task (task_id, seq)` was written on every append, one more B-tree insert (and one more
-- page per commit) for every event, only to serve reads of one task's events. Those events are
-- all in the task's Session, from the task's first event on, so `tasks.first_seq` (fixed when
-- the task is created, like its other identity columns) and `tasks.last_seq` bound a range scan
-- of `events (session_id, seq)` instead. The backfill runs while the old index still makes it
-- cheap.

ALTER TABLE tasks ADD COLUMN first_seq INTEGER NOT NULL DEFAULT 0;

UPDATE tasks SET first_seq = COALESCE(
    (SELECT MIN(seq) FROM events WHERE events.task_id = tasks.task_id), 0);

DROP INDEX events_task;
