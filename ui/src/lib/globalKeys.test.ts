import { describe, expect, it } from 'vitest';
import { globalKey, SEQUENCE_MS } from './globalKeys';

describe('global keys', () => {
  it('goes somewhere on g then a letter, soon after', () => {
    const g = globalKey({ gAt: null }, { key: 'g' }, 1000);
    expect(g.action).toEqual({ type: 'pending' });
    expect(globalKey(g.state, { key: 'i' }, 1200).action).toEqual({ type: 'go', to: '/inbox' });
    expect(globalKey(g.state, { key: 't' }, 1200).action).toEqual({ type: 'go', to: '/tasks' });
    expect(globalKey(g.state, { key: 's' }, 1200).action).toEqual({ type: 'go', to: '/schedules' });
    expect(globalKey(g.state, { key: 's' }, 1000 + SEQUENCE_MS + 1).action).toEqual({ type: 'none' });
    expect(globalKey({ gAt: null }, { key: 'i' }, 1200).action).toEqual({ type: 'none' });
  });

  it('searches on /, helps on ?, and leaves fields and modified keys alone', () => {
    expect(globalKey({ gAt: null }, { key: '/' }, 0).action).toEqual({ type: 'search' });
    expect(globalKey({ gAt: null }, { key: '?' }, 0).action).toEqual({ type: 'help' });
    expect(globalKey({ gAt: null }, { key: '/', inField: true }, 0).action).toEqual({ type: 'none' });
    expect(globalKey({ gAt: null }, { key: 'g', ctrl: true }, 0).action).toEqual({ type: 'none' });
    expect(globalKey({ gAt: 5 }, { key: 'i', inField: true }, 6).action).toEqual({ type: 'none' });
  });
});
