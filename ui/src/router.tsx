// Client-side routes on the History API: `/`, `/inbox`, `/tasks`, `/tasks/{id}`,
// `/schedules`, `/schedules/{id}`, `/peers`, `/webhooks`, `/sessions/{id}`. The server answers index.html for each,
// so every one works as a deep link (`/sessions/{id}` is the console link in results).

import { signal } from '@preact/signals';
import type { ComponentChildren, JSX } from 'preact';

/** The current location: path and query. */
export const location = signal({ path: window.location.pathname, search: window.location.search });

window.addEventListener('popstate', () => {
  location.value = { path: window.location.pathname, search: window.location.search };
});

/** Goes to `to` (a path with optional query) without reloading. */
export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  const u = new URL(to, window.location.origin);
  if (u.pathname + u.search === location.value.path + location.value.search) return;
  if (opts.replace) history.replaceState(null, '', u.pathname + u.search);
  else history.pushState(null, '', u.pathname + u.search);
  location.value = { path: u.pathname, search: u.search };
  window.scrollTo(0, 0);
}

/** A route and its parameters. */
export type Route =
  | { name: 'home' }
  | { name: 'inbox' }
  | { name: 'tasks' }
  | { name: 'task'; id: string }
  | { name: 'schedules' }
  | { name: 'schedule'; id: string }
  | { name: 'peers' }
  | { name: 'webhooks' }
  | { name: 'session'; id: string }
  | { name: 'notFound' };

/** Which route a path is. */
export function match(path: string): Route {
  const p = path.replace(/\/+$/, '') || '/';
  if (p === '/') return { name: 'home' };
  if (p === '/inbox') return { name: 'inbox' };
  if (p === '/tasks') return { name: 'tasks' };
  if (p === '/schedules') return { name: 'schedules' };
  if (p === '/peers') return { name: 'peers' };
  if (p === '/webhooks') return { name: 'webhooks' };
  const m = /^\/(tasks|schedules|sessions)\/([A-Za-z0-9._-]+)$/.exec(p);
  if (m) {
    const id = decodeURIComponent(m[2]);
    if (m[1] === 'tasks') return { name: 'task', id };
    if (m[1] === 'schedules') return { name: 'schedule', id };
    return { name: 'session', id };
  }
  return { name: 'notFound' };
}

/** A link that navigates client-side (new tab and modified clicks behave as usual). */
export function Link(props: { href: string; class?: string; children: ComponentChildren; title?: string; 'aria-current'?: JSX.AriaAttributes['aria-current'] }) {
  const onClick = (e: MouseEvent) => {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(props.href);
  };
  return (
    <a href={props.href} class={props.class} onClick={onClick} title={props.title} aria-current={props['aria-current']}>
      {props.children}
    </a>
  );
}
