-- Push notifications: the webhook configs callers register for their tasks, and the outbox.
--
-- `push_outbox` is written by the journal writer in the same transaction as the event it
-- covers: every event a config covers (the task's first event for a config given with the
-- message, every later status, artifact or message event) gets one row per config. A row is
-- deleted once its webhook answered 2xx, so what is left is exactly what was not delivered:
-- at least once, in order per config (the delivery worker takes the lowest delivery_id of a
-- config first), across restarts.
--
-- `push_configs` keeps the config and its delivery health. `secrets` is the config's token and
-- authentication, sealed with a key in the data dir (`push.key`, 0600), so a copied journal
-- carries no webhook credential. `pending` counts the config's outbox rows; `next_attempt_at`
-- is when its first pending row is due (backoff); `failing_at` is set when it stopped after
-- too many failures, until its owner re-enables it. `attempts` counts the failed attempts of
-- the first pending row.

CREATE TABLE push_configs (
    task_id           TEXT NOT NULL REFERENCES tasks(task_id),
    config_id         TEXT NOT NULL,
    caller            TEXT NOT NULL,          -- the task's caller: the config's owner
    url               TEXT NOT NULL,
    secrets           TEXT NOT NULL,          -- sealed JSON {token, authentication}
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL,
    pending           INTEGER NOT NULL DEFAULT 0,
    delivered         INTEGER NOT NULL DEFAULT 0,
    attempts          INTEGER NOT NULL DEFAULT 0,
    next_attempt_at   TEXT,
    last_attempt_at   TEXT,
    last_delivered_at TEXT,
    last_error        TEXT,
    last_error_at     TEXT,
    failing_at        TEXT,
    PRIMARY KEY (task_id, config_id)
) WITHOUT ROWID;

-- What the delivery worker looks for: configs with something to deliver, not stopped, by when.
CREATE INDEX push_configs_due ON push_configs(next_attempt_at)
    WHERE pending > 0 AND failing_at IS NULL;
-- The console's list of every webhook, newest first.
CREATE INDEX push_configs_by_time ON push_configs(created_at DESC);

CREATE TABLE push_outbox (
    delivery_id INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id     TEXT NOT NULL,
    config_id   TEXT NOT NULL,
    session_id  TEXT NOT NULL,
    seq         INTEGER NOT NULL,             -- the event: (session_id, seq)
    created_at  TEXT NOT NULL
);
CREATE INDEX push_outbox_by_config ON push_outbox(task_id, config_id, delivery_id);
