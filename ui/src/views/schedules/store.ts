// The schedules list's store: the list and last Runs (state.ts) in a signal, read from the
// schedules API. The page (Schedules.tsx) decides when to read: on open, on the live stream's
// changes, and just after the soonest next fire.

import { signal } from '@preact/signals';
import { listRuns, listSchedules, getSchedule } from './api';
import { initialSchedules, schedulesReducer, type SchedulesAction } from './state';

export const schedules = signal(initialSchedules);

export function dispatch(a: SchedulesAction): void {
  schedules.value = schedulesReducer(schedules.value, a);
}

/** Reads a schedule's newest Run (a failure keeps what is shown). */
export const loadLastRun = (id: string): Promise<void> =>
  listRuns(id, 1)
    .then((p) => dispatch({ type: 'lastRun', scheduleId: id, run: p.runs[0] ?? null }))
    .catch(() => undefined);

/** Reads the list again, then each schedule's newest Run. */
export async function loadSchedules(): Promise<void> {
  try {
    const list = await listSchedules();
    dispatch({ type: 'loaded', list });
    list.forEach((s) => void loadLastRun(s.id));
  } catch (e) {
    dispatch({ type: 'failed', error: (e as Error).message });
  }
}

/** Reads one schedule and its newest Run again (its task changed: its next fire moves on). */
export function reloadSchedule(id: string): void {
  void loadLastRun(id);
  getSchedule(id).then(
    (saved) => dispatch({ type: 'saved', schedule: saved }),
    () => undefined,
  );
}
