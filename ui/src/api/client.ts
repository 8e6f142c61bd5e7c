// The typed REST client: every call goes to the host's server, with the host's credential
// (a bearer token on desktop; on the web, the console session cookie the browser sends).
// Errors come back as `ApiError`, carrying the server's `{error: {code, message, field}}`.

import { host } from '../host';

/** A failed API call. `field` names the offending field of an `invalid_field` (422) error. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly field?: string;
  /** Every invalid field of a 422, when the server names several at once. */
  readonly fields: { field: string; message: string }[];
  constructor(status: number, code: string, message: string, field?: string, fields?: { field: string; message: string }[]) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.field = field;
    this.fields = fields ?? (field ? [{ field, message }] : []);
  }
}

/** What a failed request says when Sextant cannot be reached (never the browser's "Failed to fetch"). */
export const UNREACHABLE = 'Sextant is not reachable. Check that it is running; the page reconnects by itself.';

/** The request never got an HTTP answer (Sextant is down, or the network is). */
export function isNetworkError(e: unknown): boolean {
  return e instanceof TypeError || (e instanceof ApiError && e.code === 'unreachable');
}

/** Parses an error response into an `ApiError`. */
export async function errorFrom(res: Response): Promise<ApiError> {
  let code = 'http_' + res.status;
  let message = `${res.status} ${res.statusText || 'error'}`;
  let field: string | undefined;
  let fields: { field: string; message: string }[] | undefined;
  try {
    const j = await res.json();
    if (j && typeof j === 'object' && j.error) {
      code = String(j.error.code ?? code);
      message = String(j.error.message ?? message);
      field = j.error.field ?? undefined;
      if (Array.isArray(j.error.fields)) fields = j.error.fields.map((f: { field: unknown; message: unknown }) => ({ field: String(f.field), message: String(f.message) }));
    }
  } catch {
    /* not JSON */
  }
  return new ApiError(res.status, code, message, field, fields);
}

/** Headers for a request: auth (when the host has a token) and JSON. */
export async function authHeaders(refresh = false): Promise<Record<string, string>> {
  const token = await host().getToken({ refresh });
  return token ? { Authorization: `Bearer ${token}` } : {};
}

/** A full URL on the server. */
export async function url(path: string): Promise<string> {
  return (await host().getServerAddress()) + path;
}

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  body?: unknown;
  signal?: AbortSignal;
}

/**
 * Calls the API. Writes send `Content-Type: application/json` (the server requires it, even
 * without a body). A 401 sets up the credential again once, then retries.
 */
export async function api<T>(path: string, opts: RequestOptions = {}): Promise<T> {
  const method = opts.method ?? 'GET';
  const send = async (refresh: boolean) => {
    const headers: Record<string, string> = { Accept: 'application/json', ...(await authHeaders(refresh)) };
    if (method !== 'GET') headers['Content-Type'] = 'application/json';
    return fetch(await url(path), {
      method,
      headers,
      body: opts.body === undefined ? (method === 'GET' ? undefined : '{}') : JSON.stringify(opts.body),
      signal: opts.signal,
      credentials: 'same-origin',
      cache: 'no-store',
    });
  };
  let res: Response;
  try {
    res = await send(false);
    if (res.status === 401) res = await send(true);
  } catch (e) {
    if (e instanceof TypeError) throw new ApiError(0, 'unreachable', UNREACHABLE);
    throw e;
  }
  if (!res.ok) throw await errorFrom(res);
  if (res.status === 204) return undefined as T;
  return (await res.json()) as T;
}

/** A message id for a write that must be idempotent on retry (answers). */
export function newMessageId(prefix: string): string {
  const c = globalThis.crypto;
  if (c && 'randomUUID' in c && typeof c.randomUUID === 'function') return `${prefix}-${c.randomUUID()}`;
  const b = new Uint8Array(16);
  c.getRandomValues(b);
  return `${prefix}-${Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('')}`;
}
