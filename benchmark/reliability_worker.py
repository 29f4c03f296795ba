"""A worker process the reliability scenario kills with SIGKILL: stores one note, then ingests a folder.

``python -m benchmark.reliability_worker DATA_DIR FOLDER NOTE`` prints ``stored <id>`` once the note is
committed and ``batch <n>`` after each ingest batch, flushing each line, so the test can kill it at a
chosen point (benchmark/reliability.py; tests/test_reliability.py runs it smaller). The embedder is the
deterministic stand-in (the seam), so a kill lands in LanceDB's
writes rather than in model inference.
"""

from __future__ import annotations

import sys
from pathlib import Path

from engram.core import Engine, Paths, Settings
from engram.core.events import EngineEvent, IngestProgressed
from standins.embedder import HashingEmbedder


def main(data: str, folder: str, note: str) -> None:
    root = Path(data)
    settings = Settings.model_validate({"ingest": {"allowed_roots": [folder]}, "store": {"maintenance_writes": 4},
                                        "upkeep": {"duplicates": "exact"}})  # the notes differ by a number alone
    with Engine(Paths(root / "data", root / "config", root / "logs"), settings, embedder=HashingEmbedder()) as engine:
        stored = engine.call("store", {"content": note, "kind": "exchange"}).result
        print(f"stored {stored.id}", flush=True)
        batches = 0

        def progress(event: EngineEvent) -> None:
            nonlocal batches
            if not isinstance(event, IngestProgressed):
                return
            batches += 1
            print(f"batch {batches}", flush=True)

        engine.subscribe(progress)
        engine.call("ingest_path", {"path": folder, "project": "corpus"})
        print("done", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:4])
