// The desktop host: this page inside the Tauri shell (src-tauri, crate `sextant-app`). The
// shell points its window at the embedded server's own URL, so the page is the same page a
// browser gets from `sextant serve` and its only data path stays HTTP + SSE to that server.
// What differs is the credential: the shell's one command, `bootstrap`, hands over the server
// address and this launch's bearer token (no cookie, no sign-in; the token dies with the app).
//
// `notify` and `setBadge` are left out on purpose: the shell shows notifications and the tray
// count itself, from its own subscription to the server, so they also work while the window
// is hidden; doing it here as well would notify twice. A notification's click comes back as
// the `sextant://open` event, which this host turns into a client-side navigation.
//
// `@tauri-apps/api` is imported lazily: the web build never loads it.

import type { Host } from './index';

/** What `invoke('bootstrap')` returns (src-tauri/src/commands.rs). */
export interface Bootstrap {
  /** `http://127.0.0.1:PORT`: the page's own origin. */
  serverAddress: string;
  /** This launch's owner token. */
  token: string;
}

/** The shell asks the page to show a console path (src-tauri/src/lib.rs `OPEN_EVENT`). */
export const OPEN_EVENT = 'sextant://open';

/** The Tauri calls this host makes (replaced in tests). */
export interface TauriBridge {
  invoke<T>(cmd: string): Promise<T>;
  listen(event: string, handler: (payload: string) => void): Promise<unknown>;
}

const tauri: TauriBridge = {
  async invoke<T>(cmd: string): Promise<T> {
    const { invoke } = await import('@tauri-apps/api/core');
    return invoke<T>(cmd);
  },
  async listen(event, handler) {
    const { listen } = await import('@tauri-apps/api/event');
    return listen<string>(event, (e) => handler(e.payload));
  },
};

/** Whether this page runs inside the Tauri shell. */
export function inTauri(w: object = window): boolean {
  return '__TAURI_INTERNALS__' in w;
}

/** The Tauri shell's host. */
export function desktopHost(bridge: TauriBridge = tauri, w: NavWindow = window): Host {
  let boot: Promise<Bootstrap> | null = null;
  const bootstrap = (refresh = false): Promise<Bootstrap> => {
    if (!boot || refresh) {
      boot = bridge.invoke<Bootstrap>('bootstrap');
      boot.catch(() => {
        boot = null;
      });
    }
    return boot;
  };
  bridge.listen(OPEN_EVENT, (path) => openPath(path, w)).catch((e) => {
    console.warn('sextant: cannot follow the shell’s open requests', e);
  });
  return {
    kind: 'desktop',
    async getServerAddress() {
      return (await bootstrap()).serverAddress.replace(/\/+$/, '');
    },
    async getToken(opts) {
      return (await bootstrap(opts?.refresh)).token;
    },
  };
}

/** The parts of `window` that `openPath` uses. */
export type NavWindow = Pick<Window, 'history' | 'location' | 'dispatchEvent'>;

/**
 * Shows `path` (a console route, maybe with `#<id>`) without reloading the page: pushes it and
 * fires `popstate`, which the router follows, and `hashchange` when only the hash moved
 * (a view already showing can react to it). Anything but a same-origin path is ignored.
 */
export function openPath(path: string, w: NavWindow = window): void {
  if (!path.startsWith('/') || path.startsWith('//')) return;
  const before = w.location.pathname + w.location.search + w.location.hash;
  if (before === path) return;
  const hashBefore = w.location.hash;
  w.history.pushState(null, '', path);
  w.dispatchEvent(new Event('popstate'));
  if (w.location.hash !== hashBefore) w.dispatchEvent(new Event('hashchange'));
}
