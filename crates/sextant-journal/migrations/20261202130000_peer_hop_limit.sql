-- When a peer last refused a call because of its A2A-Hop limit (an HTTP 403 whose error
-- names A2A-Hop, as Sextant's own perimeter answers), so the Peers page can warn that calls
-- relayed through this console reach the peer's limit. NULL: never refused for that.

ALTER TABLE peers ADD COLUMN hop_limited_at TEXT;
