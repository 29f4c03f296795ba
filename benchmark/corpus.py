"""The lookups corpus: fetched and pinned from its requirement, filtered by its globs, indexed once."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engram.core import Engine

from .common import Run, engine_at, fetch_sdist


@dataclass(frozen=True)
class Corpus:
    name: str
    folder: Path  # the unpacked source distribution (the ingest root)
    sha256: str
    include: list[str]
    lookups: list[dict[str, Any]]
    spec: dict[str, Any]


def load(run: Run, lookups_file: Path) -> Corpus:
    """Read a lookups file and fetch its corpus, checked against the SHA256 the file pins (``corpus.sha256``, when
    it names one). ``--quick`` keeps two lookups and indexes only their gold files.

    Raises:
        SystemExit: the fetched archive is not the pinned one.
    """
    spec = json.loads(lookups_file.read_text(encoding="utf-8"))
    corpus = spec["corpus"]
    folder, digest = fetch_sdist(corpus["requirement"], run.cache)
    pinned = corpus.get("sha256")
    if pinned and pinned != digest:
        raise SystemExit(f"{lookups_file.name}: the sdist of {corpus['requirement']} has SHA256 {digest}, not the "
                         f"{pinned} the lookups were written against; delete {folder}.tar.gz and {folder} to fetch it again")
    lookups = spec["lookups"]
    include = list(corpus["include"])
    if run.quick:
        lookups = lookups[:2]
        include = sorted({g for lookup in lookups for g in lookup["gold"]})
    return Corpus(corpus["name"], folder, digest, include, lookups, spec)


def indexed(run: Run, corpus: Corpus) -> tuple[Engine, dict[str, Any]]:
    """An engine whose default workspace holds the corpus (indexed now if needed), and the ingest figures."""
    engine = engine_at(run.workspace(f"index-{corpus.name}"))
    started = time.perf_counter()
    report = engine.call("ingest_path", {"path": str(corpus.folder), "project": corpus.name,
                                         "include": corpus.include}).result
    seconds = time.perf_counter() - started
    return engine, {"files_indexed": report.files_indexed, "files_unchanged": report.files_unchanged,
                    "chunks_written": report.chunks_written, "seconds": round(seconds, 2)}
