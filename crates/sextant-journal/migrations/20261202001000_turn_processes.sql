-- The process group each running turn's command lives in (exec, shell and Codex engines), so
-- that a Sextant killed with kill -9 can end what its turns left running at the next start,
-- before it marks those turns failed. A row is written once the process is spawned and
-- deleted when the turn's process ends; rows still here at start-up belong to a Sextant that
-- did not stop cleanly.
--
-- `leader_start` is the leader's start time (clock ticks since boot, /proc/PID/stat field 22)
-- and `boot_id` the kernel's boot id: together with the pgid they identify the group, so a
-- group id reused by an unrelated process after a reboot, or after the group emptied, is
-- never signalled.

CREATE TABLE turn_processes (
    process_id   INTEGER PRIMARY KEY,
    pgid         INTEGER NOT NULL,
    leader_start INTEGER NOT NULL,
    boot_id      TEXT NOT NULL,
    session_id   TEXT NOT NULL,
    task_id      TEXT NOT NULL,
    started_at   TEXT NOT NULL
);
