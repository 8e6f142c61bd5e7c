// Interop: the official A2A JS client (@a2a-js/sdk 1.3.0) against a real `sextant serve`.
//
// The server binary is $SEXTANT_BIN (default <repo>/target/debug/sextant). It is started on a
// fresh temporary data dir with `--port 0`; stdout is read until the line
// `sextant: listening on http://127.0.0.1:PORT` (no sleeping), and SIGTERM stops it.
//
// The SDK's default factory picks JSON-RPC, the card's first interface; the HTTP+JSON tests
// at the end ask for that binding and check from the client's own fetches that it was used.
//
// Run: cd tests/interop/js && npm ci && node --test

import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { mkdtempSync, mkdirSync, rmSync, accessSync, constants, createWriteStream, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomUUID } from 'node:crypto';

import { ClientFactory, ClientFactoryOptions, RestTransportFactory } from '@a2a-js/sdk/client';
import { Role, TaskState } from '@a2a-js/sdk';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = resolve(HERE, '..', '..', '..');
const SEXTANT_BIN = process.env.SEXTANT_BIN || join(REPO, 'target', 'debug', 'sextant');
const LISTEN_RE = /^sextant: listening on (http:\/\/127\.0\.0\.1:(\d+))$/;
const STARTUP_TIMEOUT_MS = Number(process.env.SEXTANT_STARTUP_TIMEOUT || 60) * 1000;
const SHUTDOWN_TIMEOUT_MS = 20_000;

let server; // { proc, baseUrl, dir, stderrPath }

function stderrTail(path = server.stderrPath, n = 40) {
  try {
    return readFileSync(path, 'utf8').split('\n').slice(-n).join('\n');
  } catch {
    return '<no stderr>';
  }
}

function startServer() {
  accessSync(SEXTANT_BIN, constants.X_OK); // throws with the path if missing
  const dir = mkdtempSync(join(tmpdir(), 'sextant-js-'));
  const stderrPath = join(dir, 'stderr.log');
  const dataDir = join(dir, 'data');
  mkdirSync(dataDir);
  // Talk to the built-in echo agent through the default card (the out-of-the-box default is
  // the shell agent, which asks before it runs anything).
  writeFileSync(join(dataDir, 'agents.toml'), 'default_agent = "echo"\n');
  const proc = spawn(SEXTANT_BIN, ['serve', '--data-dir', dataDir, '--port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stderrFile = createWriteStream(stderrPath);
  proc.stderr.pipe(stderrFile);
  const s = { proc, dir, stderrPath, baseUrl: null, exited: null };
  s.exited = new Promise((res) => proc.once('exit', (code, signal) => res({ code, signal })));

  return new Promise((resolveStart, rejectStart) => {
    const seen = [];
    const rl = createInterface({ input: proc.stdout });
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      rejectStart(new Error(`no listening line within ${STARTUP_TIMEOUT_MS} ms; stdout: ${JSON.stringify(seen)}\n${stderrTail(stderrPath)}`));
    }, STARTUP_TIMEOUT_MS);
    rl.on('line', (line) => {
      if (s.baseUrl) return; // keep draining stdout
      seen.push(line);
      const m = LISTEN_RE.exec(line);
      if (m) {
        clearTimeout(timer);
        s.baseUrl = m[1];
        resolveStart(s);
      }
    });
    proc.once('error', (err) => {
      clearTimeout(timer);
      rejectStart(err);
    });
    // 'close' fires once the process exited and its stdio ended; pipe() then finishes the log.
    proc.once('close', (code, signal) => {
      if (s.baseUrl) return;
      clearTimeout(timer);
      const fail = () =>
        rejectStart(new Error(`sextant exited (code ${code}, signal ${signal}) before listening; stdout: ${JSON.stringify(seen)}\n${stderrTail(stderrPath)}`));
      if (stderrFile.writableFinished) fail();
      else stderrFile.once('finish', fail);
    });
  });
}

async function stopServer(s) {
  if (s.proc.exitCode === null && s.proc.signalCode === null) s.proc.kill('SIGTERM');
  let timer;
  const timeout = new Promise((_, rej) => {
    timer = setTimeout(() => {
      s.proc.kill('SIGKILL');
      rej(new Error(`sextant did not exit within ${SHUTDOWN_TIMEOUT_MS} ms of SIGTERM`));
    }, SHUTDOWN_TIMEOUT_MS);
  });
  try {
    return await Promise.race([s.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

before(async () => {
  server = await startServer();
});

after(async () => {
  if (!server) return;
  const { code, signal } = await stopServer(server);
  const tail = stderrTail();
  rmSync(server.dir, { recursive: true, force: true });
  assert.equal(signal, null, `sextant died from ${signal} after SIGTERM\n${tail}`);
  assert.equal(code, 0, `sextant exited ${code} after SIGTERM\n${tail}`);
});

function userMessage(text, extra = {}) {
  return {
    messageId: `js-${randomUUID()}`,
    role: Role.ROLE_USER,
    parts: [{ content: { $case: 'text', value: text } }],
    ...extra,
  };
}

function isTask(result) {
  return result && typeof result === 'object' && 'status' in result && 'artifacts' in result;
}

function partText(part) {
  assert.equal(part?.content?.$case, 'text', `expected a text part, got ${JSON.stringify(part)}`);
  return part.content.value;
}

function echoArtifactText(task) {
  const echo = task.artifacts.filter((a) => a.name === 'echo');
  assert.equal(echo.length, 1, `expected one artifact named echo: ${JSON.stringify(task.artifacts)}`);
  assert.ok(echo[0].parts.length >= 1, 'echo artifact has no parts');
  return partText(echo[0].parts[0]);
}

test('agent card advertises the JSON-RPC 1.0 interface', async () => {
  const res = await fetch(`${server.baseUrl}/.well-known/agent-card.json`);
  assert.equal(res.status, 200);
  const card = await res.json();
  const iface = card.supportedInterfaces[0];
  assert.equal(iface.url, `${server.baseUrl}/api/v1/agents/echo/a2a`);
  assert.equal(iface.protocolBinding, 'JSONRPC');
  assert.equal(iface.protocolVersion, '1.0');
  assert.equal(card.capabilities.streaming, true);
});

test('sendMessage returns a completed task with the echoed text', async () => {
  const client = await new ClientFactory().createFromUrl(server.baseUrl);
  const text = `hello from js ${randomUUID()}`;
  const message = userMessage(text);
  const result = await client.sendMessage({ message });
  assert.ok(isTask(result), `expected a Task, got ${JSON.stringify(result)}`);
  assert.ok(result.id);
  assert.ok(result.contextId);
  assert.equal(result.status.state, TaskState.TASK_STATE_COMPLETED);
  assert.equal(echoArtifactText(result), text);
  assert.equal(typeof result.metadata?.sessionId, 'string');
  assert.ok(result.metadata.sessionId.length > 0);

  // The JS client reads the same task back.
  const got = await client.getTask({ id: result.id });
  assert.equal(got.id, result.id);
  assert.equal(got.status.state, TaskState.TASK_STATE_COMPLETED);
  assert.equal(echoArtifactText(got), text);
  const mine = got.history.filter((m) => m.messageId === message.messageId);
  assert.equal(mine.length, 1, 'user message appears once in history');
  assert.equal(mine[0].role, Role.ROLE_USER);
  assert.equal(partText(mine[0].parts[0]), text);
});

test('sendMessage in the same context lands in the same session', async () => {
  const client = await new ClientFactory().createFromUrl(server.baseUrl);
  const first = await client.sendMessage({ message: userMessage('js turn one') });
  const second = await client.sendMessage({
    message: userMessage('js turn two', { contextId: first.contextId }),
  });
  assert.equal(second.contextId, first.contextId);
  assert.notEqual(second.id, first.id);
  assert.equal(second.status.state, TaskState.TASK_STATE_COMPLETED);
  assert.equal(echoArtifactText(second), 'js turn two');
  assert.equal(second.metadata.sessionId, first.metadata.sessionId);
});

test('sendMessageStream yields the task, then updates in order, ending COMPLETED', async () => {
  const client = await new ClientFactory().createFromUrl(server.baseUrl);
  const text = `stream from js ${randomUUID()}`;
  const events = [];
  for await (const ev of client.sendMessageStream({ message: userMessage(text) })) {
    events.push(ev);
  }
  const kinds = events.map((e) => e.payload?.$case);
  assert.equal(kinds[0], 'task', `first event must be the task: ${kinds}`);
  assert.ok(kinds.includes('statusUpdate'), `expected status updates: ${kinds}`);
  for (const k of kinds) assert.ok(['task', 'statusUpdate', 'artifactUpdate'].includes(k), k);

  const task = events[0].payload.value;
  assert.ok(task.id && task.contextId);

  const states = [];
  const artifacts = new Map();
  for (const ev of events.slice(1)) {
    const { $case, value } = ev.payload;
    if ($case === 'task') {
      assert.equal(value.id, task.id);
      states.push(value.status.state);
      continue;
    }
    assert.equal(value.taskId, task.id);
    assert.equal(value.contextId, task.contextId);
    if ($case === 'statusUpdate') {
      states.push(value.status.state);
    } else {
      const a = value.artifact;
      const prev = artifacts.get(a.artifactId);
      if (value.append && prev) prev.parts.push(...a.parts);
      else artifacts.set(a.artifactId, { name: a.name || prev?.name, parts: [...a.parts] });
    }
  }
  assert.ok(states.length > 0, 'no status after the task event');
  assert.equal(states.at(-1), TaskState.TASK_STATE_COMPLETED, `states: ${states}`);
  assert.ok(!states.slice(0, -1).includes(TaskState.TASK_STATE_COMPLETED), `events after COMPLETED: ${states}`);
  // Non-decreasing by lifecycle: SUBMITTED(1) -> WORKING(2) -> COMPLETED(3).
  for (let i = 1; i < states.length; i++) {
    assert.ok(states[i] >= states[i - 1], `state went backwards: ${states}`);
  }

  const echo = [...artifacts.values()].filter((a) => a.name === 'echo');
  if (echo.length > 0) {
    assert.equal(echo.length, 1);
    assert.equal(partText(echo[0].parts[0]), text);
  } else {
    const last = events.at(-1).payload;
    assert.equal(last.$case, 'task', 'no echo artifact anywhere in the stream');
    assert.equal(echoArtifactText(last.value), text);
  }

  const stored = await client.getTask({ id: task.id });
  assert.equal(stored.status.state, TaskState.TASK_STATE_COMPLETED);
  assert.equal(echoArtifactText(stored), text);
});

/** A client factory that prefers HTTP+JSON and notes the path of every request it makes. */
function restFactory(seen) {
  const fetchImpl = (input, init) => {
    seen.push(new URL(typeof input === 'string' ? input : input.url).pathname);
    return fetch(input, init);
  };
  return new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new RestTransportFactory({ fetchImpl })],
      preferredTransports: ['HTTP+JSON'],
    }),
  );
}

test('over HTTP+JSON: send, get, list, stream and a missing task', async () => {
  const seen = [];
  const client = await restFactory(seen).createFromUrl(server.baseUrl);
  const text = `rest from js ${randomUUID()}`;
  const message = userMessage(text);
  const sent = await client.sendMessage({ message });
  assert.ok(isTask(sent), `expected a Task, got ${JSON.stringify(sent)}`);
  assert.equal(sent.status.state, TaskState.TASK_STATE_COMPLETED);
  assert.equal(echoArtifactText(sent), text);

  const got = await client.getTask({ id: sent.id, historyLength: 1 });
  assert.equal(got.id, sent.id);
  assert.equal(got.history.length, 1);
  assert.equal(got.history[0].messageId, message.messageId);

  await client.sendMessage({ message: userMessage('rest turn two', { contextId: sent.contextId }) });
  const listed = await client.listTasks({ contextId: sent.contextId, pageSize: 1 });
  assert.equal(listed.tasks.length, 1);
  assert.equal(listed.totalSize, 2);
  assert.ok(listed.nextPageToken, 'a second page');

  const kinds = [];
  for await (const ev of client.sendMessageStream({ message: userMessage('chunks=3 abcdef') })) {
    kinds.push(ev.payload?.$case);
  }
  assert.equal(kinds[0], 'task', `${kinds}`);
  assert.equal(kinds.filter((k) => k === 'artifactUpdate').length, 3, `${kinds}`);
  assert.equal(kinds.at(-1), 'statusUpdate', `${kinds}`);

  await assert.rejects(client.getTask({ id: `no-such-task-${randomUUID()}` }), /not found/i);

  const a2a = seen.filter((p) => !p.includes('/.well-known/'));
  assert.ok(a2a.some((p) => p.endsWith('/message:send')), `${a2a}`);
  assert.ok(a2a.some((p) => p.endsWith('/message:stream')), `${a2a}`);
  assert.ok(!a2a.some((p) => p.endsWith('/a2a')), `went over JSON-RPC: ${a2a}`);
});
