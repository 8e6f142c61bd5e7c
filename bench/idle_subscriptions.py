#!/usr/bin/env python3
"""Idle SubscribeToTask streams: server memory per open subscription, Sextant beside the
official JS SDK (@a2a-js/sdk 1.3.0, bench/js) and the official Python SDK (a2a-sdk 1.3.0), in
one run.

    cargo build --release -p sextant && bench/run.sh idle

(run.sh makes bench/.venv with the Python SDK and bench/js/node_modules with the JS SDK, and
runs this file with the venv's Python).

For each server: start it; create WARM + N tasks that stay open (Sextant's conformance agent
answers `tck-input-required-*` with an input-required task; the JS and Python echo peers keep a
task whose text is "hold" working); open WARM subscriptions, so one-time allocations are not
counted; read the server's RSS; open N more, each on its own HTTP/1.1 connection, in batches
of BATCH, each checked to have received its first event (the Task); wait SETTLE seconds; read
the RSS again. The figure is (RSS after - RSS before) / N, in KiB. A plain keep-alive
connection that sent one GetTask is measured the same way, to show what an open HTTP/1.1
connection itself costs. Each measurement runs on a fresh server process. Nothing here
asserts a figure.

The bare server (BARE_BIN, `crates/sextant-server/examples/bare_a2a.rs`: axum and hyper as
Sextant has them, nothing kept) keeps no tasks, so it has no subscriptions: only its
kept-open connection is measured, after one SendMessage. That is the floor of an HTTP/1.1
connection on the stack Sextant is built on.

Sextant also speaks HTTP/2 (prior knowledge, on the same port): its subscriptions are measured
a second time as streams sharing HTTP/2 connections, H2_STREAMS [100] per connection (the
server's limit of concurrent streams), so N subscriptions take N / H2_STREAMS connections.
The SDK peers serve HTTP/1.1 only.

Environment: SEXTANT_BIN [<repo>/target/release/sextant], BARE_BIN
[${CARGO_TARGET_DIR:-<repo>/target}/release/examples/bare_a2a; skipped when missing], N [1000],
WARM [100], BATCH [50], SETTLE [1] seconds, SERVERS ["sextant bare js python"], H2_STREAMS
[100], PRIME [4]: times every task is read before the first RSS reading (0: not at all). Raises its open-files limit to the hard limit (N connections per server).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlparse

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SEXTANT_BIN = os.environ.get("SEXTANT_BIN", str(REPO / "target/release/sextant"))
BARE_BIN = os.environ.get(
    "BARE_BIN", str(Path(os.environ.get("CARGO_TARGET_DIR", REPO / "target")) / "release/examples/bare_a2a")
)
N = int(os.environ.get("N", "1000"))
WARM = int(os.environ.get("WARM", "100"))
BATCH = int(os.environ.get("BATCH", "50"))
SETTLE = float(os.environ.get("SETTLE", "1"))
SERVERS = os.environ.get("SERVERS", "sextant bare js python").split()
H2_STREAMS = int(os.environ.get("H2_STREAMS", "100"))
PRIME = int(os.environ.get("PRIME", "4"))
STARTUP_TIMEOUT = 60
FIRST_EVENT_TIMEOUT = 30


def log(msg: str) -> None:
    print(f"idle-subscriptions: {msg}", file=sys.stderr, flush=True)


class Server:
    """A server process and its JSON-RPC URL."""

    def __init__(self, name: str, label: str, cmd: list[str], prefix: str, open_task) -> None:
        self.name, self.label, self.open_task = name, label, open_task
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        deadline = time.monotonic() + STARTUP_TIMEOUT
        base = None
        assert self.proc.stdout is not None
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            m = re.match(re.escape(prefix) + r"(http://127\.0\.0\.1:\d+)", line)
            if m:
                base = m.group(1)
                break
        if base is None:
            self.stop()
            sys.exit(f"{name} did not print its listening line")
        with urllib.request.urlopen(base + "/.well-known/agent-card.json", timeout=30) as r:
            self.rpc = json.load(r)["supportedInterfaces"][0]["url"]
        log(f"{name}: pid {self.proc.pid}, JSON-RPC at {self.rpc}")

    def rss_kib(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError("no VmRSS")

    def call(self, method: str, params: dict) -> dict:
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
        req = urllib.request.Request(
            self.rpc, data=body, headers={"Content-Type": "application/json", "A2A-Version": "1.0"}
        )
        with urllib.request.urlopen(req, timeout=30) as r:
            doc = json.load(r)
        if "result" not in doc:
            raise RuntimeError(f"{self.name}: {method} failed: {doc}")
        return doc["result"]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def sextant_task(server: Server, i: int) -> str:
    msg = {"role": "ROLE_USER", "messageId": f"tck-input-required-{i}", "parts": [{"text": "wait"}]}
    task = server.call("SendMessage", {"message": msg})["task"]
    assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED", task
    return task["id"]


def hold_task(server: Server, i: int) -> str:
    """A task the JS or Python echo peer keeps working until it stops (text "hold")."""
    msg = {"role": "ROLE_USER", "messageId": f"hold-{i}", "parts": [{"text": "hold"}]}
    task = server.call("SendMessage", {"message": msg, "configuration": {"returnImmediately": True}})["task"]
    assert task["status"]["state"] in ("TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"), task
    return task["id"]


def bare_call(server: Server, i: int) -> str:
    """The bare server keeps no task: a SendMessage's messageId stands in for one."""
    return f"bare-idle-{i}"


async def open_connection(server: Server, method: str, task_id: str):
    """One HTTP/1.1 connection that sent `method` for the task and read its first answer
    (the first SSE event, or the whole GetTask response), then stays open. `SendMessage`
    (the bare server): one echo under the messageId `task_id`."""
    u = urlparse(server.rpc)
    reader, writer = await asyncio.open_connection(u.hostname, u.port)
    params = {"id": task_id}
    if method == "SendMessage":
        params = {"message": {"role": "ROLE_USER", "messageId": task_id, "parts": [{"text": "hello"}]}}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).encode()
    accept = "text/event-stream" if method == "SubscribeToTask" else "application/json"
    head = (
        f"POST {u.path} HTTP/1.1\r\nHost: {u.netloc}\r\nContent-Type: application/json\r\n"
        f"A2A-Version: 1.0\r\nAccept: {accept}\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    writer.write(head.encode() + body)
    await writer.drain()
    buf = b""

    def done() -> bool:
        if method == "SubscribeToTask":
            _, _, rest = buf.partition(b"data:")
            return b"\n\n" in rest or b"\r\n\r\n" in rest
        head, sep, rest = buf.partition(b"\r\n\r\n")
        m = re.search(rb"content-length: *(\d+)", head, re.I)
        return bool(sep) and m is not None and len(rest) >= int(m.group(1))

    while not done():
        chunk = await asyncio.wait_for(reader.read(65536), FIRST_EVENT_TIMEOUT)
        if not chunk:
            raise RuntimeError(f"{server.name}: connection closed early: {buf[:300]!r}")
        buf += chunk
    # The first answer must be the task: a subscription's first event, or GetTask's result.
    if method == "SubscribeToTask":
        data = buf.partition(b"data:")[2].split(b"\n", 1)[0]
        task = json.loads(data).get("result", {}).get("task", {})
    else:
        task = json.loads(buf.partition(b"\r\n\r\n")[2]).get("result", {})
    if method == "SendMessage":
        state = task.get("task", {}).get("status", {}).get("state")
        if state != "TASK_STATE_COMPLETED":
            raise RuntimeError(f"{server.name}: SendMessage did not answer a completed task: {buf[:300]!r}")
    elif task.get("id") != task_id:
        raise RuntimeError(f"{server.name}: {method} did not answer with the task: {buf[:300]!r}")
    return reader, writer


class H2Connection:
    """One HTTP/2 connection (prior knowledge) carrying up to H2_STREAMS SubscribeToTask
    streams, each opened and read up to its first event (the Task), then left open."""

    def __init__(self, server: Server) -> None:
        import h2.config
        import h2.connection

        self.server = server
        self.url = urlparse(server.rpc)
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        self.bufs: dict[int, bytes] = {}
        self.waiting: dict[int, asyncio.Future] = {}
        self.reader = self.writer = None
        self.pump_task = None
        # Streams handed to this connection (counted when planned, before they open).
        self.planned = 0

    async def open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection(self.url.hostname, self.url.port)
        self.conn.initiate_connection()
        self.writer.write(self.conn.data_to_send())
        await self.writer.drain()
        self.pump_task = asyncio.create_task(self.pump())

    async def pump(self) -> None:
        import h2.events

        while True:
            data = await self.reader.read(65536)
            if not data:
                for f in self.waiting.values():
                    if not f.done():
                        f.set_exception(RuntimeError("HTTP/2 connection closed"))
                return
            for ev in self.conn.receive_data(data):
                if isinstance(ev, h2.events.DataReceived):
                    self.conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
                    self.bufs[ev.stream_id] = self.bufs.get(ev.stream_id, b"") + ev.data
                    rest = self.bufs[ev.stream_id].partition(b"data:")[2]
                    f = self.waiting.get(ev.stream_id)
                    if f and not f.done() and (b"\n\n" in rest or b"\r\n\r\n" in rest):
                        f.set_result(self.bufs[ev.stream_id])
                elif isinstance(ev, h2.events.StreamEnded | h2.events.StreamReset):
                    f = self.waiting.get(ev.stream_id)
                    if f and not f.done():
                        f.set_exception(RuntimeError(f"stream ended early: {self.bufs.get(ev.stream_id, b'')[:300]!r}"))
            out = self.conn.data_to_send()
            if out:
                self.writer.write(out)
                await self.writer.drain()

    async def subscribe(self, task_id: str) -> None:
        sid = self.conn.get_next_available_stream_id()
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task_id}}).encode()
        self.waiting[sid] = asyncio.get_running_loop().create_future()
        self.conn.send_headers(sid, [
            (":method", "POST"), (":scheme", "http"), (":authority", self.url.netloc), (":path", self.url.path),
            ("content-type", "application/json"), ("a2a-version", "1.0"), ("accept", "text/event-stream"),
            ("content-length", str(len(body))),
        ])
        self.conn.send_data(sid, body, end_stream=True)
        self.writer.write(self.conn.data_to_send())
        await self.writer.drain()
        buf = await asyncio.wait_for(self.waiting[sid], FIRST_EVENT_TIMEOUT)
        data = buf.partition(b"data:")[2].split(b"\n", 1)[0]
        if json.loads(data).get("result", {}).get("task", {}).get("id") != task_id:
            raise RuntimeError(f"{self.server.name}: SubscribeToTask over HTTP/2 did not answer with the task: {buf[:300]!r}")

    def close(self) -> None:
        if self.pump_task:
            self.pump_task.cancel()
        if self.writer:
            self.writer.close()


async def open_h2(server: Server, task_ids: list[str], conns: list[H2Connection]) -> None:
    """Subscriptions to `task_ids` as HTTP/2 streams, filling the last connection in `conns`
    up to H2_STREAMS before opening another."""
    for k in range(0, len(task_ids), BATCH):
        batch = []
        for t in task_ids[k : k + BATCH]:
            if not conns or conns[-1].planned >= H2_STREAMS:
                c = H2Connection(server)
                await c.open()
                conns.append(c)
            conns[-1].planned += 1
            batch.append(conns[-1].subscribe(t))
        await asyncio.gather(*batch)


async def measure(server: Server, method: str, task_ids: list[str], http2: bool = False) -> float:
    """KiB of server RSS per connection (HTTP/2: per stream) left open after `method`, over
    len(task_ids) - WARM."""
    conns = []
    h2conns: list[H2Connection] = []
    if PRIME and method != "SendMessage":
        # Every task read PRIME times, 8 at a time, before the first RSS reading, so that
        # caches the server fills on reads are as full before as after, and what is measured
        # is the connections and streams themselves. Sextant's are SQLite's page caches, 2 MiB
        # per reader connection whatever the load; its four readers take reads in turn, so one
        # pass leaves each with a part of the tasks' pages and the measured phase fills them.
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda t: server.call("GetTask", {"id": t}), task_ids * PRIME))
    if http2:
        await open_h2(server, task_ids[:WARM], h2conns)
    else:
        for t in task_ids[:WARM]:
            conns.append(await open_connection(server, method, t))
    await asyncio.sleep(SETTLE)
    before = server.rss_kib()
    rest = task_ids[WARM:]
    if http2:
        await open_h2(server, rest, h2conns)
    else:
        for k in range(0, len(rest), BATCH):
            conns += await asyncio.gather(*(open_connection(server, method, t) for t in rest[k : k + BATCH]))
    await asyncio.sleep(SETTLE)
    after = server.rss_kib()
    for c in h2conns:
        c.close()
    for _, writer in conns:
        writer.close()
    await asyncio.gather(*(w.wait_closed() for _, w in conns), return_exceptions=True)
    return (after - before) / len(rest)


def main() -> int:
    if not os.access(SEXTANT_BIN, os.X_OK):
        sys.exit(f"sextant binary not found at {SEXTANT_BIN} (cargo build --release -p sextant)")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = 2 * (N + WARM) + 256
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))
    tmp = tempfile.mkdtemp(prefix="sextant-idle-")
    kinds = [
        (
            "sextant",
            "Sextant",
            lambda data: [SEXTANT_BIN, "serve", "--conformance", "--data-dir", data, "--port", "0"],
            "sextant: listening on ",
            sextant_task,
        ),
        (
            "bare",
            "bare axum (limit)",
            lambda data: [BARE_BIN, "--port", "0"],
            "bare-a2a: listening on ",
            bare_call,
        ),
        (
            "js",
            "JS @a2a-js/sdk 1.3.0",
            lambda data: ["env", "NODE_ENV=production", "node", str(HERE / "js" / "js_echo_peer.js"), "--port", "0"],
            "js-echo-peer: listening on ",
            hold_task,
        ),
        (
            "python",
            "Python a2a-sdk 1.3.0",
            lambda data: [sys.executable, str(HERE / "python_echo_peer.py"), "--port", "0"],
            "python-echo-peer: listening on ",
            hold_task,
        ),
    ]
    rows = []
    try:
        for name, label, cmd, prefix, open_task in kinds:
            if name not in SERVERS:
                continue
            if name == "bare" and not os.access(BARE_BIN, os.X_OK):
                log(f"no bare server at {BARE_BIN}: left out")
                continue
            figures = {}
            # A fresh process per measurement: memory freed by one is not reused by the next.
            runs = [("SubscribeToTask", False), ("GetTask", False)]
            if name == "sextant":
                runs.append(("SubscribeToTask", True))
            if name == "bare":
                runs = [("SendMessage", False)]
            for method, http2 in runs:
                key = method + (" h2" if http2 else "")
                server = Server(name, label, cmd(f"{tmp}/{name}-{method}-{http2}"), prefix, open_task)
                try:
                    tasks = [open_task(server, i) for i in range(N + WARM)]
                    figures[key] = asyncio.run(measure(server, method, tasks, http2))
                    figures["rss"] = server.rss_kib() / 1024
                finally:
                    server.stop()
                per = "stream (HTTP/2)" if http2 else "connection"
                log(f"{name}: {figures[key]:.1f} KiB per {per} after {method}")
            kept_open = figures.get("GetTask", figures.get("SendMessage"))
            rows.append((label, figures.get("SubscribeToTask"), kept_open, figures.get("SubscribeToTask h2")))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"\n{N} idle connections per server, each its own HTTP/1.1 connection (KiB of server RSS each);")
    print(f"the last column: {N} SubscribeToTask streams over HTTP/2, {H2_STREAMS} per connection (KiB each);")
    print("kept open after one GetTask (the bare server: after one SendMessage, it keeps no tasks)")
    print(f"{'server':<24}{'SubscribeToTask':>17}{'GetTask, kept open':>20}{'SubscribeToTask, HTTP/2':>25}")
    for label, sub, get, h2 in rows:
        subs = "-" if sub is None else f"{sub:.1f}"
        h2s = "-" if h2 is None else f"{h2:.1f}"
        print(f"{label:<24}{subs:>17}{get:>20.1f}{h2s:>25}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
