// Helpers of the Assistants panel: the owner's assistant tokens in the order shown, and the
// per-Agent credentials worth showing. The tokens' shapes and calls are in api.ts.

import type { AssistantToken, PeerCredential } from './api';

export type { AssistantToken, IssuedPeers, PeerCredential } from './api';

/** The active tokens first (newest first within each group), then the revoked ones. */
export function sortAssistants(list: AssistantToken[]): AssistantToken[] {
  return [...list].sort((a, b) => Number(b.active) - Number(a.active) || b.createdAt.localeCompare(a.createdAt));
}

/** The credentials worth showing: the active ones (the revoked are history, kept server-side). */
export function activePeers(t: AssistantToken): PeerCredential[] {
  return (t.peers ?? []).filter((p) => p.active);
}
