import { describe, expect, it } from 'vitest';
import { backoff, SseParser } from './sse';

describe('SseParser', () => {
  it('parses events with ids and names', () => {
    const p = new SseParser();
    const evs = p.feed('id: 7\nevent: block\ndata: {"a":1}\n\n');
    expect(evs).toEqual([{ event: 'block', data: '{"a":1}', id: '7' }]);
    expect(p.lastEventId).toBe('7');
  });

  it('joins multi-line data, defaults the event name, skips comments and keep-alives', () => {
    const p = new SseParser();
    expect(p.feed(':keep-alive\n\ndata: one\ndata: two\n\n')).toEqual([{ event: 'message', data: 'one\ntwo', id: undefined }]);
  });

  it('handles chunks split anywhere, including between CR and LF', () => {
    const text = 'event: task\r\ndata: {"x":"y"}\r\n\r\nevent: interaction\rdata: z\r\r';
    for (let cut = 0; cut <= text.length; cut++) {
      const p = new SseParser();
      const evs = [...p.feed(text.slice(0, cut)), ...p.feed(text.slice(cut))];
      expect(evs, `cut at ${cut}`).toEqual([
        { event: 'task', data: '{"x":"y"}', id: undefined },
        { event: 'interaction', data: 'z', id: undefined },
      ]);
    }
  });

  it('keeps the last id across events and ignores ids with NUL', () => {
    const p = new SseParser();
    const evs = p.feed('id: 3\ndata: a\n\ndata: b\n\nid: bad\0\ndata: c\n\n');
    expect(evs.map((e) => e.id)).toEqual(['3', '3', '3']);
  });

  it('does not dispatch an event without data, strips one space and a leading BOM, reads retry', () => {
    const p = new SseParser();
    expect(p.feed('\uFEFFevent: x\n\ndata:  two spaces\nretry: 2500\nretry: soon\n\n')).toEqual([
      { event: 'message', data: ' two spaces', id: undefined },
    ]);
    expect(p.retry).toBe(2500);
  });

  it('waits for the blank line before dispatching', () => {
    const p = new SseParser();
    expect(p.feed('data: partial\n')).toEqual([]);
    expect(p.feed('\n')).toEqual([{ event: 'message', data: 'partial', id: undefined }]);
  });
});

describe('backoff', () => {
  it('doubles from half a second up to ten', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => backoff(n))).toEqual([500, 1000, 2000, 4000, 8000, 10000, 10000]);
    expect(backoff(1, 3000)).toBe(3000);
  });
});
