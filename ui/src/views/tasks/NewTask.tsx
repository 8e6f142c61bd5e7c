// "New task": pick an Agent, write a message, send it as yourself; the task's page opens and
// follows it live.

import { useEffect, useState } from 'preact/hooks';
import { Dialog, toast } from '../../components/ui';
import { navigate } from '../../router';
import { sendMessage } from './send';
import { agents, loadAgents } from './store';

export function NewTask(props: { open: boolean; onClose(): void; agentId?: string }) {
  const [agentId, setAgentId] = useState(props.agentId ?? '');
  const [text, setText] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (!props.open) return;
    void loadAgents()
      .then((list) => setAgentId((a) => a || props.agentId || (list.find((x) => x.default) ?? list[0])?.agentId || ''))
      .catch(() => undefined);
  }, [props.open]);
  const list = agents.value ?? [];
  const send = async (e: Event) => {
    e.preventDefault();
    if (!text.trim()) {
      setError('Write a message to send.');
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const sent = await sendMessage(agentId, text);
      setText('');
      props.onClose();
      if (sent.taskId) navigate(`/tasks/${sent.taskId}`);
      else toast(`Answered: ${sent.reply ?? ''}`, 'ok');
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog
      open={props.open}
      title="New task"
      onClose={props.onClose}
      footer={
        <>
          <button class="btn" type="button" onClick={props.onClose}>
            Cancel
          </button>
          <button class="btn btn-primary" type="submit" form="new-task-form" disabled={busy || !agentId}>
            {busy ? 'Sending…' : 'Send'}
          </button>
        </>
      }
    >
      <form id="new-task-form" class="form" onSubmit={(e) => void send(e)} noValidate>
        <p class="muted small">Sent as you, to the Agent’s own A2A endpoint. The task’s page opens and follows it live.</p>
        {error && (
          <div class="form-error" role="alert">
            {error}
          </div>
        )}
        <label class="field" for="nt-agent">
          <span class="field-label">Agent</span>
          <select id="nt-agent" class="select" value={agentId} onChange={(e) => setAgentId((e.target as HTMLSelectElement).value)}>
            {list.map((a) => (
              <option key={a.agentId} value={a.agentId}>
                {a.name} ({a.engine})
              </option>
            ))}
          </select>
        </label>
        <label class="field" for="nt-text">
          <span class="field-label">Message</span>
          <textarea id="nt-text" class="input textarea" rows={5} value={text} onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} />
        </label>
      </form>
    </Dialog>
  );
}
