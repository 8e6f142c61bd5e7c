// Answers wait a few seconds before they are sent, so a wrong click can be taken back: the
// card shows "Answering … — Undo" meanwhile (and `u` undoes), then the answer goes, alone or,
// for several selected cards, together (the server journals each on its own). A card answered
// here leaves a placeholder of its height behind until the pointer leaves the list, so the
// next card does not slide under the pointer.

import { signal } from '@preact/signals';
import { ApiError, isNetworkError, UNREACHABLE } from '../../api/client';
import type { PendingInteraction } from '../../api/types';
import { toast } from '../../components/ui';
import { stripField } from '../../lib/format';
import { link } from '../../live/events';
import { answer, answerMany, dropCard, inbox } from './store';

/** How long an answer waits, to be undone, before it is sent. */
export const UNDO_MS = 4000;

/** Answers waiting to be sent. */
export interface Queued {
  batch: number;
  ids: string[];
  option: string;
  label: string;
  sendAt: number;
}

export const queued = signal<Queued[]>([]);
/** Cards with an answer being sent. */
export const sending = signal<Record<string, boolean>>({});
/** The last error of each card. */
export const errors = signal<Record<string, { message: string; field?: string }>>({});
/** Cards answered from this page: their option's words (the inbox leaves a placeholder). */
export const answeredHere = signal<Record<string, string>>({});

let batches = 0;
const timers = new Map<number, ReturnType<typeof setTimeout>>();

/** The waiting answer of a card, if it has one. */
export function queuedFor(id: string): Queued | undefined {
  return queued.value.find((q) => q.ids.includes(id));
}

function setError(id: string, e: { message: string; field?: string } | null) {
  const { [id]: _old, ...rest } = errors.value;
  errors.value = e ? { ...rest, [id]: e } : rest;
}

function words(e: unknown): { message: string; field?: string } {
  if (isNetworkError(e)) return { message: `Not sent: ${UNREACHABLE}` };
  if (e instanceof ApiError && e.field) return { message: stripField(e.field, e.message), field: e.field };
  return { message: (e as Error).message };
}

/**
 * Queues `option` as the answer to `items` (with the reason and values of a single card),
 * sent after UNDO_MS unless undone. Returns the batch, for `undo`.
 */
export function queueAnswers(items: PendingInteraction[], option: string, extra: { reason?: string; values?: Record<string, string> } = {}): number | null {
  const free = items.filter((i) => !queuedFor(i.interactionId) && !sending.value[i.interactionId]);
  if (free.length === 0) return null;
  const batch = ++batches;
  const label = free[0].options.find((o) => o.id === option)?.label ?? option;
  free.forEach((i) => setError(i.interactionId, null));
  queued.value = [...queued.value, { batch, ids: free.map((i) => i.interactionId), option, label, sendAt: Date.now() + UNDO_MS }];
  timers.set(
    batch,
    setTimeout(() => void send(batch, free, option, label, extra), UNDO_MS),
  );
  return batch;
}

/** Takes back a waiting answer (the latest, without a batch): nothing was sent. */
export function undo(batch?: number): boolean {
  const q = batch === undefined ? queued.value.at(-1) : queued.value.find((x) => x.batch === batch);
  if (!q) return false;
  clearTimeout(timers.get(q.batch));
  timers.delete(q.batch);
  queued.value = queued.value.filter((x) => x.batch !== q.batch);
  toast(`Undone: “${q.label}” was not sent`, 'info');
  return true;
}

async function send(batch: number, items: PendingInteraction[], option: string, label: string, extra: { reason?: string; values?: Record<string, string> }) {
  timers.delete(batch);
  queued.value = queued.value.filter((x) => x.batch !== batch);
  // Cards decided meanwhile (elsewhere, or by expiry) are not answered again.
  const pending = new Set(inbox.value.items.map((i) => i.interactionId));
  const live = items.filter((i) => pending.has(i.interactionId));
  if (live.length === 0) return;
  if (link.value !== 'live') {
    live.forEach((i) => setError(i.interactionId, { message: `Not sent: ${UNREACHABLE}` }));
    return;
  }
  sending.value = { ...sending.value, ...Object.fromEntries(live.map((i) => [i.interactionId, true])) };
  try {
    if (live.length === 1) {
      const [i] = live;
      try {
        await answer(i, option, extra);
        answeredHere.value = { ...answeredHere.value, [i.interactionId]: label };
        toast(`Answered “${label}”`, 'ok');
      } catch (e) {
        if (e instanceof ApiError && (e.status === 409 || e.status === 404)) {
          dropCard(i.interactionId);
          toast(e.status === 409 ? `Already decided: ${e.message}` : 'That task is gone', 'info');
        } else setError(i.interactionId, words(e));
      }
      return;
    }
    let results;
    try {
      results = await answerMany(live, option);
    } catch (e) {
      live.forEach((i) => setError(i.interactionId, words(e)));
      return;
    }
    const ok = results.filter((r) => r.status === 200);
    const decided = results.filter((r) => r.status === 404 || r.status === 409);
    answeredHere.value = { ...answeredHere.value, ...Object.fromEntries(ok.map((r) => [r.interactionId, label])) };
    for (const r of results) if (r.status !== 200 && !decided.includes(r)) setError(r.interactionId, { message: r.message ?? `refused (${r.status})` });
    toast(`Answered “${label}” on ${ok.length} of ${results.length}${decided.length ? ` (${decided.length} decided already)` : ''}`, ok.length ? 'ok' : 'info');
  } finally {
    const rest = { ...sending.value };
    live.forEach((i) => delete rest[i.interactionId]);
    sending.value = rest;
  }
}

/** Forgets the placeholders of cards answered here (the pointer left the list). */
export function clearAnsweredHere(): void {
  if (Object.keys(answeredHere.value).length) answeredHere.value = {};
}
