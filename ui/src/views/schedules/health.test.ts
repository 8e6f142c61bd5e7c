import { describe, expect, it } from 'vitest';
import { duration, historyWords } from './ScheduleHealth';

describe('schedule health', () => {
  it('says durations for people', () => {
    expect(duration(850)).toBe('850 ms');
    expect(duration(12_400)).toBe('12 s');
    expect(duration(185_000)).toBe('3 min 5 s');
    expect(duration(120_000)).toBe('2 min');
    expect(duration(7_440_000)).toBe('2 h 4 min');
  });
  it('counts outcomes', () => {
    const h = { recent: [], succeeded: 12, failed: 3, canceled: 0 };
    expect(historyWords(h)).toBe('12 succeeded · 3 failed');
    expect(historyWords({ ...h, canceled: 1 })).toBe('12 succeeded · 3 failed · 1 canceled');
    expect(historyWords({ recent: [], succeeded: 0, failed: 0, canceled: 0 })).toBe('No Run has ended yet');
  });
});
