import { describe, expect, it } from 'vitest';
import { countdown, relative, searchZones, wallTime } from './time';

const T = Date.parse('2026-12-01T12:00:00Z');

describe('countdown', () => {
  it('shows minutes and seconds under an hour, rounding up', () => {
    expect(countdown(T + 59 * 60_000 + 7_000, T).text).toBe('59:07');
    expect(countdown(T + 59_400, T)).toMatchObject({ text: '1:00', urgent: true, nextTickMs: 400 });
    expect(countdown(T + 61_000, T)).toMatchObject({ text: '1:01', urgent: false });
    expect(countdown(T + 1, T).text).toBe('0:01');
  });

  it('shows hours, then days', () => {
    expect(countdown(T + 3_723_000, T).text).toBe('1:02:03');
    expect(countdown(T + 47 * 3_600_000, T).text).toBe('47:00:00');
    expect(countdown(T + 2 * 86_400_000 + 3 * 3_600_000, T).text).toBe('2 d 3 h');
  });

  it('says expired at and after the expiry', () => {
    expect(countdown(T, T)).toMatchObject({ text: 'expired', expired: true });
    expect(countdown(T - 5_000, T).expired).toBe(true);
  });

  it('has nothing to count without an expiry', () => {
    expect(countdown(NaN, T)).toMatchObject({ text: '', expired: false });
  });
});

describe('relative', () => {
  it('reads past and future', () => {
    expect(relative(T - 2_000, T)).toBe('just now');
    expect(relative(T - 42_000, T)).toBe('42 s ago');
    expect(relative(T - 5 * 60_000, T)).toBe('5 min ago');
    expect(relative(T + 3 * 3_600_000, T)).toBe('in 3 h');
    expect(relative(T - 2 * 86_400_000, T)).toBe('2 d ago');
    expect(relative(NaN, T)).toBe('—');
  });
});

describe('wallTime', () => {
  it('formats in the given zone', () => {
    expect(wallTime('2026-12-07T08:00:00.000Z', 'Europe/Berlin')).toBe('Mon 7 Dec, 09:00');
    expect(wallTime('2026-12-07T08:00:00.000Z', 'America/New_York')).toBe('Mon 7 Dec, 03:00');
  });
});

describe('searchZones', () => {
  const zones = ['UTC', 'America/New_York', 'America/Los_Angeles', 'Europe/Berlin', 'Europe/Berne', 'Asia/Kolkata'];
  it('matches every word, with underscores as spaces, best first', () => {
    expect(searchZones(zones, 'new york')).toEqual(['America/New_York']);
    expect(searchZones(zones, 'ber')).toEqual(['Europe/Berlin', 'Europe/Berne']);
    expect(searchZones(zones, 'berlin')).toEqual(['Europe/Berlin']);
    expect(searchZones(zones, 'europe')).toEqual(['Europe/Berlin', 'Europe/Berne']);
    expect(searchZones(zones, '')).toEqual(zones);
    expect(searchZones(zones, 'xyz')).toEqual([]);
  });
});
