// The approvals inbox: every pending interaction across Sessions, newest first, live. j/k
// move, an option's shortcut arms it, Enter answers, Escape disarms; x selects a card and
// "Select all like this" its identical twins, for one answer to all of them; every answer
// waits a few seconds to be undone (u). A card answered with the pointer leaves a placeholder
// of its height until the pointer leaves the list, so the next card never slides under it.

import { useEffect, useRef, useState } from 'preact/hooks';
import type { PendingInteraction } from '../../api/types';
import { Empty, ErrorState, Loading, PageHeader } from '../../components/ui';
import { notifications, setNotifications } from '../../host/notify';
import { inboxKey, initialKeys, reconcile, type InboxKeys } from '../../lib/keys';
import { link } from '../../live/events';
import { alike, commonOptions, signature } from './bulk';
import { InteractionCard, submitAnswer } from './InteractionCard';
import { answeredHere, clearAnsweredHere, queueAnswers, undo } from './queue';
import { inbox, reloadInbox } from './store';

/** The most cards drawn at once (the rest behind "Show more"): the list stays fast at volume. */
const PAGE = 100;

function inField(t: EventTarget | null): boolean {
  const el = t as HTMLElement | null;
  return !!el && (el.tagName === 'INPUT' || el.tagName === 'TEXTAREA' || el.tagName === 'SELECT' || el.isContentEditable);
}

/** Where an answered card was: its height, so the list below does not move. */
interface Ghost {
  item: PendingInteraction;
  height: number;
}

function NotifyToggle() {
  const n = notifications.value;
  if (n === 'unsupported') return null;
  return (
    <button
      class="btn btn-small"
      aria-pressed={n === 'on'}
      disabled={n === 'denied'}
      title={n === 'denied' ? 'The browser blocks notifications for this page' : 'A notification when a new approval arrives while this tab is in the background'}
      onClick={() => void setNotifications(n !== 'on')}
      data-action="notify"
    >
      {n === 'on' ? 'Notifications on' : n === 'denied' ? 'Notifications blocked' : 'Notify me'}
    </button>
  );
}

export function Inbox() {
  const s = inbox.value;
  const [keys, setKeys] = useState<InboxKeys>(initialKeys);
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [shown, setShown] = useState(PAGE);
  const ghosts = useRef(new Map<string, Ghost>());
  const keysRef = useRef(keys);
  keysRef.current = reconcile(keys, s.items);
  const current = keysRef.current;
  const selectedRef = useRef(selected);
  selectedRef.current = selected;

  // Remember each card's place and height while it is shown.
  const here = answeredHere.value;
  for (const i of s.items) {
    const el = document.querySelector<HTMLElement>(`[data-interaction-id="${CSS.escape(i.interactionId)}"]`);
    if (el) ghosts.current.set(i.interactionId, { item: i, height: el.getBoundingClientRect().height });
  }
  const live = new Set(s.items.map((i) => i.interactionId));
  // Placeholders matter only while a card could slide up into their place.
  const placeholders = s.items.length ? [...ghosts.current.values()].filter((g) => !live.has(g.item.interactionId) && here[g.item.interactionId]) : [];
  const rows = [...s.items.map((item) => ({ item, ghost: null as Ghost | null })), ...placeholders.map((g) => ({ item: g.item, ghost: g }))].sort(
    (a, b) => Date.parse(b.item.raisedAt) - Date.parse(a.item.raisedAt) || b.item.interactionId.localeCompare(a.item.interactionId),
  );
  // Cards that went are no longer selected.
  const chosen = s.items.filter((i) => selected.has(i.interactionId));
  const shared = commonOptions(chosen);
  const online = link.value === 'live';

  const toggle = (id: string) =>
    setSelected((old) => {
      const next = new Set(old);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });

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
      // The keyboard needs no placeholder to keep a pointer's target.
      clearAnsweredHere();
      if (action.type === 'answer') {
        const item = inbox.value.items.find((i) => i.interactionId === action.interactionId);
        if (item) submitAnswer(item, action.option);
      } else if (action.type === 'toggleSelect') toggle(action.interactionId);
      else if (action.type === 'undo') undo();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, []);

  useEffect(() => {
    if (!current.selectedId) return;
    document.querySelector(`[data-interaction-id="${CSS.escape(current.selectedId)}"]`)?.scrollIntoView({ block: 'nearest' });
  }, [current.selectedId]);

  const answerSelected = (option: string) => {
    if (queueAnswers(chosen, option) !== null) setSelected(new Set());
  };

  return (
    <div class="page">
      <PageHeader
        title="Approvals"
        subtitle={
          <>
            Decisions your agents are waiting for. <kbd>j</kbd>/<kbd>k</kbd> to move, an option’s key to choose it, <kbd>Enter</kbd> to answer,{' '}
            <kbd>x</kbd> to select, <kbd>u</kbd> to undo.
          </>
        }
        actions={<NotifyToggle />}
      />
      {chosen.length > 0 && (
        <div class="bulk-bar" role="region" aria-label="Answer the selected">
          <strong>{chosen.length} selected</strong>
          {shared.length === 0 ? (
            <span class="muted">They share no option; answer them one by one.</span>
          ) : (
            shared.map((o) => (
              <button key={o.id} class="btn btn-small option" data-bulk-option={o.id} disabled={!online} onClick={() => answerSelected(o.id)}>
                {o.label}
              </button>
            ))
          )}
          <button class="btn btn-ghost btn-small" onClick={() => setSelected(new Set())}>
            Clear
          </button>
        </div>
      )}
      {s.status === 'loading' && <Loading label="Loading pending approvals…" />}
      {s.status === 'error' && <ErrorState error={s.error ?? ''} retry={() => void reloadInbox()} />}
      {s.status === 'ready' && rows.length === 0 && (
        <Empty title="Nothing is waiting for you" icon="✓">
          When an agent stops for a decision, it shows up here at once.
        </Empty>
      )}
      {s.status === 'ready' && rows.length > 0 && (
        <div
          class="cards"
          aria-label="Pending approvals"
          onMouseLeave={() => {
            clearAnsweredHere();
            ghosts.current.clear();
          }}
        >
          {rows.slice(0, shown).map(({ item, ghost }) =>
            ghost ? (
              <div
                key={item.interactionId}
                class="card interaction answered-ghost"
                data-answered={item.interactionId}
                style={{ minHeight: `${ghost.height}px` }}
                role="status"
              >
                Answered “{here[item.interactionId]}” · {item.title}
              </div>
            ) : (
              <InteractionCard
                key={item.interactionId}
                item={item}
                selected={item.interactionId === current.selectedId}
                armed={item.interactionId === current.selectedId ? current.armed : null}
                checked={selected.has(item.interactionId)}
                onToggleSelect={() => toggle(item.interactionId)}
                alikeCount={s.items.filter((x) => signature(x) === signature(item)).length}
                onSelectAlike={() => setSelected(new Set([...selectedRef.current, ...alike(inbox.value.items, item).map((x) => x.interactionId)]))}
                onSelect={() => {
                  const index = s.items.findIndex((i) => i.interactionId === item.interactionId);
                  if (item.interactionId !== current.selectedId) setKeys({ selectedId: item.interactionId, armed: null, index });
                }}
              />
            ),
          )}
          {rows.length > shown && (
            <button class="btn" onClick={() => setShown((n) => n + PAGE)}>
              Show {Math.min(PAGE, rows.length - shown)} more of {rows.length - shown}
            </button>
          )}
        </div>
      )}
    </div>
  );
}
