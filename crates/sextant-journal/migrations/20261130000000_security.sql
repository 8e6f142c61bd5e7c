-- Identity and access: per-peer and assistant tokens (stored hashed), the owner's revocations
-- (per-Agent deny lists, formerly in memory only), and instance settings (the workspace id).

-- A bearer credential Sextant issued. Only the SHA-256 of the token is kept: tokens are 256-bit
-- random strings, so a fast hash cannot be brute-forced and no salt or slow KDF is needed.
CREATE TABLE credentials (
    credential_id TEXT PRIMARY KEY,       -- public id (lists, revocation)
    kind          TEXT NOT NULL CHECK (kind IN ('peer', 'assistant')),
    name          TEXT NOT NULL,          -- peer name / assistant name (the principal's subject)
    token_hash    TEXT NOT NULL UNIQUE,   -- hex SHA-256 of the whole token
    workspace     TEXT,                   -- assistant: the workspace it is scoped to
    agent_id      TEXT,                   -- assistant: the one Agent it may reach
    owner         TEXT NOT NULL,          -- principal key of the owner it was issued by / acts for
    created_at    TEXT NOT NULL,
    revoked_at    TEXT
);
-- One active credential per (kind, name); a revoked name can be issued again (rotation).
CREATE UNIQUE INDEX credentials_active_name ON credentials(kind, name) WHERE revoked_at IS NULL;

-- The owner's revocations: principal keys (or access patterns) denied one Agent.
CREATE TABLE agent_denials (
    agent_id  TEXT NOT NULL,
    principal TEXT NOT NULL,
    at        TEXT NOT NULL,
    PRIMARY KEY (agent_id, principal)
) WITHOUT ROWID;

CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
