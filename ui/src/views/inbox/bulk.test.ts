import { describe, expect, it } from 'vitest';
import type { PendingInteraction } from '../../api/types';
import { alike, commonOptions, originWords } from './bulk';

const card = (id: string, command: string, more: Partial<PendingInteraction> = {}): PendingInteraction => ({
  interactionId: id,
  taskId: 't' + id,
  raisedAt: '2026-12-01T10:00:00.000Z',
  kind: 'tool_approval',
  title: 'Run this shell command?',
  command,
  options: [
    { id: 'accept', label: 'Yes, run it', shortcut: 'y' },
    { id: 'decline', label: 'No', shortcut: 'n' },
  ],
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
  sessionId: 's' + id,
  sessionUrl: 'http://x/sessions/s',
  taskState: 'TASK_STATE_AUTH_REQUIRED',
  answerUrl: 'http://x/answer',
  ...more,
});

describe('bulk answers', () => {
  it('finds the cards that ask exactly the same', () => {
    const items = [card('a', 'df -h'), card('b', 'df -h'), card('c', 'df -h '), card('d', 'df -h', { agentId: 'other' })];
    expect(alike(items, items[0]).map((i) => i.interactionId)).toEqual(['a', 'b']);
  });

  it('offers only the options every selected card shares, and none for forms', () => {
    const a = card('a', 'x');
    const b = card('b', 'x', { options: [{ id: 'decline', label: 'No' }] });
    expect(commonOptions([a, b]).map((o) => o.id)).toEqual(['decline']);
    expect(commonOptions([a, card('c', 'x', { options: [{ id: 'decline', label: 'Nope' }] })])).toEqual([]);
    expect(commonOptions([a, card('f', 'x', { fields: [{ id: 'v', label: 'V', required: true, secret: false }] })])).toEqual([]);
    expect(commonOptions([])).toEqual([]);
  });

  it('says where a card comes from', () => {
    expect(originWords(card('a', 'x', { scheduleId: 's1', scheduleName: 'Nightly' }))).toBe('schedule “Nightly”');
    expect(originWords(card('a', 'x', { caller: 'peer:sextant:ci', callerKind: 'peer' }))).toBe('peer ci');
    expect(originWords(card('a', 'x', { caller: 'assistant:ws:bot', callerKind: 'assistant' }))).toBe('assistant bot');
    expect(originWords(card('a', 'x'))).toBe('you');
  });
});
