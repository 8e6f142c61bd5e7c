import { describe, expect, it } from 'vitest';
import { desktopHost, inTauri, OPEN_EVENT, openPath, type NavWindow, type TauriBridge } from './desktop';

function fakeBridge(replies: Array<{ serverAddress: string; token: string }>) {
  const calls: string[] = [];
  const listeners = new Map<string, (p: string) => void>();
  const bridge: TauriBridge = {
    async invoke<T>(cmd: string) {
      calls.push(cmd);
      const r = replies.shift();
      if (!r) throw new Error('no reply');
      return r as T;
    },
    async listen(event, handler) {
      listeners.set(event, handler);
      return () => {};
    },
  };
  return { bridge, calls, listeners };
}

function fakeWindow(path = '/') {
  const events: string[] = [];
  const loc = new URL(`http://127.0.0.1:1234${path}`);
  const w = {
    location: loc,
    history: {
      pushState(_s: unknown, _t: string, to: string) {
        const u = new URL(to, loc);
        loc.pathname = u.pathname;
        loc.search = u.search;
        loc.hash = u.hash;
      },
    },
    dispatchEvent(e: Event) {
      events.push(e.type);
      return true;
    },
  } as unknown as NavWindow;
  return { w, events, loc };
}

describe('desktop host', () => {
  it('asks the shell once for the address and token, again after a 401', async () => {
    const { bridge, calls } = fakeBridge([
      { serverAddress: 'http://127.0.0.1:4321/', token: 'sxt_a' },
      { serverAddress: 'http://127.0.0.1:4321', token: 'sxt_b' },
    ]);
    const h = desktopHost(bridge, fakeWindow().w);
    expect(h.kind).toBe('desktop');
    expect(await h.getServerAddress()).toBe('http://127.0.0.1:4321');
    expect(await h.getToken()).toBe('sxt_a');
    expect(calls).toEqual(['bootstrap']);
    expect(await h.getToken({ refresh: true })).toBe('sxt_b');
    expect(calls).toEqual(['bootstrap', 'bootstrap']);
  });

  it('tries again after a failed bootstrap', async () => {
    const { bridge, calls } = fakeBridge([]);
    const h = desktopHost(bridge, fakeWindow().w);
    await expect(h.getToken()).rejects.toThrow('no reply');
    await expect(h.getToken()).rejects.toThrow('no reply');
    expect(calls).toEqual(['bootstrap', 'bootstrap']);
  });

  it('leaves notifications and the badge to the shell', () => {
    const h = desktopHost(fakeBridge([]).bridge, fakeWindow().w);
    expect(h.notify).toBeUndefined();
    expect(h.setBadge).toBeUndefined();
  });

  it('opens the path the shell sends, without a reload', async () => {
    const { bridge, listeners } = fakeBridge([]);
    const { w, events, loc } = fakeWindow('/tasks');
    desktopHost(bridge, w);
    await Promise.resolve();
    listeners.get(OPEN_EVENT)!('/inbox#int-42');
    expect(loc.pathname + loc.hash).toBe('/inbox#int-42');
    expect(events).toEqual(['popstate', 'hashchange']);
  });
});

describe('openPath', () => {
  it('ignores anything but a same-origin path', () => {
    const { w, events, loc } = fakeWindow('/');
    openPath('https://example.invalid/x', w);
    openPath('//example.invalid/x', w);
    expect(loc.pathname).toBe('/');
    expect(events).toEqual([]);
  });

  it('does nothing when already there', () => {
    const { w, events } = fakeWindow('/inbox');
    openPath('/inbox', w);
    expect(events).toEqual([]);
  });

  it('fires no hashchange when the hash stays', () => {
    const { w, events } = fakeWindow('/inbox');
    openPath('/schedules', w);
    expect(events).toEqual(['popstate']);
  });
});

describe('inTauri', () => {
  it('looks for the shell’s injected internals', () => {
    expect(inTauri({})).toBe(false);
    expect(inTauri({ __TAURI_INTERNALS__: {} })).toBe(true);
  });
});
