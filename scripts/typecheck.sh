#!/usr/bin/env bash
# Type-checks Engram with mypy, strict on core/, mcp/ and app/ (settings in pyproject.toml).
# mypy cannot follow the editable install's import hook, so it reads the packages through build/typecheck/engram/,
# a folder of links to core/, mcp/, app/ and resources/.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
bin="${ENGRAM_VENV:-.venv}/bin"; [ -d "${ENGRAM_VENV:-.venv}/Scripts" ] && bin="${ENGRAM_VENV:-.venv}/Scripts"
python="$root/$bin/python"
tree=build/typecheck
mkdir -p "$tree/engram"
for part in core mcp app resources; do ln -sfn "$root/$part" "$tree/engram/$part"; done
cd "$tree"
"$python" -m mypy --config-file "$root/pyproject.toml" --strict -p engram.core -p engram.mcp -p engram.app
