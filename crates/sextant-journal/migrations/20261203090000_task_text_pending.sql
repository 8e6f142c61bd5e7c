-- Task text waiting to go into the full-text index (`task_text`). The writer appends an
-- event's text here in the event's transaction (one page, at the table's end) and moves what
-- has gathered into `task_text` in one go: after enough of it, when the writer has been idle a
-- moment, before a text search reads, and at start-up. FTS5 makes a new index segment for
-- every transaction that inserts into it (five to nine pages of the commit), which had become
-- the largest part of a lone request's commit; gathered, many tasks share one segment.
-- Searches ask the writer to move the waiting text first, so they never miss any.
CREATE TABLE task_text_pending (
    task_id TEXT NOT NULL,
    body    TEXT NOT NULL
);
