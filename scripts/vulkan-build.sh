#!/usr/bin/env bash
# Builds llama-cpp-python with the Vulkan backend and its backends as loadable modules (GGML_BACKEND_DL, as
# the bundle carries it), caches the wheel beside the CPU one, and unpacks it into .venv/vulkan-llama for the
# tests marked `vulkan` (tests/test_vulkan.py runs it there on Mesa's lavapipe, a software Vulkan device).
# Needs the environment of `scripts/setup-env.sh test`. Run by `ENGRAM_TEST_VULKAN=1 bash scripts/test.sh`.
#
# Debian 12's Vulkan headers (1.3.239) predate what llama.cpp's Vulkan backend uses (VK_EXT_layer_settings):
# where the system's lack it, Debian 13's headers (a pinned .deb, checked by SHA256) are unpacked into the
# cache and used for the build alone; the program still runs on the system's Vulkan loader.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=.venv/bin; [ -d .venv/Scripts ] && bin=.venv/Scripts
[ -x "$bin/python" ] || { echo "vulkan-build: run scripts/setup-env.sh test first" >&2; exit 1; }
[ "$(uname -s)" = "Linux" ] || { echo "vulkan-build: builds here on Linux; release.yml builds the others" >&2; exit 1; }

# Vulkan's loader and headers, the shader compiler, SPIR-V headers, lavapipe, and vulkaninfo (GPU detection).
need="libvulkan-dev:/usr/include/vulkan/vulkan_core.h glslc:/usr/bin/glslc
spirv-headers:/usr/include/spirv/unified1/spirv.hpp mesa-vulkan-drivers:/usr/share/vulkan/icd.d/lvp_icd.x86_64.json
vulkan-tools:/usr/bin/vulkaninfo"
missing=""
for pair in $need; do [ -e "${pair#*:}" ] || missing="$missing ${pair%%:*}"; done
if [ -n "$missing" ]; then
  command -v apt-get >/dev/null 2>&1 || {
    echo "vulkan-build: needs these system packages (Debian names):$missing" >&2; exit 1; }
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  echo "vulkan-build: installing$missing" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq >/dev/null
  # shellcheck disable=SC2086
  $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

llama="llama-cpp-python==0.3.36"
read -r cpu_key cpu_cmake < <("$bin/python" scripts/llama-build-flags.py)
root="${ENGRAM_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/engram/wheels}"
cache="$root/$cpu_key-vulkan"
cmake="$cpu_cmake -DGGML_VULKAN=ON -DGGML_BACKEND_DL=ON"
if ! grep -q VK_EXT_layer_settings /usr/include/vulkan/vulkan_core.h; then
  headers="$root/vulkan-headers-1.4.309"
  if [ ! -f "$headers/include/vulkan/vulkan.hpp" ]; then
    deb="libvulkan-dev_1.4.309.0-1_amd64.deb"
    sha="8d329d465e16168afff58b1bd0dd6db46aac2cc3f56054a481b25a04e90b345a"
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    echo "vulkan-build: the system's Vulkan headers are too old; fetching Debian 13's ($deb)" >&2
    curl -fsSL --retry 3 -o "$tmp/$deb" "http://deb.debian.org/debian/pool/main/v/vulkan-loader/$deb"
    echo "$sha  $tmp/$deb" | sha256sum -c --quiet - || { echo "vulkan-build: $deb has the wrong SHA256" >&2; exit 1; }
    dpkg-deb -x "$tmp/$deb" "$tmp/x"
    mkdir -p "$headers"
    rm -rf "$headers/include.partial"
    cp -r "$tmp/x/usr/include" "$headers/include.partial" && mv "$headers/include.partial" "$headers/include"
  fi
  cmake="$cmake -DVulkan_INCLUDE_DIR=$headers/include"
fi

if ! ls "$cache"/llama_cpp_python-0.3.36-*.whl >/dev/null 2>&1; then
  echo "vulkan-build: compiling $llama with Vulkan (once; about 20 minutes on 2 cores)…" >&2
  mkdir -p "$cache"
  started=$(date +%s)
  # --no-cache-dir: pip would otherwise hand back the CPU wheel it built earlier.
  CMAKE_ARGS="$cmake" "$bin/python" -m pip --disable-pip-version-check wheel --quiet --no-cache-dir --no-deps \
    --no-binary llama-cpp-python -w "$cache.partial" "$llama"
  mv "$cache.partial"/llama_cpp_python-*.whl "$cache"/ && rmdir "$cache.partial"
  echo "vulkan-build: built in $(( $(date +%s) - started )) s" >&2
fi
rm -rf .venv/vulkan-llama
"$bin/python" -m pip --disable-pip-version-check install --quiet --no-deps --target .venv/vulkan-llama \
  "$cache"/llama_cpp_python-0.3.36-*.whl
echo "vulkan-build: the Vulkan build is in .venv/vulkan-llama" >&2
