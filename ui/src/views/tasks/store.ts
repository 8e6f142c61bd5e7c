// The live task list's store: reads a page of `GET /api/v1/tasks` for the filter, then applies
// every `task` event of the live stream; re-reads after a reconnect.

import { signal } from '@preact/signals';
import { api } from '../../api/client';
import type { AgentList, AgentSummary, TasksPage } from '../../api/types';
import { subscribe } from '../../live/events';
import { filterQuery, initialTasks, tasksReducer, type TaskFilter, type TasksAction } from './state';

export const tasks = signal(initialTasks);
export const agents = signal<AgentSummary[] | null>(null);

function dispatch(a: TasksAction) {
  tasks.value = tasksReducer(tasks.value, a);
  if (a.type === 'change') {
    const id = a.change.taskId;
    setTimeout(() => dispatch({ type: 'unflash', taskId: id }), 1600);
  }
}

let generation = 0;

/** Reads the first page for `filter` (or the current filter). */
export async function loadTasks(filter?: TaskFilter): Promise<void> {
  if (filter) dispatch({ type: 'filter', filter });
  const gen = ++generation;
  const f = tasks.value.filter;
  try {
    const page = await api<TasksPage>(`/api/v1/tasks?${filterQuery(f)}`);
    if (gen === generation) dispatch({ type: 'loaded', tasks: page.tasks, total: page.total, nextCursor: page.nextCursor });
  } catch (e) {
    if (gen === generation) dispatch({ type: 'failed', error: (e as Error).message });
  }
}

/** Reads the next page. */
export async function loadMore(): Promise<void> {
  const s = tasks.value;
  if (!s.nextCursor) return;
  const gen = generation;
  try {
    const page = await api<TasksPage>(`/api/v1/tasks?${filterQuery(s.filter, s.nextCursor)}`);
    if (gen === generation) dispatch({ type: 'loaded', append: true, tasks: page.tasks, total: page.total, nextCursor: page.nextCursor });
  } catch (e) {
    dispatch({ type: 'failed', error: (e as Error).message });
  }
}

/** The configured Agents (read once). */
export async function loadAgents(): Promise<AgentSummary[]> {
  if (agents.value) return agents.value;
  const r = await api<AgentList>('/api/v1/agents');
  agents.value = r.agents;
  return r.agents;
}

let started = false;

/** Follows the live stream (once per page). */
export function startTasks(): void {
  if (started) return;
  started = true;
  subscribe({
    task(change) {
      dispatch({ type: 'change', change });
    },
    resync() {
      void loadTasks();
    },
  });
}
