#!/usr/bin/env bash
# The whole test suite, as the README says: formatting, lints, every Rust test (unit tests and
# the end-to-end binary in tests/), then the interop tests that drive a real `sextant serve`
# with the official Python and JS A2A clients. Installs what it needs (apt/pip/npm) itself.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

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

step "cargo fmt --check"
cargo fmt --all -- --check

step "cargo clippy (warnings are errors)"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "cargo doc (broken links and doc warnings are errors)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --workspace --document-private-items --locked

step "cargo test --workspace"
cargo test --workspace --locked

step "interop: official Python and JS A2A clients against sextant serve"
cargo build -p sextant --locked
SEXTANT_BIN="$PWD/target/debug/sextant" bash tests/interop/run.sh
