import { describe, expect, it } from 'vitest';
import { activePeers, sortAssistants, type AssistantToken } from './assistants';

const token = (name: string, active: boolean, createdAt: string): AssistantToken => ({
  id: name,
  name,
  scope: 'workspace',
  agentId: null,
  workspace: 'ws',
  createdAt,
  revokedAt: active ? null : '2026-12-02T00:00:00.000Z',
  active,
  peers: [
    { id: `${name}-1`, agentId: 'shell', createdAt, revokedAt: null, active: true },
    { id: `${name}-0`, agentId: 'shell', createdAt, revokedAt: createdAt, active: false },
  ],
});

describe('assistant tokens', () => {
  it('list the active ones first, newest first', () => {
    const list = [token('old', true, '2026-12-01T00:00:00Z'), token('gone', false, '2026-12-03T00:00:00Z'), token('new', true, '2026-12-02T00:00:00Z')];
    expect(sortAssistants(list).map((t) => t.name)).toEqual(['new', 'old', 'gone']);
  });
  it('show only the active per-Agent credentials', () => {
    expect(activePeers(token('a', true, '2026-12-01T00:00:00Z')).map((p) => p.id)).toEqual(['a-1']);
    expect(activePeers({ ...token('b', true, 'x'), peers: undefined })).toEqual([]);
  });
});
