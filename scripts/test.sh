#!/usr/bin/env bash
# Installs what the tests need (see scripts/setup-env.sh), then lints (ruff), type-checks (mypy) and runs the whole
# test suite (pytest). Arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-env.sh test
bin=.venv/bin; [ -d .venv/Scripts ] && bin=.venv/Scripts
"$bin/python" -m ruff check core mcp app tests benchmark installers scripts
bash scripts/typecheck.sh
exec "$bin/python" -m pytest "$@"
