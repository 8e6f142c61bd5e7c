"""Interop: Sextant's outbound A2A client against real peers built on the official SDKs.

The module starts `sextant serve` (with an `a2a` gateway Agent) and four peers on 127.0.0.1:
two on the Python SDK (a2a-sdk 1.3.0, tests/interop/peers/python_peer.py; one of them always
answers input-required, one is slow) and one on the JS SDK (@a2a-js/sdk 1.3.0 + express,
tests/interop/js/peer.mjs). It drives Sextant's REST tools (`/api/v1/peers/...`) and MCP tools
(`a2a_*`) against them: discover, register (pinning), call, multi-turn, streaming and
non-streaming, orchestrate in all three modes, history, and the gateway Agent forwarding a
remote input-required to the local inbox and the answer completing it. Only loopback is used.

Run through tests/interop/run.sh (needs `cargo build -p sextant` and `npm ci` in js/ first).
"""

from __future__ import annotations

import asyncio
import re
import signal
import subprocess
import sys
import uuid
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import httpx2
import pytest
from mcp.client import ClientSession
from mcp.client.streamable_http import streamable_http_client

from sextant_process import Server, owner_token, start_process, start_server

HERE = Path(__file__).resolve().parent
PEER_RE = re.compile(r"^(?:python|js)-peer: listening on (http://127\.0\.0\.1:\d+)$")
STEP_S = 60.0

GATEWAY_TOML = """default_agent = "echo"

[[agents]]
id = "gateway"
name = "Gateway"
description = "Forwards every turn to the registered peer py-ask"
engine = { kind = "a2a", peer = "py-ask" }

[[agents]]
id = "gateway-js"
name = "Gateway to JS"
description = "Forwards every turn to the registered peer js-ask (the official JS SDK server)"
engine = { kind = "a2a", peer = "js-ask" }
"""


@dataclass
class Peer:
    name: str
    url: str
    proc: subprocess.Popen

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def seen(self) -> list[dict]:
        return httpx.get(f"{self.url}/_seen", timeout=STEP_S).json()


def start_peer(name: str, argv: list[str], cwd: Path, log_dir: Path) -> Peer:
    log_dir.mkdir(parents=True, exist_ok=True)
    proc, m = start_process(argv, log_dir / f"{name}.stderr.log", PEER_RE, cwd=cwd)
    return Peer(name=name, url=m.group(1), proc=proc)


def python_peer(name: str, log_dir: Path, *extra: str) -> Peer:
    argv = [sys.executable, str(HERE / "peers" / "python_peer.py"), "--name", name, *extra]
    return start_peer(name, argv, HERE, log_dir)


def js_peer(name: str, log_dir: Path, *extra: str) -> Peer:
    return start_peer(name, ["node", "peer.mjs", "--name", name, *extra], HERE / "js", log_dir)


@dataclass
class World:
    sextant: Server
    peers: dict[str, Peer]

    @property
    def token(self) -> str:
        return owner_token(self.sextant)

    def api(self, method: str, path: str, body: dict | None = None) -> httpx.Response:
        return httpx.request(
            method,
            f"{self.sextant.base_url}{path}",
            json=body,
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=STEP_S,
        )

    def ok(self, method: str, path: str, body: dict | None = None, status: int = 200) -> dict:
        r = self.api(method, path, body)
        assert r.status_code == status, f"{method} {path}: {r.status_code} {r.text}"
        return r.json() if r.content else {}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("sextant-peers")
    data = root / "data"
    data.mkdir()
    (data / "agents.toml").write_text(GATEWAY_TOML)
    logs = root / "logs"
    peers: dict[str, Peer] = {}
    server = None
    try:
        peers["py-echo"] = python_peer("py-echo", logs, "--skill", "summarize", "--tags", "text")
        peers["py-ask"] = python_peer("py-ask", logs, "--skill", "colors", "--mode", "ask")
        peers["py-slow"] = python_peer(
            "py-slow", logs, "--skill", "slow-summary", "--tags", "summarize", "--delay", "2"
        )
        peers["js-echo"] = js_peer("js-echo", logs, "--skill", "digest", "--tags", "summarize")
        # Its follow-up stream opens with the waiting task as a snapshot (#35 item 2).
        peers["js-ask"] = js_peer("js-ask", logs, "--skill", "colors", "--mode", "ask")
        server = start_server(data, logs)
        w = World(sextant=server, peers=peers)
        tokens = {"py-echo": "py-secret", "js-echo": "js-secret"}
        for name, peer in peers.items():
            body = {"name": name, "url": peer.url}
            if name in tokens:
                body["token"] = tokens[name]
            v = w.ok("POST", "/api/v1/peers", body, status=201)
            assert v["pin"]["hash"], v
            assert "secret" not in str(v), "tokens are never returned"
        yield w
    finally:
        if server is not None:
            code = server.stop()
            assert code == 0, f"sextant exited with {code}\n{server.stderr_tail()}"
        for p in peers.values():
            p.stop()


def test_discover_summarises_both_sdks_cards(world: World):
    for name in ["py-echo", "js-echo"]:
        peer = world.peers[name]
        d = world.ok("POST", "/api/v1/peers/discover", {"url": peer.url})
        assert d["name"] == name
        assert d["valid"] is True, d["problems"]
        assert d["problems"] == []
        assert d["capabilities"]["streaming"] is True
        assert d["jsonrpcUrl"].startswith(peer.url)
        assert d["skillsTotal"] == 1
        assert len(d["pinHash"]) == 64
        assert d["registeredAs"] == name and d["matchesPin"] is True, d


@pytest.mark.parametrize("name", ["py-echo", "js-echo"])
def test_call_streaming_and_not_and_multi_turn(world: World, name: str):
    streamed = world.ok("POST", "/api/v1/peers/call", {"agent": name, "message": "hello"})
    assert streamed["status"] == "ok", streamed
    assert streamed["reply"] == f"{name}: hello"
    assert streamed["streamed"] is True
    assert streamed["task_state"] == "TASK_STATE_COMPLETED"
    ctx = streamed["context_id"]

    plain = world.ok(
        "POST",
        "/api/v1/peers/call",
        {"agent": name, "message": "again", "context_id": ctx, "stream": False},
    )
    assert (plain["reply"], plain["streamed"], plain["context_id"]) == (f"{name}: again", False, ctx)

    # A remote question waits for the person (an inbox card), never for the caller: a2a_call
    # cannot answer it; the person's answer goes to the same remote task.
    q = world.ok("POST", "/api/v1/peers/call", {"agent": name, "message": "ask: color", "context_id": ctx})
    assert q["status"] == "waiting_for_person", q
    assert q["task_state"] == "TASK_STATE_INPUT_REQUIRED"
    assert "Which color?" in q["reply"]
    refused = world.api("POST", "/api/v1/peers/call", {"agent": name, "message": "blue", "context_id": ctx})
    assert refused.status_code == 409, refused.text
    answer_card(world, q, {"option": "reply", "values": {"reply": "blue"}})

    h = world.ok("GET", f"/api/v1/peers/conversations/{ctx}")
    said = [(m["role"], m["text"]) for m in h["messages"]]
    assert said[:5] == [
        ("user", "hello"),
        ("agent", f"{name}: hello"),
        ("user", "again"),
        ("agent", f"{name}: again"),
        ("user", "ask: color"),
    ], said
    assert said[-1][0] == "agent" and said[-1][1].endswith("you said: blue"), said
    assert h["peer"] == name

    seen = world.peers[name].seen()
    assert seen, "the peer recorded Sextant's requests"
    for s in seen:
        assert s["a2aVersion"] == "1.0", s
        assert s["a2aHop"] == "1", s
        assert s["authorization"] == f"Bearer {name.split('-')[0]}-secret", s


def answer_card(world: World, result: dict, answer: dict) -> None:
    """The person answers the inbox card an a2a_call `result` left, and waits (on the outbound
    Session's stream) until that exchange has ended."""
    card_id = result["interaction_id"]
    cards = world.ok("GET", "/api/v1/interactions")["interactions"]
    card = next(c for c in cards if c["interactionId"] == card_id)
    body = {**answer, "task_id": card["taskId"], "message_id": f"ans-{uuid.uuid4()}"}
    with httpx.stream(
        "GET",
        f"{world.sextant.base_url}/api/v1/sessions/{result['session_id']}/events",
        headers={"Authorization": f"Bearer {world.token}"},
        timeout=STEP_S,
    ) as events:
        world.ok("POST", f"/api/v1/interactions/{card_id}/answer", body)
        for line in events.iter_lines():
            if card["taskId"] in line and "TASK_STATE_COMPLETED" in line:
                return
    pytest.fail("the answered exchange did not complete")


def test_orchestrate_all_first_best(world: World):
    body = {"capability": "summarize", "message": "some text", "mode": "all"}
    all_ = world.ok("POST", "/api/v1/peers/orchestrate", body)
    assert all_["peers"] == ["js-echo", "py-echo", "py-slow"], all_
    by_peer = {r["peer"]: r for r in all_["results"]}
    assert {p: r["status"] for p, r in by_peer.items()} == {"js-echo": "ok", "py-echo": "ok", "py-slow": "ok"}
    assert by_peer["py-echo"]["skill_match"] == "skill id"
    assert by_peer["js-echo"]["skill_match"] == "skill tag"

    first = world.ok("POST", "/api/v1/peers/orchestrate", {**body, "mode": "first"})
    assert first["winner"]["peer"] in {"js-echo", "py-echo"}, first
    slow = [r for r in first["results"] if r["peer"] == "py-slow"][0]
    assert slow["status"] == "canceled", first

    best = world.ok("POST", "/api/v1/peers/orchestrate", {**body, "mode": "best"})
    assert best["winner"]["peer"] == "py-echo", best
    assert best["winner"]["reply"] == "py-echo: some text"
    assert "skill id" in best["reason"]

    listing = world.ok("GET", "/api/v1/peers")
    metrics = {p["name"]: p["metrics"] for p in listing["peers"]}
    assert metrics["py-echo"]["calls"] >= 3 and metrics["py-echo"]["failures"] == 0, metrics
    assert listing["conversations"], listing


@asynccontextmanager
async def mcp_session(world: World):
    headers = {"Authorization": f"Bearer {world.token}"}
    async with httpx2.AsyncClient(headers=headers, timeout=STEP_S) as http:
        async with streamable_http_client(
            f"{world.sextant.base_url}/api/v1/assistant-mcp", http_client=http
        ) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session


def test_mcp_tools(world: World):
    async def go():
        async with mcp_session(world) as s:
            names = {t.name for t in (await s.list_tools()).tools}
            assert {"a2a_discover", "a2a_call", "a2a_list", "a2a_history", "a2a_orchestrate"} <= names
            d = await s.call_tool("a2a_discover", {"url": world.peers["js-echo"].url})
            assert not d.is_error, d
            assert d.structured_content["name"] == "js-echo"
            c = await s.call_tool("a2a_call", {"agent": "js-echo", "message": "over mcp"})
            assert not c.is_error, c
            assert c.structured_content["reply"] == "js-echo: over mcp"
            h = await s.call_tool("a2a_history", {"context_id": c.structured_content["context_id"]})
            assert [m["text"] for m in h.structured_content["messages"]] == ["over mcp", "js-echo: over mcp"]
            lst = await s.call_tool("a2a_list", {})
            assert {p["name"] for p in lst.structured_content["peers"]} == set(world.peers)
            o = await s.call_tool(
                "a2a_orchestrate", {"capability": "summarize", "message": "mcp fan-out", "mode": "best"}
            )
            assert o.structured_content["winner"]["peer"] == "py-echo", o.structured_content
            refused = await s.call_tool("a2a_call", {"agent": "http://169.254.169.254/", "message": "x"})
            assert refused.is_error
            assert "metadata" in refused.content[0].text

    asyncio.run(go())


def rpc(world: World, agent: str, method: str, params: dict) -> dict:
    r = httpx.post(
        f"{world.sextant.base_url}/api/v1/agents/{agent}/a2a",
        json={"jsonrpc": "2.0", "id": str(uuid.uuid4()), "method": method, "params": params},
        headers={"A2A-Version": "1.0", "Authorization": f"Bearer {world.token}"},
        timeout=STEP_S,
    )
    r.raise_for_status()
    return r.json()


@pytest.mark.parametrize("agent,peer", [("gateway", "py-ask"), ("gateway-js", "js-ask")])
def test_gateway_agent_forwards_a_remote_question_to_the_inbox(world: World, agent: str, peer: str):
    """The question becomes a card; the answer completes the remote task, and is asked once:
    the JS SDK's follow-up stream opens with the old INPUT_REQUIRED snapshot, which is read
    past, not asked again."""
    sent = rpc(
        world,
        agent,
        "SendMessage",
        {"message": {"messageId": f"gw-{uuid.uuid4()}", "role": "ROLE_USER", "parts": [{"text": "pick a color"}]}},
    )
    task = sent["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", task
    data = [p["data"] for p in task["status"]["message"]["parts"] if "data" in p]
    interaction = data[0]["interaction"]
    assert [o["id"] for o in interaction["options"]] == ["reply", "cancel"], interaction
    assert "Which color?" in interaction["description"]

    inbox = world.ok("GET", "/api/v1/interactions")["interactions"]
    assert any(i["interactionId"] == interaction["interactionId"] for i in inbox), inbox

    world.ok(
        "POST",
        f"/api/v1/interactions/{interaction['interactionId']}/answer",
        {
            "task_id": task["id"],
            "option": "reply",
            "values": {"reply": "green"},
            "message_id": f"ans-{uuid.uuid4()}",
        },
    )
    # Follow the task to its end (SubscribeToTask closes at a terminal state).
    with httpx.stream(
        "POST",
        f"{world.sextant.base_url}/api/v1/agents/{agent}/a2a",
        json={"jsonrpc": "2.0", "id": 9, "method": "SubscribeToTask", "params": {"id": task["id"]}},
        headers={"A2A-Version": "1.0", "Authorization": f"Bearer {world.token}"},
        timeout=STEP_S,
    ) as r:
        for _ in r.iter_lines():
            pass
    final = rpc(world, agent, "GetTask", {"id": task["id"]})["result"]
    assert final["status"]["state"] == "TASK_STATE_COMPLETED", final
    texts = "".join(p.get("text", "") for a in final.get("artifacts", []) for p in a["parts"])
    assert "you said: green" in texts, final
    # Asked once: no second card for the same question.
    inbox = world.ok("GET", "/api/v1/interactions")["interactions"]
    assert not [i for i in inbox if i.get("taskId") == task["id"]], inbox
    hops = [s["a2aHop"] for s in world.peers[peer].seen()]
    assert hops and all(h == "1" for h in hops), hops


LATE_TOML = """default_agent = "echo"

[[agents]]
id = "late"
name = "Late"
description = "Forwards every turn to py-late, which answers after its time limit"
engine = { kind = "a2a", peer = "py-late" }
"""


def test_a_peer_that_answers_after_the_timeout_completes_the_task_even_across_a_restart(
    tmp_path: Path,
):
    """An official-SDK peer (a2a-sdk) answers 6 s after each message; Sextant reads it for 1 s
    (timeout_secs). The remote task is followed, and the late answer completes the local task —
    once without, once with a Sextant restart in the middle."""
    data = tmp_path / "data"
    data.mkdir()
    (data / "agents.toml").write_text(LATE_TOML)
    logs = tmp_path / "logs"
    peer = python_peer("py-late", logs, "--skill", "late", "--delay", "6")
    server = start_server(data, logs)
    try:
        w = World(sextant=server, peers={"py-late": peer})
        w.ok("POST", "/api/v1/peers", {"name": "py-late", "url": peer.url, "timeout_secs": 1}, status=201)

        def send(text: str) -> str:
            sent = rpc(w, "late", "SendMessage", {
                "message": {"messageId": f"late-{uuid.uuid4()}", "role": "ROLE_USER", "parts": [{"text": text}]},
                "configuration": {"returnImmediately": True},
            })
            return sent["result"]["task"]["id"]

        def follow_until(task_id: str, needle: str | None) -> None:
            """Reads the task's stream until `needle` shows (or, without one, until it ends)."""
            with httpx.stream(
                "POST",
                f"{w.sextant.base_url}/api/v1/agents/late/a2a",
                json={"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task_id}},
                headers={"A2A-Version": "1.0", "Authorization": f"Bearer {w.token}"},
                timeout=STEP_S,
            ) as r:
                for line in r.iter_lines():
                    if needle is not None and needle in line:
                        return

        def answer_of(task_id: str) -> dict:
            return rpc(w, "late", "GetTask", {"id": task_id})["result"]

        # Without a restart: the answer comes 5 s after Sextant stopped reading.
        first = send("first report")
        follow_until(first, None)
        done = answer_of(first)
        assert done["status"]["state"] == "TASK_STATE_COMPLETED", done
        assert "py-late: first report" in str(done.get("artifacts")), done

        # With a restart while Sextant follows the remote task.
        second = send("second report")
        follow_until(second, "keeps following its task")
        assert server.stop() == 0, server.stderr_tail()
        server = start_server(data, logs)
        w.sextant = server
        follow_until(second, None)
        done = answer_of(second)
        assert done["status"]["state"] == "TASK_STATE_COMPLETED", done
        assert "py-late: second report" in str(done.get("artifacts")), done
        sends = [s for s in peer.seen() if s["a2aHop"] == "1"]
        assert sends, "the peer recorded Sextant's requests"
    finally:
        server.stop()
        peer.stop()
