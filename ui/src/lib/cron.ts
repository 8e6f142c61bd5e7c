// A cron expression in plain words, while the person types it in the schedule dialog. The
// syntax is the server's (croner, POSIX/Vixie): 5 fields `minute hour day-of-month month
// day-of-week`, or 6 with seconds first; @nicknames; names (MON, JAN); L, W and #; day-of-week
// 0 and 7 are Sunday; when both day fields are restricted either may match.
//
// This is only the words. Whether the expression is valid, and when it fires, is the
// server's answer (`POST /api/v1/me/schedules/preview`): it knows the time zone rules.

export type CronWords = { ok: true; text: string } | { ok: false; error: string };

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = [
  'January', 'February', 'March', 'April', 'May', 'June',
  'July', 'August', 'September', 'October', 'November', 'December',
];
const DAY_NAMES: Record<string, number> = { SUN: 0, MON: 1, TUE: 2, WED: 3, THU: 4, FRI: 5, SAT: 6 };
const MONTH_NAMES: Record<string, number> = {
  JAN: 1, FEB: 2, MAR: 3, APR: 4, MAY: 5, JUN: 6, JUL: 7, AUG: 8, SEP: 9, OCT: 10, NOV: 11, DEC: 12,
};
const ORDINAL = ['', 'first', 'second', 'third', 'fourth', 'fifth'];

const NICKNAMES: Record<string, string> = {
  '@yearly': 'At 00:00 on 1 January',
  '@annually': 'At 00:00 on 1 January',
  '@monthly': 'At 00:00 on day 1 of every month',
  '@weekly': 'At 00:00 every Sunday',
  '@daily': 'Every day at 00:00',
  '@midnight': 'Every day at 00:00',
  '@hourly': 'Every hour, on the hour',
};

class CronError extends Error {}

interface Spec {
  min: number;
  max: number;
  names?: Record<string, number>;
  label: string;
}

const SPECS = {
  second: { min: 0, max: 59, label: 'second' },
  minute: { min: 0, max: 59, label: 'minute' },
  hour: { min: 0, max: 23, label: 'hour' },
  dom: { min: 1, max: 31, label: 'day of month' },
  month: { min: 1, max: 12, names: MONTH_NAMES, label: 'month' },
  dow: { min: 0, max: 7, names: DAY_NAMES, label: 'day of week' },
} satisfies Record<string, Spec>;

/** One item of a field's comma list. */
type Item =
  | { kind: 'any' }
  | { kind: 'value'; v: number }
  | { kind: 'range'; from: number; to: number; step: number }
  | { kind: 'step'; from: number; step: number } // */n or a/n
  | { kind: 'last' } // L (day of month)
  | { kind: 'lastWeekday' } // LW
  | { kind: 'nearestWeekday'; v: number } // 15W
  | { kind: 'nth'; day: number; n: number } // MON#2
  | { kind: 'lastDow'; day: number }; // 5L

function num(s: string, spec: Spec): number {
  const up = s.toUpperCase();
  const named = spec.names?.[up];
  if (named !== undefined) return named;
  if (!/^\d+$/.test(s)) throw new CronError(`"${s}" is not a valid ${spec.label}`);
  const v = Number(s);
  if (v < spec.min || v > spec.max) throw new CronError(`${spec.label} ${v} is out of range (${spec.min}–${spec.max})`);
  return v;
}

function parseField(field: string, spec: Spec, which: keyof typeof SPECS): Item[] {
  return field.split(',').map((raw): Item => {
    const s = raw.trim();
    if (s === '') throw new CronError(`empty item in the ${spec.label} field`);
    if (s === '*' || s === '?') return { kind: 'any' };
    if (which === 'dom') {
      if (s.toUpperCase() === 'L') return { kind: 'last' };
      if (s.toUpperCase() === 'LW') return { kind: 'lastWeekday' };
      const w = /^(\d+)W$/i.exec(s);
      if (w) return { kind: 'nearestWeekday', v: num(w[1], spec) };
    }
    if (which === 'dow') {
      const nth = /^(\w+)#(\d)$/.exec(s);
      if (nth) {
        const n = Number(nth[2]);
        if (n < 1 || n > 5) throw new CronError(`#${n}: a weekday occurs at most 5 times a month`);
        return { kind: 'nth', day: num(nth[1], spec) % 7, n };
      }
      const last = /^(\w+)L$/i.exec(s);
      if (last) return { kind: 'lastDow', day: num(last[1], spec) % 7 };
    }
    const [base, stepStr] = s.split('/');
    let step = 1;
    if (stepStr !== undefined) {
      if (!/^\d+$/.test(stepStr) || Number(stepStr) === 0) throw new CronError(`"/${stepStr}" is not a valid step`);
      step = Number(stepStr);
    }
    if (base === '*') return stepStr === undefined ? { kind: 'any' } : { kind: 'step', from: spec.min, step };
    const dash = base.indexOf('-');
    if (dash > 0) {
      const from = num(base.slice(0, dash), spec);
      const to = num(base.slice(dash + 1), spec);
      return { kind: 'range', from, to, step };
    }
    const v = num(base, spec);
    return stepStr === undefined ? { kind: 'value', v } : { kind: 'step', from: v, step };
  });
}

const isAny = (items: Item[]) => items.length === 1 && items[0].kind === 'any';
const single = (items: Item[]): number | null =>
  items.length === 1 && items[0].kind === 'value' ? items[0].v : null;
const values = (items: Item[]): number[] | null =>
  items.every((i) => i.kind === 'value') ? items.map((i) => (i as { v: number }).v) : null;

/** "a", "a and b", "a, b and c". */
export function joinWords(words: string[]): string {
  if (words.length <= 1) return words.join('');
  return `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`;
}

const hhmm = (h: number, m: number, s = 0) => `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}${s ? ':' + String(s).padStart(2, '0') : ''}`;

const SPEC_MIN: Record<string, number> = { second: 0, minute: 0, hour: 0, day: 1, month: 1 };

function describeList(items: Item[], unit: string, name: (v: number) => string): string {
  const parts = items.map((i) => {
    switch (i.kind) {
      case 'value':
        return name(i.v);
      case 'range':
        return i.step > 1
          ? `every ${i.step} ${unit}s from ${name(i.from)} through ${name(i.to)}`
          : `${name(i.from)} through ${name(i.to)}`;
      case 'step':
        return `every ${i.step} ${unit}s` + (i.from > SPEC_MIN[unit] ? ` starting at ${name(i.from)}` : '');
      default:
        return '';
    }
  });
  return joinWords(parts.filter(Boolean));
}

function timeWords(sec: Item[], min: Item[], hour: Item[]): string {
  const s = single(sec);
  const m = single(min);
  const hs = values(hour);
  // Fixed times: "At 07:30", "At 09:00 and 17:00".
  if (s !== null && m !== null && hs && hs.length <= 6) return `At ${joinWords(hs.map((h) => hhmm(h, m, s)))}`;
  let secPart = '';
  if (isAny(sec)) secPart = 'every second';
  else if (s !== 0) secPart = `at second ${describeList(sec, 'second', String)}`;
  const minStep = min.length === 1 && min[0].kind === 'step' && min[0].from === 0 ? min[0].step : null;
  let minPart: string;
  if (isAny(min)) minPart = secPart ? '' : 'every minute';
  else if (minStep !== null) minPart = `every ${minStep} minutes`;
  else if (m === 0 && isAny(hour)) minPart = 'every hour, on the hour';
  else if (m === 0) minPart = 'on the hour';
  else minPart = `at minute ${describeList(min, 'minute', String)}`;
  let hourPart = '';
  if (isAny(hour)) {
    if (m !== null && m !== 0) hourPart = 'of every hour';
  } else {
    const h0 = hour[0];
    if (hour.length === 1 && h0.kind === 'range' && h0.step === 1) hourPart = `from ${hhmm(h0.from, 0)} through ${hhmm(h0.to, 59)}`;
    else if (hour.length === 1 && h0.kind === 'step' && h0.from === 0) hourPart = `every ${h0.step} hours`;
    else hourPart = `during hour ${describeList(hour, 'hour', (v) => hhmm(v, 0))}`;
  }
  const text = [secPart, minPart].filter(Boolean).join(', ') + (hourPart ? (hourPart.startsWith('of') ? ' ' : ', ') + hourPart : '');
  return text[0].toUpperCase() + text.slice(1);
}

function dowName(v: number): string {
  return DAYS[v % 7];
}

function dowWords(items: Item[]): string {
  const vs = values(items);
  if (vs) {
    const set = [...new Set(vs.map((v) => v % 7))].sort();
    if (set.join() === '0,6') return 'on Saturday and Sunday';
  }
  if (items.length === 1 && items[0].kind === 'range' && items[0].step === 1 && items[0].from === 1 && items[0].to === 5) {
    return 'on weekdays (Monday through Friday)';
  }
  const parts = items.map((i) => {
    switch (i.kind) {
      case 'nth':
        return `the ${ORDINAL[i.n]} ${dowName(i.day)} of the month`;
      case 'lastDow':
        return `the last ${dowName(i.day)} of the month`;
      default:
        return describeList([i], 'day', dowName);
    }
  });
  return `on ${joinWords(parts)}`;
}

function domWords(items: Item[]): string {
  const vs = values(items);
  if (vs && vs.length > 1) return `on days ${joinWords(vs.map(String))} of the month`;
  const parts = items.map((i) => {
    switch (i.kind) {
      case 'last':
        return 'the last day of the month';
      case 'lastWeekday':
        return 'the last weekday of the month';
      case 'nearestWeekday':
        return `the weekday nearest day ${i.v} of the month`;
      case 'value':
        return `day ${i.v} of the month`;
      default:
        return describeList([i], 'day', (v) => `day ${v}`) + ' of the month';
    }
  });
  return `on ${joinWords(parts)}`;
}

function monthWords(items: Item[]): string {
  return `in ${describeList(items, 'month', (v) => MONTHS[v - 1])}`;
}

/** The plain-words meaning of `expr`, or why it cannot be read. */
export function describeCron(expr: string): CronWords {
  const e = expr.trim();
  if (e === '') return { ok: false, error: 'Enter a cron expression, e.g. "0 9 * * 1-5".' };
  if (e.startsWith('@')) {
    const text = NICKNAMES[e.toLowerCase()];
    return text ? { ok: true, text: text + '.' } : { ok: false, error: `Unknown nickname ${e}; use @hourly, @daily, @weekly, @monthly or @yearly.` };
  }
  const fields = e.split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) {
    return {
      ok: false,
      error: `${fields.length} field${fields.length === 1 ? '' : 's'}; use 5 (minute hour day-of-month month day-of-week), or 6 with seconds first.`,
    };
  }
  const [secF, minF, hourF, domF, monF, dowF] = fields.length === 6 ? fields : ['0', ...fields];
  try {
    const sec = parseField(secF, SPECS.second, 'second');
    const min = parseField(minF, SPECS.minute, 'minute');
    const hour = parseField(hourF, SPECS.hour, 'hour');
    const dom = parseField(domF, SPECS.dom, 'dom');
    const month = parseField(monF, SPECS.month, 'month');
    const dow = parseField(dowF, SPECS.dow, 'dow');

    const parts = [timeWords(sec, min, hour)];
    const domAny = isAny(dom);
    const dowAny = isAny(dow);
    if (!domAny && !dowAny) parts.push(`${domWords(dom)} or ${dowWords(dow)}`);
    else if (!domAny) parts.push(domWords(dom));
    else if (!dowAny) parts.push(dowWords(dow));
    else if (isAny(month)) {
      // Every day: say so only after a fixed time ("At 09:00, every day").
      if (/^At \d/.test(parts[0])) parts.push('every day');
    }
    if (!isAny(month)) parts.push(monthWords(month));
    return { ok: true, text: parts.join(', ') + '.' };
  } catch (err) {
    if (err instanceof CronError) return { ok: false, error: err.message[0].toUpperCase() + err.message.slice(1) + '.' };
    throw err;
  }
}
