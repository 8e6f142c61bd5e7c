import { describe, expect, it } from 'vitest';
import type { Run } from '../../api/types';
import { initialRuns, runsReducer } from './runs';

// Only its id matters to the reducer.
const run = (id: string): Run => ({ id }) as Run;
const ids = (list: Run[]) => list.map((r) => r.id);

describe('runs reducer', () => {
  it('shows the first page once read, and keeps it when a refresh fails', () => {
    const s = runsReducer(initialRuns, { type: 'loaded', runs: [run('b'), run('a')], total: 7, next: 'c1' });
    expect(s).toMatchObject({ status: 'ready', total: 7, next: 'c1' });
    expect(ids(s.list)).toEqual(['b', 'a']);
    const failed = runsReducer(s, { type: 'failed', error: 'down' });
    expect(failed).toMatchObject({ status: 'ready', error: 'down' });
    expect(ids(failed.list)).toEqual(['b', 'a']);
    expect(runsReducer(initialRuns, { type: 'failed', error: 'down' }).status).toBe('error');
    expect(runsReducer(failed, { type: 'loaded', runs: [], total: 0, next: null }).error).toBeUndefined();
  });

  it('appends an older page below, with its cursor', () => {
    let s = runsReducer(initialRuns, { type: 'loaded', runs: [run('d'), run('c')], total: 4, next: 'c1' });
    s = runsReducer(s, { type: 'more', runs: [run('b'), run('a')], next: null });
    expect(ids(s.list)).toEqual(['d', 'c', 'b', 'a']);
    expect(s.next).toBeNull();
    expect(s.total).toBe(4);
  });

  it('puts a started Run first, once, and counts it', () => {
    let s = runsReducer(initialRuns, { type: 'loaded', runs: [run('a')], total: 1, next: null });
    s = runsReducer(s, { type: 'started', run: run('b') });
    expect(ids(s.list)).toEqual(['b', 'a']);
    expect(s.total).toBe(2);
    s = runsReducer(s, { type: 'started', run: run('a') });
    expect(ids(s.list)).toEqual(['a', 'b']);
  });
});
