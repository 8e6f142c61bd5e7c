import { describe, expect, it } from 'vitest';
import { describeCron, joinWords } from './cron';

const words = (e: string) => {
  const r = describeCron(e);
  if (!r.ok) throw new Error(`not ok: ${r.error}`);
  return r.text;
};
const error = (e: string) => {
  const r = describeCron(e);
  if (r.ok) throw new Error(`unexpectedly ok: ${r.text}`);
  return r.error;
};

describe('describeCron', () => {
  it('reads fixed times and day lists', () => {
    expect(words('30 7 * * 1-5')).toBe('At 07:30, on weekdays (Monday through Friday).');
    expect(words('0 9 * * MON-FRI')).toBe('At 09:00, on weekdays (Monday through Friday).');
    expect(words('0 9 * * *')).toBe('At 09:00, every day.');
    expect(words('0 9,17 * * *')).toBe('At 09:00 and 17:00, every day.');
    expect(words('0 10 * * 1,3,5')).toBe('At 10:00, on Monday, Wednesday and Friday.');
    expect(words('0 10 * * SAT,SUN')).toBe('At 10:00, on Saturday and Sunday.');
    expect(words('0 10 * * 0')).toBe('At 10:00, on Sunday.');
    expect(words('0 10 * * 7')).toBe('At 10:00, on Sunday.');
  });

  it('reads seconds when there are six fields', () => {
    expect(words('15 30 7 * * *')).toBe('At 07:30:15, every day.');
    expect(words('0 30 7 * * 1-5')).toBe('At 07:30, on weekdays (Monday through Friday).');
  });

  it('reads intervals', () => {
    expect(words('* * * * *')).toBe('Every minute.');
    expect(words('*/15 * * * *')).toBe('Every 15 minutes.');
    expect(words('0 * * * *')).toBe('Every hour, on the hour.');
    expect(words('5 * * * *')).toBe('At minute 5 of every hour.');
    expect(words('*/10 9-17 * * 1-5')).toBe('Every 10 minutes, from 09:00 through 17:59, on weekdays (Monday through Friday).');
    expect(words('0 */6 * * *')).toBe('On the hour, every 6 hours.');
  });

  it('reads days of the month, months and the L, W and # extensions', () => {
    expect(words('0 8 1 * *')).toBe('At 08:00, on day 1 of the month.');
    expect(words('0 8 1,15 * *')).toBe('At 08:00, on days 1 and 15 of the month.');
    expect(words('0 8 L * *')).toBe('At 08:00, on the last day of the month.');
    expect(words('0 8 15W * *')).toBe('At 08:00, on the weekday nearest day 15 of the month.');
    expect(words('0 8 * * MON#2')).toBe('At 08:00, on the second Monday of the month.');
    expect(words('0 8 * * 5L')).toBe('At 08:00, on the last Friday of the month.');
    expect(words('0 0 1 1 *')).toBe('At 00:00, on day 1 of the month, in January.');
    expect(words('0 12 * JUN-AUG *')).toBe('At 12:00, in June through August.');
  });

  it('says either day field may match when both are restricted (Vixie OR)', () => {
    expect(words('0 9 1 * MON')).toBe('At 09:00, on day 1 of the month or on Monday.');
  });

  it('reads nicknames', () => {
    expect(words('@daily')).toBe('Every day at 00:00.');
    expect(words('@HOURLY')).toBe('Every hour, on the hour.');
  });

  it('explains what cannot be read', () => {
    expect(error('')).toMatch(/Enter a cron expression/);
    expect(error('0 9 * *')).toMatch(/^4 fields; use 5/);
    expect(error('0 9 * * * * *')).toMatch(/^7 fields/);
    expect(error('61 9 * * *')).toBe('Minute 61 is out of range (0–59).');
    expect(error('0 25 * * *')).toBe('Hour 25 is out of range (0–23).');
    expect(error('0 9 * * FUNDAY')).toBe('"FUNDAY" is not a valid day of week.');
    expect(error('*/0 * * * *')).toBe('"/0" is not a valid step.');
    expect(error('@sometimes')).toMatch(/Unknown nickname/);
  });
});

describe('joinWords', () => {
  it('joins with commas and a final "and"', () => {
    expect(joinWords([])).toBe('');
    expect(joinWords(['a'])).toBe('a');
    expect(joinWords(['a', 'b'])).toBe('a and b');
    expect(joinWords(['a', 'b', 'c'])).toBe('a, b and c');
  });
});
