// A tiny A2A peer the browser tests register and call (console.test.mjs, steer.test.mjs).

import { createServer } from 'node:http';

/**
 * A tiny A2A 1.0 peer on 127.0.0.1:0: its card at /.well-known/agent-card.json (changeable),
 * and a JSON-RPC endpoint at /rpc whose SendMessage completes at once with an echo (GetTask,
 * the probe a registration sends, answers TaskNotFound).
 */
export async function startFakePeer() {
  const seen = [];
  let card;
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const json = (status, v) => {
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(v));
      };
      if (req.method === 'GET' && req.url === '/.well-known/agent-card.json') return json(200, card);
      if (req.method === 'POST' && req.url === '/rpc') {
        const rpc = JSON.parse(body);
        const msg = rpc.params?.message ?? {};
        // The registration's probe (GetTask of a task that does not exist): TaskNotFound, as
        // an A2A 1.0 server answers it; not one of the calls `seen` counts.
        if (rpc.method === 'GetTask' && !peer.refuseHops) {
          return json(200, { jsonrpc: '2.0', id: rpc.id, error: { code: -32001, message: 'Task not found' } });
        }
        seen.push({ method: rpc.method, authorization: req.headers.authorization });
        // As a Sextant at its max_hops answers (crates/sextant-server/src/perimeter.rs).
        if (peer.refuseHops) {
          return json(403, { error: { code: 'forbidden', message: 'A2A-Hop: 1 refused: this call has been relayed 1 times, and this Sextant accepts fewer than 1 (anti-loop); call it with fewer hops' } });
        }
        return json(200, {
          jsonrpc: '2.0',
          id: rpc.id,
          result: {
            task: {
              id: `remote-task-${seen.length}`,
              contextId: msg.contextId ?? 'remote-context',
              status: { state: 'TASK_STATE_COMPLETED' },
              artifacts: [{ artifactId: 'a1', name: 'reply', parts: [{ text: `helper heard: ${msg.parts?.[0]?.text ?? ''}` }] }],
            },
          },
        });
      }
      json(404, { error: 'not found' });
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${server.address().port}`;
  card = {
    name: 'Helper',
    description: 'A fake peer for the console test',
    version: '1.0.0',
    supportedInterfaces: [{ url: `${url}/rpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: false },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: 'echo', name: 'Echo', description: 'Repeats what it is told', tags: ['echo', 'test'] }],
  };
  const peer = {
    url,
    seen,
    /** Answer every call with the 403 a Sextant sends at its hop limit. */
    refuseHops: false,
    addSkill(id, name) {
      card = { ...card, skills: [...card.skills, { id, name, description: `Does ${id}`, tags: [id] }] };
    },
    close() {
      server.closeAllConnections();
      return new Promise((r) => server.close(r));
    },
  };
  return peer;
}
