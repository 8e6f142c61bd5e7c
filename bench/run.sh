#!/usr/bin/env bash
# SendMessage throughput/latency: Sextant against three echo servers, same load, same run,
# interleaved: the bare upper limit (crates/sextant-server/examples/bare_a2a.rs: axum + serde,
# nothing else), the official JS SDK (@a2a-js/sdk 1.3.0, bench/js) and the official Python SDK
# (a2a-sdk 1.3.0, python_echo_peer.py). Expects target/release/sextant (or $SEXTANT_BIN); builds
# only the bare server, when its binary is missing; installs the SDKs (bench/.venv, bench/js/
# node_modules) when missing or out of date.
#
#   cargo build --release && bench/run.sh
#   cargo build --release && bench/run.sh idle   (idle SubscribeToTask memory: idle_subscriptions.py)
#   cargo build --release && bench/run.sh first
#       (SendStreamingMessage on ten-event streams, timed to each stream's first event and to its
#       end by crates/sextant-server/examples/first_event.rs, on every server and binding:
#       streams/s, events/s, first-event and whole-stream percentiles; CHUNKS defaults to 7)
#   cargo build --release && DURATION=1800 bench/run.sh soak
#       (memory over time: Sextant and the two SDK peers under the same mixed load at once, for
#       DURATION: each gets 8 connections of SendMessage, 4 of SendStreamingMessage and 4 of
#       ListTasks; RSS sampled every SOAK_EVERY [10] seconds into soak_rss.csv, summarised as the
#       slope after the first minute; the bare server keeps nothing, so it is not soaked)
#
# Environment (defaults in brackets):
#   SEXTANT_BIN   [<repo>/target/release/sextant]
#   BARE_BIN      the bare upper limit [${CARGO_TARGET_DIR:-<repo>/target}/release/examples/bare_a2a];
#                 when that default is missing, run.sh builds it with
#                 `cargo build --release --locked -p sextant-server --example bare_a2a`
#   DURATION      seconds per measured phase [10]
#   WARMUP        seconds of unmeasured load before each phase [2]; 0 disables
#   ROUNDS        interleaved rounds [1]; >1 reports medians and the median per-round ratio
#   CONNS         connection levels [32 1]
#   WRK_THREADS   wrk threads [2] (capped at the connection count)
#   BENCH_VERIFY  1 = Lua checks every response is a completed task [1]
#   STREAM        1 = SendStreamingMessage: each request is a whole SSE stream, whose events
#                 are counted (needs BENCH_VERIFY=1); the table adds events/s [0]
#   CHUNKS        N in 1..64: the text sent is "chunks=N hello from wrk", which both echo agents
#                 answer with one artifact in N chunks (N artifact events per stream instead of
#                 one: CHUNKS=7 makes ten-event streams) [unset: one artifact]
#   RESULTS_DIR   where raw outputs go [bench/results/<timestamp>]
#   METHOD        send = SendMessage; list = ListTasks (pageSize 20, the caller's newest tasks:
#                 the call whose cost could grow with the caller's history; the bare server,
#                 which keeps no tasks, sits this one out) [send]
#   JOURNALS      space-separated LABEL=PATH pairs: besides Sextant on an empty journal, start one
#                 more Sextant per pair on a copy of PATH (a journal.db made by the gen_journal
#                 example), named sextant_LABEL, driven in the same interleaved rounds so the
#                 effect of the journal's size is a ratio within one run []
#   JOURNAL       PATH: shorthand for JOURNALS="journal=PATH" []
#   BINARIES      space-separated LABEL=PATH pairs: one more Sextant per pair, from the binary at
#                 PATH on an empty journal, named sextant_LABEL (a build before a change, side by
#                 side with the one after it) []
#   BINDINGS      Sextant's bindings besides JSON-RPC to drive, space-separated: rest (HTTP+JSON,
#                 wrk with send_message.lua's BENCH_BINDING=rest) and/or grpc (GRPC_BIN). Each is
#                 a row of its own, sextant_rest / sextant_grpc, against the same Sextant process
#                 in the same rounds; the summary gives each one's ratio to JSON-RPC per round.
#                 grpc also drives the bare server over gRPC (bare_grpc: the gRPC limit, and its
#                 ratio to the bare server's JSON-RPC). Not with `soak` []
#   GRPC_BIN      the gRPC load generator [${CARGO_TARGET_DIR:-<repo>/target}/release/examples/grpc_load];
#                 built like the bare server when that default is missing
#   FIRST_BIN     `first`'s stream timer [${CARGO_TARGET_DIR:-<repo>/target}/release/examples/first_event];
#                 built like the bare server when that default is missing
#
# Every server listens on a 127.0.0.1 port chosen by the kernel; all load stays on loopback.
# Needs python3 (3.11+) and Node.js 20+ with npm; installs wrk, curl, and Node.js when missing
# with apt-get (as root); the bare server's first build needs cargo.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
SEXTANT_BIN="${SEXTANT_BIN:-$REPO/target/release/sextant}"
DURATION="${DURATION:-10}"
WARMUP="${WARMUP:-2}"
ROUNDS="${ROUNDS:-1}"
CONNS="${CONNS:-32 1}"
WRK_THREADS="${WRK_THREADS:-2}"
BENCH_VERIFY="${BENCH_VERIFY:-1}"
STREAM="${STREAM:-0}"
METHOD="${METHOD:-send}"
JOURNALS="${JOURNALS:-${JOURNAL:+journal=$JOURNAL}}"
BINARIES="${BINARIES:-}"
BINDINGS="${BINDINGS:-}"
# `first` times ten-event streams unless CHUNKS says otherwise.
[[ "${1:-}" == first ]] && CHUNKS="${CHUNKS:-7}"
RESULTS_DIR="${RESULTS_DIR:-$HERE/results/$(date +%Y%m%d-%H%M%S)}"
BARE_DEFAULT="${CARGO_TARGET_DIR:-$REPO/target}/release/examples/bare_a2a"
BARE_BIN="${BARE_BIN:-$BARE_DEFAULT}"
GRPC_DEFAULT="${CARGO_TARGET_DIR:-$REPO/target}/release/examples/grpc_load"
GRPC_BIN="${GRPC_BIN:-$GRPC_DEFAULT}"
FIRST_DEFAULT="${CARGO_TARGET_DIR:-$REPO/target}/release/examples/first_event"
FIRST_BIN="${FIRST_BIN:-$FIRST_DEFAULT}"
VENV="$HERE/.venv"
JS="$HERE/js"
STARTUP_TIMEOUT=60
CHECK_TEXT="bench check $$"
WRK_TEXT="${CHUNKS:+chunks=$CHUNKS }hello from wrk"

log() { printf 'bench: %s\n' "$*" >&2; }
die() { log "$*"; exit 2; }
[[ "$STREAM" != 1 || "$BENCH_VERIFY" == 1 ]] || die "STREAM=1 counts events only with BENCH_VERIFY=1"
[[ "$METHOD" == send || "$METHOD" == list ]] || die "METHOD must be send or list"
[[ "$METHOD" == send || "$STREAM" != 1 ]] || die "STREAM=1 is a SendMessage mode (METHOD=send)"
for b in $BINDINGS; do
  [[ "$b" == rest || "$b" == grpc ]] || die "BINDINGS takes rest and grpc (JSON-RPC is always driven): $b"
done
[[ -z "$BINDINGS" || "${1:-}" != soak ]] || die "BINDINGS is not for soak"
[[ "${1:-}" != first || ( "$METHOD" == send && "$STREAM" != 1 ) ]] || die "first always streams SendStreamingMessage (no METHOD or STREAM)"
[[ -z "${CHUNKS:-}" || "$CHUNKS" =~ ^[1-9][0-9]?$ && "$CHUNKS" -le 64 ]] || die "CHUNKS must be 1..64"

[[ -x "$SEXTANT_BIN" ]] || die "sextant binary not found at $SEXTANT_BIN (run 'cargo build --release' or set SEXTANT_BIN)"
command -v python3 >/dev/null || die "python3 is required"

# --- tools -----------------------------------------------------------------------------------
apt_updated=0
apt_install() {
  [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null || die "$1 is missing and cannot be installed (need root + apt-get)"
  if [[ $apt_updated -eq 0 ]]; then apt-get update -qq; apt_updated=1; fi
  log "installing $*"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}
command -v wrk >/dev/null || apt_install wrk
command -v curl >/dev/null || apt_install curl

# --- venv with the Python peer's dependencies -------------------------------------------------
venv_ok() { [[ -x "$VENV/bin/python" ]] && "$VENV/bin/python" -m pip --version >/dev/null 2>&1; }
if ! venv_ok; then
  log "creating $VENV"
  rm -rf "$VENV"
  if ! python3 -m venv "$VENV" 2>/dev/null; then
    pyver="$(python3 -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
    apt_install python3-venv || apt_install "python${pyver}-venv"
    rm -rf "$VENV"
    python3 -m venv "$VENV"
  fi
fi
req_hash="$(sha256sum "$HERE/requirements.txt" | cut -d' ' -f1)"
if [[ "$(cat "$VENV/.requirements.sha256" 2>/dev/null)" != "$req_hash" ]]; then
  log "installing bench/requirements.txt"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$HERE/requirements.txt"
  echo "$req_hash" >"$VENV/.requirements.sha256"
fi
PY="$VENV/bin/python"
HELPER="$HERE/bench_helper.py"

# --- node_modules with the JS peer's dependencies (the versions package-lock.json pins) --------
command -v node >/dev/null && command -v npm >/dev/null || apt_install nodejs npm
node_major="$(node -p 'process.versions.node.split(".")[0]')"
(( node_major >= 20 )) || die "the JS peer (@a2a-js/sdk 1.3.0) needs Node.js 20 or later; found $(node --version)"
lock_hash="$(cat "$JS/package.json" "$JS/package-lock.json" | sha256sum | cut -d' ' -f1)"
if [[ "$(cat "$JS/node_modules/.bench-lock.sha256" 2>/dev/null)" != "$lock_hash" ]]; then
  log "installing bench/js (npm ci)"
  (cd "$JS" && npm ci --omit=dev --no-audit --no-fund --loglevel=error >&2)
  echo "$lock_hash" >"$JS/node_modules/.bench-lock.sha256"
fi
# --- the bare server ------------------------------------------------------------------------
# It answers only SendMessage and SendStreamingMessage, and keeps nothing: no ListTasks, and
# nothing to soak.
WANT_BARE=0
[[ "$METHOD" == send && "${1:-}" != soak ]] && WANT_BARE=1
WANT_GRPC=0
[[ " $BINDINGS " == *" grpc "* && "${1:-}" != first ]] && WANT_GRPC=1
WANT_FIRST=0
[[ "${1:-}" == first ]] && WANT_FIRST=1
# The examples in one invocation, so that they share one feature set (and one build).
build=(cargo build --release --locked -p sextant-server --example bare_a2a --example grpc_load --example first_event)
for want in "bare $WANT_BARE $BARE_BIN $BARE_DEFAULT" "grpc_load $WANT_GRPC $GRPC_BIN $GRPC_DEFAULT" \
  "first_event $WANT_FIRST $FIRST_BIN $FIRST_DEFAULT"; do
  read -r what wanted bin default <<<"$want"
  (( wanted )) && [[ ! -x "$bin" ]] || continue
  [[ "$bin" == "$default" ]] || die "no $what at $bin (unset its *_BIN and run.sh builds it with: ${build[*]})"
  command -v cargo >/dev/null || die "no $what at $bin, and no cargo to build it with: ${build[*]}"
  log "building the bare server and the load generators: ${build[*]}"
  (cd "$REPO" && "${build[@]}") || die "building failed: ${build[*]}"
done
# `run.sh idle`: memory per idle SubscribeToTask stream instead (bench/idle_subscriptions.py),
# with the bare server's kept-open connection as the HTTP/1.1 floor.
[[ "${1:-}" == "idle" ]] && BARE_BIN="$BARE_BIN" exec "$PY" "$HERE/idle_subscriptions.py"

# --- server processes ------------------------------------------------------------------------
mkdir -p "$RESULTS_DIR"
TMP="$(mktemp -d)"
declare -A PID=() BASE=() RPC=() ALIAS=()

stop_server() { # name
  local name="$1" pid="${PID[$1]:-}" code=0
  [[ -n "$pid" ]] || return 0
  unset "PID[$name]"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      log "$name did not stop within 20 s of SIGTERM; killing it"
      kill -KILL "$pid" 2>/dev/null || true
    fi
  fi
  wait "$pid" 2>/dev/null || code=$?
  log "$name stopped (exit $code)"
}

cleanup() {
  local name
  for name in "${!PID[@]}"; do stop_server "$name"; done
  rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_server NAME LINE_PREFIX CMD... : starts CMD, reads its stdout until
# "<LINE_PREFIX>http://127.0.0.1:PORT", then keeps draining stdout in the background.
start_server() {
  local name="$1" prefix="$2"; shift 2
  local fifo="$TMP/$name.stdout" line fd url="" deadline
  mkfifo "$fifo"
  "$@" >"$fifo" 2>"$RESULTS_DIR/$name.stderr.log" &
  PID[$name]=$!
  exec {fd}<"$fifo"
  deadline=$((SECONDS + STARTUP_TIMEOUT))
  while (( SECONDS < deadline )); do
    if IFS= read -r -t 1 -u "$fd" line; then
      if [[ "$line" == "$prefix"* ]]; then
        url="${line#"$prefix"}"
        [[ "$url" =~ ^http://127\.0\.0\.1:[0-9]+$ ]] && break
        url=""
      fi
    else
      (( $? > 128 )) && continue  # read timed out: keep waiting
      break                       # EOF: the process closed stdout (it exited)
    fi
  done
  if [[ -z "$url" ]]; then
    exec {fd}<&-
    tail -n 30 "$RESULTS_DIR/$name.stderr.log" >&2 || true
    die "$name did not print its listening line (see $RESULTS_DIR/$name.stderr.log)"
  fi
  cat <&"$fd" >/dev/null &   # drain any further stdout; ends when the server exits
  exec {fd}<&-
  BASE[$name]="$url"
  RPC[$name]="$("$PY" "$HELPER" rpc-url "$url")"
  log "$name: pid ${PID[$name]}, listening on $url, JSON-RPC at ${RPC[$name]}"
}

# check_one NAME : one SendMessage with curl; must be a completed task echoing the text.
check_one() {
  local name="$1" out="$TMP/$1.check.json"
  local body
  body="$(printf '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"bench-check-%s-%s","role":"ROLE_USER","parts":[{"text":"%s"}]}}}' \
    "$name" "$(date +%s%N)" "$CHECK_TEXT")"
  local msg
  curl -sS --fail --max-time 30 -H 'Content-Type: application/json' -H 'A2A-Version: 1.0' \
    --data-binary "$body" -o "$out" "${RPC[$name]}" || die "$name: SendMessage request failed"
  msg="$("$PY" "$HELPER" check "$out" "$CHECK_TEXT")" || die "$name did not answer a completed echo task"
  log "$name check: $msg"
}

proc_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
proc_rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
# RSS split by kind (anonymous = heap and stacks; file = mapped files such as SQLite's WAL
# index; shmem) and the thread count: where RSS grows tells what grows.
proc_mem_split() {
  awk '/^RssAnon:/ {a=$2} /^RssFile:/ {f=$2} /^RssShmem:/ {s=$2} /^Threads:/ {t=$2}
       END {printf "%s,%s,%s,%s", a, f, s, t}' "/proc/$1/status"
}
CLK_TCK="$(getconf CLK_TCK)"

# load NAME CONNS SECONDS VERIFY RUN_ID [wrk's --latency]: drive NAME's binding (JSON-RPC,
# or BINDINGS' HTTP+JSON / gRPC for sextant_rest / sextant_grpc) with CONNS connections.
load() {
  local name="$1" conns="$2" secs="$3" verify="$4" run_id="$5" threads grpc_args=()
  shift 5
  threads=$(( WRK_THREADS < conns ? WRK_THREADS : conns ))
  case "$name" in
    sextant_grpc|bare_grpc)
      [[ "$STREAM" == 1 ]] && grpc_args+=(--stream)
      [[ "$METHOD" == list ]] && grpc_args+=(--list)
      [[ "$verify" == 1 ]] || grpc_args+=(--no-verify)
      "$GRPC_BIN" --target "${BASE[${ALIAS[$name]}]#http://}" --tenant echo --conns "$conns" \
        --duration "$secs" --run-id "$run_id" --text "$WRK_TEXT" "${grpc_args[@]}" ;;
    *)
      BENCH_RUN_ID="$run_id" BENCH_VERIFY="$verify" BENCH_STREAM="$STREAM" BENCH_METHOD="$METHOD" BENCH_TEXT="$WRK_TEXT" \
        BENCH_BINDING="$([[ "$name" == sextant_rest ]] && echo rest || echo jsonrpc)" \
        wrk -t"$threads" -c"$conns" -d"${secs}s" --timeout 10s "$@" -s "$HERE/send_message.lua" "${RPC[$name]}" ;;
  esac
}

# run_phase ROUND NAME CONNS
run_phase() {
  local round="$1" name="$2" conns="$3" server="${ALIAS[$2]:-$2}"
  local pid="${PID[$server]}" out="$RESULTS_DIR/r${round}_${name}_c${conns}.txt" t0 t1
  if (( WARMUP > 0 )); then
    load "$name" "$conns" "$WARMUP" 0 "warm-r$round-$name-c$conns-$$-$(date +%s%N)" >/dev/null
  fi
  t0="$(proc_ticks "$pid")"
  load "$name" "$conns" "$DURATION" "$BENCH_VERIFY" "r$round-$name-c$conns-$$-$(date +%s%N)" --latency >"$out"
  t1="$(proc_ticks "$pid")"
  printf 'PROC {"cpu_ms":%s,"rss_kib":%s}\n' \
    "$(( (t1 - t0) * 1000 / CLK_TCK ))" "$(proc_rss_kib "$pid")" >>"$out"
  if [[ "$server" == sextant* ]]; then
    log "$name WAL after the phase: $(du -k "$TMP/$server-data/journal.db-wal" 2>/dev/null | cut -f1) KiB, journal $(du -m "$TMP/$server-data/journal.db" | cut -f1) MiB"
  fi
  log "round $round, $name @ $conns conn: $(grep -m1 '^Requests/sec' "$out" || echo '?')"
}

# --- go --------------------------------------------------------------------------------------
log "results in $RESULTS_DIR"
# start_sextant NAME [JOURNAL [BINARY]]: a Sextant on its own data dir, the built-in echo Agent
# as the default card's; on a copy of JOURNAL when given (cp --reflink where the disk can); from
# BINARY instead of SEXTANT_BIN when given.
start_sextant() {
  local name="$1" journal="${2:-}" bin="${3:-$SEXTANT_BIN}" data="$TMP/$1-data"
  mkdir -p "$data"
  printf 'default_agent = "echo"\n' >"$data/agents.toml"
  if [[ -n "$journal" ]]; then
    [[ -f "$journal" ]] || die "journal $journal is not a file"
    log "copying $journal ($(du -h "$journal" | cut -f1)) for $name"
    cp --reflink=auto "$journal" "$data/journal.db"
    if [[ -f "$journal-wal" ]]; then cp --reflink=auto "$journal-wal" "$data/journal.db-wal"; fi
  fi
  [[ -x "$bin" ]] || die "$name: no executable at $bin"
  start_server "$name" "sextant: listening on " "$bin" serve --data-dir "$data" --port 0
}
SERVERS=(sextant)
start_sextant sextant
for pair in $JOURNALS; do
  label="${pair%%=*}" path="${pair#*=}"
  [[ "$label" =~ ^[A-Za-z0-9]+$ && "$path" != "$pair" ]] || die "JOURNALS wants LABEL=PATH pairs (LABEL letters and digits): $pair"
  start_sextant "sextant_$label" "$path"
  SERVERS+=("sextant_$label")
done
for pair in $BINARIES; do
  label="${pair%%=*}" path="${pair#*=}"
  [[ "$label" =~ ^[A-Za-z0-9]+$ && "$path" != "$pair" ]] || die "BINARIES wants LABEL=PATH pairs (LABEL letters and digits): $pair"
  start_sextant "sextant_$label" "" "$path"
  SERVERS+=("sextant_$label")
done
for b in $BINDINGS; do
  # The same Sextant process, driven over another binding: no server of its own.
  ALIAS[sextant_$b]=sextant
  [[ "$b" == rest ]] && RPC[sextant_rest]="${BASE[sextant]}/api/v1/agents/echo"
  SERVERS+=("sextant_$b")
done
if (( WANT_BARE )); then
  start_server bare "bare-a2a: listening on " "$BARE_BIN" --port 0
  SERVERS+=(bare)
  # The bare server speaks gRPC too: with BINDINGS' grpc, the gRPC rows get their own limit,
  # driven by the same load generator as Sextant's.
  if [[ " $BINDINGS " == *" grpc "* ]]; then
    ALIAS[bare_grpc]=bare
    SERVERS+=(bare_grpc)
  fi
fi
start_server js "js-echo-peer: listening on " env NODE_ENV=production node "$JS/js_echo_peer.js" --host 127.0.0.1 --port 0
SERVERS+=(js)
start_server python "python-echo-peer: listening on " "$PY" "$HERE/python_echo_peer.py" --host 127.0.0.1 --port 0
SERVERS+=(python)
for name in "${SERVERS[@]}"; do [[ -n "${ALIAS[$name]:-}" ]] || check_one "$name"; done

{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "sextant: $SEXTANT_BIN"
  echo "python peer: a2a-sdk $("$PY" -c 'import importlib.metadata as m; print(m.version("a2a-sdk"))'), uvicorn $("$PY" -c 'import importlib.metadata as m; print(m.version("uvicorn"))')"
  echo "python peer OTEL_INSTRUMENTATION_A2A_SDK_ENABLED=${OTEL_INSTRUMENTATION_A2A_SDK_ENABLED:-false}"
  echo "js peer: @a2a-js/sdk $(node -p "require('$JS/node_modules/@a2a-js/sdk/package.json').version"), express $(node -p "require('$JS/node_modules/express/package.json').version"), node $(node --version), NODE_ENV=production"
  [[ -z "${PID[bare]:-}" ]] || echo "bare: $BARE_BIN"
  echo "wrk: $(wrk --version 2>&1 | head -1)"
  echo "duration=${DURATION}s warmup=${WARMUP}s rounds=$ROUNDS conns='$CONNS' wrk_threads=$WRK_THREADS verify=$BENCH_VERIFY stream=$STREAM"
  echo "text: $WRK_TEXT"
  echo "cpus: $(nproc)  load: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "method: $METHOD  journals: ${JOURNALS:-none besides the empty one}  binaries: ${BINARIES:-$SEXTANT_BIN only}  bindings: jsonrpc${BINDINGS:+ $BINDINGS}"
  if (( WANT_GRPC )); then echo "grpc load: $GRPC_BIN"; fi
  if (( WANT_FIRST )); then echo "first-event timer: $FIRST_BIN"; fi
} | tee "$RESULTS_DIR/meta.txt" >&2

# soak: memory over time under mixed load (see the top of this file).
soak() {
  local every="${SOAK_EVERY:-10}" csv="$RESULTS_DIR/soak_rss.csv" t0="$SECONDS" name pids=() p
  echo "t_s,server,rss_kib,cpu_ms,anon_kib,file_kib,shmem_kib,threads" >"$csv"
  for name in "${SERVERS[@]}"; do
    for mode in "send 8 0" "send 4 1" "list 4 0"; do
      read -r method conns stream <<<"$mode"
      BENCH_RUN_ID="soak-$name-$method-$stream-$$-$(date +%s%N)" BENCH_VERIFY=1 BENCH_STREAM="$stream" \
        BENCH_METHOD="$method" BENCH_TEXT="$WRK_TEXT" \
        wrk -t1 -c"$conns" -d"${DURATION}s" --timeout 30s --latency -s "$HERE/send_message.lua" "${RPC[$name]}" \
        >"$RESULTS_DIR/soak_${name}_${method}${stream}.txt" &
      pids+=($!)
    done
  done
  log "soak: ${#pids[@]} wrk processes for ${DURATION}s; sampling RSS every ${every}s into $csv"
  while :; do
    for name in "${SERVERS[@]}"; do
      echo "$((SECONDS - t0)),$name,$(proc_rss_kib "${PID[$name]}"),$(( $(proc_ticks "${PID[$name]}") * 1000 / CLK_TCK )),$(proc_mem_split "${PID[$name]}")" >>"$csv"
    done
    p=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && p=1; done
    (( p )) || break
    sleep "$every"
  done
  for pid in "${pids[@]}"; do wait "$pid" || log "a soak wrk process failed (exit $?)"; done
  for name in "${SERVERS[@]}"; do
    [[ "$name" == sextant* ]] || continue
    log "$name after the soak: journal $(du -m "$TMP/$name-data/journal.db" 2>/dev/null | cut -f1) MiB"
  done
  for name in "${SERVERS[@]}"; do check_one "$name"; done
  "$PY" "$HELPER" soak "$RESULTS_DIR"
}
if [[ "${1:-}" == soak ]]; then
  soak
  exit $?
fi

# first: every server (and BINDINGS' bindings of Sextant) answers ten-event streams, timed by
# first_event to the first event and to the end; interleaved like the throughput phases.
first_phase() { # ROUND NAME CONNS
  local round="$1" name="$2" conns="$3" server="${ALIAS[$2]:-$2}" binding=jsonrpc url target path
  case "$name" in
    sextant_rest) binding=rest ;;
    sextant_grpc|bare_grpc) binding=grpc ;;
  esac
  url="${RPC[$name]:-${BASE[$server]}}"
  url="${url#http://}"; target="${url%%/*}"; path="${url:${#target}}"
  [[ -n "$path" ]] || path=/
  local out="$RESULTS_DIR/first_r${round}_${name}_c${conns}.txt" t0 t1 pid="${PID[$server]}"
  t0="$(proc_ticks "$pid")"
  "$FIRST_BIN" --target "$target" --binding "$binding" --path "$path" --tenant echo \
    --conns "$conns" --duration "$DURATION" --warmup "$WARMUP" --text "$WRK_TEXT" \
    --run-id "first-r$round-$name-c$conns-$$-$(date +%s%N)" >"$out"
  t1="$(proc_ticks "$pid")"
  printf 'PROC {"cpu_ms":%s,"rss_kib":%s}\n' \
    "$(( (t1 - t0) * 1000 / CLK_TCK ))" "$(proc_rss_kib "$pid")" >>"$out"
  log "round $round, $name @ $conns conn: $(grep -m1 '^FIRST_RESULT' "$out" || echo '?')"
}
if [[ "${1:-}" == first ]]; then
  for (( round = 1; round <= ROUNDS; round++ )); do
    for conns in $CONNS; do
      for name in "${SERVERS[@]}"; do first_phase "$round" "$name" "$conns"; done
    done
  done
  for name in "${SERVERS[@]}"; do [[ -n "${ALIAS[$name]:-}" ]] || check_one "$name"; done
  for name in "${SERVERS[@]}"; do stop_server "$name"; done
  echo
  "$PY" "$HELPER" first "$RESULTS_DIR"
  exit $?
fi

for (( round = 1; round <= ROUNDS; round++ )); do
  for conns in $CONNS; do
    for name in "${SERVERS[@]}"; do
      run_phase "$round" "$name" "$conns"
    done
  done
done

# All must still answer correctly after the load.
for name in "${SERVERS[@]}"; do [[ -n "${ALIAS[$name]:-}" ]] || check_one "$name"; done
for name in "${SERVERS[@]}"; do stop_server "$name"; done

echo
"$PY" "$HELPER" summarize "$RESULTS_DIR"
