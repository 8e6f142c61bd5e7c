-- sextant: foreign_keys off
--
-- `sessions` and `tasks` keep their rows in their primary key's B-tree (WITHOUT ROWID).
--
-- Both are found by a text id. As rowid tables each was two B-trees: the rows by rowid and an
-- automatic index from the id to the rowid. Every new Session and every new task inserted into
-- both, and every commit wrote a page of each. Keyed by the id, a row is written once. Updates
-- of the cached columns change the row in place as before; no statement reads a rowid.
--
-- SQLite cannot change a table to WITHOUT ROWID, so each is rebuilt: a copy under a new name,
-- the old table dropped, the copy renamed. `events`, `tasks`, `inputs` and `interactions`
-- reference these tables by name, so dropping one would break those references mid-way: the
-- migrator runs this migration with foreign keys off and checks them all before it commits
-- (`migrate.rs`).

CREATE TABLE sessions_rebuilt (
    session_id  TEXT PRIMARY KEY,
    agent_id    TEXT NOT NULL REFERENCES agents(agent_id),
    caller      TEXT NOT NULL,          -- Principal::key() of the principal that started it
    caller_kind TEXT NOT NULL,
    context_id  TEXT NOT NULL,
    origin      TEXT NOT NULL,          -- 'a2a', 'schedule', 'outbound', ...
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    last_seq    INTEGER NOT NULL DEFAULT 0,
    UNIQUE (caller, agent_id, context_id)
) WITHOUT ROWID;

INSERT INTO sessions_rebuilt (session_id, agent_id, caller, caller_kind, context_id, origin,
                              created_at, updated_at, last_seq)
    SELECT session_id, agent_id, caller, caller_kind, context_id, origin,
           created_at, updated_at, last_seq
    FROM sessions;

DROP TABLE sessions;
ALTER TABLE sessions_rebuilt RENAME TO sessions;

CREATE INDEX sessions_updated ON sessions(updated_at DESC, session_id DESC);
CREATE INDEX sessions_outbound ON sessions(caller, updated_at DESC) WHERE origin = 'outbound';

CREATE TABLE tasks_rebuilt (
    task_id      TEXT PRIMARY KEY,
    session_id   TEXT NOT NULL REFERENCES sessions(session_id),
    caller       TEXT NOT NULL,
    agent_id     TEXT NOT NULL,
    context_id   TEXT NOT NULL,
    message_id   TEXT NOT NULL,         -- the messageId of the input that created the task
    content_hash TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    state        TEXT NOT NULL,         -- cache: projection of events
    state_at     TEXT NOT NULL,         -- cache
    last_seq     INTEGER NOT NULL,      -- cache
    first_seq    INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

INSERT INTO tasks_rebuilt (task_id, session_id, caller, agent_id, context_id, message_id,
                           content_hash, created_at, state, state_at, last_seq, first_seq)
    SELECT task_id, session_id, caller, agent_id, context_id, message_id,
           content_hash, created_at, state, state_at, last_seq, first_seq
    FROM tasks;

DROP TABLE tasks;
ALTER TABLE tasks_rebuilt RENAME TO tasks;

CREATE INDEX tasks_by_caller ON tasks(caller, state_at DESC, task_id DESC);
CREATE INDEX tasks_live ON tasks(caller, created_at)
    WHERE state <> 'TASK_STATE_COMPLETED' AND state <> 'TASK_STATE_FAILED'
      AND state <> 'TASK_STATE_CANCELED' AND state <> 'TASK_STATE_REJECTED';
