// The schedules list's state: the person's schedules and each one's last Run. Pure reducer;
// the store (store.ts) feeds it from `GET /api/v1/me/schedules`, each schedule's newest Run,
// the person's actions and the live stream.

import type { Run, Schedule } from '../../api/types';

export interface SchedulesState {
  status: 'loading' | 'ready' | 'error';
  error?: string;
  list: Schedule[];
  /** Each schedule's newest Run: `null` when it has none, absent until read. */
  lastRuns: Record<string, Run | null>;
}

export type SchedulesAction =
  | { type: 'reset' }
  | { type: 'loaded'; list: Schedule[] }
  | { type: 'failed'; error: string }
  /** A schedule as the server just returned it (edited, enabled, paused, or read again). */
  | { type: 'saved'; schedule: Schedule }
  /** A schedule just created: first in the list, with no Run yet. */
  | { type: 'created'; schedule: Schedule }
  | { type: 'deleted'; id: string }
  | { type: 'lastRun'; scheduleId: string; run: Run | null };

export const initialSchedules: SchedulesState = { status: 'loading', list: [], lastRuns: {} };

export function schedulesReducer(s: SchedulesState, a: SchedulesAction): SchedulesState {
  switch (a.type) {
    case 'reset':
      return initialSchedules;
    case 'loaded':
      return { ...s, status: 'ready', error: undefined, list: a.list };
    case 'failed':
      // A failed refresh keeps the list shown; only a first read that failed is an error page.
      return { ...s, status: s.status === 'ready' ? 'ready' : 'error', error: a.error };
    case 'saved':
      return { ...s, list: s.list.map((x) => (x.id === a.schedule.id ? a.schedule : x)) };
    case 'created':
      return { ...s, status: 'ready', list: [a.schedule, ...s.list], lastRuns: { ...s.lastRuns, [a.schedule.id]: null } };
    case 'deleted':
      return { ...s, list: s.list.filter((x) => x.id !== a.id) };
    case 'lastRun':
      return { ...s, lastRuns: { ...s.lastRuns, [a.scheduleId]: a.run } };
  }
}
