-- Schedule-scoped approvals ("Always allow for this schedule"): the person approved this
-- exact action (its grant key, which names the action's digest) for every later Run of one
-- schedule. Each grant is bound to the fingerprint of the schedule's prompt and Agent when it
-- was given (`sextant_core::schedule::grant_fingerprint`): it applies only while the schedule
-- and the Run still have that fingerprint, and it is voided (kept, for the record) as soon as
-- the schedule's prompt or Agent is changed. Revoking deletes it.

CREATE TABLE schedule_grants (
    grant_id       TEXT PRIMARY KEY,
    schedule_id    TEXT NOT NULL REFERENCES schedules(schedule_id) ON DELETE CASCADE,
    grant_key      TEXT NOT NULL,     -- the interaction's grant key, e.g. `shell:sha256:…`
    digest         TEXT NOT NULL,     -- the approved action's digest
    action         TEXT NOT NULL,     -- the ApprovedAction as JSON (exact, digest, shown, flags)
    fingerprint    TEXT NOT NULL,     -- of the prompt and Agent it was given under
    granted_by     TEXT NOT NULL,     -- Principal::display() of who answered
    granted_at     TEXT NOT NULL,
    run_id         TEXT,              -- the Run whose card it was given on
    task_id        TEXT NOT NULL,
    interaction_id TEXT NOT NULL,
    voided_at      TEXT,              -- when the schedule's prompt or Agent changed
    void_reason    TEXT
);
CREATE UNIQUE INDEX schedule_grants_by_key ON schedule_grants(schedule_id, grant_key);
