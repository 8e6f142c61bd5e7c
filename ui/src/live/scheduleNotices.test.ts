import { describe, expect, it } from 'vitest';
import type { ScheduleNotice } from '../api/types';
import { noticeToast } from './scheduleNotices';

const notice = (kind: ScheduleNotice['kind']): ScheduleNotice => ({
  kind,
  scheduleId: 's1',
  scheduleName: 'Backup',
  runId: 'r1',
  consecutiveFailures: kind === 'recovered' ? 0 : 3,
  message: `message ${kind}`,
  at: '2026-12-01T10:00:00.000Z',
});

describe('schedule notices', () => {
  it('show their sentence, bad news as bad and recovery as good', () => {
    expect(noticeToast(notice('failed'))).toEqual({ text: 'message failed', tone: 'bad' });
    expect(noticeToast(notice('paused')).tone).toBe('bad');
    expect(noticeToast(notice('recovered')).tone).toBe('ok');
  });
});
