// Calls a Session's page makes: the Session with its transcript so far, then its live event
// stream; and, for a Session a schedule Run created, that schedule and Run, and a replay
// (the schedules API's calls, from schedules/api.ts).

import { api } from '../../api/client';
import { stream, type StreamOptions } from '../../api/sse';
import type { SessionDetail } from '../../api/types';

export { getRun, getSchedule, replay } from '../schedules/api';

const one = (id: string) => `/api/v1/sessions/${encodeURIComponent(id)}`;

export const getSession = (id: string, signal?: AbortSignal) => api<SessionDetail>(one(id), { signal });
/** Follows the Session's SSE stream (resuming by itself after a drop) until `opts.signal` aborts. */
export const sessionEvents = (id: string, opts: StreamOptions) => stream(`${one(id)}/events`, opts);
