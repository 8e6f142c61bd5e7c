"""Interop: the official Python A2A client (a2a-sdk 1.3.0) against a real `sextant serve`.

The server binary is $SEXTANT_BIN (default <repo>/target/debug/sextant). Each module-scoped
fixture starts it on a fresh temporary data dir with `--port 0`, reads stdout until the
`sextant: listening on http://127.0.0.1:PORT` line (no sleeping), and stops it with SIGTERM
(see `sextant_process`).

Run through tests/interop/run.sh, or directly:
    tests/interop/.venv/bin/python -m pytest tests/interop -q
"""

from __future__ import annotations

import asyncio
import re
import uuid
from pathlib import Path

import httpx
import pytest

from a2a.client import ClientConfig, create_client
from a2a.types import (
    GetTaskRequest,
    ListTasksRequest,
    Message,
    Part,
    Role,
    SendMessageRequest,
    TaskState,
)
from a2a.utils.errors import TaskNotFoundError

from sextant_process import Server, start_server  # the `sextant` fixture: conftest.py


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def run(coro):
    return asyncio.run(coro)


# The binding the SDK client picks from the card: JSON-RPC unless a test asks for the
# `binding` fixture, which runs it once per binding the card lists.
BINDINGS = ["JSONRPC", "HTTP+JSON"]
_binding = ["JSONRPC"]
_paths: list[str] = []  # the URL path of every request the SDK clients made


@pytest.fixture(params=BINDINGS)
def binding(request):
    _binding[0] = request.param
    _paths.clear()
    yield request.param
    _binding[0] = "JSONRPC"
    # The client really went over the binding under test (the card lists both).
    a2a = [p for p in _paths if "/.well-known/" not in p]
    assert a2a, "the test made no A2A call through the SDK client"
    if request.param == "HTTP+JSON":
        assert not any(p.endswith("/a2a") for p in a2a), a2a
    else:
        assert all(p.endswith("/a2a") for p in a2a), a2a


async def _seen(request: httpx.Request) -> None:
    _paths.append(request.url.path)


def cfg(*, streaming: bool) -> ClientConfig:
    """The client config every SDK call here uses: the current binding, and only it, on an
    httpx client that notes each request's path (the client closes it)."""
    return ClientConfig(
        streaming=streaming,
        supported_protocol_bindings=[_binding[0]],
        httpx_client=httpx.AsyncClient(timeout=30, event_hooks={"request": [_seen]}),
    )


def user_message(text: str, *, context_id: str | None = None, message_id: str | None = None) -> Message:
    msg = Message(
        message_id=message_id or f"py-{uuid.uuid4()}",
        role=Role.ROLE_USER,
        parts=[Part(text=text)],
    )
    if context_id:
        msg.context_id = context_id
    return msg


async def collect(client, msg: Message) -> list:
    return [ev async for ev in client.send_message(SendMessageRequest(message=msg))]


async def send_blocking(base_url: str, msg: Message):
    """Non-streaming SendMessage through the official client; returns the Task."""
    async with await create_client(base_url, client_config=cfg(streaming=False)) as client:
        events = await collect(client, msg)
    assert len(events) == 1, f"non-streaming send yields one response, got {len(events)}"
    assert events[0].WhichOneof("payload") == "task", events[0]
    return events[0].task


def echo_artifact_text(task) -> str:
    echo = [a for a in task.artifacts if a.name == "echo"]
    assert len(echo) == 1, f"expected exactly one artifact named 'echo', got {list(task.artifacts)}"
    parts = list(echo[0].parts)
    assert parts, "echo artifact has no parts"
    assert parts[0].WhichOneof("content") == "text", parts[0]
    return parts[0].text


def session_id(task) -> str:
    assert "sessionId" in task.metadata, f"task metadata lacks sessionId: {task.metadata}"
    sid = task.metadata["sessionId"]
    assert isinstance(sid, str) and sid, f"sessionId must be a non-empty string, got {sid!r}"
    return sid


def rpc(url: str, method: str, params: dict, *, version: str | None = "1.0") -> dict:
    headers = {"Content-Type": "application/json"}
    if version is not None:
        headers["A2A-Version"] = version
    body = {"jsonrpc": "2.0", "id": str(uuid.uuid4()), "method": method, "params": params}
    r = httpx.post(url, json=body, headers=headers, timeout=30)
    assert r.status_code == 200, (r.status_code, r.text)
    doc = r.json()
    assert doc.get("jsonrpc") == "2.0" and doc.get("id") == body["id"], doc
    return doc


def card(base_url: str, path: str = "/.well-known/agent-card.json") -> dict:
    r = httpx.get(base_url + path, timeout=30)
    assert r.status_code == 200, (r.status_code, r.text)
    assert r.headers["content-type"].startswith("application/json"), r.headers
    return r.json()


def rpc_url(server: Server) -> str:
    return card(server.base_url)["supportedInterfaces"][0]["url"]


# ---------------------------------------------------------------------------
# tests
# ---------------------------------------------------------------------------


def test_agent_cards(sextant: Server):
    default = card(sextant.base_url)
    iface = default["supportedInterfaces"][0]
    m = re.fullmatch(re.escape(sextant.base_url) + r"/api/v1/agents/([^/]+)/a2a", iface["url"])
    assert m, f"unexpected interface url {iface['url']!r}"
    agent_id = m.group(1)
    assert agent_id == "echo"
    assert iface["protocolBinding"] == "JSONRPC"
    assert iface["protocolVersion"] == "1.0"
    assert default["capabilities"]["streaming"] is True
    assert default.get("name")

    per_agent = card(sextant.base_url, f"/api/v1/agents/{agent_id}/.well-known/agent-card.json")
    assert per_agent["supportedInterfaces"][0]["url"] == iface["url"]
    assert per_agent["name"] == default["name"]


def test_send_message_non_streaming(sextant: Server, binding: str):
    text = f"hello from python {uuid.uuid4()}"
    msg = user_message(text)
    task = run(send_blocking(sextant.base_url, msg))
    assert task.id
    assert task.context_id
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert echo_artifact_text(task) == text
    session_id(task)
    if task.history:
        assert any(h.message_id == msg.message_id for h in task.history)


def test_send_message_via_per_agent_card(sextant: Server, binding: str):
    """create_client on the per-agent base URL resolves <base>/.well-known/agent-card.json there."""
    text = f"per-agent {uuid.uuid4()}"
    task = run(send_blocking(sextant.base_url + "/api/v1/agents/echo", user_message(text)))
    assert task.status.state == TaskState.TASK_STATE_COMPLETED
    assert echo_artifact_text(task) == text


def test_send_message_streaming(sextant: Server, binding: str):
    text = f"stream me {uuid.uuid4()}"

    async def go():
        async with await create_client(
            sextant.base_url, client_config=cfg(streaming=True)
        ) as client:
            return await collect(client, user_message(text))

    events = run(go())
    kinds = [e.WhichOneof("payload") for e in events]
    assert kinds[0] == "task", f"first stream event must be the task, got {kinds}"
    task = events[0].task
    assert task.id and task.context_id
    assert task.status.state not in (
        TaskState.TASK_STATE_FAILED,
        TaskState.TASK_STATE_CANCELED,
        TaskState.TASK_STATE_REJECTED,
    )
    assert "status_update" in kinds, f"expected status updates, got {kinds}"
    assert set(kinds) <= {"task", "status_update", "artifact_update"}, kinds

    # Every update belongs to this task; states only move forward to COMPLETED.
    artifacts: dict[str, list] = {}
    names: dict[str, str] = {}
    states = []
    for ev in events[1:]:
        kind = ev.WhichOneof("payload")
        if kind == "task":
            assert ev.task.id == task.id
            states.append(ev.task.status.state)
            continue
        upd = getattr(ev, kind)
        assert upd.task_id == task.id, (kind, upd.task_id, task.id)
        assert upd.context_id == task.context_id
        if kind == "status_update":
            states.append(upd.status.state)
        else:
            aid = upd.artifact.artifact_id
            assert aid
            if upd.append and aid in artifacts:
                artifacts[aid].extend(upd.artifact.parts)
            else:
                artifacts[aid] = list(upd.artifact.parts)
            if upd.artifact.name:
                names[aid] = upd.artifact.name
    assert states, "no status seen after the initial task"
    assert states[-1] == TaskState.TASK_STATE_COMPLETED, f"stream must end COMPLETED, states={states}"
    assert TaskState.TASK_STATE_COMPLETED not in states[:-1], f"events after COMPLETED: {states}"
    last = events[-1]
    assert last.WhichOneof("payload") in ("status_update", "task")

    # The echo text arrives either as an artifact update or in a final task snapshot.
    echo_ids = [aid for aid, n in names.items() if n == "echo"]
    if echo_ids:
        assert len(echo_ids) == 1, names
        parts = artifacts[echo_ids[0]]
        assert parts[0].text == text
    else:
        assert last.WhichOneof("payload") == "task", "no echo artifact in the stream"
        assert echo_artifact_text(last.task) == text

    # The stored task agrees with what was streamed.
    async def get():
        async with await create_client(sextant.base_url, client_config=cfg(streaming=False)) as c:
            return await c.get_task(GetTaskRequest(id=task.id))

    stored = run(get())
    assert stored.status.state == TaskState.TASK_STATE_COMPLETED
    assert echo_artifact_text(stored) == text


def test_get_task_returns_same_task_with_history(sextant: Server, binding: str):
    text = f"remember me {uuid.uuid4()}"
    msg = user_message(text)

    async def go():
        async with await create_client(
            sextant.base_url, client_config=cfg(streaming=False)
        ) as client:
            [sent] = await collect(client, msg)
            got = await client.get_task(GetTaskRequest(id=sent.task.id))
            return sent.task, got

    sent, got = run(go())
    assert got.id == sent.id
    assert got.context_id == sent.context_id
    assert got.status.state == TaskState.TASK_STATE_COMPLETED
    assert echo_artifact_text(got) == text
    assert [a.artifact_id for a in got.artifacts] == [a.artifact_id for a in sent.artifacts]
    assert session_id(got) == session_id(sent)

    users = [h for h in got.history if h.role == Role.ROLE_USER]
    assert users, f"history has no user message: {list(got.history)}"
    mine = [h for h in users if h.message_id == msg.message_id]
    assert len(mine) == 1, f"user message {msg.message_id} not in history exactly once"
    assert mine[0].parts[0].text == text
    assert mine[0].context_id in ("", got.context_id)
    assert mine[0].task_id in ("", got.id)


def test_get_task_unknown_id_is_task_not_found(sextant: Server, binding: str):
    async def go():
        async with await create_client(
            sextant.base_url, client_config=cfg(streaming=False)
        ) as client:
            await client.get_task(GetTaskRequest(id=f"no-such-task-{uuid.uuid4()}"))

    with pytest.raises(TaskNotFoundError):
        run(go())


def test_multi_turn_same_context_same_session(sextant: Server, binding: str):
    first = run(send_blocking(sextant.base_url, user_message("turn one")))
    second = run(
        send_blocking(
            sextant.base_url, user_message("turn two", context_id=first.context_id)
        )
    )
    assert second.context_id == first.context_id
    assert second.id != first.id, "a completed task is immutable: a follow-up makes a new task"
    assert second.status.state == TaskState.TASK_STATE_COMPLETED
    assert echo_artifact_text(second) == "turn two"
    assert session_id(second) == session_id(first)

    other = run(send_blocking(sextant.base_url, user_message("another conversation")))
    assert other.context_id != first.context_id
    assert session_id(other) != session_id(first)


def test_list_tasks(sextant: Server, binding: str):
    a = run(send_blocking(sextant.base_url, user_message("list me A")))
    b = run(send_blocking(sextant.base_url, user_message("list me B", context_id=a.context_id)))
    unrelated = run(send_blocking(sextant.base_url, user_message("list me elsewhere")))

    async def go():
        async with await create_client(
            sextant.base_url, client_config=cfg(streaming=False)
        ) as client:
            everything = await client.list_tasks(ListTasksRequest(page_size=100))
            in_ctx = await client.list_tasks(ListTasksRequest(context_id=a.context_id))
            page1 = await client.list_tasks(ListTasksRequest(context_id=a.context_id, page_size=1))
            page2 = await client.list_tasks(
                ListTasksRequest(
                    context_id=a.context_id, page_size=1, page_token=page1.next_page_token
                )
            )
            with_art = await client.list_tasks(
                ListTasksRequest(context_id=a.context_id, include_artifacts=True)
            )
            return everything, in_ctx, page1, page2, with_art

    everything, in_ctx, page1, page2, with_art = run(go())

    all_ids = {t.id for t in everything.tasks}
    assert {a.id, b.id, unrelated.id} <= all_ids
    assert everything.total_size >= 3

    assert {t.id for t in in_ctx.tasks} == {a.id, b.id}
    assert in_ctx.total_size == 2
    assert in_ctx.next_page_token == ""
    for t in in_ctx.tasks:
        assert t.context_id == a.context_id
        assert t.status.state == TaskState.TASK_STATE_COMPLETED
        assert len(t.artifacts) == 0, "artifacts must be omitted unless includeArtifacts"
    stamps = [t.status.timestamp.ToNanoseconds() for t in in_ctx.tasks]
    assert stamps == sorted(stamps, reverse=True), "ListTasks sorts by status timestamp, newest first"

    assert len(page1.tasks) == 1 and page1.next_page_token
    assert len(page2.tasks) == 1 and page2.next_page_token == ""
    assert {page1.tasks[0].id, page2.tasks[0].id} == {a.id, b.id}

    by_id = {t.id: t for t in with_art.tasks}
    assert echo_artifact_text(by_id[a.id]) == "list me A"
    assert echo_artifact_text(by_id[b.id]) == "list me B"


def test_raw_jsonrpc_wire_shapes(sextant: Server):
    """ProtoJSON on the wire: enum strings, flattened oneofs, no `kind`, artifacts absent in lists."""
    url = rpc_url(sextant)
    text = f"raw {uuid.uuid4()}"
    doc = rpc(
        url,
        "SendMessage",
        {"message": {"messageId": f"raw-{uuid.uuid4()}", "role": "ROLE_USER", "parts": [{"text": text}]}},
    )
    assert "error" not in doc, doc
    task = doc["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z", task["status"]["timestamp"])
    [echo] = [a for a in task["artifacts"] if a.get("name") == "echo"]
    assert echo["artifactId"]
    assert echo["parts"][0]["text"] == text
    assert "kind" not in task
    assert isinstance(task["metadata"]["sessionId"], str)

    listed = rpc(url, "ListTasks", {"contextId": task["contextId"]})["result"]
    assert [t["id"] for t in listed["tasks"]] == [task["id"]]
    assert "artifacts" not in listed["tasks"][0]
    assert listed["nextPageToken"] == ""
    assert listed["totalSize"] == 1

    missing = rpc(url, "GetTask", {"id": f"nope-{uuid.uuid4()}"})
    assert missing["error"]["code"] == -32001, missing


def test_restart_keeps_tasks_and_sigterm_is_graceful(tmp_path: Path):
    """Tasks live in the data dir: after a SIGTERM (exit 0) and a restart GetTask still finds them."""
    data = tmp_path / "data"
    first = start_server(data, tmp_path / "logs")
    try:
        text = f"persist {uuid.uuid4()}"
        sent = run(send_blocking(first.base_url, user_message(text)))
    finally:
        code = first.stop()
    assert code == 0, f"exit code after SIGTERM: {code}\n{first.stderr_tail()}"

    second = start_server(data, tmp_path / "logs")
    try:

        async def go():
            async with await create_client(
                second.base_url, client_config=cfg(streaming=False)
            ) as client:
                return await client.get_task(GetTaskRequest(id=sent.id))

        got = run(go())
        assert got.status.state == TaskState.TASK_STATE_COMPLETED
        assert echo_artifact_text(got) == text
        assert session_id(got) == session_id(sent)
    finally:
        code = second.stop()
    assert code == 0, f"exit code after SIGTERM: {code}\n{second.stderr_tail()}"


def test_conformance_agent(tmp_path: Path):
    """--conformance makes the default agent follow the a2a-tck SUT contract (messageId prefixes)."""
    server = start_server(tmp_path / "data", tmp_path / "logs", "--conformance")
    try:
        url = rpc_url(server)
        assert "/api/v1/agents/conformance/a2a" in url, url

        done = run(send_blocking(server.base_url, user_message("hi", message_id=f"tck-complete-task-{uuid.uuid4()}")))
        assert done.status.state == TaskState.TASK_STATE_COMPLETED
        agent_texts = [
            p.text
            for m in [done.status.message, *done.history]
            if m.role == Role.ROLE_AGENT
            for p in m.parts
        ]
        assert "Hello from TCK" in agent_texts, (done.status, list(done.history))

        waiting = run(send_blocking(server.base_url, user_message("hi", message_id=f"tck-input-required-{uuid.uuid4()}")))
        assert waiting.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    finally:
        code = server.stop()
    assert code == 0, f"exit code after SIGTERM: {code}\n{server.stderr_tail()}"


def test_new_text_message_sent_as_the_sdk_tutorial_does(sextant: Server, binding: str):
    """The SDK's `new_text_message()` makes a ROLE_AGENT message unless told otherwise, and
    clients send it as is. Here on the SDK tutorial's path: `A2ACardResolver` on a plain httpx
    client (no `A2A-Version`, so the card also has its 0.3 fields, which this 1.0 reader maps
    back or skips), then `ClientFactory`. Sextant hears it as the caller's input and keeps the
    role as sent."""
    from a2a.client import A2ACardResolver, ClientFactory
    from a2a.helpers import new_text_message

    text = f"helper {uuid.uuid4()}"

    async def go():
        async with httpx.AsyncClient(timeout=30) as http:
            card = await A2ACardResolver(httpx_client=http, base_url=sextant.base_url).get_agent_card()
        client = ClientFactory(cfg(streaming=False)).create(card)
        try:
            msg = new_text_message(text)
            events = [ev async for ev in client.send_message(SendMessageRequest(message=msg))]
            got = await client.get_task(GetTaskRequest(id=events[0].task.id))
        finally:
            await client.close()
        return card, msg, events, got

    card, msg, events, got = run(go())
    assert msg.role == Role.ROLE_AGENT, "the helper's default role"
    first = card.supported_interfaces[0]
    assert (first.protocol_binding, first.protocol_version) == ("JSONRPC", "1.0"), card
    assert card.security_schemes["bearer"].http_auth_security_scheme.scheme == "Bearer"
    assert card.capabilities.extended_agent_card
    assert len(events) == 1 and events[0].WhichOneof("payload") == "task", events
    task = events[0].task
    assert task.status.state == TaskState.TASK_STATE_COMPLETED, task.status
    assert echo_artifact_text(task) == text
    assert got.history[0].message_id == msg.message_id
    assert got.history[0].role == Role.ROLE_AGENT, "recorded with the role as sent"


def test_shell_approval_seen_by_the_official_client(sextant: Server, binding: str):
    """The shell agent waits in AUTH_REQUIRED with a data part describing the interaction; the
    person answers over REST with their own token; GetTask then shows the completed task."""
    from a2a.types import GetTaskRequest
    from google.protobuf.json_format import MessageToDict

    shell_base = sextant.base_url + "/api/v1/agents/shell"
    task = run(send_blocking(shell_base, user_message("echo approved-by-a-person")))
    assert task.status.state == TaskState.TASK_STATE_AUTH_REQUIRED, task.status

    parts = [MessageToDict(p) for p in task.status.message.parts]
    data = [p["data"] for p in parts if "data" in p]
    assert len(data) == 1, parts
    interaction = data[0]["interaction"]
    assert [o["id"] for o in interaction["options"]] == ["accept", "acceptForSession", "decline", "cancel"]
    assert interaction["kind"] == "tool_approval"
    assert interaction["command"] == "echo approved-by-a-person"
    assert interaction["taskId"] == task.id
    assert interaction["answerUrl"].startswith(sextant.base_url + "/api/v1/interactions/")

    token = (sextant.data_dir / "token").read_text().strip()
    r = httpx.post(
        interaction["answerUrl"],
        json={
            "task_id": task.id,
            "interaction_id": interaction["interactionId"],
            "option": "accept",
            "message_id": f"answer-{uuid.uuid4()}",
        },
        headers={"Authorization": f"Bearer {token}"},
        timeout=30,
    )
    assert r.status_code == 200, r.text

    async def final_task():
        from a2a.types import SubscribeToTaskRequest

        async with await create_client(shell_base, client_config=cfg(streaming=True)) as client:
            try:
                # Follows the task until it is terminal (no polling).
                async for _ in client.subscribe(SubscribeToTaskRequest(id=task.id)):
                    pass
            except Exception:  # noqa: BLE001 - already terminal: subscribing is refused
                pass
            return await client.get_task(GetTaskRequest(id=task.id))

    done = run(final_task())
    assert done.status.state == TaskState.TASK_STATE_COMPLETED, done.status
    outputs = [p.text for a in done.artifacts for p in a.parts if p.WhichOneof("content") == "text"]
    assert outputs and outputs[0] == "approved-by-a-person\n", outputs
