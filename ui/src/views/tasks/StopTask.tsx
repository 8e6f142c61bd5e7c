// The Stop button of an unfinished task: a confirmation that says what stopping will do (for
// a task that waits, runs or has not started), then POST /api/v1/tasks/{id}/cancel. The task's
// state then changes through the live stream like any other change.

import { useState } from 'preact/hooks';
import type { TaskState, TaskSummary } from '../../api/types';
import { Confirm, toast } from '../../components/ui';
import { isTerminal, isWaiting, shortId } from '../../lib/format';
import { cancelTask } from './api';

/** What stopping a task in `state` does, in a sentence. */
export function stopWords(state: TaskState): string {
  if (state === 'TASK_STATE_SUBMITTED') return 'It has not started yet, and it will not run.';
  if (isWaiting(state))
    return 'Its open decision is closed as canceled, and nothing it asked for runs. The caller sees the task canceled.';
  return 'Its commands get SIGTERM, then SIGKILL if they are still running after the grace period (5 s unless configured). Output so far is kept; the caller sees the task canceled.';
}

export function StopTask(props: { task: Pick<TaskSummary, 'taskId' | 'state' | 'title'>; compact?: boolean }) {
  const [open, setOpen] = useState(false);
  const [busy, setBusy] = useState(false);
  const [reason, setReason] = useState('');
  const t = props.task;
  if (isTerminal(t.state)) return null;
  const name = t.title ? `“${t.title}”` : `task ${shortId(t.taskId)}`;
  const stop = async () => {
    setBusy(true);
    try {
      await cancelTask(t.taskId, reason.trim() || undefined);
      toast(`Stopped ${name}.`, 'ok');
      setOpen(false);
      setReason('');
    } catch (e) {
      toast(`Could not stop ${name}: ${(e as Error).message}`, 'bad');
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button
        type="button"
        class={`btn btn-danger${props.compact ? ' btn-small' : ''}`}
        data-stop-task={t.taskId}
        aria-label={props.compact ? `Stop ${name}` : undefined}
        onClick={(e) => {
          e.stopPropagation();
          setOpen(true);
        }}
      >
        Stop
      </button>
      <Confirm open={open} title="Stop this task?" confirm="Stop task" busy={busy} onConfirm={() => void stop()} onClose={() => setOpen(false)}>
        <p>
          Stop {name}? {stopWords(t.state)}
        </p>
        <label class="field">
          <span class="field-label">Reason (optional, shown in the transcript)</span>
          <input class="input" value={reason} maxLength={2000} onInput={(e) => setReason((e.target as HTMLInputElement).value)} />
        </label>
      </Confirm>
    </>
  );
}
