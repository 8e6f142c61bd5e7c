#!/usr/bin/env bash
# Runs the Sextant desktop app on this machine: installs its Debian packages if missing
# (scripts/install-desktop-deps.sh: WebKitGTK, GTK, appindicator; node/npm for the UI), builds
# the web console if ui/dist is missing or older than ui/src, then `cargo run -p sextant-app`.
#
#   ./scripts/desktop.sh             # debug build (first build: a few minutes)
#   ./scripts/desktop.sh --release   # optimised build (first build: ~30 minutes on 2 cores: whole-program LTO)
#
# Extra arguments go to `cargo run`. SEXTANT_DATA_DIR picks the data dir (default
# ~/.local/share/sextant, shared with `sextant serve`). Needs a display; on a machine without
# one, run `cargo run --release -p sextant -- serve` and open the printed URL instead.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/toolchain.sh # the pinned Rust toolchain, without a download when stable is it

bash scripts/install-desktop-deps.sh
if ! command -v npm >/dev/null; then
  if [ "$(id -u)" -eq 0 ]; then SUDO=(); else SUDO=(sudo); fi
  "${SUDO[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq nodejs npm
fi

# The server embeds ui/dist when it is compiled: build the UI first when it is missing or stale.
if [ ! -f ui/dist/index.html ] \
  || [ -n "$(find ui/src ui/index.html ui/package.json -newer ui/dist/index.html -print -quit)" ]; then
  echo "desktop: building the web console (ui/dist)"
  [ -d ui/node_modules ] || npm --prefix ui ci --no-audit --no-fund --loglevel=error
  npm --prefix ui run build
fi

if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ]; then
  echo "desktop: no display (DISPLAY / WAYLAND_DISPLAY unset). Headless instead:" >&2
  echo "  cargo run --release -p sextant -- serve   # then open the printed URL" >&2
  exit 1
fi
exec cargo run -p sextant-app "$@"
