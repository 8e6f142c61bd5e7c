// "Run now with an edited prompt": one Run that sends another prompt; the plan keeps its own,
// and the Run says it ran an edited one.

import { useState } from 'preact/hooks';
import type { Run, Schedule } from '../../api/types';
import { Dialog, toast } from '../../components/ui';
import { navigate } from '../../router';
import { runEdited } from './api';

export function RunEdited(props: { schedule: Schedule; onRun?(run: Run): void }) {
  const s = props.schedule;
  const [open, setOpen] = useState(false);
  const [prompt, setPrompt] = useState(s.prompt);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const r = await runEdited(s.id, prompt);
      setOpen(false);
      toast('Started a Run with the edited prompt; the plan is unchanged.', 'ok');
      props.onRun?.(r);
      if (r.session_id) navigate(`/sessions/${r.session_id}`);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button
        class="btn"
        data-action="run-edited"
        onClick={() => {
          setPrompt(s.prompt);
          setOpen(true);
        }}
      >
        Run once with another prompt…
      </button>
      <Dialog
        open={open}
        title="Run once with another prompt"
        onClose={() => setOpen(false)}
        footer={
          <>
            <button class="btn" type="button" onClick={() => setOpen(false)}>
              Cancel
            </button>
            <button class="btn btn-primary" type="submit" form="run-edited-form" disabled={busy || !prompt.trim()}>
              {busy ? 'Starting…' : 'Run now'}
            </button>
          </>
        }
      >
        <form id="run-edited-form" class="form" onSubmit={(e) => void run(e)} noValidate>
          <p class="muted small">This one Run sends the prompt below. The schedule keeps its own prompt, and the Run is marked as edited.</p>
          {error && (
            <div class="form-error" role="alert">
              {error}
            </div>
          )}
          <label class="field" for="re-prompt">
            <span class="field-label">Prompt for this Run</span>
            <textarea id="re-prompt" class="input textarea" rows={4} value={prompt} onInput={(e) => setPrompt((e.target as HTMLTextAreaElement).value)} />
          </label>
        </form>
      </Dialog>
    </>
  );
}
