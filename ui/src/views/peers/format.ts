// Pure pieces of the Peers page: short hashes, metrics in words, the order peers are listed
// in, which hash a re-pin sends, and the registration form's checks. Tested beside
// (format.test.ts); the page only renders what these return.

import type { Tone } from '../../lib/format';
import type { CardSummary, PeerInput, PeerMetrics, PeerView } from './api';

/** The server's timeout bounds (`timeout_of` in crates/sextant-peers/src/lib.rs). */
export const MIN_TIMEOUT_SECS = 1;
export const MAX_TIMEOUT_SECS = 3600;
export const DEFAULT_TIMEOUT_SECS = 120;

/**
 * The first 12 hex digits of a pin hash: enough to tell two pins apart at a glance (the
 * page puts the full hash in the element's title).
 */
export function shortHash(hash: string | null | undefined): string {
  if (!hash) return '—';
  return hash.length > 12 ? `${hash.slice(0, 12)}…` : hash;
}

/** "412 ms", "1.4 s", "12 s"; "—" when nothing was measured. */
export function latency(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.round(ms / 1000)} s`;
}

/** "1 call", "3 calls". */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

/** Calls and failures in words, with a tone: failures are worth a look, no calls is quiet. */
export function callsSummary(m: PeerMetrics): { text: string; tone: Tone } {
  if (m.calls === 0) return { text: 'no calls yet', tone: 'muted' };
  const text = `${plural(m.calls, 'call')}, ${m.failures === 0 ? 'no failures' : plural(m.failures, 'failure')}`;
  return { text, tone: m.failures === 0 ? 'ok' : m.failures >= m.calls ? 'bad' : 'warn' };
}

/**
 * Whether a peer may be called, in a word, with a tone and what it means. A changed card
 * (disabled) says more than a pause: it needs the person's review even if they resume it.
 */
export function peerStatus(p: PeerView): { label: 'Enabled' | 'Paused' | 'Disabled'; tone: Tone; title: string } {
  if (p.disabled) return { label: 'Disabled', tone: 'bad', title: 'Its card changed; nothing is sent to it until you re-pin it' };
  if (p.paused_at) return { label: 'Paused', tone: 'warn', title: 'You paused it; nothing is sent to it until you resume it' };
  return { label: 'Enabled', tone: 'ok', title: 'Sextant and your agents may call it' };
}

/** Disabled peers first (they wait for the person), then enabled ones, paused ones last; by name. */
export function sortPeers(peers: PeerView[]): PeerView[] {
  const rank = (p: PeerView) => (p.disabled ? 0 : p.paused_at ? 2 : 1);
  return [...peers].sort((a, b) => rank(a) - rank(b) || a.name.localeCompare(b.name));
}

/**
 * The hash a re-pin sends: the one the person reviewed (the card summary's `pinHash`, when
 * the review is of this peer), else the new hash the server saw when it disabled the peer.
 * The server pins only if the card still hashes to it, so what gets pinned is what was shown.
 * Null when there is nothing to pin to (an enabled peer never reviewed).
 */
export function hashToPin(peer: PeerView, review: CardSummary | null | undefined): string | null {
  if (review && (review.registeredAs ?? peer.name) === peer.name && review.pinHash) return review.pinHash;
  return peer.disabled?.new_hash ?? null;
}

/** Whether a reviewed card differs from the peer's pin (so re-pinning would change it). */
export function reviewDiffers(peer: PeerView, review: CardSummary): boolean {
  if (review.matchesPin !== undefined) return !review.matchesPin;
  return !!review.pinHash && review.pinHash !== peer.pin?.hash;
}

/** The registration dialog's fields, as typed. */
export interface PeerForm {
  name: string;
  url: string;
  token: string;
  timeout: string;
  allowPrivate: boolean;
}

export const emptyPeerForm = (): PeerForm => ({ name: '', url: '', token: '', timeout: String(DEFAULT_TIMEOUT_SECS), allowPrivate: false });

/** Which form field a server error's `field` belongs on. */
export const FIELD_OF: Record<string, keyof PeerForm> = {
  name: 'name',
  url: 'url',
  token: 'token',
  timeout_secs: 'timeout',
  allow_private_network: 'allowPrivate',
};

/** A field error of the registration form, per field. */
export type PeerFormErrors = Partial<Record<keyof PeerForm, string>>;

/**
 * The registration body, or every field the browser can already see is wrong (the server
 * still checks everything, and names every bad field at once too; this catches what the
 * browser can see, like a timeout that is not a number). An empty token is left out: no token.
 */
export function registrationBody(f: PeerForm): { ok: true; body: PeerInput } | { ok: false; errors: PeerFormErrors } {
  const name = f.name.trim();
  const url = f.url.trim();
  const errors: PeerFormErrors = {};
  if (!name) errors.name = 'a name is required';
  if (!url) errors.url = 'the agent’s URL is required';
  const body: PeerInput = { name, url, allow_private_network: f.allowPrivate };
  const t = f.timeout.trim();
  if (t) {
    const n = Number(t);
    if (!Number.isInteger(n) || n < MIN_TIMEOUT_SECS || n > MAX_TIMEOUT_SECS) errors.timeout = `a whole number of seconds, ${MIN_TIMEOUT_SECS}–${MAX_TIMEOUT_SECS}`;
    else body.timeout_secs = n;
  }
  if (Object.keys(errors).length) return { ok: false, errors };
  if (f.token) body.token = f.token;
  return { ok: true, body };
}

/** One problem with a peer's card, at its path in the card (`skills[0].tags`). */
export interface CardFieldError {
  field: string;
  message: string;
}

/** A refused registration's errors: per form field, above the form, and the card's own. */
export type RegistrationErrors = PeerFormErrors & { form?: string; card?: CardFieldError[] };

/**
 * A refused registration's errors on the form's fields: every invalid field the server named,
 * each without the `field: ` prefix its place already says; the card's problems (fields
 * `card.…`, when the server refuses a peer whose card cannot work) as a list of their own,
 * each at its path in the card; `form` for what names no field of the form (a taken name,
 * the network guard, the peer's own error).
 */
export function registrationErrors(fields: { field: string; message: string }[], message: string): RegistrationErrors {
  const out: RegistrationErrors = {};
  for (const f of fields) {
    if (f.field === 'card' || f.field.startsWith('card.')) {
      (out.card ??= []).push({ field: f.field === 'card' ? '(the whole card)' : f.field.slice('card.'.length), message: f.message });
      continue;
    }
    const k = FIELD_OF[f.field];
    if (k && !out[k]) out[k] = f.message.startsWith(`${f.field}: `) ? f.message.slice(f.field.length + 2) : f.message;
    else if (!k) out.form = out.form ? `${out.form} ${f.message}` : f.message;
  }
  if (!fields.length) out.form = message;
  return out;
}
