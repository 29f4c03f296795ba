#!/usr/bin/env bash
# Installs what the tests need (see scripts/setup-env.sh), then lints (ruff), type-checks (mypy) and runs the whole
# test suite (pytest, on ENGRAM_TEST_WORKERS worker processes, 2 by default; each test file stays on one worker, so
# a module's shared fixtures are built once). Arguments go to
# pytest. ENGRAM_TEST_VULKAN=1 also builds llama.cpp's Vulkan backend (scripts/vulkan-build.sh: about 11 minutes the
# first time on 2 cores) and runs the tests marked `vulkan` on lavapipe.
#
#   bash scripts/test.sh --fast [pytest args]   the fast tier for development: lint, then every test not marked
#                                               `slow` (each module's unit tests; no process, server or bundle
#                                               runs, no load) — under 3 minutes on 2 cores; no type-check
set -euo pipefail
cd "$(dirname "$0")/.."
fast=
if [ "${1:-}" = "--fast" ]; then fast=1; shift; fi
bash scripts/setup-env.sh test
bin=.venv/bin; [ -d .venv/Scripts ] && bin=.venv/Scripts
"$bin/python" -m ruff check core mcp app tests benchmark standins installers scripts
if [ -n "$fast" ]; then
  exec "$bin/python" -m pytest -n "${ENGRAM_TEST_WORKERS:-2}" --dist loadfile --no-loadscope-reorder -m "not slow and not large_model and not vulkan" "$@"
fi
bash scripts/typecheck.sh
if [ "${ENGRAM_TEST_VULKAN:-}" = 1 ]; then
  bash scripts/vulkan-build.sh
  exec "$bin/python" -m pytest -n "${ENGRAM_TEST_WORKERS:-2}" --dist loadfile --no-loadscope-reorder -m "not large_model" "$@"
fi
exec "$bin/python" -m pytest -n "${ENGRAM_TEST_WORKERS:-2}" --dist loadfile --no-loadscope-reorder "$@"
