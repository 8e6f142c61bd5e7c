// The inbox store: the pending interactions every view shares (the inbox, the page title, the
// overview, inline cards in transcripts), kept current from the live stream.

import { computed, signal } from '@preact/signals';
import { newMessageId } from '../../api/client';
import type { AnswerReply, PendingInteraction } from '../../api/types';
import { isTerminal } from '../../lib/format';
import { host } from '../../host';
import { subscribe } from '../../live/events';
import { navigate } from '../../router';
import { answerInteraction, answerInteractions, listInteractions } from './api';
import { initialInbox, inboxReducer, type InboxAction } from './state';

export const inbox = signal(initialInbox);
export const pendingCount = computed(() => inbox.value.items.length);

function dispatch(a: InboxAction) {
  inbox.value = inboxReducer(inbox.value, a);
}

let loading: Promise<void> | null = null;
let again = false;

/** Re-reads the pending list (coalesced: at most one read in flight, plus one queued). */
export function reloadInbox(): Promise<void> {
  if (loading) {
    again = true;
    return loading;
  }
  loading = (async () => {
    try {
      dispatch({ type: 'loaded', items: await listInteractions() });
    } catch (e) {
      dispatch({ type: 'failed', error: (e as Error).message });
    } finally {
      loading = null;
      if (again) {
        again = false;
        void reloadInbox();
      }
    }
  })();
  return loading;
}

let started = false;

/** Loads the inbox and follows the live stream (once per page). */
export function startInbox(): void {
  if (started) return;
  started = true;
  void reloadInbox();
  subscribe({
    interaction(c) {
      if (c.type === 'answered') dispatch({ type: 'answered', interactionId: c.interactionId });
      else {
        // The raised event lacks the task's Agent and caller: read the list again.
        const known = new Set(inbox.value.items.map((i) => i.interactionId));
        void reloadInbox().then(() => {
          const fresh = inbox.value.items.find((i) => i.interactionId === c.interactionId && !known.has(i.interactionId));
          if (fresh) notifyNew(fresh);
        });
      }
    },
    task(c) {
      if (isTerminal(c.state)) dispatch({ type: 'taskEnded', taskId: c.taskId });
    },
    resync() {
      void reloadInbox();
    },
  });
  pendingCount.subscribe((n) => host().setBadge?.(n));
}

function notifyNew(i: PendingInteraction) {
  host().notify?.({
    title: i.title,
    body: `${i.agentName ?? i.agentId}: ${i.command ?? i.description ?? 'needs your decision'}`,
    onClick: () => navigate('/inbox'),
  });
}

/** Message ids per interaction and answer, so a retry of the same answer is the same answer. */
const messageIds = new Map<string, string>();

function messageIdFor(i: PendingInteraction, option: string, extra: { reason?: string; values?: Record<string, string> }): string {
  const key = `${i.interactionId}\n${option}\n${extra.reason ?? ''}\n${JSON.stringify(extra.values ?? {})}`;
  let messageId = messageIds.get(key);
  if (!messageId) {
    messageId = newMessageId('console-answer');
    messageIds.set(key, messageId);
  }
  return messageId;
}

/** One answer of several sent together, and what came of it. */
export interface ManyResult {
  interactionId: string;
  status: number;
  message?: string;
}

/**
 * Answers several cards with one option in one request; the server journals each as its own
 * answer. Cards it took (or that were decided already) leave the inbox.
 */
export async function answerMany(items: PendingInteraction[], option: string): Promise<ManyResult[]> {
  // Each answer carries the digest of the action its card showed (the server refuses any other).
  const answers = items.map((i) => ({
    interaction_id: i.interactionId,
    task_id: i.taskId,
    option,
    message_id: messageIdFor(i, option, {}),
    ...(i.action?.digest ? { digest: i.action.digest } : {}),
  }));
  const reply = await answerInteractions(answers);
  for (const r of reply.results) {
    if (r.status === 200 || r.status === 404 || r.status === 409) dispatch({ type: 'answered', interactionId: r.interactionId });
  }
  return reply.results.map((r) => ({ interactionId: r.interactionId, status: r.status, message: r.error?.message }));
}

/** Answers as the person; the card disappears once the server accepted it. */
export async function answer(
  i: PendingInteraction,
  option: string,
  extra: { reason?: string; values?: Record<string, string> } = {},
): Promise<AnswerReply> {
  const body: Record<string, unknown> = { task_id: i.taskId, option, message_id: messageIdFor(i, option, extra) };
  // The digest of the action this card showed: the server refuses the answer for any other.
  if (i.action?.digest) body.digest = i.action.digest;
  if (extra.reason) body.reason = extra.reason;
  if (extra.values && Object.keys(extra.values).length > 0) body.values = extra.values;
  const reply = await answerInteraction(i.interactionId, body);
  dispatch({ type: 'answered', interactionId: i.interactionId });
  return reply;
}

/** Removes a card the server says is no longer answerable (answered elsewhere, expired). */
export function dropCard(interactionId: string): void {
  dispatch({ type: 'answered', interactionId });
}
