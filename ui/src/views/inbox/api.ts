// Calls of the interactions API (`/api/v1/interactions`): the pending list and the person's
// answers, one or several at once. The store (store.ts) builds the bodies (message ids,
// digests) and applies the replies to the inbox.

import { api } from '../../api/client';
import type { AnswerReply, BulkAnswerReply, InteractionList } from '../../api/types';

const BASE = '/api/v1/interactions';

export const listInteractions = () => api<InteractionList>(BASE).then((r) => r.interactions);
/** Answers one interaction. */
export const answerInteraction = (interactionId: string, body: Record<string, unknown>) =>
  api<AnswerReply>(`${BASE}/${encodeURIComponent(interactionId)}/answer`, { method: 'POST', body });
/** Answers several in one request; the server journals each as its own answer. */
export const answerInteractions = (answers: Record<string, unknown>[]) => api<BulkAnswerReply>(`${BASE}/answer`, { method: 'POST', body: { answers } });
