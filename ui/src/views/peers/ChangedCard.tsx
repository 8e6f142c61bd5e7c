// The alert on a peer the server disabled because its card changed since it was pinned: what
// changed, the old and new hash, and the way back (review the card now, re-pin it).

import { Ago } from '../../components/ui';
import type { CardSummary, PeerView } from './api';
import { hashToPin } from './format';
import { Hash } from './Hash';

/** What the server saw when it disabled the peer, and the way back. */
export function ChangedCard(props: { peer: PeerView; review: CardSummary | null; busy: boolean; onReview(): void; onPin(): void }) {
  const d = props.peer.disabled;
  if (!d) return null;
  const target = hashToPin(props.peer, props.review);
  return (
    <section class="peer-alert" aria-label="Card changed">
      <h3 class="peer-alert-title">Its card changed since it was pinned, so this peer is disabled</h3>
      <p>
        Sextant sends it nothing (calls, orchestrations and gateway turns are refused) until you review the card as it is now and re-pin it.
      </p>
      <div class="field-label">What changed</div>
      {d.changes.length > 0 ? (
        <ul class="change-list">
          {d.changes.map((c) => (
            <li key={c}>{c}</li>
          ))}
        </ul>
      ) : (
        <p class="muted">The pinned parts of the card (interfaces, security schemes, skills) differ.</p>
      )}
      <dl class="facts">
        <dt>Pinned</dt>
        <dd>
          <Hash hash={d.old_hash} />
        </dd>
        <dt>Now</dt>
        <dd>
          <Hash hash={d.new_hash} />
        </dd>
        <dt>Card</dt>
        <dd>
          <a class="link mono small wrap" href={d.card_url} target="_blank" rel="noreferrer noopener">
            {d.card_url}
          </a>
        </dd>
        <dt>Seen</dt>
        <dd>
          <Ago at={d.seen_at} />
        </dd>
      </dl>
      <div class="peer-alert-actions">
        {!props.review && (
          <button class="btn" disabled={props.busy} onClick={props.onReview} data-action="review">
            Review card
          </button>
        )}
        <button class="btn btn-primary" disabled={props.busy || !target} onClick={props.onPin} data-action="re-pin" title={target ? `Pin ${target}` : undefined}>
          Re-pin
        </button>
        <span class="muted small">
          {props.review ? 'Pins the card you reviewed, ' : 'Pins the card seen when it was disabled, '}
          <Hash hash={target} />; if it changed again, nothing is pinned.
        </span>
      </div>
    </section>
  );
}
