// Entry: get a credential from the host, then start the live connection and render. When the
// host cannot get one by itself (a browser on another machine, another user), the person
// signs in by pasting the owner token, which is sent in a POST body only.

import { render } from 'preact';
import { useState } from 'preact/hooks';
import { UNREACHABLE } from './api/client';
import { App } from './app';
import { host, signInNeeded, SignInRequired } from './host';
import { startLive } from './live/events';
import { showScheduleNotices } from './live/scheduleNotices';
import { startInbox } from './views/inbox/store';
import { startTasks } from './views/tasks/store';
import './styles.css';

const root = document.getElementById('app')!;

function SignIn(props: { reason: string; onDone(): void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    try {
      await host().signIn?.(token.trim());
      props.onDone();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div class="signin">
      <form class="card signin-card" onSubmit={submit}>
        <h1>Connect to Sextant</h1>
        <p class="muted">{props.reason}</p>
        <p>
          Paste the console token. On the machine running Sextant, <code>sextant token</code> prints it.
        </p>
        <label class="field" for="token">
          <span class="field-label">Token</span>
          <input id="token" class="input mono" type="password" autocomplete="off" value={token} onInput={(e) => setToken((e.target as HTMLInputElement).value)} />
        </label>
        {error && (
          <div class="field-error" role="alert">
            {error}
          </div>
        )}
        <button class="btn btn-primary" disabled={busy || !token.trim()}>
          Sign in
        </button>
      </form>
    </div>
  );
}

function start() {
  startLive();
  showScheduleNotices();
  startInbox();
  startTasks();
  render(<App />, root);
  // The sign-in ended while the page was open: ask again, saying why, then start afresh.
  signInNeeded.subscribe((why) => {
    if (why) render(<SignIn reason={why} onDone={() => location.reload()} />, root);
  });
}

async function boot() {
  try {
    await host().getToken();
    start();
  } catch (e) {
    if (e instanceof SignInRequired && host().signIn) {
      render(<SignIn reason={e.message} onDone={() => start()} />, root);
    } else {
      render(
        <div class="signin">
          <div class="card signin-card" role="alert">
            <h1>Sextant is not reachable</h1>
            <p class="muted">{e instanceof TypeError ? UNREACHABLE : (e as Error).message}</p>
            <button class="btn btn-primary" onClick={() => location.reload()}>
              Try again
            </button>
          </div>
        </div>,
        root,
      );
    }
  }
}

void boot();
