"""Starting and stopping a real `sextant serve` for the interop tests, with no A2A SDK import:
both the a2a-sdk 1.3 suite (this folder) and the a2a-sdk 0.3 one (`v03/`, its own venv) use it.

`start_server` runs $SEXTANT_BIN (default <repo>/target/debug/sextant) on a data dir with
`--port 0` and reads stdout until the `sextant: listening on http://127.0.0.1:PORT` line (no
sleeping); `Server.stop` sends SIGTERM and waits.
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
    stderr_file = open(stderr_path, "wb")  # noqa: SIM115 - handed to the child
    proc = subprocess.Popen(
        [SEXTANT_BIN, "serve", "--data-dir", str(data_dir), "--port", "0", *extra],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=stderr_file,
        text=True,
        bufsize=1,
    )
    stderr_file.close()

    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        # Reads stdout for the lifetime of the process so the pipe never fills up.
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.put(line.rstrip("\r\n"))
        lines.put(None)

    threading.Thread(target=pump, name="sextant-stdout", daemon=True).start()

    server = Server(base_url="", proc=proc, stderr_path=stderr_path, data_dir=data_dir)
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    seen: list[str] = []
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            proc.kill()
            proc.wait()
            pytest.fail(
                f"sextant printed no listening line within {STARTUP_TIMEOUT_S}s; "
                f"stdout so far: {seen!r}\nstderr:\n{server.stderr_tail()}"
            )
        try:
            line = lines.get(timeout=remaining)
        except queue.Empty:
            continue
        if line is None:
            proc.wait()
            pytest.fail(
                f"sextant exited (code {proc.returncode}) before listening; "
                f"stdout: {seen!r}\nstderr:\n{server.stderr_tail()}"
            )
        seen.append(line)
        m = LISTEN_RE.match(line)
        if m:
            server.base_url = m.group(1)
            assert int(m.group(2)) > 0, line
            return server
