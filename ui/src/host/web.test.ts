import { afterEach, describe, expect, it, vi } from 'vitest';
import { signInNeeded, SIGNED_OUT, SignInRequired, webHost } from './index';

/** A fake `fetch` answering each path with the given statuses in turn; records the calls. */
function fakeFetch(replies: Record<string, number[]>) {
  const calls: string[] = [];
  vi.stubGlobal('fetch', async (path: string, init?: RequestInit) => {
    calls.push(`${init?.method ?? 'GET'} ${path}`);
    const status = replies[path]?.shift() ?? 500;
    return new Response(status === 204 ? null : '{}', { status, headers: { 'Content-Type': 'application/json' } });
  });
  return calls;
}

afterEach(() => {
  vi.unstubAllGlobals();
  signInNeeded.value = null;
});

describe('the web host', () => {
  it('signs out, and does not sign back in by itself until a token sign-in', async () => {
    const calls = fakeFetch({ '/api/v1/session': [200], '/api/v1/session/logout': [204], '/api/v1/session/bootstrap': [200] });
    const h = webHost();
    expect(await h.getToken()).toBeNull();
    await h.signOut?.();
    expect(signInNeeded.value).toBe(SIGNED_OUT);
    // A stream's 401 asks again: no loopback bootstrap, the sign-in page stays.
    await expect(h.getToken({ refresh: true })).rejects.toBeInstanceOf(SignInRequired);
    expect(calls).toEqual(['GET /api/v1/session', 'POST /api/v1/session/logout']);
    await h.signIn?.('sxt_token');
    expect(await h.getToken()).toBeNull();
    expect(calls.at(-1)).toBe('POST /api/v1/session/bootstrap');
  });

  it('stays signed in when signing out fails', async () => {
    fakeFetch({ '/api/v1/session': [200, 200], '/api/v1/session/logout': [403] });
    const h = webHost();
    await h.getToken();
    await expect(h.signOut?.()).rejects.toThrow(/Signing out failed/);
    expect(signInNeeded.value).toBeNull();
    expect(await h.getToken()).toBeNull();
  });
});
