"""The real `codex app-server` (codex-cli 0.171.0 from npm, installed by run.sh into
tests/interop/codex/node_modules) as a Sextant Agent, thinking with a scripted model on loopback
(codex/model.py, the Responses API stream), so no network and no account are involved.

One turn: the model asks Codex to run a shell command; Codex asks for approval; Sextant shows
the card as the real app-server offered it (its `acceptWithExecpolicyAmendment` — "don't ask
again for commands that start with …", a permanent rule in Codex's rules file — left off, no
`decline`, so expiry would send `cancel`); the person accepts with the card's digest; the command
runs and the turn completes. The Agent ran with its own CODEX_HOME in the data dir, which found
the person's config.toml (the model provider) through a link, and no rules file was written
anywhere.

Skipped, saying so, only when the Codex binary is not installed (npm could not install it:
run.sh prints why and sets SEXTANT_CODEX_UNAVAILABLE).
"""

from __future__ import annotations

import os
import re
import sys
import uuid
from pathlib import Path

import httpx
import pytest

from sextant_process import owner_token, running, start_process

HERE = Path(__file__).resolve().parent
CODEX_BIN = HERE / "codex" / "node_modules" / ".bin" / "codex"
MODEL_RE = re.compile(r"^model: listening on (http://127\.0\.0\.1:\d+)$")
STEP_S = 120.0


def rpc(base: str, token: str, method: str, params: dict) -> dict:
    r = httpx.post(
        f"{base}/api/v1/agents/codex/a2a",
        json={"jsonrpc": "2.0", "id": str(uuid.uuid4()), "method": method, "params": params},
        headers={"A2A-Version": "1.0", "Authorization": f"Bearer {token}"},
        timeout=STEP_S,
    )
    r.raise_for_status()
    return r.json()


def test_real_codex_asks_and_the_card_offers_only_what_it_says(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    if not os.access(CODEX_BIN, os.X_OK):
        why = os.environ.get("SEXTANT_CODEX_UNAVAILABLE", "tests/interop/codex is not installed")
        pytest.skip(f"the real codex app-server is not available ({why}); run tests/interop/run.sh")

    model, m = start_process(
        [sys.executable, str(HERE / "codex" / "model.py"), "touch made-by-codex"],
        tmp_path / "model-stderr.log",
        MODEL_RE,
    )
    try:
        # The person's Codex home: only a config naming the scripted model.
        person = tmp_path / "person-codex"
        person.mkdir()
        (person / "config.toml").write_text(
            'model = "scripted"\nmodel_provider = "scripted"\n\n'
            "[model_providers.scripted]\n"
            'name = "scripted"\n'
            f'base_url = "{m.group(1)}/v1"\n'
            'wire_api = "responses"\n'
        )
        monkeypatch.setenv("CODEX_HOME", str(person))
        work = tmp_path / "work"
        data = tmp_path / "data"
        data.mkdir()
        (data / "agents.toml").write_text(
            'default_agent = "echo"\n\n'
            "[[agents]]\n"
            'id = "codex"\n'
            'name = "Codex"\n'
            'description = "the real Codex app-server with a scripted model"\n'
            f'engine = {{ kind = "codex", binary = "{CODEX_BIN}", working_dir = "{work}", '
            'approval_policy = "untrusted", sandbox = "workspace-write" }\n'
        )
        with running(data, tmp_path / "logs") as sextant:
            token = owner_token(sextant)
            sent = rpc(sextant.base_url, token, "SendMessage", {"message": {
                "messageId": f"m-{uuid.uuid4()}", "role": "ROLE_USER",
                "parts": [{"text": "make the file"}]}})
            task = sent["result"]["task"]
            assert task["status"]["state"] == "TASK_STATE_AUTH_REQUIRED", (
                task, sextant.stderr_tail())

            cards = httpx.get(
                f"{sextant.base_url}/api/v1/interactions",
                headers={"Authorization": f"Bearer {token}"}, timeout=STEP_S,
            ).json()["interactions"]
            card = next(c for c in cards if c["taskId"] == task["id"])
            assert card["title"] == "Run this command?", card
            assert "touch made-by-codex" in card["command"], card
            # Codex offered accept, acceptWithExecpolicyAmendment and cancel: the permanent
            # rule is not offered, and with no decline the expiry default is cancel.
            assert [o["id"] for o in card["options"]] == ["accept", "cancel"], card
            assert card["defaultOption"] == "cancel", card
            assert not (work / "made-by-codex").exists()

            answer = httpx.post(
                f"{sextant.base_url}/api/v1/interactions/{card['interactionId']}/answer",
                json={"task_id": task["id"], "option": "accept",
                      "digest": card["action"]["digest"], "message_id": f"a-{uuid.uuid4()}"},
                headers={"Authorization": f"Bearer {token}"}, timeout=STEP_S,
            )
            assert answer.status_code == 200, answer.text
            # Follow the task to its end (SubscribeToTask closes at a terminal state).
            with httpx.stream(
                "POST",
                f"{sextant.base_url}/api/v1/agents/codex/a2a",
                json={"jsonrpc": "2.0", "id": 9, "method": "SubscribeToTask",
                      "params": {"id": task["id"]}},
                headers={"A2A-Version": "1.0", "Authorization": f"Bearer {token}"},
                timeout=STEP_S,
            ) as r:
                for _ in r.iter_lines():
                    pass
            final = rpc(sextant.base_url, token, "GetTask", {"id": task["id"]})["result"]
            assert final["status"]["state"] == "TASK_STATE_COMPLETED", (
                final, sextant.stderr_tail())
            texts = "".join(
                p.get("text", "") for a in final.get("artifacts", []) for p in a["parts"])
            assert "all done" in texts, final
            assert (work / "made-by-codex").exists(), "the approved command ran"

            own = data / "codex" / "codex"
            assert (own / "config.toml").resolve() == (person / "config.toml").resolve()
            assert (own / "sessions").is_dir(), "Codex kept its session in the Agent's home"
            assert not (person / "sessions").exists(), "nothing written to the person's home"
            for home in (own, person):
                assert not (home / "rules" / "default.rules").exists(), home
    finally:
        model.kill()
        model.wait()
