// A Session's transcript at /sessions/{id} (the console link in results): its blocks, live;
// its tasks; its decisions and who answered them; and the Run that created it, if any.

import { Ago, Empty, ErrorState, Loading, PageHeader, StateBadge } from '../../components/ui';
import { callerLabel, shortId } from '../../lib/format';
import { Link } from '../../router';
import { StopTask } from '../tasks/StopTask';
import { agents } from '../tasks/store';
import { Reply } from './Reply';
import { RunPanel } from './RunPanel';
import { TranscriptView } from './TranscriptView';
import { useSession } from './useSession';

export function LiveDot(props: { state: string }) {
  const label = props.state === 'live' ? 'Live' : props.state === 'offline' ? 'Offline' : props.state === 'reconnecting' ? 'Reconnecting…' : 'Connecting…';
  return (
    <span class={`live-dot live-${props.state}`} role="status">
      <span class="dot" aria-hidden="true" />
      {label}
    </span>
  );
}

export function SessionPage(props: { id: string }) {
  const v = useSession(props.id);
  if (v.status === 'loading') return <div class="page"><Loading label="Loading the Session…" /></div>;
  if (v.status === 'notFound')
    return (
      <div class="page">
        <Empty title="No such Session" icon="?">
          Session <span class="mono">{props.id}</span> does not exist here. <Link href="/tasks" class="link">See all tasks</Link>
        </Empty>
      </div>
    );
  if (v.status === 'error' || !v.detail) return <div class="page"><ErrorState error={v.error ?? ''} retry={v.reload} /></div>;
  const s = v.detail.session;
  const agent = agents.value?.find((a) => a.agentId === s.agentId)?.name ?? s.agentId;
  return (
    <div class="page">
      <PageHeader
        title={
          <>
            Session <span class="mono">{shortId(s.sessionId)}</span>
          </>
        }
        subtitle={
          <>
            {agent} · for {callerLabel(s.caller)} · started <Ago at={s.createdAt} />
          </>
        }
        actions={<LiveDot state={v.live} />}
      />
      <div class="split">
        <div class="split-main">
          <TranscriptView blocks={v.transcript.blocks} showTask={v.tasks.length > 1} />
          <Reply agentId={s.agentId} contextId={s.contextId} caller={s.caller} />
        </div>
        <aside class="split-side">
          {v.detail.run && <RunPanel link={v.detail.run} />}
          <section class="panel" aria-label="Tasks of this Session">
            <h2 class="panel-title">Tasks</h2>
            {v.tasks.length === 0 ? (
              <div class="muted">No tasks yet.</div>
            ) : (
              <ul class="task-list">
                {v.tasks.map((t) => (
                  <li key={t.taskId} data-task-id={t.taskId}>
                    <Link href={`/tasks/${t.taskId}`} class="link mono">
                      {shortId(t.taskId)}
                    </Link>
                    <StateBadge state={t.state} outcome={t.outcome} />
                    <span class="muted small">
                      <Ago at={t.stateAt} />
                    </span>
                    <StopTask task={t} compact />
                  </li>
                ))}
              </ul>
            )}
          </section>
          <section class="panel" aria-label="About this Session">
            <h2 class="panel-title">Details</h2>
            <dl class="facts">
              <dt>Agent</dt>
              <dd>{agent}</dd>
              <dt>Caller</dt>
              <dd title={s.caller}>{callerLabel(s.caller)}</dd>
              <dt>Context</dt>
              <dd class="mono small wrap">{s.contextId}</dd>
              <dt>Origin</dt>
              <dd>{s.origin}</dd>
              <dt>Session id</dt>
              <dd class="mono small wrap">{s.sessionId}</dd>
            </dl>
          </section>
        </aside>
      </div>
    </div>
  );
}
