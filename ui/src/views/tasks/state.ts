// The live task list: `GET /api/v1/tasks` (filtered by Agent and status), then every `task`
// event from the live stream applied in place. Pure reducer. The filter lives in the page's
// URL (`/tasks?agent=shell&status=canceled`), so reload, back and a shared link keep it.

import type { TaskChange, TaskSummary } from '../../api/types';
import { statusMatches } from '../../lib/format';

export interface TaskFilter {
  agent: string;
  /** Where the task is (`unfinished`, `waiting`, `active`) or how it ended (an outcome). */
  status: string;
}

export interface TasksState {
  status: 'loading' | 'ready' | 'error';
  error?: string;
  filter: TaskFilter;
  tasks: TaskSummary[];
  total: number;
  nextCursor: string | null;
  /** Task ids that changed in the last moments (the view highlights them). */
  flash: Set<string>;
  /**
   * Changes that arrived while the list was being read: the read may have been answered
   * before they happened, so they are applied on top of it.
   */
  buffer: TaskChange[];
}

export type TasksAction =
  | { type: 'filter'; filter: TaskFilter }
  | { type: 'loaded'; tasks: TaskSummary[]; total: number; nextCursor: string | null; append?: boolean }
  | { type: 'failed'; error: string }
  | { type: 'change'; change: TaskChange }
  | { type: 'unflash'; taskId: string };

export const noFilter: TaskFilter = { agent: '', status: '' };

export const initialTasks: TasksState = {
  status: 'loading',
  filter: noFilter,
  tasks: [],
  total: 0,
  nextCursor: null,
  flash: new Set(),
  buffer: [],
};

/** Whether a task passes the filter. */
export function matches(f: TaskFilter, t: { agentId: string; state: string; outcome?: string | null }): boolean {
  const agent = !f.agent || (f.agent.endsWith('*') ? t.agentId.startsWith(f.agent.slice(0, -1)) : t.agentId === f.agent);
  return agent && statusMatches(f.status, t);
}

const byActivity = (a: TaskSummary, b: TaskSummary) =>
  Date.parse(b.stateAt) - Date.parse(a.stateAt) || b.taskId.localeCompare(a.taskId);

/** A task row updated by a live change, or a new row for a task not seen yet. */
export function applyChange(t: TaskSummary | undefined, c: TaskChange): TaskSummary {
  if (!t) {
    return {
      taskId: c.taskId,
      sessionId: c.sessionId,
      agentId: c.agentId,
      caller: c.caller,
      contextId: c.contextId,
      messageId: '',
      createdAt: c.at,
      state: c.state,
      stateAt: c.at,
      lastSeq: c.seq,
      outcome: c.outcome,
    };
  }
  // A change older than what the row already shows (read after it happened) is stale.
  if (c.seq < t.lastSeq) return t;
  return { ...t, state: c.state, stateAt: c.at, lastSeq: c.seq, outcome: c.outcome };
}

export function tasksReducer(s: TasksState, a: TasksAction): TasksState {
  switch (a.type) {
    case 'filter':
      return { ...initialTasks, filter: a.filter };
    case 'loaded': {
      const tasks = a.append ? [...s.tasks, ...a.tasks.filter((t) => !s.tasks.some((o) => o.taskId === t.taskId))] : a.tasks;
      const read: TasksState = { ...s, status: 'ready', error: undefined, tasks, total: a.total, nextCursor: a.nextCursor, buffer: [] };
      // Stale changes are dropped by their seq (applyChange), so replaying is safe.
      return s.buffer.reduce((acc, change) => tasksReducer(acc, { type: 'change', change }), read);
    }
    case 'failed':
      return { ...s, status: s.status === 'ready' ? 'ready' : 'error', error: a.error };
    case 'change': {
      if (s.status !== 'ready') return { ...s, buffer: [...s.buffer, a.change] };
      const c = a.change;
      const i = s.tasks.findIndex((t) => t.taskId === c.taskId);
      const before = i >= 0 ? s.tasks[i] : undefined;
      const after = applyChange(before, c);
      if (after === before) return s;
      const rest = s.tasks.filter((t) => t.taskId !== c.taskId);
      const flash = new Set(s.flash).add(c.taskId);
      if (!matches(s.filter, after)) {
        return before ? { ...s, tasks: rest, total: Math.max(0, s.total - 1), flash } : s;
      }
      return {
        ...s,
        tasks: [after, ...rest].sort(byActivity),
        total: before ? s.total : s.total + 1,
        flash,
      };
    }
    case 'unflash': {
      if (!s.flash.has(a.taskId)) return s;
      const flash = new Set(s.flash);
      flash.delete(a.taskId);
      return { ...s, flash };
    }
  }
}

/** The query string of a filter. */
export function filterQuery(f: TaskFilter, cursor?: string | null): string {
  const q = new URLSearchParams();
  if (f.agent) q.set('agent', f.agent);
  if (f.status) q.set('status', f.status);
  if (cursor) q.set('cursor', cursor);
  q.set('limit', '50');
  return q.toString();
}

/** The filter a page URL's query holds (`?agent=…&status=…`). */
export function filterFromSearch(search: string): TaskFilter {
  const q = new URLSearchParams(search);
  return { agent: q.get('agent') ?? '', status: q.get('status') ?? '' };
}

/** The page URL's query for a filter (empty values left out). */
export function searchOf(f: TaskFilter): string {
  const q = new URLSearchParams();
  if (f.agent) q.set('agent', f.agent);
  if (f.status) q.set('status', f.status);
  const s = q.toString();
  return s ? `?${s}` : '';
}
