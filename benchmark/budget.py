"""Suite `budget`: what the durable run ledger adds to a search (recall.run_budget on vs off).

Every part query and question of the lookups runs as a `search` on the indexed corpus, three times,
alternating an engine with the budget off and one with it on. With the budget on, each search names
a fresh run, so each one plans from the ledger, reserves durably (one SQLite transaction with fsync),
embeds and records the outcome: the difference of the two latencies is the ledger's cost. The
ledger's own operations (state read, reserve, finish) are also timed alone, and a search whose run
is used up (answered from lexical + graph without embedding) is timed for comparison.
"""

from __future__ import annotations

import statistics
import time
import uuid
from typing import Any

from engram.core import Settings
from engram.core.budget import Allowance, RunLedger

from .common import Run, engine_at, percentile
from .corpus import indexed, load
from .suites import LookupsOptions


def _stats(values: list[float]) -> dict[str, float]:
    return {"p50_ms": round(1000 * statistics.median(values), 3), "p95_ms": round(1000 * percentile(values, 0.95), 3),
            "n": len(values)}


def run_suite(run: Run, options: LookupsOptions) -> dict[str, Any]:
    corpus = load(run, options.lookups)
    engine, _ = indexed(run, corpus)
    engine.close()
    queries = [p["query"] for lookup in corpus.lookups for p in lookup["parts"]]
    queries += [lookup["question"] for lookup in corpus.lookups]
    repeats = 1 if run.quick else 3
    on_settings = Settings()
    on_settings.recall.run_budget.enabled = True
    folder = run.workspace(f"index-{corpus.name}")
    times: dict[str, list[float]] = {"off": [], "on": [], "used_up": []}
    with engine_at(folder, on_settings) as on, engine_at(folder, embedder=on.embedder()) as off:
        for q in queries[:3]:  # warm-up: caches, the vector index, the ledger file
            off.call("search", {"query": q})
            on.call("search", {"query": q, "run": f"warm-{uuid.uuid4().hex}"})
        for _ in range(repeats):
            for q in queries:
                started = time.perf_counter()
                off.call("search", {"query": q})
                times["off"].append(time.perf_counter() - started)
                started = time.perf_counter()
                out = on.call("search", {"query": q, "run": f"bench-{uuid.uuid4().hex}"})
                times["on"].append(time.perf_counter() - started)
                assert not out.result.warnings, out.result.warnings
        used_up = f"used-{uuid.uuid4().hex}"
        for q in ("spend the first round", "spend the second round"):  # texts not among the queries
            on.call("search", {"query": q, "run": used_up})
        for q in queries:
            started = time.perf_counter()
            out = on.call("search", {"query": q, "run": used_up})
            times["used_up"].append(time.perf_counter() - started)
            assert out.result.warnings
        ledger_folder = on.paths.workspace_dir(out.workspace)

    ledger = RunLedger(ledger_folder, "bench-ops")
    ops: dict[str, list[float]] = {"state": [], "reserve": [], "finish": []}
    for _ in range(50 if run.quick else 300):
        rid = uuid.uuid4().hex
        started = time.perf_counter()
        ledger.state(rid)
        ops["state"].append(time.perf_counter() - started)
        started = time.perf_counter()
        reservation = ledger.reserve(rid, 1, Allowance())
        ops["reserve"].append(time.perf_counter() - started)
        started = time.perf_counter()
        ledger.finish(reservation, "done", 5)
        ops["finish"].append(time.perf_counter() - started)
    ledger.close()

    off_s, on_s = _stats(times["off"]), _stats(times["on"])
    result: dict[str, Any] = {
        "corpus": corpus.name, "searches": len(times["off"]), "queries": len(queries), "repeats": repeats,
        "budget_off": off_s, "budget_on": on_s, "used_up_run": _stats(times["used_up"]),
        "added_ms": {"p50": round(on_s["p50_ms"] - off_s["p50_ms"], 3), "p95": round(on_s["p95_ms"] - off_s["p95_ms"], 3)},
        "ledger_ops": {k: _stats(v) for k, v in ops.items()},
    }
    return result


def summary(envelope: dict[str, Any]) -> str:
    result = envelope["result"]
    off_s, on_s = result["budget_off"], result["budget_on"]
    lines = [f"# Run budget ledger overhead{' (quick)' if envelope['quick'] else ''}", "",
             f"{result['searches']} searches on {result['corpus']} ({result['queries']} queries × "
             f"{result['repeats']}), budget off and on "
             "alternating; on: a fresh run per search (plan from the ledger, durable reservation, embed, outcome).", "",
             "| | p50 ms | p95 ms |", "|---|---|---|",
             f"| budget off | {off_s['p50_ms']} | {off_s['p95_ms']} |",
             f"| budget on | {on_s['p50_ms']} | {on_s['p95_ms']} |",
             f"| added by the ledger | {result['added_ms']['p50']} | {result['added_ms']['p95']} |",
             f"| run used up (lexical + graph, no embedding) | {result['used_up_run']['p50_ms']} | "
             f"{result['used_up_run']['p95_ms']} |", "",
             "Ledger operations alone: " + "; ".join(
                 f"{k} p50 {v['p50_ms']} ms, p95 {v['p95_ms']} ms" for k, v in result["ledger_ops"].items()), ""]
    return "\n".join(lines)
