// Calls the overview makes: the task counts and two short task lists, the owner's controls
// of an Agent (pause or resume, stop all its unfinished tasks), and the backup and export
// downloads (streamed files, saved by download.ts rather than read as JSON).

import { api } from '../../api/client';
import type { TaskCounts, TaskSummary } from '../../api/types';
import { listAgents, listTasks, taskCounts } from '../tasks/api';
import { saveDownload } from './download';

export { listAgents };

export interface OverviewTasks {
  counts: TaskCounts;
  active: TaskSummary[];
  recent: TaskSummary[];
}

/** The overview's numbers and lists, from the server (counts of every task, not of one page). */
export async function readOverview(): Promise<OverviewTasks> {
  const [counts, active, recent] = await Promise.all([taskCounts(), listTasks('status=unfinished&limit=6'), listTasks('limit=6')]);
  return { counts, active: active.tasks, recent: recent.tasks };
}

const agent = (agentId: string) => `/api/v1/agents/${encodeURIComponent(agentId)}`;

/** Pauses an Agent (new messages refused, queued tasks wait) or resumes it. */
export const setAgentPaused = (agentId: string, paused: boolean) => api<unknown>(`${agent(agentId)}/paused`, { method: 'PUT', body: { paused } });
/** Cancels every unfinished task of the Agent; answers how many. */
export const stopAllTasks = (agentId: string) =>
  api<{ canceled: number }>(`${agent(agentId)}/stop-all`, { method: 'POST', body: {} }).then((r) => r.canceled);

/** Saves a backup of the profile (`/api/v1/backup`) or the export (`/api/v1/export`); resolves the file's name. */
export const download = (what: 'backup' | 'export') =>
  saveDownload(`/api/v1/${what}`, what === 'backup' ? 'sextant-backup.tar' : 'sextant-export.jsonl');
