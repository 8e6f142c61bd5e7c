#!/usr/bin/env bash
# Run the A2A 1.0 TCK (a2aproject/a2a-tck, branch 1.0-dev) against a local Sextant.
#
# Manual use only. Never run this in CI. The TCK's code is extracted into a scratch
# directory outside the repository and is never copied into it.
#
#   TCK_GIT_DIR=/work/.mirror/a2aproject+a2a-tck/repo scripts/run-tck.sh [run_tck.py args…]
#   e.g. scripts/run-tck.sh --level must -v -- -x
#
# Environment:
#   TCK_GIT_DIR      (required) bare git dir of a2a-tck, which must contain branch 1.0-dev
#   SEXTANT_BIN      server binary (default: target/debug/sextant, relative to the repo root)
#   TCK_REF          git ref to extract (default: 1.0-dev)
#   TCK_SUT_PATH     path appended to the SUT base URL, e.g. /api/v1/agents/conformance.
#                    The TCK reads <base><path>/.well-known/agent-card.json (default: empty)
#   TCK_REPORTS_DIR  where to copy the TCK's reports/ (default: a fresh temp dir)
#   TCK_KEEP=1       keep the scratch dir (TCK checkout, venv, server data dir, logs)
#   TCK_SETUP_ONLY=1 extract and install the TCK, then stop (no server, no run)
#   TCK_STARTUP_TIMEOUT  seconds to wait for the server's "listening" line (default: 60)
#   TCK_TRANSPORTS   the bindings to test, comma-separated (default: jsonrpc,http_json, the
#                    two Sextant serves)
#   PYTHON           Python ≥ 3.11 used to create the venv (default: python3)
#
# Exit status: the TCK's own exit status (non-zero if any MUST test failed), or 2 on a
# setup error.

set -euo pipefail

die() { printf 'run-tck: %s\n' "$*" >&2; exit 2; }

if [[ -n "${CI:-}" || -n "${GITHUB_ACTIONS:-}" ]]; then
    die "refusing to run in CI (the TCK is a manual, local-only tool)"
fi

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

: "${TCK_GIT_DIR:?set TCK_GIT_DIR to a bare git dir of a2aproject/a2a-tck}"
TCK_REF="${TCK_REF:-1.0-dev}"
PYTHON="${PYTHON:-python3}"
STARTUP_TIMEOUT="${TCK_STARTUP_TIMEOUT:-60}"
TRANSPORTS="${TCK_TRANSPORTS:-jsonrpc,http_json}"
SEXTANT_BIN="${SEXTANT_BIN:-target/debug/sextant}"
[[ "$SEXTANT_BIN" = /* ]] || SEXTANT_BIN="$REPO_ROOT/$SEXTANT_BIN"

git --git-dir="$TCK_GIT_DIR" rev-parse --verify --quiet "${TCK_REF}^{commit}" >/dev/null \
    || die "ref '$TCK_REF' not found in $TCK_GIT_DIR"
"$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' \
    || die "$PYTHON must be Python >= 3.11"
if [[ -z "${TCK_SETUP_ONLY:-}" ]]; then
    [[ -x "$SEXTANT_BIN" ]] || die "server binary not found or not executable: $SEXTANT_BIN"
fi

SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/sextant-tck.XXXXXX")"
case "$SCRATCH/" in
    "$REPO_ROOT"/*) die "scratch dir $SCRATCH is inside the repository; set TMPDIR elsewhere" ;;
esac
TCK="$SCRATCH/a2a-tck"
DATA_DIR="$SCRATCH/data"
SERVER_LOG="$SCRATCH/server.log"
mkdir -p "$TCK" "$DATA_DIR"

SERVER_PID=""
DRAIN_PID=""
cleanup() {
    local rc=$?
    if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    if [[ -n "$DRAIN_PID" ]]; then
        wait "$DRAIN_PID" 2>/dev/null || true
    fi
    if [[ -n "${TCK_KEEP:-}" ]]; then
        printf 'run-tck: scratch dir kept at %s\n' "$SCRATCH" >&2
    else
        rm -rf "$SCRATCH"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# 1. Extract the TCK and install it into its own venv.
commit="$(git --git-dir="$TCK_GIT_DIR" rev-parse "${TCK_REF}^{commit}")"
printf 'run-tck: extracting %s (%s) into %s\n' "$TCK_REF" "$commit" "$TCK"
git --git-dir="$TCK_GIT_DIR" archive --format=tar "$commit" | tar -x -C "$TCK"
[[ -f "$TCK/run_tck.py" && -d "$TCK/tests/compatibility" ]] \
    || die "$TCK_REF does not look like the 1.0 TCK (run_tck.py / tests/compatibility missing)"

printf 'run-tck: creating venv and installing the TCK (pip)\n'
"$PYTHON" -m venv "$TCK/.venv"
"$TCK/.venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "$TCK" \
    || die "pip install of the TCK failed"
"$TCK/.venv/bin/python" -c 'import tck, pytest, httpx, jsonschema, grpc' \
    || die "TCK venv is incomplete"

if [[ -n "${TCK_SETUP_ONLY:-}" ]]; then
    printf 'run-tck: setup only: TCK installed in %s\n' "$TCK"
    exit 0
fi

# The TCK's webhook receiver (push notification tests) listens on localhost: allow loopback
# webhooks for this run only, in this run's own data dir. Sextant refuses them by default.
cat >"$DATA_DIR/outbound.toml" <<'TOML'
[push]
allow_loopback = true
TOML

# 2. Start the server and read its stdout until it reports the bound address.
FIFO="$SCRATCH/server.stdout"
mkfifo "$FIFO"
"$SEXTANT_BIN" serve --data-dir "$DATA_DIR" --port 0 --conformance >"$FIFO" 2>"$SERVER_LOG" &
SERVER_PID=$!
exec 3<"$FIFO"

base_url=""
deadline=$((SECONDS + STARTUP_TIMEOUT))
while :; do
    remaining=$((deadline - SECONDS))
    if ((remaining <= 0)); then
        cat "$SERVER_LOG" >&2 || true
        die "server did not report its address within ${STARTUP_TIMEOUT}s"
    fi
    if IFS= read -r -t "$remaining" line <&3; then
        :
    else
        read_status=$?
        ((read_status > 128)) && continue # timed out; the deadline check above fires
        # EOF: the server closed stdout, normally because it exited.
        status="(still running)"
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then
            wait "$SERVER_PID" && status=0 || status=$?
            SERVER_PID=""
        fi
        cat "$SERVER_LOG" >&2 || true
        die "server closed stdout (exit status $status) before reporting its address"
    fi
    printf '%s\n' "$line" >>"$SERVER_LOG"
    if [[ "$line" =~ ^sextant:\ listening\ on\ (http://127\.0\.0\.1:[0-9]+)$ ]]; then
        base_url="${BASH_REMATCH[1]}"
        break
    fi
done
# Keep draining stdout so the server never blocks on a full pipe.
cat <&3 >>"$SERVER_LOG" &
DRAIN_PID=$!
exec 3<&-

SUT_HOST="${base_url}${TCK_SUT_PATH:-}"
printf 'run-tck: server pid %s at %s; SUT host %s\n' "$SERVER_PID" "$base_url" "$SUT_HOST"

# 3. Run the TCK (from its own directory; it writes reports/ there).
set +e
(cd "$TCK" && .venv/bin/python run_tck.py --sut-host "$SUT_HOST" --transport "$TRANSPORTS" "$@")
tck_status=$?
set -e

# 4. Summary and reports.
reports_src="$TCK/reports"
if [[ -d "$reports_src" ]]; then
    REPORTS_DIR="${TCK_REPORTS_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/sextant-tck-reports.XXXXXX")}"
    mkdir -p "$REPORTS_DIR"
    cp -R "$reports_src/." "$REPORTS_DIR/"
    cp "$SERVER_LOG" "$REPORTS_DIR/server.log" 2>/dev/null || true
    if [[ -f "$REPORTS_DIR/compatibility.json" ]]; then
        "$TCK/.venv/bin/python" - "$REPORTS_DIR/compatibility.json" <<'PY' || true
import json, sys
r = json.load(open(sys.argv[1]))
s = r.get("summary", {})
print("\n=== Sextant TCK summary ===")
for k in ("overall", "must", "should", "may"):
    print(f"  {k.upper():8} {s.get(k + '_compatibility')}")
counts = {}
for req_id, req in sorted(r.get("per_requirement", {}).items()):
    counts.setdefault((req.get("level"), req.get("status")), []).append(req_id)
for (level, status), ids in sorted(counts.items()):
    if status in ("FAIL",):
        print(f"  {level} {status}: {', '.join(ids)}")
    else:
        print(f"  {level} {status}: {len(ids)}")
PY
    fi
    printf 'run-tck: reports in %s\n' "$REPORTS_DIR"
fi
printf 'run-tck: TCK exit status %s\n' "$tck_status"
exit "$tck_status"
