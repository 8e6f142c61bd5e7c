// The console's one live connection: `GET /api/v1/tasks/events` (every task state change,
// every interaction raised or answered, across Agents and Sessions, and schedule notices). Views subscribe to it;
// after a reconnect or a `resync` event they re-read what they show, because this stream has
// no resume point.

import { signal } from '@preact/signals';
import type { InteractionChange, ScheduleNotice, TaskChange } from '../api/types';
import { stream, type LinkState } from '../api/sse';

/** The connection indicator's state. */
export const link = signal<LinkState>('connecting');

export interface LiveListener {
  task?(c: TaskChange): void;
  interaction?(c: InteractionChange): void;
  /** A plan started failing, recovered, or was paused after failures. */
  schedule?(n: ScheduleNotice): void;
  /** Re-read everything: the stream reconnected (events may have been missed) or fell behind. */
  resync?(): void;
}

const listeners = new Set<LiveListener>();
let started: AbortController | null = null;

/** Listens to live events until the returned function is called. */
export function subscribe(l: LiveListener): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

function emit<K extends keyof LiveListener>(k: K, ...args: Parameters<NonNullable<LiveListener[K]>>) {
  for (const l of [...listeners]) {
    try {
      (l[k] as ((...a: unknown[]) => void) | undefined)?.(...args);
    } catch (e) {
      console.error('live listener failed', e);
    }
  }
}

/** Opens the connection (once). */
export function startLive(): void {
  if (started) return;
  started = new AbortController();
  // The browser knows before the stream times out; back online, the stream's own state
  // stands again (an open stream may have outlived the outage).
  let streamState: LinkState = 'connecting';
  window.addEventListener('offline', () => {
    link.value = 'offline';
  });
  window.addEventListener('online', () => {
    link.value = streamState;
  });
  void stream('/api/v1/tasks/events', {
    signal: started.signal,
    onState(state, info) {
      streamState = state;
      if (navigator.onLine !== false) link.value = state;
      if (state === 'live' && info.reconnected) emit('resync');
    },
    onFatal() {
      streamState = 'offline';
      link.value = 'offline';
    },
    onEvent(ev) {
      let data: unknown;
      try {
        data = JSON.parse(ev.data);
      } catch {
        return;
      }
      if (ev.event === 'task') emit('task', data as TaskChange);
      else if (ev.event === 'interaction') emit('interaction', data as InteractionChange);
      else if (ev.event === 'schedule') emit('schedule', data as ScheduleNotice);
      else if (ev.event === 'resync') emit('resync');
    },
  });
}
