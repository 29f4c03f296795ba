"""Suite `recall`: one recall against separate searches, per lookup of a lookups file.

Modes, per lookup:
- separate: one `search` per part, as an agent would call them (default max_chars each); also with
  the two baselines' retrieval: dense-only (vectors only) and BM25-only (full text only);
- plan: one `recall` whose plan is those searches, at the default max_chars and at "matched size"
  (the characters `separate` returned, capped at 12,000);
- question: one `recall` of the whole question, without a plan.
Figures: round trips, characters and tokens returned to the caller (tokens by the bundled GGUF's
tokenizer, named in the result), gold sources visible (a gold file counts when a shown block's
source is that file), and server time with plan steps run one after another and concurrently.
"""

from __future__ import annotations

import re
import statistics
import time
from pathlib import Path
from typing import Any

from engram.core.catalog import PLAN_TOOLS
from engram.core.recall.models import RecallResult
from engram.core.recall.plan import validate_plan
from engram.core.recall.render import format_recall
from engram.core.recall.run import run_plan

from . import plots
from .common import Run, machine, result_folder, write_result
from .corpus import indexed, load

_BLOCK = re.compile(r"^\[\d+\] \S+ · [^·\n]+ · ([^·\n]+?):\d+-\d+ · ", re.M)
TOKENIZER = "all-MiniLM-L6-v2 WordPiece (the bundled GGUF)"
MODES = ("separate", "separate dense-only", "separate BM25-only", "plan", "plan matched", "question")


def visible_sources(text: str, root: str) -> set[str]:
    """Corpus-relative sources of the blocks shown (answers name them relative to the ingest root)."""
    return {m.group(1).removeprefix(root) for m in _BLOCK.finditer(text)}


def timed(fn: Any, repeat: int) -> tuple[Any, float]:
    """(the last result, the median seconds of ``repeat`` runs)."""
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - started)
    return result, statistics.median(times)


def four_step_plans(scope: Any, lookups: list[dict[str, Any]], repeat: int) -> dict[str, Any]:
    """Server time of plans of exactly 4 searches, steps one after another vs concurrently.

    The lookups have 2–3 parts; each 4-step plan takes one lookup's parts and fills up with the next
    lookups' parts, so every plan searches four real queries of the corpus.
    """
    queries = [[p["query"] for p in lookup["parts"]] for lookup in lookups]
    size = min(4, len({q for qs in queries for q in qs}))  # a tiny lookups file may hold fewer queries
    sequential_s = concurrent_s = 0.0
    for i in range(len(queries)):
        chosen: list[str] = []
        j = i
        while len(chosen) < size:
            chosen += [q for q in queries[j % len(queries)] if q not in chosen][: size - len(chosen)]
            j += 1
        steps = validate_plan([{"tool": "search", "args": {"query": q}} for q in chosen], PLAN_TOOLS)
        _, seq = timed(lambda: run_plan(scope, steps, PLAN_TOOLS.reads, concurrent=False), repeat)
        _, con = timed(lambda: run_plan(scope, steps, PLAN_TOOLS.reads, concurrent=True), repeat)
        sequential_s += seq
        concurrent_s += con
    return {"plans": len(queries), "sequential_ms": round(1000 * sequential_s, 1),
            "concurrent_ms": round(1000 * concurrent_s, 1),
            "speedup": round(sequential_s / concurrent_s, 2) if concurrent_s else 0.0}


def run_suite(run: Run, lookups_file: Path, repeat: int = 3) -> Path:
    corpus = load(run, lookups_file)
    repeat = 1 if run.quick else repeat
    root = corpus.folder.resolve().as_posix() + "/"
    rows: list[dict[str, Any]] = []
    engine, ingest = indexed(run, corpus)
    with engine:
        tokenizer = engine.embedder()
        default_chars = engine.settings.search.max_chars
        scope = engine.scope()
        engine.call("search", {"query": "warm up"})
        for lookup in corpus.lookups:
            parts, gold = lookup["parts"], set(lookup["gold"])
            searches = [{"tool": "search", "args": {"query": p["query"]}} for p in parts]

            def separate(channels: list[str] | None = None) -> list[str]:
                extra = {"channels": channels} if channels else {}
                return [engine.call("search", {"query": p["query"], **extra}).text for p in parts]

            def recall_at(max_chars: int, plan: list | None = searches) -> str:
                args: dict[str, Any] = {"question": lookup["question"], "max_chars": max_chars}
                if plan:
                    args["plan"] = plan
                return engine.call("recall", args).text

            steps = validate_plan(searches, PLAN_TOOLS)

            def sequential() -> str:
                reports, items = run_plan(scope, steps, PLAN_TOOLS.reads, concurrent=False)
                return format_recall(RecallResult(question=lookup["question"], planned=True, steps=reports,
                                                  items=items), default_chars)

            sep, sep_s = timed(separate, repeat)
            dense, dense_s = timed(lambda: separate(["semantic"]), repeat)
            bm25, bm25_s = timed(lambda: separate(["lexical"]), repeat)
            matched = max(1200, min(12000, sum(len(t) for t in sep)))
            plan_text, plan_s = timed(lambda: recall_at(default_chars), repeat)
            matched_text, matched_s = timed(lambda: recall_at(matched), repeat)
            _, seq_s = timed(sequential, repeat)
            question_text, question_s = timed(lambda: recall_at(default_chars, None), repeat)

            def measure(texts: list[str], seconds: float) -> dict[str, Any]:
                seen = set().union(*(visible_sources(t, root) for t in texts))
                return {"round_trips": len(texts), "chars": sum(len(t) for t in texts),
                        "tokens": sum(tokenizer.count_tokens(t) for t in texts),
                        "gold_visible": len(gold & seen), "server_ms": round(1000 * seconds, 1)}

            row = {"id": lookup["id"], "kind": lookup.get("kind", ""), "parts": len(parts), "gold": len(gold),
                   "separate": measure(sep, sep_s), "separate dense-only": measure(dense, dense_s),
                   "separate BM25-only": measure(bm25, bm25_s),
                   "plan": {**measure([plan_text], plan_s), "sequential_server_ms": round(1000 * seq_s, 1)},
                   "plan matched": {**measure([matched_text], matched_s), "max_chars": matched},
                   "question": measure([question_text], question_s)}
            rows.append(row)
            print(f"recall {lookup['id']}: " + ", ".join(
                f"{m} {row[m]['tokens']} tok {row[m]['gold_visible']}/{row['gold']}" for m in MODES), flush=True)

        four_step = four_step_plans(scope, corpus.lookups, repeat)

    totals = {m: {k: round(sum(r[m][k] for r in rows), 1)
                  for k in ("round_trips", "chars", "tokens", "gold_visible", "server_ms")} for m in MODES}
    totals["plan"]["sequential_server_ms"] = round(sum(r["plan"]["sequential_server_ms"] for r in rows), 1)
    gold_total = sum(r["gold"] for r in rows)
    result = {"suite": "recall", "quick": run.quick, "seed": run.seed, "lookups_file": str(lookups_file),
              "corpus": corpus.spec["corpus"], "indexed_include": corpus.include, "sdist_sha256": corpus.sha256,
              "ingest": ingest, "tokenizer": TOKENIZER, "gold_total": gold_total, "default_max_chars": default_chars,
              "repeat": repeat, "lookups": rows, "totals": totals, "four_step_plans": four_step, "machine": machine()}
    folder = result_folder(run, "recall")
    ids = [r["id"] for r in rows]
    plots.grouped_bars(folder / "tokens.png", "Tokens returned to the caller per lookup", ids,
                       {m: [r[m]["tokens"] for r in rows] for m in ("separate", "plan", "plan matched", "question")},
                       f"tokens ({TOKENIZER.split(' (')[0]})")
    plots.grouped_bars(folder / "gold.png", "Gold sources visible per lookup", ids,
                       {m: [r[m]["gold_visible"] for r in rows] for m in ("separate", "plan", "question")},
                       "gold files shown")
    sep_t, plan_t = totals["separate"], totals["plan"]
    lines = [f"# Recall vs separate calls — {corpus.name}{' (quick)' if run.quick else ''}", "",
             f"{len(rows)} lookups, {sum(r['parts'] for r in rows)} parts, {gold_total} gold files; corpus sdist "
             f"sha256 `{corpus.sha256[:16]}…`. Tokens: {TOKENIZER}. Server time: median of {repeat} run(s), "
             "in-process.", "",
             "| mode | round trips | chars | tokens | gold visible | server ms |", "|---|---|---|---|---|---|"]
    for m in MODES:
        t = totals[m]
        lines.append(f"| {m} | {t['round_trips']:.0f} | {t['chars']:,.0f} | {t['tokens']:,.0f} | "
                     f"{t['gold_visible']:.0f}/{gold_total} | {t['server_ms']:,.0f} |")
    ratio = plan_t["tokens"] / sep_t["tokens"] if sep_t["tokens"] else 0
    speedup = plan_t["sequential_server_ms"] / plan_t["server_ms"] if plan_t["server_ms"] else 0
    lines += ["", f"Recall (plan, default budget) returns {ratio:.0%} of the separate calls' tokens with "
                  f"{plan_t['gold_visible']:.0f}/{gold_total} gold files visible (separate: "
                  f"{sep_t['gold_visible']:.0f}/{gold_total}). Plan steps one after another: "
                  f"{plan_t['sequential_server_ms']:,.0f} ms; concurrently: {plan_t['server_ms']:,.0f} ms "
                  f"({speedup:.2f}×).", "",
              f"4-step plans ({four_step['plans']} plans of 4 searches: each lookup's parts, then the next "
              f"lookups' parts up to 4): one after another {four_step['sequential_ms']:,.0f} ms, concurrently "
              f"{four_step['concurrent_ms']:,.0f} ms ({four_step['speedup']:.2f}×).", "",
              "![tokens](tokens.png) ![gold](gold.png)", "",
              "| lookup | parts | " + " | ".join(f"{m} tokens / gold" for m in MODES) + " |",
              "|---|---|" + "---|" * len(MODES)]
    for r in rows:
        lines.append(f"| {r['id']} | {r['parts']} | " + " | ".join(
            f"{r[m]['tokens']:,} / {r[m]['gold_visible']}/{r['gold']}" for m in MODES) + " |")
    return write_result(folder, result, "\n".join(lines) + "\n")
