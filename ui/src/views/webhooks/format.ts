// How a webhook's delivery health reads: a badge and one plain sentence.

import type { Tone } from '../../lib/format';
import type { DeliveryHealth } from './api';

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The badge of a delivery state. */
export function healthBadge(h: DeliveryHealth): { tone: Tone; label: string } {
  switch (h.state) {
    case 'failing':
      return { tone: 'bad', label: 'Stopped' };
    case 'retrying':
      return { tone: 'warn', label: 'Retrying' };
    case 'delivering':
      return { tone: 'info', label: 'Delivering' };
    default:
      return { tone: 'ok', label: 'Up to date' };
  }
}

/** What is going on, in one sentence. */
export function healthSentence(h: DeliveryHealth): string {
  const owed = h.pending;
  const done = `${plural(h.delivered, 'event')} delivered`;
  if (h.state === 'failing') {
    const final = h.finalStatePending ? ', the task’s final state among them' : '';
    return `Stopped after ${plural(h.attempts, 'failed attempt')}; ${plural(owed, 'event')} kept for it${final}. ${done}.`;
  }
  if (h.state === 'retrying') {
    return `${plural(h.attempts, 'failed attempt')} at its next event; ${plural(owed, 'event')} waiting. ${done}.`;
  }
  if (h.state === 'delivering') return `${plural(owed, 'event')} on the way. ${done}.`;
  return `${done}; nothing waiting.`;
}
