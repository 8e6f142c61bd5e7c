#!/usr/bin/env python3
"""An A2A 1.0 peer on the official Python SDK (a2a-sdk 1.3.0), for Sextant's outbound interop
tests (tests/interop/test_peers.py). Adapted from bench/python_echo_peer.py.

Usage: python_peer.py [--name py-peer] [--skill echo] [--tags a,b] [--delay 0]
                      [--mode echo|ask] [--streaming 1]

Binds 127.0.0.1:0 and prints exactly one stdout line once the socket listens:

    python-peer: listening on http://127.0.0.1:PORT

Card at /.well-known/agent-card.json, JSON-RPC at /. Behaviour:
  - a message to a task waiting for input completes it with "you said: <text>";
  - --mode ask, or a message containing "ask:", puts the task in INPUT_REQUIRED with the
    question "Which color?";
  - anything else: an artifact "reply" with "<name>: <text>", completed.
GET /_seen returns the A2A-Version, A2A-Hop and Authorization headers of every POST (so the
tests can check what Sextant sent). Stop with SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import sys

os.environ.setdefault("OTEL_INSTRUMENTATION_A2A_SDK_ENABLED", "false")

import uvicorn
from starlette.applications import Starlette
from starlette.responses import JSONResponse
from starlette.routing import Route

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

SEEN: list[dict] = []


class PeerExecutor(AgentExecutor):
    def __init__(self, name: str, mode: str, delay: float) -> None:
        self.name = name
        self.mode = mode
        self.delay = delay

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task = context.current_task
        waiting = task is not None and task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
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
        if self.delay:
            await asyncio.sleep(self.delay)
        text = context.get_user_input()
        if waiting:
            reply = f"you said: {text}"
        elif self.mode == "ask" or "ask:" in text:
            await updater.requires_input(updater.new_agent_message([Part(text="Which color?")]))
            return
        else:
            reply = f"{self.name}: {text}"
        await updater.add_artifact([Part(text=reply)], name="reply")
        await updater.complete()

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        updater = TaskUpdater(event_queue, context.task_id, context.context_id)
        await updater.cancel()


class Recorder:
    """ASGI middleware: remembers the A2A headers of every POST."""

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["method"] == "POST":
            h = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
            SEEN.append(
                {
                    "a2aVersion": h.get("a2a-version"),
                    "a2aHop": h.get("a2a-hop"),
                    "authorization": h.get("authorization"),
                }
            )
        await self.app(scope, receive, send)


async def seen(_request):
    return JSONResponse(SEEN)


def build_app(base_url: str, args) -> Recorder:
    card = AgentCard(
        name=args.name,
        description=f"Python SDK peer {args.name} (Sextant interop)",
        version="1.0.0",
        supported_interfaces=[
            AgentInterface(url=base_url + "/", protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=AgentCapabilities(streaming=bool(args.streaming), push_notifications=False),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
        skills=[
            AgentSkill(
                id=args.skill,
                name=args.skill,
                description=f"the {args.skill} skill",
                tags=[t for t in args.tags.split(",") if t] or [args.skill],
            )
        ],
    )
    handler = DefaultRequestHandler(
        agent_executor=PeerExecutor(args.name, args.mode, args.delay),
        task_store=InMemoryTaskStore(),
        agent_card=card,
    )
    routes = [
        Route("/_seen", seen, methods=["GET"]),
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, "/"),
    ]
    return Recorder(Starlette(routes=routes))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name", default="py-peer")
    parser.add_argument("--skill", default="echo")
    parser.add_argument("--tags", default="")
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--mode", choices=["echo", "ask"], default="echo")
    parser.add_argument("--streaming", type=int, default=1)
    args = parser.parse_args()

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    sock.set_inheritable(True)
    base_url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    config = uvicorn.Config(
        build_app(base_url, args), log_level="warning", access_log=False, lifespan="off"
    )
    server = uvicorn.Server(config)
    print(f"python-peer: listening on {base_url}", flush=True)
    server.run(sockets=[sock])
    return 0


if __name__ == "__main__":
    sys.exit(main())
