-- An assistant's view of the owner's Agents as A2A peers: a credential per target Agent,
-- issued on demand under the assistant's workspace token (credentials.agent_id IS NULL), and
-- listed and revoked by the owner. Each one is the same principal as its assistant
-- (`assistant:WORKSPACE:NAME`) and reaches that one Agent only. Every lookup also reads the
-- parent token, so revoking the assistant revokes them all at once.
CREATE TABLE assistant_peer_credentials (
    credential_id TEXT PRIMARY KEY,
    parent_id     TEXT NOT NULL REFERENCES credentials(credential_id),
    agent_id      TEXT NOT NULL,
    token_hash    TEXT NOT NULL UNIQUE,   -- hex SHA-256 of the whole token
    created_at    TEXT NOT NULL,
    revoked_at    TEXT
);
-- One active credential per (assistant, Agent): issuing again rotates it.
CREATE UNIQUE INDEX assistant_peer_active ON assistant_peer_credentials(parent_id, agent_id)
    WHERE revoked_at IS NULL;
