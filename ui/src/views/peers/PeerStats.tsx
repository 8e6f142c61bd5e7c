// A peer's call metrics: calls and failures, latency, the last call and error, and a warning
// when it refused a call at its A2A-Hop limit.

import { Ago, Badge } from '../../components/ui';
import type { PeerMetrics } from './api';
import { callsSummary, latency } from './format';

export function PeerStats(props: { metrics: PeerMetrics }) {
  const m = props.metrics;
  const calls = callsSummary(m);
  return (
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
  );
}
