#!/usr/bin/env bash
# Smoke test of the desktop app (src-tauri, crate `sextant-app`) under Xvfb: a screenshot check.
#
#   bash scripts/desktop-smoke.sh [target/debug/sextant-app]
#
# On a private X display and a private D-Bus session (with dunst as the notification
# service), with a temp data dir and config dir:
#  1. the app announces its embedded server on stdout (`sextant-app: listening on URL`), and
#     that server answers /api/v1/health;
#  2. its window's title becomes the console's page title ("Overview · Sextant"): the page
#     loaded from the embedded server, got the address and token from the `bootstrap`
#     command, and rendered (the UI sets the title only after that);
#  3. a screenshot of the window is not blank and shows the console, live: the dark sidebar
#     beside the light main area, and the green "Live" dot (the page's bearer-token SSE stream
#     is up); it is saved to docs/screenshots/desktop.png;
#  4. an interaction (a shell command sent by the anonymous loopback caller) reaches the page
#     ("(1) Overview · Sextant") and the shell's native notification; invoking the
#     notification's default action (as a click does) opens the inbox in the window
#     ("(1) Approvals · Sextant"), saved to docs/screenshots/desktop-inbox.png;
#  5. a second launch hands over to the first (single instance) and exits 0 without starting
#     a second server;
#  6. SIGTERM shuts down cleanly: `sextant-app: stopped`, exit 0, window state saved;
#  7. with `sextant serve` running on the same data dir, a launch stops at once: exit 1, the
#     reason ("already running", with the server's address) on stderr and in a notification.
# Every wait polls a condition against a deadline; nothing sleeps for readiness.
# Needs the packages of scripts/install-desktop-deps.sh.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
app="${1:-$root/target/debug/sextant-app}"
app="$(cd "$(dirname "$app")" && pwd)/$(basename "$app")"
shot_out="${SEXTANT_SMOKE_SCREENSHOT:-$root/docs/screenshots/desktop.png}"
[ -x "$app" ] || { echo "smoke: no app binary at $app (cargo build -p sextant-app)" >&2; exit 1; }
for tool in Xvfb xdotool import dbus-run-session dbus-send dunst dunstctl curl; do
  command -v "$tool" >/dev/null || { echo "smoke: $tool missing (scripts/install-desktop-deps.sh)" >&2; exit 1; }
done

# Re-run inside a private D-Bus session bus (the single-instance lock lives on it).
if [ -z "${SEXTANT_SMOKE_IN_DBUS:-}" ]; then
  # The bus daemon's and its services' chatter (fd limits, activation) is dropped.
  SEXTANT_SMOKE_IN_DBUS=1 exec dbus-run-session -- bash "$0" "$app" \
    > >(grep -v --line-buffered -e '^SpiRegistry') \
    2> >(grep -v --line-buffered -e '^dbus-daemon\[' -e '^SpiRegistry' >&2)
fi

work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "smoke: FAIL: $*" >&2
  for f in "$work"/*.log; do
    [ -f "$f" ] && { echo "--- $(basename "$f")"; tail -n 40 "$f"; } >&2
  done
  exit 1
}
# until DEADLINE_SECONDS CMD...: polls CMD every 0.2 s until it succeeds or the deadline passes.
until_ok() {
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.2
  done
}

# Our own X server on a free display: Xvfb writes the number it took to fd 3 once it is ready.
Xvfb -displayfd 3 -screen 0 1280x820x24 -nolisten tcp 3>"$work/display" 2>"$work/xvfb.log" &
pids+=($!)
until_ok 20 test -s "$work/display" || fail "Xvfb did not start"
export DISPLAY=":$(head -n1 "$work/display")"
echo "smoke: Xvfb on $DISPLAY"

# A notification service on the session bus, drawing on our display.
printf '[global]\n    timeout = 0\n' >"$work/dunstrc"
dunst -config "$work/dunstrc" >"$work/dunst.log" 2>&1 &
pids+=($!)
# (Asking the bus, not dunstctl: a call to the name would have the bus start a second dunst.)
has_notifier() {
  dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.NameHasOwner string:org.freedesktop.Notifications 2>/dev/null \
    | grep -q 'boolean true'
}
until_ok 20 has_notifier || fail "dunst did not start"

export SEXTANT_DATA_DIR="$work/data" XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/xdg-data"
export RUST_LOG="${RUST_LOG:-info}"
export NO_AT_BRIDGE=1 # no accessibility bus for GTK on a headless display
start=$SECONDS
"$app" >"$work/app.out" 2>"$work/app.log" &
app_pid=$!
pids+=("$app_pid")

# 1. The server.
until_ok 60 grep -qs '^sextant-app: listening on ' "$work/app.out" || fail "no 'listening on' line"
url="$(sed -n 's/^sextant-app: listening on //p' "$work/app.out" | head -n1)"
curl -fsS "$url/api/v1/health" >/dev/null || fail "$url/api/v1/health does not answer"
echo "smoke: server at $url after $((SECONDS - start)) s"

# 2. The console's title on the window.
win=""
# (xdotool's regex reads bytes: the title's middle dot is two of them.)
find_console() { win="$(xdotool search --name '^Overview .+ Sextant$' 2>/dev/null | head -n1)"; [ -n "$win" ]; }
until_ok 90 find_console || fail "no window titled 'Overview · Sextant' (titles: $(xdotool search --name . getwindowname %@ 2>/dev/null | tr '\n' '|'))"
echo "smoke: console window $win after $((SECONDS - start)) s"

# 3. The screenshot: not blank, the dark sidebar on the left, the light main area on the right.
shot="$work/desktop.png"
convert() { if [ -x /usr/bin/convert ]; then /usr/bin/convert "$@"; else command convert "$@"; fi; }
channel_max() { # the largest of R, G, B at x,y (0-255)
  convert "$shot" -format "%[fx:int(255*max(max(p{$1,$2}.r,p{$1,$2}.g),p{$1,$2}.b))]" info:
}
channel_min() {
  convert "$shot" -format "%[fx:int(255*min(min(p{$1,$2}.r,p{$1,$2}.g),p{$1,$2}.b))]" info:
}
looks_like_console() {
  import -window "$win" "$shot" 2>/dev/null || return 1
  local w h sd
  read -r w h < <(identify -format '%w %h' "$shot")
  sd="$(convert "$shot" -colorspace Gray -format '%[fx:int(1000*standard_deviation)]' info:)"
  [ "$sd" -gt 50 ] || return 1                                   # not one flat colour
  [ "$(channel_max 10 $((h / 2)))" -lt 60 ] || return 1          # sidebar: dark
  [ "$(channel_min $((w - 20)) $((h - 20)))" -gt 200 ] || return 1 # main area: light
  # The connection indicator, bottom left: its dot is green once the live stream is up.
  [ "$(convert "$shot" -crop 60x80+0+$((h - 80)) +repage \
    -fx '(g-r>0.2)&&(g-b>0.1)' -format '%[fx:maxima]' info:)" = 1 ] || return 1
}
looks_ok=0
until_ok 30 looks_like_console && looks_ok=1
mkdir -p "$(dirname "$shot_out")"
[ -f "$shot" ] && cp "$shot" "$shot_out"
[ "$looks_ok" = 1 ] || fail "the window does not look like the console (screenshot: $shot_out)"
echo "smoke: screenshot $(identify -format '%wx%h' "$shot") looks like the live console -> ${shot_out#"$root"/}"

# 4. A new interaction: the page counts it, the shell notifies, the notification opens the inbox.
curl -fsS "$url/api/v1/agents/shell/a2a" -H 'content-type: application/json' -H 'A2A-Version: 1.0' \
  -d '{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"configuration":{"returnImmediately":true},
       "message":{"messageId":"smoke-1","role":"ROLE_USER","parts":[{"text":"true"}]}}}' \
  >"$work/send.json" || fail "could not send a task to the shell agent"
titled() { xdotool search --name "$1" >/dev/null 2>&1; }
until_ok 30 titled '^\(1\) Overview .+ Sextant$' || fail "the page did not count the new interaction"
notified() { [ "$(dunstctl count displayed 2>/dev/null)" -ge 1 ]; }
until_ok 30 notified || fail "no notification for the new interaction"
dunstctl action 0
until_ok 30 titled '^\(1\) Approvals .+ Sextant$' || fail "the notification's action did not open the inbox"
inbox_out="${shot_out%.png}-inbox.png"
inbox_ok=0
inbox_shown() { import -window "$win" "$shot" 2>/dev/null && looks_like_console; }
until_ok 20 inbox_shown && inbox_ok=1
cp "$shot" "$inbox_out"
[ "$inbox_ok" = 1 ] || fail "the inbox does not look like the console (screenshot: $inbox_out)"
echo "smoke: notification -> inbox -> ${inbox_out#"$root"/}"

# 5. Single instance: a second launch forwards to the first and exits, starting nothing.
timeout 30 "$app" >"$work/second.out" 2>"$work/second.log" || fail "the second launch exited $?"
! grep -q 'listening on' "$work/second.out" || fail "the second launch started its own server"
kill -0 "$app_pid" || fail "the first instance died"
echo "smoke: a second launch handed over to the first"

# 6. Clean shutdown on SIGTERM.
kill -TERM "$app_pid"
until_ok 40 grep -q '^sextant-app: stopped$' "$work/app.out" || fail "no clean shutdown within 40 s"
rc=0
wait "$app_pid" || rc=$?
[ "$rc" -eq 0 ] || fail "the app exited $rc"
ls "$XDG_CONFIG_HOME"/*/.window-state.json >/dev/null 2>&1 || fail "window state was not saved"
echo "smoke: clean shutdown; window state saved"

# 7. One Sextant per data dir: the app refuses a data dir that `sextant serve` holds.
serve_bin="${SEXTANT_BIN:-$(dirname "$app")/sextant}"
[ -x "$serve_bin" ] || fail "no sextant binary at $serve_bin (cargo build -p sextant)"
"$serve_bin" serve --data-dir "$SEXTANT_DATA_DIR" --port 0 >"$work/serve.out" 2>"$work/serve.log" &
pids+=($!)
until_ok 60 grep -qs '^sextant: listening on ' "$work/serve.out" || fail "sextant serve did not start"
serve_url="$(sed -n 's/^sextant: listening on //p' "$work/serve.out" | head -n1)"
shown_before="$(dunstctl count displayed)"
rc=0
timeout 60 "$app" >"$work/refused.out" 2>"$work/refused.log" || rc=$?
[ "$rc" -eq 1 ] || fail "a launch on a held data dir exited $rc, not 1"
grep -q "another Sextant is already running .*listening on $serve_url" "$work/refused.log" \
  || fail "the refusal does not name the running server: $(cat "$work/refused.log")"
more_shown() { [ "$(dunstctl count displayed)" -gt "$shown_before" ]; }
until_ok 10 more_shown || fail "no notification of the refused start"
echo "smoke: a launch on a data dir held by sextant serve stopped, saying so"
echo "smoke: PASS ($((SECONDS - start)) s)"
