// Sending a message to an Agent from the console, as the person: A2A SendMessage on the
// Agent's own endpoint (the console's cookie or token makes the caller the owner), answered as
// soon as the input is journalled; the task then runs and its page follows it live.

import { newMessageId } from '../../api/client';
import { agentRpc } from './api';

export interface Sent {
  /** The new (or continued) task, when the Agent answered with one. */
  taskId: string | null;
  contextId: string | null;
  /** A direct answer (an Agent that replies with a message instead of a task). */
  reply: string | null;
}

/** Sends `text` to `agentId`, in `contextId`'s conversation when given (a reply). */
export async function sendMessage(agentId: string, text: string, contextId?: string): Promise<Sent> {
  const message: Record<string, unknown> = {
    messageId: newMessageId('console'),
    role: 'ROLE_USER',
    parts: [{ text }],
  };
  if (contextId) message.contextId = contextId;
  const r = await agentRpc(agentId, {
    jsonrpc: '2.0',
    id: newMessageId('rpc'),
    method: 'SendMessage',
    params: { message, configuration: { returnImmediately: true } },
  });
  if (r.error) throw new Error(r.error.message);
  const task = r.result?.task;
  if (task) return { taskId: task.id, contextId: task.contextId, reply: null };
  const m = r.result?.message;
  const reply = (m?.parts ?? []).map((p) => p.text ?? '').join('');
  return { taskId: null, contextId: m?.contextId ?? null, reply };
}
