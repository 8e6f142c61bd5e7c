// A Session, live: `GET /api/v1/sessions/{id}`, then its SSE stream from where the snapshot
// ends (`Last-Event-ID`), resuming by itself after a drop.

import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError } from '../../api/client';
import type { LinkState } from '../../api/sse';
import type { Block, SessionDetail, TaskSummary } from '../../api/types';
import { getSession, sessionEvents } from './api';
import { addBlock, deriveTasks, emptyTranscript, fromSnapshot, Ordinals, resumeAfter, type Transcript } from './transcript';

export interface SessionView {
  status: 'loading' | 'ready' | 'error' | 'notFound';
  error?: string;
  detail?: SessionDetail;
  transcript: Transcript;
  /** The Session's tasks, as of the transcript. */
  tasks: TaskSummary[];
  /** The stream's state. */
  live: LinkState;
  reload(): void;
}

export function useSession(id: string | null | undefined): SessionView {
  const [status, setStatus] = useState<SessionView['status']>('loading');
  const [error, setError] = useState<string>();
  const [detail, setDetail] = useState<SessionDetail>();
  const [transcript, setTranscript] = useState<Transcript>(emptyTranscript);
  const [live, setLive] = useState<LinkState>('connecting');
  const [attempt, setAttempt] = useState(0);

  useEffect(() => {
    if (!id) return;
    const ac = new AbortController();
    setStatus('loading');
    setTranscript(emptyTranscript);
    (async () => {
      let d: SessionDetail;
      try {
        d = await getSession(id, ac.signal);
      } catch (e) {
        if (ac.signal.aborted) return;
        if (e instanceof ApiError && e.status === 404) setStatus('notFound');
        else {
          setError((e as Error).message);
          setStatus('error');
        }
        return;
      }
      let t = fromSnapshot(d.transcript);
      setDetail(d);
      setTranscript(t);
      setStatus('ready');
      let ord = new Ordinals();
      await sessionEvents(id, {
        signal: ac.signal,
        lastEventId: resumeAfter(t),
        resumeId: (seen) => (seen === undefined ? seen : String(Math.max(0, Number(seen) - 1))),
        onState(state) {
          if (state === 'live') ord = new Ordinals();
          setLive(state);
        },
        onEvent(ev) {
          if (ev.event !== 'block') return;
          let b: Block;
          try {
            b = JSON.parse(ev.data) as Block;
          } catch {
            return;
          }
          const next = addBlock(t, b, ord.next(b.seq));
          if (next !== t) {
            t = next;
            setTranscript(t);
          }
        },
      });
    })();
    return () => ac.abort();
  }, [id, attempt]);

  const tasks = useMemo(() => {
    if (!detail) return [];
    const s = detail.session;
    return deriveTasks(detail.tasks, transcript.blocks, (taskId, at, seq) => ({
      taskId,
      sessionId: s.sessionId,
      agentId: s.agentId,
      caller: s.caller,
      contextId: s.contextId,
      messageId: '',
      createdAt: at,
      state: 'TASK_STATE_SUBMITTED',
      stateAt: at,
      lastSeq: seq,
      outcome: null,
      title: null,
      result: null,
      origin: s.origin,
      callerKind: s.callerKind,
      scheduleId: detail.run?.scheduleId ?? null,
      scheduleName: null,
      matched: null,
    }));
  }, [detail, transcript]);

  return { status, error, detail, transcript, tasks, live, reload: () => setAttempt((n) => n + 1) };
}
