import { describe, expect, it } from 'vitest';
import type { DeliveryHealth } from './api';
import { healthBadge, healthSentence } from './format';

const base: DeliveryHealth = {
  state: 'idle',
  pending: 0,
  delivered: 3,
  attempts: 0,
  lastError: null,
  lastErrorAt: null,
  lastAttemptAt: null,
  lastDeliveredAt: null,
  nextAttemptAt: null,
  failingSince: null,
  finalStatePending: false,
};

describe('webhook health', () => {
  it('says a stopped webhook keeps what it owes, the final state included', () => {
    const h = { ...base, state: 'failing', pending: 2, attempts: 8, finalStatePending: true };
    expect(healthBadge(h)).toEqual({ tone: 'bad', label: 'Stopped' });
    expect(healthSentence(h)).toBe(
      'Stopped after 8 failed attempts; 2 events kept for it, the task’s final state among them. 3 events delivered.',
    );
  });

  it('reads the other states plainly', () => {
    expect(healthSentence(base)).toBe('3 events delivered; nothing waiting.');
    expect(healthBadge({ ...base, state: 'retrying' }).tone).toBe('warn');
    expect(healthSentence({ ...base, state: 'retrying', attempts: 1, pending: 1 })).toBe(
      '1 failed attempt at its next event; 1 event waiting. 3 events delivered.',
    );
    expect(healthSentence({ ...base, state: 'delivering', pending: 4, delivered: 1 })).toBe('4 events on the way. 1 event delivered.');
  });
});
