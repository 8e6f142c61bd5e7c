#!/usr/bin/env bash
# Installs the Debian packages the desktop app (src-tauri, crate `sextant-app`) needs to build,
# run and be smoke-tested: WebKitGTK 4.1 + GTK 3 + the tray's appindicator (build), and Xvfb,
# xauth, xdotool, x11-utils, ImageMagick, a D-Bus session daemon and dunst (a notification
# service) for the headless smoke test in scripts/desktop-smoke.sh.
# The list is the one measured in shared/reference/tauri-linux.md §1.
#
# Idempotent: asks dpkg first and runs apt-get only for what is missing, so a second run costs
# a fraction of a second. Uses sudo when not root.
#
#   scripts/install-desktop-deps.sh            # build + run + smoke-test packages
#   scripts/install-desktop-deps.sh --run-only # only what running the app needs (no -dev)
set -euo pipefail

build_pkgs=(
  libwebkit2gtk-4.1-dev libgtk-3-dev libsoup-3.0-dev libjavascriptcoregtk-4.1-dev
  libayatana-appindicator3-dev librsvg2-dev libxdo-dev libdbus-1-dev
  build-essential pkg-config libssl-dev file
)
run_pkgs=(libwebkit2gtk-4.1-0 libgtk-3-0 libayatana-appindicator3-1)
test_pkgs=(xvfb xauth xdotool x11-utils imagemagick fonts-dejavu-core dbus-daemon dbus-bin dunst)

if [ "${1:-}" = "--run-only" ]; then
  wanted=("${run_pkgs[@]}")
else
  wanted=("${build_pkgs[@]}" "${run_pkgs[@]}" "${test_pkgs[@]}")
fi

missing=()
for p in "${wanted[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [ "$status" = "install ok installed" ] || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "desktop deps: all ${#wanted[@]} packages present"
  exit 0
fi

echo "desktop deps: installing ${missing[*]}"
if [ "$(id -u)" -eq 0 ]; then SUDO=(); else SUDO=(sudo); fi
"${SUDO[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq --no-install-recommends \
  "${missing[@]}"
