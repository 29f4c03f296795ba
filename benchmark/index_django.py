"""Ingest throughput on a real corpus: the Django 5.2.8 sdist, filtered by the lookups file's globs.

    python -m benchmark.index_django [--lookups benchmark/django-lookups.json] [--fresh]

Reports files, chunks, seconds, chunks/s and files/s of a full first ingest (``--fresh`` drops the
cached workspace first), then the time of an unchanged re-run.
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

from .common import CACHE, fetch_sdist, machine, open_engine, write_result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lookups", type=Path, default=Path(__file__).with_name("django-lookups.json"))
    parser.add_argument("--fresh", action="store_true", help="Drop the cached workspace and index from scratch.")
    args = parser.parse_args()
    corpus = json.loads(args.lookups.read_text())["corpus"]
    folder, digest = fetch_sdist(corpus["requirement"])
    name = f"index-{corpus['name']}"
    if args.fresh:
        shutil.rmtree(CACHE / name, ignore_errors=True)
    with open_engine(name) as engine:
        started = time.perf_counter()
        first = engine.call("ingest_path", {"path": str(folder), "project": corpus["name"],
                                            "include": corpus["include"]}).result
        first_s = time.perf_counter() - started
        started = time.perf_counter()
        again = engine.call("ingest_path", {"path": str(folder), "project": corpus["name"],
                                            "include": corpus["include"]}).result
        again_s = time.perf_counter() - started
        status = engine.call("status").result
    result = {
        "suite": "index", "corpus": corpus, "sdist_sha256": digest, "machine": machine(),
        "first_run": {"files_indexed": first.files_indexed, "chunks": first.chunks_written, "seconds": round(first_s, 2),
                      "chunks_per_s": round(first.chunks_written / first_s, 1) if first.chunks_written else None,
                      "files_per_s": round(first.files_indexed / first_s, 2) if first.files_indexed else None,
                      "skipped": len(first.skipped)},
        "unchanged_rerun": {"files_unchanged": again.files_unchanged, "seconds": round(again_s, 2)},
        "store": {"memories": status.memories, "sources": status.sources, "edges": status.edges},
    }
    fr = result["first_run"]
    summary = (f"# Ingest throughput — {corpus['name']}\n\n"
               f"sdist sha256 `{digest}`; include {corpus['include']}\n\n"
               f"| files | chunks | seconds | chunks/s | files/s | unchanged re-run |\n|---|---|---|---|---|---|\n"
               f"| {fr['files_indexed']} | {fr['chunks']} | {fr['seconds']} | {fr['chunks_per_s']} | "
               f"{fr['files_per_s']} | {result['unchanged_rerun']['seconds']} s |\n")
    out = write_result("index", result, summary)
    print(summary)
    print(f"written to {out}")


if __name__ == "__main__":
    main()
