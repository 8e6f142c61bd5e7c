// Live tasks: every task across Agents and Sessions, updating as it happens; filter by Agent
// and status, kept in the URL.

import { useEffect } from 'preact/hooks';
import { Ago, Empty, ErrorState, Loading, PageHeader, StateBadge } from '../../components/ui';
import { callerLabel, shortId, STATUS_FILTERS, taskStatus } from '../../lib/format';
import { Link, location, navigate } from '../../router';
import { filterFromSearch, searchOf, type TaskFilter } from './state';
import { agents, loadAgents, loadMore, loadTasks, tasks } from './store';

export function Tasks() {
  const s = tasks.value;
  // The URL is the filter: reload, back/forward and shared links all land here.
  const search = location.value.path === '/tasks' ? location.value.search : '';
  useEffect(() => {
    void loadTasks(filterFromSearch(search));
  }, [search]);
  useEffect(() => {
    void loadAgents().catch(() => undefined);
  }, []);
  const setFilter = (k: keyof TaskFilter, v: string) => navigate(`/tasks${searchOf({ ...s.filter, [k]: v })}`, { replace: false });
  const filtered = !!(s.filter.agent || s.filter.status);
  return (
    <div class="page">
      <PageHeader
        title="Tasks"
        subtitle="Every task across your Agents and Sessions, live."
        actions={
          <div class="filters">
            <label class="filter">
              <span>Agent</span>
              <select class="select" value={s.filter.agent} onChange={(e) => setFilter('agent', (e.target as HTMLSelectElement).value)} aria-label="Filter by Agent">
                <option value="">All agents</option>
                <option value="peer:*">Every peer (outbound)</option>
                {(agents.value ?? []).map((a) => (
                  <option key={a.agentId} value={a.agentId}>
                    {a.name}
                  </option>
                ))}
              </select>
            </label>
            <label class="filter">
              <span>Status</span>
              <select class="select" value={s.filter.status} onChange={(e) => setFilter('status', (e.target as HTMLSelectElement).value)} aria-label="Filter by status">
                <option value="">Any status</option>
                {STATUS_FILTERS.map(([v, label]) => (
                  <option key={v} value={v}>
                    {label}
                  </option>
                ))}
              </select>
            </label>
          </div>
        }
      />
      {s.status === 'loading' && <Loading label="Loading tasks…" />}
      {s.status === 'error' && <ErrorState error={s.error ?? ''} retry={() => void loadTasks()} />}
      {s.status === 'ready' && s.tasks.length === 0 && (
        <Empty title={filtered ? 'No tasks match these filters' : 'No tasks yet'} icon="≡">
          {filtered ? 'Clear a filter to see more.' : 'Tasks appear here as soon as an agent or a schedule starts one.'}
        </Empty>
      )}
      {s.status === 'ready' && s.tasks.length > 0 && (
        <div class="table-wrap">
          <table class="table" aria-label="Tasks">
            <thead>
              <tr>
                <th>State</th>
                <th>Task</th>
                <th>Agent</th>
                <th>Caller</th>
                <th>Started</th>
                <th>Last event</th>
              </tr>
            </thead>
            <tbody>
              {s.tasks.map((t) => (
                <tr
                  key={t.taskId}
                  class={`row-link${s.flash.has(t.taskId) ? ' flash' : ''}`}
                  data-task-id={t.taskId}
                  data-state={t.state}
                  data-outcome={t.outcome ?? undefined}
                  onClick={(e) => {
                    if ((e.target as HTMLElement).closest('a')) return;
                    navigate(`/tasks/${t.taskId}`);
                  }}
                >
                  <td>
                    <StateBadge state={t.state} outcome={t.outcome} />
                  </td>
                  <td>
                    <Link href={`/tasks/${t.taskId}`} class="mono link">
                      {shortId(t.taskId)}
                    </Link>
                  </td>
                  <td>{agents.value?.find((a) => a.agentId === t.agentId)?.name ?? t.agentId}</td>
                  <td>{callerLabel(t.caller)}</td>
                  <td>
                    <Ago at={t.createdAt} />
                  </td>
                  <td>
                    {taskStatus(t.state, t.outcome).label.toLowerCase()} <Ago at={t.stateAt} />
                  </td>
                </tr>
              ))}
            </tbody>
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
