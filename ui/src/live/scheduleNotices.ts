// Schedule notices on the live stream (a plan started failing, recovered, or was paused after
// consecutive failures) shown as toasts wherever the person is in the console; the plan's own
// page says the rest (its paused reason, its Runs).

import type { ScheduleNotice } from '../api/types';
import { toast } from '../components/ui';
import { subscribe } from './events';

/** The toast of a notice: its sentence, and whether it is good news. */
export function noticeToast(n: ScheduleNotice): { text: string; tone: 'ok' | 'bad' } {
  return { text: n.message, tone: n.kind === 'recovered' ? 'ok' : 'bad' };
}

/** Shows every schedule notice as a toast, until the returned function is called. */
export function showScheduleNotices(): () => void {
  return subscribe({
    schedule(n) {
      const t = noticeToast(n);
      toast(t.text, t.tone);
    },
  });
}
