"""Interop: the official Python MCP client (`mcp` 2.3.0, on httpx2) against the agents MCP
server of a real `sextant serve` (`/api/v1/assistant-mcp`).

A shell-agent task waits for approval; the client lists the tools, reads the task with
`get_agent_task` (the summary names the task id, the interaction id and the declared options),
answers it with `answer_agent_task` (an undeclared option is a tool error listing the declared
ones; `accept` goes through), and the same task then completes with the command's output.
Both the legacy handshake (`initialize`, protocol 2025-11-25) and the stateless 2026-07-28
`discover` are exercised.

Run through tests/interop/run.sh (needs `cargo build -p sextant` first).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from contextlib import asynccontextmanager

import httpx
import httpx2
import pytest
from mcp.client import ClientSession
from mcp.client.streamable_http import streamable_http_client

from sextant_process import Server, owner_token  # the `sextant` fixture: conftest.py

OPTIONS = "accept, acceptForSession, decline, cancel"
STEP_S = 30.0


def send_shell_command(server: Server, command: str) -> tuple[str, str]:
    """Blocking A2A SendMessage to the shell agent as the owner; returns (task_id,
    interaction_id) of the task waiting for approval."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {
            "message": {
                "messageId": f"py-mcp-{uuid.uuid4()}",
                "role": "ROLE_USER",
                "parts": [{"text": command}],
            }
        },
    }
    r = httpx.post(
        f"{server.base_url}/api/v1/agents/shell/a2a",
        json=body,
        headers={"A2A-Version": "1.0", "Authorization": f"Bearer {owner_token(server)}"},
        timeout=STEP_S,
    )
    r.raise_for_status()
    task = r.json()["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_AUTH_REQUIRED", task
    data = [p["data"] for p in task["status"]["message"]["parts"] if "data" in p]
    assert data, f"the waiting task carries the interaction as a data part: {task}"
    return task["id"], data[0]["interaction"]["interactionId"]


def wait_terminal(server: Server, task_id: str) -> dict:
    """SubscribeToTask until the stream closes (no polling), then GetTask."""
    headers = {"A2A-Version": "1.0", "Authorization": f"Bearer {owner_token(server)}"}
    url = f"{server.base_url}/api/v1/agents/shell/a2a"
    sub = {"jsonrpc": "2.0", "id": 2, "method": "SubscribeToTask", "params": {"id": task_id}}
    with httpx.stream("POST", url, json=sub, headers=headers, timeout=STEP_S) as r:
        for _ in r.iter_lines():
            pass  # the server closes the stream once the task is terminal
    got = {"jsonrpc": "2.0", "id": 3, "method": "GetTask", "params": {"id": task_id}}
    return httpx.post(url, json=got, headers=headers, timeout=STEP_S).json()["result"]


@asynccontextmanager
async def mcp_session(server: Server, *, token: str | None, modern: bool):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=STEP_S) as http:
        async with streamable_http_client(
            f"{server.base_url}/api/v1/assistant-mcp", http_client=http
        ) as (read, write):
            async with ClientSession(read, write) as session:
                if modern:
                    await session.discover()
                else:
                    await session.initialize()
                yield session


def texts(result) -> list[str]:
    return [c.text for c in result.content if getattr(c, "type", None) == "text"]


@pytest.mark.parametrize("modern", [False, True], ids=["initialize", "discover"])
def test_official_mcp_client_approves_a_shell_task(sextant: Server, modern: bool):
    marker = f"mcp-py-{uuid.uuid4().hex[:8]}"
    task_id, interaction_id = send_shell_command(sextant, f"echo {marker}")

    async def go():
        async with mcp_session(sextant, token=owner_token(sextant), modern=modern) as s:
            tools = (await s.list_tools()).tools
            by_name = {t.name: t for t in tools}
            assert set(by_name) == {
                "get_agent_task",
                "answer_agent_task",
                # The outbound A2A tools (test_peers.py exercises them).
                "a2a_discover",
                "a2a_call",
                "a2a_list",
                "a2a_history",
                "a2a_orchestrate",
                # The schedule tools and the assistant's peer tools (test_assistant.py).
                "list_schedules",
                "get_schedule",
                "create_schedule",
                "update_schedule",
                "enable_schedule",
                "disable_schedule",
                "run_schedule_now",
                "list_schedule_runs",
                "replay_schedule_run",
                "cancel_schedule_run",
                "backfill_schedule",
                "delete_schedule",
                "list_agent_peers",
                "issue_agent_peers",
            }
            assert set(by_name["get_agent_task"].input_schema["required"]) == {
                "agent_id",
                "task_id",
            }
            assert set(by_name["answer_agent_task"].input_schema["required"]) == {
                "agent_id",
                "task_id",
                "interaction_id",
                "answer",
                "message_id",
            }

            got = await s.call_tool("get_agent_task", {"agent_id": "shell", "task_id": task_id})
            assert not got.is_error, got
            summary, raw = texts(got)
            assert task_id in summary and interaction_id in summary, summary
            assert f"one of: {OPTIONS}" in summary, summary
            task = json.loads(raw)
            assert task["id"] == task_id
            assert task["status"]["state"] == "TASK_STATE_AUTH_REQUIRED"
            assert got.structured_content == task

            args = {
                "agent_id": "shell",
                "task_id": task_id,
                "interaction_id": interaction_id,
                "message_id": f"py-ans-{uuid.uuid4()}",
            }
            refused = await s.call_tool("answer_agent_task", {**args, "answer": "approve"})
            assert refused.is_error, refused
            assert f"choose one of: {OPTIONS}" in texts(refused)[0]

            args["message_id"] = f"py-ans-{uuid.uuid4()}"
            done = await s.call_tool("answer_agent_task", {**args, "answer": "accept"})
            assert not done.is_error, done
            out = done.structured_content
            assert out["task"]["id"] == task_id
            assert out["task"]["status"]["state"] != "TASK_STATE_AUTH_REQUIRED", out

    asyncio.run(go())

    final = wait_terminal(sextant, task_id)
    assert final["status"]["state"] == "TASK_STATE_COMPLETED", final
    output = "".join(p.get("text", "") for p in final["artifacts"][0]["parts"])
    assert marker in output, output

    async def read_back():
        async with mcp_session(sextant, token=owner_token(sextant), modern=modern) as s:
            got = await s.call_tool("get_agent_task", {"agent_id": "shell", "task_id": task_id})
            assert "TASK_STATE_COMPLETED" in texts(got)[0]
            assert "Pending interaction" not in texts(got)[0]

    asyncio.run(read_back())


def test_anonymous_mcp_caller_cannot_answer(sextant: Server):
    task_id, interaction_id = send_shell_command(sextant, "echo never-run")

    async def go():
        async with mcp_session(sextant, token=None, modern=False) as s:
            refused = await s.call_tool(
                "answer_agent_task",
                {
                    "agent_id": "shell",
                    "task_id": task_id,
                    "interaction_id": interaction_id,
                    "answer": "accept",
                    "message_id": f"py-ans-{uuid.uuid4()}",
                },
            )
            assert refused.is_error, refused
            # The owner's task is not visible to the anonymous loopback caller at all.
            assert texts(refused)[0] == "task not found"
        # The owner declines it (a task left waiting would hold up the server's shutdown).
        async with mcp_session(sextant, token=owner_token(sextant), modern=True) as s:
            declined = await s.call_tool(
                "answer_agent_task",
                {
                    "agent_id": "shell",
                    "task_id": task_id,
                    "interaction_id": interaction_id,
                    "answer": "decline",
                    "message_id": f"py-ans-{uuid.uuid4()}",
                },
            )
            assert not declined.is_error, declined

    asyncio.run(go())
    final = wait_terminal(sextant, task_id)
    assert final["status"]["state"] == "TASK_STATE_COMPLETED", final
    assert "Not run: declined" in final["status"]["message"]["parts"][0]["text"], final
