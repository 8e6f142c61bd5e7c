-- Outbound peers: remote A2A agents registered for outbound calls.
--
-- A peer's bearer token is NOT stored here: it lives in `peer-tokens.json` (mode 0600) in the
-- data dir, and the API never returns it. `pinned_parts` holds the card's supportedInterfaces,
-- securitySchemes and skills exactly as received, and `pinned_hash` the SHA-256 of their
-- RFC 8785 canonical JSON. When a fetched card no longer matches, `disabled` records why (JSON:
-- old and new hash, what changed, when) and the peer is refused until the person re-pins it.
-- The metric columns are counters updated after every call.
--
-- Outbound conversations reuse sessions / tasks / events: each peer (or direct URL) has a row in
-- `agents` (engine 'peer', agent_id 'peer:<name>' or 'url:<url>'), and each conversation is a
-- Session with origin 'outbound', the calling principal as caller and the remote contextId as
-- context_id. Each exchange is one task.

CREATE TABLE peers (
    name                  TEXT PRIMARY KEY,
    url                   TEXT NOT NULL,
    timeout_secs          INTEGER NOT NULL,
    capabilities          TEXT NOT NULL,      -- JSON array of strings
    allowed_skills        TEXT NOT NULL,      -- JSON array of skill ids; empty = all
    allow_private_network INTEGER NOT NULL,
    pinned_hash           TEXT,
    pinned_parts          TEXT,               -- JSON
    pinned_at             TEXT,
    disabled              TEXT,               -- JSON; NULL while enabled
    calls                 INTEGER NOT NULL DEFAULT 0,
    failures              INTEGER NOT NULL DEFAULT 0,
    latency_ms_total      INTEGER NOT NULL DEFAULT 0,
    last_latency_ms       INTEGER,
    last_call_at          TEXT,
    last_error            TEXT,
    created_at            TEXT NOT NULL,
    updated_at            TEXT NOT NULL
);

CREATE INDEX sessions_outbound ON sessions(caller, updated_at DESC) WHERE origin = 'outbound';
