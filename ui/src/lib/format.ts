// Words and tones for states, callers and ids, shared by every view.

import type { RunTrigger, TaskOutcome, TaskState } from '../api/types';

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
] as const satisfies readonly TaskState[];

const STATE_WORDS: Partial<Record<TaskState, [string, Tone]>> = {
  TASK_STATE_SUBMITTED: ['Submitted', 'neutral'],
  TASK_STATE_WORKING: ['Working', 'info'],
  TASK_STATE_INPUT_REQUIRED: ['Needs input', 'warn'],
  TASK_STATE_AUTH_REQUIRED: ['Needs approval', 'warn'],
  TASK_STATE_COMPLETED: ['Completed', 'ok'],
  TASK_STATE_FAILED: ['Failed', 'bad'],
  TASK_STATE_CANCELED: ['Canceled', 'muted'],
  TASK_STATE_REJECTED: ['Rejected', 'bad'],
};

/**
 * A task state in words, with its tone. Takes any string: a newer server may send a state this
 * console does not know yet, which reads as its own name.
 */
export function taskState(state: string): { label: string; tone: Tone } {
  const w = STATE_WORDS[state as TaskState];
  if (w) return { label: w[0], tone: w[1] };
  return { label: state.replace(/^TASK_STATE_/, '').toLowerCase().replace(/_/g, ' '), tone: 'neutral' };
}

// Every outcome the server sends (the union from the Rust type) has its words.
const OUTCOME_WORDS: Record<TaskOutcome, [string, Tone]> = {
  completed: ['Completed', 'ok'],
  failed: ['Failed', 'bad'],
  canceled: ['Canceled', 'muted'],
  rejected: ['Rejected', 'bad'],
  declined: ['Declined', 'muted'],
  expired: ['Expired', 'muted'],
};

/**
 * What a task is, in words: how it ended (the server's outcome, from the journal: a declined
 * shell command is Declined, not Completed), or else where it is (its state). Takes any
 * string, as `taskState` does: an outcome this console does not know reads as the state.
 */
export function taskStatus(state: string, outcome?: string | null): { label: string; tone: Tone } {
  const w = outcome ? OUTCOME_WORDS[outcome as TaskOutcome] : undefined;
  return w ? { label: w[0], tone: w[1] } : taskState(state);
}

/** The task list's status filter: where a task is, or how it ended (`status=` of the API). */
export const STATUS_FILTERS: [string, string][] = [
  ['unfinished', 'In progress'],
  ['waiting', 'Waiting for you'],
  ['active', 'Running'],
  ['completed', 'Completed'],
  ['declined', 'Declined'],
  ['canceled', 'Canceled'],
  ['expired', 'Expired'],
  ['failed', 'Failed'],
  ['rejected', 'Rejected'],
];

/** Whether a task with this state and outcome passes a status filter. */
export function statusMatches(status: string, t: { state: TaskState; outcome?: string | null }): boolean {
  if (!status) return true;
  if (status === 'unfinished') return !isTerminal(t.state);
  if (status === 'waiting') return isWaiting(t.state);
  if (status === 'active') return t.state === 'TASK_STATE_SUBMITTED' || t.state === 'TASK_STATE_WORKING';
  return isTerminal(t.state) && t.outcome === status;
}

const TERMINAL: readonly TaskState[] = ['TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED'];

/** Whether a task in this state is finished. */
export function isTerminal(state: TaskState): boolean {
  return TERMINAL.includes(state);
}

/** Whether a task in this state waits for the person. */
export function isWaiting(state: TaskState): boolean {
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

/** Who a principal key is, for people: `you`, `local (no token)`, `peer NAME`, `assistant NAME`, or the key. */
export function callerLabel(key: string): string {
  if (key.startsWith('person:')) return 'you';
  if (key.startsWith('anonymous-local:')) return 'local (no token)';
  // A token Sextant issued is named by the person who issued it; the words are the server's
  // (`Principal::display`), so a caller reads alike in a card, a list and a task's page.
  const issued = /^(peer|assistant):sextant:(.+)$/.exec(key);
  if (issued) return `${issued[1]} ${issued[2]}`;
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

const TRIGGER_WORDS: Record<RunTrigger, string> = { cron: 'Scheduled', catchup: 'Caught up', backfill: 'Backfill', manual: 'Run now', replay: 'Replay' };

/** A trigger of a Run in words (its own name for one a newer server added). */
export function triggerLabel(t: RunTrigger): string {
  return TRIGGER_WORDS[t] ?? t;
}

/** A field error's message without the `field: ` prefix its place on the field already says. */
export function stripField(field: string, message: string): string {
  return message.startsWith(`${field}: `) ? message.slice(field.length + 2) : message;
}
