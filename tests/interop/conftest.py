"""Fixtures shared by the interop suites. The a2a-sdk 0.3 suite (`v03/`, its own venv) loads
this file too (its pytest.ini sets `--confcutdir=..`), so it imports no A2A SDK, MCP or other
package only one venv has: the launch code is `sextant_process`, which pytest can import from
here because it puts this folder on `sys.path` when it loads this file (the default `prepend`
import mode).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sextant_process import Server, running


@pytest.fixture(scope="module")
def sextant(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A `sextant serve` on a fresh data dir whose default Agent is echo, shared by one test
    module; stopped after it with SIGTERM, which must end it cleanly (exit 0)."""
    root = tmp_path_factory.mktemp("sextant")
    with running(root / "data", root / "logs") as server:
        yield server
