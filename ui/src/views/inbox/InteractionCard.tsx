// One pending decision: what is asked (command, change, question), by which Agent for which
// caller, the expiry countdown, and exactly the options the engine declared, in its order and
// words (plus a reason and form fields where declared). Used by the inbox and, inline, by the
// task and Session pages.

import { signal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import type { PendingInteraction } from '../../api/types';
import { Ago, Badge, now } from '../../components/ui';
import { shortId } from '../../lib/format';
import { countdown } from '../../lib/time';
import { Link } from '../../router';
import { link } from '../../live/events';
import { actionKind, shownAction } from './action';
import { originWords } from './bulk';
import { errors, queueAnswers, queuedFor, sending, undo, type Queued } from './queue';
import { reloadInbox } from './store';

interface Draft {
  reason: string;
  values: Record<string, string>;
}

/** What the person typed on each card, by interaction id (the keyboard's Enter reads it). */
const drafts = signal<Record<string, Draft>>({});
function draft(id: string): Draft {
  return drafts.value[id] ?? { reason: '', values: {} };
}

function setDraft(id: string, d: Partial<Draft>) {
  drafts.value = { ...drafts.value, [id]: { ...draft(id), ...d } };
}

const KIND_LABEL: Record<string, string> = {
  tool_approval: 'Approval',
  decision: 'Decision',
  form: 'Form',
};

/**
 * Answers with what the card's fields hold: after a few seconds to undo (see queue.ts).
 */
export function submitAnswer(item: PendingInteraction, option: string): void {
  const d = draft(item.interactionId);
  queueAnswers([item], option, { reason: d.reason.trim() || undefined, values: d.values });
}

/** "Answering “Yes, run it” in 3 s — Undo", while the answer waits. */
function Waiting(props: { q: Queued }) {
  const left = Math.max(0, Math.ceil((props.q.sendAt - now.value) / 1000));
  return (
    <div class="answer-waiting" role="status" data-waiting={props.q.option}>
      <span>
        Answering “{props.q.label}”{props.q.ids.length > 1 ? ` on ${props.q.ids.length} cards` : ''} in {left} s
      </span>
      <button
        type="button"
        class="btn btn-small"
        onClick={(e) => {
          e.stopPropagation();
          undo(props.q.batch);
        }}
      >
        Undo <kbd>u</kbd>
      </button>
    </div>
  );
}

function Expiry(props: { item: PendingInteraction }) {
  const at = props.item.expiresAt ? Date.parse(props.item.expiresAt) : NaN;
  const c = countdown(at, now.value);
  useEffect(() => {
    // At expiry the server applies the default: re-read, the card goes.
    if (c.expired) void reloadInbox();
  }, [c.expired]);
  if (!c.text) return null;
  return (
    <span class={`countdown${c.urgent ? ' urgent' : ''}`} title={`If nobody answers, “${props.item.defaultOption}” applies`}>
      {c.expired ? `Expired — “${props.item.defaultOption}” applied` : `Expires in ${c.text}`}
    </span>
  );
}

export function InteractionCard(props: {
  item: PendingInteraction;
  selected?: boolean;
  armed?: string | null;
  onSelect?(): void;
  onArm?(option: string | null): void;
  /** Hide the Session link (on the Session's own page). */
  inSession?: boolean;
  /** Bulk answers: whether the card is selected, and how to select it or those like it. */
  checked?: boolean;
  onToggleSelect?(): void;
  alikeCount?: number;
  onSelectAlike?(): void;
}) {
  const { item } = props;
  const id = item.interactionId;
  const d = draft(id);
  const err = errors.value[id];
  const waiting = queuedFor(id);
  const isBusy = !!sending.value[id] || !!waiting;
  const fields = item.fields ?? [];
  const online = link.value === 'live';
  const actionText = shownAction(item);
  return (
    <article
      class={`card interaction${props.selected ? ' selected' : ''}`}
      data-interaction-id={id}
      aria-label={item.title}
      aria-current={props.selected ? 'true' : undefined}
      onClick={props.onSelect}
    >
      <header class="interaction-head">
        <div class="interaction-meta">
          {props.onToggleSelect && (
            <label class="select-card" onClick={(e) => e.stopPropagation()}>
              <input type="checkbox" checked={!!props.checked} onChange={() => props.onToggleSelect?.()} aria-label={`Select “${item.title}” for a bulk answer`} />
            </label>
          )}
          <Badge tone="warn">{KIND_LABEL[item.kind] ?? item.kind}</Badge>
          <span class="agent-name">{item.agentName ?? item.agentId}</span>
          <span class="muted" data-origin>
            from {originWords(item)}
          </span>
          <span class="muted">·</span>
          <span class="muted">
            asked <Ago at={item.raisedAt} />
          </span>
        </div>
        <Expiry item={item} />
      </header>
      <h3 class="interaction-title">{item.title}</h3>
      {item.firstMessage && (
        <p class="first-message" title="The message that started this Session">
          <span class="muted">Asked for: </span>
          {item.firstMessage}
        </p>
      )}
      {actionText !== null && (
        <div class="command" data-action-kind={actionKind(item)}>
          {/* The exact action (a command, an argument list, a patch, a file change or a
              network request), with invisible and misleading characters shown escaped. */}
          <pre class="command-text">
            <code>{actionText}</code>
          </pre>
          {item.command && item.cwd && <div class="cwd">in {item.cwd}</div>}
        </div>
      )}
      {(item.action?.flags?.length ?? 0) > 0 && (
        <ul class="action-flags" role="alert" aria-label="Hidden characters">
          {item.action?.flags?.map((f) => (
            <li key={f.code} data-flag={f.code}>
              ⚠ {f.message}
            </li>
          ))}
        </ul>
      )}
      {(item.from || item.action) && (
        <div class="action-meta">
          {item.from && <span class="action-from">sent by {item.from}</span>}
          {item.action && (
            <span class="action-digest" title={`You approve exactly the action with digest ${item.action.digest}`}>
              digest <code>{item.action.digest.replace('sha256:', '').slice(0, 16)}</code>
            </span>
          )}
        </div>
      )}
      {item.description &&
        !(item.command && item.description.includes(item.command)) &&
        !(actionText && item.description.includes(actionText)) && (
        <p class="interaction-desc">{item.description}</p>
      )}
      {fields.length > 0 && (
        <div class="form-fields">
          {fields.map((f) => (
            <label class="field" key={f.id}>
              <span class="field-label">
                {f.label}
                {f.required && <span class="req"> *</span>}
              </span>
              <input
                class={`input${err?.field === 'values' ? ' invalid' : ''}`}
                type={f.secret ? 'password' : 'text'}
                value={d.values[f.id] ?? ''}
                autocomplete="off"
                onInput={(e) => setDraft(id, { values: { ...d.values, [f.id]: (e.target as HTMLInputElement).value } })}
              />
            </label>
          ))}
        </div>
      )}
      {item.reasonAllowed && (props.selected || d.reason) && (
        <label class="field reason">
          <span class="field-label">Reason (optional, sent to the agent)</span>
          <input
            class="input"
            type="text"
            value={d.reason}
            placeholder="e.g. use the staging database instead"
            onInput={(e) => setDraft(id, { reason: (e.target as HTMLInputElement).value })}
            onFocus={props.onSelect}
          />
        </label>
      )}
      <div class="options-wrap">
        <div class="options" role="group" aria-label="Options">
          {item.options.map((o) => (
            <button
              key={o.id}
              type="button"
              class={`option${props.armed === o.id ? ' armed' : ''}${o.id === item.defaultOption ? ' is-default' : ''}`}
              data-option={o.id}
              disabled={isBusy || !online}
              title={online ? (o.description ?? o.id) : 'Sextant is not reachable: answers wait until it is back'}
              onClick={(e) => {
                e.stopPropagation();
                props.onSelect?.();
                submitAnswer(item, o.id);
              }}
            >
              {o.shortcut && <kbd>{o.shortcut}</kbd>}
              <span>{o.label}</span>
            </button>
          ))}
        </div>
        {/* Over the options, so the card keeps its height and nothing moves under the pointer. */}
        {waiting && <Waiting q={waiting} />}
      </div>
      {props.alikeCount && props.alikeCount > 1 && props.onSelectAlike ? (
        <button
          type="button"
          class="btn btn-ghost btn-small select-alike"
          onClick={(e) => {
            e.stopPropagation();
            props.onSelectAlike?.();
          }}
        >
          Select all {props.alikeCount} like this
        </button>
      ) : null}
      {props.armed && props.selected && (
        <div class="armed-hint" role="status">
          Press <kbd>Enter</kbd> to answer “{item.options.find((o) => o.id === props.armed)?.label}” · <kbd>Esc</kbd> to cancel
        </div>
      )}
      {err && (
        <div class="field-error" role="alert">
          {err.message}
        </div>
      )}
      <footer class="interaction-foot">
        {!props.inSession && (
          <Link href={`/sessions/${item.sessionId}`} class="link">
            Open Session {shortId(item.sessionId)} →
          </Link>
        )}
        <Link href={`/tasks/${item.taskId}`} class="link">
          Task {shortId(item.taskId)}
        </Link>
      </footer>
    </article>
  );
}
