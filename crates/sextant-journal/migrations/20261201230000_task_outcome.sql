-- What happened to each ended task, in the console's words: `completed`, `failed`, `canceled`,
-- `rejected`, `declined` (a person said no) or `expired` (nobody answered in time and the
-- engine's default applied). The A2A state alone cannot say it: a shell command declined
-- completes, and one canceled by its "No, and stop this task" fails.
--
-- A cache, like `state`: the writer sets it when the task ends, from the task's last answer
-- or output (`sextant_journal::queries::tasks::outcome`), and `Journal::rebuild_check`
-- recomputes it from the events. NULL while the task runs.

ALTER TABLE tasks ADD COLUMN outcome TEXT;

UPDATE tasks SET outcome = CASE
    WHEN state = 'TASK_STATE_CANCELED' THEN 'canceled'
    WHEN state = 'TASK_STATE_REJECTED' THEN 'rejected'
    ELSE (SELECT CASE
            WHEN e.kind <> 'interaction_answered' THEN NULL
            WHEN json_extract(e.body, '$.answer.expired') THEN 'expired'
            WHEN json_extract(e.body, '$.answer.option') = 'cancel' THEN 'canceled'
            WHEN json_extract(e.body, '$.answer.option') = 'decline' THEN 'declined'
          END
          FROM events e
          WHERE e.session_id = tasks.session_id AND e.seq >= tasks.first_seq
            AND e.task_id = tasks.task_id
            AND e.kind IN ('interaction_answered', 'artifact', 'reply')
          ORDER BY e.seq DESC LIMIT 1)
  END
WHERE state IN ('TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED',
                'TASK_STATE_REJECTED');

UPDATE tasks SET outcome = CASE state WHEN 'TASK_STATE_COMPLETED' THEN 'completed' ELSE 'failed' END
WHERE outcome IS NULL AND state IN ('TASK_STATE_COMPLETED', 'TASK_STATE_FAILED');
