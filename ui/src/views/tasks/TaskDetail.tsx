// One task, live: its state and its events as they happen (the blocks of its Session's stream
// that belong to it), with its open decision answerable in place.

import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../../api/client';
import type { TaskSummary } from '../../api/types';
import { Ago, Empty, ErrorState, Loading, now, PageHeader, StateBadge } from '../../components/ui';
import { callerLabel, isTerminal, isWaiting, shortId } from '../../lib/format';
import { duration } from '../../lib/time';
import { subscribe } from '../../live/events';
import { Link } from '../../router';
import { LiveDot } from '../sessions/Session';
import { TranscriptView } from '../sessions/TranscriptView';
import { useSession } from '../sessions/useSession';
import { getTask } from './api';
import { agents, loadAgents } from './store';
import { StopTask } from './StopTask';
import { Origin } from './Tasks';

export function TaskDetail(props: { id: string }) {
  const [task, setTask] = useState<TaskSummary | null>(null);
  const [status, setStatus] = useState<'loading' | 'ready' | 'error' | 'notFound'>('loading');
  const [error, setError] = useState('');
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    setStatus('loading');
    void loadAgents().catch(() => undefined);
    getTask(props.id)
      .then((t) => {
        setTask(t);
        setStatus('ready');
      })
      .catch((e) => {
        if (e instanceof ApiError && e.status === 404) setStatus('notFound');
        else {
          setError((e as Error).message);
          setStatus('error');
        }
      });
  }, [props.id, attempt]);
  // How the task ended comes from the server (the journal's outcome): the live stream says it.
  useEffect(
    () =>
      subscribe({
        task(c) {
          if (c.taskId === props.id && c.outcome) setTask((t) => (t ? { ...t, state: c.state, outcome: c.outcome } : t));
        },
      }),
    [props.id],
  );
  const v = useSession(task?.sessionId);

  if (status === 'loading') return <div class="page"><Loading label="Loading the task…" /></div>;
  if (status === 'notFound')
    return (
      <div class="page">
        <Empty title="No such task" icon="?">
          Task <span class="mono">{props.id}</span> does not exist here. <Link href="/tasks" class="link">See all tasks</Link>
        </Empty>
      </div>
    );
  if (status === 'error' || !task) return <div class="page"><ErrorState error={error} retry={() => setAttempt((n) => n + 1)} /></div>;
  const live = v.tasks.find((t) => t.taskId === task.taskId) ?? task;
  const agent = agents.value?.find((a) => a.agentId === task.agentId)?.name ?? task.agentId;
  return (
    <div class="page">
      <PageHeader
        title={
          <>
            {task.title ?? (
              <>
                Task <span class="mono">{shortId(task.taskId)}</span>
              </>
            )}{' '}
            <StateBadge state={live.state} outcome={isTerminal(live.state) ? task.outcome : null} />
          </>
        }
        subtitle={
          <>
            {agent} · {task.scheduleId ? <Origin t={task} /> : <>for {callerLabel(task.caller)}</>} · task{' '}
            <span class="mono">{shortId(task.taskId)}</span> · started <Ago at={task.createdAt} /> · last event <Ago at={live.stateAt} /> ·{' '}
            <span data-elapsed>
              {isTerminal(live.state)
                ? `took ${duration(Date.parse(live.stateAt) - Date.parse(task.createdAt))}`
                : `${isWaiting(live.state) ? 'waiting' : 'running'} for ${duration(now.value - Date.parse(task.createdAt))}`}
            </span>
          </>
        }
        actions={
          <>
            <LiveDot state={v.live} />
            <StopTask task={{ ...task, state: live.state }} />
            <Link href={`/sessions/${task.sessionId}`} class="btn">
              Open Session
            </Link>
          </>
        }
      />
      <div class="task-state-line" data-task-state={live.state} hidden />
      {v.status === 'loading' && <Loading label="Loading events…" />}
      {v.status === 'error' && <ErrorState error={v.error ?? ''} retry={v.reload} />}
      {v.status === 'ready' && <TranscriptView blocks={v.transcript.blocks} taskId={task.taskId} />}
    </div>
  );
}
