#!/usr/bin/env bash
# Runs Sextant headless (`sextant serve`) for a machine without a display: builds the web
# console first when ui/dist is missing or stale (the server embeds it at compile time), then
# `cargo run --release -p sextant -- serve` with your arguments. Open the printed URL.
#
#   ./scripts/serve.sh                      # http://127.0.0.1:9900
#   ./scripts/serve.sh --port 0 --data-dir /tmp/sx
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/toolchain.sh # the pinned Rust toolchain, without a download when stable is it

if ! command -v npm >/dev/null; then
  if [ "$(id -u)" -eq 0 ]; then SUDO=(); else SUDO=(sudo); fi
  "${SUDO[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq nodejs npm
fi
if [ ! -f ui/dist/index.html ] \
  || [ -n "$(find ui/src ui/index.html ui/package.json -newer ui/dist/index.html -print -quit)" ]; then
  echo "serve: building the web console (ui/dist)" >&2
  [ -d ui/node_modules ] || npm --prefix ui ci --no-audit --no-fund --loglevel=error
  npm --prefix ui run build >&2
fi
exec cargo run --release -p sextant -- serve "$@"
