// Calls of the push-notification API (`/api/v1/push`, the console owner's; docs/push.md). The
// shapes are generated from the Rust by ts-rs (crates/sextant-server/src/push/), never by hand.

import { api } from '../../api/client';
import type { PushConfigView } from '../../bindings/PushConfigView';
import type { PushList } from '../../bindings/PushList';

export type { DeliveryHealth } from '../../bindings/DeliveryHealth';
export type { PushConfigView } from '../../bindings/PushConfigView';
export type { PushList } from '../../bindings/PushList';

export const listWebhooks = () => api<PushList>('/api/v1/push');
/** Re-enables a webhook that stopped after failures: what it owes is sent again, in order. */
export const resumeWebhook = (taskId: string, configId: string) =>
  api<PushConfigView>(`/api/v1/push/${encodeURIComponent(taskId)}/${encodeURIComponent(configId)}/resume`, { method: 'POST', body: {} });
