// The console's frame: navigation with the pending-approvals count and the connection
// indicator, the routed page, toasts; and the sign-in page when the host cannot get a
// credential by itself.

import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { Dialog, Empty, toast, Toasts } from './components/ui';
import { host } from './host';
import { globalKey, KEY_HELP, type GlobalKeyState } from './lib/globalKeys';
import { link } from './live/events';
import { Link, location, match, navigate, type Route } from './router';
import { Home } from './views/home/Home';
import { Inbox } from './views/inbox/Inbox';
import { pageTitle } from './views/inbox/state';
import { pendingCount } from './views/inbox/store';
import { Peers } from './views/peers/Peers';
import { ScheduleDetail } from './views/schedules/ScheduleDetail';
import { Schedules } from './views/schedules/Schedules';
import { SessionPage } from './views/sessions/Session';
import { TaskDetail } from './views/tasks/TaskDetail';
import { Tasks } from './views/tasks/Tasks';
import { Webhooks } from './views/webhooks/Webhooks';

const VIEW_NAMES: Record<Route['name'], string> = {
  home: 'Overview',
  inbox: 'Approvals',
  tasks: 'Tasks',
  task: 'Task',
  schedules: 'Schedules',
  schedule: 'Schedule',
  peers: 'Peers',
  webhooks: 'Webhooks',
  session: 'Session',
  notFound: 'Not found',
};

function page(r: Route) {
  switch (r.name) {
    case 'home':
      return <Home />;
    case 'inbox':
      return <Inbox />;
    case 'tasks':
      return <Tasks />;
    case 'task':
      return <TaskDetail key={r.id} id={r.id} />;
    case 'schedules':
      return <Schedules />;
    case 'schedule':
      return <ScheduleDetail key={r.id} id={r.id} />;
    case 'peers':
      return <Peers />;
    case 'webhooks':
      return <Webhooks />;
    case 'session':
      return <SessionPage key={r.id} id={r.id} />;
    case 'notFound':
      return (
        <div class="page">
          <Empty title="Page not found" icon="?">
            <Link href="/" class="link">
              Back to the overview
            </Link>
          </Empty>
        </div>
      );
  }
}

function Connection() {
  const s = link.value;
  const words = { connecting: 'Connecting…', live: 'Live', reconnecting: 'Reconnecting…', offline: 'Offline — retrying' }[s];
  return (
    <div class={`connection live-${s}`} role="status" aria-live="polite" title={`Live updates from Sextant: ${words}`} data-connection={s}>
      <span class="dot" aria-hidden="true" />
      <span class="connection-words">{words}</span>
    </div>
  );
}

/** Ends this browser's sign-in (web host only; the desktop shell has no session to end). */
function SignOut() {
  const h = host();
  const [busy, setBusy] = useState(false);
  if (!h.signOut) return null;
  const click = async () => {
    setBusy(true);
    try {
      await h.signOut?.();
    } catch (e) {
      setBusy(false);
      toast((e as Error).message, 'bad');
    }
  };
  return (
    <button type="button" class="sign-out" disabled={busy} onClick={click} title="Sign out of Sextant in this browser">
      <span class="sign-out-icon" aria-hidden="true">
        ⏻
      </span>
      <span class="sign-out-words">Sign out</span>
    </button>
  );
}

/** Said while Sextant cannot be reached: what works and what waits. */
function OfflineBanner() {
  const s = link.value;
  if (s === 'live' || s === 'connecting') return null;
  return (
    <div class="offline-banner" role="alert" data-offline={s}>
      <strong>{s === 'offline' ? 'Sextant is not reachable.' : 'Reconnecting to Sextant…'}</strong> What you see may be out of date, and answers
      wait until it is back; the page reconnects by itself.
    </div>
  );
}

/** A navigation link. On narrow screens only its icon shows; its label stays its name. */
function NavItem(props: { href: string; active: boolean; label: string; icon: string; count?: number }) {
  return (
    <Link href={props.href} class={`nav-item${props.active ? ' active' : ''}`} aria-current={props.active ? 'page' : undefined} title={props.label}>
      <span class="nav-icon" aria-hidden="true">
        {props.icon}
      </span>
      <span class="nav-label">{props.label}</span>
      {props.count ? (
        <span class="nav-count">
          {props.count}
          <span class="sr-only"> pending</span>
        </span>
      ) : null}
    </Link>
  );
}

function inField(t: EventTarget | null): boolean {
  const el = t as HTMLElement | null;
  return !!el && (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT' || el.isContentEditable);
}

/** Focuses the task search, once the Tasks page has rendered it. */
function focusSearch(tries = 20) {
  const el = document.getElementById('task-search') as HTMLInputElement | null;
  if (el) {
    el.focus();
    el.select();
  } else if (tries > 0) setTimeout(() => focusSearch(tries - 1), 30);
}

/** The console's own keys (see lib/globalKeys.ts), and the help they open. */
function useGlobalKeys(): [boolean, (v: boolean) => void] {
  const [help, setHelp] = useState(false);
  const state = useRef<GlobalKeyState>({ gAt: null });
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (document.querySelector('dialog[open]')) return;
      const r = globalKey(state.current, { key: e.key, ctrl: e.ctrlKey, meta: e.metaKey, alt: e.altKey, inField: inField(e.target) }, Date.now());
      state.current = r.state;
      if (r.action.type === 'none') return;
      // Before the page's own keys (the inbox's): `g i` must not also arm an option `i`.
      e.preventDefault();
      e.stopImmediatePropagation();
      if (r.action.type === 'go') navigate(r.action.to);
      else if (r.action.type === 'search') {
        if (location.value.path !== '/tasks') navigate('/tasks' + (location.value.path === '/tasks' ? location.value.search : ''));
        focusSearch();
      } else if (r.action.type === 'help') setHelp(true);
    };
    window.addEventListener('keydown', onKey, true);
    return () => window.removeEventListener('keydown', onKey, true);
  }, []);
  return [help, setHelp];
}

function KeysHelp(props: { open: boolean; onClose(): void }) {
  return (
    <Dialog open={props.open} title="Keyboard shortcuts" onClose={props.onClose}>
      <dl class="keys-help">
        {KEY_HELP.map(([k, what]) => (
          <div key={k}>
            <dt>
              {k.split(' ').map((p) => (
                <kbd key={p}>{p}</kbd>
              ))}
            </dt>
            <dd>{what}</dd>
          </div>
        ))}
      </dl>
      <h3 class="panel-title">In Approvals</h3>
      <dl class="keys-help">
        <div>
          <dt>
            <kbd>j</kbd> <kbd>k</kbd>
          </dt>
          <dd>Next / previous card</dd>
        </div>
        <div>
          <dt>
            <kbd>y</kbd> <kbd>a</kbd> <kbd>n</kbd> <kbd>c</kbd>…
          </dt>
          <dd>Choose the card’s option with that key</dd>
        </div>
        <div>
          <dt>
            <kbd>Enter</kbd>
          </dt>
          <dd>Answer with the chosen option</dd>
        </div>
        <div>
          <dt>
            <kbd>x</kbd>
          </dt>
          <dd>Select the card for a bulk answer</dd>
        </div>
        <div>
          <dt>
            <kbd>u</kbd>
          </dt>
          <dd>Undo the last answer while it waits to be sent</dd>
        </div>
        <div>
          <dt>
            <kbd>Esc</kbd>
          </dt>
          <dd>Put the chosen option down</dd>
        </div>
      </dl>
    </Dialog>
  );
}

export function App() {
  const [help, setHelp] = useGlobalKeys();
  const route = match(location.value.path);
  const pending = pendingCount.value;
  // A layout effect, not useEffect: Preact runs effects after the next animation frame, which a
  // background tab does not get (only a throttled fallback timer), and the count in the tab's
  // title matters most when the tab is in the background.
  useLayoutEffect(() => {
    document.title = pageTitle(pending, VIEW_NAMES[route.name]);
  }, [pending, route.name]);
  const section = route.name === 'task' ? 'tasks' : route.name === 'schedule' ? 'schedules' : route.name;
  return (
    <div class="shell">
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <nav class="sidebar" aria-label="Sextant">
        <Link href="/" class="brand" title="Sextant: overview">
          <svg viewBox="0 0 32 32" width="26" height="26" aria-hidden="true">
            <rect width="32" height="32" rx="7" fill="var(--accent)" />
            <path d="M16 6 L25 24 H7 Z" fill="none" stroke="#fff" stroke-width="2.4" stroke-linejoin="round" />
            <circle cx="16" cy="18" r="2.6" fill="#fff" />
          </svg>
          <span class="brand-name">Sextant</span>
        </Link>
        <div class="nav">
          <NavItem href="/" active={section === 'home'} label="Overview" icon="◎" />
          <NavItem href="/inbox" active={section === 'inbox'} label="Approvals" icon="✓" count={pending} />
          <NavItem href="/tasks" active={section === 'tasks'} label="Tasks" icon="≡" />
          <NavItem href="/schedules" active={section === 'schedules'} label="Schedules" icon="◷" />
          <NavItem href="/peers" active={section === 'peers'} label="Peers" icon="⇄" />
          <NavItem href="/webhooks" active={section === 'webhooks'} label="Webhooks" icon="↗" />
        </div>
        <div class="sidebar-foot">
          <Connection />
          <SignOut />
        </div>
      </nav>
      <main class="content" id="main" tabIndex={-1}>
        <OfflineBanner />
        {page(route)}
      </main>
      <Toasts />
      <KeysHelp open={help} onClose={() => setHelp(false)} />
    </div>
  );
}
