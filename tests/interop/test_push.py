"""Interop: push notifications with the official Python client (a2a-sdk 1.3.0) against a real
`sextant serve`, and a `kill -9` of that process between an event and its delivery.

- The config methods through the SDK's own client (its parser is strict: the configs must have
  the plain 1.0 shape), and a config given with the message.
- A receiver on 127.0.0.1 (allowed by the data dir's outbound.toml) holds the first delivery
  open; Sextant is killed with SIGKILL while the POST is in flight; the receiver then answers
  200 and Sextant starts again on the same data dir: every event arrives, the first one at
  least once more, none missing, each signed over the exact body received.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import queue
import signal
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from a2a.client import ClientConfig, create_client
from a2a.types import (
    AuthenticationInfo,
    DeleteTaskPushNotificationConfigRequest,
    GetTaskPushNotificationConfigRequest,
    ListTaskPushNotificationConfigsRequest,
    Message,
    Part,
    Role,
    SendMessageConfiguration,
    SendMessageRequest,
    TaskPushNotificationConfig,
    TaskState,
)

from sextant_process import start_server

STEP_S = 60.0
TOKEN = "interop-signing-token"

# Waits for input on the first turn, completes on the second.
AGENTS_TOML = r"""default_agent = "hooks"

[[agents]]
id = "hooks"
name = "Hooks"
description = "Pushes its tasks to webhooks"
push_notifications = true
engine = { kind = "exec", command = ["sh", "-c", '''read -r line
case "$line" in
  *'"text":"go on"'*) echo '{"type":"final","status":"completed","text":"done"}' ;;
  *) echo '{"type":"final","status":"input_required","text":"more please"}' ;;
esac'''] }
"""

OUTBOUND_TOML = """[push]
allow_loopback = true
initial_backoff_ms = 50
max_backoff_secs = 1
max_failures = 1000
timeout_secs = 30
"""


class Receiver:
    """A webhook receiver. While `hold` is set, each request waits until it is cleared and is
    then answered 503 (the sender is gone by then); afterwards every request gets 200."""

    def __init__(self) -> None:
        self.got: queue.Queue[dict] = queue.Queue()
        self.hold = threading.Event()
        self.release = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("content-length", "0")))
                held = outer.hold.is_set()
                outer.got.put({"headers": {k.lower(): v for k, v in self.headers.items()},
                               "body": body, "held": held})
                if held:
                    outer.release.wait(STEP_S)
                    status = 503
                else:
                    status = 200
                try:
                    self.send_response(status)
                    self.send_header("content-length", "0")
                    self.end_headers()
                except OSError:
                    pass  # the sender was killed

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def next(self) -> dict:
        return self.got.get(timeout=STEP_S)

    def stop(self) -> None:
        self.release.set()
        self.server.shutdown()


def verify(req: dict) -> dict:
    """Checks the Standard Webhooks signature over the exact bytes; the parsed body."""
    h = req["headers"]
    assert h["content-type"] == "application/a2a+json", h
    assert h["authorization"] == "Bearer receiver-cred", h
    signed = f"{h['webhook-id']}.{h['webhook-timestamp']}.".encode() + req["body"]
    want = base64.b64encode(hmac.new(TOKEN.encode(), signed, hashlib.sha256).digest()).decode()
    assert hmac.compare_digest(h["webhook-signature"], f"v1,{want}"), h
    assert abs(time.time() - int(h["webhook-timestamp"])) < 300
    body = json.loads(req["body"])
    assert len(body) == 1, body
    return body


def state_of(body: dict) -> str:
    for k in ("task", "statusUpdate"):
        if k in body:
            return body[k]["status"]["state"]
    return next(iter(body))


def push_config(url: str, **kw) -> TaskPushNotificationConfig:
    return TaskPushNotificationConfig(
        url=url,
        token=TOKEN,
        authentication=AuthenticationInfo(scheme="Bearer", credentials="receiver-cred"),
        **kw,
    )


async def send(base_url: str, text: str, *, task_id: str | None = None, config=None):
    msg = Message(message_id=f"py-{uuid.uuid4()}", role=Role.ROLE_USER, parts=[Part(text=text)])
    if task_id:
        msg.task_id = task_id
    req = SendMessageRequest(message=msg)
    if config is not None:
        req.configuration.CopyFrom(SendMessageConfiguration(task_push_notification_config=config))
    async with await create_client(base_url, client_config=ClientConfig(streaming=False)) as client:
        events = [ev async for ev in client.send_message(req)]
    assert len(events) == 1 and events[0].WhichOneof("payload") == "task", events
    return events[0].task


@pytest.fixture
def data(tmp_path):
    d = tmp_path / "data"
    d.mkdir()
    (d / "agents.toml").write_text(AGENTS_TOML)
    (d / "outbound.toml").write_text(OUTBOUND_TOML)
    return tmp_path


def test_config_methods_through_the_official_client(data):
    server = start_server(data / "data", data / "logs")
    receiver = Receiver()
    try:
        async def scenario():
            task = await send(server.base_url, "start")
            assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
            async with await create_client(server.base_url) as client:
                created = await client.create_task_push_notification_config(
                    push_config(receiver.url, task_id=task.id, id="py-hook"))
                assert created.id == "py-hook" and created.url == receiver.url
                assert created.token == TOKEN
                got = await client.get_task_push_notification_config(
                    GetTaskPushNotificationConfigRequest(task_id=task.id, id="py-hook"))
                assert got.authentication.scheme == "Bearer"
                assert got.authentication.credentials == "", "credentials are never returned"
                listed = await client.list_task_push_notification_configs(
                    ListTaskPushNotificationConfigsRequest(task_id=task.id))
                assert [c.id for c in listed.configs] == ["py-hook"]
                # The follow-up completes the task: the webhook hears it.
                done = await send(server.base_url, "go on", task_id=task.id)
                assert done.status.state == TaskState.TASK_STATE_COMPLETED
                states = []
                while "TASK_STATE_COMPLETED" not in states:
                    states.append(state_of(verify(receiver.next())))
                assert states == ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"], states
                for _ in range(2):
                    await client.delete_task_push_notification_config(
                        DeleteTaskPushNotificationConfigRequest(task_id=task.id, id="py-hook"))
                listed = await client.list_task_push_notification_configs(
                    ListTaskPushNotificationConfigsRequest(task_id=task.id))
                assert list(listed.configs) == []

        asyncio.run(scenario())
    finally:
        receiver.stop()
        assert server.stop() == 0, server.stderr_tail()


def test_a_kill_between_the_event_and_its_delivery_loses_nothing(data):
    receiver = Receiver()
    receiver.hold.set()
    server = start_server(data / "data", data / "logs")
    try:
        task = asyncio.run(send(server.base_url, "start", config=push_config(receiver.url)))
        assert task.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
        # The first delivery (the task's creation) is in flight, held by the receiver; the
        # later events are committed and owed. Kill Sextant now.
        first = receiver.next()
        assert first["held"] and state_of(json.loads(first["body"])) == "TASK_STATE_SUBMITTED"
        server.proc.send_signal(signal.SIGKILL)
        server.proc.wait(timeout=STEP_S)
        receiver.hold.clear()
        receiver.release.set()

        server = start_server(data / "data", data / "logs")
        accepted, ids = [], []
        while "TASK_STATE_INPUT_REQUIRED" not in accepted:
            req = receiver.next()
            if not req["held"]:
                accepted.append(state_of(verify(req)))
                ids.append(req["headers"]["webhook-id"])
        assert accepted == [
            "TASK_STATE_SUBMITTED",
            "TASK_STATE_WORKING",
            "TASK_STATE_INPUT_REQUIRED",
        ], accepted
        # The interrupted delivery was sent again under the same id: a receiver that had
        # taken it can drop the repeat.
        assert ids[0] == first["headers"]["webhook-id"], (ids, first["headers"])
        done = asyncio.run(send(server.base_url, "go on", task_id=task.id))
        assert done.status.state == TaskState.TASK_STATE_COMPLETED
        tail = []
        while "TASK_STATE_COMPLETED" not in tail:
            tail.append(state_of(verify(receiver.next())))
        assert tail == ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"], tail
    finally:
        receiver.stop()
        if server.proc.poll() is None:
            assert server.stop() == 0, server.stderr_tail()
