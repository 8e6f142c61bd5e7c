#!/usr/bin/env node
// An A2A 1.0 peer on the official JS SDK (@a2a-js/sdk 1.3.0 server + express), for Sextant's
// outbound interop tests (tests/interop/test_peers.py). Not a test file itself.
//
// Usage: node peer.mjs [--name js-peer] [--skill echo] [--tags a,b] [--delay-ms 0]
//                      [--mode echo|ask]
//
// Binds 127.0.0.1:0, then prints exactly one stdout line:
//     js-peer: listening on http://127.0.0.1:PORT
//
// Card at /.well-known/agent-card.json, JSON-RPC at /rpc (streaming on). Behaviour:
//   - a message to a task waiting for input completes it with "you said: <text>";
//   - mode ask, or a message containing "ask:", puts the task in INPUT_REQUIRED ("Which
//     color?");
//   - anything else: a "reply" artifact "<name>: <text>" (streamed in two chunks), completed.
// GET /_seen returns the A2A-Version, A2A-Hop and Authorization headers of every POST.

import express from 'express';
import {
  AgentCard,
  Message,
  Task,
  TaskArtifactUpdateEvent,
  TaskStatusUpdateEvent,
} from '@a2a-js/sdk';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { agentCardHandler, jsonRpcHandler, UserBuilder } from '@a2a-js/sdk/server/express';

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

const NAME = arg('name', 'js-peer');
const SKILL = arg('skill', 'echo');
const TAGS = arg('tags', '')
  .split(',')
  .filter((t) => t);
const DELAY_MS = Number(arg('delay-ms', '0'));
const MODE = arg('mode', 'echo');
const seen = [];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function text(parts) {
  return (parts ?? [])
    .filter((p) => p.content?.$case === 'text')
    .map((p) => p.content.value)
    .join('');
}

function agentMessage(taskId, contextId, body) {
  return Message.fromJSON({
    messageId: `js-${Math.random().toString(36).slice(2)}`,
    taskId,
    contextId,
    role: 'ROLE_AGENT',
    parts: [{ text: body }],
  });
}

function status(taskId, contextId, state, message) {
  const s = { state };
  if (message) s.message = Message.toJSON(message);
  return TaskStatusUpdateEvent.fromJSON({ taskId, contextId, status: s });
}

const executor = {
  async execute(ctx, bus) {
    const { taskId, contextId } = ctx;
    const input = text(ctx.userMessage.parts);
    const existing = ctx.task;
    const waiting = existing?.status?.state === 6; // TASK_STATE_INPUT_REQUIRED
    if (existing) {
      bus.publish(AgentEvent.task(existing));
    } else {
      bus.publish(
        AgentEvent.task(
          Task.fromJSON({
            id: taskId,
            contextId,
            status: { state: 'TASK_STATE_SUBMITTED' },
            history: [Message.toJSON(ctx.userMessage)],
          }),
        ),
      );
    }
    bus.publish(AgentEvent.statusUpdate(status(taskId, contextId, 'TASK_STATE_WORKING')));
    if (DELAY_MS > 0) await sleep(DELAY_MS);
    let reply;
    if (waiting) {
      reply = `you said: ${input}`;
    } else if (MODE === 'ask' || input.includes('ask:')) {
      bus.publish(
        AgentEvent.statusUpdate(
          status(
            taskId,
            contextId,
            'TASK_STATE_INPUT_REQUIRED',
            agentMessage(taskId, contextId, 'Which color?'),
          ),
        ),
      );
      bus.finished();
      return;
    } else {
      reply = `${NAME}: ${input}`;
    }
    const half = Math.floor(reply.length / 2);
    bus.publish(
      AgentEvent.artifactUpdate(
        TaskArtifactUpdateEvent.fromJSON({
          taskId,
          contextId,
          artifact: { artifactId: 'reply', name: 'reply', parts: [{ text: reply.slice(0, half) }] },
        }),
      ),
    );
    bus.publish(
      AgentEvent.artifactUpdate(
        TaskArtifactUpdateEvent.fromJSON({
          taskId,
          contextId,
          append: true,
          lastChunk: true,
          artifact: { artifactId: 'reply', name: 'reply', parts: [{ text: reply.slice(half) }] },
        }),
      ),
    );
    bus.publish(AgentEvent.statusUpdate(status(taskId, contextId, 'TASK_STATE_COMPLETED')));
    bus.finished();
  },
  async cancelTask(taskId, bus) {
    bus.publish(AgentEvent.statusUpdate(status(taskId, '', 'TASK_STATE_CANCELED')));
    bus.finished();
  },
};

const app = express();
app.use((req, _res, next) => {
  if (req.method === 'POST') {
    seen.push({
      a2aVersion: req.get('a2a-version') ?? null,
      a2aHop: req.get('a2a-hop') ?? null,
      authorization: req.get('authorization') ?? null,
    });
  }
  next();
});
app.get('/_seen', (_req, res) => res.json(seen));

const server = app.listen(0, '127.0.0.1', () => {
  const port = server.address().port;
  const base = `http://127.0.0.1:${port}`;
  const card = AgentCard.fromJSON({
    name: NAME,
    description: `JS SDK peer ${NAME} (Sextant interop)`,
    version: '1.0.0',
    supportedInterfaces: [{ url: `${base}/rpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    capabilities: { streaming: true, pushNotifications: false },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
    skills: [{ id: SKILL, name: SKILL, description: `the ${SKILL} skill`, tags: TAGS }],
  });
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), executor);
  app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
  app.use('/rpc', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
  process.stdout.write(`js-peer: listening on ${base}\n`);
});

for (const sig of ['SIGTERM', 'SIGINT']) {
  process.on(sig, () => server.close(() => process.exit(0)));
}
