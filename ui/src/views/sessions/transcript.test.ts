import { describe, expect, it } from 'vitest';
import type { Block, Interaction, TaskState } from '../../api/types';
import { addBlock, deriveTasks, fromSnapshot, items, Ordinals, resumeAfter } from './transcript';

const at = '2026-12-01T10:00:00.000Z';
const user = (seq: number, text: string, taskId = 't1'): Block => ({ seq, at, taskId, kind: 'user_input', messageId: 'm' + seq, text });
const agent = (seq: number, text: string, append = false, taskId = 't1'): Block => ({ seq, at, taskId, kind: 'agent_text', text, append });
const state = (seq: number, s: TaskState, taskId = 't1'): Block => ({ seq, at, taskId, kind: 'state', state: s });
const interaction: Interaction = {
  interactionId: 'i1',
  taskId: 't1',
  kind: 'tool_approval',
  title: 'Run this shell command?',
  command: 'ls',
  options: [
    { id: 'accept', label: 'Yes, run it', shortcut: 'y' },
    { id: 'decline', label: 'No', shortcut: 'n' },
  ],
  reasonAllowed: true,
  scope: 'turn',
  defaultOption: 'decline',
};

describe('transcript stream', () => {
  it('resumes one seq early and drops the blocks it already holds', () => {
    // Seq 3 produced two blocks; the snapshot holds both.
    let t = fromSnapshot([user(1, 'hi'), agent(3, 'a'), { ...agent(3, 'b'), kind: 'agent_output', artifact: 'x', parts: [] } as Block]);
    expect(resumeAfter(t)).toBe('2');
    const ord = new Ordinals();
    // The server re-sends seq 3's two blocks, then a new one.
    const again = [agent(3, 'a'), agent(3, 'b'), state(4, 'TASK_STATE_COMPLETED')];
    for (const b of again) t = addBlock(t, b, ord.next(b.seq));
    expect(t.blocks.map((b) => b.seq)).toEqual([1, 3, 3, 4]);
    expect(t.maxSeq).toBe(4);
  });

  it('keeps the rest of an event whose blocks were cut off by a dropped connection', () => {
    let t = fromSnapshot([]);
    let ord = new Ordinals();
    t = addBlock(t, agent(5, 'first'), ord.next(5));
    // Connection drops before the second block of seq 5; reconnect after seq 4.
    expect(resumeAfter(t)).toBe('4');
    ord = new Ordinals();
    for (const b of [agent(5, 'first'), agent(5, 'second')]) t = addBlock(t, b, ord.next(b.seq));
    expect(t.blocks.map((b) => (b as { text: string }).text)).toEqual(['first', 'second']);
  });

  it('starts from the beginning when empty', () => {
    expect(resumeAfter(fromSnapshot([]))).toBe('0');
  });
});

describe('transcript items', () => {
  it('continues agent text marked append, per task', () => {
    const it = items([user(1, 'hello'), agent(2, 'Hel'), agent(3, 'lo', true), agent(4, ' world', true), user(5, 'again'), agent(6, 'x', true)]);
    expect(it.map((i) => [i.type, 'text' in i ? i.text : ''])).toEqual([
      ['user', 'hello'],
      ['agent', 'Hello world'],
      ['user', 'again'],
      ['agent', 'x'],
    ]);
  });

  it('continues each artifact on its own: stdout and stderr arriving interleaved', () => {
    const out = (seq: number, text: string, append: boolean): Block => ({ ...agent(seq, text, append), artifact: 'output' }) as Block;
    const err = (seq: number, text: string, append: boolean): Block => ({ ...agent(seq, text, append), artifact: 'stderr' }) as Block;
    const got = items([out(1, 'a', false), err(2, 'x', false), out(3, 'b', true), err(4, 'y', true)]);
    expect(got.map((i) => (i.type === 'agent' ? [i.artifact, i.text] : i.type))).toEqual([
      ['output', 'ab'],
      ['stderr', 'xy'],
    ]);
  });

  it('shows who answered an interaction on the interaction', () => {
    const blocks: Block[] = [
      user(1, 'ls'),
      { seq: 2, at, taskId: 't1', kind: 'interaction', interaction },
      { seq: 3, at: '2026-12-01T10:01:00.000Z', taskId: 't1', kind: 'answer', interactionId: 'i1', option: 'accept', answeredBy: 'you', expired: false },
      state(4, 'TASK_STATE_COMPLETED'),
    ];
    const it = items(blocks);
    expect(it.map((i) => i.type)).toEqual(['user', 'interaction', 'state']);
    expect(it[1]).toMatchObject({ answer: { option: 'accept', answeredBy: 'you', withdrawn: false, at: '2026-12-01T10:01:00.000Z' } });
  });

  it('marks an interaction its engine closed as withdrawn, not as answered', () => {
    const blocks: Block[] = [
      { seq: 2, at, taskId: 't1', kind: 'interaction', interaction },
      { seq: 3, at, taskId: 't1', kind: 'answer', interactionId: 'i1', option: 'decline', answeredBy: 'engine', expired: false, reason: 'Sextant restarted' },
    ];
    expect(items(blocks)[0]).toMatchObject({ answer: { withdrawn: true, reason: 'Sextant restarted' } });
  });

  it('filters to one task', () => {
    const it = items([user(1, 'a', 't1'), user(2, 'b', 't2'), agent(3, 'c', false, 't2')], 't2');
    expect(it.map((i) => i.seq)).toEqual([2, 3]);
  });
});

describe('deriveTasks', () => {
  type Task = { taskId: string; state: TaskState; stateAt: string; createdAt: string; lastSeq: number };
  const make = (taskId: string, at: string, seq: number): Task => ({ taskId, state: 'TASK_STATE_SUBMITTED', stateAt: at, createdAt: at, lastSeq: seq });
  it('moves tasks by their state blocks and adds new ones, ignoring older blocks', () => {
    const tasks: Task[] = [{ taskId: 't1', state: 'TASK_STATE_WORKING', stateAt: at, createdAt: at, lastSeq: 4 }];
    const out = deriveTasks(tasks, [state(3, 'TASK_STATE_SUBMITTED'), state(5, 'TASK_STATE_COMPLETED'), user(6, 'next', 't2'), state(7, 'TASK_STATE_WORKING', 't2')], make);
    expect(out.map((t) => [t.taskId, t.state, t.lastSeq])).toEqual([
      ['t1', 'TASK_STATE_COMPLETED', 5],
      ['t2', 'TASK_STATE_WORKING', 7],
    ]);
  });
});
