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
from typing import Any

from engram.core.catalog import PLAN_TOOLS
from engram.core.recall.models import RecallResult
from engram.core.recall.plan import validate_plan
from engram.core.recall.render import format_recall
from engram.core.recall.run import run_plan
from engram.core.store import inspection

from . import plots
from .common import Run
from .corpus import indexed, load
from .suites import RecallOptions

_BLOCK = re.compile(r"^\[\d+\] \S+ · [^·\n]+ · ([^·\n]+?):\d+-\d+ · ", re.M)
TOKENIZER = "all-MiniLM-L6-v2 WordPiece (the bundled GGUF)"
#: Separate calls (one `search` per part) per channel mix: the default (every channel), without the graph, and
#: each retrieval channel alone (the baselines: dense-only as Imprint, BM25-only as full-text servers).
CHANNEL_MODES: dict[str, list[str] | None] = {
    "separate": None, "separate semantic+lexical": ["semantic", "lexical"],
    "separate dense-only": ["semantic"], "separate BM25-only": ["lexical"]}
SINGLE_CHANNELS = ("separate dense-only", "separate BM25-only")
MODES = (*CHANNEL_MODES, "plan", "plan matched", "question")
MODE_LABELS = {"separate": "separate (one `search` per part, every channel)",
               "separate semantic+lexical": "separate, semantic+lexical (no graph)",
               "separate dense-only": "separate, dense-only", "separate BM25-only": "separate, BM25-only",
               "plan": "recall, plan, default budget", "plan matched": "recall, plan, matched size",
               "question": "recall of the question alone (no plan)"}


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


def run_suite(run: Run, options: RecallOptions) -> dict[str, Any]:
    corpus = load(run, options.lookups)
    repeat = 1 if run.quick else options.repeat
    root = corpus.folder.resolve().as_posix() + "/"
    rows: list[dict[str, Any]] = []
    engine, ingest = indexed(run, corpus)
    with engine:
        tokenizer = engine.embedder()
        chunks = inspection.count(engine.store(), "memories")
        default_chars = engine.settings.search.max_chars
        scope = engine.internals().scope("")  # the plan runner is timed on its own, below the tool call
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

            def measure(texts: list[str], seconds: float) -> dict[str, Any]:
                seen = set().union(*(visible_sources(t, root) for t in texts))
                return {"round_trips": len(texts), "chars": sum(len(t) for t in texts),
                        "tokens": sum(tokenizer.count_tokens(t) for t in texts),
                        "gold_visible": len(gold & seen), "gold_files": sorted(gold & seen),
                        "server_ms": round(1000 * seconds, 1)}

            row: dict[str, Any] = {"id": lookup["id"], "kind": lookup.get("kind", ""), "parts": len(parts),
                                   "gold": len(gold)}
            for mode, channels in CHANNEL_MODES.items():
                texts, seconds = timed(lambda: separate(channels), repeat)
                row[mode] = measure(texts, seconds)
            matched = max(1200, min(12000, row["separate"]["chars"]))
            plan_text, plan_s = timed(lambda: recall_at(default_chars), repeat)
            matched_text, matched_s = timed(lambda: recall_at(matched), repeat)
            _, seq_s = timed(sequential, repeat)
            question_text, question_s = timed(lambda: recall_at(default_chars, None), repeat)
            row["plan"] = {**measure([plan_text], plan_s), "sequential_server_ms": round(1000 * seq_s, 1)}
            row["plan matched"] = {**measure([matched_text], matched_s), "max_chars": matched}
            row["question"] = measure([question_text], question_s)
            rows.append(row)
            print(f"recall {lookup['id']}: " + ", ".join(
                f"{m} {row[m]['tokens']} tok {row[m]['gold_visible']}/{row['gold']}" for m in MODES), flush=True)

        four_step = four_step_plans(scope, corpus.lookups, repeat)

    totals = {m: {k: round(sum(r[m][k] for r in rows), 1)
                  for k in ("round_trips", "chars", "tokens", "gold_visible", "server_ms")} for m in MODES}
    totals["plan"]["sequential_server_ms"] = round(sum(r["plan"]["sequential_server_ms"] for r in rows), 1)
    gold_total = sum(r["gold"] for r in rows)
    ids = [r["id"] for r in rows]
    plots.grouped_bars(run.folder / "tokens.png", "Tokens returned to the caller per lookup", ids,
                       {m: [r[m]["tokens"] for r in rows] for m in ("separate", "plan", "plan matched", "question")},
                       f"tokens ({TOKENIZER.split(' (')[0]})")
    plots.grouped_bars(run.folder / "gold.png", "Gold sources visible per lookup", ids,
                       {m: [r[m]["gold_visible"] for r in rows] for m in ("separate", "plan", "question")},
                       "gold files shown")
    return {"lookups_file": options.lookups.name, "corpus": corpus.spec["corpus"],
            "indexed_include": corpus.include, "sdist_sha256": corpus.sha256, "ingest": ingest, "chunks": chunks,
            "tokenizer": TOKENIZER, "gold_total": gold_total, "default_max_chars": default_chars, "repeat": repeat,
            "lookups": rows, "totals": totals, "four_step_plans": four_step,
            "hybrid_below_a_channel": hybrid_below_a_channel(totals)}


def hybrid_below_a_channel(totals: dict[str, dict[str, float]]) -> list[str]:
    """The single-channel modes that show more gold files than hybrid ``separate`` (the guard: none)."""
    hybrid = totals["separate"]["gold_visible"]
    return [m for m in SINGLE_CHANNELS if totals[m]["gold_visible"] > hybrid]


def summary(envelope: dict[str, Any]) -> str:
    result = envelope["result"]
    rows, totals, gold_total = result["lookups"], result["totals"], result["gold_total"]
    four_step, repeat = result["four_step_plans"], result["repeat"]
    name = result["corpus"]["name"]
    sep_t, plan_t = totals["separate"], totals["plan"]
    lines = [f"# Recall vs separate calls — {name}{' (quick)' if envelope['quick'] else ''}", "",
             f"{len(rows)} lookups ({result['lookups_file']}), {sum(r['parts'] for r in rows)} parts, {gold_total} "
             f"gold files; corpus sdist sha256 `{result['sdist_sha256'][:16]}…` ({result['chunks']:,} chunks). "
             f"Tokens: {result['tokenizer']}. Server time: median of {repeat} run(s), in-process.", "",
             "| mode | round trips | chars | tokens | gold visible | server ms |", "|---|---|---|---|---|---|"]
    for m in MODES:
        t = totals[m]
        lines.append(f"| {MODE_LABELS[m]} | {t['round_trips']:.0f} | {t['chars']:,.0f} | {t['tokens']:,.0f} | "
                     f"{t['gold_visible']:.0f}/{gold_total} | {t['server_ms']:,.0f} |")
    below = result["hybrid_below_a_channel"]
    ratio = plan_t["tokens"] / sep_t["tokens"] if sep_t["tokens"] else 0
    speedup = plan_t["sequential_server_ms"] / plan_t["server_ms"] if plan_t["server_ms"] else 0
    lines += ["", f"Recall (plan, default budget) returns {ratio:.0%} of the separate calls' tokens with "
                  f"{plan_t['gold_visible']:.0f}/{gold_total} gold files visible (separate: "
                  f"{sep_t['gold_visible']:.0f}/{gold_total}). Plan steps one after another: "
                  f"{plan_t['sequential_server_ms']:,.0f} ms; concurrently: {plan_t['server_ms']:,.0f} ms "
                  f"({speedup:.2f}×).", "",
              "Hybrid against each channel alone (separate calls): " + (
                  "**hybrid shows at least as many gold files as every single channel**." if not below else
                  "**hybrid shows fewer gold files than " + ", ".join(MODE_LABELS[m] for m in below) + "**."), "",
              f"4-step plans ({four_step['plans']} plans of 4 searches: each lookup's parts, then the next "
              f"lookups' parts up to 4): one after another {four_step['sequential_ms']:,.0f} ms, concurrently "
              f"{four_step['concurrent_ms']:,.0f} ms ({four_step['speedup']:.2f}×).", "",
              "![tokens](tokens.png) ![gold](gold.png)", "",
              "Gold files visible per lookup and channel (separate calls):", "",
              "| lookup | kind | gold | " + " | ".join(MODE_LABELS[m] for m in CHANNEL_MODES) + " |",
              "|---|---|---|" + "---|" * len(CHANNEL_MODES)]
    for r in rows:
        best = max(r[m]["gold_visible"] for m in SINGLE_CHANNELS)
        flag = " ⚠" if r["separate"]["gold_visible"] < best else ""
        lines.append(f"| {r['id']}{flag} | {r['kind']} | {r['gold']} | " + " | ".join(
            f"{r[m]['gold_visible']}" for m in CHANNEL_MODES) + " |")
    lines += ["", "(⚠: a lookup where a single channel shows more gold files than hybrid.)", "",
              "| lookup | parts | " + " | ".join(f"{m} tokens / gold" for m in MODES) + " |",
              "|---|---|" + "---|" * len(MODES)]
    for r in rows:
        lines.append(f"| {r['id']} | {r['parts']} | " + " | ".join(
            f"{r[m]['tokens']:,} / {r[m]['gold_visible']}/{r['gold']}" for m in MODES) + " |")
    return "\n".join(lines) + "\n"
