// What an approval card shows as the action the person approves.
import type { PendingInteraction } from '../../api/types';

/**
 * The action text the person approves: the escaped `shown` text whenever the interaction has
 * an action (an exec agent's argv or patch and Codex's file or network approvals have no
 * `command`, and still run exactly this), unless it only repeats the title (a plain question).
 */
export function shownAction(item: PendingInteraction): string | null {
  if (item.action) return item.action.shown === item.title ? null : item.action.shown;
  return item.command ?? null;
}

/** What the action is made of (`command`, `argv`, `patch`, `files`, `networkHost`), for tests and styling. */
export function actionKind(item: PendingInteraction): string {
  const exact = item.action?.exact ?? {};
  const known = ['command', 'argv', 'patch', 'files', 'networkHost'].filter((k) => k in exact);
  return known.join(' ') || String(exact.kind ?? 'command');
}
