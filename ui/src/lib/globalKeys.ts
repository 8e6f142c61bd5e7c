// The console's own keys, on every page, as a pure function: `/` to search the tasks, `g`
// then `i` / `t` / `s` / `o` / `p` to go to Approvals, Tasks, Schedules, the Overview or Peers,
// `?` for the list of keys. Typing in a field, or a key with Ctrl/Meta/Alt, is left alone.

export interface GlobalKeyState {
  /** `g` was pressed at this time (ms): the next key may be a destination. */
  gAt: number | null;
}

export type GlobalAction =
  | { type: 'none' }
  /** The key is the first of a sequence: swallow it. */
  | { type: 'pending' }
  | { type: 'go'; to: string }
  | { type: 'search' }
  | { type: 'help' };

/** How long after `g` its second key counts. */
export const SEQUENCE_MS = 1500;

const DESTINATIONS: Record<string, string> = { i: '/inbox', t: '/tasks', s: '/schedules', o: '/', p: '/peers' };

/** Every key, in words, for the help dialog. */
export const KEY_HELP: [string, string][] = [
  ['/', 'Search tasks'],
  ['g i', 'Go to Approvals'],
  ['g t', 'Go to Tasks'],
  ['g s', 'Go to Schedules'],
  ['g o', 'Go to the Overview'],
  ['g p', 'Go to Peers'],
  ['?', 'Show these keys'],
];

export function globalKey(
  s: GlobalKeyState,
  e: { key: string; ctrl?: boolean; meta?: boolean; alt?: boolean; inField?: boolean },
  now: number,
): { state: GlobalKeyState; action: GlobalAction } {
  const none = { state: { gAt: null }, action: { type: 'none' } as GlobalAction };
  if (e.inField || e.ctrl || e.meta || e.alt) return none;
  if (s.gAt !== null && now - s.gAt <= SEQUENCE_MS) {
    const to = DESTINATIONS[e.key];
    if (to) return { state: { gAt: null }, action: { type: 'go', to } };
  }
  if (e.key === 'g') return { state: { gAt: now }, action: { type: 'pending' } };
  if (e.key === '/') return { state: { gAt: null }, action: { type: 'search' } };
  if (e.key === '?') return { state: { gAt: null }, action: { type: 'help' } };
  return none;
}
