// A peer's card as it is now (`POST /api/v1/peers/discover`), compared with its pin, with a
// re-pin offered when it differs and the peer is not disabled yet.

import { Badge } from '../../components/ui';
import type { CardSummary, PeerView } from './api';
import { reviewDiffers } from './format';
import { Hash } from './Hash';

/** The card as it is now (`POST /api/v1/peers/discover`). */
export function CardReview(props: { peer: PeerView; review: CardSummary; busy: boolean; onPin(): void; onClose(): void }) {
  const r = props.review;
  const differs = reviewDiffers(props.peer, r);
  return (
    <section class="peer-review" aria-label="Card review">
      <header class="peer-review-head">
        <h3>The card now</h3>
        {differs ? <Badge tone="warn">Differs from the pin</Badge> : <Badge tone="ok">Matches the pin</Badge>}
        <button class="icon-btn" aria-label="Close the review" onClick={props.onClose}>
          ×
        </button>
      </header>
      <dl class="facts">
        <dt>Name</dt>
        <dd>
          <strong>{r.name || '—'}</strong> {r.version && <span class="muted small">version {r.version}</span>}
        </dd>
        <dt>Description</dt>
        <dd>{r.description || <span class="muted">none</span>}</dd>
        <dt>JSON-RPC</dt>
        <dd class="mono small wrap">{r.jsonrpcUrl ?? <span class="muted">no A2A 1.0 JSON-RPC interface</span>}</dd>
        <dt>Auth</dt>
        <dd>{r.auth.summary}</dd>
        <dt>Skills</dt>
        <dd>
          {r.skills.length === 0 ? (
            <span class="muted">none</span>
          ) : (
            <ul class="skill-list">
              {r.skills.map((s) => (
                <li key={s.id}>
                  <span class="mono">{s.id}</span> <strong>{s.name}</strong>
                  {s.description && <span class="muted"> — {s.description}</span>}
                </li>
              ))}
              {r.skillsTotal > r.skills.length && <li class="muted">and {r.skillsTotal - r.skills.length} more</li>}
            </ul>
          )}
        </dd>
        <dt>Pin hash</dt>
        <dd>
          <Hash hash={r.pinHash} />
        </dd>
      </dl>
      {r.problems.length > 0 ? (
        <div class="notice notice-warn" role="note">
          <strong>Problems with this card</strong>
          <ul class="change-list">
            {r.problems.map((p) => (
              <li key={p}>{p}</li>
            ))}
          </ul>
        </div>
      ) : (
        <p class="muted small">No problems found with this card.</p>
      )}
      {!props.peer.disabled && differs && r.pinHash && (
        <div class="peer-alert-actions">
          <button class="btn btn-primary" disabled={props.busy} onClick={props.onPin} data-action="re-pin" title={`Pin ${r.pinHash}`}>
            Re-pin
          </button>
          <span class="muted small">Sextant would disable this peer at its next use; pin the card above instead.</span>
        </div>
      )}
    </section>
  );
}
