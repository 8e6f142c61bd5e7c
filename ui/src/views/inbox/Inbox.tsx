// The approvals inbox: every pending interaction across Sessions, newest first, live. j/k
// move, an option's shortcut arms it, Enter answers, Escape disarms.

import { useEffect, useRef, useState } from 'preact/hooks';
import { Empty, ErrorState, Loading, PageHeader } from '../../components/ui';
import { inboxKey, initialKeys, reconcile, type InboxKeys } from '../../lib/keys';
import { InteractionCard, submitAnswer } from './InteractionCard';
import { inbox, reloadInbox } from './store';

function inField(t: EventTarget | null): boolean {
  const el = t as HTMLElement | null;
  return !!el && (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT' || el.isContentEditable);
}

export function Inbox() {
  const s = inbox.value;
  const [keys, setKeys] = useState<InboxKeys>(initialKeys);
  const keysRef = useRef(keys);
  keysRef.current = reconcile(keys, s.items);
  const current = keysRef.current;

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (document.querySelector('dialog[open]')) return;
      const { state, action } = inboxKey(
        keysRef.current,
        { key: e.key, ctrl: e.ctrlKey, meta: e.metaKey, alt: e.altKey, inField: inField(e.target) },
        inbox.value.items,
      );
      if (action.type === 'none') return;
      e.preventDefault();
      setKeys(state);
      if (action.type === 'answer') {
        const item = inbox.value.items.find((i) => i.interactionId === action.interactionId);
        if (item) void submitAnswer(item, action.option);
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  useEffect(() => {
    if (!current.selectedId) return;
    document.querySelector(`[data-interaction-id="${CSS.escape(current.selectedId)}"]`)?.scrollIntoView({ block: 'nearest' });
  }, [current.selectedId]);

  return (
    <div class="page">
      <PageHeader
        title="Approvals"
        subtitle={
          <>
            Decisions your agents are waiting for. <kbd>j</kbd>/<kbd>k</kbd> to move, an option’s key to choose it,{' '}
            <kbd>Enter</kbd> to answer.
          </>
        }
      />
      {s.status === 'loading' && <Loading label="Loading pending approvals…" />}
      {s.status === 'error' && <ErrorState error={s.error ?? ''} retry={() => void reloadInbox()} />}
      {s.status === 'ready' && s.items.length === 0 && (
        <Empty title="Nothing is waiting for you" icon="✓">
          When an agent stops for a decision, it shows up here at once.
        </Empty>
      )}
      {s.status === 'ready' && s.items.length > 0 && (
        <div class="cards" aria-label="Pending approvals">
          {s.items.map((item) => (
            <InteractionCard
              key={item.interactionId}
              item={item}
              selected={item.interactionId === current.selectedId}
              armed={item.interactionId === current.selectedId ? current.armed : null}
              onSelect={() => {
                const index = s.items.findIndex((i) => i.interactionId === item.interactionId);
                if (item.interactionId !== current.selectedId) setKeys({ selectedId: item.interactionId, armed: null, index });
              }}
            />
          ))}
        </div>
      )}
    </div>
  );
}
