// Outbound peers: the remote A2A agents Sextant calls for the person (docs/peers.md). Each
// peer with its pin, token presence, capabilities and call metrics; register, pause or resume
// (a paused peer keeps its pin, token and metrics, and nothing is sent to it), and remove.
// A peer whose card changed since it was pinned is disabled by the server (nothing is sent to
// it): its panel says what changed, with the old and new hash, and offers to review the card
// as it is now and re-pin it. A re-pin names the hash the person was shown, so a card that
// changed again meanwhile is refused (409) rather than pinned unseen. Below, the recent
// outbound conversations, each a Session with its transcript.
//
// The page composes its parts (PeerCard, Conversations, Assistants, PeerDialog); the listing,
// reviews and actions live in the store (store.ts, over the reducer in state.ts).

import { useEffect, useState } from 'preact/hooks';
import { Confirm, Empty, ErrorState, Loading, PageHeader } from '../../components/ui';
import type { PeerView } from './api';
import { Assistants } from './Assistants';
import { Conversations } from './Conversations';
import { plural, sortPeers } from './format';
import { PeerCard } from './PeerCard';
import { PeerDialog } from './PeerDialog';
import { dispatch, loadPeers, pause, peers, registered, remove, repin, reviewCard, startPeers } from './store';

export function Peers() {
  const [dialog, setDialog] = useState(false);
  const [toRemove, setToRemove] = useState<PeerView | null>(null);
  const [removing, setRemoving] = useState(false);

  useEffect(() => startPeers(), []);

  const confirmRemove = async () => {
    if (!toRemove) return;
    setRemoving(true);
    if (await remove(toRemove.name)) setToRemove(null);
    setRemoving(false);
  };

  const state = peers.value;
  const l = state.listing;
  const pausedCount = l?.peers.filter((p) => p.paused_at).length ?? 0;
  return (
    <div class="page">
      <PageHeader
        title="Peers"
        subtitle="Other A2A agents Sextant calls for you. Each one’s card is pinned, and every conversation is journalled."
        actions={
          <button class="btn btn-primary" onClick={() => setDialog(true)}>
            + Register a peer
          </button>
        }
      />
      {state.status === 'loading' && <Loading label="Loading peers…" />}
      {state.status === 'error' && <ErrorState error={state.error ?? ''} retry={() => void loadPeers()} />}
      {l && l.peers.length === 0 && (
        <Empty title="No peers yet" icon="⇄">
          A peer is another A2A 1.0 agent you want Sextant (and your agents, through MCP) to call: register it by its URL, and Sextant reads
          and pins its card, keeps its token, and journals every conversation with it. See <code>docs/peers.md</code>.
        </Empty>
      )}
      {l && l.peers.length > 0 && (
        <>
          <p class="muted peer-totals">
            {plural(l.totals.peers, 'peer')}, {l.totals.enabled} enabled{pausedCount ? `, ${pausedCount} paused` : ''} ·{' '}
            {plural(l.totals.calls, 'call')},{' '}
            {plural(l.totals.failures, 'failure')}
          </p>
          <div class="cards" aria-label="Peers">
            {sortPeers(l.peers).map((p) => (
              <PeerCard
                key={p.name}
                peer={p}
                review={state.reviews[p.name] ?? null}
                busy={state.busy === p.name}
                onReview={() => void reviewCard(p)}
                onCloseReview={() => dispatch({ type: 'reviewDropped', name: p.name })}
                onPin={() => void repin(p)}
                onPause={(paused) => void pause(p, paused)}
                onRemove={() => setToRemove(p)}
              />
            ))}
          </div>
        </>
      )}
      {l && <Conversations conversations={l.conversations} />}
      <Assistants />
      <PeerDialog
        open={dialog}
        onClose={() => setDialog(false)}
        onSaved={(saved) => {
          setDialog(false);
          registered(saved);
        }}
      />
      <Confirm
        open={!!toRemove}
        title="Remove this peer?"
        confirm="Remove peer"
        busy={removing}
        onConfirm={() => void confirmRemove()}
        onClose={() => setToRemove(null)}
      >
        <p>
          “{toRemove?.name}” and its token will be removed, and Sextant will no longer call it. Its conversations stay in the journal, with
          their Sessions and transcripts.
        </p>
      </Confirm>
    </div>
  );
}
