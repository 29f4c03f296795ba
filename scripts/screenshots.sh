#!/usr/bin/env bash
# Screenshots of the tray menu and each page of the window, under a virtual X screen (Xvfb):
#   bash scripts/screenshots.sh [OUT_DIR]      (default docs/screenshots)
# Needs the project's environment (scripts/setup-env.sh); installs Xvfb and Qt's xcb libraries if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/qt-deps.sh xvfb
bin=.venv/bin; [ -d .venv/Scripts ] && bin=.venv/Scripts
display=":$((90 + RANDOM % 9))"
Xvfb "$display" -screen 0 1280x900x24 -nolisten tcp >/dev/null 2>&1 &
xvfb=$!
trap 'kill $xvfb 2>/dev/null || true' EXIT
for _ in $(seq 50); do [ -e "/tmp/.X11-unix/X${display#:}" ] && break; sleep 0.1; done
DISPLAY="$display" QT_QPA_PLATFORM=xcb "$bin/python" scripts/screenshots.py "${1:-docs/screenshots}"
