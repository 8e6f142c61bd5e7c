// Small shared pieces: badges, the loading / empty / error states every view uses, a ticking
// clock, relative times, toasts, and a modal dialog on the native <dialog> element.

import { signal } from '@preact/signals';
import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import { runStatus, taskStatus, type Tone } from '../lib/format';
import { clockTime, relative, wallTime, zoneAbbrev, zonedTimes } from '../lib/time';

/** Now, ticking once a second for every view that reads it. */
export const now = signal(Date.now());
setInterval(() => {
  now.value = Date.now();
}, 1000);

export function Badge(props: { tone: Tone; children: ComponentChildren; title?: string }) {
  return (
    <span class={`badge badge-${props.tone}`} title={props.title}>
      {props.children}
    </span>
  );
}

/** A task's state, or how it ended when its outcome is given (Declined, Canceled, …). */
export function StateBadge(props: { state: string; outcome?: string | null }) {
  const s = taskStatus(props.state, props.outcome);
  return (
    <Badge tone={s.tone} title={props.outcome ? `${props.state} (${props.outcome})` : props.state}>
      <span class="dot" aria-hidden="true" />
      {s.label}
    </Badge>
  );
}

export function RunBadge(props: { status: string; title?: string }) {
  const s = runStatus(props.status);
  return (
    <Badge tone={s.tone} title={props.title ?? props.status}>
      <span class="dot" aria-hidden="true" />
      {s.label}
    </Badge>
  );
}

/** "5 min ago", with the exact time on hover; re-renders as time passes. */
export function Ago(props: { at: string | null | undefined }) {
  if (!props.at) return <span class="muted">—</span>;
  const t = Date.parse(props.at);
  return (
    <time dateTime={props.at} title={`${wallTime(t, undefined, true)} · ${clockTime(t)} ${zoneAbbrev(t)}`}>
      {relative(t, now.value)}
    </time>
  );
}

/**
 * A schedule's fire time: the person's local time with its zone, and the schedule's own time,
 * labelled, where its zone differs (`data-next-fire` holds the instant).
 */
export function FireTime(props: { utc: string; zone: string; withYear?: boolean; stacked?: boolean }) {
  const z = zonedTimes(props.utc, props.zone, undefined, props.withYear);
  return (
    <span class={`fire-time${props.stacked ? ' stacked' : ''}`} data-next-fire={props.utc}>
      <span class="fire-local">{z.local}</span>
      {z.there && <span class="fire-there muted small">{z.there}</span>}
    </span>
  );
}

export function Loading(props: { label?: string }) {
  return (
    <div class="state state-loading" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" />
      {props.label ?? 'Loading…'}
    </div>
  );
}

export function Empty(props: { title: string; children?: ComponentChildren; icon?: string }) {
  return (
    <div class="state state-empty">
      <div class="state-icon" aria-hidden="true">
        {props.icon ?? '○'}
      </div>
      <div class="state-title">{props.title}</div>
      {props.children && <div class="state-hint">{props.children}</div>}
    </div>
  );
}

export function ErrorState(props: { error: string; retry?: () => void; title?: string }) {
  return (
    <div class="state state-error" role="alert">
      <div class="state-title">{props.title ?? 'Could not load this'}</div>
      <div class="state-hint">{props.error}</div>
      {props.retry && (
        <button class="btn" onClick={props.retry}>
          Try again
        </button>
      )}
    </div>
  );
}

/** A page heading with optional actions on the right. */
export function PageHeader(props: { title: ComponentChildren; subtitle?: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <header class="page-header">
      <div>
        <h1>{props.title}</h1>
        {props.subtitle && <p class="subtitle">{props.subtitle}</p>}
      </div>
      {props.actions && <div class="page-actions">{props.actions}</div>}
    </header>
  );
}

export interface Toast {
  id: number;
  text: string;
  tone: 'ok' | 'bad' | 'info';
}

export const toasts = signal<Toast[]>([]);
let toastId = 0;

/** Shows a short message at the bottom of the page. */
export function toast(text: string, tone: Toast['tone'] = 'info'): void {
  const id = ++toastId;
  toasts.value = [...toasts.value, { id, text, tone }];
  setTimeout(() => {
    toasts.value = toasts.value.filter((t) => t.id !== id);
  }, 5000);
}

export function Toasts() {
  return (
    <div class="toasts" role="status" aria-live="polite">
      {toasts.value.map((t) => (
        <div key={t.id} class={`toast toast-${t.tone}`}>
          {t.text}
        </div>
      ))}
    </div>
  );
}

/** A modal dialog (native <dialog>: focus stays inside, Escape closes). */
export function Dialog(props: {
  open: boolean;
  title: string;
  onClose(): void;
  children: ComponentChildren;
  footer?: ComponentChildren;
  wide?: boolean;
  labelledBy?: string;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) {
      d.showModal();
      // The dialog's first field, not its × (the browser focuses the first focusable element);
      // a dialog without fields (a confirmation) focuses its first button, Cancel.
      const first = d.querySelector<HTMLElement>(
        '.dialog-body input:not([type=hidden]):not([disabled]), .dialog-body select, .dialog-body textarea, .dialog-footer button',
      );
      first?.focus();
    }
    if (!props.open && d.open) d.close();
  }, [props.open]);
  return (
    <dialog
      ref={ref}
      class={`dialog${props.wide ? ' dialog-wide' : ''}`}
      aria-labelledby="dialog-title"
      onCancel={(e) => {
        e.preventDefault();
        props.onClose();
      }}
    >
      {props.open && (
        <>
          <header class="dialog-header">
            <h2 id="dialog-title">{props.title}</h2>
            <button class="icon-btn" aria-label="Close" onClick={props.onClose}>
              ×
            </button>
          </header>
          <div class="dialog-body">{props.children}</div>
          {props.footer && <footer class="dialog-footer">{props.footer}</footer>}
        </>
      )}
    </dialog>
  );
}

/** Asks before doing something that cannot be undone. */
export function Confirm(props: {
  open: boolean;
  title: string;
  children: ComponentChildren;
  confirm: string;
  busy?: boolean;
  onConfirm(): void;
  onClose(): void;
}) {
  return (
    <Dialog
      open={props.open}
      title={props.title}
      onClose={props.onClose}
      footer={
        <>
          <button class="btn" onClick={props.onClose}>
            Cancel
          </button>
          <button class="btn btn-danger" disabled={props.busy} onClick={props.onConfirm}>
            {props.confirm}
          </button>
        </>
      }
    >
      {props.children}
    </Dialog>
  );
}

/** An on/off switch. */
export function Switch(props: { checked: boolean; label: string; disabled?: boolean; onChange(v: boolean): void }) {
  return (
    <button
      type="button"
      role="switch"
      aria-checked={props.checked}
      aria-label={props.label}
      title={props.label}
      class={`switch${props.checked ? ' on' : ''}`}
      disabled={props.disabled}
      onClick={() => props.onChange(!props.checked)}
    >
      <span class="switch-knob" />
    </button>
  );
}

/** A form field's error, under the field (`id` for the field's `aria-describedby`). */
export function FieldError(props: { field: string; error?: string }) {
  if (!props.error) return null;
  return (
    <div class="field-error" role="alert" data-field-error={props.field} id={`err-${props.field}`}>
      {props.error}
    </div>
  );
}
