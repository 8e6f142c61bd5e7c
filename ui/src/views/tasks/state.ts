// The live task list: `GET /api/v1/tasks` for a filter, then the live stream's `task` events
// applied in place, in batches. Pure reducer.
//
// The filter lives in the page's URL (`/tasks?q=deploy&agent=shell&status=canceled&group=caller`),
// so reload, back and a shared link keep it. The list stays bounded: it never holds more than
// MAX_ROWS rows, and tasks that arrive beyond that, or that the console cannot match itself
// (a text search is the server's), are counted as "newer" for the person to show.

import type { TaskChange, TaskSummary } from '../../api/types';
import { statusMatches } from '../../lib/format';

export interface TaskFilter {
  /** Words to find in the tasks' text (the server searches). */
  q: string;
  agent: string;
  /** Where the task is (`unfinished`, `waiting`, `active`) or how it ended (an outcome). */
  status: string;
  /** A caller's principal key. */
  caller: string;
  /** A schedule id: its Runs' tasks. */
  schedule: string;
  /** Who the tasks are from: `mine`, `agents` (other agents') or `schedules` (see ORIGINS). */
  origin: string;
  /** Created within this long: `1h`, `24h`, `7d`, `30d`. */
  since: string;
}

/** How the list is grouped (view only, kept in the URL too). */
export type Grouping = '' | 'session' | 'caller' | 'schedule';

/** The most rows the live list holds. */
export const MAX_ROWS = 200;

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
  /** New tasks that match (or may match) but were not added: the list is full, or searched. */
  newer: number;
  /** A read of the shown filter is in flight: changes are applied and kept for it too. */
  reading: boolean;
}

export type TasksAction =
  | { type: 'filter'; filter: TaskFilter }
  | { type: 'reading' }
  | { type: 'loaded'; tasks: TaskSummary[]; total: number; nextCursor: string | null; append?: boolean }
  | { type: 'failed'; error: string }
  | { type: 'changes'; changes: TaskChange[]; now: number }
  | { type: 'unflash'; taskIds: string[] };

export const noFilter: TaskFilter = { q: '', agent: '', status: '', caller: '', schedule: '', origin: '', since: '' };

/** The `origin` choices, in words: the API's `origin=` words. */
export const ORIGINS: [string, string][] = [
  ['mine', 'Mine'],
  ['agents', 'From other agents'],
  ['schedules', 'From schedules'],
];

/**
 * The `origin` word of a task, as the server sorts its Session: a schedule's Run, else the
 * person's own (signed in, or at this machine without a token), else another agent's.
 */
export function originOf(t: Pick<TaskSummary, 'caller' | 'scheduleId'>): string {
  if (t.scheduleId) return 'schedules';
  const kind = t.caller.split(':')[0];
  return kind === 'person' || kind === 'anonymous-local' ? 'mine' : 'agents';
}

export const initialTasks: TasksState = {
  status: 'loading',
  filter: noFilter,
  tasks: [],
  total: 0,
  nextCursor: null,
  flash: new Set(),
  buffer: [],
  newer: 0,
  reading: false,
};

const SINCE_MS: Record<string, number> = { '1h': 3_600_000, '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 };

/** The `since` choices, in words. */
export const SINCE_CHOICES: [string, string][] = [
  ['1h', 'Last hour'],
  ['24h', 'Last 24 hours'],
  ['7d', 'Last 7 days'],
  ['30d', 'Last 30 days'],
];

/** The earliest creation time `since` allows at `now`, or null. */
export function sinceStart(since: string, now: number): number | null {
  const ms = SINCE_MS[since];
  return ms ? now - ms : null;
}

/**
 * Whether a task passes the filter, as far as the console can tell: `null` when it cannot (a
 * text search, which only the server can answer).
 */
export function matches(f: TaskFilter, t: Pick<TaskSummary, 'agentId' | 'state' | 'outcome' | 'caller' | 'scheduleId' | 'createdAt'>, now: number): boolean | null {
  const agent = !f.agent || (f.agent.endsWith('*') ? t.agentId.startsWith(f.agent.slice(0, -1)) : t.agentId === f.agent);
  const start = sinceStart(f.since, now);
  const ok =
    agent &&
    statusMatches(f.status, t) &&
    (!f.caller || t.caller === f.caller) &&
    (!f.schedule || t.scheduleId === f.schedule) &&
    (!f.origin || originOf(t) === f.origin) &&
    (start === null || Date.parse(t.createdAt) >= start);
  if (!ok) return false;
  return f.q.trim() ? null : true;
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
      title: c.title,
      result: c.result,
      origin: null,
      callerKind: null,
      scheduleId: c.scheduleId,
      scheduleName: c.scheduleName,
      matched: null,
    };
  }
  // A change older than what the row already shows (read after it happened) is stale.
  if (c.seq < t.lastSeq) return t;
  return {
    ...t,
    state: c.state,
    stateAt: c.at,
    lastSeq: c.seq,
    outcome: c.outcome,
    title: t.title ?? c.title,
    result: c.result ?? t.result,
    scheduleId: t.scheduleId ?? c.scheduleId,
    scheduleName: t.scheduleName ?? c.scheduleName,
  };
}

/** Applies a batch of live changes in one pass (one render for a burst). */
function applyChanges(s: TasksState, changes: TaskChange[], now: number): TasksState {
  const rows = new Map(s.tasks.map((t) => [t.taskId, t]));
  let { total, newer } = s;
  const flash = new Set(s.flash);
  let changed = false;
  // With older pages still unread, a task the list does not hold whose change is older than
  // the list's oldest row belongs to one of those pages (the list is ordered by activity): a
  // change the live stream delivered after the read that already placed it, not a new row.
  const oldest = s.nextCursor && s.tasks.length ? Math.min(...s.tasks.map((t) => Date.parse(t.stateAt))) : null;
  for (const c of changes) {
    const before = rows.get(c.taskId);
    if (!before && oldest !== null && Date.parse(c.at) < oldest) continue;
    const after = applyChange(before, c);
    if (after === before) continue;
    const fits = matches(s.filter, after, now);
    if (before) {
      changed = true;
      flash.add(c.taskId);
      if (fits === false) {
        rows.delete(c.taskId);
        total = Math.max(0, total - 1);
      } else rows.set(c.taskId, after);
    } else if (fits === null || (fits && rows.size >= MAX_ROWS)) {
      // Only a new task counts (its first change creates it), once.
      if (c.state === 'TASK_STATE_SUBMITTED') newer += 1;
    } else if (fits) {
      changed = true;
      flash.add(c.taskId);
      rows.set(c.taskId, after);
      total += 1;
    }
  }
  if (!changed && newer === s.newer) return s;
  return { ...s, tasks: [...rows.values()].sort(byActivity), total, newer, flash };
}

export function tasksReducer(s: TasksState, a: TasksAction): TasksState {
  switch (a.type) {
    case 'filter':
      return { ...initialTasks, filter: a.filter };
    case 'reading':
      return { ...s, reading: true };
    case 'loaded': {
      const seen = new Set(s.tasks.map((t) => t.taskId));
      const tasks = a.append ? [...s.tasks, ...a.tasks.filter((t) => !seen.has(t.taskId))] : a.tasks;
      const read: TasksState = {
        ...s,
        status: 'ready',
        error: undefined,
        tasks,
        total: a.total,
        nextCursor: a.nextCursor,
        buffer: [],
        newer: a.append ? s.newer : 0,
        reading: false,
      };
      // Stale changes are dropped by their seq (applyChange), so replaying is safe; a buffered
      // new task is already in the read or was created after it (then it is newer).
      return s.buffer.length ? applyChanges(read, s.buffer, Date.now()) : read;
    }
    case 'failed':
      return { ...s, status: s.status === 'ready' ? 'ready' : 'error', error: a.error, reading: false };
    case 'changes': {
      if (s.status !== 'ready') return { ...s, buffer: [...s.buffer, ...a.changes] };
      const next = applyChanges(s, a.changes, a.now);
      return s.reading ? { ...next, buffer: [...s.buffer, ...a.changes] } : next;
    }
    case 'unflash': {
      if (!a.taskIds.some((id) => s.flash.has(id))) return s;
      const flash = new Set(s.flash);
      a.taskIds.forEach((id) => flash.delete(id));
      return { ...s, flash };
    }
  }
}

/** The API query string of a filter (a page of 50, after `cursor`). */
export function filterQuery(f: TaskFilter, cursor?: string | null, now = Date.now()): string {
  const q = new URLSearchParams();
  if (f.q.trim()) q.set('q', f.q.trim());
  if (f.agent) q.set('agent', f.agent);
  if (f.status) q.set('status', f.status);
  if (f.caller) q.set('caller', f.caller);
  if (f.schedule) q.set('schedule', f.schedule);
  if (f.origin) q.set('origin', f.origin);
  const start = sinceStart(f.since, now);
  if (start !== null) q.set('from', new Date(start).toISOString());
  if (cursor) q.set('cursor', cursor);
  q.set('limit', '50');
  return q.toString();
}

const KEYS = ['q', 'agent', 'status', 'caller', 'schedule', 'origin', 'since'] as const;

/** The filter and grouping a page URL's query holds. */
export function filterFromSearch(search: string): TaskFilter & { group: Grouping } {
  const q = new URLSearchParams(search);
  const f = { ...noFilter };
  for (const k of KEYS) f[k] = q.get(k) ?? '';
  const g = q.get('group') ?? '';
  return { ...f, group: (['session', 'caller', 'schedule'].includes(g) ? g : '') as Grouping };
}

/** The page URL's query for a filter and grouping (empty values left out). */
export function searchOf(f: TaskFilter, group: Grouping = ''): string {
  const q = new URLSearchParams();
  for (const k of KEYS) if (f[k]) q.set(k, f[k]);
  if (group) q.set('group', group);
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** Whether two filters ask the server the same. */
export function sameFilter(a: TaskFilter, b: TaskFilter): boolean {
  return KEYS.every((k) => a[k] === b[k]);
}

/** A group of the list: its key, its heading, its tasks (in list order). */
export interface TaskGroup {
  key: string;
  label: string;
  tasks: TaskSummary[];
}

/** The rows grouped by Session (named by its oldest task shown), caller or schedule, groups in the order of their newest task. */
export function groupTasks(tasks: TaskSummary[], by: Grouping, callerWords: (key: string) => string): TaskGroup[] {
  if (!by) return [{ key: '', label: '', tasks }];
  const groups = new Map<string, TaskGroup>();
  for (const t of tasks) {
    const [key, label] =
      by === 'session'
        ? [t.sessionId, t.title ? `Session of “${t.title}”` : `Session ${t.sessionId.slice(-8)}`]
        : by === 'caller'
          ? [t.caller, callerWords(t.caller)]
          : [t.scheduleId ?? '', t.scheduleId ? (t.scheduleName ?? 'A schedule') : 'Not from a schedule'];
    let g = groups.get(key);
    if (!g) groups.set(key, (g = { key, label, tasks: [] }));
    // A Session is named by its first message: the list is newest first, so by its oldest
    // task shown that has one.
    else if (by === 'session' && t.title) g.label = label;
    g.tasks.push(t);
  }
  return [...groups.values()];
}
