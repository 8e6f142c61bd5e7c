-- Personal schedules and their Runs.
--
-- A schedule belongs to its creator (a principal key) and always executes as that principal.
-- `next_fire_at` is the scheduler's cursor: the next cron slot it has not handled yet. Claiming
-- a slot moves the cursor with a compare-and-set and inserts the Run in the same transaction;
-- the partial unique index on (schedule_id, scheduled_for) for cron Runs is the last word when
-- two processes share one data dir.
--
-- A Run keeps a snapshot of the prompt and Agent it used. Once started it links to its Session
-- and task; its status from then on is the task's state in the journal, not a copy.

CREATE TABLE schedules (
    schedule_id           TEXT PRIMARY KEY,
    creator               TEXT NOT NULL,     -- Principal::key() of the creator
    creator_kind          TEXT NOT NULL,
    creator_principal     TEXT NOT NULL,     -- the Principal as JSON: Runs execute as it
    name                  TEXT NOT NULL,
    prompt                TEXT NOT NULL,
    cron                  TEXT NOT NULL,
    timezone              TEXT NOT NULL,     -- IANA zone name
    agent_id              TEXT NOT NULL,
    enabled               INTEGER NOT NULL,
    missed_run_policy     TEXT NOT NULL,     -- 'skip' | 'run_once'
    missed_run_grace_secs INTEGER NOT NULL,
    source                TEXT NOT NULL,     -- 'console' | 'api' | 'assistant'
    created_at            TEXT NOT NULL,
    updated_at            TEXT NOT NULL,
    next_fire_at          TEXT               -- NULL when disabled (or the expression never fires)
);
CREATE INDEX schedules_by_creator ON schedules(creator, created_at DESC, schedule_id DESC);
CREATE INDEX schedules_due ON schedules(next_fire_at) WHERE enabled = 1;

CREATE TABLE runs (
    run_id        TEXT PRIMARY KEY,
    schedule_id   TEXT NOT NULL REFERENCES schedules(schedule_id) ON DELETE CASCADE,
    trigger       TEXT NOT NULL,             -- 'cron' | 'manual' | 'replay'
    scheduled_for TEXT NOT NULL,             -- the cron slot, or when run-now / replay was asked
    prompt        TEXT NOT NULL,             -- snapshot
    agent_id      TEXT NOT NULL,             -- snapshot
    executed_as   TEXT NOT NULL,             -- Principal::key() the Run runs as
    record        TEXT NOT NULL,             -- 'pending' | 'started' | 'blocked' | 'missed' | 'failed'
    reason        TEXT,                      -- why blocked / missed / failed, or a note (late run)
    session_id    TEXT,
    task_id       TEXT,
    replay_of     TEXT,
    created_at    TEXT NOT NULL,
    started_at    TEXT,
    finished_at   TEXT                       -- for Runs that never started; started Runs use their task
);
CREATE UNIQUE INDEX runs_cron_slot ON runs(schedule_id, scheduled_for) WHERE trigger = 'cron';
CREATE INDEX runs_by_schedule ON runs(schedule_id, created_at DESC, run_id DESC);
CREATE INDEX runs_pending ON runs(created_at) WHERE record = 'pending';
CREATE INDEX runs_by_session ON runs(session_id) WHERE session_id IS NOT NULL;
