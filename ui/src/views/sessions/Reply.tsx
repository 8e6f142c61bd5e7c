// Reply in a Session: a message that continues its conversation (its contextId), as the person.
// A Session belongs to its caller: only the person's own Sessions can be continued as the
// person (another caller's contextId names another conversation for you), so others say so.

import { useState } from 'preact/hooks';
import { navigate } from '../../router';
import { sendMessage } from '../tasks/send';

export function Reply(props: { agentId: string; contextId: string; caller: string }) {
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  if (!props.caller.startsWith('person:'))
    return (
      <p class="muted small reply-note">
        This conversation belongs to its caller; a reply from you would start your own. Use <strong>New task</strong> on the Tasks page for that.
      </p>
    );
  const send = async (e: Event) => {
    e.preventDefault();
    if (!text.trim()) return;
    setBusy(true);
    setError(null);
    try {
      const sent = await sendMessage(props.agentId, text, props.contextId);
      setText('');
      if (sent.taskId) navigate(`/tasks/${sent.taskId}`);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="reply-form" onSubmit={(e) => void send(e)} aria-label="Reply in this Session">
      {error && (
        <div class="form-error" role="alert">
          {error}
        </div>
      )}
      <label class="field" for="reply-text">
        <span class="field-label">Reply</span>
        <textarea
          id="reply-text"
          class="input textarea"
          rows={3}
          value={text}
          placeholder="Continue this conversation, as you"
          onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
        />
      </label>
      <div class="reply-actions">
        <button class="btn btn-primary" type="submit" disabled={busy || !text.trim()}>
          {busy ? 'Sending…' : 'Send reply'}
        </button>
      </div>
    </form>
  );
}
