import { describe, expect, it } from 'vitest';
import { inboxKey, initialKeys, reconcile, type InboxKeys, type KeyCard } from './keys';

const opts = [
  { id: 'accept', shortcut: 'y' },
  { id: 'acceptForSession', shortcut: 'a' },
  { id: 'decline', shortcut: 'n' },
  { id: 'cancel', shortcut: 'c' },
];
const cards: KeyCard[] = [
  { interactionId: 'i1', options: opts },
  { interactionId: 'i2', options: opts },
  { interactionId: 'i3', options: [{ id: 'pick', shortcut: 'P' }, { id: 'skip' }] },
];

function press(keys: string[], start: InboxKeys = initialKeys, list = cards) {
  let s = start;
  let last = null;
  for (const key of keys) {
    const r = inboxKey(s, { key }, list);
    s = r.state;
    last = r.action;
  }
  return { s, last };
}

describe('inbox keys', () => {
  it('selects the first card and moves with j/k and arrows, staying in bounds', () => {
    expect(press([]).s.selectedId).toBe(null);
    expect(press(['j']).s.selectedId).toBe('i2');
    expect(press(['j', 'j', 'j', 'j']).s.selectedId).toBe('i3');
    expect(press(['j', 'k', 'k', 'k']).s.selectedId).toBe('i1');
    expect(press(['ArrowDown', 'ArrowDown', 'ArrowUp']).s.selectedId).toBe('i2');
  });

  it('arms the option whose declared shortcut was pressed, and answers it on Enter', () => {
    const { s } = press(['j', 'y']);
    expect(s).toMatchObject({ selectedId: 'i2', armed: 'accept' });
    expect(press(['j', 'y', 'Enter']).last).toEqual({ type: 'answer', interactionId: 'i2', option: 'accept' });
    expect(press(['a', 'Enter']).last).toEqual({ type: 'answer', interactionId: 'i1', option: 'acceptForSession' });
    // Shortcuts are matched case-insensitively, per card.
    expect(press(['j', 'j', 'p']).s.armed).toBe('pick');
    expect(press(['j', 'j', 'y']).s.armed).toBe(null);
  });

  it('does nothing on Enter without an armed option, and Escape disarms', () => {
    expect(press(['Enter']).last).toEqual({ type: 'none' });
    const { s } = press(['n', 'Escape']);
    expect(s.armed).toBe(null);
    expect(press(['n', 'Escape', 'Enter']).last).toEqual({ type: 'none' });
  });

  it('moving disarms, so Enter never answers a card that was not looked at', () => {
    expect(press(['y', 'j', 'Enter']).last).toEqual({ type: 'none' });
  });

  it('ignores keys with modifiers, and letters typed into a field', () => {
    expect(inboxKey(initialKeys, { key: 'y', ctrl: true }, cards).state.armed).toBe(null);
    expect(inboxKey(initialKeys, { key: 'j', inField: true }, cards).action).toEqual({ type: 'none' });
    const armed = press(['n']).s;
    // Enter in the reason field confirms the armed option.
    expect(inboxKey(armed, { key: 'Enter', inField: true }, cards).action).toEqual({
      type: 'answer',
      interactionId: 'i1',
      option: 'decline',
    });
  });

  it('keeps the selected card when others disappear, and selects a neighbour when it goes', () => {
    const s = press(['j']).s; // i2 at index 1
    expect(reconcile(s, cards.slice(1))).toMatchObject({ selectedId: 'i2', index: 0 });
    expect(reconcile(s, [cards[0], cards[2]])).toMatchObject({ selectedId: 'i3', index: 1, armed: null });
    expect(reconcile(press(['j', 'j']).s, cards.slice(0, 1))).toMatchObject({ selectedId: 'i1', index: 0 });
    expect(reconcile(s, [])).toEqual(initialKeys);
  });
});

describe('the console keys of the inbox', () => {
  const cards = [
    { interactionId: 'a', options: [{ id: 'accept', shortcut: 'y' }] },
    { interactionId: 'b', options: [{ id: 'exit', shortcut: 'x' }] },
  ];
  it("a schedule's Run card arms acceptForSchedule with s, a key no other option or console key uses", () => {
    const scheduled: KeyCard[] = [{ interactionId: 'r1', options: [...opts.slice(0, 2), { id: 'acceptForSchedule', shortcut: 's' }, ...opts.slice(2)] }];
    const keys = scheduled[0].options.map((o) => o.shortcut);
    expect(new Set(keys).size).toBe(keys.length);
    for (const own of ['j', 'k', 'x', 'u', 'g', '/', '?']) expect(keys).not.toContain(own);
    expect(press(['s', 'Enter'], initialKeys, scheduled).last).toEqual({ type: 'answer', interactionId: 'r1', option: 'acceptForSchedule' });
  });

  it('x selects the card for a bulk answer and u undoes, unless an option took the key', () => {
    const s = { selectedId: 'a', armed: null, index: 0 };
    expect(inboxKey(s, { key: 'x' }, cards).action).toEqual({ type: 'toggleSelect', interactionId: 'a' });
    expect(inboxKey(s, { key: 'u' }, cards).action).toEqual({ type: 'undo' });
    const onB = { selectedId: 'b', armed: null, index: 1 };
    expect(inboxKey(onB, { key: 'x' }, cards).state.armed).toBe('exit');
    expect(inboxKey(s, { key: 'x', inField: true }, cards).action).toEqual({ type: 'none' });
  });
});
