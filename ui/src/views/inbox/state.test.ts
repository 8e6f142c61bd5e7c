import { describe, expect, it } from 'vitest';
import type { PendingInteraction } from '../../api/types';
import { inboxReducer, initialInbox, pageTitle } from './state';

const item = (id: string, taskId: string, raisedAt: string): PendingInteraction => ({
  interactionId: id,
  taskId,
  raisedAt,
  kind: 'tool_approval',
  title: 'Run this shell command?',
  command: 'ls',
  options: [{ id: 'accept', label: 'Yes, run it', shortcut: 'y' }],
  reasonAllowed: true,
  scope: 'turn',
  defaultOption: 'decline',
  agentId: 'shell',
  agentName: 'Shell',
  caller: 'person:sextant:owner',
  callerKind: 'person',
  origin: 'a2a',
  scheduleId: null,
  scheduleName: null,
  firstMessage: null,
  contextId: 'c',
  sessionId: 's',
  sessionUrl: 'http://x/sessions/s',
  taskState: 'TASK_STATE_AUTH_REQUIRED',
  answerUrl: 'http://x/answer',
});

describe('inbox reducer', () => {
  it('lists pending interactions newest first', () => {
    const s = inboxReducer(initialInbox, {
      type: 'loaded',
      items: [item('a', 't1', '2026-12-01T10:00:00.000Z'), item('b', 't2', '2026-12-01T11:00:00.000Z')],
    });
    expect(s.status).toBe('ready');
    expect(s.items.map((i) => i.interactionId)).toEqual(['b', 'a']);
  });

  it('drops a card answered elsewhere at once, and a later stale read does not bring it back', () => {
    let s = inboxReducer(initialInbox, { type: 'loaded', items: [item('a', 't1', '2026-12-01T10:00:00.000Z')] });
    s = inboxReducer(s, { type: 'answered', interactionId: 'a' });
    expect(s.items).toEqual([]);
    s = inboxReducer(s, { type: 'loaded', items: [item('a', 't1', '2026-12-01T10:00:00.000Z')] });
    expect(s.items).toEqual([]);
  });

  it('drops the cards of a task that ended', () => {
    let s = inboxReducer(initialInbox, {
      type: 'loaded',
      items: [item('a', 't1', '2026-12-01T10:00:00.000Z'), item('b', 't2', '2026-12-01T10:00:00.000Z')],
    });
    s = inboxReducer(s, { type: 'taskEnded', taskId: 't1' });
    expect(s.items.map((i) => i.interactionId)).toEqual(['b']);
    expect(inboxReducer(s, { type: 'taskEnded', taskId: 'zz' })).toBe(s);
  });

  it('keeps showing the list when a refresh fails, and shows the error when nothing loaded', () => {
    expect(inboxReducer(initialInbox, { type: 'failed', error: 'down' })).toMatchObject({ status: 'error', error: 'down' });
    const ready = inboxReducer(initialInbox, { type: 'loaded', items: [] });
    expect(inboxReducer(ready, { type: 'failed', error: 'down' }).status).toBe('ready');
  });
});

describe('pageTitle', () => {
  it('puts the pending count first', () => {
    expect(pageTitle(0)).toBe('Sextant');
    expect(pageTitle(3, 'Inbox')).toBe('(3) Inbox · Sextant');
  });
});
