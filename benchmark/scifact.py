"""Retrieval quality on BEIR SciFact (test split): lexical-only, semantic-only, hybrid, hybrid+graph.

    python -m benchmark.scifact [--data ../shared/data/scifact.zip] [--quick]

The 5,183 abstracts (title + abstract) are written as one file each and ingested once into a
cached workspace with the bundled model; the 300 test claims are the queries. A document's rank is
the rank of its best chunk. Reports nDCG@10, recall@10, recall@100 and MRR@10 per configuration,
beside published figures. SciFact is CC BY-NC: it is read from the path given, never committed.
"""

from __future__ import annotations

import argparse
import csv
import io
import math
import re
import time
import zipfile
from pathlib import Path
from typing import Any

from engram.core.retrieval.search import Filters, SearchParams, hybrid_search

from .common import CACHE, machine, open_engine, write_result

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "scifact.zip"
CONFIGS = {
    "lexical": ("lexical",),
    "semantic": ("semantic",),
    "hybrid": ("semantic", "lexical"),
    "hybrid+graph": ("semantic", "lexical", "graph"),
}
PUBLISHED = {"MiniLM dense (BEIR leaderboard)": 0.674, "BM25 (BEIR paper, Elasticsearch)": 0.665}
_SENTENCE = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"")


def read_scifact(path: Path) -> tuple[dict[str, str], dict[str, tuple[str, set[str]]]]:
    """(doc_id → "title\\n\\nabstract", claim id → (claim, relevant doc ids)) of the BEIR test split."""
    csv.field_size_limit(1 << 24)
    with zipfile.ZipFile(path) as z:
        corpus_rows = csv.DictReader(io.TextIOWrapper(z.open("corpus_train.csv"), encoding="utf-8"))
        docs = {}
        for row in corpus_rows:
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
    return {"ndcg@10": dcg / ideal if ideal else 0.0,
            "recall@10": len(relevant & set(ranked[:10])) / len(relevant),
            "recall@100": len(relevant & set(ranked[:100])) / len(relevant),
            "mrr@10": 1 / (first + 1) if first is not None else 0.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="Path to scifact.zip.")
    parser.add_argument("--quick", action="store_true", help="500 documents and their queries only (smoke run).")
    args = parser.parse_args()
    docs, queries = read_scifact(args.data)
    if args.quick:
        keep = sorted({d for _, rel in queries.values() for d in rel} & set(docs))[:250]
        keep += [d for d in sorted(docs) if d not in keep][: 500 - len(keep)]
        docs = {d: docs[d] for d in keep}
        queries = {q: (c, rel & set(docs)) for q, (c, rel) in queries.items() if rel & set(docs)}
    name = "scifact-quick" if args.quick else "scifact"
    folder = CACHE / name / "docs"
    folder.mkdir(parents=True, exist_ok=True)
    for doc_id, text in docs.items():
        path = folder / f"{doc_id}.txt"
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")

    with open_engine(name) as engine:
        started = time.perf_counter()
        ingest = engine.call("ingest_path", {"path": str(folder), "project": "scifact"}).result
        ingest_s = time.perf_counter() - started
        chunks = engine.call("status").result.memories
        scope = engine.scope()
        embedder = engine.embedder()
        cfg = engine.settings.search
        results: dict[str, Any] = {}
        for label, channels in CONFIGS.items():
            params = SearchParams(limit=400, k_per_channel=200, rrf_k=cfg.rrf_k, graph_seeds=cfg.graph_seeds,
                                  graph_hops=cfg.graph_hops, channels=channels,
                                  weights={"semantic": cfg.weight_semantic, "lexical": cfg.weight_lexical,
                                           "graph": cfg.weight_graph})
            totals = {"ndcg@10": 0.0, "recall@10": 0.0, "recall@100": 0.0, "mrr@10": 0.0}
            started = time.perf_counter()
            for claim, relevant in queries.values():
                outcome = hybrid_search(scope.store, embedder, claim, Filters(), params)
                ranked = list(dict.fromkeys(Path(h.row["source"]).stem for h in outcome.hits))
                for key, value in metrics(ranked, relevant).items():
                    totals[key] += value
            seconds = time.perf_counter() - started
            results[label] = {k: round(v / len(queries), 4) for k, v in totals.items()}
            results[label]["ms_per_query"] = round(1000 * seconds / len(queries), 1)
            print(label, results[label], flush=True)

    result = {"suite": "quality", "dataset": "BEIR SciFact test (claims_validation.csv)", "quick": args.quick,
              "documents": len(docs), "queries": len(queries), "chunks": chunks,
              "ingest": {"files_indexed": ingest.files_indexed, "files_unchanged": ingest.files_unchanged,
                         "seconds": round(ingest_s, 1)}, "model": "all-MiniLM-L6-v2 f16 GGUF (bundled)",
              "bm25": "LanceDB native FTS: simple tokenizer, lower-case, English stemming and stop words, ASCII folding",
              "configs": results, "published": PUBLISHED, "machine": machine()}
    lines = ["# Retrieval quality — SciFact" + (" (quick)" if args.quick else ""), "",
             f"{len(docs)} documents ({chunks} chunks), {len(queries)} queries; weights "
             f"semantic {cfg.weight_semantic}, lexical {cfg.weight_lexical}, graph {cfg.weight_graph}.", "",
             "| configuration | nDCG@10 | recall@10 | recall@100 | MRR@10 | ms/query |", "|---|---|---|---|---|---|"]
    for label, r in results.items():
        lines.append(f"| {label} | {r['ndcg@10']:.3f} | {r['recall@10']:.3f} | {r['recall@100']:.3f} | "
                     f"{r['mrr@10']:.3f} | {r['ms_per_query']} |")
    lines += ["", "Published, for comparison: " + "; ".join(f"{k} nDCG@10 {v}" for k, v in PUBLISHED.items()), ""]
    summary = "\n".join(lines)
    out = write_result("quality", result, summary)
    print(summary)
    print(f"written to {out}")


if __name__ == "__main__":
    main()
