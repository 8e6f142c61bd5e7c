// The browser console's own notifications and badge, as the desktop shell has them: a web
// Notification for each new approval (opt-in: the person turns it on, the browser asks once),
// shown while the tab is in the background, and the pending count drawn on the tab's icon.

import { signal } from '@preact/signals';

const KEY = 'sextant.notifications';

export type NotifyState = 'unsupported' | 'off' | 'on' | 'denied';

function initial(): NotifyState {
  if (typeof Notification === 'undefined') return 'unsupported';
  if (Notification.permission === 'denied') return 'denied';
  return Notification.permission === 'granted' && localStorage.getItem(KEY) === 'on' ? 'on' : 'off';
}

/** Whether new approvals notify. */
export const notifications = signal<NotifyState>(initial());

/** Turns notifications on (asking the browser, once) or off. */
export async function setNotifications(on: boolean): Promise<void> {
  if (typeof Notification === 'undefined') return;
  if (!on) {
    localStorage.setItem(KEY, 'off');
    notifications.value = 'off';
    return;
  }
  const p = Notification.permission === 'default' ? await Notification.requestPermission() : Notification.permission;
  if (p === 'granted') {
    localStorage.setItem(KEY, 'on');
    notifications.value = 'on';
  } else notifications.value = p === 'denied' ? 'denied' : 'off';
}

/** A notification, when they are on and the person is not looking at this tab. */
export function webNotify(n: { title: string; body: string; onClick?: () => void }): void {
  if (notifications.value !== 'on' || typeof Notification === 'undefined') return;
  if (document.visibilityState === 'visible' && document.hasFocus()) return;
  try {
    const shown = new Notification(n.title, { body: n.body, tag: 'sextant-approval' });
    shown.onclick = () => {
      window.focus();
      n.onClick?.();
      shown.close();
    };
  } catch {
    /* some browsers allow notifications only from a service worker */
  }
}

let plainIcon: string | null = null;
let iconImage: HTMLImageElement | null = null;

/** Draws `count` on the tab's icon (the plain icon at 0). */
export function faviconBadge(count: number): void {
  const link = document.querySelector<HTMLLinkElement>('link[rel="icon"]');
  if (!link) return;
  plainIcon ??= link.href;
  if (count <= 0) {
    link.href = plainIcon;
    link.type = 'image/svg+xml';
    return;
  }
  const draw = () => {
    const c = document.createElement('canvas');
    c.width = c.height = 64;
    const g = c.getContext('2d');
    if (!g || !iconImage) return;
    g.drawImage(iconImage, 0, 0, 64, 64);
    const text = count > 99 ? '99+' : String(count);
    g.fillStyle = '#c8232b';
    g.beginPath();
    g.arc(44, 20, 20, 0, 2 * Math.PI);
    g.fill();
    g.fillStyle = '#fff';
    g.font = `bold ${text.length > 2 ? 18 : 26}px sans-serif`;
    g.textAlign = 'center';
    g.textBaseline = 'middle';
    g.fillText(text, 44, 21);
    link.type = 'image/png';
    link.href = c.toDataURL('image/png');
    link.dataset.badge = text;
  };
  if (iconImage?.complete) return draw();
  iconImage = new Image();
  iconImage.onload = draw;
  iconImage.src = plainIcon;
}
