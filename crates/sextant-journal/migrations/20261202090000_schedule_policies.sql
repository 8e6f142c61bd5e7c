-- What the best schedulers do: overlap policy, jitter, pause after consecutive failures,
-- one-shot plans, the assistant a plan was made by; and for Runs, catch-up and backfill
-- triggers, the overlap decision, and how a Run ended (its outcome and a result snippet).

-- skip | buffer_one | buffer_all | allow_all | cancel_previous
ALTER TABLE schedules ADD COLUMN overlap_policy TEXT NOT NULL DEFAULT 'skip';
-- Each slot fires up to this many seconds late, by an amount fixed per (schedule, slot).
ALTER TABLE schedules ADD COLUMN jitter_secs INTEGER NOT NULL DEFAULT 0;
-- Disable the plan after this many consecutive failed Runs (NULL: never).
ALTER TABLE schedules ADD COLUMN pause_after_failures INTEGER;
-- Failed Runs since the last successful one (or since the plan was last enabled).
ALTER TABLE schedules ADD COLUMN consecutive_failures INTEGER NOT NULL DEFAULT 0;
-- Why the scheduler disabled the plan, and when (cleared when it is enabled again).
ALTER TABLE schedules ADD COLUMN paused_reason TEXT;
ALTER TABLE schedules ADD COLUMN paused_at TEXT;
-- One-shot plans: the local wall-clock time (in `timezone`) of their one Run; `cron` is ''.
ALTER TABLE schedules ADD COLUMN once_at TEXT;
-- The assistant principal (JSON) that made the plan for its owner, when `source` is
-- 'assistant': its current access is checked too, on enable and at every firing.
ALTER TABLE schedules ADD COLUMN source_principal TEXT;
-- When the loop handles the cursor: `next_fire_at` plus the slot's jitter.
ALTER TABLE schedules ADD COLUMN due_at TEXT;
UPDATE schedules SET due_at = next_fire_at;
DROP INDEX schedules_due;
CREATE INDEX schedules_due ON schedules(due_at) WHERE enabled = 1;

-- The overlap policy that decided a Run (a backfill's own), and the jitter it fired with.
ALTER TABLE runs ADD COLUMN overlap_policy TEXT;
ALTER TABLE runs ADD COLUMN jitter_secs INTEGER;
-- Once the Run has ended: succeeded | failed | canceled, a snippet of its result, and when
-- the scheduler recorded it (a cache of the task's end in the journal, rebuilt at start-up).
ALTER TABLE runs ADD COLUMN outcome TEXT;
ALTER TABLE runs ADD COLUMN result TEXT;
ALTER TABLE runs ADD COLUMN settled_at TEXT;

-- A catch-up Run takes its slot like a cron Run: one of either per (schedule, slot).
DROP INDEX runs_cron_slot;
CREATE UNIQUE INDEX runs_cron_slot ON runs(schedule_id, scheduled_for)
    WHERE trigger IN ('cron', 'catchup');
CREATE UNIQUE INDEX runs_backfill_slot ON runs(schedule_id, scheduled_for)
    WHERE trigger = 'backfill';
CREATE INDEX runs_waiting ON runs(schedule_id, scheduled_for, created_at)
    WHERE record = 'buffered';
CREATE INDEX runs_unsettled ON runs(created_at)
    WHERE settled_at IS NULL AND record IN ('started', 'failed', 'blocked');
CREATE INDEX runs_by_task ON runs(task_id) WHERE task_id IS NOT NULL;
