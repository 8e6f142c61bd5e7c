-- Retention (#17): whole Sessions can be deleted, by the retention job only.
--
-- `events` stays append-only for everything else. The trigger that refused every DELETE is
-- replaced by one that lets a row go only while `retention_marker` names that row's Session.
-- Only `retention::delete_session` writes the marker: it inserts it, deletes the Session's
-- rows and deletes the marker again, all inside one transaction of the journal's writer. So
-- no committed state ever holds a marker row (a failure rolls the insert back with the rest),
-- no other connection can see one, and an ordinary `DELETE FROM events` is refused exactly as
-- before. UPDATE stays refused without exception: retention never rewrites an event.
--
-- Why a marker row and not a connection setting: a trigger can only see the database, and a
-- row in the same transaction is the one thing that is visible to it and to nobody else.

CREATE TABLE retention_marker (
    one        INTEGER PRIMARY KEY CHECK (one = 1),
    session_id TEXT NOT NULL
);

DROP TRIGGER events_append_only_delete;
CREATE TRIGGER events_append_only_delete BEFORE DELETE ON events
WHEN NOT EXISTS (SELECT 1 FROM retention_marker WHERE session_id = OLD.session_id)
BEGIN
    SELECT RAISE(ABORT, 'journal events are append-only');
END;
