// One registered peer: its name, status and URL, its actions (call, pause or resume, review
// the card, remove), the changed-card alert and card review when there is one, its settings
// and its metrics.

import { Ago, Badge } from '../../components/ui';
import type { CardSummary, PeerView } from './api';
import { CallPeer } from './CallPeer';
import { CardReview } from './CardReview';
import { ChangedCard } from './ChangedCard';
import { peerStatus } from './format';
import { PeerFacts } from './PeerFacts';
import { PeerStats } from './PeerStats';

export function PeerCard(props: {
  peer: PeerView;
  review: CardSummary | null;
  busy: boolean;
  onReview(): void;
  onCloseReview(): void;
  onPin(): void;
  onPause(paused: boolean): void;
  onRemove(): void;
}) {
  const p = props.peer;
  const m = p.metrics;
  const status = peerStatus(p);
  const look = p.disabled ? ' peer-disabled' : p.paused_at ? ' peer-paused' : '';
  return (
    <article class={`card peer${look}`} data-peer={p.name} data-enabled={String(p.enabled)} data-paused={String(!!p.paused_at)} aria-label={`Peer ${p.name}`}>
      <header class="peer-head">
        <div class="peer-id">
          <h2 class="peer-name">{p.name}</h2>
          <Badge tone={status.tone} title={status.title}>
            <span class="dot" aria-hidden="true" />
            {status.label}
          </Badge>
          {p.paused_at && (
            <span class="muted small">
              {' '}
              since <Ago at={p.paused_at} />
            </span>
          )}
          <div class="mono small muted wrap peer-url">{p.url}</div>
        </div>
        <div class="row-actions">
          <CallPeer name={p.name} disabled={!p.enabled} />
          {p.paused_at ? (
            <button class="btn btn-small" disabled={props.busy} onClick={() => props.onPause(false)} data-action="resume" title="Let Sextant and your agents call it again">
              Resume
            </button>
          ) : (
            <button class="btn btn-small" disabled={props.busy} onClick={() => props.onPause(true)} data-action="pause" title="Send it nothing, keeping its pin, token and metrics">
              Pause
            </button>
          )}
          {(!p.disabled || props.review) && (
            <button class="btn btn-small" disabled={props.busy} onClick={props.onReview} data-action="review" title="Read its card now and compare it with the pin">
              {props.review ? 'Review again' : 'Review card'}
            </button>
          )}
          <button class="btn btn-small btn-ghost danger" onClick={props.onRemove} data-action="remove">
            Remove
          </button>
        </div>
      </header>
      <ChangedCard peer={p} review={props.review} busy={props.busy} onReview={props.onReview} onPin={props.onPin} />
      {props.review && <CardReview peer={p} review={props.review} busy={props.busy} onPin={props.onPin} onClose={props.onCloseReview} />}
      <div class="peer-body">
        <PeerFacts peer={p} />
        <PeerStats metrics={m} />
      </div>
    </article>
  );
}
