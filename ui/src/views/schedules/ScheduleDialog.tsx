// Create or edit a schedule: name, Agent, prompt, cron and time zone. As the person types the
// expression it is read out in plain words, and the server's preview gives the next fire times
// in the chosen zone (or the field error a save would get). Errors of a save are shown on the
// field they name.

import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../../api/client';
import type { AgentSummary, Schedule, ScheduleInput, SchedulePreview } from '../../api/types';
import { Dialog, FieldError, FireTime, now } from '../../components/ui';
import { describeCron } from '../../lib/cron';
import { localZone, relative } from '../../lib/time';
import { createSchedule, previewCron, updateSchedule } from './api';
import { ZonePicker } from './ZonePicker';
import { stripField } from '../../lib/format';

const PRESETS: [string, string][] = [
  ['Weekdays 09:00', '0 9 * * 1-5'],
  ['Every day 07:30', '30 7 * * *'],
  ['Every hour', '0 * * * *'],
  ['Mondays 08:00', '0 8 * * MON'],
  ['1st of month', '0 9 1 * *'],
];

type Errors = Partial<Record<keyof ScheduleInput | 'form', string>>;

/** An error's invalid fields, each with its message (without the `field: ` its place says). */
function byField(e: ApiError): Record<string, string> {
  return Object.fromEntries(e.fields.map((f) => [f.field, stripField(f.field, f.message)]));
}

export function ScheduleDialog(props: {
  open: boolean;
  schedule: Schedule | null;
  agents: AgentSummary[];
  onClose(): void;
  onSaved(s: Schedule): void;
}) {
  const editing = props.schedule;
  const defaultAgent = props.agents.find((a) => a.default)?.agentId ?? props.agents[0]?.agentId ?? '';
  const initial = (): ScheduleInput => ({
    name: editing?.name ?? '',
    prompt: editing?.prompt ?? '',
    cron: editing?.cron ?? '0 9 * * 1-5',
    timezone: editing?.timezone ?? localZone(),
    agent_id: editing?.agent_id ?? defaultAgent,
    missed_run_policy: (editing?.missed_run_policy as ScheduleInput['missed_run_policy']) ?? 'skip',
  });
  const [form, setForm] = useState<ScheduleInput>(initial);
  const [errors, setErrors] = useState<Errors>({});
  const [saving, setSaving] = useState(false);
  const [preview, setPreview] = useState<SchedulePreview | null>(null);
  const [previewError, setPreviewError] = useState<{ fields: Record<string, string>; message: string } | null>(null);

  useEffect(() => {
    if (props.open) {
      setForm(initial());
      setErrors({});
      setPreview(null);
      setPreviewError(null);
    }
  }, [props.open, editing?.id]);

  // The server's reading of the expression, 300 ms after the last keystroke.
  useEffect(() => {
    if (!props.open) return;
    const ac = new AbortController();
    const t = setTimeout(() => {
      previewCron(form.cron, form.timezone, ac.signal)
        .then((p) => {
          setPreview(p);
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
  }, [form.cron, form.timezone, props.open]);

  const set = <K extends keyof ScheduleInput>(k: K, v: ScheduleInput[K]) => {
    setForm((f) => ({ ...f, [k]: v }));
    setErrors((e) => ({ ...e, [k]: undefined, form: undefined }));
  };

  const save = async (e?: Event) => {
    e?.preventDefault();
    setSaving(true);
    setErrors({});
    try {
      const saved = editing ? await updateSchedule(editing.id, form) : await createSchedule(form);
      props.onSaved(saved);
    } catch (err) {
      // Every field the server refused, at once, each on its field.
      const fields = err instanceof ApiError ? byField(err) : {};
      const known = Object.keys(fields).filter((f) => f in form);
      if (known.length) setErrors(Object.fromEntries(known.map((f) => [f, fields[f]])));
      else setErrors({ form: (err as Error).message });
    } finally {
      setSaving(false);
    }
  };

  const words = describeCron(form.cron);
  const cronServerError = errors.cron ?? previewError?.fields.cron;
  const zoneServerError = errors.timezone ?? previewError?.fields.timezone;
  const fresh = preview && preview.cron === form.cron && preview.timezone === form.timezone;

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
            <label class="field-label" for="s-cron">
              When (cron)
            </label>
            <input
              id="s-cron"
              class={`input mono${cronServerError ? ' invalid' : ''}`}
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
          {cronServerError ? (
            <FieldError field="cron" error={cronServerError} />
          ) : words.ok ? (
            <div class="cron-words">{words.text}</div>
          ) : (
            <div class="cron-words warn">{words.error}</div>
          )}
          {!cronServerError && fresh && preview.next_runs.length > 0 && (
            <div class="next-runs">
              <span class="field-label">Next fire times ({form.timezone.replace(/_/g, ' ')})</span>
              <ol>
                {preview.next_runs.map((r) => (
                  <li key={r.utc}>
                    <FireTime utc={r.utc} zone={form.timezone} withYear />
                    <span class="muted">{relative(Date.parse(r.utc), now.value)}</span>
                  </li>
                ))}
              </ol>
            </div>
          )}
        </div>
        <label class="field" for="s-missed">
          <span class="field-label">If Sextant was not running at a fire time</span>
          <select
            id="s-missed"
            class="select"
            value={form.missed_run_policy}
            onChange={(e) => set('missed_run_policy', (e.target as HTMLSelectElement).value as ScheduleInput['missed_run_policy'])}
          >
            <option value="skip">Skip it (record it as missed)</option>
            <option value="run_once">Run it once, late</option>
          </select>
        </label>
      </form>
    </Dialog>
  );
}
