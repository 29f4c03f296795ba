#!/usr/bin/env bash
# Installs what the tests need (see scripts/setup-env.sh), then lints (ruff), type-checks (mypy) and runs the whole
# test suite (pytest, on ENGRAM_TEST_WORKERS worker processes, 2 by default; each test file stays on one worker, so
# a module's shared fixtures are built once). Arguments go to pytest. ENGRAM_TEST_VULKAN=1 also builds llama.cpp's
# Vulkan backend (scripts/vulkan-build.sh: about 11 minutes the first time on 2 cores) and runs the tests marked
# `vulkan` on lavapipe.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-env.sh test
bin=.venv/bin; [ -d .venv/Scripts ] && bin=.venv/Scripts
"$bin/python" -m ruff check core mcp app tests benchmark installers scripts
bash scripts/typecheck.sh
if [ "${ENGRAM_TEST_VULKAN:-}" = 1 ]; then
  bash scripts/vulkan-build.sh
  exec "$bin/python" -m pytest -n "${ENGRAM_TEST_WORKERS:-2}" --dist loadfile -m "not large_model" "$@"
fi
exec "$bin/python" -m pytest -n "${ENGRAM_TEST_WORKERS:-2}" --dist loadfile "$@"
