-- Interactions: a cache of the interaction_raised / interaction_answered events, for the
-- approvals inbox (pending across all Sessions) and for refusing a second answer inside the
-- same transaction that would record it.

CREATE TABLE interactions (
    interaction_id TEXT PRIMARY KEY,
    task_id        TEXT NOT NULL REFERENCES tasks(task_id),
    session_id     TEXT NOT NULL REFERENCES sessions(session_id),
    state          TEXT NOT NULL,      -- 'pending' | 'answered' | 'expired'
    raised_at      TEXT NOT NULL,
    raised_seq     INTEGER NOT NULL,
    expires_at     TEXT,
    answered_seq   INTEGER,
    body           TEXT NOT NULL       -- the Interaction as JSON (engine routing data included)
);
CREATE INDEX interactions_by_state ON interactions(state, raised_at DESC);
CREATE INDEX interactions_by_task ON interactions(task_id);
