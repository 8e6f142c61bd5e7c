#!/usr/bin/env bash
# The whole test suite, as the README says: formatting, lints, every Rust test (unit tests and
# the end-to-end binary in tests/), then the interop tests that drive a real `sextant serve`
# with the official Python and JS A2A clients, the browser tests, and last the desktop app
# (build + smoke test under Xvfb). Installs what it needs (apt/pip/npm) itself.
set -euo pipefail
cd "$(dirname "$0")/.."

STEPS=0
SKIPPED=()
# Each step either passes or stops the script (set -e), so reaching the end means all passed.
step() { STEPS=$((STEPS + 1)); printf '\n==> %s\n' "$*"; }

need_apt=()
command -v cc >/dev/null || need_apt+=(gcc)
command -v python3 >/dev/null || need_apt+=(python3)
python3 -c 'import venv, ensurepip' 2>/dev/null || need_apt+=(python3-venv)
command -v node >/dev/null || need_apt+=(nodejs)
command -v npm >/dev/null || need_apt+=(npm)
if [ ${#need_apt[@]} -gt 0 ]; then
  step "installing ${need_apt[*]}"
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need_apt[@]}"
fi

step "rust toolchain: the one rust-toolchain.toml pins, without a download"
bash scripts/toolchain.sh
cargo --version

step "cargo fmt --check"
cargo fmt --all -- --check

# The web UI is built before cargo: crates/sextant-server/build.rs embeds ui/dist into the
# binary (without it the server builds anyway and serves a "UI not built" page).
step "web UI: npm ci, typecheck + build, unit tests (vitest)"
npm --prefix ui ci --no-audit --no-fund --loglevel=error
npm --prefix ui run build
npm --prefix ui test

step "contracts: only ui/src/host/ imports @tauri-apps"
if grep -rl "@tauri-apps/" ui/src | grep -v '^ui/src/host/'; then
  echo "error: the files above import @tauri-apps outside ui/src/host/" >&2
  exit 1
fi

# The desktop shell (src-tauri, crate sextant-app) needs WebKitGTK: it is left out of the
# workspace-wide steps here and built, linted and smoke-tested in the desktop step at the end.
step "contracts: no crate under crates/ depends on tauri"
for dir in crates/*/; do
  crate="$(basename "$dir")"
  # Captured first: a failing `cargo tree`, or one cut short by `grep -q`, must not pass.
  tree="$(cargo tree -p "$crate" -e normal --prefix none --locked)"
  if grep -q '^tauri ' <<<"$tree"; then
    echo "error: $crate depends on tauri; only src-tauri may (see DESIGN.md, Layout)" >&2
    exit 1
  fi
done

# The wire crate, the runtime and the scheduler make no HTTP calls: outbound A2A lives in
# sextant-peers, which the runtime reaches through its `Outbound` trait (README, "Where
# things live").
step "contracts: sextant-a2a, sextant-runtime and sextant-scheduler build no HTTP client"
for crate in sextant-a2a sextant-runtime sextant-scheduler; do
  tree="$(cargo tree -p "$crate" -e normal --prefix none --locked)"
  if grep -q '^reqwest ' <<<"$tree"; then
    echo "error: $crate depends on reqwest; outbound HTTP belongs in sextant-peers" >&2
    exit 1
  fi
done

# The server's audit records are written by one layer, crate::audited (README, "Where things
# live"): a handler that built its own could drift from the same operation on another surface.
step "contracts: only crates/sextant-server/src/audited.rs writes audit records"
if grep -rlE 'audit::(Record|Outcome)|Record::new|\.audit\.record\(' crates/sextant-server/src \
  | grep -v '^crates/sextant-server/src/audited.rs$'; then
  echo "error: the files above write audit records; call crate::audited instead" >&2
  exit 1
fi

# No file of a crate imports one that imports it back (README, "Where things live"): there
# is none, and any circle fails (no --allow).
step "contracts: no import circles between the files of a crate (scripts/import-cycles.py)"
python3 scripts/import-cycles.py

# cargo-deny, pinned: installed from crates.io when missing or at another version (CI machines
# start with nothing; later runs find it in ~/.cargo/bin and skip its build: 26 minutes
# on the shared 2-core machine under load, nice -n 10).
CARGO_DENY_VERSION=0.20.2
step "cargo deny: licenses, bans, sources (deny.toml)"
if [ "$(cargo deny --version 2>/dev/null)" != "cargo-deny $CARGO_DENY_VERSION" ]; then
  cargo install --locked cargo-deny --version "=$CARGO_DENY_VERSION"
fi
cargo deny --locked check --hide-inclusion-graph licenses bans sources
# Advisories need the RustSec database, a git repository on GitHub that CI cannot reach: check
# them only when it can be fetched (bounded, so a black-holed network cannot hang the run), and
# say so in the log and in the closing line when it cannot.
if timeout 120 cargo deny --locked fetch db; then
  cargo deny --locked --offline check --hide-inclusion-graph advisories
else
  echo "advisories: SKIPPED: the RustSec database (github.com/rustsec/advisory-db) could not be" \
    "fetched; run 'cargo deny check advisories' where GitHub is reachable" >&2
  SKIPPED+=("cargo deny check advisories (no RustSec database)")
fi

step "cargo clippy (warnings are errors)"
cargo clippy --workspace --exclude sextant-app --all-targets --locked -- -D warnings

step "cargo doc (broken links and doc warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --workspace --exclude sextant-app --document-private-items --locked

# INSTA_UPDATE=no: a wire snapshot that differs (tests/e2e/wire.rs) fails the run and writes
# nothing; review shape changes locally (README, Testing).
step "cargo test --workspace (but the desktop shell)"
INSTA_UPDATE=no cargo test --workspace --exclude sextant-app --locked

# `cargo test` also regenerated the UI's TypeScript API types (ts-rs, .cargo/config.toml).
step "contracts: ui/src/bindings match the Rust types"
if ! git diff --exit-code --stat -- ui/src/bindings \
  || [ -n "$(git status --porcelain --untracked-files=all -- ui/src/bindings)" ]; then
  echo "error: ui/src/bindings is out of date with the Rust types: commit what cargo test generated" >&2
  exit 1
fi

step "interop: official Python and JS A2A clients against sextant serve"
cargo build -p sextant --locked
SEXTANT_BIN="$PWD/target/debug/sextant" bash tests/interop/run.sh

step "browser: the console in Chromium against sextant serve (playwright-core)"
SEXTANT_BIN="$PWD/target/debug/sextant" bash tests/browser/run.sh

step "desktop: system packages, build, lint, unit tests, smoke test under Xvfb (src-tauri)"
bash scripts/install-desktop-deps.sh
cargo build -p sextant-app --locked
cargo clippy -p sextant-app --all-targets --locked -- -D warnings
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps -p sextant-app --document-private-items --locked
cargo test -p sextant-app --locked
bash scripts/desktop-smoke.sh target/debug/sextant-app

# One plain closing line for whoever reads the log: every step above passed (then what was
# skipped, and why).
printf '\nsteps: %d passed, 0 failed\n' "$STEPS"
for skipped in "${SKIPPED[@]}"; do printf 'skipped: %s\n' "$skipped"; done
