"""Interop: the person's assistant, as the official Python MCP client (`mcp` 2.3.0, on httpx2)
with an assistant's workspace token from `sextant assistant-token create`, against a real
`sextant serve` on the real clock.

- The schedule tools: a one-shot plan a few seconds ahead is created (the summary says when,
  in words, and that the assistant made it), fires, its Run is linked to its Session, it is
  replayed and deleted; another caller cannot see or manage it.
- The peer tools: the owner's Agents with a credential each and a Hermes `a2a_agents:` block
  that parses as YAML and works the way Hermes' a2a_call uses it (card under `url` with the
  bearer, then SendMessage to the card's JSON-RPC interface).
- Revoking the assistant (`sextant assistant-token revoke`) refuses its next MCP call and its
  per-Agent credentials at once.

Run through tests/interop/run.sh (needs `cargo build -p sextant` first).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from datetime import datetime, timedelta, timezone

import httpx
import httpx2
import pytest
import yaml
from mcp.client import ClientSession
from mcp.client.streamable_http import streamable_http_client

from sextant_process import Server, cli, owner_token  # the `sextant` fixture: conftest.py

STEP_S = 30.0
# The one-shot plan fires this long after it is created (real clock).
LEAD_S = 4


def owner(server: Server) -> dict[str, str]:
    return {"Authorization": f"Bearer {owner_token(server)}"}


@asynccontextmanager
async def mcp_session(server: Server, token: str | None):
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=STEP_S) as http:
        async with streamable_http_client(
            f"{server.base_url}/api/v1/assistant-mcp", http_client=http
        ) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


def text(result) -> str:
    return next(c.text for c in result.content if getattr(c, "type", None) == "text")


def completed_run_task(server: Server, deadline_s: float) -> dict:
    """Follows the owner's task-events stream until a Run's task (context `run-…`) completes."""
    event = None
    with httpx.stream(
        "GET", f"{server.base_url}/api/v1/tasks/events", headers=owner(server), timeout=deadline_s
    ) as r:
        r.raise_for_status()
        for line in r.iter_lines():
            if line.startswith("event:"):
                event = line.split(":", 1)[1].strip()
            elif line.startswith("data:") and event == "task":
                change = json.loads(line.split(":", 1)[1])
                if change["contextId"].startswith("run-") and change["state"] == "TASK_STATE_COMPLETED":
                    return change
    raise AssertionError("the task-events stream ended before a Run completed")


def test_the_assistant_schedules_for_its_owner_and_stops_when_revoked(sextant: Server):
    token = cli(sextant.data_dir, "assistant-token", "create", "py-hermes")
    assert token.startswith("sxa_")
    marker = f"interop-{uuid.uuid4().hex[:8]}"
    fire_at = (datetime.now(timezone.utc) + timedelta(seconds=LEAD_S)).strftime("%Y-%m-%dT%H:%M:%S")

    with ThreadPoolExecutor(max_workers=1) as pool:
        # Listen before the plan exists, so its Run cannot complete unseen.
        done = pool.submit(completed_run_task, sextant, STEP_S + LEAD_S)

        async def create() -> dict:
            async with mcp_session(sextant, token) as s:
                names = {t.name for t in (await s.list_tools()).tools}
                assert {
                    "list_schedules", "get_schedule", "create_schedule", "update_schedule",
                    "enable_schedule", "disable_schedule", "run_schedule_now",
                    "list_schedule_runs", "replay_schedule_run", "delete_schedule",
                    "list_agent_peers", "issue_agent_peers",
                } <= names, names
                made = await s.call_tool("create_schedule", {
                    "name": "Interop once", "prompt": marker, "agent_id": "echo",
                    "once_at": fire_at, "timezone": "UTC",
                })
                assert not made.is_error, text(made)
                summary = text(made)
                assert "made by assistant py-hermes" in summary, summary
                assert "When: Once, on " in summary and "Next: " in summary, summary
                assert made.structured_content["source"] == "assistant"
                return made.structured_content

        plan = asyncio.run(create())
        change = done.result(timeout=STEP_S + LEAD_S)

    async def follow_up() -> None:
        async with mcp_session(sextant, token) as s:
            runs = await s.call_tool("list_schedule_runs", {"schedule_id": plan["id"]})
            assert not runs.is_error, text(runs)
            run = runs.structured_content["runs"][0]
            assert run["trigger"] == "cron" and run["status"] == "completed", run
            assert run["task_id"] == change["taskId"]
            assert f"/sessions/{run['session_id']}" in text(runs)
            assert marker in (run["result"] or ""), run
            session = httpx.get(
                f"{sextant.base_url}/api/v1/sessions/{run['session_id']}",
                headers=owner(sextant), timeout=STEP_S,
            ).json()
            assert session["run"]["runId"] == run["id"], session
            replay = await s.call_tool(
                "replay_schedule_run", {"schedule_id": plan["id"], "run_id": run["id"]}
            )
            assert not replay.is_error, text(replay)
            assert replay.structured_content["trigger"] == "replay"
            got = await s.call_tool("get_schedule", {"schedule_id": plan["id"]})
            assert "finished" in text(got), text(got)
        # Another caller (the anonymous loopback one) neither sees nor manages it.
        async with mcp_session(sextant, None) as anon:
            for tool in ("get_schedule", "delete_schedule", "run_schedule_now"):
                r = await anon.call_tool(tool, {"schedule_id": plan["id"]})
                assert r.is_error and "no such schedule" in text(r), text(r)
        async with mcp_session(sextant, token) as s:
            gone = await s.call_tool("delete_schedule", {"schedule_id": plan["id"]})
            assert not gone.is_error, text(gone)

    asyncio.run(follow_up())

    # The owner's Agents as peers, the way Hermes' config reads them.
    async def peers() -> str:
        async with mcp_session(sextant, token) as s:
            issued = await s.call_tool("issue_agent_peers", {"agent_ids": ["echo"]})
            assert not issued.is_error, text(issued)
            return issued.structured_content["hermesConfig"]

    block = yaml.safe_load(asyncio.run(peers()))
    echo = block["a2a_agents"]["echo"]
    assert echo["auth"]["type"] == "bearer"
    headers = {"Authorization": f"Bearer {echo['auth']['token']}"}
    card = httpx.get(
        echo["url"].rstrip("/") + "/.well-known/agent-card.json", headers=headers, timeout=STEP_S
    )
    assert card.status_code == 200, card.text
    rpc = next(
        i["url"] for i in card.json()["supportedInterfaces"] if i["protocolBinding"] == "JSONRPC"
    )
    reply = httpx.post(
        rpc,
        headers={**headers, "A2A-Version": "1.0"},
        json={
            "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
            "params": {"message": {"messageId": f"hermes-{uuid.uuid4()}", "role": "ROLE_USER",
                                   "parts": [{"text": "hello from the peers block"}]}},
        },
        timeout=STEP_S,
    ).json()
    assert "result" in reply, reply

    # Revoked: its tools and its per-Agent credential are refused at once.
    cli(sextant.data_dir, "assistant-token", "revoke", "py-hermes")

    async def refused() -> None:
        with pytest.raises(Exception):
            async with mcp_session(sextant, token) as s:
                await s.call_tool("list_schedules", {})

    asyncio.run(refused())
    card = httpx.get(
        echo["url"].rstrip("/") + "/.well-known/agent-card.json", headers=headers, timeout=STEP_S
    )
    assert card.status_code == 401, card.text
    listing = cli(sextant.data_dir, "assistant-token", "list")
    assert "py-hermes" in listing and "revoked" in listing, listing
