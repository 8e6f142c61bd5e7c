// The person's assistants: each assistant's workspace token and the credentials it holds for
// the person's Agents (its A2A peers), with a way to issue them (shown once, with the Hermes
// `a2a_agents:` block) and to revoke one or the assistant itself, which revokes them all.

import { useEffect, useState } from 'preact/hooks';
import { Ago, Badge, Confirm, Dialog, Empty, ErrorState, Loading, toast } from '../../components/ui';
import { createAssistant, issuePeers, listAssistants, revokeAssistant, revokePeer, type AssistantToken, type IssuedPeers } from './api';
import { activePeers, sortAssistants } from './assistants';

/** Text shown once: the person copies it now, Sextant keeps only hashes. */
function ShownOnce(props: { title: string; text: string; onClose(): void }) {
  const copy = () =>
    navigator.clipboard?.writeText(props.text).then(
      () => toast('Copied', 'ok'),
      () => toast('Copy failed: select the text instead', 'bad'),
    );
  return (
    <Dialog
      open
      wide
      title={props.title}
      onClose={props.onClose}
      footer={
        <>
          <button class="btn" onClick={() => void copy()}>
            Copy
          </button>
          <button class="btn btn-primary" onClick={props.onClose}>
            Done
          </button>
        </>
      }
    >
      <p class="muted">Shown only now: Sextant keeps only the tokens' SHA-256.</p>
      <pre class="shown-once mono" data-shown-once>
        {props.text}
      </pre>
    </Dialog>
  );
}

export function Assistants() {
  const [state, setState] = useState<{ status: 'loading' | 'ready' | 'error'; error?: string; list: AssistantToken[] }>({ status: 'loading', list: [] });
  const [busy, setBusy] = useState<string | null>(null);
  const [shown, setShown] = useState<{ title: string; text: string } | null>(null);
  const [toRevoke, setToRevoke] = useState<AssistantToken | null>(null);
  const [name, setName] = useState('');

  const load = async () => {
    try {
      setState({ status: 'ready', list: sortAssistants(await listAssistants()) });
    } catch (e) {
      setState((s) => ({ ...s, status: s.status === 'ready' ? 'ready' : 'error', error: (e as Error).message }));
    }
  };
  useEffect(() => void load(), []);

  const act = async (key: string, f: () => Promise<void>) => {
    setBusy(key);
    try {
      await f();
      await load();
    } catch (e) {
      toast((e as Error).message, 'bad');
    } finally {
      setBusy(null);
    }
  };
  const create = () =>
    act('create', async () => {
      const t = await createAssistant(name.trim());
      setName('');
      setShown({ title: `Workspace token of assistant ${t.name}`, text: t.token });
    });
  const issue = (t: AssistantToken) =>
    act(t.id, async () => {
      const r: IssuedPeers = await issuePeers(t.name);
      setShown({ title: `Peers for assistant ${t.name}: paste into Hermes' config.yaml`, text: r.hermesConfig });
    });

  return (
    <section class="panel" aria-label="Assistants" data-assistants>
      <h2 class="panel-title">Assistants</h2>
      <p class="muted small">
        An assistant acts for you: it manages your schedules and calls your Agents as its A2A peers, each with a credential for that one Agent.
      </p>
      <form
        class="inline-form"
        onSubmit={(e) => {
          e.preventDefault();
          if (name.trim()) void create();
        }}
      >
        <input class="input" aria-label="Assistant name" placeholder="name, e.g. hermes" value={name} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        <button class="btn" disabled={!name.trim() || busy === 'create'}>
          New assistant token
        </button>
      </form>
      {state.status === 'loading' && <Loading label="Loading assistants…" />}
      {state.status === 'error' && <ErrorState error={state.error ?? ''} retry={() => void load()} />}
      {state.status === 'ready' && state.list.length === 0 && <Empty title="No assistant tokens yet" icon="✦" />}
      {state.status === 'ready' && state.list.length > 0 && (
        <ul class="assistant-list">
          {state.list.map((t) => (
            <li key={t.id} class={`assistant${t.active ? '' : ' disabled-row'}`} data-assistant={t.name}>
              <div class="assistant-head">
                <strong>{t.name}</strong>
                <Badge tone={t.active ? 'ok' : 'muted'}>{t.active ? 'active' : 'revoked'}</Badge>
                <span class="muted small">{t.scope === 'workspace' ? 'workspace token' : `for ${t.agentId}`}</span>
                <span class="muted small">
                  created <Ago at={t.createdAt} />
                </span>
                {t.active && (
                  <span class="row-actions">
                    {t.scope === 'workspace' && (
                      <button class="btn btn-small" disabled={busy === t.id} onClick={() => void issue(t)} data-action="issue-peers">
                        Issue peers
                      </button>
                    )}
                    <button class="btn btn-small btn-ghost danger" onClick={() => setToRevoke(t)} data-action="revoke-assistant">
                      Revoke
                    </button>
                  </span>
                )}
              </div>
              {t.active && activePeers(t).length > 0 && (
                <ul class="chips" aria-label={`Credentials of ${t.name}`}>
                  {activePeers(t).map((p) => (
                    <li key={p.id} class="chip" data-peer={p.agentId}>
                      {p.agentId}
                      <button
                        class="chip-x"
                        title={`Revoke ${t.name}'s credential for ${p.agentId}`}
                        aria-label={`Revoke ${t.name}'s credential for ${p.agentId}`}
                        disabled={busy === p.id}
                        onClick={() => void act(p.id, () => revokePeer(t.name, p.agentId))}
                      >
                        ×
                      </button>
                    </li>
                  ))}
                </ul>
              )}
            </li>
          ))}
        </ul>
      )}
      {shown && <ShownOnce title={shown.title} text={shown.text} onClose={() => setShown(null)} />}
      <Confirm
        open={!!toRevoke}
        title={`Revoke assistant ${toRevoke?.name ?? ''}?`}
        confirm="Revoke"
        busy={busy === 'revoke'}
        onClose={() => setToRevoke(null)}
        onConfirm={() =>
          void act('revoke', async () => {
            if (toRevoke) await revokeAssistant(toRevoke.name);
            setToRevoke(null);
          })
        }
      >
        <p>Its token and every credential it holds stop working at once. The plans it made stay yours; their Runs are blocked until you issue a token with this name again.</p>
      </Confirm>
    </section>
  );
}
