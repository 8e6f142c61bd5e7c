// The approvals inbox's state: every pending interaction, newest first. Pure reducer; the
// store (store.ts) feeds it from `GET /api/v1/interactions` and the live stream.

import type { PendingInteraction } from '../../api/types';

export interface InboxState {
  status: 'loading' | 'ready' | 'error';
  error?: string;
  items: PendingInteraction[];
  /**
   * Interactions known to be answered (here or elsewhere) or ended: a list read that started
   * before the answer must not bring them back.
   */
  gone: Set<string>;
}

export type InboxAction =
  | { type: 'loaded'; items: PendingInteraction[] }
  | { type: 'failed'; error: string }
  | { type: 'answered'; interactionId: string }
  | { type: 'taskEnded'; taskId: string };

export const initialInbox: InboxState = { status: 'loading', items: [], gone: new Set() };

const newestFirst = (a: PendingInteraction, b: PendingInteraction) =>
  Date.parse(b.raisedAt) - Date.parse(a.raisedAt) || b.interactionId.localeCompare(a.interactionId);

export function inboxReducer(s: InboxState, a: InboxAction): InboxState {
  switch (a.type) {
    case 'loaded': {
      const items = a.items.filter((i) => !s.gone.has(i.interactionId)).sort(newestFirst);
      return { ...s, status: 'ready', error: undefined, items };
    }
    case 'failed':
      return { ...s, status: s.status === 'ready' ? 'ready' : 'error', error: a.error };
    case 'answered': {
      const gone = new Set(s.gone).add(a.interactionId);
      return { ...s, gone, items: s.items.filter((i) => i.interactionId !== a.interactionId) };
    }
    case 'taskEnded': {
      const ended = s.items.filter((i) => i.taskId === a.taskId);
      if (ended.length === 0) return s;
      const gone = new Set(s.gone);
      ended.forEach((i) => gone.add(i.interactionId));
      return { ...s, gone, items: s.items.filter((i) => i.taskId !== a.taskId) };
    }
  }
}

/** The page title: the pending count first, so it shows in a tab strip. */
export function pageTitle(pending: number, view?: string): string {
  const base = view ? `${view} · Sextant` : 'Sextant';
  return pending > 0 ? `(${pending}) ${base}` : base;
}
