#!/bin/sh
# Debian's Chromium as another Unix user than the one running Sextant (the browser tests'
# "another user on this machine", who may not get the console by loopback trust).
# run.sh creates the user (when it runs as root).
exec runuser -u sextant-browser-other -- "${CHROMIUM:-/usr/bin/chromium}" "$@"
