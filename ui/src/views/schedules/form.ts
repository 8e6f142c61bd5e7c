// The schedule dialog's form, apart from its view: what it starts with (for a new plan or from
// a saved one) and the body a save sends. Numbers are kept as the text typed, so a half-typed
// value stays in its field; the server judges them and its error lands on the field.

import type { MissedRunPolicy, OverlapPolicy, Schedule, ScheduleInput } from '../../api/types';

/** How the person gives the time: a cron expression, plain words, or one date and time. */
export type TimingKind = 'cron' | 'words' | 'once';

/** The overlap policies, in the order the form lists them (the server's union, from the Rust type). */
export const OVERLAP_POLICIES = ['skip', 'buffer_one', 'buffer_all', 'allow_all', 'cancel_previous'] as const satisfies readonly OverlapPolicy[];

/** What each overlap policy does to a slot that comes due while a Run is still running. */
export const OVERLAP_WORDS: Record<OverlapPolicy, string> = {
  skip: 'Skip the new slot (recorded as skipped)',
  buffer_one: 'Queue one slot, skip any more',
  buffer_all: 'Queue every slot, run them in order',
  allow_all: 'Run them side by side',
  cancel_previous: 'Cancel the running one and start (runs beside it for now)',
};

/** The catch-up windows offered, in seconds (the API takes 60 – 604800). */
export const GRACE_CHOICES: [number, string][] = [
  [300, '5 minutes'],
  [900, '15 minutes'],
  [3600, '1 hour'],
  [6 * 3600, '6 hours'],
  [86400, '1 day'],
  [7 * 86400, '7 days'],
];

export interface ScheduleForm {
  name: string;
  prompt: string;
  agent_id: string;
  timezone: string;
  kind: TimingKind;
  cron: string;
  when: string;
  /** `YYYY-MM-DDTHH:MM`, a wall-clock time in `timezone` (what `<input type=datetime-local>` holds). */
  once_at: string;
  missed_run_policy: MissedRunPolicy;
  missed_run_grace_secs: number;
  overlap_policy: OverlapPolicy;
  jitter_secs: string;
  /** Empty: never pause. */
  pause_after_failures: string;
}

/** Tomorrow at 09:00, as `YYYY-MM-DDTHH:MM` (the one-shot field's first value). */
export function tomorrowAtNine(now: Date): string {
  const d = new Date(now.getFullYear(), now.getMonth(), now.getDate() + 1, 9, 0);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T09:00`;
}

/** The form for a new plan, or for editing `s`. */
export function formFor(s: Schedule | null, defaults: { agent_id: string; timezone: string; now: Date }): ScheduleForm {
  const overlap = OVERLAP_POLICIES.find((p) => p === s?.overlap_policy) ?? 'skip';
  return {
    name: s?.name ?? '',
    prompt: s?.prompt ?? '',
    agent_id: s?.agent_id ?? defaults.agent_id,
    timezone: s?.timezone ?? defaults.timezone,
    kind: s && s.cron === null ? 'once' : 'cron',
    cron: s?.cron ?? '0 9 * * 1-5',
    when: '',
    once_at: s?.once_at?.slice(0, 16) ?? tomorrowAtNine(defaults.now),
    missed_run_policy: s?.missed_run_policy ?? 'skip',
    missed_run_grace_secs: s?.missed_run_grace_secs ?? 3600,
    overlap_policy: overlap,
    jitter_secs: String(s?.jitter_secs ?? 0),
    pause_after_failures: s?.pause_after_failures == null ? '' : String(s.pause_after_failures),
  };
}

/** A number field's text as the API takes it: a whole number, else the text (the server names the field). */
function whole(text: string): number | string {
  const t = text.trim();
  return /^-?\d+$/.test(t) ? Number(t) : t;
}

/** The timing fields a save or a preview sends: exactly one of cron, when and once_at. */
export function timingOf(f: Pick<ScheduleForm, 'kind' | 'cron' | 'when' | 'once_at'>): Pick<ScheduleInput, 'cron' | 'when' | 'once_at'> {
  if (f.kind === 'words') return { when: f.when };
  if (f.kind === 'once') return { once_at: f.once_at };
  return { cron: f.cron };
}

/** The body of a create or an update. */
export function bodyOf(f: ScheduleForm): ScheduleInput {
  const jitter = f.jitter_secs.trim() === '' ? 0 : whole(f.jitter_secs);
  const pause = f.pause_after_failures.trim() === '' ? null : whole(f.pause_after_failures);
  return {
    name: f.name,
    prompt: f.prompt,
    agent_id: f.agent_id,
    timezone: f.timezone,
    ...timingOf(f),
    missed_run_policy: f.missed_run_policy,
    missed_run_grace_secs: f.missed_run_grace_secs,
    overlap_policy: f.overlap_policy,
    // A text that is not a number goes as it is: the server's error names the field.
    jitter_secs: jitter as number,
    pause_after_failures: pause as number | null,
  };
}

/** The fields a save may be refused on, each shown on its own field. */
export const FORM_FIELDS = [
  'name',
  'prompt',
  'agent_id',
  'timezone',
  'cron',
  'when',
  'once_at',
  'missed_run_policy',
  'missed_run_grace_secs',
  'overlap_policy',
  'jitter_secs',
  'pause_after_failures',
] as const;
export type FormField = (typeof FORM_FIELDS)[number];

/** Fields that sit under the dialog's "More settings" disclosure (opened when one is refused). */
export const ADVANCED_FIELDS: FormField[] = ['overlap_policy', 'jitter_secs', 'pause_after_failures'];

/** The advanced settings that differ from the defaults, in a few words (the disclosure's summary). */
export function advancedSummary(f: ScheduleForm): string {
  const parts: string[] = [];
  if (f.overlap_policy !== 'skip') parts.push(`overlap ${f.overlap_policy.replace(/_/g, ' ')}`);
  const j = f.jitter_secs.trim();
  if (j !== '' && j !== '0') parts.push(`jitter ${j} s`);
  if (f.pause_after_failures.trim() !== '') parts.push(`pause after ${f.pause_after_failures.trim()} failures`);
  return parts.join(' · ');
}

/** `d` as `<input type=datetime-local>` holds it: `YYYY-MM-DDTHH:MM` in the browser's zone. */
export function localInput(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** A `datetime-local` value (the browser's zone) as RFC 3339 UTC; anything else as it is, for the server to name. */
export function instantOf(local: string): string {
  const t = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(local) ? new Date(local) : null;
  return t && Number.isFinite(t.getTime()) ? t.toISOString() : local;
}

/** The backfill dialog's first range: the last 24 hours, to the start of this minute. */
export function lastDay(now: Date): { from: string; to: string } {
  const to = new Date(now.getFullYear(), now.getMonth(), now.getDate(), now.getHours(), now.getMinutes());
  return { from: localInput(new Date(to.getTime() - 86_400_000)), to: localInput(to) };
}
