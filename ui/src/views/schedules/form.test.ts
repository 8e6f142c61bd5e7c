import { describe, expect, it } from 'vitest';
import type { Schedule } from '../../api/types';
import { advancedSummary, bodyOf, formFor, instantOf, lastDay, localInput, timingOf } from './form';

const defaults = { agent_id: 'echo', timezone: 'Europe/Berlin', now: new Date(2026, 11, 2, 15, 42) };

describe('the schedule form', () => {
  it('sends exactly one timing: cron, plain words or a one-shot time', () => {
    const f = { ...formFor(null, defaults), cron: '0 9 * * *', when: 'every 30 minutes', once_at: '2026-12-24T09:00' };
    expect(timingOf({ ...f, kind: 'cron' })).toEqual({ cron: '0 9 * * *' });
    expect(timingOf({ ...f, kind: 'words' })).toEqual({ when: 'every 30 minutes' });
    expect(timingOf({ ...f, kind: 'once' })).toEqual({ once_at: '2026-12-24T09:00' });
    const body = bodyOf({ ...f, kind: 'words' });
    expect('cron' in body || 'once_at' in body).toBe(false);
  });

  it('sends the advanced settings, an empty pause as never and an empty jitter as none', () => {
    const f = { ...formFor(null, defaults), overlap_policy: 'buffer_one' as const, jitter_secs: ' 30 ', pause_after_failures: '3' };
    expect(bodyOf(f)).toMatchObject({ overlap_policy: 'buffer_one', jitter_secs: 30, pause_after_failures: 3, missed_run_grace_secs: 3600 });
    expect(bodyOf({ ...f, jitter_secs: '', pause_after_failures: '' })).toMatchObject({ jitter_secs: 0, pause_after_failures: null });
    // Not a number: sent as typed, so the server's error lands on the field.
    expect(bodyOf({ ...f, jitter_secs: 'soon' }).jitter_secs).toBe('soon');
    expect(advancedSummary(f)).toBe('overlap buffer one · jitter 30 s · pause after 3 failures');
    expect(advancedSummary(formFor(null, defaults))).toBe('');
  });

  it('starts from a saved plan, a one-shot one as such', () => {
    const saved = {
      name: 'n', prompt: 'p', agent_id: 'shell', timezone: 'UTC', cron: null, once_at: '2026-12-24T09:00:00',
      missed_run_policy: 'run_once', missed_run_grace_secs: 900, overlap_policy: 'allow_all', jitter_secs: 5, pause_after_failures: null,
    } as unknown as Schedule;
    const f = formFor(saved, defaults);
    expect(f).toMatchObject({ kind: 'once', once_at: '2026-12-24T09:00', missed_run_policy: 'run_once', missed_run_grace_secs: 900, overlap_policy: 'allow_all', jitter_secs: '5', pause_after_failures: '' });
    expect(formFor(null, defaults)).toMatchObject({ kind: 'cron', once_at: '2026-12-03T09:00', jitter_secs: '0' });
  });

  it('reads a backfill range in the browser’s zone', () => {
    const d = new Date(2026, 10, 30, 9, 5);
    expect(localInput(d)).toBe('2026-11-30T09:05');
    expect(instantOf('2026-11-30T09:05')).toBe(d.toISOString());
    expect(instantOf('')).toBe('');
    expect(instantOf('yesterday')).toBe('yesterday');
    expect(lastDay(new Date(2026, 11, 2, 15, 42, 31))).toEqual({ from: '2026-12-01T15:42', to: '2026-12-02T15:42' });
  });
});
