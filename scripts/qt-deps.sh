#!/usr/bin/env bash
# Installs the system libraries PySide6 needs on Linux when they are missing (a fresh Debian/Ubuntu
# machine lacks some). Called by setup-env.sh for the tests; `scripts/qt-deps.sh xvfb` adds what the
# screenshot script needs (a virtual X screen and the xcb plugin's libraries).
#   Offscreen Qt:  libglib2.0-0 libgl1 libegl1 libxkbcommon0 libfreetype6 libfontconfig1 libdbus-1-3, a font
#   Under Xvfb:    xvfb and the xcb libraries below
set -euo pipefail
[ "$(uname -s)" = "Linux" ] || exit 0

need_libs="libglib-2.0.so.0:libglib2.0-0 libGL.so.1:libgl1 libEGL.so.1:libegl1 libxkbcommon.so.0:libxkbcommon0
libfreetype.so.6:libfreetype6 libfontconfig.so.1:libfontconfig1 libdbus-1.so.3:libdbus-1-3"
if [ "${1:-}" = "xvfb" ]; then
  need_libs="$need_libs libxkbcommon-x11.so.0:libxkbcommon-x11-0 libxcb-cursor.so.0:libxcb-cursor0
libxcb-icccm.so.4:libxcb-icccm4 libxcb-keysyms.so.1:libxcb-keysyms1 libxcb-shape.so.0:libxcb-shape0
libxcb-randr.so.0:libxcb-randr0 libxcb-render-util.so.0:libxcb-render-util0 libxcb-image.so.0:libxcb-image0
libxcb-xinerama.so.0:libxcb-xinerama0 libxcb-xkb.so.1:libxcb-xkb1"
fi
missing=""
for pair in $need_libs; do
  lib="${pair%%:*}"; pkg="${pair##*:}"
  ldconfig -p 2>/dev/null | grep -q "$lib" || missing="$missing $pkg"
done
fc-list 2>/dev/null | grep -q . || missing="$missing fonts-dejavu-core"  # without a font, labels render as boxes
if [ "${1:-}" = "xvfb" ]; then
  command -v Xvfb >/dev/null 2>&1 || missing="$missing xvfb"
fi
[ -z "$missing" ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "setup: Qt needs these system packages (Debian names):$missing — install them with your package manager." >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "setup: Qt needs:$missing; run as root: apt-get install -y$missing" >&2; exit 1
  fi
fi
echo "setup: installing system libraries for Qt:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq >/dev/null
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
