#!/usr/bin/env python3
"""Echo A2A 1.0 agent built on the official Python SDK (a2a-sdk 1.3.0).

The comparison peer for bench/run.sh: the SDK's own Starlette routes
(create_agent_card_routes + create_jsonrpc_routes), DefaultRequestHandler,
InMemoryTaskStore, and an AgentExecutor that echoes the user's text as an
artifact named "echo" and completes the task — the same observable behaviour
as Sextant's default `echo` agent. The text "hold" instead keeps its task working until the
server stops (for bench/idle_subscriptions.py). Like Sextant's echo, "chunks=N rest" (N in 1..64)
sends the rest as one artifact in N chunks, so stream benchmarks carry the same events on both.

Usage: python_echo_peer.py [--host 127.0.0.1] [--port 0]

The socket is bound and listening before the app starts, then exactly one
stdout line is printed:

    python-echo-peer: listening on http://127.0.0.1:PORT

Card: /.well-known/agent-card.json; JSON-RPC endpoint: / (the card's
supportedInterfaces[0].url). Stop with SIGTERM (uvicorn shuts down cleanly, then
re-raises the signal, so the exit status is 143).

Tuning, for a fair comparison: plain asyncio + h11 (uvloop/httptools measured slower with
this SDK here), access log off, SDK tracing off (see below), TCP_NODELAY on.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import uuid
import sys

# The SDK wraps every handler in OpenTelemetry spans; with only opentelemetry-api installed
# (it comes in through google-api-core) they are no-ops that still cost ~25% of the CPU per
# request. The peer runs at its best unless the caller sets the variable explicitly.
os.environ.setdefault("OTEL_INSTRUMENTATION_A2A_SDK_ENABLED", "false")

import uvicorn
from starlette.applications import Starlette

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Part,
    Task,
    TaskState,
    TaskStatus,
)


class EchoExecutor(AgentExecutor):
    """Publishes the task, marks it working, echoes the text, completes."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        if task is None:
            task = Task(
                id=context.task_id,
                context_id=context.context_id,
                status=TaskStatus(state=TaskState.TASK_STATE_SUBMITTED),
                history=[context.message],
            )
            await event_queue.enqueue_event(task)
        updater = TaskUpdater(event_queue, task.id, task.context_id)
        await updater.start_work()
        if context.get_user_input() == "hold":
            # bench/idle_subscriptions.py: a task that stays working until the server stops,
            # for SubscribeToTask streams to follow.
            await asyncio.Event().wait()
        text = context.get_user_input()
        pieces = chunked(text) or [text]
        artifact_id = str(uuid.uuid4())
        for i, piece in enumerate(pieces):
            await updater.add_artifact(
                [Part(text=piece)],
                artifact_id=artifact_id,
                name="echo",
                append=i > 0,
                last_chunk=i == len(pieces) - 1,
            )
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel()


MAX_CHUNKS = 64


def chunked(text: str) -> list[str] | None:
    """The same rule as Sextant's echo engine: "chunks=N rest" -> rest in N near-equal pieces."""
    if not text.startswith("chunks="):
        return None
    n, sep, rest = text[len("chunks="):].partition(" ")
    if not sep or not n.isascii() or not n.isdigit() or len(n) > 3:
        return None
    count = int(n)
    if not 1 <= count <= MAX_CHUNKS:
        return None
    cuts = [k * len(rest) // count for k in range(count + 1)]
    return [rest[cuts[k] : cuts[k + 1]] for k in range(count)]


def build_card(base_url: str) -> AgentCard:
    return AgentCard(
        name="python-echo-peer",
        description="Echo agent on the official a2a-sdk (benchmark peer)",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=base_url + "/", protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=True, push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id="echo",
                name="Echo",
                description="Returns the input text as an artifact",
                tags=["echo"],
            )
        ],
    )


def build_app(base_url: str) -> Starlette:
    card = build_card(base_url)
    handler = DefaultRequestHandler(
        agent_executor=EchoExecutor(),
        task_store=InMemoryTaskStore(),
        agent_card=card,
    )
    routes = [*create_agent_card_routes(card), *create_jsonrpc_routes(handler, "/")]
    return Starlette(routes=routes)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--log-level", default="warning")
    args = parser.parse_args()

    # proto=IPPROTO_TCP matters: asyncio only sets TCP_NODELAY on accepted sockets whose
    # listening socket says so, and without it Nagle + delayed ACK add ~40 ms per keep-alive
    # request (uvicorn writes headers and body separately).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((args.host, args.port))
    sock.listen(2048)
    sock.set_inheritable(True)
    port = sock.getsockname()[1]
    base_url = f"http://{args.host}:{port}"

    config = uvicorn.Config(
        build_app(base_url),
        log_level=args.log_level,
        access_log=False,
        lifespan="off",
        backlog=2048,
    )
    server = uvicorn.Server(config)
    # Connections made before uvicorn starts wait in the listen backlog.
    print(f"python-echo-peer: listening on {base_url}", flush=True)
    server.run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())
