-- Signed peer cards: the key a peer's card was signed with is pinned with the card.
--
-- `pinned_key` (JSON: kid, alg, RFC 7638 thumbprint, the public JWK, which canonical reading
-- verified) is set when the pinned card carried a valid signature, and NULL for an unsigned
-- card; the pin hash itself is unchanged by signatures. A later card signed by another key,
-- not signed any more, or whose signature fails disables the peer as a changed card does.
-- `card_jwks` (JSON) is a key set the person gave for the peer at registration; without it
-- the keys are read from the card's origin at `/.well-known/jwks.json` (never from a `jku`).

ALTER TABLE peers ADD COLUMN pinned_key TEXT;
ALTER TABLE peers ADD COLUMN card_jwks TEXT;
