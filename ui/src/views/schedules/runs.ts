// A schedule's Runs as its page lists them, newest first: the first page, the pages the person
// asked for below it, and Runs the person just started shown before the list is read again.
// Pure reducer; ScheduleDetail.tsx holds it in a signal and feeds it from the schedules API.

import type { Run } from '../../api/types';

export interface RunsState {
  status: 'loading' | 'ready' | 'error';
  error?: string;
  list: Run[];
  total: number;
  /** The cursor of the next (older) page, if there is one. */
  next: string | null;
}

export type RunsAction =
  | { type: 'loaded'; runs: Run[]; total: number; next: string | null }
  | { type: 'failed'; error: string }
  /** An older page, below the ones shown. */
  | { type: 'more'; runs: Run[]; next: string | null }
  /** A Run the person just started (run now, replay): first, once. */
  | { type: 'started'; run: Run };

export const initialRuns: RunsState = { status: 'loading', list: [], total: 0, next: null };

export function runsReducer(s: RunsState, a: RunsAction): RunsState {
  switch (a.type) {
    case 'loaded':
      return { status: 'ready', list: a.runs, total: a.total, next: a.next };
    case 'failed':
      // A failed refresh keeps the Runs shown; only a first read that failed is an error.
      return { ...s, status: s.status === 'ready' ? 'ready' : 'error', error: a.error };
    case 'more':
      return { ...s, list: [...s.list, ...a.runs], next: a.next };
    case 'started':
      return { ...s, list: [a.run, ...s.list.filter((r) => r.id !== a.run.id)], total: s.total + 1 };
  }
}
