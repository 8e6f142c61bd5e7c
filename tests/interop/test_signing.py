"""Interop: signed Agent Cards (A2A 1.0 §8.4) between Sextant and the official SDKs, both ways.

- Sextant's cards verify with the Python SDK's verifier (a2a-sdk 1.3.0,
  a2a.utils.signing.create_signature_verifier) and the JS SDK's (@a2a-js/sdk 1.3.0,
  verifyAgentCardSignature, through js/card_signing.mjs), with the key Sextant publishes at
  /.well-known/jwks.json: a plain card, one with non-ASCII text and an empty REQUIRED field
  (where the SDKs' reading differs from the spec's, so Sextant adds a second signature), and
  after `sextant card-key rotate --alg EdDSA` on the running server. A tampered card fails in
  both.
- Cards each SDK signs (ES256 and EdDSA, the same awkward content) verify in Sextant: it
  registers them as peers, pins their key and its discover says they verify.
"""

from __future__ import annotations

import copy
import json
import subprocess
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from google.protobuf.json_format import MessageToDict, ParseDict
from jwt import PyJWK
from jwt.algorithms import ECAlgorithm, OKPAlgorithm

from a2a.types import AgentCard
from a2a.utils.signing import (
    InvalidSignaturesError,
    create_agent_card_signer,
    create_signature_verifier,
)

from sextant_process import SEXTANT_BIN, running

HERE = Path(__file__).resolve().parent
JS = HERE / "js"

# An Agent whose public card has non-ASCII text and a skill with no tags: the SDKs' reading of
# its card (empty values removed) differs from the spec's (REQUIRED fields kept).
AGENTS_TOML = """default_agent = "echo"

[[agents]]
id = "cafe"
name = "Café ☕ Agent"
description = "Grüße, 你好 and 𝄞: text beyond ASCII"
public_card = "full"
engine = { kind = "echo" }

[[agents.skills]]
id = "taste"
name = "Taste"
description = "Tastes things (no tags)"
"""


@pytest.fixture(scope="module")
def sextant(tmp_path_factory):
    root = tmp_path_factory.mktemp("signing")
    data = root / "data"
    data.mkdir()
    (data / "agents.toml").write_text(AGENTS_TOML)
    with running(data, root / "logs") as server:
        yield server


def get_json(url: str) -> dict:
    r = httpx.get(url, timeout=30)
    r.raise_for_status()
    return r.json()


def python_verifies(card: dict, jwks: dict) -> bool:
    keys = {k["kid"]: k for k in jwks["keys"]}

    def key_provider(kid, jku):
        assert jku is None, "Sextant's cards carry no jku"
        return PyJWK(keys[kid])

    verify = create_signature_verifier(key_provider, ["ES256", "EdDSA"])
    proto = ParseDict(card, AgentCard(), ignore_unknown_fields=True)
    try:
        verify(proto)
        return True
    except InvalidSignaturesError:
        return False


def js_verifies(card: dict, jwks: dict, tmp: Path) -> bool:
    c, k = tmp / f"card-{uuid.uuid4().hex}.json", tmp / f"jwks-{uuid.uuid4().hex}.json"
    c.write_text(json.dumps(card))
    k.write_text(json.dumps(jwks))
    r = subprocess.run(["node", "card_signing.mjs", "verify", str(c), str(k)], cwd=JS,
                       capture_output=True, text=True, timeout=60)
    return r.returncode == 0


def test_sextant_cards_verify_with_both_sdks(sextant, tmp_path):
    base = sextant.base_url
    for path in ["/.well-known/agent-card.json", "/api/v1/agents/cafe/.well-known/agent-card.json"]:
        card = get_json(base + path)
        jwks = get_json(base + "/.well-known/jwks.json")
        assert card["signatures"], card
        assert python_verifies(card, jwks), path
        assert js_verifies(card, jwks, tmp_path), path
        tampered = copy.deepcopy(card)
        tampered["supportedInterfaces"][0]["url"] = "https://evil.example/a2a"
        assert not python_verifies(tampered, jwks), path
        assert not js_verifies(tampered, jwks, tmp_path), path
    cafe = get_json(base + "/api/v1/agents/cafe/.well-known/agent-card.json")
    assert len(cafe["signatures"]) == 2, "the spec's reading and the SDKs' differ for this card"
    # Each signature alone: the spec-reading one is the one neither SDK checks.
    jwks = get_json(base + "/.well-known/jwks.json")
    only_spec = dict(cafe, signatures=cafe["signatures"][:1])
    only_sdk = dict(cafe, signatures=cafe["signatures"][1:])
    assert not python_verifies(only_spec, jwks) and not js_verifies(only_spec, jwks, tmp_path)
    assert python_verifies(only_sdk, jwks) and js_verifies(only_sdk, jwks, tmp_path)

    # Rotate to EdDSA on the running server: the next card is signed with it, and verifies.
    out = subprocess.run([SEXTANT_BIN, "card-key", "rotate", "--alg", "EdDSA",
                          "--data-dir", str(sextant.data_dir)],
                         capture_output=True, text=True, timeout=60, check=True)
    assert "EdDSA" in out.stderr, out
    card = get_json(base + "/.well-known/agent-card.json")
    jwks = get_json(base + "/.well-known/jwks.json")
    assert len(jwks["keys"]) == 2 and jwks["keys"][0]["alg"] == "EdDSA", jwks
    assert python_verifies(card, jwks) and js_verifies(card, jwks, tmp_path)


# ---------------------------------------------------------------------------------------------
# cards the SDKs sign, checked by Sextant
# ---------------------------------------------------------------------------------------------


def awkward_card(url: str, name: str) -> dict:
    return {
        "name": f"{name} Grüße 你好",
        "description": "A card signed by an SDK, with text beyond ASCII",
        "version": "1.0.0",
        "supportedInterfaces": [{"url": f"{url}/rpc", "protocolBinding": "JSONRPC",
                                 "protocolVersion": "1.0"}],
        "capabilities": {"streaming": False, "pushNotifications": False},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        # No tags: the SDKs sign without them, the spec's reading would keep "tags": [].
        "skills": [{"id": "s", "name": "S", "description": "x", "tags": []}],
    }


class CardServer:
    """Serves a card and a JWKS on 127.0.0.1, as a peer's origin would."""

    def __init__(self) -> None:
        self.card: dict = {}
        self.jwks: dict = {}
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                body = {"/.well-known/agent-card.json": outer.card,
                        "/.well-known/jwks.json": outer.jwks}.get(self.path)
                if body is None:
                    self.send_response(404)
                    self.end_headers()
                    return
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:  # noqa: N802
                # Registration's one harmless call (GetTask of a task that cannot exist): an
                # A2A 1.0 server answers TaskNotFound.
                length = int(self.headers.get("content-length") or 0)
                req = json.loads(self.rfile.read(length) or b"{}")
                data = json.dumps({"jsonrpc": "2.0", "id": req.get("id"),
                                   "error": {"code": -32001, "message": "Task not found"}}).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.server.shutdown()


def python_signed(card: dict, alg: str) -> tuple[dict, dict]:
    if alg == "ES256":
        key = ec.generate_private_key(ec.SECP256R1())
        jwk = json.loads(ECAlgorithm.to_jwk(key.public_key()))
    else:
        key = Ed25519PrivateKey.generate()
        jwk = json.loads(OKPAlgorithm.to_jwk(key.public_key()))
    jwk.update(kid=f"py-{alg.lower()}", alg=alg)
    sign = create_agent_card_signer(key, {"alg": alg, "kid": jwk["kid"], "typ": "JOSE"})
    signed = sign(ParseDict(card, AgentCard()))
    return MessageToDict(signed), {"keys": [jwk]}


def js_signed(card: dict, alg: str, tmp: Path) -> tuple[dict, dict]:
    p = tmp / f"unsigned-{uuid.uuid4().hex}.json"
    p.write_text(json.dumps(card))
    out = subprocess.run(["node", "card_signing.mjs", "sign", str(p), alg], cwd=JS,
                         capture_output=True, text=True, timeout=60, check=True)
    v = json.loads(out.stdout)
    return v["card"], v["jwks"]


@pytest.mark.parametrize("signer", ["python", "js"])
@pytest.mark.parametrize("alg", ["ES256", "EdDSA"])
def test_sdk_signed_cards_verify_in_sextant(sextant, tmp_path, signer, alg):
    origin = CardServer()
    try:
        unsigned = awkward_card(origin.url, signer)
        card, jwks = (python_signed(unsigned, alg) if signer == "python"
                      else js_signed(unsigned, alg, tmp_path))
        origin.card, origin.jwks = card, jwks
        token = subprocess.run([SEXTANT_BIN, "token", "--data-dir", str(sextant.data_dir)],
                               capture_output=True, text=True, check=True).stdout.strip()
        h = {"Authorization": f"Bearer {token}"}
        name = f"{signer}-{alg.lower()}"
        r = httpx.post(f"{sextant.base_url}/api/v1/peers", headers=h, timeout=30,
                       json={"name": name, "url": origin.url})
        assert r.status_code == 201, r.text
        key = r.json()["pin"]["key"]
        assert key["kid"] == jwks["keys"][0]["kid"], key
        assert key["alg"] == alg
        # The SDKs removed the empty tags before signing: the SDK reading is the one that holds.
        assert key["reading"] == "sdk", key
        d = httpx.post(f"{sextant.base_url}/api/v1/peers/discover", headers=h, timeout=30,
                       json={"url": name}).json()
        assert d["signature"]["verified"] is True, d
        # A card changed after signing is refused, with the reason.
        bad = copy.deepcopy(card)
        bad["description"] = "changed after signing"
        origin.card = bad
        r = httpx.post(f"{sextant.base_url}/api/v1/peers", headers=h, timeout=30,
                       json={"name": f"{name}-bad", "url": origin.url})
        assert r.status_code == 502, r.text
        assert "does not verify" in r.json()["error"]["message"], r.text
    finally:
        origin.stop()
