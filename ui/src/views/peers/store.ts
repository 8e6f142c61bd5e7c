// The peers page's store: the listing and reviews (state.ts) in a signal, read from
// `GET /api/v1/peers` and kept current from the live stream while the page is open; the
// person's actions (review, re-pin, pause, remove), each reporting itself with a toast.

import { signal } from '@preact/signals';
import { ApiError } from '../../api/client';
import { toast } from '../../components/ui';
import { subscribe } from '../../live/events';
import { discoverPeer, listPeers, pinPeer, removePeer, setPeerPaused, type PeerView } from './api';
import { hashToPin } from './format';
import { initialPeers, peersReducer, type PeersAction } from './state';

export const peers = signal(initialPeers);

export function dispatch(a: PeersAction): void {
  peers.value = peersReducer(peers.value, a);
}

/** Reads the listing again; a failure keeps what is shown (see the reducer). */
export async function loadPeers(): Promise<void> {
  try {
    dispatch({ type: 'loaded', listing: await listPeers() });
  } catch (e) {
    dispatch({ type: 'failed', error: (e as Error).message });
  }
}

/**
 * Opens the page: reads the listing and follows the live stream until the returned function
 * is called, which also forgets the listing (the next visit starts from "loading" again).
 */
export function startPeers(): () => void {
  void loadPeers();
  // Each exchange with a registered peer is a task of Agent `peer:<name>`: its end changes
  // that peer's metrics and the conversations, so read them again (once per burst).
  let timer: ReturnType<typeof setTimeout> | undefined;
  const soon = () => {
    clearTimeout(timer);
    timer = setTimeout(() => void loadPeers(), 300);
  };
  const off = subscribe({
    task(c) {
      if (c.agentId.startsWith('peer:') || c.agentId.startsWith('url:')) soon();
    },
    resync: soon,
  });
  return () => {
    off();
    clearTimeout(timer);
    dispatch({ type: 'reset' });
  };
}

/** Reads the peer's card as it is now, to compare it with the pin. */
export async function reviewCard(p: PeerView): Promise<void> {
  dispatch({ type: 'busy', name: p.name });
  try {
    dispatch({ type: 'reviewed', name: p.name, summary: await discoverPeer(p.name) });
  } catch (e) {
    toast(`${p.name}: ${(e as Error).message}`, 'bad');
  } finally {
    dispatch({ type: 'busy', name: null });
  }
}

/** Re-pins the card the person was shown (the reviewed one, or the one seen when it was disabled). */
export async function repin(p: PeerView): Promise<void> {
  const hash = hashToPin(p, peers.value.reviews[p.name]);
  if (!hash) return;
  dispatch({ type: 'busy', name: p.name });
  try {
    const saved = await pinPeer(p.name, hash);
    dispatch({ type: 'reviewDropped', name: p.name });
    dispatch({ type: 'saved', peer: saved });
    toast(`“${p.name}” re-pinned${p.disabled && !p.paused_at ? ' and enabled' : ''}`, 'ok');
    void loadPeers();
  } catch (e) {
    toast((e as Error).message, 'bad');
    // The card changed again (or someone re-pinned it): what was reviewed is stale.
    if (e instanceof ApiError && e.status === 409) {
      dispatch({ type: 'reviewDropped', name: p.name });
      void loadPeers();
    }
  } finally {
    dispatch({ type: 'busy', name: null });
  }
}

/** Pauses the peer (nothing is sent to it; pin, token and metrics stay) or resumes it. */
export async function pause(p: PeerView, paused: boolean): Promise<void> {
  dispatch({ type: 'busy', name: p.name });
  try {
    dispatch({ type: 'saved', peer: await setPeerPaused(p.name, paused) });
    toast(paused ? `“${p.name}” paused: nothing is sent to it until you resume it` : `“${p.name}” resumed`, 'ok');
    void loadPeers();
  } catch (e) {
    toast((e as Error).message, 'bad');
  } finally {
    dispatch({ type: 'busy', name: null });
  }
}

/** Removes the peer and its token; resolves whether it was removed. */
export async function remove(name: string): Promise<boolean> {
  try {
    await removePeer(name);
    toast(`“${name}” removed`, 'ok');
    dispatch({ type: 'removed', name });
    void loadPeers();
    return true;
  } catch (e) {
    toast((e as Error).message, 'bad');
    return false;
  }
}

/** Shows a peer the dialog just registered, then reads the listing again. */
export function registered(saved: PeerView): void {
  dispatch({ type: 'registered', peer: saved });
  toast(`“${saved.name}” registered; its card is pinned`, 'ok');
  void loadPeers();
}
