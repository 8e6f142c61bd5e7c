"""Interop: the official Python A2A client's gRPC transport (a2a-sdk[grpc] 1.3.0) against a real
`sextant serve`, chosen from the card's GRPC interface (`host:port`, the Agent as `tenant`,
which the client copies into every request).

The channel factory is the one an application passes: `grpc.aio.insecure_channel(url)` with
the card's `url` as the target (h2c on Sextant's one port, loopback).
"""

from __future__ import annotations

import asyncio
import uuid

import grpc
import pytest

from a2a.client import ClientConfig, create_client
from a2a.types import (
    CancelTaskRequest,
    GetTaskRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    TaskState,
)
from a2a.utils.errors import TaskNotCancelableError, TaskNotFoundError

from sextant_process import Server


def grpc_config(streaming: bool) -> ClientConfig:
    return ClientConfig(
        streaming=streaming,
        supported_protocol_bindings=["GRPC"],
        grpc_channel_factory=grpc.aio.insecure_channel,
    )


def user_message(text: str) -> Message:
    return Message(message_id=f"py-grpc-{uuid.uuid4()}", role=Role.ROLE_USER, parts=[Part(text=text)])


def test_grpc_send_get_cancel_and_errors(sextant: Server):
    async def go():
        async with await create_client(sextant.base_url, client_config=grpc_config(False)) as c:
            [sent] = [ev async for ev in c.send_message(SendMessageRequest(message=user_message("hello grpc")))]
            assert sent.WhichOneof("payload") == "task", sent
            got = await c.get_task(GetTaskRequest(id=sent.task.id))
            with pytest.raises(TaskNotFoundError):
                await c.get_task(GetTaskRequest(id=f"no-such-task-{uuid.uuid4()}"))
            with pytest.raises(TaskNotCancelableError):
                await c.cancel_task(CancelTaskRequest(id=sent.task.id))
            return sent.task, got

    sent, got = asyncio.run(go())
    assert got.id == sent.id
    assert got.status.state == TaskState.TASK_STATE_COMPLETED
    echo = [a for a in got.artifacts if a.name == "echo"]
    assert echo and echo[0].parts[0].text == "hello grpc", list(got.artifacts)


def test_grpc_streaming(sextant: Server):
    async def go():
        async with await create_client(sextant.base_url, client_config=grpc_config(True)) as c:
            return [ev async for ev in c.send_message(SendMessageRequest(message=user_message("chunks=3 abc")))]

    events = asyncio.run(go())
    kinds = [e.WhichOneof("payload") for e in events]
    assert kinds.count("artifact_update") == 3, kinds
    last = events[-1]
    assert kinds[-1] == "status_update", kinds
    assert last.status_update.status.state == TaskState.TASK_STATE_COMPLETED
