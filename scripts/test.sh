#!/usr/bin/env bash
# Installs what the tests need (see scripts/setup-env.sh) and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-env.sh test
bin=.venv/bin; [ -d .venv/Scripts ] && bin=.venv/Scripts
exec "$bin/python" -m pytest "$@"
