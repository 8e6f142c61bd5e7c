"""Interop: the official Python A2A client (a2a-sdk 1.3.0) calls a Sextant Agent with a per-peer
token and with JWTs (a delegated agent and a read-only service), against a real `sextant serve`.

The server is started with the fixture pattern of test_python_client.py, on a data dir holding
an `agents.toml` (an Agent whose access list names the peer and the JWT issuer), a
`security.toml` ([jwt], HS256 with a shared secret file) and a peer token issued beforehand with
`sextant peer-token create` (the CLI prints it once on stdout).
"""

from __future__ import annotations

import asyncio
import time
import uuid

import httpx
import jwt
import pytest

from a2a.client import ClientConfig, create_client
from a2a.types import GetTaskRequest, ListTasksRequest, SendMessageRequest, TaskState
from sextant_process import Server, cli, running
from test_python_client import user_message

ISSUER = "https://idp.interop.test"
SECRET = "interop-jwt-secret-0123456789abcdef-0123456789"

AGENTS = """
[[agents]]
id = "open"
name = "Open"
description = "interop: peers and the IdP's agents may call"
engine = { kind = "echo" }
access = { call = ["person", "anonymous-local", "peer:py-peer",
                   "jwt:https://idp.interop.test:*", "actor:https://idp.interop.test:*"] }
"""

SECURITY = f"""
[jwt]
issuer = "{ISSUER}"
audience = "sextant"
algorithm = "HS256"
secret_file = "jwt.secret"
"""


def token_for(sub: str, act: str | None = None, **extra) -> str:
    claims = {"iss": ISSUER, "aud": "sextant", "sub": sub, "exp": int(time.time()) + 600}
    if act:
        claims["act"] = {"sub": act}
    claims.update(extra)
    return jwt.encode(claims, SECRET, algorithm="HS256")


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("sextant-auth")
    data = root / "data"
    data.mkdir()
    (data / "agents.toml").write_text('default_agent = "open"\n' + AGENTS)
    (data / "security.toml").write_text(SECURITY)
    (data / "jwt.secret").write_text(SECRET)
    peer_token = cli(data, "peer-token", "create", "py-peer")
    assert peer_token.startswith("sxp_"), peer_token
    with running(data, root / "logs") as server:
        server.peer_token = peer_token  # type: ignore[attr-defined]
        yield server


def run(coro):
    return asyncio.run(coro)


async def send(base: str, token: str, text: str, *, streaming: bool = False):
    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=30)
    async with await create_client(
        base, client_config=ClientConfig(streaming=streaming, httpx_client=http)
    ) as client:
        events = [e async for e in client.send_message(SendMessageRequest(message=user_message(text)))]
        last = events[-1]
        task = last.task if last.WhichOneof("payload") == "task" else None
        if task is None or streaming:
            task = await client.get_task(GetTaskRequest(id=events[0].task.id))
        listed = await client.list_tasks(ListTasksRequest(page_size=100))
    await http.aclose()
    return task, listed


def artifact_text(task) -> str:
    return "".join(p.text for a in task.artifacts for p in a.parts if p.WhichOneof("content") == "text")


def test_peer_token_with_the_official_client(secured: Server):
    base = secured.base_url + "/api/v1/agents/open"
    text = f"hello from a peer {uuid.uuid4()}"
    task, listed = run(send(base, secured.peer_token, text))  # type: ignore[attr-defined]
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    echoed = artifact_text(task)
    # Peer text reaches the engine framed as untrusted input.
    assert echoed.startswith("[Untrusted input from peer py-peer"), echoed
    assert text in echoed
    assert [t.id for t in listed.tasks] == [task.id], "the peer lists only its own tasks"

    # Streaming too.
    task, _ = run(send(base, secured.peer_token, "streamed", streaming=True))  # type: ignore[attr-defined]
    assert task.status.state == TaskState.TASK_STATE_COMPLETED


def test_delegated_jwt_with_the_official_client(secured: Server):
    base = secured.base_url + "/api/v1/agents/open"
    a, listed_a = run(send(base, token_for("alice", act="agent-a"), "as agent a"))
    b, listed_b = run(send(base, token_for("alice", act="agent-b"), "as agent b"))
    assert a.status.state == b.status.state == TaskState.TASK_STATE_COMPLETED
    # Two agents acting for the same user are two callers.
    assert [t.id for t in listed_a.tasks] == [a.id]
    assert [t.id for t in listed_b.tasks] == [b.id]


def test_service_jwt_is_read_only_and_bad_tokens_are_401(secured: Server):
    url = secured.base_url + "/api/v1/agents/open/a2a"
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "SendMessage",
        "params": {"message": {"messageId": f"m-{uuid.uuid4()}", "role": "ROLE_USER", "parts": [{"text": "x"}]}},
    }
    svc = token_for("reporting-service")
    r = httpx.post(url, json=body, headers={"Authorization": f"Bearer {svc}"}, timeout=30)
    assert r.status_code == 200 and r.json()["error"]["code"] == -32004, r.text
    for bad in (
        token_for("alice", aud="someone-else"),
        token_for("alice", exp=int(time.time()) - 3600),
        jwt.encode({"iss": ISSUER, "aud": "sextant", "sub": "x", "exp": int(time.time()) + 60}, "another-secret-that-is-long-enough!!", algorithm="HS256"),
        "sxp_" + "0" * 64,
    ):
        r = httpx.post(url, json=body, headers={"Authorization": f"Bearer {bad}"}, timeout=30)
        assert r.status_code == 401, r.text
        assert r.headers["www-authenticate"] == "Bearer"


def test_a_revoked_peer_token_is_refused_on_the_next_call(secured: Server):
    data = secured.data_dir
    token = cli(data, "peer-token", "create", "py-temp")
    url = secured.base_url + "/api/v1/agents/echo/a2a"
    body = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}
    auth = {"Authorization": f"Bearer {token}"}
    # Not on echo's access list: the Agent does not exist for this peer.
    assert httpx.post(url, json=body, headers=auth, timeout=30).status_code == 404
    cli(data, "peer-token", "revoke", "py-temp")
    assert httpx.post(url, json=body, headers=auth, timeout=30).status_code == 401
    listing = cli(data, "peer-token", "list")
    assert "py-temp" in listing and "revoked" in listing
