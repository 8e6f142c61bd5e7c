import { describe, expect, it, vi } from 'vitest';

vi.stubGlobal('window', { location: { pathname: '/', search: '' }, addEventListener() {} });
const { match } = await import('./router');

describe('routes', () => {
  it('matches every console route, with or without a trailing slash', () => {
    expect(match('/')).toEqual({ name: 'home' });
    expect(match('/inbox/')).toEqual({ name: 'inbox' });
    expect(match('/tasks')).toEqual({ name: 'tasks' });
    expect(match('/tasks/0193-ab')).toEqual({ name: 'task', id: '0193-ab' });
    expect(match('/schedules')).toEqual({ name: 'schedules' });
    expect(match('/schedules/01a2')).toEqual({ name: 'schedule', id: '01a2' });
    expect(match('/peers/')).toEqual({ name: 'peers' });
    expect(match('/webhooks')).toEqual({ name: 'webhooks' });
    expect(match('/sessions/0193-x_y.z')).toEqual({ name: 'session', id: '0193-x_y.z' });
  });
  it('does not match anything else', () => {
    expect(match('/sessions')).toEqual({ name: 'notFound' });
    expect(match('/tasks/a/b')).toEqual({ name: 'notFound' });
    expect(match('/peers/helper')).toEqual({ name: 'notFound' });
    expect(match('/api/v1/tasks')).toEqual({ name: 'notFound' });
  });
});
