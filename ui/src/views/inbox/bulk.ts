// The inbox at volume, as pure functions: which cards ask the same thing (so they can be
// selected together), which options a selection shares, and where a card comes from in words.

import type { InteractionOption, PendingInteraction } from '../../api/types';
import { callerLabel } from '../../lib/format';

/**
 * What makes two requests "the same": the Agent, the kind, the question, the exact command
 * and directory, and the options offered (ids and words). Two cards with one signature can
 * be answered together.
 */
export function signature(i: PendingInteraction): string {
  return JSON.stringify([i.agentId, i.kind, i.title, i.command ?? null, i.cwd ?? null, i.description ?? null, i.options.map((o) => [o.id, o.label])]);
}

/** The cards that ask the same as `i` (itself included). */
export function alike(items: PendingInteraction[], i: PendingInteraction): PendingInteraction[] {
  const s = signature(i);
  return items.filter((x) => signature(x) === s);
}

/**
 * The options every selected card offers (same id and words), in the first card's order; a
 * bulk answer can only be one of those. Cards with form fields to fill are left out of bulk
 * answers (each needs its own values), so they share nothing.
 */
export function commonOptions(items: PendingInteraction[]): InteractionOption[] {
  if (items.length === 0 || items.some((i) => (i.fields ?? []).some((f) => f.required))) return [];
  const [first, ...rest] = items;
  return first.options.filter((o) => rest.every((i) => i.options.some((p) => p.id === o.id && p.label === o.label)));
}

/** Where a card comes from, in words: its schedule, a peer, an assistant, or its caller. */
export function originWords(i: PendingInteraction): string {
  if (i.scheduleName || i.scheduleId) return `schedule “${i.scheduleName ?? 'deleted'}”`;
  const subject = i.caller.split(':').slice(2).join(':') || i.caller;
  switch (i.callerKind) {
    case 'peer':
      return `peer ${subject}`;
    case 'assistant':
      return `assistant ${subject}`;
    case 'person':
      return 'you';
    default:
      return callerLabel(i.caller);
  }
}
