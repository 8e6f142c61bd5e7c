// Times for people: relative ("3 min ago", "in 2 h"), countdowns to an expiry, and wall-clock
// times in a given IANA zone. Pure functions of (time, now): the views tick `now`.

const SEC = 1000;
const MIN = 60 * SEC;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

/** Parses an RFC 3339 string to epoch ms, or NaN. */
export function parseTime(s: string | null | undefined): number {
  if (!s) return NaN;
  return Date.parse(s);
}

/** "just now", "42 s ago", "5 min ago", "3 h ago", "2 d ago"; future times: "in 5 min". */
export function relative(t: number, now: number): string {
  if (!Number.isFinite(t)) return '—';
  const d = t - now;
  const a = Math.abs(d);
  let text: string;
  if (a < 5 * SEC) return 'just now';
  if (a < MIN) text = `${Math.floor(a / SEC)} s`;
  else if (a < HOUR) text = `${Math.floor(a / MIN)} min`;
  else if (a < DAY) text = `${Math.floor(a / HOUR)} h`;
  else text = `${Math.floor(a / DAY)} d`;
  return d < 0 ? `${text} ago` : `in ${text}`;
}

/** A countdown until an expiry. */
export interface Countdown {
  /** "59:07", "1:02:03", "2 d 3 h"; "expired" at or after the expiry. */
  text: string;
  expired: boolean;
  /** Under a minute left: the view shows it as urgent. */
  urgent: boolean;
  /** Milliseconds until the next change of `text` (for the ticker). */
  nextTickMs: number;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** The countdown to `expiresAt` (epoch ms) at `now`. */
export function countdown(expiresAt: number, now: number): Countdown {
  if (!Number.isFinite(expiresAt)) return { text: '', expired: false, urgent: false, nextTickMs: 60 * SEC };
  const left = expiresAt - now;
  if (left <= 0) return { text: 'expired', expired: true, urgent: true, nextTickMs: 60 * SEC };
  // Round up: with 59.4 s left the person still has "0:60" → show 1:00 until it drops.
  const secs = Math.ceil(left / SEC);
  const nextTickMs = left - (secs - 1) * SEC || SEC;
  let text: string;
  if (secs >= 2 * 86400) {
    const d = Math.floor(secs / 86400);
    text = `${d} d ${Math.floor((secs % 86400) / 3600)} h`;
  } else if (secs >= 3600) {
    text = `${Math.floor(secs / 3600)}:${pad(Math.floor((secs % 3600) / 60))}:${pad(secs % 60)}`;
  } else {
    text = `${Math.floor(secs / 60)}:${pad(secs % 60)}`;
  }
  return { text, expired: false, urgent: secs <= 60, nextTickMs };
}

/** "Mon 7 Dec, 09:00" in `timeZone` (defaults to the viewer's zone). */
export function wallTime(t: number | string, timeZone?: string, withYear = false): string {
  const ms = typeof t === 'string' ? parseTime(t) : t;
  if (!Number.isFinite(ms)) return '—';
  try {
    return new Intl.DateTimeFormat('en-GB', {
      weekday: 'short',
      day: 'numeric',
      month: 'short',
      year: withYear ? 'numeric' : undefined,
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
      timeZone,
    }).format(ms);
  } catch {
    return new Date(ms).toISOString();
  }
}

/** The short name of `timeZone` at `ms` in the console's words (`CET`, `GMT-5`, `UTC`). */
export function zoneAbbrev(ms: number, timeZone?: string): string {
  try {
    const parts = new Intl.DateTimeFormat('en-GB', { timeZone, timeZoneName: 'short' }).formatToParts(ms);
    return parts.find((p) => p.type === 'timeZoneName')?.value ?? '';
  } catch {
    return '';
  }
}

/** A zone as a label: its city (`New York`), or `UTC`. */
export function zoneLabel(zone: string): string {
  if (zone === 'UTC' || zone === 'Etc/UTC') return 'UTC';
  return (zone.split('/').pop() ?? zone).replace(/_/g, ' ');
}

/**
 * A schedule's time for the person: in their own zone, labelled (`Tue 8 Dec, 13:30 CET`), and,
 * when the schedule's zone is another, the time there, labelled too (`07:30 in New York`; with
 * the day when it differs: `Mon 7 Dec, 23:30 in New York`). Never a time without its zone.
 */
export function zonedTimes(t: number | string, scheduleZone: string, viewerZone = localZone(), withYear = false): { local: string; there: string | null } {
  const ms = typeof t === 'string' ? parseTime(t) : t;
  if (!Number.isFinite(ms)) return { local: '—', there: null };
  const local = `${wallTime(ms, viewerZone, withYear)} ${zoneAbbrev(ms, viewerZone)}`.trim();
  let sameOffset = scheduleZone === viewerZone;
  try {
    sameOffset ||= wallTime(ms, scheduleZone, true) === wallTime(ms, viewerZone, true) && zoneAbbrev(ms, scheduleZone) === zoneAbbrev(ms, viewerZone);
  } catch {
    sameOffset = false;
  }
  if (sameOffset) return { local, there: null };
  const day = (z: string) => new Intl.DateTimeFormat('en-GB', { timeZone: z, year: 'numeric', month: 'numeric', day: 'numeric' }).format(ms);
  let there: string;
  try {
    const time = new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZone: scheduleZone }).format(ms);
    const label = zoneLabel(scheduleZone);
    const when = day(scheduleZone) === day(viewerZone) ? time : wallTime(ms, scheduleZone);
    there = label === 'UTC' ? `${when} UTC` : `${when} in ${label}`;
  } catch {
    return { local, there: null };
  }
  return { local, there };
}

/** "14:03:27" in the viewer's zone. */
export function clockTime(t: number | string): string {
  const ms = typeof t === 'string' ? parseTime(t) : t;
  if (!Number.isFinite(ms)) return '—';
  return new Intl.DateTimeFormat('en-GB', { hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' }).format(ms);
}

/** The viewer's IANA zone. */
export function localZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

/** Every IANA zone the browser knows, with UTC first. */
export function allZones(): string[] {
  let zones: string[] = [];
  try {
    zones = (Intl as unknown as { supportedValuesOf(k: string): string[] }).supportedValuesOf('timeZone');
  } catch {
    zones = [];
  }
  const set = new Set(zones);
  set.delete('UTC');
  return ['UTC', ...[...set].sort()];
}

/**
 * The zone a person typed into the zone field without picking from the list: the exact zone
 * name, whatever its case and with spaces for `_` (`asia/tokyo`, `America/New York`), becomes
 * that zone; anything else is kept as typed, for the server to refuse on the field (never
 * silently replaced by the previous zone). Empty text changes nothing (`null`).
 */
export function resolveZone(zones: string[], typed: string): string | null {
  const t = typed.trim();
  if (!t) return null;
  const key = (z: string) => z.toLowerCase().replace(/ /g, '_');
  return zones.find((z) => key(z) === key(t)) ?? t;
}

/**
 * Zones matching a search: every word of the query must appear in the zone name (with `_` as
 * a space), case-insensitive; names starting with the query come first.
 */
export function searchZones(zones: string[], query: string, limit = 50): string[] {
  const q = query.trim().toLowerCase().replace(/_/g, ' ');
  if (!q) return zones.slice(0, limit);
  const words = q.split(/[\s/]+/).filter(Boolean);
  const scored: { z: string; score: number }[] = [];
  for (const z of zones) {
    const name = z.toLowerCase().replace(/_/g, ' ');
    if (!words.every((w) => name.includes(w))) continue;
    const city = name.split('/').pop() ?? name;
    const score = name === q || city === q ? 0 : name.startsWith(q) || city.startsWith(q) ? 1 : 2;
    scored.push({ z, score });
  }
  scored.sort((a, b) => a.score - b.score || a.z.localeCompare(b.z));
  return scored.slice(0, limit).map((s) => s.z);
}

/**
 * How long to wait before re-reading what changes at `at` (a schedule's next fire): a little
 * after it, so the server has fired and moved on; at most an hour, then look again (timers
 * cannot wait longer than ~24 days, and a laptop's sleep stretches them). `null`: nothing due.
 */
export function refreshDelay(at: string | null | undefined, now: number, afterMs = 1500): number | null {
  const t = parseTime(at);
  if (!Number.isFinite(t)) return null;
  return Math.min(Math.max(t - now + afterMs, afterMs), HOUR);
}

/** A duration for people: "0.4 s", "12 s", "3 min 20 s", "2 h 5 min", "3 d 4 h". */
export function duration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '—';
  if (ms < 100) return 'under 0.1 s';
  if (ms < 10 * SEC) return `${(ms / SEC).toFixed(1).replace(/\.0$/, '')} s`;
  const s = Math.round(ms / SEC);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ''}`;
  if (s < 86400) return `${Math.floor(s / 3600)} h${Math.floor((s % 3600) / 60) ? ` ${Math.floor((s % 3600) / 60)} min` : ''}`;
  return `${Math.floor(s / 86400)} d${Math.floor((s % 86400) / 3600) ? ` ${Math.floor((s % 86400) / 3600)} h` : ''}`;
}
