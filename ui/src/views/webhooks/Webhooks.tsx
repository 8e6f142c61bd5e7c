// Push-notification webhooks callers registered for their tasks (docs/push.md): where each
// one goes, what it has delivered and owes, the last error, and whether it stopped after too
// many failures. A stopped webhook keeps everything it owes (the task's final state
// included) until it is re-enabled here, or by its owner re-creating the config.

import { useEffect, useState } from 'preact/hooks';
import { Ago, Badge, Empty, ErrorState, Loading, PageHeader, StateBadge, toast } from '../../components/ui';
import { shortId } from '../../lib/format';
import { subscribe } from '../../live/events';
import { Link } from '../../router';
import { listWebhooks, resumeWebhook, type PushConfigView, type PushList } from './api';
import { healthBadge, healthSentence } from './format';

function Webhook(props: { c: PushConfigView; busy: boolean; onResume(): void }) {
  const { c } = props;
  const d = c.delivery;
  const badge = healthBadge(d);
  return (
    <article class="card webhook" data-webhook={c.configId} data-state={d.state}>
      <header class="webhook-head">
        <div>
          <div class="mono small wrap">{c.url}</div>
          <div class="muted small">
            config <span class="mono">{c.configId}</span> · task{' '}
            <Link href={`/tasks/${encodeURIComponent(c.taskId)}`} class="link mono">
              {shortId(c.taskId)}
            </Link>{' '}
            {c.taskState && <StateBadge state={c.taskState} />} · {c.agentId || 'unknown agent'}
          </div>
        </div>
        <div class="row-actions">
          <Badge tone={badge.tone}>{badge.label}</Badge>
          {d.state === 'failing' && (
            <button class="btn btn-small btn-primary" disabled={props.busy} onClick={props.onResume} data-action="resume-webhook">
              Re-enable
            </button>
          )}
        </div>
      </header>
      <p>{healthSentence(d)}</p>
      <dl class="facts">
        <dt>Registered by</dt>
        <dd class="mono small">{c.caller}</dd>
        <dt>Last delivered</dt>
        <dd>{d.lastDeliveredAt ? <Ago at={d.lastDeliveredAt} /> : <span class="muted">never</span>}</dd>
        {d.nextAttemptAt && (
          <>
            <dt>Next attempt</dt>
            <dd>
              <Ago at={d.nextAttemptAt} />
            </dd>
          </>
        )}
        <dt>Last error</dt>
        <dd class={d.lastError ? 'danger wrap' : 'muted'}>
          {d.lastError ?? 'none'}
          {d.lastErrorAt && (
            <span class="muted small">
              {' '}
              · <Ago at={d.lastErrorAt} />
            </span>
          )}
        </dd>
      </dl>
    </article>
  );
}

export function Webhooks() {
  const [state, setState] = useState<{ status: 'loading' | 'ready' | 'error'; error?: string; list: PushList | null }>({ status: 'loading', list: null });
  const [busy, setBusy] = useState<string | null>(null);

  const load = async () => {
    try {
      setState({ status: 'ready', list: await listWebhooks() });
    } catch (e) {
      setState((s) => ({ ...s, status: s.status === 'ready' ? 'ready' : 'error', error: (e as Error).message }));
    }
  };
  useEffect(() => {
    void load();
  }, []);
  // Deliveries follow task events: read again shortly after tasks change (once per burst).
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const soon = () => {
      clearTimeout(timer);
      timer = setTimeout(() => void load(), 1000);
    };
    const off = subscribe({ task: soon, resync: soon });
    return () => {
      off();
      clearTimeout(timer);
    };
  }, []);

  // Deliveries happen without task events: while something is on its way, read again now and
  // then, so the page shows it arriving (or failing).
  const moving = !!state.list?.configs.some((c) => c.delivery.state === 'delivering' || c.delivery.state === 'retrying');
  useEffect(() => {
    if (!moving) return;
    const timer = setInterval(() => void load(), 3000);
    return () => clearInterval(timer);
  }, [moving]);

  const resume = async (c: PushConfigView) => {
    setBusy(c.configId);
    try {
      await resumeWebhook(c.taskId, c.configId);
      toast('Webhook re-enabled; what it owes is on its way', 'ok');
      await load();
    } catch (e) {
      toast((e as Error).message, 'bad');
    } finally {
      setBusy(null);
    }
  };

  const list = state.list;
  return (
    <div class="page">
      <PageHeader
        title="Webhooks"
        subtitle={
          list && list.failing > 0
            ? `${list.failing} stopped after failures: each keeps what it owes until you re-enable it`
            : 'Push notifications your callers registered for their tasks'
        }
      />
      {state.status === 'loading' && <Loading />}
      {state.status === 'error' && <ErrorState error={state.error ?? 'Could not load the webhooks'} retry={() => void load()} />}
      {list && list.configs.length === 0 && (
        <Empty title="No webhooks yet" icon="↗">
          Callers register one with CreateTaskPushNotificationConfig, or with a message, for Agents that enable push notifications.
        </Empty>
      )}
      {list && list.configs.map((c) => <Webhook key={`${c.taskId}/${c.configId}`} c={c} busy={busy === c.configId} onResume={() => void resume(c)} />)}
    </div>
  );
}
