// Keyboard handling of the approvals inbox, as a pure reducer: j/k (or arrows) move between
// cards, an option's declared shortcut key arms that option, Enter answers with the armed
// option, Escape disarms. Typing in a field only reaches Enter and Escape.

/** What the reducer needs to know of a card. */
export interface KeyCard {
  interactionId: string;
  options: { id: string; shortcut?: string | null }[];
}

export interface InboxKeys {
  /** The selected card, by interaction id (survives cards above it disappearing). */
  selectedId: string | null;
  /** The armed option of the selected card. */
  armed: string | null;
  /** The index of the selection when last seen, to select its neighbour when it goes away. */
  index: number;
}

export const initialKeys: InboxKeys = { selectedId: null, armed: null, index: 0 };

export interface KeyInput {
  key: string;
  ctrl?: boolean;
  meta?: boolean;
  alt?: boolean;
  /** The key was typed in an input, textarea or select. */
  inField?: boolean;
}

export type KeyAction =
  | { type: 'none' }
  | { type: 'handled' }
  | { type: 'answer'; interactionId: string; option: string }
  /** `x`: select or unselect the card for a bulk answer. */
  | { type: 'toggleSelect'; interactionId: string }
  /** `u`: take back the answer that waits to be sent. */
  | { type: 'undo' };

/** The selection after the card list changed: the same card, or its neighbour. */
export function reconcile(state: InboxKeys, cards: KeyCard[]): InboxKeys {
  if (cards.length === 0) return { selectedId: null, armed: null, index: 0 };
  const at = state.selectedId ? cards.findIndex((c) => c.interactionId === state.selectedId) : -1;
  if (at >= 0) return at === state.index ? state : { ...state, index: at };
  const index = Math.min(state.index, cards.length - 1);
  return { selectedId: cards[index].interactionId, armed: null, index };
}

/** Applies one key press. */
export function inboxKey(prev: InboxKeys, input: KeyInput, cards: KeyCard[]): { state: InboxKeys; action: KeyAction } {
  const state = reconcile(prev, cards);
  const none = { state, action: { type: 'none' } as KeyAction };
  if (input.ctrl || input.meta || input.alt || cards.length === 0) return none;
  const card = cards[state.index];
  const handled = (s: InboxKeys) => ({ state: s, action: { type: 'handled' } as KeyAction });
  const select = (i: number) => handled({ selectedId: cards[i].interactionId, armed: null, index: i });

  if (input.key === 'Escape') return state.armed ? handled({ ...state, armed: null }) : none;
  if (input.key === 'Enter') {
    if (!state.armed) return none;
    return { state, action: { type: 'answer', interactionId: card.interactionId, option: state.armed } };
  }
  if (input.inField) return none;
  if (input.key === 'j' || input.key === 'ArrowDown') return select(Math.min(state.index + 1, cards.length - 1));
  if (input.key === 'k' || input.key === 'ArrowUp') return select(Math.max(state.index - 1, 0));
  if (input.key.length === 1) {
    const k = input.key.toLowerCase();
    const opt = card.options.find((o) => o.shortcut && o.shortcut.toLowerCase() === k);
    if (opt) return handled({ ...state, selectedId: card.interactionId, armed: opt.id });
    // The console's own keys, unless the card's engine declared them for an option.
    if (k === 'x') return { state, action: { type: 'toggleSelect', interactionId: card.interactionId } };
    if (k === 'u') return { state, action: { type: 'undo' } };
  }
  return none;
}
