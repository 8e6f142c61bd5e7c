// Words and tones for states, callers and ids, shared by every view.

/** How a badge looks. */
export type Tone = 'neutral' | 'info' | 'warn' | 'ok' | 'bad' | 'muted';

/** The A2A 1.0 task states the console shows, in the order the filter lists them. */
export const TASK_STATES = [
  'TASK_STATE_SUBMITTED',
  'TASK_STATE_WORKING',
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_AUTH_REQUIRED',
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_REJECTED',
] as const;

const STATE_WORDS: Record<string, [string, Tone]> = {
  TASK_STATE_SUBMITTED: ['Submitted', 'neutral'],
  TASK_STATE_WORKING: ['Working', 'info'],
  TASK_STATE_INPUT_REQUIRED: ['Needs input', 'warn'],
  TASK_STATE_AUTH_REQUIRED: ['Needs approval', 'warn'],
  TASK_STATE_COMPLETED: ['Completed', 'ok'],
  TASK_STATE_FAILED: ['Failed', 'bad'],
  TASK_STATE_CANCELED: ['Canceled', 'muted'],
  TASK_STATE_REJECTED: ['Rejected', 'bad'],
};

/** A task state in words, with its tone. */
export function taskState(state: string): { label: string; tone: Tone } {
  const w = STATE_WORDS[state];
  if (w) return { label: w[0], tone: w[1] };
  return { label: state.replace(/^TASK_STATE_/, '').toLowerCase().replace(/_/g, ' '), tone: 'neutral' };
}

/** Whether a task in this state is finished. */
export function isTerminal(state: string): boolean {
  return ['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED'].includes(state);
}

/** Whether a task in this state waits for the person. */
export function isWaiting(state: string): boolean {
  return state === 'TASK_STATE_INPUT_REQUIRED' || state === 'TASK_STATE_AUTH_REQUIRED';
}

const RUN_WORDS: Record<string, [string, Tone]> = {
  pending: ['Pending', 'neutral'],
  blocked: ['Blocked', 'bad'],
  missed: ['Missed', 'muted'],
  skipped: ['Skipped', 'muted'],
  buffered: ['Waiting', 'neutral'],
  submitted: ['Submitted', 'neutral'],
  running: ['Running', 'info'],
  input_required: ['Needs input', 'warn'],
  auth_required: ['Needs approval', 'warn'],
  completed: ['Completed', 'ok'],
  failed: ['Failed', 'bad'],
  canceled: ['Canceled', 'muted'],
  rejected: ['Rejected', 'bad'],
};

/** Whether a Run's status can still change (its task has not ended, or it has not started). */
export function runIsOpen(status: string): boolean {
  return ['pending', 'buffered', 'submitted', 'running', 'input_required', 'auth_required'].includes(status);
}

/** A schedule Run's status in words, with its tone. */
export function runStatus(status: string): { label: string; tone: Tone } {
  const w = RUN_WORDS[status];
  return w ? { label: w[0], tone: w[1] } : { label: status, tone: 'neutral' };
}

/** Who a principal key is, for people: `you`, `local (no token)`, or the key. */
export function callerLabel(key: string): string {
  if (key.startsWith('person:')) return 'you';
  if (key.startsWith('anonymous-local:')) return 'local (no token)';
  return key;
}

/**
 * Eight characters of an id, for tables: the last ones, because Sextant's ids are UUIDv7,
 * whose first characters are a timestamp shared by everything made in the same minute.
 */
export function shortId(id: string): string {
  const hex = id.replace(/-/g, '');
  return hex.length > 8 ? hex.slice(-8) : id;
}

/** A trigger of a Run in words. */
export function triggerLabel(t: string): string {
  const words: Record<string, string> = { cron: 'Scheduled', catchup: 'Caught up', backfill: 'Backfill', manual: 'Run now', replay: 'Replay' };
  return words[t] ?? t;
}

/** A field error's message without the `field: ` prefix its place on the field already says. */
export function stripField(field: string, message: string): string {
  return message.startsWith(`${field}: `) ? message.slice(field.length + 2) : message;
}
