import { describe, expect, it } from 'vitest';
import type { PendingInteraction } from '../../api/types';
import { actionKind, shownAction } from './action';

const card = (more: Partial<PendingInteraction>): PendingInteraction => ({
  interactionId: 'i1',
  taskId: 't1',
  raisedAt: '2026-12-01T10:00:00.000Z',
  kind: 'tool_approval',
  title: 'Run a program?',
  options: [{ id: 'accept', label: 'Yes' }],
  reasonAllowed: true,
  scope: 'turn',
  defaultOption: 'accept',
  agentId: 'tool',
  agentName: 'Tool',
  caller: 'person:sextant:owner',
  callerKind: 'person',
  origin: 'a2a',
  scheduleId: null,
  scheduleName: null,
  firstMessage: null,
  contextId: 'c',
  sessionId: 's1',
  sessionUrl: 'http://x/sessions/s',
  taskState: 'TASK_STATE_AUTH_REQUIRED',
  answerUrl: 'http://x/answer',
  ...more,
});

const action = (exact: Record<string, unknown>, shown: string) => ({ exact, digest: 'sha256:ab', shown, flags: [] });

describe('shownAction', () => {
  it('shows an argv or patch action although there is no command', () => {
    const argv = card({ action: action({ kind: 'exec', argv: ['rm', '-rf', 'x y'] }, "rm -rf 'x y'") });
    expect(shownAction(argv)).toBe("rm -rf 'x y'");
    expect(actionKind(argv)).toBe('argv');
    const patch = card({ action: action({ kind: 'exec', patch: '+new\n' }, '+new\n') });
    expect(shownAction(patch)).toBe('+new\n');
    expect(actionKind(patch)).toBe('patch');
  });

  it("shows a Codex file or network approval's action", () => {
    const files = card({ action: action({ kind: 'codex', files: ['src/a.rs'] }, 'src/a.rs') });
    expect(shownAction(files)).toBe('src/a.rs');
    expect(actionKind(files)).toBe('files');
    const net = card({ action: action({ kind: 'codex', networkHost: 'example.com' }, 'example.com') });
    expect(actionKind(net)).toBe('networkHost');
  });

  it('shows the escaped text, not the raw command', () => {
    const c = card({ command: 'a\nb', action: action({ kind: 'shell', command: 'a\nb' }, 'a\\nb') });
    expect(shownAction(c)).toBe('a\\nb');
  });

  it('shows nothing more for a plain question, whose action is its title', () => {
    expect(shownAction(card({ action: action({ kind: 'exec', title: 'Run a program?' }, 'Run a program?') }))).toBeNull();
    expect(shownAction(card({}))).toBeNull();
    expect(shownAction(card({ command: 'ls' }))).toBe('ls');
  });
});
