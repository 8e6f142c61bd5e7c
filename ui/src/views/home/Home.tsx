// The overview at `/`: what needs the person now, what is running, and what fires next.

import { useEffect, useState } from 'preact/hooks';
import type { Schedule, TaskCounts, TaskSummary } from '../../api/types';
import { Ago, Empty, FireTime, Loading, PageHeader, StateBadge } from '../../components/ui';
import { callerLabel, shortId } from '../../lib/format';
import { Link } from '../../router';
import { inbox } from '../inbox/store';
import { listSchedules } from '../schedules/api';
import { cronWords } from '../schedules/Schedules';
import { subscribe } from '../../live/events';
import { agents, loadAgents } from '../tasks/store';
import { readOverview as readTasks } from './api';
import { AgentsPanel } from './AgentsPanel';
import { BackupPanel } from './BackupPanel';

interface Overview {
  status: 'loading' | 'ready';
  counts: TaskCounts | null;
  active: TaskSummary[];
  recent: TaskSummary[];
}

/** The overview's numbers and lists, from the server (counts of every task, not of one page). */
const readOverview = (): Promise<Overview> => readTasks().then((t) => ({ status: 'ready', ...t }));

export function Home() {
  const [schedules, setSchedules] = useState<Schedule[] | null>(null);
  const [t, setT] = useState<Overview>({ status: 'loading', counts: null, active: [], recent: [] });
  useEffect(() => {
    void loadAgents().catch(() => undefined);
    listSchedules().then(setSchedules, () => setSchedules([]));
    // Read again shortly after each change (a burst of changes is one read).
    let timer: ReturnType<typeof setTimeout> | undefined;
    let alive = true;
    const read = () => readOverview().then((o) => alive && setT(o), () => undefined);
    const soon = () => {
      clearTimeout(timer);
      timer = setTimeout(read, 200);
    };
    void read();
    const off = subscribe({ task: soon, resync: soon });
    return () => {
      alive = false;
      off();
      clearTimeout(timer);
    };
  }, []);
  const pending = inbox.value;
  const active = t.active;
  const recent = t.recent;
  const waiting = t.counts?.waiting ?? 0;
  const upcoming = (schedules ?? [])
    .filter((s) => s.enabled && s.next_runs[0])
    .sort((a, b) => Date.parse(a.next_runs[0].utc) - Date.parse(b.next_runs[0].utc))
    .slice(0, 5);
  const agentName = (id: string) => agents.value?.find((a) => a.agentId === id)?.name ?? id;
  return (
    <div class="page">
      <PageHeader title="Overview" subtitle="What your agents are doing, and what they need from you." />
      <div class="overview">
        <section class="panel panel-accent" aria-label="Waiting for you">
          <h2 class="panel-title">
            Waiting for you <span class="count">{pending.items.length}</span>
          </h2>
          {pending.status === 'loading' && <Loading />}
          {pending.status === 'ready' && pending.items.length === 0 && <div class="muted">Nothing needs a decision.</div>}
          <ul class="mini-list">
            {pending.items.slice(0, 4).map((i) => (
              <li key={i.interactionId}>
                <Link href="/inbox" class="link strong">
                  {i.title}
                </Link>
                {i.command && <code class="mini-code">{i.command}</code>}
                <span class="muted small">
                  {i.agentName ?? i.agentId} · <Ago at={i.raisedAt} />
                </span>
              </li>
            ))}
          </ul>
          {pending.items.length > 0 && (
            <Link href="/inbox" class="btn btn-primary">
              Open the inbox
            </Link>
          )}
        </section>
        <section class="panel" aria-label="In progress">
          <h2 class="panel-title">
            In progress <span class="count">{t.counts?.unfinished ?? '…'}</span>
          </h2>
          {t.status === 'loading' && <Loading />}
          {waiting > 0 && (
            <Link href="/tasks?status=waiting" class="link small">
              {waiting} waiting for you
            </Link>
          )}
          {t.status === 'ready' && active.length === 0 && <div class="muted">No task is in progress.</div>}
          <ul class="mini-list">
            {active.map((x) => (
              <li key={x.taskId}>
                <StateBadge state={x.state} outcome={x.outcome} />
                <Link href={`/tasks/${x.taskId}`} class="link">
                  {x.title ?? `Task ${shortId(x.taskId)}`}
                </Link>
                <span class="muted small">
                  {agentName(x.agentId)} · {x.scheduleName ?? callerLabel(x.caller)} · <Ago at={x.stateAt} />
                </span>
              </li>
            ))}
          </ul>
        </section>
        <section class="panel" aria-label="Next scheduled">
          <h2 class="panel-title">Next scheduled</h2>
          {schedules === null && <Loading />}
          {schedules !== null && upcoming.length === 0 && (
            <div class="muted">
              Nothing scheduled. <Link href="/schedules" class="link">Create a schedule</Link>
            </div>
          )}
          <ul class="mini-list">
            {upcoming.map((s) => (
              <li key={s.id}>
                <Link href={`/schedules/${s.id}`} class="link strong">
                  {s.name}
                </Link>
                <span class="small">
                  <FireTime utc={s.next_runs[0].utc} zone={s.timezone} />
                </span>
                <span class="muted small">
                  {cronWords(s)} · <Ago at={s.next_runs[0].utc} />
                </span>
              </li>
            ))}
          </ul>
        </section>
        <AgentsPanel />
        <section class="panel" aria-label="Recent tasks">
          <h2 class="panel-title">Recent activity</h2>
          {t.status === 'ready' && recent.length === 0 && <Empty title="No tasks yet" icon="≡" />}
          <ul class="mini-list">
            {recent.map((x) => (
              <li key={x.taskId}>
                <StateBadge state={x.state} outcome={x.outcome} />
                <Link href={`/tasks/${x.taskId}`} class="link">
                  {x.title ?? `Task ${shortId(x.taskId)}`}
                </Link>
                <span class="muted small">
                  {agentName(x.agentId)} · <Ago at={x.stateAt} />
                </span>
              </li>
            ))}
          </ul>
          {recent.length > 0 && (
            <Link href="/tasks" class="link">
              All tasks →
            </Link>
          )}
        </section>
        <BackupPanel />
      </div>
    </div>
  );
}
