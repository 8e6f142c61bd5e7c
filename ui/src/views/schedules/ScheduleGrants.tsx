// A schedule's "Always allow for this schedule" approvals: each exact action the person let
// every Run of this schedule run without asking (shown escaped, as its card showed it, with
// its digest), who allowed it and when, and Revoke. A grant whose schedule's prompt or Agent
// changed since no longer applies: it is listed apart, as void, with why.

import { useEffect, useRef, useState } from 'preact/hooks';
import type { ScheduleGrant } from '../../api/types';
import { Ago, toast } from '../../components/ui';
import { listGrants, revokeGrant } from './api';

export function ScheduleGrants(props: { scheduleId: string; version: number }) {
  const [grants, setGrants] = useState<ScheduleGrant[] | null>(null);
  const [error, setError] = useState('');
  const [busy, setBusy] = useState<string | null>(null);
  // Loads overlap (a live update reloads the list while a revoke is on its way): only the
  // latest one to start may set the list, so an answer read before a revoke cannot bring the
  // revoked grant back.
  const latest = useRef(0);
  const load = () => {
    const mine = ++latest.current;
    return listGrants(props.scheduleId).then(
      (g) => {
        if (mine !== latest.current) return;
        setGrants(g);
        setError('');
      },
      (e) => {
        if (mine === latest.current) setError((e as Error).message);
      },
    );
  };
  useEffect(() => {
    void load();
  }, [props.scheduleId, props.version]);

  const revoke = async (g: ScheduleGrant) => {
    setBusy(g.id);
    try {
      await revokeGrant(props.scheduleId, g.id);
      // A load that started before the revoke answers with the grant still there: drop it.
      latest.current++;
      setGrants((list) => (list ?? []).filter((x) => x.id !== g.id));
      toast(g.active ? 'Revoked: the next Run asks again' : 'Removed', 'ok');
    } catch (e) {
      toast((e as Error).message, 'bad');
    } finally {
      setBusy(null);
    }
  };

  const active = (grants ?? []).filter((g) => g.active);
  const voided = (grants ?? []).filter((g) => !g.active);
  return (
    <section class="panel" aria-label="Always allowed">
      <h2 class="panel-title">
        Always allowed <span class="count">{active.length}</span>
      </h2>
      {error && <div class="muted small" role="alert">Could not load: {error}</div>}
      {grants !== null && grants.length === 0 && (
        <p class="muted small">
          Nothing yet. When a Run asks for approval, <strong>Yes, and don't ask again … in any Run of this schedule</strong> lets later Runs run that
          exact command without asking, until the prompt or Agent changes.
        </p>
      )}
      {active.length > 0 && (
        <ul class="grant-list" aria-label="Actions every Run may run without asking">
          {active.map((g) => (
            <Grant key={g.id} g={g} busy={busy === g.id} onRevoke={() => void revoke(g)} />
          ))}
        </ul>
      )}
      {voided.length > 0 && (
        <>
          <h3 class="panel-subtitle muted small">No longer apply</h3>
          <ul class="grant-list void" aria-label="Approvals that no longer apply">
            {voided.map((g) => (
              <Grant key={g.id} g={g} busy={busy === g.id} onRevoke={() => void revoke(g)} />
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

function Grant(props: { g: ScheduleGrant; busy: boolean; onRevoke: () => void }) {
  const { g } = props;
  return (
    <li class="grant" data-grant-id={g.id} data-active={g.active ? 'true' : 'false'}>
      {/* The exact command, invisible and misleading characters escaped, as the card showed it. */}
      <pre class="command-text">
        <code>{g.action.shown}</code>
      </pre>
      {(g.action.flags?.length ?? 0) > 0 && (
        <ul class="action-flags" aria-label="Hidden characters">
          {g.action.flags?.map((f) => (
            <li key={f.code} data-flag={f.code}>
              ⚠ {f.message}
            </li>
          ))}
        </ul>
      )}
      <div class="muted small">
        allowed by {g.granted_by} <Ago at={g.granted_at} /> ·{' '}
        <span title={`Exactly the action with digest ${g.action.digest}`}>
          digest <code>{g.action.digest.replace('sha256:', '').slice(0, 16)}</code>
        </span>
      </div>
      {!g.active && <div class="muted small" data-void>Void: {g.void_reason ?? "the schedule's prompt or Agent changed"}.</div>}
      <button class="btn btn-small btn-ghost danger" disabled={props.busy} onClick={props.onRevoke} data-action="revoke-grant">
        {g.active ? 'Revoke' : 'Remove'}
      </button>
    </li>
  );
}
