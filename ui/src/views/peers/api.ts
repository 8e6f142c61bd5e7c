// Calls of the outbound-peers API (`/api/v1/peers`, the console owner's; docs/peers.md), and
// its shapes. No ts-rs binding exists for these: the Rust side builds `disabled`, `pin` and
// `metrics` (and the discover summary) with serde_json's `json!`, so the interfaces below are
// written by hand. Keep them in step with the Rust they mirror, named on each.

import { api } from '../../api/client';

/**
 * Why a peer is disabled: `disabled` in `Peers::connect`
 * (crates/sextant-runtime/src/peers/mod.rs), with `changes` from
 * `card::describe_changes` (crates/sextant-a2a/src/client/card.rs).
 */
export interface PeerDisabled {
  reason: 'card_changed' | (string & {});
  old_hash: string;
  new_hash: string;
  /** What changed, in plain words ("skill added: x (X)", "interface removed: …"). */
  changes: string[];
  card_url: string;
  seen_at: string;
}

/** The pin: `pin` in `Peers::view` (crates/sextant-runtime/src/peers/mod.rs). */
export interface PeerPin {
  /** SHA-256 (hex) of the card's pinned parts. */
  hash: string;
  pinned_at: string | null;
  /** The pinned card's skill ids, lowercased. */
  skills: string[];
}

/** Call counters: `metrics` in `Peers::view` (crates/sextant-runtime/src/peers/mod.rs). */
export interface PeerMetrics {
  calls: number;
  failures: number;
  avg_latency_ms: number | null;
  last_latency_ms: number | null;
  last_call_at: string | null;
  last_error: string | null;
}

/** A peer as shown: `PeerView` (crates/sextant-runtime/src/peers/mod.rs). Never its token. */
export interface PeerView {
  name: string;
  url: string;
  has_token: boolean;
  timeout_secs: number;
  capabilities: string[];
  allowed_skills: string[];
  allow_private_network: boolean;
  enabled: boolean;
  disabled: PeerDisabled | null;
  /** Null until the card is pinned (a peer registered with `pin_on_first_use`). */
  pin: PeerPin | null;
  metrics: PeerMetrics;
  created_at: string;
  updated_at: string;
}

/** A saved outbound conversation: `Conversation` (crates/sextant-runtime/src/peers/history.rs). */
export interface PeerConversation {
  context_id: string;
  peer: string;
  session_id: string;
  exchanges: number;
  created_at: string;
  updated_at: string;
}

/** `GET /api/v1/peers`: `Listing` (crates/sextant-runtime/src/peers/history.rs). */
export interface PeerListing {
  peers: PeerView[];
  conversations: PeerConversation[];
  totals: { peers: number; enabled: number; calls: number; failures: number };
}

/** One skill of a card summary (the first 20). */
export interface CardSkill {
  id: string;
  name: string;
  description: string;
  tags: string[];
  examples: string[];
}

/**
 * `POST /api/v1/peers/discover`: `card::summary` (crates/sextant-a2a/src/client/card.rs),
 * plus `registeredAs`, `pinnedHash`, `matchesPin`, `enabled` for a registered peer
 * (`Peers::discover`). Only the parts the console shows are typed.
 */
export interface CardSummary {
  name: string;
  description: string;
  version: string;
  cardUrl: string;
  jsonrpcUrl: string | null;
  auth: { schemes: { name: string; kind: string }[]; required: string[][]; summary: string };
  capabilities: { streaming: boolean; pushNotifications: boolean; extendedAgentCard: boolean };
  skills: CardSkill[];
  skillsTotal: number;
  pinHash: string | null;
  valid: boolean;
  problems: string[];
  registeredAs?: string;
  pinnedHash?: string | null;
  matchesPin?: boolean;
  enabled?: boolean;
}

/** A registration: `PeerSettings` (crates/sextant-runtime/src/peers/mod.rs), the fields the dialog sets. */
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
/** Re-pins to the current card, only if it still pins to `hash` (409 otherwise). */
export const pinPeer = (name: string, hash: string) => api<PeerView>(`${one(name)}/pin`, { method: 'POST', body: { hash } });
