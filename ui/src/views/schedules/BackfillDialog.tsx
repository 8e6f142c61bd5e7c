// Backfill a schedule: one `backfill` Run for each of its slots in a past range, with the
// prompt and Agent it has now, under the backfill's own overlap policy (docs/schedules.md,
// Backfill). The range is typed in the person's own time; the server's field errors (a range
// in the future, more than 100 slots, no slot at all) are shown on the field they name.

import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../../api/client';
import type { BackfillReply, Schedule } from '../../api/types';
import { Dialog, FieldError } from '../../components/ui';
import { stripField } from '../../lib/format';
import { localZone } from '../../lib/time';
import { backfill } from './api';
import { instantOf, lastDay } from './form';

const POLICIES: [string, string][] = [
  ['buffer_all', 'One at a time, in slot order'],
  ['buffer_one', 'The first runs, the next waits, the others are skipped'],
  ['skip', 'The first runs, the others are skipped'],
  ['allow_all', 'All at once'],
];

type Field = 'from' | 'to' | 'overlap_policy';

export function BackfillDialog(props: { open: boolean; schedule: Schedule; onClose(): void; onDone(r: BackfillReply): void }) {
  const [range, setRange] = useState(() => lastDay(new Date()));
  const [policy, setPolicy] = useState('buffer_all');
  const [errors, setErrors] = useState<Partial<Record<Field | 'form', string>>>({});
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    if (props.open) {
      setRange(lastDay(new Date()));
      setPolicy('buffer_all');
      setErrors({});
    }
  }, [props.open]);

  const submit = async (e?: Event) => {
    e?.preventDefault();
    setBusy(true);
    setErrors({});
    try {
      props.onDone(await backfill(props.schedule.id, { from: instantOf(range.from), to: instantOf(range.to), overlap_policy: policy }));
    } catch (err) {
      const fields = err instanceof ApiError ? err.fields.filter((f) => ['from', 'to', 'overlap_policy'].includes(f.field)) : [];
      if (fields.length) setErrors(Object.fromEntries(fields.map((f) => [f.field, stripField(f.field, f.message)])));
      else setErrors({ form: (err as Error).message });
    } finally {
      setBusy(false);
    }
  };

  const zone = localZone().replace(/_/g, ' ');
  const edit = (k: 'from' | 'to') => (e: Event) => {
    const v = (e.target as HTMLInputElement).value;
    setRange((r) => ({ ...r, [k]: v }));
    setErrors((x) => ({ ...x, [k]: undefined, form: undefined }));
  };
  return (
    <Dialog
      open={props.open}
      title={`Backfill “${props.schedule.name}”`}
      onClose={props.onClose}
      footer={
        <>
          <button class="btn" type="button" onClick={props.onClose}>
            Cancel
          </button>
          <button class="btn btn-primary" type="submit" form="backfill-form" disabled={busy}>
            {busy ? 'Backfilling…' : 'Backfill'}
          </button>
        </>
      }
    >
      <form id="backfill-form" class="form" onSubmit={submit} noValidate>
        <p class="muted small">
          One Run for each time the schedule would have fired in this past range, with its prompt and Agent as they are now. At most 100; a time backfilled before is not run again.
        </p>
        {errors.form && (
          <div class="form-error" role="alert">
            {errors.form}
          </div>
        )}
        <div class="form-row">
          <label class="field grow" for="b-from">
            <span class="field-label">From ({zone})</span>
            <input id="b-from" type="datetime-local" class={`input${errors.from ? ' invalid' : ''}`} value={range.from} aria-describedby="err-from" onInput={edit('from')} />
            <FieldError field="from" error={errors.from} />
          </label>
          <label class="field grow" for="b-to">
            <span class="field-label">Up to, not including ({zone})</span>
            <input id="b-to" type="datetime-local" class={`input${errors.to ? ' invalid' : ''}`} value={range.to} aria-describedby="err-to" onInput={edit('to')} />
            <FieldError field="to" error={errors.to} />
          </label>
        </div>
        <label class="field" for="b-overlap">
          <span class="field-label">Its Runs</span>
          <select
            id="b-overlap"
            class={`select${errors.overlap_policy ? ' invalid' : ''}`}
            value={policy}
            aria-describedby="err-overlap_policy"
            onChange={(e) => {
              setPolicy((e.target as HTMLSelectElement).value);
              setErrors((x) => ({ ...x, overlap_policy: undefined }));
            }}
          >
            {POLICIES.map(([p, words]) => (
              <option key={p} value={p}>
                {words}
              </option>
            ))}
          </select>
          <FieldError field="overlap_policy" error={errors.overlap_policy} />
        </label>
      </form>
    </Dialog>
  );
}
