// Register a peer: name, URL, bearer token, timeout, private network. Saving checks the peer on
// the server (reads its card, checks it, makes one harmless call) and pins its card, so a
// refusal comes back at once: every field error (422; the server names them all at once) on
// the field it names — a peer that cannot work (unreachable, 0.3-only, not A2A 1.0) on the URL
// field in plain words, with every problem of its card listed below the form's fields —
// anything else (the guard's 403, a taken name) above the form.
// The token is sent once and never shown again: the server keeps it and says only `has_token`.

import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../../api/client';
import { Dialog, FieldError } from '../../components/ui';
import { registerPeer, type PeerView } from './api';
import { emptyPeerForm, MAX_TIMEOUT_SECS, MIN_TIMEOUT_SECS, registrationBody, registrationErrors, type PeerForm, type RegistrationErrors } from './format';

type Errors = RegistrationErrors;

export function PeerDialog(props: { open: boolean; onClose(): void; onSaved(p: PeerView): void }) {
  const [form, setForm] = useState<PeerForm>(emptyPeerForm);
  const [errors, setErrors] = useState<Errors>({});
  const [saving, setSaving] = useState(false);

  // A fresh form each time, so a token typed earlier is not kept in the page.
  useEffect(() => {
    if (props.open) {
      setForm(emptyPeerForm());
      setErrors({});
    }
  }, [props.open]);

  const set = <K extends keyof PeerForm>(k: K, v: PeerForm[K]) => {
    setForm((f) => ({ ...f, [k]: v }));
    setErrors((e) => ({ ...e, [k]: undefined, form: undefined, ...(k === 'url' ? { card: undefined } : {}) }));
  };

  const save = async (e?: Event) => {
    e?.preventDefault();
    const checked = registrationBody(form);
    if (!checked.ok) {
      setErrors(checked.errors);
      return;
    }
    setSaving(true);
    setErrors({});
    try {
      props.onSaved(await registerPeer(checked.body));
    } catch (err) {
      // Every field the server refused, at once, each on its field.
      setErrors(err instanceof ApiError ? registrationErrors(err.fields, err.message) : { form: (err as Error).message });
    } finally {
      setSaving(false);
    }
  };

  const input = (k: 'name' | 'url' | 'token' | 'timeout') => ({
    class: `input${k === 'timeout' ? ' timeout-input' : ' mono'}${errors[k] ? ' invalid' : ''}`,
    value: form[k],
    'aria-invalid': errors[k] ? true : undefined,
    onInput: (e: Event) => set(k, (e.target as HTMLInputElement).value),
  });

  return (
    <Dialog
      open={props.open}
      title="Register a peer"
      onClose={props.onClose}
      footer={
        <>
          <button class="btn" type="button" onClick={props.onClose}>
            Cancel
          </button>
          <button class="btn btn-primary" type="submit" form="peer-form" disabled={saving}>
            {saving ? 'Reading its card…' : 'Register peer'}
          </button>
        </>
      }
    >
      <form id="peer-form" class="form" onSubmit={save} noValidate>
        <p class="muted small">
          Sextant reads the agent’s card now, checks it, makes one harmless call to check the agent speaks A2A 1.0, and pins the card. If the card changes later, the peer is disabled until you
          review it.
        </p>
        {errors.form && (
          <div class="form-error" role="alert">
            {errors.form}
          </div>
        )}
        <label class="field" for="p-name">
          <span class="field-label">Name</span>
          <input id="p-name" {...input('name')} placeholder="helper" maxLength={64} spellcheck={false} autocomplete="off" aria-describedby="err-name" />
          <span class="muted small">Lowercase letters, digits, - and _. How you and your agents call it.</span>
          <FieldError field="name" error={errors.name} />
        </label>
        <label class="field" for="p-url">
          <span class="field-label">URL</span>
          <input id="p-url" {...input('url')} placeholder="https://helper.example.com" spellcheck={false} autocomplete="off" aria-describedby="err-url" />
          <span class="muted small">The agent’s base URL, or its card’s URL. https, or plain http to this machine only.</span>
          <FieldError field="url" error={errors.url} />
          {errors.card?.length ? (
            <div class="field-error" role="alert" data-field-error="card">
              What its card gets wrong ({errors.card.length}):
              <ul class="card-problems">
                {errors.card.map((p) => (
                  <li key={p.field + p.message}>
                    <code>{p.field}</code>: {p.message}
                  </li>
                ))}
              </ul>
            </div>
          ) : null}
        </label>
        <label class="field" for="p-token">
          <span class="field-label">Bearer token (optional)</span>
          <input id="p-token" type="password" {...input('token')} autocomplete="new-password" spellcheck={false} aria-describedby="err-token" />
          <span class="muted small">Kept by Sextant, never shown again; sent only to the peer’s own origin.</span>
          <FieldError field="token" error={errors.token} />
        </label>
        <div class="form-row">
          <label class="field" for="p-timeout">
            <span class="field-label">Timeout (seconds)</span>
            <input
              id="p-timeout"
              inputMode="numeric"
              autocomplete="off"
              placeholder={`${MIN_TIMEOUT_SECS}–${MAX_TIMEOUT_SECS}`}
              {...input('timeout')}
              aria-describedby="err-timeout"
            />
            <FieldError field="timeout" error={errors.timeout} />
          </label>
          <div class="field grow">
            <span class="field-label">Network</span>
            <label class="check" for="p-private">
              <input id="p-private" type="checkbox" checked={form.allowPrivate} onChange={(e) => set('allowPrivate', (e.target as HTMLInputElement).checked)} />
              Allow private network addresses (10/8, 172.16/12, 192.168/16, …)
            </label>
            <FieldError field="allowPrivate" error={errors.allowPrivate} />
          </div>
        </div>
      </form>
    </Dialog>
  );
}
