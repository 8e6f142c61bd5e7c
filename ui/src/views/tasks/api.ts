// Calls of the tasks API (`/api/v1/tasks`), the Agents list, and an Agent's own A2A endpoint
// (the console sends as the person there; see send.ts).

import { api } from '../../api/client';
import type { AgentList, TaskCounts, TaskSummary, TasksPage } from '../../api/types';

const one = (taskId: string) => `/api/v1/tasks/${encodeURIComponent(taskId)}`;

/** A page of tasks for a query string (filterQuery in state.ts builds it). */
export const listTasks = (query: string) => api<TasksPage>(`/api/v1/tasks?${query}`);
export const getTask = (taskId: string) => api<TaskSummary>(one(taskId));
/** How many tasks there are in each state. */
export const taskCounts = () => api<TaskCounts>('/api/v1/tasks/counts');
/** Stops a task (with the person's reason, if given); the live stream then reports its end. */
export const cancelTask = (taskId: string, reason?: string) =>
  api<unknown>(`${one(taskId)}/cancel`, { method: 'POST', body: reason ? { reason } : {} });
/** The configured Agents. */
export const listAgents = () => api<AgentList>('/api/v1/agents').then((r) => r.agents);

/** A JSON-RPC answer of an Agent's A2A endpoint, the parts `SendMessage` uses. */
export interface RpcAnswer {
  result?: {
    task?: { id: string; contextId: string };
    message?: { parts?: { text?: string }[]; contextId?: string };
  };
  error?: { code: number; message: string };
}

/** One JSON-RPC request to the Agent's own A2A endpoint. */
export const agentRpc = (agentId: string, body: Record<string, unknown>) =>
  api<RpcAnswer>(`/api/v1/agents/${encodeURIComponent(agentId)}/a2a`, { method: 'POST', body });
