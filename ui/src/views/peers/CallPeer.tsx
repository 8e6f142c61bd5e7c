// "Call" on a peer: send it a message as you (optionally in an earlier conversation, by its
// context id). The conversation opens live as soon as its first event arrives (the call itself
// answers only once the peer has); if the peer answers before that, its Session opens then.

import { useEffect, useRef, useState } from 'preact/hooks';
import { Dialog, toast } from '../../components/ui';
import { subscribe } from '../../live/events';
import { navigate } from '../../router';
import { callPeer } from './api';

export function CallPeer(props: { name: string; disabled?: boolean }) {
  const [open, setOpen] = useState(false);
  const [message, setMessage] = useState('');
  const [context, setContext] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const stop = useRef<(() => void) | null>(null);
  useEffect(() => () => stop.current?.(), []);
  const call = async (e: Event) => {
    e.preventDefault();
    if (!message.trim()) {
      setError('Write a message to send.');
      return;
    }
    setBusy(true);
    setError(null);
    let opened = false;
    const go = (sessionId: string) => {
      if (opened) return;
      opened = true;
      stop.current?.();
      setOpen(false);
      navigate(`/sessions/${sessionId}`);
    };
    // The outbound conversation's Session is journalled as the call starts: open it live then.
    stop.current = subscribe({
      task(c) {
        if (c.agentId === `peer:${props.name}`) go(c.sessionId);
      },
    });
    try {
      const r = await callPeer(props.name, message, context.trim() || undefined);
      setMessage('');
      if (!opened) go(r.session_id);
      else toast(`${props.name} answered (${r.status}).`, 'ok');
    } catch (err) {
      stop.current?.();
      if (opened) toast(`Calling ${props.name} failed: ${(err as Error).message}`, 'bad');
      else setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button class="btn btn-small" disabled={props.disabled} onClick={() => setOpen(true)} data-action="call" title="Send it a message as you">
        Call
      </button>
      <Dialog
        open={open}
        title={`Call ${props.name}`}
        onClose={() => setOpen(false)}
        footer={
          <>
            <button class="btn" type="button" onClick={() => setOpen(false)}>
              Cancel
            </button>
            <button class="btn btn-primary" type="submit" form="call-peer-form" disabled={busy}>
              {busy ? 'Calling…' : 'Call'}
            </button>
          </>
        }
      >
        <form id="call-peer-form" class="form" onSubmit={(e) => void call(e)} noValidate>
          <p class="muted small">Sent as you, through the network guard, to the pinned peer. Its answer is screened like any peer’s, and a question it asks comes to your inbox.</p>
          {error && (
            <div class="form-error" role="alert">
              {error}
            </div>
          )}
          <label class="field" for="cp-message">
            <span class="field-label">Message</span>
            <textarea id="cp-message" class="input textarea" rows={4} value={message} onInput={(e) => setMessage((e.target as HTMLTextAreaElement).value)} />
          </label>
          <label class="field" for="cp-context">
            <span class="field-label">Context id (optional: continue an earlier conversation)</span>
            <input id="cp-context" class="input" value={context} spellcheck={false} autocomplete="off" onInput={(e) => setContext((e.target as HTMLInputElement).value)} />
          </label>
        </form>
      </Dialog>
    </>
  );
}
