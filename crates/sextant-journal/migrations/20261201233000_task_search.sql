-- Full-text search over what tasks said and were told (SQLite FTS5): one row per journal event
-- that carries text (inputs, outputs, status messages, the decisions asked and the reasons
-- answered), with its task. Like every cache it can be rebuilt from `events`
-- (`queries::search::rebuild`); the writer adds each event's row in the event's transaction.
--
-- `task_text_state.built` is 0 until the index holds the whole journal: `Journal::open` then
-- builds it (in Rust, with the same text extraction the writer uses) before it writes anything.

CREATE VIRTUAL TABLE task_text USING fts5(
    body,
    task_id UNINDEXED,
    tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TABLE task_text_state (built INTEGER NOT NULL);
INSERT INTO task_text_state (built) VALUES (0);
