"""Suite `speed`: ingest throughput, and search/recall latency and memory as the store grows.

1. Ingest: a fresh ingest of the lookups corpus (chunks/s, files/s), then an unchanged re-run.
2. Scale: stores of 1k, 10k, 50k and 200k chunks (--quick: 300 and 1,200) made of the corpus's real
   chunks, padded with synthetic ones (words resampled from the corpus, vectors near real ones,
   sequence/part-of/mention edges like ingest makes). At each size a fresh process runs the lookups'
   part queries and questions through `search` (lexical-only, semantic-only, hybrid, hybrid+graph)
   and each lookup's plan through `recall`, first without a vector index, then with one; it reports
   p50/p95 latency and its peak RSS. Plots show how each grows with the store (log-log).
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from engram.core.store import inspection
from engram.core.store.maintenance import maintain
from engram.core.store.schema import EDGES_SCHEMA, ENTITY_PREFIX, SOURCE_PREFIX, SOURCES_SCHEMA

from . import plots
from .common import Run, engine_at
from .corpus import Corpus, indexed, load
from .suites import LookupsOptions

SIZES = (1_000, 10_000, 50_000, 200_000)
QUICK_SIZES = (300, 1_200)
CONFIGS = {"lexical": ["lexical"], "semantic": ["semantic"], "hybrid": ["semantic", "lexical"],
           "hybrid+graph": ["semantic", "lexical", "graph"]}


def ingest_throughput(run: Run, corpus: Corpus) -> dict[str, Any]:
    base = run.workspace(f"speed-ingest-{corpus.name}")
    shutil.rmtree(base, ignore_errors=True)
    with engine_at(base) as engine:
        engine.embedder()  # the model load is not ingest
        args = {"path": str(corpus.folder), "project": corpus.name, "include": corpus.include}
        started = time.perf_counter()
        first = engine.call("ingest_path", args).result
        first_s = time.perf_counter() - started
        started = time.perf_counter()
        again = engine.call("ingest_path", args).result
        again_s = time.perf_counter() - started
    shutil.rmtree(base, ignore_errors=True)
    return {"files": first.files_indexed, "chunks": first.chunks_written, "seconds": round(first_s, 1),
            "chunks_per_s": round(first.chunks_written / first_s, 1), "files_per_s": round(first.files_indexed / first_s, 2),
            "unchanged_rerun_s": round(again_s, 2), "unchanged_files": again.files_unchanged}


def _base_rows(engine: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    store = engine.store()
    memories = inspection.table(store, "memories").search().limit(None).to_arrow().to_pylist()
    edges = inspection.rows(store, "edges", None)
    return memories, edges


def build_store(run: Run, corpus_engine: Any, size: int) -> Path:
    """A workspace of ``size`` chunks: real ones first, then synthetic padding (cached per size)."""
    folder = run.workspace(f"speed-scale-{size}")
    with engine_at(folder) as engine:
        store = engine.store()
        if inspection.count(store, "memories") == size:
            # A cached store keeps the vector index an earlier run added; "without an index" must mean it.
            for index in inspection.table(store, "memories").list_indices():
                if "vector" in index.columns:
                    engine.internals().writer.run(inspection.table(store, "memories").drop_index, index.name)
            return folder
    shutil.rmtree(folder, ignore_errors=True)
    rng = random.Random(run.seed + size)
    nrng = np.random.default_rng(run.seed + size)
    real, real_edges = _base_rows(corpus_engine)
    rows = real[:size]
    kept = {r["id"] for r in rows}
    edges = [e for e in real_edges if e["src"] in kept and (e["dst"] in kept or e["dst"][:2] in (ENTITY_PREFIX, SOURCE_PREFIX))]
    words = [w for r in real[:2000] for w in r["content"].split()]
    entities = [e["dst"] for e in real_edges if e["relation"] == "mentions"]
    vectors = np.asarray([r["vector"] for r in real], dtype=np.float32)
    template = real[0]
    sources: dict[str, int] = defaultdict(int)
    for r in rows:
        sources[r["source"]] += 1
    n_synthetic = size - len(rows)
    if n_synthetic:
        picks = nrng.integers(0, len(vectors), n_synthetic)
        noisy = vectors[picks] + nrng.normal(0, 0.05, (n_synthetic, vectors.shape[1])).astype(np.float32)
        noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
    for i in range(n_synthetic):
        source = f"/synthetic/file{i // 10:06d}.txt"
        mid = f"s{i:011d}"
        rows.append({**template, "id": mid, "source": source, "title": f"Synthetic {i // 10}",
                     "content": " ".join(rng.choices(words, k=150)), "vector": noisy[i], "chunk_index": i % 10,
                     "start_line": (i % 10) * 20 + 1, "end_line": (i % 10) * 20 + 20, "content_hash": mid})
        sources[source] += 1
        edges.append({"id": f"p{mid}", "src": mid, "dst": SOURCE_PREFIX + source, "relation": "part_of",
                      "weight": 0.5, "origin": source})
        if i % 10:
            edges.append({"id": f"n{mid}", "src": f"s{i - 1:011d}", "dst": mid, "relation": "next", "weight": 1.0,
                          "origin": source})
        for j, entity in enumerate(rng.sample(entities, 3) if entities else []):
            edges.append({"id": f"m{j}{mid}", "src": mid, "dst": entity, "relation": "mentions", "weight": 1.0,
                          "origin": source})
    with engine_at(folder) as engine:
        store = engine.store()
        schema = inspection.table(store, "memories").schema
        for start in range(0, len(rows), 20_000):
            batch = rows[start:start + 20_000]
            engine.internals().writer.run(store.append, "memories", store._table_from_rows(batch, schema))
        for start in range(0, len(edges), 200_000):
            engine.internals().writer.run(store.append, "edges", store._table_from_rows(edges[start:start + 200_000], EDGES_SCHEMA))
        now = template["created_at"]
        source_rows = [{"source": s, "project": template["project"], "kind": "file", "root": "/", "mtime": 0.0,
                        "size": 0, "content_hash": s, "chunk_count": n, "summary": "", "ingested_at": now}
                       for s, n in sources.items()]
        engine.internals().writer.run(store.append, "sources", pa.Table.from_pylist(source_rows, schema=SOURCES_SCHEMA))
        engine.internals().writer.run(maintain, store, 10**9)  # full-text and key indexes, no vector index yet
    return folder


def measure(folder: Path, corpus: Corpus, quick: bool) -> dict[str, Any]:
    """Latency and peak RSS at one size, in a fresh process."""
    queries = [p["query"] for lk in corpus.lookups for p in lk["parts"]] + [lk["question"] for lk in corpus.lookups]
    plans = [[{"tool": "search", "args": {"query": p["query"]}} for p in lk["parts"]] for lk in corpus.lookups]
    job = json.dumps({"folder": str(folder), "queries": queries, "plans": plans, "configs": CONFIGS,
                      "repeat": 1 if quick else 3})
    out = subprocess.run([sys.executable, "-m", "benchmark.speed_worker"], input=job, capture_output=True,
                         text=True, check=True, cwd=Path(__file__).resolve().parents[1])
    return json.loads(out.stdout.strip().splitlines()[-1])


def add_vector_index(folder: Path) -> float:
    with engine_at(folder) as engine:
        store = engine.store()
        started = time.perf_counter()
        engine.internals().writer.run(maintain, store, 1)
        return round(time.perf_counter() - started, 1)


def run_suite(run: Run, options: LookupsOptions) -> dict[str, Any]:
    corpus = load(run, options.lookups)
    ingest = ingest_throughput(run, corpus)
    print(f"speed ingest: {ingest}", flush=True)
    corpus_engine, _ = indexed(run, corpus)
    scale: dict[int, dict[str, Any]] = {}
    with corpus_engine:
        sizes = QUICK_SIZES if run.quick else SIZES
        for size in sizes:
            folder = build_store(run, corpus_engine, size)
            flat = measure(folder, corpus, run.quick)
            build_s = add_vector_index(folder)
            indexed_ = measure(folder, corpus, run.quick)
            scale[size] = {"no_vector_index": flat, "vector_index": indexed_, "vector_index_build_s": build_s}
            print(f"speed {size}: hybrid+graph p50 {flat['search']['hybrid+graph']['p50_ms']} ms without index, "
                  f"{indexed_['search']['hybrid+graph']['p50_ms']} ms with; RSS {indexed_['peak_rss_mb']} MB", flush=True)
    sizes = sorted(scale)
    series = {}
    for cfg in CONFIGS:
        series[f"{cfg}"] = [scale[s]["vector_index"]["search"][cfg]["p50_ms"] for s in sizes]
        series[f"{cfg}, no vector index"] = [scale[s]["no_vector_index"]["search"][cfg]["p50_ms"] for s in sizes]
    series["recall (plan)"] = [scale[s]["vector_index"]["recall"]["p50_ms"] for s in sizes]
    plots.loglog(run.folder / "latency.png", "Search p50 latency vs store size", sizes, series, "chunks", "ms (p50)")
    plots.loglog(run.folder / "memory.png", "Peak RSS vs store size", sizes,
                 {"with vector index": [scale[s]["vector_index"]["peak_rss_mb"] for s in sizes],
                  "without": [scale[s]["no_vector_index"]["peak_rss_mb"] for s in sizes]}, "chunks", "MB")
    return {"corpus": corpus.spec["corpus"], "sdist_sha256": corpus.sha256, "ingest": ingest, "scale": scale}


def summary(envelope: dict[str, Any]) -> str:
    result = envelope["result"]
    ingest, scale = result["ingest"], {int(k): v for k, v in result["scale"].items()}
    sizes = sorted(scale)
    lines = [f"# Speed and scale{' (quick)' if envelope['quick'] else ''}", "",
             f"Ingest of {result['corpus']['name']} ({ingest['files']} files, {ingest['chunks']} chunks): "
             f"{ingest['seconds']} s = **{ingest['chunks_per_s']} chunks/s, {ingest['files_per_s']} files/s**; an "
             f"unchanged re-run {ingest['unchanged_rerun_s']} s.", "",
             "Latency p50 / p95 in ms (the `search` tool end to end, query embedding included; recall = the "
             "lookup's plan of searches):", "",
             "| chunks | index | lexical | semantic | hybrid | hybrid+graph | recall | peak RSS MB |",
             "|---|---|---|---|---|---|---|---|"]
    for s in sizes:
        for key, label in (("no_vector_index", "none"), ("vector_index", "IVF_HNSW_SQ")):
            m = scale[s][key]
            cells = [f"{m['search'][c]['p50_ms']} / {m['search'][c]['p95_ms']}" for c in CONFIGS]
            lines.append(f"| {s:,} | {label} | " + " | ".join(cells) +
                         f" | {m['recall']['p50_ms']} / {m['recall']['p95_ms']} | {m['peak_rss_mb']} |")
    lines += ["", "Vector index build: " + ", ".join(f"{s:,} chunks {scale[s]['vector_index_build_s']} s"
                                                     for s in sizes) + ".", "",
              "![latency](latency.png) ![memory](memory.png)", ""]
    return "\n".join(lines)
