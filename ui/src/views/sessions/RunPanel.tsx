// The schedule Run that created a Session: which schedule, how it was triggered, and a replay
// (a new Run with that Run's exact prompt and Agent).

import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../../api/client';
import type { Run, RunLink, Schedule } from '../../api/types';
import { Ago, RunBadge, toast } from '../../components/ui';
import { triggerLabel } from '../../lib/format';
import { Link, navigate } from '../../router';
import { getRun, getSchedule, replay } from './api';

/** Replays a Run and opens the new Run's Session (or the schedule, if it did not start). */
export async function replayRun(scheduleId: string, runId: string): Promise<Run | null> {
  try {
    const run = await replay(scheduleId, runId);
    toast(run.status === 'blocked' ? `Replay blocked: ${run.reason ?? ''}` : 'Replay started', run.status === 'blocked' ? 'bad' : 'ok');
    return run;
  } catch (e) {
    toast(`Replay failed: ${(e as Error).message}`, 'bad');
    return null;
  }
}

export function RunPanel(props: { link: RunLink }) {
  const { link } = props;
  const [schedule, setSchedule] = useState<Schedule | null | 'gone'>(null);
  const [run, setRun] = useState<Run | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    getSchedule(link.scheduleId)
      .then(setSchedule)
      .catch((e) => setSchedule(e instanceof ApiError && e.status === 404 ? 'gone' : null));
    getRun(link.scheduleId, link.runId)
      .then(setRun)
      .catch(() => setRun(null));
  }, [link.runId, link.scheduleId]);
  const replay = async () => {
    setBusy(true);
    const r = await replayRun(link.scheduleId, link.runId);
    setBusy(false);
    if (r?.session_id) navigate(`/sessions/${r.session_id}`);
    else if (r) navigate(`/schedules/${link.scheduleId}`);
  };
  return (
    <section class="panel run-panel" aria-label="Created by a schedule Run">
      <h2 class="panel-title">Created by a schedule</h2>
      <dl class="facts">
        <dt>Schedule</dt>
        <dd>
          {schedule === 'gone' ? (
            <span class="muted">deleted</span>
          ) : schedule ? (
            <Link href={`/schedules/${link.scheduleId}`} class="link">
              {schedule.name}
            </Link>
          ) : (
            <span class="muted">…</span>
          )}
        </dd>
        <dt>Trigger</dt>
        <dd>{triggerLabel(link.trigger)}</dd>
        {run && (
          <>
            <dt>Status</dt>
            <dd>
              <RunBadge status={run.status} title={run.reason ?? undefined} />
            </dd>
            <dt>Fired</dt>
            <dd>
              <Ago at={run.created_at} />
            </dd>
          </>
        )}
      </dl>
      {schedule !== 'gone' && (
        <button class="btn" disabled={busy} onClick={replay} data-action="replay">
          ↻ Replay this Run
        </button>
      )}
    </section>
  );
}
