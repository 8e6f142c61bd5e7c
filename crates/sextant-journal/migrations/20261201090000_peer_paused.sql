-- A peer the person paused by hand: refused for calls and left out of orchestration until
-- resumed, keeping its pin, token and metrics (removing it would lose them, and a card change,
-- the only other way to stop using a peer, is not the person's to make). `paused_at` is when
-- it was paused; NULL while it is not.

ALTER TABLE peers ADD COLUMN paused_at TEXT;
