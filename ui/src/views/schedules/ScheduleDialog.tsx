// Create or edit a schedule: name, Agent, prompt, when it runs (a cron expression, plain words
// the server echoes back as cron, or one date and time), time zone, missed-run policy, and
// under "More settings" the overlap policy, jitter and pause-after-failures. As the person
// types the timing, the server's preview reads it out (what the words were understood as, the
// next fire times in the chosen zone) or gives the field error a save would get. Every error
// of a save is shown on the field it names.

import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../../api/client';
import type { AgentSummary, Schedule, SchedulePreview } from '../../api/types';
import { Dialog, FieldError, FireTime, now } from '../../components/ui';
import { describeCron } from '../../lib/cron';
import { localZone, relative } from '../../lib/time';
import { createSchedule, previewTiming, updateSchedule } from './api';
import { ZonePicker } from './ZonePicker';
import { stripField } from '../../lib/format';
import {
  ADVANCED_FIELDS,
  FORM_FIELDS,
  GRACE_CHOICES,
  OVERLAP_POLICIES,
  OVERLAP_WORDS,
  advancedSummary,
  bodyOf,
  formFor,
  timingOf,
  type FormField,
  type ScheduleForm,
  type TimingKind,
} from './form';

const PRESETS: [string, string][] = [
  ['Weekdays 09:00', '0 9 * * 1-5'],
  ['Every day 07:30', '30 7 * * *'],
  ['Every hour', '0 * * * *'],
  ['Mondays 08:00', '0 8 * * MON'],
  ['1st of month', '0 9 1 * *'],
];

const WORD_PRESETS = ['every weekday at 9', 'every 30 minutes', 'every monday at 8am', 'every month on the 1st at 9', 'tomorrow at 9'];

const KINDS: [TimingKind, string][] = [
  ['cron', 'Cron'],
  ['words', 'In words'],
  ['once', 'Once'],
];

type Errors = Partial<Record<FormField | 'form', string>>;

/** An error's invalid fields, each with its message (without the `field: ` its place says). */
function byField(e: ApiError): Record<string, string> {
  return Object.fromEntries(e.fields.map((f) => [f.field, stripField(f.field, f.message)]));
}

/** What the preview was asked, to tell a fresh answer from a stale one. */
const previewKey = (f: ScheduleForm) => JSON.stringify([timingOf(f), f.timezone]);

export function ScheduleDialog(props: {
  open: boolean;
  schedule: Schedule | null;
  agents: AgentSummary[];
  onClose(): void;
  onSaved(s: Schedule): void;
}) {
  const editing = props.schedule;
  const defaultAgent = props.agents.find((a) => a.default)?.agentId ?? props.agents[0]?.agentId ?? '';
  const initial = () => formFor(editing, { agent_id: defaultAgent, timezone: localZone(), now: new Date() });
  const [form, setForm] = useState<ScheduleForm>(initial);
  const [errors, setErrors] = useState<Errors>({});
  const [saving, setSaving] = useState(false);
  const [preview, setPreview] = useState<{ key: string; p: SchedulePreview } | null>(null);
  const [previewError, setPreviewError] = useState<{ fields: Record<string, string>; message: string } | null>(null);
  const [advanced, setAdvanced] = useState(false);

  useEffect(() => {
    if (props.open) {
      const f = initial();
      setForm(f);
      setErrors({});
      setPreview(null);
      setPreviewError(null);
      setAdvanced(advancedSummary(f) !== '');
    }
  }, [props.open, editing?.id]);

  // The server's reading of the timing, 300 ms after the last keystroke.
  const key = previewKey(form);
  useEffect(() => {
    if (!props.open) return;
    // Nothing typed yet is not an error: the readout says what to type.
    const timing = timingOf(form);
    if (Object.values(timing).every((v) => !v?.trim())) {
      setPreview(null);
      setPreviewError(null);
      return;
    }
    const ac = new AbortController();
    const t = setTimeout(() => {
      previewTiming(timing, form.timezone, ac.signal)
        .then((p) => {
          setPreview({ key, p });
          setPreviewError(null);
        })
        .catch((e) => {
          if (ac.signal.aborted) return;
          setPreview(null);
          setPreviewError(e instanceof ApiError ? { fields: byField(e), message: e.message } : { fields: {}, message: (e as Error).message });
        });
    }, 300);
    return () => {
      clearTimeout(t);
      ac.abort();
    };
  }, [key, props.open]);

  const set = <K extends keyof ScheduleForm>(k: K, v: ScheduleForm[K]) => {
    setForm((f) => ({ ...f, [k]: v }));
    // A timing field's error goes with any change of the timing.
    const timing = ['kind', 'cron', 'when', 'once_at'].includes(k);
    setErrors((e) => ({ ...e, [k]: undefined, ...(timing ? { cron: undefined, when: undefined, once_at: undefined } : {}), form: undefined }));
  };

  const save = async (e?: Event) => {
    e?.preventDefault();
    setSaving(true);
    setErrors({});
    try {
      const body = bodyOf(form);
      const saved = editing ? await updateSchedule(editing.id, body) : await createSchedule(body);
      props.onSaved(saved);
    } catch (err) {
      // Every field the server refused, at once, each on its field.
      const fields = err instanceof ApiError ? byField(err) : {};
      const known = Object.keys(fields).filter((f): f is FormField => (FORM_FIELDS as readonly string[]).includes(f));
      if (known.length) {
        setErrors(Object.fromEntries(known.map((f) => [f, fields[f]])));
        if (known.some((f) => ADVANCED_FIELDS.includes(f))) setAdvanced(true);
      } else setErrors({ form: (err as Error).message });
    } finally {
      setSaving(false);
    }
  };

  // The timing's error, from a save or the preview, shown under the timing's own input (plain
  // words that read as a bad expression are the words' error).
  const timingError = (() => {
    const of = (f: 'cron' | 'when' | 'once_at') => errors[f] ?? previewError?.fields[f];
    if (form.kind === 'cron') return of('cron');
    if (form.kind === 'once') return of('once_at');
    return of('when') ?? of('cron') ?? of('once_at');
  })();
  const timingField = form.kind === 'cron' ? 'cron' : form.kind === 'once' ? 'once_at' : 'when';
  const zoneServerError = errors.timezone ?? previewError?.fields.timezone;
  const fresh = preview?.key === key ? preview.p : null;
  const words = describeCron(form.cron);
  const summary = advancedSummary(form);

  return (
    <Dialog
      open={props.open}
      title={editing ? `Edit “${editing.name}”` : 'New schedule'}
      onClose={props.onClose}
      wide
      footer={
        <>
          <button class="btn" type="button" onClick={props.onClose}>
            Cancel
          </button>
          <button class="btn btn-primary" type="submit" form="schedule-form" disabled={saving}>
            {saving ? 'Saving…' : editing ? 'Save changes' : 'Create schedule'}
          </button>
        </>
      }
    >
      <form id="schedule-form" class="form" onSubmit={save} noValidate>
        {errors.form && (
          <div class="form-error" role="alert">
            {errors.form}
          </div>
        )}
        <div class="form-row">
          <label class="field grow" for="s-name">
            <span class="field-label">Name</span>
            <input
              id="s-name"
              class={`input${errors.name ? ' invalid' : ''}`}
              value={form.name}
              placeholder="Morning brief"
              maxLength={200}
              aria-describedby="err-name"
              onInput={(e) => set('name', (e.target as HTMLInputElement).value)}
            />
            <FieldError field="name" error={errors.name} />
          </label>
          <label class="field" for="s-agent">
            <span class="field-label">Agent</span>
            <select id="s-agent" class={`select agent-select${errors.agent_id ? ' invalid' : ''}`} value={form.agent_id} onChange={(e) => set('agent_id', (e.target as HTMLSelectElement).value)}>
              {props.agents.map((a) => (
                <option key={a.agentId} value={a.agentId}>
                  {a.name}
                </option>
              ))}
            </select>
            <FieldError field="agent_id" error={errors.agent_id} />
          </label>
        </div>
        <label class="field" for="s-prompt">
          <span class="field-label">Prompt</span>
          <textarea
            id="s-prompt"
            class={`input textarea${errors.prompt ? ' invalid' : ''}`}
            rows={3}
            value={form.prompt}
            placeholder="What the Agent is asked at each Run"
            onInput={(e) => set('prompt', (e.target as HTMLTextAreaElement).value)}
          />
          <FieldError field="prompt" error={errors.prompt} />
        </label>
        <div class="form-row">
          <div class="field grow">
            <div class="timing-head">
              <label class="field-label" for={`s-${form.kind === 'once' ? 'once' : form.kind === 'words' ? 'when' : 'cron'}`}>
                When
              </label>
              <div class="kind-switch" role="radiogroup" aria-label="How to say when">
                {KINDS.map(([k, label]) => (
                  <label key={k} class={`chip chip-btn chip-radio${form.kind === k ? ' chosen' : ''}`}>
                    <input type="radio" name="s-kind" class="sr-only" value={k} checked={form.kind === k} onChange={() => set('kind', k)} />
                    {label}
                  </label>
                ))}
              </div>
            </div>
            {form.kind === 'cron' && (
              <>
                <input
                  id="s-cron"
                  class={`input mono${timingError ? ' invalid' : ''}`}
                  value={form.cron}
                  spellcheck={false}
                  autocomplete="off"
                  aria-describedby="cron-words err-cron"
                  onInput={(e) => set('cron', (e.target as HTMLInputElement).value)}
                />
                <div class="presets" aria-label="Examples">
                  {PRESETS.map(([label, expr]) => (
                    <button type="button" key={expr} class={`chip chip-btn${form.cron === expr ? ' chosen' : ''}`} onClick={() => set('cron', expr)}>
                      {label}
                    </button>
                  ))}
                </div>
              </>
            )}
            {form.kind === 'words' && (
              <>
                <input
                  id="s-when"
                  class={`input${timingError ? ' invalid' : ''}`}
                  value={form.when}
                  placeholder="every weekday at 9"
                  autocomplete="off"
                  aria-describedby="cron-words err-when"
                  onInput={(e) => set('when', (e.target as HTMLInputElement).value)}
                />
                <div class="presets" aria-label="Examples">
                  {WORD_PRESETS.map((w) => (
                    <button type="button" key={w} class={`chip chip-btn${form.when === w ? ' chosen' : ''}`} onClick={() => set('when', w)}>
                      {w}
                    </button>
                  ))}
                </div>
              </>
            )}
            {form.kind === 'once' && (
              <input
                id="s-once"
                type="datetime-local"
                class={`input${timingError ? ' invalid' : ''}`}
                value={form.once_at}
                aria-describedby="cron-words err-once_at"
                onInput={(e) => set('once_at', (e.target as HTMLInputElement).value)}
              />
            )}
          </div>
          <div class="field zone-field">
            <label class="field-label" for="s-zone">
              Time zone
            </label>
            <ZonePicker id="s-zone" value={form.timezone} invalid={!!zoneServerError} onChange={(z) => set('timezone', z)} />
            <FieldError field="timezone" error={zoneServerError} />
          </div>
        </div>
        <div class="cron-readout" id="cron-words" aria-live="polite">
          {timingError ? (
            <FieldError field={timingField} error={timingError} />
          ) : form.kind === 'cron' ? (
            words.ok ? (
              <div class="cron-words">{words.text}</div>
            ) : (
              <div class="cron-words warn">{words.error}</div>
            )
          ) : fresh ? (
            <>
              {fresh.understood && <Echo input={fresh.understood.input} cron={fresh.understood.cron} onceAt={fresh.understood.once_at} zone={form.timezone} />}
              <div class="cron-words">{fresh.description}</div>
            </>
          ) : (
            <div class="cron-words muted">
              {form.kind === 'words' && form.when.trim() === ''
                ? 'Say when in a few words, e.g. “every weekday at 9”.'
                : form.kind === 'once' && form.once_at.trim() === ''
                  ? 'Pick a date and time.'
                  : 'Reading it…'}
            </div>
          )}
          {!timingError && fresh && fresh.next_runs.length > 0 && (
            <div class="next-runs">
              <span class="field-label">
                {fresh.next_runs.length === 1 ? 'Fires at' : 'Next fire times'} ({form.timezone.replace(/_/g, ' ')})
              </span>
              <ol>
                {fresh.next_runs.map((r) => (
                  <li key={r.utc}>
                    <FireTime utc={r.utc} zone={form.timezone} withYear />
                    <span class="muted">{relative(Date.parse(r.utc), now.value)}</span>
                  </li>
                ))}
              </ol>
            </div>
          )}
        </div>
        <div class="form-row">
          <label class="field grow" for="s-missed">
            <span class="field-label">If Sextant was not running at a fire time</span>
            <select
              id="s-missed"
              class={`select${errors.missed_run_policy ? ' invalid' : ''}`}
              value={form.missed_run_policy}
              onChange={(e) => set('missed_run_policy', (e.target as HTMLSelectElement).value as ScheduleForm['missed_run_policy'])}
            >
              <option value="skip">Skip it (record it as missed)</option>
              <option value="run_once">Run it once, late</option>
            </select>
            <FieldError field="missed_run_policy" error={errors.missed_run_policy} />
          </label>
          {form.missed_run_policy === 'run_once' && (
            <label class="field" for="s-grace">
              <span class="field-label">If at most this late</span>
              <select
                id="s-grace"
                class={`select${errors.missed_run_grace_secs ? ' invalid' : ''}`}
                value={String(form.missed_run_grace_secs)}
                aria-describedby="err-missed_run_grace_secs"
                onChange={(e) => set('missed_run_grace_secs', Number((e.target as HTMLSelectElement).value))}
              >
                {graceChoices(form.missed_run_grace_secs).map(([s, label]) => (
                  <option key={s} value={String(s)}>
                    {label}
                  </option>
                ))}
              </select>
              <FieldError field="missed_run_grace_secs" error={errors.missed_run_grace_secs} />
            </label>
          )}
        </div>
        <details class="more-settings" open={advanced} onToggle={(e) => setAdvanced((e.target as HTMLDetailsElement).open)}>
          <summary>
            More settings{summary && <span class="muted"> · {summary}</span>}
          </summary>
          <div class="form more-settings-body">
            <label class="field" for="s-overlap">
              <span class="field-label">If a Run is still running at the next fire time</span>
              <select
                id="s-overlap"
                class={`select${errors.overlap_policy ? ' invalid' : ''}`}
                value={form.overlap_policy}
                aria-describedby="err-overlap_policy"
                onChange={(e) => set('overlap_policy', (e.target as HTMLSelectElement).value as ScheduleForm['overlap_policy'])}
              >
                {OVERLAP_POLICIES.map((p) => (
                  <option key={p} value={p}>
                    {OVERLAP_WORDS[p]}
                  </option>
                ))}
              </select>
              <FieldError field="overlap_policy" error={errors.overlap_policy} />
            </label>
            <div class="form-row">
              <label class="field grow" for="s-jitter">
                <span class="field-label">Jitter (seconds)</span>
                <input
                  id="s-jitter"
                  class={`input${errors.jitter_secs ? ' invalid' : ''}`}
                  inputMode="numeric"
                  value={form.jitter_secs}
                  aria-describedby="jitter-hint err-jitter_secs"
                  onInput={(e) => set('jitter_secs', (e.target as HTMLInputElement).value)}
                />
                <span class="muted small" id="jitter-hint">
                  Each fire starts up to this late, the same delay every time for a given slot. 0 – 3600.
                </span>
                <FieldError field="jitter_secs" error={errors.jitter_secs} />
              </label>
              <label class="field grow" for="s-pause">
                <span class="field-label">Pause after failed Runs in a row</span>
                <input
                  id="s-pause"
                  class={`input${errors.pause_after_failures ? ' invalid' : ''}`}
                  inputMode="numeric"
                  value={form.pause_after_failures}
                  placeholder="never"
                  aria-describedby="pause-hint err-pause_after_failures"
                  onInput={(e) => set('pause_after_failures', (e.target as HTMLInputElement).value)}
                />
                <span class="muted small" id="pause-hint">
                  Empty: never pause. 1 – 100.
                </span>
                <FieldError field="pause_after_failures" error={errors.pause_after_failures} />
              </label>
            </div>
          </div>
        </details>
      </form>
    </Dialog>
  );
}

/** The catch-up windows offered, with a saved one that is not among them. */
function graceChoices(current: number): [number, string][] {
  if (GRACE_CHOICES.some(([s]) => s === current)) return GRACE_CHOICES;
  const all: [number, string][] = [...GRACE_CHOICES, [current, `${current} seconds`]];
  return all.sort((a, b) => a[0] - b[0]);
}

/** What the server made of plain words: a cron expression, or one Run at a local time. */
function Echo(props: { input: string; cron: string | null; onceAt: string | null; zone: string }) {
  return (
    <div class="echo" data-echo>
      Understood “{props.input}” as{' '}
      {props.cron !== null ? (
        <>
          <code class="mono" data-echo-cron>
            {props.cron}
          </code>
          , a recurring plan.
        </>
      ) : (
        <>
          one Run at{' '}
          <code class="mono" data-echo-once>
            {props.onceAt?.slice(0, 16).replace('T', ' ')}
          </code>{' '}
          ({props.zone.replace(/_/g, ' ')}), not a recurring plan.
        </>
      )}
    </div>
  );
}
