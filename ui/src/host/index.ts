// The host the console runs in: a browser tab against `sextant serve` (web), or the desktop
// window of the Tauri shell. This folder is the ONLY place that may import `@tauri-apps/*`
// (scripts/test.sh fails on any other importer), so the same UI runs in both.
//
// The desktop shell's host is `desktop.ts`: the server address and per-launch token come from
// its one Tauri command; `detectHost()` returns it when the page runs inside Tauri.

import { signal } from '@preact/signals';
import { desktopHost, inTauri } from './desktop';
import { faviconBadge, webNotify } from './notify';

/**
 * Set when the page was signed in and no longer is (the server restarted, so its console
 * cookie ended, and this browser cannot get a new one by itself): why, in words. The page then
 * asks for the token again, saying so.
 */
export const signInNeeded = signal<string | null>(null);

/** What the UI needs from its host. */
export interface Host {
  readonly kind: 'web' | 'desktop';
  /** The server's base URL, without a trailing slash (e.g. `http://127.0.0.1:9900`). */
  getServerAddress(): Promise<string>;
  /**
   * The bearer token for API calls, or `null` when the host authenticates otherwise (the web
   * host: a same-origin HttpOnly cookie that the browser sends by itself).
   * `refresh: true` after a 401: set up the credential again (the server restarted).
   * Rejects with `SignInRequired` when the person has to sign in with the token.
   */
  getToken(opts?: { refresh?: boolean }): Promise<string | null>;
  /** Signs in with a pasted owner token (hosts that cannot get one by themselves). */
  signIn?(token: string): Promise<void>;
  /**
   * Ends this browser's console session (`POST /api/v1/session/logout`) and shows the sign-in
   * page (via `signInNeeded`); until the page is reloaded it does not sign in again by itself.
   * Web host only: the desktop shell's credential is its per-launch token.
   */
  signOut?(): Promise<void>;
  /** A desktop notification (e.g. a new approval); `onClick` opens it in the console. */
  notify?(n: { title: string; body: string; onClick?: () => void }): void;
  /** The pending-approvals count on the app icon / tray. */
  setBadge?(count: number): void;
}

/** The host could not get a credential by itself: the person must paste the token. */
export class SignInRequired extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SignInRequired';
  }
}

const JSON_HEADERS = { 'Content-Type': 'application/json', Accept: 'application/json' };

async function bootstrap(body: object): Promise<void> {
  const res = await fetch('/api/v1/session/bootstrap', {
    method: 'POST',
    headers: JSON_HEADERS,
    body: JSON.stringify(body),
    credentials: 'same-origin',
    cache: 'no-store',
  });
  if (res.ok) return;
  let message = `${res.status} ${res.statusText}`;
  try {
    const j = await res.json();
    if (j?.error?.message) message = j.error.message;
  } catch {
    /* not JSON */
  }
  if (res.status === 401 || res.status === 403) throw new SignInRequired(message);
  throw new Error(message);
}

/**
 * The browser host. The page is served by Sextant itself, so the server is the page's origin.
 * Its credential is a console session cookie (HttpOnly, SameSite=Strict, scoped to /api) set
 * by `POST /api/v1/session/bootstrap`: the server grants it to a same-origin page on loopback
 * opened by the user Sextant runs as, or after the person pastes the token. The token never
 * appears in a URL and JavaScript never holds it.
 */
/**
 * Whether this browser's console cookie still works (`GET /api/v1/session`); otherwise a new
 * one by loopback trust. A page signed in with the token keeps its cookie across reloads and
 * tabs, so it is asked for the token only when the cookie ended, and is told why.
 */
async function ensureSession(): Promise<void> {
  const res = await fetch('/api/v1/session', { headers: { Accept: 'application/json' }, credentials: 'same-origin', cache: 'no-store' });
  if (res.ok) return;
  let ended: string | null = null;
  try {
    const j = await res.json();
    if (j?.error?.code === 'session_ended') ended = String(j.error.message);
  } catch {
    /* not JSON */
  }
  try {
    await bootstrap({});
  } catch (e) {
    if (e instanceof SignInRequired && ended) throw new SignInRequired(ended);
    throw e;
  }
}

/** Said on the sign-in page after the person signed out. */
export const SIGNED_OUT =
  'You signed out of this browser. To sign in again, paste the token; on the machine running Sextant, reloading the page signs in by itself.';

export function webHost(): Host {
  let ready: Promise<void> | null = null;
  // After a sign-out the page must not sign straight back in by loopback trust (on the next
  // 401 of a stream, say): only a pasted token or a reload does.
  let signedOut = false;
  return {
    kind: 'web',
    async getServerAddress() {
      return window.location.origin;
    },
    async getToken(opts) {
      if (signedOut) throw new SignInRequired(SIGNED_OUT);
      if (!ready || opts?.refresh) {
        const mid = !!opts?.refresh;
        ready = ensureSession();
        ready.catch((e) => {
          ready = null;
          // Signed in before, and not any more: the page asks for the token, saying why.
          if (mid && e instanceof SignInRequired) signInNeeded.value = e.message;
        });
      }
      await ready;
      return null;
    },
    async signIn(token: string) {
      await bootstrap({ token });
      signedOut = false;
      ready = Promise.resolve();
    },
    async signOut() {
      // Set first, so no request in flight signs back in by loopback trust meanwhile.
      signedOut = true;
      let res: Response;
      try {
        res = await fetch('/api/v1/session/logout', {
          method: 'POST',
          headers: JSON_HEADERS,
          body: '{}',
          credentials: 'same-origin',
          cache: 'no-store',
        });
      } catch (e) {
        signedOut = false;
        throw new Error(`Signing out failed: ${(e as Error).message}`);
      }
      if (!res.ok) {
        // The session may still be live: say so, and stay signed in.
        signedOut = false;
        throw new Error(`Signing out failed: ${res.status} ${res.statusText}`);
      }
      ready = null;
      signInNeeded.value = SIGNED_OUT;
    },
    notify: webNotify,
    setBadge: faviconBadge,
  };
}

let current: Host | null = null;

/** Picks the host once: the desktop shell's inside Tauri, else the web host. */
export function detectHost(): Host {
  if (inTauri()) return desktopHost();
  return webHost();
}

/** The host of this page. */
export function host(): Host {
  if (!current) current = detectHost();
  return current;
}

/** Replaces the host (tests). */
export function setHost(h: Host): void {
  current = h;
}
