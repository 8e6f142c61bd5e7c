// Live tasks: every task across Agents and Sessions, updating as it happens. Each row says what
// the task is (its input's first line, a line of its result or error, where it came from, how
// long it took). Full-text search and filters (Agent, status, caller, schedule, time) live in
// the URL; rows can be grouped by Session, caller or schedule. The live list stays bounded:
// past MAX_ROWS (or under a text search) new tasks wait behind "Show newer".

import { useEffect, useRef, useState } from 'preact/hooks';
import type { Schedule, TaskSummary } from '../../api/types';
import { Ago, Empty, ErrorState, Loading, now, PageHeader, StateBadge } from '../../components/ui';
import { callerLabel, isTerminal, shortId, STATUS_FILTERS, taskStatus } from '../../lib/format';
import { duration } from '../../lib/time';
import { Link, location, navigate } from '../../router';
import { listSchedules } from '../schedules/api';
import { NewTask } from './NewTask';
import { StopTask } from './StopTask';
import { filterFromSearch, groupTasks, noFilter, ORIGINS, SINCE_CHOICES, searchOf, type Grouping, type TaskFilter } from './state';
import { agents, loadAgents, loadMore, loadTasks, tasks } from './store';

/** A search match: the server marks it between U+0002 and U+0003; shown as <mark>, as text. */
export function Matched(props: { text: string }) {
  const parts = props.text.split(/(\u0002[^\u0003]*\u0003)/);
  return (
    <span class="matched">
      {parts.map((p, i) => (p.startsWith('\u0002') ? <mark key={i}>{p.slice(1, -1)}</mark> : p))}
    </span>
  );
}

/** Where a task came from: its schedule, or its caller. */
export function Origin(props: { t: TaskSummary }) {
  const t = props.t;
  if (t.scheduleId)
    return (
      <Link href={`/schedules/${t.scheduleId}`} class="link origin" title="Started by a schedule's Run">
        <span aria-hidden="true">◷ </span>
        {t.scheduleName ?? 'a schedule'}
      </Link>
    );
  return <span class="origin">{callerLabel(t.caller)}</span>;
}

function TaskRow(props: { t: TaskSummary; flash: boolean; agentName: string }) {
  const t = props.t;
  const ended = isTerminal(t.state);
  const took = ended ? duration(Date.parse(t.stateAt) - Date.parse(t.createdAt)) : null;
  return (
    <tr
      class={`row-link${props.flash ? ' flash' : ''}`}
      data-task-id={t.taskId}
      data-state={t.state}
      data-outcome={t.outcome ?? undefined}
      onClick={(e) => {
        // Links, and the Stop button with its confirmation (rendered inside the row), act alone.
        if ((e.target as HTMLElement).closest('a, button, dialog')) return;
        navigate(`/tasks/${t.taskId}`);
      }}
    >
      <td class="col-status">
        <StateBadge state={t.state} outcome={t.outcome} />
        {!ended && (
          <div class="row-stop">
            <StopTask task={t} compact />
          </div>
        )}
      </td>
      <td class="col-task">
        <Link href={`/tasks/${t.taskId}`} class="link task-title">
          {t.title ?? <span class="mono">Task {shortId(t.taskId)}</span>}
        </Link>
        {t.matched ? (
          <div class="small muted clamp task-line">
            <Matched text={t.matched} />
          </div>
        ) : (
          t.result && <div class={`small clamp task-line${t.outcome === 'failed' || t.outcome === 'rejected' ? ' bad-line' : ' muted'}`}>{t.result}</div>
        )}
      </td>
      <td class="col-origin">
        <Origin t={t} />
        <div class="small muted">{props.agentName}</div>
      </td>
      <td class="col-when nowrap">
        <Ago at={t.createdAt} />
        <div class="small muted">
          {took ? `took ${took}` : `${taskStatus(t.state, t.outcome).label.toLowerCase()} · ${duration(now.value - Date.parse(t.createdAt))}`}
        </div>
      </td>
    </tr>
  );
}

export function Tasks() {
  const s = tasks.value;
  const route = filterFromSearch(location.value.path === '/tasks' ? location.value.search : '');
  const { group, ...filter } = route;
  const key = searchOf(filter);
  const [schedules, setSchedules] = useState<Schedule[]>([]);
  const [typed, setTyped] = useState(filter.q);
  const [composing, setComposing] = useState(false);
  const searchRef = useRef<HTMLInputElement>(null);

  // The URL is the filter: reload, back/forward and shared links all land here.
  useEffect(() => {
    void loadTasks(filter);
    setTyped(filter.q);
  }, [key]);
  useEffect(() => {
    void loadAgents().catch(() => undefined);
    listSchedules().then(setSchedules, () => undefined);
  }, []);
  // Typing searches after a pause; each pause replaces the history entry, not one per key.
  useEffect(() => {
    if (typed === filter.q) return;
    const t = setTimeout(() => navigate(`/tasks${searchOf({ ...filter, q: typed }, group)}`, { replace: true }), 300);
    return () => clearTimeout(t);
  }, [typed]);

  const go = (f: TaskFilter, g: Grouping = group) => navigate(`/tasks${searchOf(f, g)}`);
  const set = (k: keyof TaskFilter, v: string) => go({ ...filter, [k]: v });
  const filtered = Object.values(filter).some(Boolean);
  const agentName = (id: string) => agents.value?.find((a) => a.agentId === id)?.name ?? id;
  const callers = [...new Set([...s.tasks.map((t) => t.caller), ...(filter.caller ? [filter.caller] : [])])].sort();
  const groups = groupTasks(s.tasks, group, callerLabel);

  return (
    <div class="page">
      <PageHeader
        title="Tasks"
        subtitle="Every task across your Agents and Sessions, live."
        actions={
          <button class="btn btn-primary" data-new-task onClick={() => setComposing(true)}>
            + New task
          </button>
        }
      />
      <NewTask open={composing} onClose={() => setComposing(false)} />
      <div class="toolbar" role="search">
        <label class="search-field">
          <span class="sr-only">Search tasks</span>
          <input
            id="task-search"
            ref={searchRef}
            class="input"
            type="search"
            placeholder="Search inputs, outputs, transcripts…  ( / )"
            value={typed}
            onInput={(e) => setTyped((e.target as HTMLInputElement).value)}
            onKeyDown={(e) => {
              if (e.key === 'Enter') navigate(`/tasks${searchOf({ ...filter, q: typed }, group)}`, { replace: true });
              if (e.key === 'Escape') (e.target as HTMLInputElement).blur();
            }}
          />
        </label>
        <div class="filters">
          <select class="select" value={filter.agent} onChange={(e) => set('agent', (e.target as HTMLSelectElement).value)} aria-label="Filter by Agent">
            <option value="">All agents</option>
            <option value="peer:*">Every peer (outbound)</option>
            {(agents.value ?? []).map((a) => (
              <option key={a.agentId} value={a.agentId}>
                {a.name}
              </option>
            ))}
          </select>
          <select class="select" value={filter.status} onChange={(e) => set('status', (e.target as HTMLSelectElement).value)} aria-label="Filter by status">
            <option value="">Any status</option>
            {STATUS_FILTERS.map(([v, label]) => (
              <option key={v} value={v}>
                {label}
              </option>
            ))}
          </select>
          <select class="select" value={filter.caller} onChange={(e) => set('caller', (e.target as HTMLSelectElement).value)} aria-label="Filter by caller">
            <option value="">Any caller</option>
            {callers.map((c) => (
              <option key={c} value={c}>
                {callerLabel(c)}
              </option>
            ))}
          </select>
          <select class="select" value={filter.origin} onChange={(e) => set('origin', (e.target as HTMLSelectElement).value)} aria-label="Filter by origin">
            <option value="">Any origin</option>
            {ORIGINS.map(([v, label]) => (
              <option key={v} value={v}>
                {label}
              </option>
            ))}
          </select>
          <select class="select" value={filter.schedule} onChange={(e) => set('schedule', (e.target as HTMLSelectElement).value)} aria-label="Filter by schedule">
            <option value="">Any schedule</option>
            {schedules.map((x) => (
              <option key={x.id} value={x.id}>
                {x.name}
              </option>
            ))}
            {filter.schedule && !schedules.some((x) => x.id === filter.schedule) && <option value={filter.schedule}>A schedule</option>}
          </select>
          <select class="select" value={filter.since} onChange={(e) => set('since', (e.target as HTMLSelectElement).value)} aria-label="Filter by time">
            <option value="">Any time</option>
            {SINCE_CHOICES.map(([v, label]) => (
              <option key={v} value={v}>
                {label}
              </option>
            ))}
          </select>
          <select class="select" value={group} onChange={(e) => go(filter, (e.target as HTMLSelectElement).value as Grouping)} aria-label="Group by">
            <option value="">No grouping</option>
            <option value="session">Group by Session</option>
            <option value="caller">Group by caller</option>
            <option value="schedule">Group by schedule</option>
          </select>
          {filtered && (
            <button class="btn btn-ghost btn-small" onClick={() => go(noFilter)}>
              Clear
            </button>
          )}
        </div>
      </div>
      {s.newer > 0 && (
        <div class="newer" role="status">
          <button class="btn btn-small" onClick={() => void loadTasks()} data-action="show-newer">
            Show {s.newer} newer task{s.newer === 1 ? '' : 's'}
          </button>
        </div>
      )}
      {s.status === 'loading' && <Loading label="Loading tasks…" />}
      {s.status === 'error' && <ErrorState error={s.error ?? ''} retry={() => void loadTasks()} />}
      {s.status === 'ready' && s.tasks.length === 0 && (
        <Empty title={filtered ? 'No tasks match' : 'No tasks yet'} icon="≡">
          {filter.q ? `Nothing says “${filter.q}”. ` : ''}
          {filtered ? 'Clear a filter to see more.' : 'Tasks appear here as soon as an agent or a schedule starts one.'}
        </Empty>
      )}
      {s.status === 'ready' && s.tasks.length > 0 && (
        <div class="table-wrap">
          <table class="table tasks-table" aria-label="Tasks">
            <thead>
              <tr>
                <th class="col-status">Status</th>
                <th class="col-task">Task</th>
                <th class="col-origin">From</th>
                <th class="col-when">Started</th>
              </tr>
            </thead>
            {groups.map((g) => (
              <tbody key={g.key} data-group={group ? g.key : undefined}>
                {group && (
                  <tr class="group-row">
                    <th colSpan={4} scope="rowgroup">
                      {g.label} <span class="count">{g.tasks.length}</span>
                    </th>
                  </tr>
                )}
                {g.tasks.map((t) => (
                  <TaskRow key={t.taskId} t={t} flash={s.flash.has(t.taskId)} agentName={agentName(t.agentId)} />
                ))}
              </tbody>
            ))}
          </table>
          <div class="table-foot">
            <span class="muted">
              {s.tasks.length} of {s.total} task{s.total === 1 ? '' : 's'}
            </span>
            {s.nextCursor && (
              <button class="btn" onClick={() => void loadMore()}>
                Load more
              </button>
            )}
          </div>
        </div>
      )}
    </div>
  );
}
