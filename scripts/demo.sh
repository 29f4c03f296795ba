#!/usr/bin/env bash
# The main job: install Engram, index a real corpus (Django 5.2.8's documentation topics) on the
# bundled embedding model, and answer searches from the command line. Only the package registry is
# needed. The demo keeps its memory in .demo-data/ so it never mixes with your own.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-env.sh
bin=.venv/bin; [ -d .venv/Scripts ] && bin=.venv/Scripts

corpus="${ENGRAM_DEMO_CORPUS:-${XDG_CACHE_HOME:-$HOME/.cache}/engram/corpus}"
if [ ! -d "$corpus/django-5.2.8/docs" ]; then
  mkdir -p "$corpus"
  "$bin/python" -m pip download --quiet --no-deps --no-binary :all: --require-hashes \
    -r scripts/demo-corpus.txt -d "$corpus"
  tar -xzf "$corpus/django-5.2.8.tar.gz" -C "$corpus"
fi

export ENGRAM_DATA_DIR="${ENGRAM_DATA_DIR:-$PWD/.demo-data}"
# Ingest reads under ingest.allowed_roots (default: your home); the corpus may lie elsewhere.
export ENGRAM_INGEST_ALLOWED_ROOTS="${ENGRAM_INGEST_ALLOWED_ROOTS:-[\"~\", \"$corpus\"]}"
engram() { printf '\n$ engram %s\n' "$*" >&2; "$bin/engram" "$@"; }
engram ingest "$corpus/django-5.2.8/docs/topics" --project django
engram search "force every request onto HTTPS and make browsers remember to never use plain HTTP" --limit 3
engram search "email me the full traceback when the production site crashes" --limit 3 --max-chars 2000
engram remember "Demo note: Engram indexed the Django topics for this demo." --type demo
engram status
