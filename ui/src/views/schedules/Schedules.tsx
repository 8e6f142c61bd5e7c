// Personal schedules: the list (name, Agent, when in plain words, zone, next fire, enabled,
// last Run), with create / edit, enable / disable, run now and delete. A schedule's Runs are
// on its own page (ScheduleDetail).

import { useEffect, useState } from 'preact/hooks';
import type { AgentSummary, Run, Schedule } from '../../api/types';
import { Ago, Confirm, Empty, ErrorState, FireTime, Loading, PageHeader, RunBadge, Switch, toast } from '../../components/ui';
import { describeCron } from '../../lib/cron';
import { runIsOpen } from '../../lib/format';
import { refreshDelay } from '../../lib/time';
import { subscribe } from '../../live/events';
import { Link } from '../../router';
import { loadAgents } from '../tasks/store';
import { deleteSchedule, getPaused, runNow, setPaused, updateSchedule } from './api';
import { ScheduleDialog } from './ScheduleDialog';
import { HistoryStrip } from './ScheduleHealth';
import { dispatch, loadLastRun, loadSchedules as load, reloadSchedule as reloadOne, schedules } from './store';

/** The plain words of a schedule's expression (the server's when the console cannot read it,
 * and for a one-shot plan). */
export function cronWords(s: Schedule): string {
  const w = s.cron === null ? null : describeCron(s.cron);
  return w?.ok ? w.text : s.description;
}

/** Actions shared by the list and a schedule's page. */
export function useScheduleActions(onChange: (s: Schedule | null, run?: Run) => void) {
  const [busy, setBusy] = useState<string | null>(null);
  const toggle = async (s: Schedule, enabled: boolean) => {
    setBusy(s.id);
    try {
      const saved = await updateSchedule(s.id, { enabled });
      toast(enabled ? `“${s.name}” enabled` : `“${s.name}” paused`, 'ok');
      onChange(saved);
    } catch (e) {
      toast((e as Error).message, 'bad');
    } finally {
      setBusy(null);
    }
  };
  const run = async (s: Schedule) => {
    setBusy(s.id);
    try {
      const r = await runNow(s.id);
      toast(r.status === 'blocked' ? `Run blocked: ${r.reason ?? ''}` : `“${s.name}” is running`, r.status === 'blocked' ? 'bad' : 'ok');
      onChange(s, r);
    } catch (e) {
      toast((e as Error).message, 'bad');
    } finally {
      setBusy(null);
    }
  };
  return { busy, toggle, run };
}

export function Schedules() {
  const state = schedules.value;
  const lastRuns = state.lastRuns;
  const [agents, setAgents] = useState<AgentSummary[]>([]);
  const [dialog, setDialog] = useState<{ open: boolean; schedule: Schedule | null }>({ open: false, schedule: null });
  const [toDelete, setToDelete] = useState<Schedule | null>(null);
  const [deleting, setDeleting] = useState(false);

  useEffect(() => {
    void load();
    loadAgents().then(setAgents, () => undefined);
    // The list lives while the page is open: the next visit starts from "loading" again.
    return () => dispatch({ type: 'reset' });
  }, []);

  // A Run's status is its task's state: follow the live stream for the Runs shown, and for
  // each schedule's tasks (the stream names the schedule: a first Run is news too), whose
  // next fire moves on with it.
  useEffect(
    () =>
      subscribe({
        task(c) {
          if (c.scheduleId) reloadOne(c.scheduleId);
          for (const r of Object.values(schedules.value.lastRuns)) {
            if (r && r.schedule_id !== c.scheduleId && (r.task_id === c.taskId || runIsOpen(r.status))) void loadLastRun(r.schedule_id);
          }
        },
        resync() {
          void load();
        },
      }),
    [],
  );
  // At the soonest next fire a schedule fires, or records a blocked or missed Run (which have
  // no task for the stream to tell): read the list again just after it.
  const soonest = state.list
    .filter((x) => x.enabled && x.next_runs[0])
    .map((x) => x.next_runs[0].utc)
    .sort((a, b) => Date.parse(a) - Date.parse(b))[0];
  useEffect(() => {
    const wait = refreshDelay(soonest, Date.now());
    if (wait === null) return;
    const t = setTimeout(() => void load(), wait);
    return () => clearTimeout(t);
  }, [soonest]);

  const { busy, toggle, run } = useScheduleActions((saved, r) => {
    if (saved) dispatch({ type: 'saved', schedule: saved });
    if (r) dispatch({ type: 'lastRun', scheduleId: r.schedule_id, run: r });
  });

  const remove = async () => {
    if (!toDelete) return;
    setDeleting(true);
    try {
      await deleteSchedule(toDelete.id);
      toast(`“${toDelete.name}” deleted`, 'ok');
      dispatch({ type: 'deleted', id: toDelete.id });
      setToDelete(null);
    } catch (e) {
      toast((e as Error).message, 'bad');
    } finally {
      setDeleting(false);
    }
  };

  return (
    <div class="page">
      <PageHeader
        title="Schedules"
        subtitle="Your personal plans: a prompt sent to an Agent, as you, at the times you choose."
        actions={
          <>
            <PauseAll />
            <button class="btn btn-primary" onClick={() => setDialog({ open: true, schedule: null })} disabled={agents.length === 0}>
              + New schedule
            </button>
          </>
        }
      />
      {state.status === 'loading' && <Loading label="Loading schedules…" />}
      {state.status === 'error' && <ErrorState error={state.error ?? ''} retry={() => void load()} />}
      {state.status === 'ready' && state.list.length === 0 && (
        <Empty title="No schedules yet" icon="◷">
          Create one to send a prompt to an Agent on a timetable, e.g. a morning brief on weekdays at 07:30.
        </Empty>
      )}
      {state.status === 'ready' && state.list.length > 0 && (
        <div class="table-wrap">
          <table class="table cards-md" aria-label="Schedules">
            <thead>
              <tr>
                <th>Name</th>
                <th>Agent</th>
                <th>When</th>
                <th>Next fire</th>
                <th>Last Run</th>
                <th>Enabled</th>
                <th class="actions-col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {state.list.map((s) => {
                const last = lastRuns[s.id];
                const next = s.next_runs[0];
                return (
                  <tr key={s.id} data-schedule-id={s.id} class={s.enabled ? '' : 'disabled-row'}>
                    <td>
                      <Link href={`/schedules/${s.id}`} class="link strong">
                        {s.name}
                      </Link>
                      <div class="muted small clamp" title={s.prompt}>
                        {s.prompt}
                      </div>
                    </td>
                    <td data-label="Agent">{agents.find((a) => a.agentId === s.agent_id)?.name ?? s.agent_id}</td>
                    <td class="when-col" data-label="When">
                      <div>{cronWords(s)}</div>
                      <div class="muted small nowrap">
                        <span class="mono">{s.cron ?? 'once'}</span> · {s.timezone.replace(/_/g, ' ')}
                      </div>
                    </td>
                    <td class="nowrap" data-label="Next fire">
                      {s.enabled && next ? (
                        <>
                          <FireTime utc={next.utc} zone={s.timezone} stacked />
                          <div class="muted small">
                            <Ago at={next.utc} />
                          </div>
                        </>
                      ) : (
                        <span class="muted" title={s.paused?.reason}>{s.enabled ? '—' : s.paused ? 'paused after failures' : 'paused'}</span>
                      )}
                    </td>
                    <td data-label="Last Run">
                      {last === undefined ? (
                        <span class="muted">…</span>
                      ) : last === null ? (
                        <span class="muted">never</span>
                      ) : (
                        <div class="last-run">
                          <RunBadge status={last.status} title={last.reason ?? undefined} />
                          <span class="muted small">
                            <Ago at={last.created_at} />
                          </span>
                        </div>
                      )}
                      {s.history.recent.length > 0 && (
                        <HistoryStrip history={s.history} />
                      )}
                    </td>
                    <td data-label="Enabled">
                      <Switch checked={s.enabled} label={s.enabled ? `Pause ${s.name}` : `Enable ${s.name}`} disabled={busy === s.id} onChange={(v) => void toggle(s, v)} />
                    </td>
                    <td class="row-actions">
                      {/* Stacked: side by side they made the row 50 px wider than a 1280 px window. */}
                      <div class="action-stack">
                        <button class="btn btn-small" disabled={busy === s.id} onClick={() => void run(s)} data-action="run-now">
                          Run now
                        </button>
                        <button class="btn btn-small btn-ghost" onClick={() => setDialog({ open: true, schedule: s })} data-action="edit">
                          Edit
                        </button>
                        <button class="btn btn-small btn-ghost danger" onClick={() => setToDelete(s)} data-action="delete">
                          Delete
                        </button>
                      </div>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <ScheduleDialog
        open={dialog.open}
        schedule={dialog.schedule}
        agents={agents}
        onClose={() => setDialog({ open: false, schedule: null })}
        onSaved={(saved) => {
          const created = !dialog.schedule;
          setDialog({ open: false, schedule: null });
          dispatch(created ? { type: 'created', schedule: saved } : { type: 'saved', schedule: saved });
          toast(created ? `“${saved.name}” created` : 'Saved', 'ok');
        }}
      />
      <Confirm
        open={!!toDelete}
        title="Delete this schedule?"
        confirm="Delete schedule"
        busy={deleting}
        onConfirm={() => void remove()}
        onClose={() => setToDelete(null)}
      >
        <p>
          “{toDelete?.name}” and its Run history will be deleted. The Sessions its Runs created stay. This cannot be undone.
        </p>
      </Confirm>
    </div>
  );
}

/** Pause or resume every schedule, with a banner while they are paused. */
function PauseAll() {
  const [paused, setState] = useState<boolean | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    getPaused()
      .then(setState)
      .catch(() => setState(null));
  }, []);
  if (paused === null) return null;
  const toggle = async () => {
    setBusy(true);
    try {
      const now = await setPaused(!paused);
      setState(now);
      toast(now ? 'All schedules are paused.' : 'Schedules are running again.', 'ok');
    } catch (e) {
      toast(`Could not ${paused ? 'resume' : 'pause'} schedules: ${(e as Error).message}`, 'bad');
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      {paused && (
        <span class="badge badge-warn" role="status" data-schedules-paused>
          All paused
        </span>
      )}
      <button class="btn" data-pause-all={paused ? 'resume' : 'pause'} disabled={busy} onClick={() => void toggle()}>
        {paused ? 'Resume all schedules' : 'Pause all schedules'}
      </button>
    </>
  );
}
