#!/usr/bin/env bash
# Interop tests: the official Python (a2a-sdk 1.3.0) and JS (@a2a-js/sdk 1.3.0) A2A clients
# against `sextant serve`, and Sextant's outbound client (peers, a2a_* tools, the a2a engine)
# against peers built on both SDKs (test_peers.py starts tests/interop/peers/python_peer.py and
# js/peer.mjs, so `npm ci` runs before pytest). Builds nothing: expects the binary at
# $SEXTANT_BIN (default <repo>/target/debug/sextant).
#
# Needs python3 (3.11+), node 20+ and npm. Creates tests/interop/.venv on first use
# (installing Debian's python3-venv first if the venv module is unusable and we are root).
#
# Exit status: 0 only if both the pytest and the node --test suites passed.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
VENV="$HERE/.venv"
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

# --- Python venv ---------------------------------------------------------------------------
venv_ok() { [[ -x "$VENV/bin/python" ]] && "$VENV/bin/python" -m pip --version >/dev/null 2>&1; }

make_venv() {
  rm -rf "$VENV"
  python3 -m venv "$VENV"
}

if ! venv_ok; then
  log "creating $VENV"
  if ! make_venv 2>"$HERE/.venv-error.log"; then
    # Debian ships the venv/ensurepip module separately (python3-venv or python3.X-venv).
    if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
      pyver="$(python3 -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
      log "python3 -m venv failed; installing python3-venv with apt-get"
      apt-get update -qq
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null \
        || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "python${pyver}-venv" >/dev/null
      make_venv
    else
      cat "$HERE/.venv-error.log" >&2
      log "python3 -m venv failed; install python3-venv"
      exit 2
    fi
  fi
  rm -f "$HERE/.venv-error.log"
fi

# Reinstall only when requirements.txt changed since the last successful install.
req_hash="$(sha256sum "$HERE/requirements.txt" | cut -d' ' -f1)"
stamp="$VENV/.requirements.sha256"
if [[ ! -f "$stamp" || "$(cat "$stamp")" != "$req_hash" ]]; then
  log "installing Python requirements"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$HERE/requirements.txt"
  echo "$req_hash" >"$stamp"
fi

# --- JS client -----------------------------------------------------------------------------
log "npm ci (tests/interop/js)"
(cd "$HERE/js" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)

# --- run both suites, report both ----------------------------------------------------------
status=0
log "pytest (SEXTANT_BIN=$SEXTANT_BIN)"
(cd "$HERE" && "$VENV/bin/python" -m pytest -q) || status=1

log "node --test"
(cd "$HERE/js" && node --test) || status=1

if [[ $status -ne 0 ]]; then
  log "FAILED"
else
  log "all interop tests passed"
fi
exit $status
