// The peers page's state: the listing (peers, totals, recent conversations), the cards under
// review and the peer an action is in flight for. Pure reducer; the store (store.ts) feeds it
// from `GET /api/v1/peers`, the person's actions and the live stream.

import type { CardSummary, PeerListing, PeerView } from './api';

export interface PeersState {
  status: 'loading' | 'ready' | 'error';
  error?: string;
  listing: PeerListing | null;
  /** The card as it is now, per peer the person asked to review. */
  reviews: Record<string, CardSummary>;
  /** The peer an action (review, re-pin, pause) is under way for: its buttons wait. */
  busy: string | null;
}

export type PeersAction =
  | { type: 'reset' }
  | { type: 'loaded'; listing: PeerListing }
  | { type: 'failed'; error: string }
  | { type: 'busy'; name: string | null }
  | { type: 'reviewed'; name: string; summary: CardSummary }
  | { type: 'reviewDropped'; name: string }
  /** A peer as the server just returned it (pinned, paused, resumed), before the listing is read again. */
  | { type: 'saved'; peer: PeerView }
  /** A peer just registered: shown at once, even before the first listing arrived. */
  | { type: 'registered'; peer: PeerView }
  | { type: 'removed'; name: string };

export const initialPeers: PeersState = { status: 'loading', listing: null, reviews: {}, busy: null };

function withoutReview(reviews: Record<string, CardSummary>, name: string): Record<string, CardSummary> {
  if (!(name in reviews)) return reviews;
  const rest = { ...reviews };
  delete rest[name];
  return rest;
}

export function peersReducer(s: PeersState, a: PeersAction): PeersState {
  switch (a.type) {
    case 'reset':
      return initialPeers;
    case 'loaded':
      return { ...s, status: 'ready', error: undefined, listing: a.listing };
    case 'failed':
      // A failed refresh keeps the list shown; only a first read that failed is an error page.
      return { ...s, status: s.status === 'ready' ? 'ready' : 'error', error: a.error };
    case 'busy':
      return { ...s, busy: a.name };
    case 'reviewed':
      return { ...s, reviews: { ...s.reviews, [a.name]: a.summary } };
    case 'reviewDropped':
      return { ...s, reviews: withoutReview(s.reviews, a.name) };
    case 'saved':
      return s.listing ? { ...s, listing: { ...s.listing, peers: s.listing.peers.map((x) => (x.name === a.peer.name ? a.peer : x)) } } : s;
    case 'registered': {
      const p = a.peer;
      const listing: PeerListing = s.listing
        ? { ...s.listing, peers: [...s.listing.peers.filter((x) => x.name !== p.name), p] }
        : { peers: [p], conversations: [], totals: { peers: 1, enabled: p.enabled ? 1 : 0, calls: 0, failures: 0 } };
      return { ...s, status: 'ready', error: undefined, listing };
    }
    case 'removed': {
      const reviews = withoutReview(s.reviews, a.name);
      if (!s.listing) return { ...s, reviews };
      return { ...s, reviews, listing: { ...s.listing, peers: s.listing.peers.filter((x) => x.name !== a.name) } };
    }
  }
}
