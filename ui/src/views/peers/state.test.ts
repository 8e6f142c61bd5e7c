import { describe, expect, it } from 'vitest';
import type { CardSummary, PeerListing, PeerView } from './api';
import { initialPeers, peersReducer, type PeersState } from './state';

const peer = (name: string, over: Partial<PeerView> = {}): PeerView => ({
  name,
  url: `http://127.0.0.1:9/${name}/`,
  has_token: false,
  timeout_secs: 120,
  capabilities: [],
  allowed_skills: [],
  allow_private_network: false,
  enabled: true,
  paused_at: null,
  disabled: null,
  pin: null,
  has_card_jwks: false,
  metrics: { calls: 0, failures: 0, avg_latency_ms: null, last_latency_ms: null, last_call_at: null, last_error: null, hop_limited_at: null },
  created_at: '2026-12-01T10:00:00.000Z',
  updated_at: '2026-12-01T10:00:00.000Z',
  ...over,
});

const listing = (...peers: PeerView[]): PeerListing => ({
  peers,
  conversations: [],
  totals: { peers: peers.length, enabled: peers.filter((p) => p.enabled).length, calls: 0, failures: 0 },
});

// Only its identity matters to the reducer.
const summary = { name: 'Helper', pinHash: 'b'.repeat(64) } as CardSummary;

const loaded = (...peers: PeerView[]): PeersState => peersReducer(initialPeers, { type: 'loaded', listing: listing(...peers) });

describe('peers reducer', () => {
  it('shows the listing once read', () => {
    const s = loaded(peer('a'), peer('b'));
    expect(s.status).toBe('ready');
    expect(s.listing?.peers.map((p) => p.name)).toEqual(['a', 'b']);
  });

  it('keeps showing the list when a refresh fails, and shows the error when nothing loaded', () => {
    expect(peersReducer(initialPeers, { type: 'failed', error: 'down' })).toMatchObject({ status: 'error', error: 'down', listing: null });
    const s = peersReducer(loaded(peer('a')), { type: 'failed', error: 'down' });
    expect(s.status).toBe('ready');
    expect(s.listing?.peers).toHaveLength(1);
    expect(peersReducer(s, { type: 'loaded', listing: listing() }).error).toBeUndefined();
  });

  it('replaces a saved peer in place, and ignores one before any listing', () => {
    const s = peersReducer(loaded(peer('a'), peer('b')), { type: 'saved', peer: peer('a', { paused_at: '2026-12-01T12:00:00.000Z', enabled: false }) });
    expect(s.listing?.peers.map((p) => [p.name, p.enabled])).toEqual([
      ['a', false],
      ['b', true],
    ]);
    expect(peersReducer(initialPeers, { type: 'saved', peer: peer('a') })).toBe(initialPeers);
  });

  it('shows a registered peer at once, replacing one of the same name', () => {
    const first = peersReducer(initialPeers, { type: 'registered', peer: peer('a', { enabled: false }) });
    expect(first.status).toBe('ready');
    expect(first.listing).toEqual(listing(peer('a', { enabled: false })));
    const again = peersReducer(loaded(peer('a'), peer('b')), { type: 'registered', peer: peer('a', { url: 'http://new/' }) });
    expect(again.listing?.peers.map((p) => [p.name, p.url])).toEqual([
      ['b', 'http://127.0.0.1:9/b/'],
      ['a', 'http://new/'],
    ]);
  });

  it('drops a removed peer with its review', () => {
    let s = loaded(peer('a'), peer('b'));
    s = peersReducer(s, { type: 'reviewed', name: 'a', summary });
    s = peersReducer(s, { type: 'removed', name: 'a' });
    expect(s.listing?.peers.map((p) => p.name)).toEqual(['b']);
    expect(s.reviews).toEqual({});
  });

  it('keeps a review per peer until it is dropped', () => {
    let s = peersReducer(loaded(peer('a'), peer('b')), { type: 'reviewed', name: 'a', summary });
    s = peersReducer(s, { type: 'reviewed', name: 'b', summary });
    expect(Object.keys(s.reviews)).toEqual(['a', 'b']);
    s = peersReducer(s, { type: 'reviewDropped', name: 'a' });
    expect(Object.keys(s.reviews)).toEqual(['b']);
    expect(peersReducer(s, { type: 'reviewDropped', name: 'zz' }).reviews).toBe(s.reviews);
  });

  it('marks one peer busy at a time, and starts over on reset', () => {
    let s = peersReducer(loaded(peer('a')), { type: 'busy', name: 'a' });
    expect(s.busy).toBe('a');
    s = peersReducer(s, { type: 'busy', name: null });
    expect(s.busy).toBeNull();
    expect(peersReducer(s, { type: 'reset' })).toBe(initialPeers);
  });
});
