import { describe, expect, it } from 'vitest';
import type { TaskChange, TaskSummary } from '../../api/types';
import { filterFromSearch, filterQuery, initialTasks, searchOf, tasksReducer, type TasksState } from './state';

const task = (id: string, state: string, stateAt: string, agentId = 'shell', lastSeq = 3): TaskSummary => ({
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
});
const change = (taskId: string, state: string, at: string, seq: number, agentId = 'shell'): TaskChange => ({
  taskId,
  sessionId: 's-' + taskId,
  agentId,
  caller: 'person:sextant:owner',
  contextId: 'c',
  state,
  outcome: null,
  scheduleId: null,
  at,
  seq,
});

function loaded(tasks: TaskSummary[], filter = initialTasks.filter): TasksState {
  const s = tasksReducer(initialTasks, { type: 'filter', filter });
  return tasksReducer(s, { type: 'loaded', tasks, total: tasks.length, nextCursor: null });
}

describe('tasks reducer', () => {
  it('updates a task in place from a live change and moves it to the top', () => {
    let s = loaded([task('b', 'TASK_STATE_WORKING', '2026-12-01T10:02:00.000Z'), task('a', 'TASK_STATE_WORKING', '2026-12-01T10:01:00.000Z')]);
    s = tasksReducer(s, { type: 'change', change: change('a', 'TASK_STATE_COMPLETED', '2026-12-01T10:03:00.000Z', 9) });
    expect(s.tasks.map((t) => [t.taskId, t.state])).toEqual([
      ['a', 'TASK_STATE_COMPLETED'],
      ['b', 'TASK_STATE_WORKING'],
    ]);
    expect(s.tasks[0]).toMatchObject({ stateAt: '2026-12-01T10:03:00.000Z', lastSeq: 9, messageId: 'm' });
    expect(s.flash.has('a')).toBe(true);
  });

  it('adds a task it has not seen, and counts it', () => {
    let s = loaded([]);
    s = tasksReducer(s, { type: 'change', change: change('n', 'TASK_STATE_SUBMITTED', '2026-12-01T11:00:00.000Z', 1) });
    expect(s.tasks).toHaveLength(1);
    expect(s.tasks[0]).toMatchObject({ taskId: 'n', createdAt: '2026-12-01T11:00:00.000Z', state: 'TASK_STATE_SUBMITTED' });
    expect(s.total).toBe(1);
  });

  it('ignores a change older than the row it read', () => {
    const s = loaded([task('a', 'TASK_STATE_COMPLETED', '2026-12-01T10:05:00.000Z', 'shell', 8)]);
    expect(tasksReducer(s, { type: 'change', change: change('a', 'TASK_STATE_WORKING', '2026-12-01T10:04:00.000Z', 5) })).toBe(s);
  });

  it('applies the filter to live changes: tasks leave and join it', () => {
    const filter = { agent: 'shell', status: 'waiting' };
    let s = loaded([task('a', 'TASK_STATE_AUTH_REQUIRED', '2026-12-01T10:00:00.000Z')], filter);
    s = tasksReducer(s, { type: 'change', change: change('a', 'TASK_STATE_WORKING', '2026-12-01T10:01:00.000Z', 6) });
    expect(s.tasks).toEqual([]);
    s = tasksReducer(s, { type: 'change', change: change('x', 'TASK_STATE_AUTH_REQUIRED', '2026-12-01T10:02:00.000Z', 2, 'echo') });
    expect(s.tasks).toEqual([]);
    s = tasksReducer(s, { type: 'change', change: change('y', 'TASK_STATE_AUTH_REQUIRED', '2026-12-01T10:02:00.000Z', 2) });
    expect(s.tasks.map((t) => t.taskId)).toEqual(['y']);
  });

  it('keeps live changes that arrive during a read, and applies them on top of it', () => {
    // The read was answered before task "n" existed; its changes came in meanwhile.
    let s = tasksReducer(initialTasks, { type: 'filter', filter: initialTasks.filter });
    s = tasksReducer(s, { type: 'change', change: change('n', 'TASK_STATE_SUBMITTED', '2026-12-01T11:00:00.000Z', 1) });
    s = tasksReducer(s, { type: 'change', change: change('n', 'TASK_STATE_AUTH_REQUIRED', '2026-12-01T11:00:01.000Z', 4) });
    s = tasksReducer(s, { type: 'change', change: change('a', 'TASK_STATE_WORKING', '2026-12-01T09:00:00.000Z', 2) });
    expect(s.tasks).toEqual([]);
    s = tasksReducer(s, { type: 'loaded', tasks: [task('a', 'TASK_STATE_COMPLETED', '2026-12-01T10:00:00.000Z', 'shell', 7)], total: 1, nextCursor: null });
    expect(s.tasks.map((t) => [t.taskId, t.state])).toEqual([
      ['n', 'TASK_STATE_AUTH_REQUIRED'],
      ['a', 'TASK_STATE_COMPLETED'],
    ]);
    expect(s.buffer).toEqual([]);
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

describe('filterQuery', () => {
  it('sends only the filters that are set', () => {
    expect(filterQuery({ agent: '', status: '' })).toBe('limit=50');
    expect(filterQuery({ agent: 'shell', status: 'canceled' }, 'abc')).toBe('agent=shell&status=canceled&cursor=abc&limit=50');
  });

  it('round-trips through the page URL', () => {
    const f = { agent: 'peer:*', status: 'declined' };
    expect(filterFromSearch(searchOf(f))).toEqual(f);
    expect(searchOf({ agent: '', status: '' })).toBe('');
    expect(filterFromSearch('?status=waiting')).toEqual({ agent: '', status: 'waiting' });
  });
});
