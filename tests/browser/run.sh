#!/usr/bin/env bash
# Browser end-to-end tests of the console (see console.test.mjs): installs Debian's Chromium
# (apt) and playwright-core (npm) when missing, then drives a real `sextant serve` built with
# the UI. Screenshots land in docs/screenshots/.
#
#   SEXTANT_BIN=target/debug/sextant bash tests/browser/run.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
export SEXTANT_BIN="${SEXTANT_BIN:-$root/target/debug/sextant}"

if [ ! -x /usr/bin/chromium ]; then
  echo "==> installing chromium (Debian)"
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends chromium fonts-liberation
fi
# Another Unix user, for the test of a browser that must sign in with the token.
if [ "$(id -u)" -eq 0 ] && ! id sextant-browser-other >/dev/null 2>&1; then
  useradd --system --no-create-home --shell /usr/sbin/nologin sextant-browser-other
fi
if [ ! -x "$SEXTANT_BIN" ]; then
  echo "no sextant binary at $SEXTANT_BIN (cargo build -p sextant)" >&2
  exit 1
fi
# The binary must embed the UI, or every page is the "UI not built" note.
if [ ! -f "$root/ui/dist/index.html" ]; then
  echo "ui/dist is missing: npm --prefix ui ci && npm --prefix ui run build, then cargo build -p sextant" >&2
  exit 1
fi

cd "$here"
npm ci --no-audit --no-fund --loglevel=error
node --test --test-concurrency=1 --test-reporter=spec console.test.mjs daily.test.mjs steer.test.mjs pages.test.mjs
