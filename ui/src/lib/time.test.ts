import { describe, expect, it } from 'vitest';
import { countdown, duration, refreshDelay, relative, resolveZone, searchZones, wallTime, zonedTimes } from './time';

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

describe('resolveZone', () => {
  const zones = ['UTC', 'America/New_York', 'Asia/Tokyo', 'Europe/Berlin'];
  it('takes an exact zone name as typed, whatever its case and with spaces for _', () => {
    expect(resolveZone(zones, 'Asia/Tokyo')).toBe('Asia/Tokyo');
    expect(resolveZone(zones, ' asia/tokyo ')).toBe('Asia/Tokyo');
    expect(resolveZone(zones, 'America/New York')).toBe('America/New_York');
  });
  it('keeps anything else as typed, for the server to refuse; empty text changes nothing', () => {
    expect(resolveZone(zones, 'Asia/Tokio')).toBe('Asia/Tokio');
    expect(resolveZone(zones, 'tokyo')).toBe('tokyo');
    expect(resolveZone(zones, '   ')).toBeNull();
  });
});

describe('zonedTimes', () => {
  const at = Date.parse('2026-12-08T12:30:00Z');
  it('gives the viewer’s time labelled, and the schedule’s own where it differs', () => {
    expect(zonedTimes(at, 'America/New_York', 'Europe/Berlin')).toEqual({ local: 'Tue 8 Dec, 13:30 CET', there: '07:30 in New York' });
    expect(zonedTimes(at, 'UTC', 'Europe/Berlin')).toEqual({ local: 'Tue 8 Dec, 13:30 CET', there: '12:30 UTC' });
  });
  it('says the day there when it is another day', () => {
    const late = Date.parse('2026-12-08T04:30:00Z');
    expect(zonedTimes(late, 'America/New_York', 'Europe/Berlin').there).toBe('Mon 7 Dec, 23:30 in New York');
  });
  it('says a time once when both zones agree', () => {
    expect(zonedTimes(at, 'Europe/Berlin', 'Europe/Berlin')).toEqual({ local: 'Tue 8 Dec, 13:30 CET', there: null });
    expect(zonedTimes(at, 'Europe/Paris', 'Europe/Berlin').there).toBeNull();
  });
});

describe('refreshDelay', () => {
  it('waits until a little after the time, at least a little, at most an hour', () => {
    expect(refreshDelay('2026-12-01T12:00:10Z', T)).toBe(11_500);
    expect(refreshDelay('2026-12-01T11:00:00Z', T)).toBe(1500);
    expect(refreshDelay('2026-12-03T12:00:00Z', T)).toBe(3_600_000);
    expect(refreshDelay(null, T)).toBeNull();
  });
});

describe('duration', () => {
  it('reads short and long spans', () => {
    expect(duration(30)).toBe('under 0.1 s');
    expect(duration(400)).toBe('0.4 s');
    expect(duration(3000)).toBe('3 s');
    expect(duration(12_300)).toBe('12 s');
    expect(duration(200_000)).toBe('3 min 20 s');
    expect(duration(7_500_000)).toBe('2 h 5 min');
    expect(duration(3 * 86_400_000 + 4 * 3_600_000)).toBe('3 d 4 h');
    expect(duration(-1)).toBe('—');
  });
});
