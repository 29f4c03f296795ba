"""Suite `quality`: BEIR SciFact (test split) — lexical-only, semantic-only, hybrid (the default, auto, which
fuses abstracts by RRF; convex; convex with feedback, the fusion auto uses for conversations), hybrid+graph.

The 5,183 abstracts (title + abstract) are written one file each and ingested once with the bundled
model; the 300 test claims are the queries; a document ranks where its best chunk ranks. Reports
nDCG@10, recall@10, recall@100 and MRR@10 per configuration, the dense-only and BM25-only
baselines among them, with the vector index and with an exact scan, beside published figures.
SciFact is CC BY-NC 2.0: it is read from the path given, never committed.
"""

from __future__ import annotations

import csv
import io
import math
import random
import re
import time
import zipfile
from pathlib import Path
from typing import Any, cast

from engram.core.retrieval.search import Filters, SearchParams, hybrid_search
from engram.core.store import inspection

from . import plots
from .common import Run, engine_at
from .suites import QualityOptions

#: label → (channels, fusion, feedback). Every configuration reads 200 candidates per channel (recall@100 needs them).
CONFIGS: dict[str, tuple[tuple[str, ...], str, bool]] = {
    "lexical (BM25-only baseline)": (("lexical",), "rrf", False),
    "semantic (dense-only baseline)": (("semantic",), "rrf", False),
    "hybrid (default: auto, RRF for abstracts)": (("semantic", "lexical"), "auto", True),
    "hybrid, convex": (("semantic", "lexical"), "convex", False),
    "hybrid, convex + feedback (auto's fusion for conversations)": (("semantic", "lexical"), "convex", True),
    "hybrid+graph (the default search)": (("semantic", "lexical", "graph"), "auto", True),
}
PUBLISHED = {"MiniLM dense, BEIR leaderboard": 0.674, "BM25, BEIR paper (Elasticsearch)": 0.665}
_SENTENCE = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"")


def read_scifact(path: Path) -> tuple[dict[str, str], dict[str, tuple[str, set[str]]]]:
    """(doc id → "title\\n\\nabstract", claim id → (claim, relevant doc ids)) of the BEIR test split."""
    csv.field_size_limit(1 << 24)
    with zipfile.ZipFile(path) as z:
        docs = {}
        for row in csv.DictReader(io.TextIOWrapper(z.open("corpus_train.csv"), encoding="utf-8")):
            sentences = [a or b for a, b in _SENTENCE.findall(row["abstract"])]
            docs[row["doc_id"]] = row["title"].strip() + "\n\n" + " ".join(s.strip() for s in sentences)
        queries: dict[str, tuple[str, set[str]]] = {}
        for row in csv.DictReader(io.TextIOWrapper(z.open("claims_validation.csv"), encoding="utf-8")):
            cited = set(re.findall(r"\d+", row["cited_doc_ids"]))
            claim, rel = queries.get(row["id"], (row["claim"], set()))
            queries[row["id"]] = (claim, rel | cited)
    return docs, queries


def metrics(ranked: list[str], relevant: set[str]) -> dict[str, float]:
    dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(ranked[:10]) if d in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), 10)))
    first = next((i for i, d in enumerate(ranked[:10]) if d in relevant), None)
    return {"ndcg@10": dcg / ideal if ideal else 0.0, "recall@10": len(relevant & set(ranked[:10])) / len(relevant),
            "recall@100": len(relevant & set(ranked[:100])) / len(relevant),
            "mrr@10": 1 / (first + 1) if first is not None else 0.0}


def subset(docs: dict[str, str], queries: dict[str, tuple[str, set[str]]], seed: int, n_queries: int,
           n_docs: int) -> tuple[dict[str, str], dict[str, tuple[str, set[str]]]]:
    """A small, seeded slice for --quick: some queries, their relevant documents, and distractors."""
    rng = random.Random(seed)
    chosen = dict(rng.sample(sorted(queries.items()), min(n_queries, len(queries))))
    keep = {d for _, rel in chosen.values() for d in rel if d in docs}
    others = [d for d in sorted(docs) if d not in keep]
    keep |= set(rng.sample(others, max(0, min(len(others), n_docs - len(keep)))))
    return ({d: docs[d] for d in sorted(keep)},
            {q: (c, rel & keep) for q, (c, rel) in chosen.items() if rel & keep})


def run_suite(run: Run, options: QualityOptions) -> dict[str, Any]:
    data = options.data
    docs, queries = read_scifact(data)
    if run.quick:
        docs, queries = subset(docs, queries, run.seed, n_queries=20, n_docs=120)
    base = run.workspace("scifact")
    folder = base / "docs"
    folder.mkdir(parents=True, exist_ok=True)
    for doc_id, text in docs.items():
        path = folder / f"{doc_id}.txt"
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    with engine_at(base) as engine:
        started = time.perf_counter()
        ingest = engine.call("ingest_path", {"path": str(folder), "project": "scifact"}).result
        ingest_s = time.perf_counter() - started
        chunks = engine.call("status").result.memories
        store = engine.store()
        has_index = any("vector" in i.columns for i in inspection.indexes(store, "memories"))
        embedder = engine.embedder()
        cfg = engine.settings.search
        results: dict[str, Any] = {}
        variants = [(label, spec, False) for label, spec in CONFIGS.items()]
        if has_index:
            variants += [(f"{label}, exact vector scan", spec, True) for label, spec in CONFIGS.items()
                         if "semantic" in spec[0] and "graph" not in spec[0]]
        for label, (channels, fusion, feedback), exact in variants:
            params = SearchParams(limit=400, k_per_channel=200, rrf_k=cfg.rrf_k,
                                  graph_seeds=cfg.graph_seeds, graph_hops=cfg.graph_hops, channels=channels,
                                  exact=exact, fusion=cast(Any, fusion), feedback=feedback,
                                  weights={"semantic": cfg.weight_semantic, "lexical": cfg.weight_lexical,
                                           "graph": cfg.weight_graph})
            totals = dict.fromkeys(("ndcg@10", "recall@10", "recall@100", "mrr@10"), 0.0)
            started = time.perf_counter()
            for claim, relevant in queries.values():
                outcome = hybrid_search(store, embedder, claim, Filters(), params)
                ranked = list(dict.fromkeys(Path(h.row["source"]).stem for h in outcome.hits))
                for key, value in metrics(ranked, relevant).items():
                    totals[key] += value
            seconds = time.perf_counter() - started
            results[label] = {k: round(v / len(queries), 4) for k, v in totals.items()}
            results[label]["ms_per_query"] = round(1000 * seconds / len(queries), 1)
            print(f"quality {label}: {results[label]}", flush=True)

    main = [label for label in CONFIGS]
    plots.grouped_bars(run.folder / "ndcg.png", "SciFact nDCG@10 and recall@100", [c.split(" (")[0].split(",")[0] + (
                           ", " + c.split(", ")[1].split(" (")[0] if ", " in c else "") for c in main],
                       {"nDCG@10": [results[c]["ndcg@10"] for c in main],
                        "recall@100": [results[c]["recall@100"] for c in main]}, "score",
                       reference=("MiniLM dense, published 0.674", PUBLISHED["MiniLM dense, BEIR leaderboard"]))
    return {"dataset": "BEIR SciFact test split (claims_validation.csv)", "data_file": data.name,
            "documents": len(docs), "queries": len(queries), "chunks": chunks, "vector_index": has_index,
            "ingest": {"files_indexed": ingest.files_indexed, "seconds": round(ingest_s, 1)},
            "model": "all-MiniLM-L6-v2 f16 GGUF (bundled), 256-token window",
            "bm25": "LanceDB native FTS: simple tokenizer, lower-case, English stemming and stop words, ASCII folding",
            "weights": {"semantic": cfg.weight_semantic, "lexical": cfg.weight_lexical, "graph": cfg.weight_graph,
                        "rrf_k": cfg.rrf_k},
            "configs": results, "published": PUBLISHED}


def summary(envelope: dict[str, Any]) -> str:
    result = envelope["result"]
    w, results = result["weights"], result["configs"]
    lines = [f"# Retrieval quality — SciFact{' (quick)' if envelope['quick'] else ''}", "",
             f"{result['documents']} documents ({result['chunks']} chunks), {result['queries']} queries; vector "
             f"index: {'yes' if result['vector_index'] else 'no'}; weights semantic {w['semantic']}, lexical "
             f"{w['lexical']}, graph {w['graph']}; RRF k {w['rrf_k']}; 200 candidates per channel.", "",
             "| configuration | nDCG@10 | recall@10 | recall@100 | MRR@10 | ms/query |", "|---|---|---|---|---|---|"]
    for label, r in results.items():
        lines.append(f"| {label} | {r['ndcg@10']:.3f} | {r['recall@10']:.3f} | {r['recall@100']:.3f} | "
                     f"{r['mrr@10']:.3f} | {r['ms_per_query']} |")
    lines += ["", "Published, for comparison: " + "; ".join(f"{k} nDCG@10 {v}" for k, v in
                                                             result["published"].items()) + ".",
              "", "![nDCG](ndcg.png)", ""]
    return "\n".join(lines)
