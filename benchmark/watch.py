"""Suite `watch`: how soon a file edited in a watched folder is searchable (the watch lag).

    python -m benchmark watch

A folder of ``FILES`` small Markdown notes (seeded, synthetic) is ingested with the bundled embedding model,
then watched as the service watches ingested folders (``Engine.start_watching``, ``watch.quiet_sec`` at its
default). For each batch size N (1, 100, 1,000 files; quick: 1, 10, 50 of 100) N files get a new sentence with a
word found nowhere else, and the lag is the time from the last write until every edited file's new text is
stored and the word of the last one is found by a search. The lag holds the quiet interval the watch waits for
(2 s by default) before it hands the changes on.
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

from engram.core import Settings
from engram.core.fileio import sha256_text

from .common import Run, engine_at
from .suites import NoOptions

FILES = 1000
SIZES = (1, 100, 1000)
QUICK_FILES = 100
QUICK_SIZES = (1, 10, 50)
TIMEOUT_S = 600.0
_WORDS = ("retry", "queue", "invoice", "ledger", "backoff", "export", "report", "schema", "cache", "index",
          "token", "session", "worker", "folder", "budget", "model", "search", "graph", "digest", "release")


def _note(rng: random.Random, n: int) -> str:
    words = " ".join(rng.choice(_WORDS) for _ in range(40))
    return f"# Note {n}\n\n{words}.\n"


def _lag(engine: Any, files: list[Path], texts: list[str], word: str, written: float) -> float:
    store = engine.store()
    wanted = {str(p): sha256_text(t) for p, t in zip(files, texts, strict=True)}
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        rows = {str(r["source"]): r["content_hash"] for r in store.source_rows(["source", "content_hash"])}
        if all(rows.get(s) == h for s, h in wanted.items()):
            hits = engine.call("search", {"query": word, "channels": ["lexical"], "limit": 3}).result.hits
            if any(word in h.content for h in hits):
                return time.monotonic() - written
        time.sleep(0.05)
    raise SystemExit(f"watch: the edits were not searchable within {TIMEOUT_S:.0f} s")


def run_suite(run: Run, options: NoOptions) -> dict[str, Any]:
    """Ingest a folder, watch it, edit batches of its files and time each batch until it is searchable."""
    count, sizes = (QUICK_FILES, QUICK_SIZES) if run.quick else (FILES, SIZES)
    rng = random.Random(run.seed)
    folder = run.workspace("watch")
    notes = folder / "notes"
    notes.mkdir(parents=True, exist_ok=True)
    for old in notes.glob("*.md"):
        old.unlink()
    files = [notes / f"note-{n:04d}.md" for n in range(count)]
    for n, path in enumerate(files):
        path.write_text(_note(rng, n), encoding="utf-8")
    settings = Settings()
    rows = []
    with engine_at(folder / "engine", settings) as engine:
        started = time.perf_counter()
        engine.call("ingest_path", {"path": str(notes), "project": "notes"})
        ingest_s = time.perf_counter() - started
        engine.start_watching()
        watch = engine.folder_watch
        assert watch is not None
        deadline = time.monotonic() + 30
        while [f.root for f in watch.watching] != [notes.resolve()] and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(1.0)  # the watch is set up just after it lists its folders
        for round_number, size in enumerate(sizes):
            chosen = rng.sample(files, size)
            texts = []
            for i, path in enumerate(chosen):
                text = path.read_text(encoding="utf-8") + f"\nzqx{round_number}w{i} was added.\n"
                path.write_text(text, encoding="utf-8")
                texts.append(text)
            written = time.monotonic()
            lag = _lag(engine, chosen, texts, f"zqx{round_number}w{size - 1}", written)
            rows.append({"files_changed": size, "lag_s": round(lag, 2)})
            time.sleep(settings.watch.quiet_sec + 0.5)
    return {"files": count, "quiet_sec": settings.watch.quiet_sec, "ingest_s": round(ingest_s, 1), "rounds": rows}


def summary(envelope: dict[str, Any]) -> str:
    r = envelope["result"]
    lines = [f"# Watch lag{' (quick)' if envelope['quick'] else ''}", "",
             f"A watched folder of {r['files']:,} notes (ingested in {r['ingest_s']} s); `watch.quiet_sec` "
             f"{r['quiet_sec']:g} s. Lag: from the last edit until every edited file's new text is stored and "
             "searchable.", "", "| files changed | lag s |", "|---|---|"]
    lines += [f"| {row['files_changed']:,} | {row['lag_s']} |" for row in r["rounds"]]
    return "\n".join(lines) + "\n"
