// Calls of the schedules API (`/api/v1/me/schedules`), the person's own plans.

import { api } from '../../api/client';
import type { BackfillReply, Run, RunsPage, Schedule, ScheduleGrant, ScheduleInput, ScheduleList, SchedulePreview } from '../../api/types';

const BASE = '/api/v1/me/schedules';
const one = (id: string) => `${BASE}/${encodeURIComponent(id)}`;

/** Whether every schedule is paused (stored: the tray, this page and a restart agree). */
export const getPaused = () => api<{ paused: boolean }>(`${BASE}/pause`).then((r) => r.paused);
export const setPaused = (paused: boolean) =>
  api<{ paused: boolean }>(`${BASE}/pause`, { method: 'PUT', body: { paused } }).then((r) => r.paused);

export const listSchedules = () => api<ScheduleList>(BASE).then((r) => r.schedules);
export const getSchedule = (id: string) => api<Schedule>(one(id));
export const createSchedule = (s: ScheduleInput) => api<Schedule>(BASE, { method: 'POST', body: { ...s, source: 'console' } });
export const updateSchedule = (id: string, s: Partial<ScheduleInput>) => api<Schedule>(one(id), { method: 'PATCH', body: s });
export const deleteSchedule = (id: string) => api<void>(one(id), { method: 'DELETE' });
export const runNow = (id: string) => api<Run>(`${one(id)}/run`, { method: 'POST' });
/** One Run that sends `prompt` instead of the plan's own (the plan is unchanged). */
export const runEdited = (id: string, prompt: string) => api<Run>(`${one(id)}/run`, { method: 'POST', body: { prompt } });
export const getRun = (id: string, runId: string) => api<Run>(`${one(id)}/runs/${encodeURIComponent(runId)}`);
/** A new Run with that Run's exact prompt and Agent. */
export const replay = (id: string, runId: string) => api<Run>(`${one(id)}/runs/${encodeURIComponent(runId)}/replay`, { method: 'POST' });
export const listRuns = (id: string, limit = 50, cursor?: string | null) =>
  api<RunsPage>(`${one(id)}/runs?limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
/** What a timing (one of cron, plain words or a one-shot time) means in a zone; saves nothing. */
export const previewTiming = (timing: Pick<ScheduleInput, 'cron' | 'when' | 'once_at'>, timezone: string, signal?: AbortSignal) =>
  api<SchedulePreview>(`${BASE}/preview`, { method: 'POST', body: { ...timing, timezone }, signal });
/** One `backfill` Run per slot of the schedule in `[from, to)` (RFC 3339). */
export const backfill = (id: string, b: { from: string; to: string; overlap_policy: string }) =>
  api<BackfillReply>(`${one(id)}/backfill`, { method: 'POST', body: b });
/** The schedule's "Always allow for this schedule" approvals, newest first (void ones too). */
export const listGrants = (id: string) => api<{ grants: ScheduleGrant[] }>(`${one(id)}/grants`).then((r) => r.grants);
/** Revokes one: the next Run whose card it skipped asks again. */
export const revokeGrant = (id: string, grant: string) =>
  api<void>(`${one(id)}/grants/${encodeURIComponent(grant)}`, { method: 'DELETE' });
