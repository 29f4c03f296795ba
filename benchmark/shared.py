"""Suite `shared`: a workspace in a bucket (S3 on loopback) against the same workspace on the local disk.

    python -m benchmark shared

On the Django lookups corpus (its documentation topics and how-tos: the part a team shares most), with the bundled
embedding model, three arms each get a fresh workspace:

- **local**: a folder on this disk (Engram's default);
- **bucket**: a shared workspace in an S3 bucket served by moto's S3 server on 127.0.0.1, reached through a
  proxy that adds nothing but counts the requests;
- **bucket +20 ms**: the same through a proxy that adds 20 ms to every request, as a bucket in another
  building or a nearby cloud region would.

Each arm measures ingest throughput (chunks/s, embedding included: the model runs on the writing machine), single
`store` latency, and `search` latency over the lookups' parts and questions (hybrid, the default), with
``store.shared_read_consistency_sec`` at its default (5 s) and at 0 (the bucket is asked for the latest version
before every read), and the bucket's requests per search. moto is a Python server on the same 2 cores as the
engine, so the loopback arm is slower than a real S3-compatible server next door would be; the +20 ms arm shows what
each extra round trip of a real network costs.
"""

from __future__ import annotations

import shutil
import statistics
import time
from typing import Any

from engram.core import Engine, Paths, Settings
from engram.core.store.location import BucketLocation
from standins.delay_proxy import DelayProxy

from .common import Run, engine_at, note_settings, percentile
from .corpus import Corpus, load
from .suites import LookupsOptions

INCLUDE = ["docs/topics/**/*.txt", "docs/howto/**/*.txt"]
ARMS = {"local": None, "bucket": 0.0, "bucket +20 ms": 0.020}
STORES = 100


def _ms(values: list[float]) -> dict[str, float]:
    return {"p50_ms": round(1000 * statistics.median(values), 1), "p95_ms": round(1000 * percentile(values, 0.95), 1),
            "n": len(values)}


def _queries(corpus: Corpus) -> list[str]:
    out: list[str] = []
    for lookup in corpus.lookups:
        out.append(lookup["question"])
        out.extend(part["query"] for part in lookup["parts"])
    return out


def _engine(run: Run, arm: str, endpoint: str | None, embedder: Any, consistency: float) -> Engine:
    folder = run.workspace("shared-" + arm.replace(" ", "").replace("+", "-"))
    settings = Settings.model_validate({"store": {"shared_read_consistency_sec": consistency},
                                        "upkeep": {"duplicates": "exact"}})  # its notes differ by a number alone
    if endpoint is None:
        return engine_at(folder, settings, embedder=embedder)
    settings.ingest.allowed_roots = [*settings.ingest.allowed_roots, str(folder.parent.resolve())]
    from standins.s3 import OPEN_KEY

    environ = {"AWS_ACCESS_KEY_ID": OPEN_KEY[0], "AWS_SECRET_ACCESS_KEY": OPEN_KEY[1]}
    note_settings(settings)
    return Engine(Paths(folder / "data", folder / "config", folder / "logs"), settings, embedder=embedder,
                  environ=environ)


def _searches(engine: Engine, workspace: str, queries: list[str], rounds: int,
              proxy: DelayProxy | None) -> dict[str, Any]:
    times: list[float] = []
    requests_before = proxy.requests if proxy else 0
    for _ in range(rounds):
        for query in queries:
            started = time.perf_counter()
            engine.call("search", {"query": query, "workspace": workspace})
            times.append(time.perf_counter() - started)
    out = _ms(times)
    if proxy is not None:
        out["requests_per_search"] = round((proxy.requests - requests_before) / len(times), 1)
    return out


def measure_arm(run: Run, arm: str, delay: float | None, corpus: Corpus, include: list[str], embedder: Any,
                s3: Any) -> dict[str, Any]:
    folder = run.workspace("shared-" + arm.replace(" ", "").replace("+", "-"))
    shutil.rmtree(folder, ignore_errors=True)
    proxy = DelayProxy(s3.port, delay) if delay is not None else None
    workspace = "default" if proxy is None else "team"
    prefix = f"engram/{arm.replace(' ', '').replace('+', '-')}"
    queries = _queries(corpus)
    rounds = 1 if run.quick else 3
    result: dict[str, Any] = {"arm": arm, "added_round_trip_ms": round(1000 * delay) if delay else 0}
    for consistency in (5.0, 0.0):
        with _engine(run, arm, proxy.endpoint if proxy else None, embedder, consistency) as engine:
            if proxy is not None:
                started = time.perf_counter()
                engine.add_shared_workspace(workspace, BucketLocation.parse(f"s3://bench/{prefix}",
                                                                             endpoint=proxy.endpoint))
                if consistency:
                    result["add_s"] = round(time.perf_counter() - started, 2)
            if consistency:
                started = time.perf_counter()
                report = engine.call("ingest_path", {"path": str(corpus.folder), "project": corpus.name,
                                                     "include": include, "workspace": workspace}).result
                seconds = time.perf_counter() - started
                result["ingest"] = {"files": report.files_indexed, "chunks": report.chunks_written,
                                    "seconds": round(seconds, 1),
                                    "chunks_per_s": round(report.chunks_written / seconds, 1)}
                print(f"shared/{arm}: ingest {report.chunks_written} chunks in {seconds:.1f} s", flush=True)
                stores: list[float] = []
                for i in range(10 if run.quick else STORES):
                    started = time.perf_counter()
                    engine.call("store", {"content": f"Decision {i}: the release branch is cut on Monday {i}.",
                                          "workspace": workspace, "type": "decision"})
                    stores.append(time.perf_counter() - started)
                result["store"] = _ms(stores)
                engine.internals().maintenance.wait_idle(600)
            engine.call("search", {"query": "warm-up", "workspace": workspace})
            key = "search" if consistency else "search_consistency_0"
            result[key] = _searches(engine, workspace, queries, rounds, proxy)
            print(f"shared/{arm}: search (read consistency {consistency:g} s) p50 {result[key]['p50_ms']} ms",
                  flush=True)
    if proxy is not None:
        proxy.close()
    shutil.rmtree(folder, ignore_errors=True)
    return result


def summary(envelope: dict[str, Any]) -> str:
    result = envelope["result"]
    lines = [f"# Shared workspace in a bucket vs local{' (quick)' if envelope['quick'] else ''}", "",
             f"Corpus: {result['corpus']} ({', '.join(result['include'])}); S3: moto {result['moto']} on 127.0.0.1; "
             f"search over {result['queries']} queries × {result['rounds']}.", "",
             "| arm | ingest chunks/s | store p50 / p95 ms | search p50 / p95 ms (consistency 5 s) | "
             "search p50 / p95 ms (consistency 0) | bucket requests per search (5 s / 0) |",
             "|---|---|---|---|---|---|"]
    for r in result["arms"]:
        s, s0 = r["search"], r["search_consistency_0"]
        requests = (f"{s['requests_per_search']} / {s0['requests_per_search']}" if "requests_per_search" in s
                    else "–")
        lines.append(f"| {r['arm']} | {r['ingest']['chunks_per_s']} ({r['ingest']['chunks']} in "
                     f"{r['ingest']['seconds']} s) | {r['store']['p50_ms']} / {r['store']['p95_ms']} | "
                     f"{s['p50_ms']} / {s['p95_ms']} | {s0['p50_ms']} / {s0['p95_ms']} | {requests} |")
    return "\n".join(lines) + "\n"


def run_suite(run: Run, options: LookupsOptions) -> dict[str, Any]:
    """Measure every arm."""
    from importlib import metadata

    from standins.s3 import LoopbackS3

    corpus = load(run, options.lookups)
    # A quick run ingests the two smallest of the quick corpus's files (three arms embed them each).
    present = [f for f in corpus.include if (corpus.folder / f).is_file()]  # a gold file may be missing
    include = sorted(present, key=lambda f: (corpus.folder / f).stat().st_size)[:2] if run.quick else INCLUDE
    s3 = LoopbackS3()
    s3.create_bucket("bench")
    arms: list[dict[str, Any]] = []
    try:
        with engine_at(run.workspace("shared-model")) as owner:
            embedder = owner.embedder()
            for arm, delay in ARMS.items():
                arms.append(measure_arm(run, arm, delay, corpus, include, embedder, s3))
    finally:
        s3.close()
    return {"corpus": corpus.name, "corpus_sha256": corpus.sha256, "include": include,
            "queries": len(_queries(corpus)), "rounds": 1 if run.quick else 3, "moto": metadata.version("moto"),
            "lancedb": metadata.version("lancedb"), "arms": arms}
