#!/usr/bin/env node
// Echo A2A 1.0 agent built on the official JS SDK (@a2a-js/sdk 1.3.0), a peer for bench/run.sh.
//
// The SDK's own Express middleware (agentCardHandler + jsonRpcHandler), DefaultRequestHandler,
// InMemoryTaskStore, and an AgentExecutor with the same observable behaviour as
// bench/python_echo_peer.py and Sextant's default `echo` agent: the task is published
// (submitted), marked working, the user's text comes back as an artifact named "echo", and the
// task completes. The text "hold" instead keeps its task working until the server stops (for
// bench/idle_subscriptions.py). "chunks=N rest" (N in 1..64) sends the rest as one artifact in N
// chunks (append / lastChunk), so stream benchmarks carry the same events on every server.
//
// Usage: node js_echo_peer.js [--host 127.0.0.1] [--port 0]
//
// Once the socket listens, exactly one stdout line is printed:
//
//     js-echo-peer: listening on http://127.0.0.1:PORT
//
// Card: /.well-known/agent-card.json; JSON-RPC endpoint: / (the card's
// supportedInterfaces[0].url). SIGTERM closes the listener and every open connection (held
// streams included) and exits 0.
//
// Tuning, for a fair comparison (run.sh starts it with NODE_ENV=production): Express's
// x-powered-by header and its per-response ETag (a hash of every JSON body, which no A2A client
// reads) are off; no access log (the SDK logs only errors); the listen backlog is 2048, as the
// Python peer's; Node's HTTP server already sets TCP_NODELAY. One process, like the Python peer:
// the SDK's InMemoryTaskStore lives in that process, so a cluster of workers would not share tasks
// (a SubscribeToTask could land on a worker that does not know its task).

import http from "node:http";
import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import express from "express";
import { TaskState } from "@a2a-js/sdk";
import {
  AgentEvent,
  DefaultRequestHandler,
  InMemoryTaskStore,
} from "@a2a-js/sdk/server";
import { agentCardHandler, jsonRpcHandler, UserBuilder } from "@a2a-js/sdk/server/express";

const MAX_CHUNKS = 64;

/**
 * The same rule as Sextant's echo engine and python_echo_peer.py's `chunked`:
 * "chunks=N rest" -> rest in N near-equal pieces (by code point), or null when the text does
 * not follow it exactly (N one to three ASCII digits, 1..64, then a space).
 */
function chunked(text) {
  if (!text.startsWith("chunks=")) return null;
  const after = text.slice("chunks=".length);
  const sp = after.indexOf(" ");
  if (sp < 0) return null;
  const n = after.slice(0, sp);
  if (!/^[0-9]{1,3}$/.test(n)) return null;
  const count = Number(n);
  if (count < 1 || count > MAX_CHUNKS) return null;
  const rest = Array.from(after.slice(sp + 1));
  const pieces = [];
  for (let k = 0; k < count; k++) {
    const from = Math.floor((k * rest.length) / count);
    const to = Math.floor(((k + 1) * rest.length) / count);
    pieces.push(rest.slice(from, to).join(""));
  }
  return pieces;
}

const textPart = (text) => ({
  content: { $case: "text", value: text },
  metadata: undefined,
  filename: "",
  mediaType: "",
});

const status = (state) => ({ state, message: undefined, timestamp: new Date().toISOString() });

/** The user's text: its text parts joined by newlines (as the Python SDK's get_user_input). */
function userText(message) {
  return (message?.parts ?? [])
    .filter((p) => p.content?.$case === "text")
    .map((p) => p.content.value)
    .join("\n");
}

class EchoExecutor {
  async execute(ctx, bus) {
    const { taskId, contextId } = ctx;
    const message = ctx.userMessage;
    // Every execution starts with the task (the SDK requires a task or message first).
    bus.publish(
      AgentEvent.task(
        ctx.task ?? {
          id: taskId,
          contextId,
          status: status(TaskState.TASK_STATE_SUBMITTED),
          artifacts: [],
          history: [message],
          metadata: undefined,
        },
      ),
    );
    const update = (state) =>
      bus.publish(
        AgentEvent.statusUpdate({ taskId, contextId, status: status(state), metadata: undefined }),
      );
    update(TaskState.TASK_STATE_WORKING);
    const text = userText(message);
    if (text === "hold") {
      // bench/idle_subscriptions.py: a task that stays working until the server stops, for
      // SubscribeToTask streams to follow. A pending promise does not keep Node alive.
      await new Promise(() => {});
    }
    const pieces = chunked(text) ?? [text];
    const artifactId = randomUUID();
    pieces.forEach((piece, i) =>
      bus.publish(
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: {
            artifactId,
            name: "echo",
            description: "",
            parts: [textPart(piece)],
            metadata: undefined,
            extensions: [],
          },
          append: i > 0,
          lastChunk: i === pieces.length - 1,
          metadata: undefined,
        }),
      ),
    );
    update(TaskState.TASK_STATE_COMPLETED);
    bus.finished();
  }

  async cancelTask(taskId, bus) {
    bus.publish(
      AgentEvent.statusUpdate({
        taskId,
        contextId: "",
        status: status(TaskState.TASK_STATE_CANCELED),
        metadata: undefined,
      }),
    );
    bus.finished();
  }
}

function buildCard() {
  return {
    name: "js-echo-peer",
    description: "Echo agent on the official @a2a-js/sdk (benchmark peer)",
    version: "1.0.0",
    // The URL is filled in once the kernel has chosen the port.
    supportedInterfaces: [
      { url: "", protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" },
    ],
    provider: undefined,
    capabilities: { streaming: true, pushNotifications: false, extensions: [] },
    securitySchemes: {},
    securityRequirements: [],
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [
      {
        id: "echo",
        name: "Echo",
        description: "Returns the input text as an artifact",
        tags: ["echo"],
        examples: [],
        inputModes: [],
        outputModes: [],
        securityRequirements: [],
      },
    ],
    signatures: [],
  };
}

function main() {
  const { values } = parseArgs({
    options: {
      host: { type: "string", default: "127.0.0.1" },
      port: { type: "string", default: "0" },
    },
  });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`js-echo-peer: bad --port ${values.port}`);
    process.exit(2);
  }
  const card = buildCard();
  const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new EchoExecutor());
  const app = express();
  app.disable("x-powered-by");
  app.disable("etag");
  app.use("/.well-known/agent-card.json", agentCardHandler({ agentCardProvider: handler }));
  app.use("/", jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));

  const server = http.createServer(app);
  server.on("error", (e) => {
    console.error(`js-echo-peer: ${e.message}`);
    process.exit(1);
  });
  server.listen({ host: values.host, port, backlog: 2048 }, () => {
    const base = `http://${values.host}:${server.address().port}`;
    card.supportedInterfaces[0].url = `${base}/`;
    process.stdout.write(`js-echo-peer: listening on ${base}\n`);
  });
  process.on("SIGTERM", () => {
    server.close(() => process.exit(0));
    // Keep-alive connections and held SSE streams would keep close() waiting.
    server.closeAllConnections();
  });
}

main();
