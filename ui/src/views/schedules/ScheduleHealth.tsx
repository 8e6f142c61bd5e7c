// A schedule's health, in small pieces the schedule views place: why the scheduler paused it,
// its recent success/failure record as a strip, and a Run's duration and result snippet.

import type { Run, Schedule } from '../../api/types';
import type { RunHistory } from '../../bindings/RunHistory';

/** A duration for people: `850 ms`, `12 s`, `3 min 5 s`, `2 h 4 min`. */
export function duration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return s % 60 ? `${m} min ${s % 60} s` : `${m} min`;
  const h = Math.floor(m / 60);
  return m % 60 ? `${h} h ${m % 60} min` : `${h} h`;
}

/** The strip's words: "12 succeeded · 3 failed", or none yet. */
export function historyWords(h: RunHistory): string {
  const parts = [`${h.succeeded} succeeded`, `${h.failed} failed`];
  if (h.canceled) parts.push(`${h.canceled} canceled`);
  return h.succeeded + h.failed + h.canceled === 0 ? 'No Run has ended yet' : parts.join(' · ');
}

/** The card saying the scheduler paused the plan, and why. */
export function PausedNotice(props: { s: Schedule }) {
  const p = props.s.paused;
  if (!p || props.s.enabled) return null;
  return (
    <div class="notice notice-bad" role="alert" data-paused>
      <strong>Paused by Sextant.</strong> {p.reason}. Enable it again to resume; its failure count starts over.
    </div>
  );
}

/** The latest outcomes, oldest to newest, as small marks with the counts beside them. */
export function HistoryStrip(props: { history: RunHistory; consecutiveFailures?: number }) {
  const h = props.history;
  const marks = [...h.recent].reverse();
  return (
    <div class="history-strip" aria-label={`Recent Runs: ${historyWords(h)}`}>
      {marks.length > 0 && (
        <span class="history-marks" aria-hidden="true">
          {marks.map((r) => (
            <span key={r.run_id} class={`history-mark history-${r.outcome}`} title={`${r.outcome} · ${r.scheduled_for}`} />
          ))}
        </span>
      )}
      <span class="muted small">
        {historyWords(h)}
        {props.consecutiveFailures ? ` · ${props.consecutiveFailures} in a row` : ''}
      </span>
    </div>
  );
}

/** A Run's duration and the start of its result, once it has ended. */
export function RunResult(props: { run: Run }) {
  const r = props.run;
  // A Run that never started has its reason in the status column already.
  if (!r.session_id || (r.duration_ms === null && !r.result)) return <span class="muted">—</span>;
  return (
    <div class="run-result">
      {r.duration_ms !== null && <span class="muted small nowrap">{duration(r.duration_ms)}</span>}
      {r.result && (
        <div class="small clamp mono" title={r.result}>
          {r.result}
        </div>
      )}
    </div>
  );
}
