#!/usr/bin/env bash
# Interop tests: the official Python (a2a-sdk 1.3.0) and JS (@a2a-js/sdk 1.3.0) A2A clients
# against `sextant serve`, a 0.3 client (a2a-sdk 0.3.26, in v03/) reading the card and using the
# 0.3 method names, and Sextant's outbound client (peers, a2a_* tools, the a2a engine)
# against peers built on both SDKs (test_peers.py starts tests/interop/peers/python_peer.py and
# js/peer.mjs, so `npm ci` runs before pytest), and the real `codex app-server` from npm with a
# scripted model on loopback (test_codex.py, codex/). Builds nothing: expects the binary at
# $SEXTANT_BIN (default <repo>/target/debug/sextant).
#
# Needs python3 (3.11+), node 20+ and npm. Creates tests/interop/.venv (requirements.txt) and
# tests/interop/.venv-v03 (v03/requirements.txt: a2a-sdk 0.3 and 1.3 are one package, so each
# gets its own venv) on first use, installing Debian's python3-venv first if the venv module
# is unusable and we are root; each venv is reinstalled when its requirements file changes.
#
# Exit status: 0 only if the pytest suites (1.3 and 0.3) and the node --test suite passed.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
VENV="$HERE/.venv"
VENV03="$HERE/.venv-v03"
export SEXTANT_BIN="${SEXTANT_BIN:-$REPO/target/debug/sextant}"

log() { printf 'interop: %s\n' "$*" >&2; }

if [[ ! -x "$SEXTANT_BIN" ]]; then
  log "sextant binary not found at $SEXTANT_BIN (run 'cargo build' or set SEXTANT_BIN)"
  exit 2
fi
case "$SEXTANT_BIN" in /*) ;; *) SEXTANT_BIN="$(cd "$(dirname "$SEXTANT_BIN")" && pwd)/$(basename "$SEXTANT_BIN")" ;; esac
export SEXTANT_BIN

for tool in python3 node npm; do
  command -v "$tool" >/dev/null || { log "$tool is required"; exit 2; }
done

# --- Python venvs --------------------------------------------------------------------------
venv_ok() { [[ -x "$1/bin/python" ]] && "$1/bin/python" -m pip --version >/dev/null 2>&1; }

make_venv() {
  rm -rf "$1"
  python3 -m venv "$1"
}

# ensure_venv DIR REQUIREMENTS: DIR is a venv with REQUIREMENTS installed, reinstalled only when
# that file changed since the last successful install.
ensure_venv() {
  local venv="$1" reqs="$2"
  if ! venv_ok "$venv"; then
    log "creating $venv"
    if ! make_venv "$venv" 2>"$HERE/.venv-error.log"; then
      # Debian ships the venv/ensurepip module separately (python3-venv or python3.X-venv).
      if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
        pyver="$(python3 -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
        log "python3 -m venv failed; installing python3-venv with apt-get"
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null \
          || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "python${pyver}-venv" >/dev/null
        make_venv "$venv"
      else
        cat "$HERE/.venv-error.log" >&2
        log "python3 -m venv failed; install python3-venv"
        exit 2
      fi
    fi
    rm -f "$HERE/.venv-error.log"
  fi
  local req_hash stamp
  req_hash="$(sha256sum "$reqs" | cut -d' ' -f1)"
  stamp="$venv/.requirements.sha256"
  if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$req_hash" ]]; then
    log "installing $reqs into $venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$reqs"
    echo "$req_hash" >"$stamp"
  fi
}

ensure_venv "$VENV" "$HERE/requirements.txt"
ensure_venv "$VENV03" "$HERE/v03/requirements.txt"

# --- JS client -----------------------------------------------------------------------------
log "npm ci (tests/interop/js)"
(cd "$HERE/js" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)

# --- the real Codex app-server ---------------------------------------------------------------
# test_codex.py runs @openai/codex (pinned in codex/package-lock.json) against a scripted model
# on loopback. Where npm cannot install it (no registry, an unsupported platform), the test is
# skipped with the reason printed here and in its skip message; everything else still runs.
log "npm ci (tests/interop/codex: the real codex app-server)"
if ! codex_err="$(cd "$HERE/codex" && npm ci --no-audit --no-fund --loglevel=error 2>&1 >/dev/null)"; then
  export SEXTANT_CODEX_UNAVAILABLE="npm ci in tests/interop/codex failed: $(printf '%s' "$codex_err" | tail -n 3 | tr '\n' ' ')"
  log "SKIPPING the real-Codex test: $SEXTANT_CODEX_UNAVAILABLE"
elif [[ ! -x "$HERE/codex/node_modules/.bin/codex" ]]; then
  export SEXTANT_CODEX_UNAVAILABLE="npm installed no codex binary for this platform"
  log "SKIPPING the real-Codex test: $SEXTANT_CODEX_UNAVAILABLE"
fi

# --- run every suite, report all ----------------------------------------------------------
status=0
log "pytest (SEXTANT_BIN=$SEXTANT_BIN)"
(cd "$HERE" && "$VENV/bin/python" -m pytest -q) || status=1

log "pytest v03 (a2a-sdk 0.3)"
(cd "$HERE/v03" && "$VENV03/bin/python" -m pytest -q) || status=1

log "node --test"
(cd "$HERE/js" && node --test) || status=1

if [[ $status -ne 0 ]]; then
  log "FAILED"
else
  log "all interop tests passed"
fi
exit $status
