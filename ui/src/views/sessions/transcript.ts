// A Session's transcript, live: the blocks of `GET /api/v1/sessions/{id}`, then the blocks of
// its SSE stream, without gaps or duplicates; and the items a person reads, built from them.
//
// Blocks of one journal event share its seq (the SSE id). To never lose the rest of an event
// whose blocks were cut off by a dropped connection, the stream resumes from the seq *before*
// the last one seen, and each block is identified by (seq, its position among the blocks of
// that seq): the ones already held are dropped.

import type { Block, Interaction, TaskState } from '../../api/types';

export interface Transcript {
  blocks: Block[];
  /** Blocks held per seq. */
  counts: Map<number, number>;
  /** The highest seq held (0 when empty). */
  maxSeq: number;
}

export const emptyTranscript: Transcript = { blocks: [], counts: new Map(), maxSeq: 0 };

/** The transcript of a snapshot (whole journal events only). */
export function fromSnapshot(blocks: Block[]): Transcript {
  const counts = new Map<number, number>();
  let maxSeq = 0;
  for (const b of blocks) {
    counts.set(b.seq, (counts.get(b.seq) ?? 0) + 1);
    maxSeq = Math.max(maxSeq, b.seq);
  }
  return { blocks: [...blocks], counts, maxSeq };
}

/** Where to (re)start the stream: after the seq before the last one held. */
export function resumeAfter(t: Transcript): string {
  return String(Math.max(0, t.maxSeq - 1));
}

/**
 * Adds a streamed block, `ordinal` being its position among the blocks of its seq on the
 * current connection. Returns the same transcript when the block is already held.
 */
export function addBlock(t: Transcript, b: Block, ordinal: number): Transcript {
  const held = t.counts.get(b.seq) ?? 0;
  if (ordinal < held) return t;
  const counts = new Map(t.counts).set(b.seq, held + 1);
  return { blocks: [...t.blocks, b], counts, maxSeq: Math.max(t.maxSeq, b.seq) };
}

/** Numbers the blocks of one connection by their position within their seq. */
export class Ordinals {
  private seq = -1;
  private n = 0;
  next(seq: number): number {
    if (seq !== this.seq) {
      this.seq = seq;
      this.n = 0;
    } else {
      this.n++;
    }
    return this.n;
  }
}

/**
 * Who an interaction closed by its engine is recorded as answered by (`WITHDRAWN_BY` in
 * crates/sextant-runtime/src/engine/mod.rs): Codex resolved the request itself, its turn ended,
 * or Sextant restarted while it waited. Nobody chose the option recorded then.
 */
export const WITHDRAWN_BY = 'engine';

/** What the transcript shows, one item per thing a person reads. */
export type Item =
  | { type: 'user'; key: string; seq: number; at: string; taskId?: string; text: string }
  | { type: 'agent'; key: string; seq: number; at: string; taskId?: string; text: string; artifact?: string }
  | { type: 'output'; key: string; seq: number; at: string; taskId?: string; artifact: string; parts: unknown[] }
  | { type: 'state'; key: string; seq: number; at: string; taskId?: string; state: TaskState; text?: string }
  | {
      type: 'interaction';
      key: string;
      seq: number;
      at: string;
      taskId?: string;
      interaction: Interaction;
      answer?: { option: string; answeredBy: string; expired: boolean; withdrawn: boolean; reason?: string; at: string };
    };

/**
 * The items of `blocks`, optionally of one task only: agent text with `append` continues the
 * previous text of its task's same artifact (a command's stdout and stderr arrive interleaved,
 * each its own artifact); an answer is shown on the interaction it answers.
 */
export function items(blocks: Block[], taskId?: string): Item[] {
  const out: Item[] = [];
  // The open text item of each (task, artifact).
  const lastText = new Map<string, number>();
  const endTexts = (task: string) => {
    for (const k of [...lastText.keys()]) if (k.startsWith(`${task}\u0000`)) lastText.delete(k);
  };
  const asked = new Map<string, number>();
  blocks.forEach((b, i) => {
    if (taskId && b.taskId !== taskId) return;
    const key = `${b.seq}:${i}`;
    const base = { key, seq: b.seq, at: b.at, taskId: b.taskId };
    const task = b.taskId ?? '';
    switch (b.kind) {
      case 'user_input':
        out.push({ ...base, type: 'user', text: b.text });
        endTexts(task);
        break;
      case 'agent_text': {
        const textKey = `${task}\u0000${b.artifact ?? ''}`;
        const prev = lastText.get(textKey);
        if (b.append && prev !== undefined) {
          const p = out[prev] as Extract<Item, { type: 'agent' }>;
          out[prev] = { ...p, text: p.text + b.text };
        } else {
          lastText.set(textKey, out.length);
          out.push({ ...base, type: 'agent', text: b.text, artifact: b.artifact });
        }
        break;
      }
      case 'agent_output':
        out.push({ ...base, type: 'output', artifact: b.artifact, parts: b.parts });
        break;
      case 'state':
        out.push({ ...base, type: 'state', state: b.state, text: b.text });
        break;
      case 'interaction':
        asked.set(b.interaction.interactionId, out.length);
        out.push({ ...base, type: 'interaction', interaction: b.interaction });
        endTexts(task);
        break;
      case 'answer': {
        const at = asked.get(b.interactionId);
        const answer = {
          option: b.option,
          answeredBy: b.answeredBy,
          expired: b.expired,
          withdrawn: b.answeredBy === WITHDRAWN_BY,
          reason: b.reason,
          at: b.at,
        };
        if (at !== undefined) {
          out[at] = { ...(out[at] as Extract<Item, { type: 'interaction' }>), answer };
        }
        break;
      }
    }
  });
  return out;
}

/** The label of an option id in an interaction (its declared words), or the id. */
export function optionLabel(i: Interaction, option: string): string {
  return i.options.find((o) => o.id === option)?.label ?? option;
}

/** A Session's tasks as of its transcript: a state block moves its task; a new task appears. */
export function deriveTasks<T extends { taskId: string; state: TaskState; stateAt: string; lastSeq: number; createdAt: string }>(
  tasks: T[],
  blocks: Block[],
  make: (taskId: string, at: string, seq: number) => T,
): T[] {
  const byId = new Map(tasks.map((t) => [t.taskId, t]));
  const order = tasks.map((t) => t.taskId);
  for (const b of blocks) {
    if (!b.taskId) continue;
    let t = byId.get(b.taskId);
    if (!t) {
      t = make(b.taskId, b.at, b.seq);
      byId.set(b.taskId, t);
      order.push(b.taskId);
    }
    if (b.kind === 'state' && b.seq >= t.lastSeq) {
      byId.set(b.taskId, { ...t, state: b.state, stateAt: b.at, lastSeq: b.seq });
    }
  }
  return order.map((id) => byId.get(id)!);
}
