import { describe, expect, it } from 'vitest';
import type { Run, Schedule } from '../../api/types';
import { initialSchedules, schedulesReducer } from './state';

// Only the fields the reducer reads (ids) matter here.
const sched = (id: string, name = id): Schedule => ({ id, name }) as Schedule;
const run = (id: string, scheduleId: string): Run => ({ id, schedule_id: scheduleId }) as Run;

describe('schedules reducer', () => {
  it('shows the list once read, and keeps it when a refresh fails', () => {
    const s = schedulesReducer(initialSchedules, { type: 'loaded', list: [sched('a'), sched('b')] });
    expect(s.status).toBe('ready');
    expect(s.list.map((x) => x.id)).toEqual(['a', 'b']);
    const failed = schedulesReducer(s, { type: 'failed', error: 'down' });
    expect(failed).toMatchObject({ status: 'ready', error: 'down' });
    expect(failed.list).toHaveLength(2);
    expect(schedulesReducer(initialSchedules, { type: 'failed', error: 'down' }).status).toBe('error');
  });

  it('replaces a saved schedule in place and drops a deleted one', () => {
    let s = schedulesReducer(initialSchedules, { type: 'loaded', list: [sched('a'), sched('b')] });
    s = schedulesReducer(s, { type: 'saved', schedule: sched('b', 'renamed') });
    expect(s.list.map((x) => x.name)).toEqual(['a', 'renamed']);
    s = schedulesReducer(s, { type: 'deleted', id: 'a' });
    expect(s.list.map((x) => x.id)).toEqual(['b']);
  });

  it('puts a created schedule first, known to have no Run yet', () => {
    const s = schedulesReducer(initialSchedules, { type: 'created', schedule: sched('new') });
    expect(s.status).toBe('ready');
    const t = schedulesReducer({ ...s, list: [...s.list, sched('old')] }, { type: 'created', schedule: sched('newer') });
    expect(t.list.map((x) => x.id)).toEqual(['newer', 'new', 'old']);
    expect(t.lastRuns).toEqual({ new: null, newer: null });
  });

  it('keeps each schedule’s last Run, and forgets everything on reset', () => {
    let s = schedulesReducer(initialSchedules, { type: 'lastRun', scheduleId: 'a', run: run('r1', 'a') });
    s = schedulesReducer(s, { type: 'lastRun', scheduleId: 'a', run: run('r2', 'a') });
    s = schedulesReducer(s, { type: 'lastRun', scheduleId: 'b', run: null });
    expect(s.lastRuns).toEqual({ a: run('r2', 'a'), b: null });
    expect(schedulesReducer(s, { type: 'reset' })).toBe(initialSchedules);
  });
});
