// The live task list's store: reads a page of `GET /api/v1/tasks` for the filter, then applies
// the live stream's `task` events in batches (a burst of a thousand tasks is a handful of
// renders, not a thousand); re-reads after a reconnect.

import { signal } from '@preact/signals';
import type { AgentSummary, TaskChange } from '../../api/types';
import { subscribe } from '../../live/events';
import { listAgents, listTasks } from './api';
import { filterQuery, initialTasks, sameFilter, tasksReducer, type TaskFilter, type TasksAction } from './state';

export const tasks = signal(initialTasks);
export const agents = signal<AgentSummary[] | null>(null);

/** How long live changes gather before they are applied together. */
const BATCH_MS = 120;
/** How long a changed row stays highlighted. */
const FLASH_MS = 1600;

function dispatch(a: TasksAction) {
  tasks.value = tasksReducer(tasks.value, a);
}

let pending: TaskChange[] = [];
let flushTimer: ReturnType<typeof setTimeout> | null = null;

function flush() {
  flushTimer = null;
  const changes = pending;
  pending = [];
  if (changes.length === 0) return;
  dispatch({ type: 'changes', changes, now: Date.now() });
  const ids = changes.map((c) => c.taskId);
  setTimeout(() => dispatch({ type: 'unflash', taskIds: ids }), FLASH_MS);
}

/** Queues a live change; the batch is applied shortly. */
export function queueChange(c: TaskChange): void {
  pending.push(c);
  flushTimer ??= setTimeout(flush, BATCH_MS);
}

let generation = 0;

/**
 * Reads the first page for `filter` (or the current filter). A new filter starts an empty
 * list; the same one is read again in place (a reconnect, "show newer").
 */
export async function loadTasks(filter?: TaskFilter): Promise<void> {
  if (filter && (!sameFilter(filter, tasks.value.filter) || tasks.value.status === 'error')) dispatch({ type: 'filter', filter });
  const gen = ++generation;
  const f = tasks.value.filter;
  if (tasks.value.status === 'ready') dispatch({ type: 'reading' });
  try {
    const page = await listTasks(filterQuery(f));
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
    const page = await listTasks(filterQuery(s.filter, s.nextCursor));
    if (gen === generation) dispatch({ type: 'loaded', append: true, tasks: page.tasks, total: page.total, nextCursor: page.nextCursor });
  } catch (e) {
    dispatch({ type: 'failed', error: (e as Error).message });
  }
}

/** The configured Agents (read once). */
export async function loadAgents(): Promise<AgentSummary[]> {
  if (agents.value) return agents.value;
  const list = await listAgents();
  agents.value = list;
  return list;
}

let started = false;

/** Follows the live stream (once per page). */
export function startTasks(): void {
  if (started) return;
  started = true;
  subscribe({
    task: queueChange,
    resync() {
      void loadTasks();
    },
  });
}
