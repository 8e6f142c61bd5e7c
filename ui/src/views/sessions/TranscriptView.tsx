// The transcript blocks of a Session (or of one task), as a person reads them: what the caller
// sent, what the agent answered (streamed text joined up), state changes, and each decision
// with who answered it and when. A decision still open is answerable right here.

import type { Item } from './transcript';
import { items as toItems, optionLabel } from './transcript';
import type { Block } from '../../api/types';
import { StateBadge } from '../../components/ui';
import { clockTime, wallTime } from '../../lib/time';
import { inbox } from '../inbox/store';
import { InteractionCard } from '../inbox/InteractionCard';
import { shortId } from '../../lib/format';

/** A non-text part, summarised on one line: its data as JSON, its URL, or its size. */
function partText(part: unknown): string {
  const p = (part ?? {}) as { data?: unknown; url?: string; bytes?: number; filename?: string; mediaType?: string };
  const name = p.filename ? `${p.filename}: ` : '';
  if (p.data !== undefined) return name + JSON.stringify(p.data);
  if (p.url) return name + p.url;
  if (p.bytes !== undefined) return `${name}${p.bytes} bytes${p.mediaType ? ` (${p.mediaType})` : ''}`;
  return JSON.stringify(part);
}

function When(props: { at: string }) {
  return (
    <time class="when" dateTime={props.at} title={wallTime(props.at, undefined, true)}>
      {clockTime(props.at)}
    </time>
  );
}

function Entry(props: { item: Item; showTask: boolean }) {
  const it = props.item;
  const task = props.showTask && it.taskId ? <span class="task-tag mono">task {shortId(it.taskId)}</span> : null;
  switch (it.type) {
    case 'user':
      return (
        <div class="entry entry-user" data-kind="user_input">
          <div class="entry-head">
            <span class="who">Caller</span>
            {task}
            <When at={it.at} />
          </div>
          <div class="bubble">
            <pre class="text">{it.text}</pre>
          </div>
        </div>
      );
    case 'agent':
      return (
        <div class="entry entry-agent" data-kind="agent_text">
          <div class="entry-head">
            <span class="who">Agent</span>
            {it.artifact && <span class="muted">{it.artifact}</span>}
            {task}
            <When at={it.at} />
          </div>
          <div class="bubble">
            <pre class="text">{it.text}</pre>
          </div>
        </div>
      );
    case 'output':
      return (
        <div class="entry entry-agent" data-kind="agent_output">
          <div class="entry-head">
            <span class="who">Output</span>
            <span class="muted">{it.artifact}</span>
            {task}
            <When at={it.at} />
          </div>
          <div class="bubble data-parts">
            {it.parts.map((part, i) => (
              <code key={i} class="data-part">
                {partText(part)}
              </code>
            ))}
          </div>
        </div>
      );
    case 'state':
      return (
        <div class="entry entry-state" data-kind="state" data-state={it.state}>
          <span class="rule" />
          <StateBadge state={it.state} />
          {it.text && <span class="state-text">{it.text}</span>}
          {task}
          <When at={it.at} />
          <span class="rule" />
        </div>
      );
    case 'interaction': {
      const i = it.interaction;
      const pending = !it.answer && inbox.value.items.find((p) => p.interactionId === i.interactionId);
      if (pending) {
        return (
          <div class="entry entry-interaction" data-kind="interaction">
            <InteractionCard item={pending} inSession />
          </div>
        );
      }
      return (
        <div class="entry entry-interaction" data-kind="interaction">
          <div class="decision">
            <div class="entry-head">
              <span class="who">Asked</span>
              {task}
              <When at={it.at} />
            </div>
            <div class="decision-title">{i.title}</div>
            {i.command && (
              <pre class="command-inline">
                <code>{i.command}</code>
              </pre>
            )}
            <div class="decision-options">
              {i.options.map((o) => (
                <span key={o.id} class={`chip${it.answer?.option === o.id ? ' chosen' : ''}`}>
                  {o.label}
                </span>
              ))}
            </div>
            {it.answer ? (
              <div class="decision-answer" data-kind="answer">
                {it.answer.withdrawn ? (
                  <>Withdrawn by the agent, no answer needed</>
                ) : it.answer.expired ? (
                  <>
                    Expired: <strong>{optionLabel(i, it.answer.option)}</strong> applied
                  </>
                ) : (
                  <>
                    Answered <strong>{optionLabel(i, it.answer.option)}</strong> by {it.answer.answeredBy}
                  </>
                )}{' '}
                at <When at={it.answer.at} />
                {it.answer.reason && <span class="muted"> — “{it.answer.reason}”</span>}
              </div>
            ) : (
              <div class="decision-answer muted">Waiting for an answer</div>
            )}
          </div>
        </div>
      );
    }
  }
}

export function TranscriptView(props: { blocks: Block[]; taskId?: string; showTask?: boolean }) {
  const list = toItems(props.blocks, props.taskId);
  if (list.length === 0) return <div class="muted transcript-empty">Nothing has happened yet.</div>;
  return (
    <div class="transcript" aria-label="Transcript">
      {list.map((it) => (
        <Entry key={it.key} item={it} showTask={!!props.showTask} />
      ))}
    </div>
  );
}
