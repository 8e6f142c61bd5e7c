// What is set for a peer: its pin, token, capabilities, allowed skills and network settings.

import { Ago } from '../../components/ui';
import type { PeerView } from './api';
import { Hash } from './Hash';

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

export function PeerFacts(props: { peer: PeerView }) {
  const p = props.peer;
  return (
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
  );
}
