"""Starting and stopping a real `sextant serve` (and the peers test_peers.py starts) for the
interop tests, with no A2A SDK import: both the a2a-sdk 1.3 suite (this folder) and the a2a-sdk
0.3 one (`v03/`, its own venv) use it, through conftest.py's fixtures or directly.

`start_process` runs a command and reads its stdout until a line says where it listens (no
sleeping). `start_server` runs $SEXTANT_BIN (default <repo>/target/debug/sextant) that way on a
data dir with `--port 0`; `Server.stop` sends SIGTERM and waits, and `running` stops it at the
end of a `with` block and checks that it exited cleanly. `cli` runs a `sextant` subcommand on a
data dir; `owner_token` reads the owner token a server wrote.
"""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SEXTANT_BIN = os.environ.get("SEXTANT_BIN") or str(REPO / "target" / "debug" / "sextant")
LISTEN_RE = re.compile(r"^sextant: listening on (http://127\.0\.0\.1:(\d+))$")
STARTUP_TIMEOUT_S = float(os.environ.get("SEXTANT_STARTUP_TIMEOUT", "60"))
SHUTDOWN_TIMEOUT_S = 20.0


@dataclass
class Server:
    base_url: str
    proc: subprocess.Popen
    stderr_path: Path
    data_dir: Path

    def stderr_tail(self, n: int = 40) -> str:
        try:
            lines = self.stderr_path.read_text(errors="replace").splitlines()
        except OSError:
            return "<no stderr>"
        return "\n".join(lines[-n:])

    def stop(self) -> int:
        """SIGTERM, then wait; returns the exit code (kills and fails after a timeout)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=SHUTDOWN_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError(
                    f"sextant did not exit within {SHUTDOWN_TIMEOUT_S}s of SIGTERM\n"
                    + self.stderr_tail()
                )
        return self.proc.returncode


def start_process(
    argv: list[str], stderr_path: Path, listen_re: re.Pattern[str], *, cwd: Path | None = None
) -> tuple[subprocess.Popen, re.Match[str]]:
    """Runs `argv` (stderr to `stderr_path`) until a stdout line matches `listen_re`: the process
    and the match. Stdout is read for the process's whole life, so the pipe never fills up. Fails
    the test, with the stderr tail, if the process exits first or prints no such line in time."""
    stderr_file = open(stderr_path, "wb")  # noqa: SIM115 - handed to the child
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=stderr_file,
        text=True,
        bufsize=1,
    )
    stderr_file.close()

    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line.rstrip("\r\n"))
        lines.put(None)

    threading.Thread(target=pump, name=f"{Path(argv[0]).name}-stdout", daemon=True).start()

    def tail() -> str:
        try:
            return "\n".join(stderr_path.read_text(errors="replace").splitlines()[-40:])
        except OSError:
            return "<no stderr>"

    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    seen: list[str] = []
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            proc.kill()
            proc.wait()
            pytest.fail(
                f"{argv[0]} printed no listening line within {STARTUP_TIMEOUT_S}s; "
                f"stdout so far: {seen!r}\nstderr:\n{tail()}"
            )
        try:
            line = lines.get(timeout=remaining)
        except queue.Empty:
            continue
        if line is None:
            proc.wait()
            pytest.fail(
                f"{argv[0]} exited (code {proc.returncode}) before listening; "
                f"stdout: {seen!r}\nstderr:\n{tail()}"
            )
        seen.append(line)
        m = listen_re.match(line)
        if m:
            return proc, m


def start_server(data_dir: Path, log_dir: Path, *extra: str) -> Server:
    if not os.access(SEXTANT_BIN, os.X_OK):
        pytest.fail(
            f"sextant binary not found or not executable: {SEXTANT_BIN} "
            "(build it with `cargo build`, or set SEXTANT_BIN)"
        )
    data_dir.mkdir(parents=True, exist_ok=True)
    log_dir.mkdir(parents=True, exist_ok=True)
    if "--conformance" not in extra and not (data_dir / "agents.toml").exists():
        # These tests talk to the built-in echo agent through the default card (the
        # out-of-the-box default is the shell agent, which asks before it runs anything).
        (data_dir / "agents.toml").write_text('default_agent = "echo"\n')
    stderr_path = log_dir / f"sextant-stderr-{uuid.uuid4().hex[:8]}.log"
    proc, m = start_process(
        [SEXTANT_BIN, "serve", "--data-dir", str(data_dir), "--port", "0", *extra],
        stderr_path,
        LISTEN_RE,
    )
    assert int(m.group(2)) > 0, m.group(0)
    return Server(base_url=m.group(1), proc=proc, stderr_path=stderr_path, data_dir=data_dir)


@contextmanager
def running(data_dir: Path, log_dir: Path, *extra: str) -> Iterator[Server]:
    """`start_server`, then at the end of the block a SIGTERM and a check that it exited 0."""
    server = start_server(data_dir, log_dir, *extra)
    try:
        yield server
    finally:
        code = server.stop()
    assert code == 0, f"sextant exited with {code} after SIGTERM\n{server.stderr_tail()}"


def cli(data_dir: Path, *args: str) -> str:
    """`sextant ARGS --data-dir DATA_DIR`: its stdout, stripped (fails on a non-zero exit)."""
    out = subprocess.run(
        [SEXTANT_BIN, *args, "--data-dir", str(data_dir)],
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return out.stdout.strip()


def owner_token(server: Server) -> str:
    return (server.data_dir / "token").read_text().strip()
