// The owner's assistant tokens (`/api/v1/assistant-tokens`, docs/security.md): an assistant's
// workspace token, its per-Agent credentials (the owner's Agents as its A2A peers), issuing
// them with a Hermes `a2a_agents:` block, and revoking. The shapes are the JSON
// `credential_json` / `peer_credential_json` build in crates/sextant-server/src/credentials.rs
// (plain JSON there, not ts-rs types), written out here.

import { api } from '../../api/client';

/** One per-Agent credential issued under an assistant's workspace token. */
export interface PeerCredential {
  id: string;
  agentId: string;
  createdAt: string;
  revokedAt: string | null;
  active: boolean;
}

/** One assistant token. */
export interface AssistantToken {
  id: string;
  name: string;
  /** `workspace`: the assistant's own token; `agent`: a token for `agentId` only. */
  scope: 'workspace' | 'agent';
  agentId: string | null;
  workspace: string | null;
  principal?: string;
  createdAt: string;
  revokedAt: string | null;
  active: boolean;
  /** Workspace tokens: every per-Agent credential issued under it, newest first. */
  peers?: PeerCredential[];
}

/** `POST /api/v1/assistant-tokens/{name}/peers`: the credentials, shown once. */
export interface IssuedPeers {
  assistant: string;
  peers: { agentId: string; name: string; url: string; token: string }[];
  hermesConfig: string;
}

const BASE = '/api/v1/assistant-tokens';
const one = (name: string) => `${BASE}/${encodeURIComponent(name)}`;

export const listAssistants = () => api<{ assistantTokens: AssistantToken[] }>(BASE).then((r) => r.assistantTokens);
export const createAssistant = (name: string) => api<AssistantToken & { token: string }>(BASE, { method: 'POST', body: { name } });
export const revokeAssistant = (name: string) => api<void>(one(name), { method: 'DELETE' });
export const issuePeers = (name: string) => api<IssuedPeers>(`${one(name)}/peers`, { method: 'POST', body: {} });
export const revokePeer = (name: string, agentId: string) => api<void>(`${one(name)}/peers/${encodeURIComponent(agentId)}`, { method: 'DELETE' });

/** The active tokens first (newest first within each group), then the revoked ones. */
export function sortAssistants(list: AssistantToken[]): AssistantToken[] {
  return [...list].sort((a, b) => Number(b.active) - Number(a.active) || b.createdAt.localeCompare(a.createdAt));
}

/** The credentials worth showing: the active ones (the revoked are history, kept server-side). */
export function activePeers(t: AssistantToken): PeerCredential[] {
  return (t.peers ?? []).filter((p) => p.active);
}
