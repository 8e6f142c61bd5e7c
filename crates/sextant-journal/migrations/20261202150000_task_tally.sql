-- What a task or Session list costs must not grow with the caller's history (#21). ListTasks answers
-- `totalSize` (the count before pagination) on every call; counting it meant walking every one
-- of the caller's tasks, and the page itself filtered the caller's index by Agent row by row.
--
-- `task_tally` keeps the number of tasks per (caller, Agent, state), maintained by triggers on
-- `tasks` in the same transaction as the change, so it is exact whatever writes the table
-- (the writer, a rebuild, a retention delete). A count whose filter is only caller, Agent and
-- state (or a set of states) sums a handful of its rows (`queries::tasks::list`).
CREATE TABLE task_tally (
    caller   TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    state    TEXT NOT NULL,
    n        INTEGER NOT NULL,
    PRIMARY KEY (caller, agent_id, state)
) WITHOUT ROWID;

INSERT INTO task_tally (caller, agent_id, state, n)
SELECT caller, agent_id, state, COUNT(*) FROM tasks GROUP BY caller, agent_id, state;

CREATE TRIGGER task_tally_insert AFTER INSERT ON tasks
BEGIN
    INSERT INTO task_tally (caller, agent_id, state, n) VALUES (NEW.caller, NEW.agent_id, NEW.state, 1)
    ON CONFLICT (caller, agent_id, state) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER task_tally_update AFTER UPDATE OF caller, agent_id, state ON tasks
WHEN OLD.state IS NOT NEW.state OR OLD.caller IS NOT NEW.caller OR OLD.agent_id IS NOT NEW.agent_id
BEGIN
    UPDATE task_tally SET n = n - 1
    WHERE caller = OLD.caller AND agent_id = OLD.agent_id AND state = OLD.state;
    INSERT INTO task_tally (caller, agent_id, state, n) VALUES (NEW.caller, NEW.agent_id, NEW.state, 1)
    ON CONFLICT (caller, agent_id, state) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER task_tally_delete AFTER DELETE ON tasks
BEGIN
    UPDATE task_tally SET n = n - 1
    WHERE caller = OLD.caller AND agent_id = OLD.agent_id AND state = OLD.state;
END;

-- The caller's list is always one Agent's (A2A's ListTasks is per Agent): an index that
-- starts with both answers its page in order without reading rows of other Agents. It
-- replaces `tasks_by_caller`, whose only reader this was.
DROP INDEX IF EXISTS tasks_by_caller;
CREATE INDEX tasks_by_caller_agent ON tasks(caller, agent_id, state_at DESC, task_id DESC);

-- ListTasks' `contextId` filter: without it, the filter walked the caller's whole history.
CREATE INDEX tasks_by_context ON tasks(context_id);

-- The Sessions page's total, likewise: Sessions per caller, kept by triggers.
CREATE TABLE session_tally (
    caller TEXT PRIMARY KEY,
    n      INTEGER NOT NULL
) WITHOUT ROWID;

INSERT INTO session_tally (caller, n) SELECT caller, COUNT(*) FROM sessions GROUP BY caller;

CREATE TRIGGER session_tally_insert AFTER INSERT ON sessions
BEGIN
    INSERT INTO session_tally (caller, n) VALUES (NEW.caller, 1)
    ON CONFLICT (caller) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER session_tally_delete AFTER DELETE ON sessions
BEGIN
    UPDATE session_tally SET n = n - 1 WHERE caller = OLD.caller;
END;
