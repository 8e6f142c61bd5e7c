-- The assistants that rewrote a plan after it was made: a JSON array of their principal keys
-- (`Principal::key()`), each once, in the order they first did. An assistant that changed a
-- plan's prompt or Agent wrote what its Runs ask for, so the runtime counts it, like the
-- assistant that made the plan (`source_principal`), as the raiser of those Runs' cards: it
-- never answers them (`sextant_runtime::interactions`, "own request"). Never shrinks: a Run
-- replayed later asks for an earlier prompt, which may be that assistant's words.
ALTER TABLE schedules ADD COLUMN editors TEXT NOT NULL DEFAULT '[]';
