#!/usr/bin/env bash
# Makes the Rust toolchain that rust-toolchain.toml pins available to rustup *without a
# download*, so the scripts work on a machine that cannot reach static.rust-lang.org (CI: only
# package registries) but has rustup's `stable` installed, as long as that stable is the pinned
# version. Run by scripts/test.sh, serve.sh and desktop.sh before their first cargo command.
#
# - the pinned toolchain (e.g. `1.95.0-<host>`) is installed: check it really is that version
#   (a hand-made link to `stable` goes stale when stable is updated) and stop;
# - else, if rustup's `stable` is the pinned version: make it available under the pinned name.
#   `rustup toolchain link` refuses official names ("invalid custom toolchain name '1.95.0'"),
#   so this writes the symlink `$RUSTUP_HOME/toolchains/1.95.0-<host>` -> stable's sysroot,
#   which rustup then treats as that release installed (checked with rustup 1.29);
# - else fail and say how to get the pinned toolchain.
#
# Idempotent; costs a few rustup/rustc calls. Without rustup (a distro rustc on PATH) the toolchain
# file is not read, so this only checks that `rustc` is the pinned version.
set -euo pipefail
cd "$(dirname "$0")/.."

want="$(sed -n 's/^channel *= *"\([^"]*\)".*/\1/p' rust-toolchain.toml)"
if [ -z "$want" ]; then
  echo "toolchain: no channel in rust-toolchain.toml" >&2
  exit 1
fi
# `rustc --version` of the pinned release starts with this (`rustc 1.95.0 (59807616e 2026-04-14)`).
want_version="rustc $want "
fail() {
  printf 'toolchain: %s\n' "$*" >&2
  printf 'toolchain: rust-toolchain.toml pins %s; install it with `rustup toolchain install %s`\n' \
    "$want" "$want" >&2
  printf '           (needs static.rust-lang.org), or make rustup'"'"'s stable that release\n' >&2
  exit 1
}

if ! command -v rustup >/dev/null; then
  have="$(rustc --version 2>/dev/null || true)"
  [[ "$have" == "$want_version"* ]] || fail "no rustup, and rustc on PATH is '${have:-missing}'"
  exit 0
fi

# rustup queries run outside the checkout: inside it, rustup resolves rust-toolchain.toml first
# and would try to download the pinned toolchain when it is missing.
cd /
toolchains="$(rustup toolchain list)"
stable="$(awk '/^stable-/ { print $1; exit }' <<<"$toolchains")"
pinned_name() { awk -v w="$want-" 'index($1, w) == 1 { print $1; exit }' <<<"$toolchains"; }

if [ -n "$(pinned_name)" ]; then
  have="$(rustc "+$(pinned_name)" --version)"
  [[ "$have" == "$want_version"* ]] \
    || fail "the installed '$(pinned_name)' is '$have' (a link to a stable that was updated?)"
  exit 0
fi

[ -n "$stable" ] || fail "neither $want nor stable is installed"
have="$(rustc "+$stable" --version)"
[[ "$have" == "$want_version"* ]] || fail "rustup's stable is '$have', not $want"
host="${stable#stable-}"
link="${RUSTUP_HOME:-$HOME/.rustup}/toolchains/$want-$host"
ln -s "$(rustc "+$stable" --print sysroot)" "$link"
echo "toolchain: $want-$host -> $stable (the installed stable is $want)" >&2
