// Server-sent events over `fetch` (EventSource cannot send an Authorization header): an
// incremental parser of the text/event-stream format, and a reconnecting reader that resumes
// with `Last-Event-ID`.

import { ApiError, authHeaders, errorFrom, url } from './client';

/** One dispatched event. */
export interface SseEvent {
  /** `event:` field, `message` when absent. */
  event: string;
  /** `data:` lines joined with `\n`. */
  data: string;
  /** The last `id:` seen on the stream so far (the resume point), if any. */
  id?: string;
}

/**
 * Incremental text/event-stream parser (WHATWG HTML §9.2.6). Feed it decoded text in chunks
 * of any size; it returns the events completed by each chunk. Handles CRLF, CR and LF line
 * ends (also split across chunks), comments, multi-line data, `retry:` and a leading BOM.
 */
export class SseParser {
  private buf = '';
  private data: string[] = [];
  private event = '';
  private sawData = false;
  private first = true;
  private pendingCR = false;
  /** The stream's last event id (persists across events, as the spec says). */
  lastEventId: string | undefined;
  /** The reconnection delay the server asked for, in ms. */
  retry: number | undefined;

  feed(chunk: string): SseEvent[] {
    if (this.first && chunk.length > 0) {
      this.first = false;
      if (chunk.charCodeAt(0) === 0xfeff) chunk = chunk.slice(1);
    }
    // A CR at the end of the previous chunk already ended a line; a LF right after it
    // belongs to that same line end.
    if (this.pendingCR && chunk.startsWith('\n')) chunk = chunk.slice(1);
    this.pendingCR = false;
    this.buf += chunk;
    const out: SseEvent[] = [];
    let start = 0;
    for (let i = 0; i < this.buf.length; i++) {
      const c = this.buf.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      const line = this.buf.slice(start, i);
      if (c === 13) {
        if (i + 1 < this.buf.length) {
          if (this.buf.charCodeAt(i + 1) === 10) i++;
        } else {
          this.pendingCR = true;
        }
      }
      start = i + 1;
      const ev = this.line(line);
      if (ev) out.push(ev);
    }
    this.buf = this.buf.slice(start);
    return out;
  }

  private line(line: string): SseEvent | null {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    let field = line;
    let value = '';
    if (colon >= 0) {
      field = line.slice(0, colon);
      value = line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
    }
    switch (field) {
      case 'data':
        this.data.push(value);
        this.sawData = true;
        break;
      case 'event':
        this.event = value;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastEventId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retry = Number(value);
        break;
    }
    return null;
  }

  private dispatch(): SseEvent | null {
    const had = this.sawData;
    const ev: SseEvent = { event: this.event || 'message', data: this.data.join('\n'), id: this.lastEventId };
    this.data = [];
    this.event = '';
    this.sawData = false;
    return had ? ev : null;
  }
}

/** The state of a live connection, for the connection indicator. */
export type LinkState = 'connecting' | 'live' | 'reconnecting' | 'offline';

export interface StreamOptions {
  /** Resume after this id (sent as `Last-Event-ID` on the first connection). */
  lastEventId?: string;
  /**
   * The `Last-Event-ID` to reconnect with, given the last id seen (default: that id). The
   * Session stream gives every block of one journal event the same id, so it resumes one
   * earlier and drops the blocks it already has.
   */
  resumeId?(lastSeen: string | undefined): string | undefined;
  onEvent(ev: SseEvent): void;
  /** Connection state changes; `reconnected` is true on every successful connection after the first. */
  onState?(state: LinkState, info: { attempt: number; reconnected: boolean }): void;
  /** A response that retrying cannot fix (404, 403): the stream stops. */
  onFatal?(err: ApiError): void;
  signal: AbortSignal;
}

/** Backoff before reconnect attempt `n` (1-based), in ms: 0.5 s doubling to 10 s. */
export function backoff(n: number, serverRetry?: number): number {
  if (serverRetry !== undefined && n <= 1) return serverRetry;
  return Math.min(10_000, 500 * 2 ** Math.max(0, n - 1));
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    });
  });
}

/**
 * Reads an SSE endpoint until `signal` aborts, reconnecting with backoff and resuming with
 * `Last-Event-ID` after a drop. A 401 sets up the credential again.
 */
export async function stream(path: string, opts: StreamOptions): Promise<void> {
  const { signal } = opts;
  let lastId = opts.lastEventId;
  let attempt = 0;
  let connectedOnce = false;
  let refresh = false;
  let serverRetry: number | undefined;
  while (!signal.aborted) {
    opts.onState?.(connectedOnce || attempt > 0 ? 'reconnecting' : 'connecting', { attempt, reconnected: false });
    try {
      const headers: Record<string, string> = { Accept: 'text/event-stream', ...(await authHeaders(refresh)) };
      refresh = false;
      if (lastId !== undefined) headers['Last-Event-ID'] = lastId;
      const res = await fetch(await url(path), { headers, signal, credentials: 'same-origin', cache: 'no-store' });
      if (res.status === 401) {
        refresh = true;
        throw new Error('unauthorized');
      }
      if (!res.ok || !res.body) {
        const err = await errorFrom(res);
        if (res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429) {
          opts.onState?.('offline', { attempt, reconnected: false });
          opts.onFatal?.(err);
          return;
        }
        throw err;
      }
      opts.onState?.('live', { attempt, reconnected: connectedOnce });
      connectedOnce = true;
      attempt = 0;
      const parser = new SseParser();
      parser.lastEventId = lastId;
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        for (const ev of parser.feed(value)) {
          opts.onEvent(ev);
          if (ev.id !== undefined) lastId = opts.resumeId ? opts.resumeId(ev.id) : ev.id;
        }
      }
      serverRetry = parser.retry;
    } catch {
      // Network error, 5xx or a dropped stream: retry below.
      if (signal.aborted) return;
    }
    if (signal.aborted) return;
    attempt++;
    opts.onState?.(attempt > 3 ? 'offline' : 'reconnecting', { attempt, reconnected: false });
    await sleep(backoff(attempt, serverRetry), signal);
  }
}
