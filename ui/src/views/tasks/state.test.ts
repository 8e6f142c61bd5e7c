import { describe, expect, it } from 'vitest';
import type { TaskChange, TaskState, TaskSummary } from '../../api/types';
import { filterFromSearch, filterQuery, groupTasks, initialTasks, matches, MAX_ROWS, noFilter, originOf, searchOf, tasksReducer, type TaskFilter, type TasksState } from './state';

const NOW = Date.parse('2026-12-01T12:00:00.000Z');

const task = (id: string, state: TaskState, stateAt: string, agentId = 'shell', lastSeq = 3): TaskSummary => ({
  taskId: id,
  sessionId: 's-' + id,
  agentId,
  caller: 'person:sextant:owner',
  contextId: 'c',
  messageId: 'm',
  createdAt: '2026-12-01T10:00:00.000Z',
  state,
  stateAt,
  lastSeq,
  outcome: null,
  title: `task ${id}`,
  result: null,
  origin: 'a2a',
  callerKind: 'person',
  scheduleId: null,
  scheduleName: null,
  matched: null,
});

const change = (taskId: string, state: TaskState, at: string, seq: number, agentId = 'shell', more: Partial<TaskChange> = {}): TaskChange => ({
  taskId,
  sessionId: 's-' + taskId,
  agentId,
  caller: 'person:sextant:owner',
  contextId: 'c',
  state,
  outcome: null,
  scheduleId: null,
  scheduleName: null,
  title: null,
  result: null,
  at,
  seq,
  ...more,
});

const f = (x: Partial<TaskFilter> = {}): TaskFilter => ({ ...noFilter, ...x });

function loaded(tasks: TaskSummary[], filter = noFilter): TasksState {
  const s = tasksReducer(initialTasks, { type: 'filter', filter });
  return tasksReducer(s, { type: 'loaded', tasks, total: tasks.length, nextCursor: null });
}

const apply = (s: TasksState, ...changes: TaskChange[]) => tasksReducer(s, { type: 'changes', changes, now: NOW });

describe('tasks reducer', () => {
  it('updates a task in place from a live change and moves it to the top', () => {
    let s = loaded([task('b', 'TASK_STATE_WORKING', '2026-12-01T10:02:00.000Z'), task('a', 'TASK_STATE_WORKING', '2026-12-01T10:01:00.000Z')]);
    s = apply(s, change('a', 'TASK_STATE_FAILED', '2026-12-01T10:03:00.000Z', 9, 'shell', { outcome: 'canceled', result: 'Canceled by you' }));
    expect(s.tasks.map((t) => [t.taskId, t.state, t.outcome])).toEqual([
      ['a', 'TASK_STATE_FAILED', 'canceled'],
      ['b', 'TASK_STATE_WORKING', null],
    ]);
    expect(s.tasks[0]).toMatchObject({ stateAt: '2026-12-01T10:03:00.000Z', lastSeq: 9, messageId: 'm', title: 'task a', result: 'Canceled by you' });
    expect(s.flash.has('a')).toBe(true);
  });

  it('adds a task it has not seen, with its title, and counts it', () => {
    let s = loaded([]);
    s = apply(s, change('n', 'TASK_STATE_SUBMITTED', '2026-12-01T11:00:00.000Z', 1, 'shell', { title: 'echo hi' }));
    expect(s.tasks).toHaveLength(1);
    expect(s.tasks[0]).toMatchObject({ taskId: 'n', createdAt: '2026-12-01T11:00:00.000Z', state: 'TASK_STATE_SUBMITTED', title: 'echo hi' });
    expect(s.total).toBe(1);
  });

  it('ignores a change older than the row it read', () => {
    const s = loaded([task('a', 'TASK_STATE_COMPLETED', '2026-12-01T10:05:00.000Z', 'shell', 8)]);
    expect(apply(s, change('a', 'TASK_STATE_WORKING', '2026-12-01T10:04:00.000Z', 5))).toBe(s);
  });

  it('applies the filter to live changes: tasks leave and join it', () => {
    const filter = f({ agent: 'shell', status: 'waiting' });
    let s = loaded([task('a', 'TASK_STATE_AUTH_REQUIRED', '2026-12-01T10:00:00.000Z')], filter);
    s = apply(s, change('a', 'TASK_STATE_WORKING', '2026-12-01T10:01:00.000Z', 6));
    expect(s.tasks).toEqual([]);
    s = apply(s, change('x', 'TASK_STATE_AUTH_REQUIRED', '2026-12-01T10:02:00.000Z', 2, 'echo'));
    expect(s.tasks).toEqual([]);
    s = apply(s, change('y', 'TASK_STATE_AUTH_REQUIRED', '2026-12-01T10:02:00.000Z', 2));
    expect(s.tasks.map((t) => t.taskId)).toEqual(['y']);
  });

  it('matches a caller, a schedule, a peer prefix and a time window itself', () => {
    const base = loaded([], f({ agent: 'peer:*', schedule: 'sch', since: '1h' }));
    const ok = change('p', 'TASK_STATE_SUBMITTED', '2026-12-01T11:30:00.000Z', 1, 'peer:helper', { scheduleId: 'sch' });
    expect(apply(base, ok).tasks).toHaveLength(1);
    expect(apply(base, { ...ok, agentId: 'shell' }).tasks).toHaveLength(0);
    expect(apply(base, { ...ok, scheduleId: null }).tasks).toHaveLength(0);
    expect(apply(base, { ...ok, at: '2026-12-01T10:30:00.000Z' }).tasks).toHaveLength(0);
  });

  it('counts new tasks of a text search as newer: only the server can match them', () => {
    let s = loaded([task('a', 'TASK_STATE_WORKING', '2026-12-01T10:00:00.000Z')], f({ q: 'deploy' }));
    s = apply(s, change('n', 'TASK_STATE_SUBMITTED', '2026-12-01T11:00:00.000Z', 1), change('n', 'TASK_STATE_WORKING', '2026-12-01T11:00:01.000Z', 2));
    expect(s.tasks.map((t) => t.taskId)).toEqual(['a']);
    expect(s.newer).toBe(1);
    // A listed task still updates in place.
    s = apply(s, change('a', 'TASK_STATE_COMPLETED', '2026-12-01T11:01:00.000Z', 9));
    expect(s.tasks[0].state).toBe('TASK_STATE_COMPLETED');
  });

  it('stays bounded: a burst beyond MAX_ROWS is counted, not rendered, in one pass', () => {
    let s = loaded([]);
    const burst = Array.from({ length: 1000 }, (_, i) => change(`t${String(i).padStart(4, '0')}`, 'TASK_STATE_SUBMITTED', new Date(NOW - 1000 + i).toISOString(), 1));
    s = apply(s, ...burst);
    expect(s.tasks).toHaveLength(MAX_ROWS);
    expect(s.newer).toBe(1000 - MAX_ROWS);
    expect(s.total).toBe(MAX_ROWS);
    // Reading the list again clears the count.
    s = tasksReducer(s, { type: 'loaded', tasks: [], total: 1000, nextCursor: 'c' });
    expect(s.newer).toBe(0);
  });

  it('keeps live changes that arrive during a read, and applies them on top of it', () => {
    // The read was answered before task "n" existed; its changes came in meanwhile.
    let s = tasksReducer(initialTasks, { type: 'filter', filter: noFilter });
    s = apply(s, change('n', 'TASK_STATE_SUBMITTED', '2026-12-01T11:00:00.000Z', 1));
    s = apply(s, change('n', 'TASK_STATE_AUTH_REQUIRED', '2026-12-01T11:00:01.000Z', 4));
    s = apply(s, change('a', 'TASK_STATE_WORKING', '2026-12-01T09:00:00.000Z', 2));
    expect(s.tasks).toEqual([]);
    s = tasksReducer(s, { type: 'loaded', tasks: [task('a', 'TASK_STATE_COMPLETED', '2026-12-01T10:00:00.000Z', 'shell', 7)], total: 1, nextCursor: null });
    expect(s.tasks.map((t) => [t.taskId, t.state])).toEqual([
      ['n', 'TASK_STATE_AUTH_REQUIRED'],
      ['a', 'TASK_STATE_COMPLETED'],
    ]);
    expect(s.buffer).toEqual([]);
  });

  it('keeps changes during a read of the same filter, applied at once and again on the read', () => {
    let s = loaded([task('a', 'TASK_STATE_WORKING', '2026-12-01T10:00:00.000Z', 'shell', 3)]);
    s = tasksReducer(s, { type: 'reading' });
    s = apply(s, change('a', 'TASK_STATE_COMPLETED', '2026-12-01T10:01:00.000Z', 5));
    expect(s.tasks[0].state).toBe('TASK_STATE_COMPLETED');
    // The read was answered before the change: the change still wins.
    s = tasksReducer(s, { type: 'loaded', tasks: [task('a', 'TASK_STATE_WORKING', '2026-12-01T10:00:00.000Z', 'shell', 3)], total: 1, nextCursor: null });
    expect(s.tasks[0].state).toBe('TASK_STATE_COMPLETED');
    expect(s.reading).toBe(false);
  });

  it('leaves a change older than the oldest row of a partial page to the pages below', () => {
    // The first page of many: a live change for a task further down, delivered after the read
    // that had it in a later page, is not a new row at the top.
    const page = [task('b', 'TASK_STATE_COMPLETED', '2026-12-01T10:02:00.000Z'), task('a', 'TASK_STATE_COMPLETED', '2026-12-01T10:01:00.000Z')];
    let s = tasksReducer(tasksReducer(initialTasks, { type: 'filter', filter: noFilter }), { type: 'loaded', tasks: page, total: 900, nextCursor: 'c' });
    expect(apply(s, change('old', 'TASK_STATE_COMPLETED', '2026-12-01T10:00:30.000Z', 4))).toBe(s);
    // A change after the oldest row's is newer activity: it joins the list.
    s = apply(s, change('moved', 'TASK_STATE_COMPLETED', '2026-12-01T10:03:00.000Z', 4));
    expect(s.tasks.map((t) => t.taskId)).toEqual(['moved', 'b', 'a']);
  });

  it('appends a further page without duplicates', () => {
    let s = loaded([task('a', 'TASK_STATE_WORKING', '2026-12-01T10:00:00.000Z')]);
    s = tasksReducer(s, {
      type: 'loaded',
      append: true,
      tasks: [task('a', 'TASK_STATE_WORKING', '2026-12-01T10:00:00.000Z'), task('b', 'TASK_STATE_WORKING', '2026-12-01T09:00:00.000Z')],
      total: 2,
      nextCursor: null,
    });
    expect(s.tasks.map((t) => t.taskId)).toEqual(['a', 'b']);
  });
});

describe('filters in the URL', () => {
  it('sends only the filters that are set, a time window as its start', () => {
    expect(filterQuery(noFilter)).toBe('limit=50');
    expect(filterQuery(f({ agent: 'shell', status: 'canceled', q: ' deploy prod ' }), 'abc')).toBe('q=deploy+prod&agent=shell&status=canceled&cursor=abc&limit=50');
    expect(filterQuery(f({ since: '1h' }), null, NOW)).toBe('from=2026-12-01T11%3A00%3A00.000Z&limit=50');
  });

  it('round-trips through the page URL, grouping included', () => {
    const x = f({ q: 'a&b=c', agent: 'peer:*', status: 'declined', caller: 'peer:sextant:ci', schedule: 's1', origin: 'agents', since: '7d' });
    expect(filterFromSearch(searchOf(x, 'caller'))).toEqual({ ...x, group: 'caller' });
    expect(searchOf(noFilter)).toBe('');
    expect(filterFromSearch('?status=waiting&group=nonsense')).toEqual({ ...noFilter, status: 'waiting', group: '' });
  });
});

describe('origin', () => {
  const mine = task('a', 'TASK_STATE_WORKING', '2026-12-01T10:03:00.000Z');
  const local = { ...mine, caller: 'anonymous-local:loopback:anonymous' };
  const peer = { ...mine, caller: 'peer:sextant:ci' };
  const run = { ...mine, scheduleId: 's1' };

  it('sorts a task as the server sorts its Session', () => {
    expect([mine, local, peer, run].map(originOf)).toEqual(['mine', 'mine', 'agents', 'schedules']);
  });

  it('is sent as origin= and filters live rows', () => {
    expect(filterQuery(f({ origin: 'mine' }))).toBe('origin=mine&limit=50');
    expect([mine, peer, run].map((t) => matches(f({ origin: 'agents' }), t, NOW))).toEqual([false, true, false]);
  });
});

describe('groupTasks', () => {
  it('groups by caller and schedule in the order of their newest task', () => {
    const a = { ...task('a', 'TASK_STATE_WORKING', '2026-12-01T10:03:00.000Z'), caller: 'peer:sextant:ci' };
    const b = { ...task('b', 'TASK_STATE_WORKING', '2026-12-01T10:02:00.000Z'), scheduleId: 's1', scheduleName: 'Morning' };
    const c = { ...task('c', 'TASK_STATE_WORKING', '2026-12-01T10:01:00.000Z'), caller: 'peer:sextant:ci' };
    const words = (k: string) => (k.startsWith('person:') ? 'you' : k);
    expect(groupTasks([a, b, c], 'caller', words).map((g) => [g.label, g.tasks.map((t) => t.taskId)])).toEqual([
      ['peer:sextant:ci', ['a', 'c']],
      ['you', ['b']],
    ]);
    expect(groupTasks([a, b, c], 'schedule', words).map((g) => g.label)).toEqual(['Not from a schedule', 'Morning']);
    expect(groupTasks([a, b], '', words)).toHaveLength(1);
  });

  it('groups by Session, named by its first message, in the order of its newest task', () => {
    // Two tasks of one Session (a turn and its follow-up), one of another; newest first.
    const second = { ...task('second', 'TASK_STATE_WORKING', '2026-12-01T10:03:00.000Z'), sessionId: 's-1', title: 'and now the logs' };
    const other = { ...task('other', 'TASK_STATE_COMPLETED', '2026-12-01T10:02:00.000Z'), sessionId: 's-2' };
    const first = { ...task('first', 'TASK_STATE_COMPLETED', '2026-12-01T10:01:00.000Z'), sessionId: 's-1', title: 'deploy the site' };
    const untitled = { ...task('untitled', 'TASK_STATE_COMPLETED', '2026-12-01T10:00:00.000Z'), sessionId: '01a2b3c4-0000-7000-8000-00000000abcd', title: null };
    const groups = groupTasks([second, other, first, untitled], 'session', (k) => k);
    expect(groups.map((g) => [g.key, g.tasks.map((t) => t.taskId)])).toEqual([
      ['s-1', ['second', 'first']],
      ['s-2', ['other']],
      ['01a2b3c4-0000-7000-8000-00000000abcd', ['untitled']],
    ]);
    expect(groups[0].label, 'its first message, not the latest').toBe('Session of “deploy the site”');
    expect(groups[1].label).toBe('Session of “task other”');
    expect(groups[2].label, 'a Session without a title is named by its id').toBe('Session 0000abcd');
  });
});
