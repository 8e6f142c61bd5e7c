// The console's frame: navigation with the pending-approvals count and the connection
// indicator, the routed page, toasts; and the sign-in page when the host cannot get a
// credential by itself.

import { useLayoutEffect } from 'preact/hooks';
import { Empty, Toasts } from './components/ui';
import { link } from './live/events';
import { Link, location, match, type Route } from './router';
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
    <div class={`connection live-${s}`} role="status" aria-live="polite" title="Live updates from Sextant" data-connection={s}>
      <span class="dot" aria-hidden="true" />
      {words}
    </div>
  );
}

function NavItem(props: { href: string; active: boolean; label: string; icon: string; count?: number }) {
  return (
    <Link href={props.href} class={`nav-item${props.active ? ' active' : ''}`} aria-current={props.active ? 'page' : undefined}>
      <span class="nav-icon" aria-hidden="true">
        {props.icon}
      </span>
      <span class="nav-label">{props.label}</span>
      {props.count ? (
        <span class="nav-count" aria-label={`${props.count} pending`}>
          {props.count}
        </span>
      ) : null}
    </Link>
  );
}

export function App() {
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
      <nav class="sidebar" aria-label="Sextant">
        <Link href="/" class="brand">
          <svg viewBox="0 0 32 32" width="26" height="26" aria-hidden="true">
            <rect width="32" height="32" rx="7" fill="var(--accent)" />
            <path d="M16 6 L25 24 H7 Z" fill="none" stroke="#fff" stroke-width="2.4" stroke-linejoin="round" />
            <circle cx="16" cy="18" r="2.6" fill="#fff" />
          </svg>
          <span>Sextant</span>
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
        </div>
      </nav>
      <div class="content">{page(route)}</div>
      <Toasts />
    </div>
  );
}
