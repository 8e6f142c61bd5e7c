// The Overview's Agents: each one's engine, whether it is paused, and the owner's controls:
// Pause (new messages refused, queued tasks wait) / Resume, and Stop all (cancels every
// unfinished task of the Agent, after a confirmation).

import { useState } from 'preact/hooks';
import type { AgentSummary } from '../../api/types';
import { Confirm, toast } from '../../components/ui';
import { agents } from '../tasks/store';
import { listAgents, setAgentPaused, stopAllTasks } from './api';

async function reloadAgents() {
  agents.value = await listAgents();
}

export function AgentsPanel() {
  const list = agents.value ?? [];
  const [busy, setBusy] = useState<string | null>(null);
  const [stopping, setStopping] = useState<AgentSummary | null>(null);
  const pause = async (a: AgentSummary, paused: boolean) => {
    setBusy(a.agentId);
    try {
      await setAgentPaused(a.agentId, paused);
      await reloadAgents();
      toast(paused ? `${a.name} is paused: new messages are refused, queued tasks wait.` : `${a.name} takes messages again.`, 'ok');
    } catch (e) {
      toast(`Could not ${paused ? 'pause' : 'resume'} ${a.name}: ${(e as Error).message}`, 'bad');
    } finally {
      setBusy(null);
    }
  };
  const stopAll = async () => {
    const a = stopping;
    if (!a) return;
    setBusy(a.agentId);
    try {
      const canceled = await stopAllTasks(a.agentId);
      toast(`Stopped ${canceled} task${canceled === 1 ? '' : 's'} of ${a.name}.`, 'ok');
      setStopping(null);
    } catch (e) {
      toast(`Could not stop ${a.name}'s tasks: ${(e as Error).message}`, 'bad');
    } finally {
      setBusy(null);
    }
  };
  return (
    <section class="panel" aria-label="Agents">
      <h2 class="panel-title">
        Agents <span class="count">{list.length}</span>
      </h2>
      <ul class="mini-list agents-list">
        {list.map((a) => (
          <li key={a.agentId} data-agent={a.agentId} data-paused={a.paused ? 'true' : undefined}>
            <span class="strong">{a.name}</span>
            <span class="muted small">
              {a.engine}
              {a.paused ? ' · paused' : ''}
            </span>
            <span class="agent-actions">
              <button class="btn btn-small" disabled={busy === a.agentId} data-action={a.paused ? 'resume-agent' : 'pause-agent'} onClick={() => void pause(a, !a.paused)}>
                {a.paused ? 'Resume' : 'Pause'}
              </button>
              <button class="btn btn-small btn-ghost danger" disabled={busy === a.agentId} data-action="stop-all" onClick={() => setStopping(a)}>
                Stop all
              </button>
            </span>
          </li>
        ))}
      </ul>
      <Confirm open={!!stopping} title="Stop all of this Agent's tasks?" confirm="Stop all" busy={busy !== null} onConfirm={() => void stopAll()} onClose={() => setStopping(null)}>
        <p>
          Every unfinished task of {stopping?.name} is canceled: queued ones never run, open decisions are closed, and running commands get SIGTERM, then SIGKILL after
          the grace period. Output so far is kept. To keep new messages out too, pause it.
        </p>
      </Confirm>
    </section>
  );
}
