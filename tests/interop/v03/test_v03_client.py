"""Interop: a 0.3 client, the official Python SDK's last 0.3 release (a2a-sdk 0.3.26, what
strands-agents and other 0.3 clients are built on), against a real `sextant serve`.

A 0.3 client fetches the card without `A2A-Version` and needs its top-level `url`: Sextant
serves such a request the 1.0 card with the 0.3 fields beside (`url`, `preferredTransport`,
`protocolVersion`, 0.3 security schemes), and answers the 0.3 method names the client then
calls (`message/send`, `message/stream`, `tasks/get`) in 0.3 JSON.

Runs in its own venv (a2a-sdk 0.3 and 1.3 are one package): through tests/interop/run.sh, which
creates tests/interop/.venv-v03, or directly:
    tests/interop/.venv-v03/bin/python -m pytest tests/interop/v03 -q
"""

from __future__ import annotations

import asyncio
import uuid

import httpx
import pytest

from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.types import (
    HTTPAuthSecurityScheme,
    Message,
    Part,
    Role,
    Task,
    TaskQueryParams,
    TaskState,
    TextPart,
)

# The server launcher and the `sextant` fixture are the 1.3 suite's (../conftest.py, loaded
# through pytest.ini's --confcutdir; they import no A2A SDK).
from sextant_process import Server


def run(coro):
    return asyncio.run(coro)


def message(text: str, role: Role = Role.user) -> Message:
    return Message(
        message_id=f"v03-{uuid.uuid4()}",
        role=role,
        parts=[Part(root=TextPart(text=text))],
    )


def artifact_text(task: Task) -> str:
    echo = [a for a in task.artifacts or [] if a.name == "echo"]
    assert len(echo) == 1, f"expected one artifact named 'echo', got {task.artifacts}"
    return echo[0].parts[0].root.text


async def send(base_url: str, msg: Message, *, streaming: bool) -> tuple[list, Task]:
    """Resolves the card as 0.3 clients do (no A2A-Version), sends `msg`, and reads the task
    back with tasks/get; the events and the task read back."""
    async with httpx.AsyncClient(timeout=30) as http:
        card = await A2ACardResolver(http, base_url).get_agent_card()
        client = ClientFactory(ClientConfig(httpx_client=http, streaming=streaming)).create(card)
        events = [ev async for ev in client.send_message(msg)]
        assert events, "no response"
        last = events[-1]
        assert isinstance(last, tuple), f"expected task events, got {last!r}"
        task = last[0]
        got = await client.get_task(TaskQueryParams(id=task.id))
        await client.close()
    return events, got


def test_the_card_resolves_with_its_0_3_fields(sextant: Server):
    async def go():
        async with httpx.AsyncClient(timeout=30) as http:
            return await A2ACardResolver(http, sextant.base_url).get_agent_card()

    card = run(go())
    assert card.url == f"{sextant.base_url}/api/v1/agents/echo/a2a", card
    assert card.preferred_transport == "JSONRPC"
    assert card.protocol_version == "0.3.0"
    assert card.capabilities.streaming is True
    bearer = card.security_schemes["bearer"].root
    # Read as the 1.0 shape alone, this scheme would parse as mutual TLS.
    assert isinstance(bearer, HTTPAuthSecurityScheme), bearer
    assert bearer.scheme == "Bearer"
    assert card.supports_authenticated_extended_card is True


def test_message_send_then_tasks_get(sextant: Server):
    text = f"from 0.3 {uuid.uuid4()}"
    events, got = run(send(sextant.base_url, message(text), streaming=False))
    assert len(events) == 1
    task, update = events[0]
    assert update is None
    assert task.status.state == TaskState.completed, task.status
    assert artifact_text(task) == text
    assert got.id == task.id and got.context_id == task.context_id
    assert got.status.state == TaskState.completed
    assert artifact_text(got) == text
    assert got.history[0].role == Role.user
    assert got.history[0].parts[0].root.text == text


def test_message_stream_reaches_the_completed_task(sextant: Server):
    text = f"streamed from 0.3 {uuid.uuid4()}"
    events, got = run(send(sextant.base_url, message(text), streaming=True))
    states = [t.status.state for t, _ in events]
    assert states[-1] == TaskState.completed, states
    assert artifact_text(events[-1][0]) == text
    assert got.status.state == TaskState.completed
    assert artifact_text(got) == text


def test_an_agent_role_message_is_the_caller_s_input(sextant: Server):
    text = f"sent as agent {uuid.uuid4()}"
    msg = message(text, role=Role.agent)
    _, got = run(send(sextant.base_url, msg, streaming=False))
    assert got.status.state == TaskState.completed, got.status
    assert artifact_text(got) == text
    first = got.history[0]
    assert first.message_id == msg.message_id
    assert first.role == Role.agent, "recorded with the role as sent"


def reply_as_strands_reads_it(task: Task) -> str:
    """The answer a client that prefers the status message to the artifacts shows (strands-
    agents' A2A client does): the final status message's text when it has any, else the
    artifacts' text."""
    said = "".join(
        p.root.text
        for p in (task.status.message.parts if task.status.message else [])
        if isinstance(p.root, TextPart)
    )
    if said:
        return said
    return "".join(
        p.root.text
        for a in task.artifacts or []
        for p in a.parts
        if isinstance(p.root, TextPart)
    )


@pytest.mark.parametrize("streaming", [False, True], ids=["send", "stream"])
def test_a_status_message_first_client_reads_the_reply_not_the_session_link(
    sextant: Server, streaming: bool
):
    """Issue #35: the Session link is metadata (`sessionUrl`), not text, so a client that
    reads the final status message first gets the reply, blocking and streaming."""
    text = f"the reply {uuid.uuid4()}"
    events, got = run(send(sextant.base_url, message(text), streaming=streaming))
    final, update = events[-1]
    assert final.status.state == TaskState.completed, final.status
    assert reply_as_strands_reads_it(final) == text, final
    assert reply_as_strands_reads_it(got) == text, got
    url = got.metadata["sessionUrl"]
    assert url.startswith(f"{sextant.base_url}/sessions/"), got.metadata
    if update is not None:
        assert update.metadata["sessionUrl"] == url, update
