// One schedule: what it does and when, its actions (run now, backfill a past range, edit,
// delete), what every Run may run without asking (revocable), and its Runs (newest first, live), each linking to the Session transcript it
// created and offering a replay.

import { useSignal } from '@preact/signals';
import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../../api/client';
import type { AgentSummary, Run, Schedule } from '../../api/types';
import { Ago, Confirm, Empty, ErrorState, FireTime, Loading, now, PageHeader, RunBadge, Switch, toast } from '../../components/ui';
import { refreshDelay } from '../../lib/time';
import { runIsOpen, shortId, triggerLabel } from '../../lib/format';
import { subscribe } from '../../live/events';
import { Link, navigate } from '../../router';
import { replayRun } from '../sessions/RunPanel';
import { loadAgents } from '../tasks/store';
import { deleteSchedule, getSchedule, listRuns } from './api';
import { BackfillDialog } from './BackfillDialog';
import { RunEdited } from './RunEdited';
import { initialRuns, runsReducer, type RunsAction } from './runs';
import { ScheduleDialog } from './ScheduleDialog';
import { ScheduleGrants } from './ScheduleGrants';
import { OVERLAP_WORDS } from './form';
import { HistoryStrip, PausedNotice, RunResult } from './ScheduleHealth';
import { cronWords, useScheduleActions } from './Schedules';

export function ScheduleDetail(props: { id: string }) {
  const [s, setS] = useState<Schedule | null>(null);
  const [status, setStatus] = useState<'loading' | 'ready' | 'error' | 'notFound'>('loading');
  const [error, setError] = useState('');
  const runsSignal = useSignal(initialRuns);
  const runs = runsSignal.value;
  const dispatchRuns = (a: RunsAction) => (runsSignal.value = runsReducer(runsSignal.value, a));
  const [agents, setAgents] = useState<AgentSummary[]>([]);
  const [editing, setEditing] = useState(false);
  const [backfilling, setBackfilling] = useState(false);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [replaying, setReplaying] = useState<string | null>(null);
  // Bumped when this schedule's tasks change or it is saved: an answer or an edit may have
  // added or voided an "always allow".
  const [grantsVersion, setGrantsVersion] = useState(0);

  const loadRuns = async () => {
    try {
      const p = await listRuns(props.id, 50);
      dispatchRuns({ type: 'loaded', runs: p.runs, total: p.total, next: p.next_cursor });
      // The plan's record (and a pause) follow its Runs.
      getSchedule(props.id).then(setS, () => undefined);
    } catch (e) {
      dispatchRuns({ type: 'failed', error: (e as Error).message });
    }
  };
  const load = async () => {
    try {
      setS(await getSchedule(props.id));
      setStatus('ready');
      void loadRuns();
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) setStatus('notFound');
      else {
        setError((e as Error).message);
        setStatus('error');
      }
    }
  };
  useEffect(() => {
    setStatus('loading');
    void load();
    loadAgents().then(setAgents, () => undefined);
  }, [props.id]);

  // A Run's status is its task's state: re-read the Runs when a task of this schedule's
  // changes (the stream names the schedule, so a first Run is news too), or when an open Run
  // may have just got its task; and the schedule itself, whose next fire moves on.
  const refresh = () => {
    void loadRuns();
    setGrantsVersion((v) => v + 1);
    getSchedule(props.id).then(setS, () => undefined);
  };
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const soon = () => {
      clearTimeout(timer);
      timer = setTimeout(refresh, 150);
    };
    const off = subscribe({
      task(c) {
        const list = runsSignal.value.list;
        if (c.scheduleId === props.id || list.some((r) => r.task_id === c.taskId || runIsOpen(r.status))) soon();
      },
      resync: soon,
    });
    return () => {
      off();
      clearTimeout(timer);
    };
  }, [props.id]);
  // At its next fire time the schedule fires, or records a blocked or missed Run (neither has
  // a task to tell the stream): look again just after it.
  const nextFire = s?.enabled ? s.next_runs[0]?.utc : undefined;
  useEffect(() => {
    const wait = refreshDelay(nextFire, Date.now());
    if (wait === null) return;
    const t = setTimeout(refresh, wait);
    return () => clearTimeout(t);
  }, [nextFire, props.id]);

  const { busy, toggle, run } = useScheduleActions((saved, r) => {
    if (saved) setS(saved);
    if (r) {
      dispatchRuns({ type: 'started', run: r });
      void loadRuns();
    }
  });

  const replay = async (r: Run) => {
    setReplaying(r.id);
    const n = await replayRun(r.schedule_id, r.id);
    setReplaying(null);
    if (n) {
      dispatchRuns({ type: 'started', run: n });
      void loadRuns();
    }
  };

  const loadMore = async () => {
    if (!runs.next) return;
    try {
      const p = await listRuns(props.id, 50, runs.next);
      dispatchRuns({ type: 'more', runs: p.runs, next: p.next_cursor });
    } catch (e) {
      toast((e as Error).message, 'bad');
    }
  };

  if (status === 'loading') return <div class="page"><Loading label="Loading the schedule…" /></div>;
  if (status === 'notFound')
    return (
      <div class="page">
        <Empty title="No such schedule" icon="?">
          It may have been deleted. <Link href="/schedules" class="link">All schedules</Link>
        </Empty>
      </div>
    );
  if (status === 'error' || !s) return <div class="page"><ErrorState error={error} retry={() => void load()} /></div>;
  const agent = agents.find((a) => a.agentId === s.agent_id)?.name ?? s.agent_id;
  return (
    <div class="page">
      <div class="crumbs">
        <Link href="/schedules" class="link">
          Schedules
        </Link>{' '}
        / {s.name}
      </div>
      <PageHeader
        title={s.name}
        subtitle={
          <>
            {cronWords(s)} <span class="muted">({s.timezone.replace(/_/g, ' ')})</span>
          </>
        }
        actions={
          <>
            <span class="switch-label">
              <Switch checked={s.enabled} label={s.enabled ? 'Pause schedule' : 'Enable schedule'} disabled={busy === s.id} onChange={(v) => void toggle(s, v)} />
              {s.enabled ? 'Enabled' : 'Paused'}
            </span>
            <button class="btn btn-primary" disabled={busy === s.id} onClick={() => void run(s)} data-action="run-now">
              ▶ Run now
            </button>
            <RunEdited schedule={s} />
            {s.cron !== null && (
              <button class="btn" onClick={() => setBackfilling(true)} data-action="backfill" title="Runs for the times it would have fired in a past range">
                Backfill…
              </button>
            )}
            <button class="btn" onClick={() => setEditing(true)} data-action="edit">
              Edit
            </button>
            <button class="btn btn-ghost danger" onClick={() => setConfirmDelete(true)} data-action="delete">
              Delete
            </button>
          </>
        }
      />
      <PausedNotice s={s} />
      {!s.access.allowed && (
        <div class="notice notice-bad" role="alert">
          You may not call {agent} right now{s.access.reason ? `: ${s.access.reason}` : ''}. Runs are recorded as blocked.
        </div>
      )}
      <div class="split">
        <div class="split-main">
          <section class="panel" aria-label="Runs">
            <h2 class="panel-title">
              Runs <span class="count">{runs.total}</span>
            </h2>
            <HistoryStrip history={s.history} consecutiveFailures={s.consecutive_failures} />
            {runs.status === 'loading' && <Loading label="Loading Runs…" />}
            {runs.status === 'error' && <ErrorState error={runs.error ?? ''} retry={() => void loadRuns()} />}
            {runs.status === 'ready' && runs.list.length === 0 && (
              <Empty title="No Runs yet" icon="▷">
                {s.enabled && s.next_runs[0] ? (
                  Date.parse(s.next_runs[0].utc) > now.value ? (
                    <>
                      The first one fires <Ago at={s.next_runs[0].utc} />.{' '}
                    </>
                  ) : (
                    <>The first one is due now. </>
                  )
                ) : null}
                Use <strong>Run now</strong> to try it.
              </Empty>
            )}
            {runs.status === 'ready' && runs.list.length > 0 && (
              <table class="table runs-table" aria-label="Runs of this schedule">
                <thead>
                  <tr>
                    <th>Status</th>
                    <th>Trigger</th>
                    <th>Fired</th>
                    <th>Finished</th>
                    <th>Result</th>
                    <th>Transcript</th>
                    <th class="actions-col">
                      <span class="sr-only">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {runs.list.map((r) => (
                    <tr key={r.id} data-run-id={r.id} data-status={r.status}>
                      <td>
                        <RunBadge status={r.status} title={r.reason ?? undefined} />
                        {r.reason && <div class="muted small clamp" title={r.reason}>{r.reason}</div>}
                      </td>
                      <td data-label="Trigger">
                        <span>{triggerLabel(r.trigger)}</span>
                        {r.replay_of && <div class="muted small">of {shortId(r.replay_of)}</div>}
                      </td>
                      <td data-label="Fired">
                        <Ago at={r.created_at} />
                      </td>
                      <td data-label="Finished">{r.finished_at ? <Ago at={r.finished_at} /> : <span class="muted">—</span>}</td>
                      <td data-label="Result">
                        <RunResult run={r} />
                      </td>
                      <td>
                        {r.session_id ? (
                          <Link href={`/sessions/${r.session_id}`} class="link" title="Open the Session this Run created">
                            Session {shortId(r.session_id)} →
                          </Link>
                        ) : (
                          <span class="muted">none</span>
                        )}
                      </td>
                      <td class="row-actions">
                        <button class="btn btn-small btn-ghost" disabled={replaying === r.id} onClick={() => void replay(r)} data-action="replay" title="A new Run with this Run's exact prompt and Agent">
                          ↻ Replay
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
            {runs.next && (
              <div class="table-foot">
                <button class="btn" onClick={() => void loadMore()}>
                  Load more
                </button>
              </div>
            )}
          </section>
        </div>
        <aside class="split-side">
          <section class="panel" aria-label="About this schedule">
            <h2 class="panel-title">Plan</h2>
            <dl class="facts">
              <dt>Agent</dt>
              <dd>{agent}</dd>
              <dt>Prompt</dt>
              <dd class="prewrap">{s.prompt}</dd>
              <dt>{s.cron === null ? 'Once at' : 'Cron'}</dt>
              <dd class="mono">{s.cron ?? s.once_at}</dd>
              <dt>Time zone</dt>
              <dd>{s.timezone.replace(/_/g, ' ')}</dd>
              <dt>Missed runs</dt>
              <dd>{s.missed_run_policy === 'run_once' ? `run once, late (within ${graceWords(s.missed_run_grace_secs)})` : 'skipped'}</dd>
              <dt>While one runs</dt>
              <dd data-fact="overlap">{OVERLAP_WORDS[s.overlap_policy] ?? s.overlap_policy}</dd>
              {s.jitter_secs > 0 && (
                <>
                  <dt>Jitter</dt>
                  <dd data-fact="jitter">up to {s.jitter_secs} s late</dd>
                </>
              )}
              <dt>After failures</dt>
              <dd data-fact="pause">{s.pause_after_failures === null ? 'keeps running' : `pauses after ${s.pause_after_failures} in a row`}</dd>
              {s.source === 'assistant' && (
                <>
                  <dt>Made by</dt>
                  <dd>assistant {s.source_assistant}</dd>
                </>
              )}
            </dl>
          </section>
          <ScheduleGrants scheduleId={s.id} version={grantsVersion} />
          <section class="panel" aria-label="Next fire times">
            <h2 class="panel-title">Next fire times</h2>
            {!s.enabled && <div class="muted small">Paused: these are when it would fire.</div>}
            <ol class="next-list">
              {s.next_runs.map((n) => (
                <li key={n.utc}>
                  <FireTime utc={n.utc} zone={s.timezone} withYear stacked />
                  <span class="muted small">
                    <Ago at={n.utc} />
                  </span>
                </li>
              ))}
            </ol>
          </section>
        </aside>
      </div>
      <ScheduleDialog
        open={editing}
        schedule={s}
        agents={agents}
        onClose={() => setEditing(false)}
        onSaved={(saved) => {
          setEditing(false);
          setS(saved);
          setGrantsVersion((v) => v + 1);
          toast('Saved', 'ok');
        }}
      />
      {s.cron !== null && (
        <BackfillDialog
          open={backfilling}
          schedule={s}
          onClose={() => setBackfilling(false)}
          onDone={(r) => {
            setBackfilling(false);
            const n = r.runs.length;
            const before = r.already_backfilled ? `; ${r.already_backfilled} backfilled before` : '';
            toast(`${n} backfill Run${n === 1 ? '' : 's'}${before}`, 'ok');
            void loadRuns();
          }}
        />
      )}
      <Confirm
        open={confirmDelete}
        title="Delete this schedule?"
        confirm="Delete schedule"
        onClose={() => setConfirmDelete(false)}
        onConfirm={async () => {
          try {
            await deleteSchedule(s.id);
            toast(`“${s.name}” deleted`, 'ok');
            navigate('/schedules');
          } catch (e) {
            toast((e as Error).message, 'bad');
          }
        }}
      >
        <p>“{s.name}” and its Run history will be deleted. The Sessions its Runs created stay. This cannot be undone.</p>
      </Confirm>
    </div>
  );
}

/** A catch-up window in words: "1 h", "15 min", "90 s". */
function graceWords(secs: number): string {
  if (secs % 86400 === 0) return `${secs / 86400} d`;
  if (secs % 3600 === 0) return `${secs / 3600} h`;
  if (secs % 60 === 0) return `${secs / 60} min`;
  return `${secs} s`;
}
