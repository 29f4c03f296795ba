"""Export → import of an n-memory workspace, timed, and checked field by field (docs/design/upkeep.md, "Measure").

``measure_round_trip(n)`` builds a workspace of ``n`` notes and exchanges in a fresh data folder — seeded synthetic
text, each with a mention edge, one fact per 100 memories — written in bulk through the store's writer (what is
measured is the export and the import, not embedding: the vectors are seeded random unit vectors and the engine's
embedding model is the hashing stand-in, which no step of either calls). It then exports the workspace, imports the
folder into a second, fresh data folder, and compares every row of every exported table (vectors included).
Not a registered suite yet: a suite's ``run_suite`` calls it and records what it returns.
"""

from __future__ import annotations

import random
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from engram.core import Engine, Paths, Settings
from engram.core.ingest.records import mention_edges, note_row
from engram.core.store.queries import TABLE_KEYS
from standins.embedder import HashingEmbedder

from .writes import exchanges

TABLES = ("memories", "facts", "edges", "sources")
#: Memories written per commit while the workspace is built.
BUILD_BATCH = 1000


def _engine(folder: Path) -> Engine:
    return Engine(Paths(folder / "data", folder / "config", folder / "logs"), Settings(), embedder=HashingEmbedder())


def build_workspace(engine: Engine, n: int, seed: int = 7) -> None:
    """``n`` memories (notes and exchanges in 10 projects, each mentioning a ``snake_case`` name) and ``n // 100``
    facts, written in commits of ``BUILD_BATCH``."""
    store = engine.store()
    rng = np.random.default_rng(seed)
    pick = random.Random(seed)
    turns = exchanges(seed)
    start = datetime(2025, 1, 1, tzinfo=UTC)
    for first in range(0, n, BUILD_BATCH):
        count = min(BUILD_BATCH, n - first)
        vectors = rng.standard_normal((count, store.dimensions)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        rows, edges = [], []
        for i in range(count):
            number = first + i
            speaker, text = next(turns)
            memory_id = f"{number:012x}"
            content = f"{text} (see topic_{number % 97})"
            rows.append(note_row(memory_id=memory_id, project=f"project-{number % 10}",
                                 kind="exchange" if number % 3 else "note", type_="note", tags=[speaker.lower()],
                                 title=f"{speaker} · turn {number}", content=content, vector=vectors[i],
                                 now=start + timedelta(seconds=number, microseconds=number % 1000)))
            edges += mention_edges(memory_id, content, memory_id)
        engine.internals().writer.run(store.add_memories, rows, edges)
    for f in range(n // 100):
        engine.call("kg_edit", {"action": "add", "subject": pick.choice(["Caroline", "Melanie", "Jon"]),
                                "predicate": "likes", "object": f"topic {f}", "project": f"project-{f % 10}"})


def _rows(engine: Engine) -> dict[str, list[dict[str, Any]]]:
    store = engine.store()
    return {name: sorted(store.table_data(name).to_pylist(), key=lambda r: r[TABLE_KEYS[name]])  # type: ignore[arg-type]
            for name in TABLES}


def measure_round_trip(n: int = 10_000, folder: Path | None = None) -> dict[str, Any]:
    """Build an ``n``-memory workspace, export it, import it into a fresh data folder; the times and the check.

    Returns ``{"memories", "facts", "edges", "build_s", "export_s", "import_s", "export_mb", "equal"}``; ``equal``
    is whether every row of every table came back with every field equal. ``folder`` (default: a temporary one,
    removed afterwards) holds both data folders and the export.
    """
    with tempfile.TemporaryDirectory(prefix="engram-transfer-") as scratch:
        root = folder or Path(scratch)
        with _engine(root / "source") as source:
            started = time.perf_counter()
            build_workspace(source, n)
            built = time.perf_counter() - started
            started = time.perf_counter()
            exported = source.export_workspace(root / "export")
            export_s = time.perf_counter() - started
            before = _rows(source)
        size = sum(p.stat().st_size for p in (root / "export").rglob("*") if p.is_file())
        with _engine(root / "target") as target:
            started = time.perf_counter()
            imported = target.import_path(root / "export")
            import_s = time.perf_counter() - started
            equal = _rows(target) == before and imported.added == exported.counts
    return {"memories": exported.counts.memories, "facts": exported.counts.facts, "edges": exported.counts.edges,
            "build_s": round(built, 3), "export_s": round(export_s, 3), "import_s": round(import_s, 3),
            "export_mb": round(size / 1e6, 2), "equal": equal}


if __name__ == "__main__":
    import json
    import sys

    print(json.dumps(measure_round_trip(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)))
