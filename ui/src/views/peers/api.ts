// Calls of the outbound-peers API (`/api/v1/peers`, the console owner's; docs/peers.md), and
// its shapes. The response shapes are generated from the Rust by ts-rs (`cargo test` writes
// ../../bindings; never edit those by hand): `PeerView` and its parts and `PeerListing` from
// crates/sextant-peers/src/, `CardSummary` from crates/sextant-peers/src/client/card.rs.
// Only the request bodies and the call's reply are written here; and, below, the calls of the
// assistant tokens the page's Assistants panel shows.

import { api } from '../../api/client';
import type { CardSummary } from '../../bindings/CardSummary';
import type { PeerListing } from '../../bindings/PeerListing';
import type { PeerView } from '../../bindings/PeerView';

export type { CardSkill } from '../../bindings/CardSkill';
export type { CardSummary } from '../../bindings/CardSummary';
export type { PeerConversation } from '../../bindings/PeerConversation';
export type { PeerDisabled } from '../../bindings/PeerDisabled';
export type { PeerListing } from '../../bindings/PeerListing';
export type { PeerMetrics } from '../../bindings/PeerMetrics';
export type { PeerPin } from '../../bindings/PeerPin';
export type { PeerView } from '../../bindings/PeerView';

/** A registration: `PeerSettings` (crates/sextant-peers/src/lib.rs), the fields the dialog sets. */
export interface PeerInput {
  name: string;
  url: string;
  token?: string;
  timeout_secs?: number;
  allow_private_network: boolean;
}

const BASE = '/api/v1/peers';
const one = (name: string) => `${BASE}/${encodeURIComponent(name)}`;

export const listPeers = () => api<PeerListing>(BASE);
export const registerPeer = (p: PeerInput) => api<PeerView>(BASE, { method: 'POST', body: p });
export const removePeer = (name: string) => api<void>(one(name), { method: 'DELETE' });
/** Reads the peer's card now (by its registered name, so with its own network settings). */
export const discoverPeer = (name: string) => api<CardSummary>(`${BASE}/discover`, { method: 'POST', body: { url: name } });
/** Pauses a peer (nothing is sent to it, orchestration skips it) or resumes it. */
export const setPeerPaused = (name: string, paused: boolean) => api<PeerView>(one(name), { method: 'PATCH', body: { paused } });
/** Re-pins to the current card, only if it still pins to `hash` (409 otherwise). */
export const pinPeer = (name: string, hash: string) => api<PeerView>(`${one(name)}/pin`, { method: 'POST', body: { hash } });

/** What `POST /api/v1/peers/call` answers: the peer's reply and the conversation it is in. */
export interface CallResult {
  status: string;
  reply: string;
  session_id: string;
  context_id: string;
}

/** Sends the peer a message as the person, in the conversation `context_id` if given. */
export const callPeer = (name: string, message: string, context_id?: string) =>
  api<CallResult>(`${BASE}/call`, { method: 'POST', body: { agent: name, message, ...(context_id ? { context_id } : {}) } });

// The owner's assistant tokens (`/api/v1/assistant-tokens`, docs/security.md): an assistant's
// workspace token, its per-Agent credentials (the owner's Agents as its A2A peers), issuing
// them with a Hermes `a2a_agents:` block, and revoking. The shapes are the JSON
// `credential_json` / `peer_credential_json` build in crates/sextant-server/src/api/credentials.rs
// (plain JSON there, not ts-rs types), written out here.

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

const TOKENS = '/api/v1/assistant-tokens';
const token = (name: string) => `${TOKENS}/${encodeURIComponent(name)}`;

export const listAssistants = () => api<{ assistantTokens: AssistantToken[] }>(TOKENS).then((r) => r.assistantTokens);
export const createAssistant = (name: string) => api<AssistantToken & { token: string }>(TOKENS, { method: 'POST', body: { name } });
export const revokeAssistant = (name: string) => api<void>(token(name), { method: 'DELETE' });
export const issuePeers = (name: string) => api<IssuedPeers>(`${token(name)}/peers`, { method: 'POST', body: {} });
export const revokePeer = (name: string, agentId: string) => api<void>(`${token(name)}/peers/${encodeURIComponent(agentId)}`, { method: 'DELETE' });
