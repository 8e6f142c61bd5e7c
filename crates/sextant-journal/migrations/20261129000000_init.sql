-- The Session journal and the tables it needs.
--
-- `events` is the authority: append-only, ordered by (session_id, seq). `tasks.state`,
-- `tasks.state_at` and `tasks.last_seq` are a cache of the projection of `events`, kept for
-- listing and filtering; `Journal::rebuild_check` recomputes them from `events`.

CREATE TABLE agents (
    agent_id    TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    description TEXT NOT NULL,
    engine      TEXT NOT NULL,
    spec        TEXT NOT NULL,          -- the AgentSpec as JSON
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);

CREATE TABLE sessions (
    session_id  TEXT PRIMARY KEY,
    agent_id    TEXT NOT NULL REFERENCES agents(agent_id),
    caller      TEXT NOT NULL,          -- Principal::key() of the principal that started it
    caller_kind TEXT NOT NULL,
    context_id  TEXT NOT NULL,
    origin      TEXT NOT NULL,          -- 'a2a', 'schedule', ...
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    last_seq    INTEGER NOT NULL DEFAULT 0,
    UNIQUE (caller, agent_id, context_id)
);
CREATE INDEX sessions_updated ON sessions(updated_at DESC, session_id DESC);

CREATE TABLE events (
    session_id TEXT NOT NULL REFERENCES sessions(session_id),
    seq        INTEGER NOT NULL,
    task_id    TEXT,
    at         TEXT NOT NULL,
    kind       TEXT NOT NULL,
    body       TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
CREATE INDEX events_task ON events(task_id, seq);

CREATE TRIGGER events_append_only_update BEFORE UPDATE ON events
BEGIN
    SELECT RAISE(ABORT, 'journal events are append-only');
END;
CREATE TRIGGER events_append_only_delete BEFORE DELETE ON events
BEGIN
    SELECT RAISE(ABORT, 'journal events are append-only');
END;

CREATE TABLE tasks (
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
    last_seq     INTEGER NOT NULL       -- cache
);
CREATE INDEX tasks_by_caller ON tasks(caller, state_at DESC, task_id DESC);
CREATE INDEX tasks_by_state ON tasks(state, state_at DESC);
CREATE INDEX tasks_by_session ON tasks(session_id);

-- Every accepted input, for idempotency on (caller, agent, input key): an identical retry
-- finds its task here, a different message under the same key is refused. The key is the
-- messageId (unique per message for agents that do not deduplicate messageIds).
CREATE TABLE inputs (
    caller       TEXT NOT NULL,
    agent_id     TEXT NOT NULL,
    input_key    TEXT NOT NULL,
    task_id      TEXT NOT NULL REFERENCES tasks(task_id),
    content_hash TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    PRIMARY KEY (caller, agent_id, input_key)
) WITHOUT ROWID;
