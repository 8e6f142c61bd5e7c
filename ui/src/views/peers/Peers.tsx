// Outbound peers: the remote A2A agents Sextant calls for the person (docs/peers.md). Each
// peer with its pin, token presence, capabilities and call metrics; register, pause or resume
// (a paused peer keeps its pin, token and metrics, and nothing is sent to it), and remove.
// A peer whose card changed since it was pinned is disabled by the server (nothing is sent to
// it): its panel says what changed, with the old and new hash, and offers to review the card
// as it is now and re-pin it. A re-pin names the hash the person was shown, so a card that
// changed again meanwhile is refused (409) rather than pinned unseen. Below, the recent
// outbound conversations, each a Session with its transcript.

import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../../api/client';
import { Ago, Badge, Confirm, Empty, ErrorState, Loading, PageHeader, toast } from '../../components/ui';
import { shortId } from '../../lib/format';
import { subscribe } from '../../live/events';
import { Link } from '../../router';
import { CallPeer } from './CallPeer';
import { discoverPeer, listPeers, pinPeer, removePeer, setPeerPaused, type CardSummary, type PeerListing, type PeerView } from './api';
import { callsSummary, hashToPin, latency, peerStatus, plural, reviewDiffers, shortHash, sortPeers } from './format';
import { Assistants } from './Assistants';
import { PeerDialog } from './PeerDialog';

/** A pin hash, short, with the full hash on hover and for copying. */
function Hash(props: { hash: string | null | undefined }) {
  if (!props.hash) return <span class="muted">—</span>;
  return (
    <code class="mono hash" title={props.hash} data-hash={props.hash}>
      {shortHash(props.hash)}
    </code>
  );
}

function Chips(props: { items: string[]; none: string }) {
  if (props.items.length === 0) return <span class="muted">{props.none}</span>;
  return (
    <span class="chips">
      {props.items.map((c) => (
        <span key={c} class="chip">
          {c}
        </span>
      ))}
    </span>
  );
}

/** What the server saw when it disabled the peer, and the way back. */
function ChangedCard(props: { peer: PeerView; review: CardSummary | null; busy: boolean; onReview(): void; onPin(): void }) {
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

/** The card as it is now (`POST /api/v1/peers/discover`). */
function Review(props: { peer: PeerView; review: CardSummary; busy: boolean; onPin(): void; onClose(): void }) {
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

function PeerCard(props: {
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
  const calls = callsSummary(m);
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
      {props.review && <Review peer={p} review={props.review} busy={props.busy} onPin={props.onPin} onClose={props.onCloseReview} />}
      <div class="peer-body">
        <dl class="facts peer-facts">
          <dt>Pin</dt>
          <dd>
            {p.pin ? (
              <>
                <Hash hash={p.pin.hash} /> <span class="muted small">pinned <Ago at={p.pin.pinned_at} /></span>
              </>
            ) : (
              <span class="muted">not pinned yet: its card is pinned at first use</span>
            )}
          </dd>
          <dt>Token</dt>
          <dd>{p.has_token ? 'set (kept by Sextant, never shown)' : <span class="muted">none</span>}</dd>
          <dt>Capabilities</dt>
          <dd>
            <Chips items={p.capabilities} none="none declared" />
          </dd>
          <dt title="Skills an orchestration may route to">Allowed skills</dt>
          <dd>
            <Chips items={p.allowed_skills} none="all" />
          </dd>
          <dt>Network</dt>
          <dd>
            timeout {p.timeout_secs} s{p.allow_private_network ? ' · private addresses allowed' : ''}
          </dd>
        </dl>
        <dl class="stats" aria-label="Metrics">
          <div>
            <dt>Calls</dt>
            <dd>
              <Badge tone={calls.tone}>{calls.text}</Badge>
            </dd>
          </div>
          <div>
            <dt>Avg latency</dt>
            <dd>{latency(m.avg_latency_ms)}</dd>
          </div>
          <div>
            <dt>Last call</dt>
            <dd>
              {m.last_call_at ? <Ago at={m.last_call_at} /> : <span class="muted">never</span>}
              {m.last_latency_ms !== null && <span class="muted small"> · {latency(m.last_latency_ms)}</span>}
            </dd>
          </div>
          <div class="stats-wide">
            <dt>Last error</dt>
            <dd class={m.last_error ? 'danger clamp' : 'muted'} title={m.last_error ?? undefined}>
              {m.last_error ?? 'none'}
            </dd>
          </div>
          {m.hop_limited_at && (
            <div class="stats-wide" data-hop-limited>
              <dt>Hop limit</dt>
              <dd role="status">
                ⚠ Refused a call at its A2A-Hop limit <Ago at={m.hop_limited_at} />: calls relayed
                for tasks that reached this console through other agents arrive with more hops
                than it accepts. Call it directly, or raise its limit.
              </dd>
            </div>
          )}
        </dl>
      </div>
    </article>
  );
}

export function Peers() {
  const [state, setState] = useState<{ status: 'loading' | 'ready' | 'error'; error?: string; listing: PeerListing | null }>({ status: 'loading', listing: null });
  const [reviews, setReviews] = useState<Record<string, CardSummary>>({});
  const [busy, setBusy] = useState<string | null>(null);
  const [dialog, setDialog] = useState(false);
  const [toRemove, setToRemove] = useState<PeerView | null>(null);
  const [removing, setRemoving] = useState(false);

  const load = async () => {
    try {
      const listing = await listPeers();
      setState({ status: 'ready', listing });
    } catch (e) {
      setState((s) => ({ ...s, status: s.status === 'ready' ? 'ready' : 'error', error: (e as Error).message }));
    }
  };

  useEffect(() => {
    void load();
  }, []);

  // Each exchange with a registered peer is a task of Agent `peer:<name>`: its end changes
  // that peer's metrics and the conversations, so read them again (once per burst).
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const soon = () => {
      clearTimeout(timer);
      timer = setTimeout(() => void load(), 300);
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
    };
  }, []);

  const dropReview = (name: string) =>
    setReviews((r) => {
      const rest = { ...r };
      delete rest[name];
      return rest;
    });

  const review = async (p: PeerView) => {
    setBusy(p.name);
    try {
      const summary = await discoverPeer(p.name);
      setReviews((r) => ({ ...r, [p.name]: summary }));
    } catch (e) {
      toast(`${p.name}: ${(e as Error).message}`, 'bad');
    } finally {
      setBusy(null);
    }
  };

  /** Shows a peer as the server just returned it, before the listing is read again. */
  const showSaved = (saved: PeerView) =>
    setState((s) => (s.listing ? { ...s, listing: { ...s.listing, peers: s.listing.peers.map((x) => (x.name === saved.name ? saved : x)) } } : s));

  const pin = async (p: PeerView) => {
    const hash = hashToPin(p, reviews[p.name]);
    if (!hash) return;
    setBusy(p.name);
    try {
      const saved = await pinPeer(p.name, hash);
      dropReview(p.name);
      showSaved(saved);
      toast(`“${p.name}” re-pinned${p.disabled && !p.paused_at ? ' and enabled' : ''}`, 'ok');
      void load();
    } catch (e) {
      toast((e as Error).message, 'bad');
      // The card changed again (or someone re-pinned it): what was reviewed is stale.
      if (e instanceof ApiError && e.status === 409) {
        dropReview(p.name);
        void load();
      }
    } finally {
      setBusy(null);
    }
  };

  const pause = async (p: PeerView, paused: boolean) => {
    setBusy(p.name);
    try {
      const saved = await setPeerPaused(p.name, paused);
      showSaved(saved);
      toast(paused ? `“${p.name}” paused: nothing is sent to it until you resume it` : `“${p.name}” resumed`, 'ok');
      void load();
    } catch (e) {
      toast((e as Error).message, 'bad');
    } finally {
      setBusy(null);
    }
  };

  const remove = async () => {
    if (!toRemove) return;
    const name = toRemove.name;
    setRemoving(true);
    try {
      await removePeer(name);
      toast(`“${name}” removed`, 'ok');
      dropReview(name);
      setState((s) => (s.listing ? { ...s, listing: { ...s.listing, peers: s.listing.peers.filter((x) => x.name !== name) } } : s));
      setToRemove(null);
      void load();
    } catch (e) {
      toast((e as Error).message, 'bad');
    } finally {
      setRemoving(false);
    }
  };

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
      {state.status === 'error' && <ErrorState error={state.error ?? ''} retry={() => void load()} />}
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
                review={reviews[p.name] ?? null}
                busy={busy === p.name}
                onReview={() => void review(p)}
                onCloseReview={() => dropReview(p.name)}
                onPin={() => void pin(p)}
                onPause={(paused) => void pause(p, paused)}
                onRemove={() => setToRemove(p)}
              />
            ))}
          </div>
        </>
      )}
      {l && l.conversations.length > 0 && (
        <section class="panel peer-conversations" aria-label="Recent conversations">
          <h2 class="panel-title">
            Recent conversations <span class="count">{l.conversations.length}</span>
          </h2>
          <table class="table" aria-label="Recent outbound conversations">
            <thead>
              <tr>
                <th>Peer</th>
                <th>Conversation</th>
                <th>Exchanges</th>
                <th>Last activity</th>
                <th>Transcript</th>
              </tr>
            </thead>
            <tbody>
              {l.conversations.map((c) => (
                <tr key={c.session_id} data-session-id={c.session_id}>
                  <td class="strong">{c.peer}</td>
                  <td data-label="Context" class="mono small" title={c.context_id}>
                    {shortId(c.context_id)}
                  </td>
                  <td data-label="Exchanges">{c.exchanges}</td>
                  <td>
                    <Ago at={c.updated_at} />
                  </td>
                  <td>
                    <Link href={`/sessions/${c.session_id}`} class="link" title="Open this conversation’s Session">
                      Session {shortId(c.session_id)} →
                    </Link>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
      <Assistants />
      <PeerDialog
        open={dialog}
        onClose={() => setDialog(false)}
        onSaved={(saved) => {
          setDialog(false);
          setState((s) => ({
            status: 'ready',
            listing: s.listing
              ? { ...s.listing, peers: [...s.listing.peers.filter((x) => x.name !== saved.name), saved] }
              : { peers: [saved], conversations: [], totals: { peers: 1, enabled: saved.enabled ? 1 : 0, calls: 0, failures: 0 } },
          }));
          toast(`“${saved.name}” registered; its card is pinned`, 'ok');
          void load();
        }}
      />
      <Confirm
        open={!!toRemove}
        title="Remove this peer?"
        confirm="Remove peer"
        busy={removing}
        onConfirm={() => void remove()}
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
