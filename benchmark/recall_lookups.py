"""Recall against separate calls, over a lookups file (default: Django 5.2.8 multi-part lookups).

    python -m benchmark.recall_lookups [--lookups benchmark/django-lookups.json] [--repeat 3]

Modes, per lookup:
- separate: one `search` per part, as an agent would call them (default max_chars each);
- plan: one `recall` whose plan is those searches, at the default max_chars and at "matched size"
  (the characters `separate` returned, capped at 12,000);
- question: one `recall` of the whole question, without a plan.
Figures: round trips, characters and tokens returned to the caller (tokens by the bundled GGUF's
tokenizer, named in the result), gold sources visible (a gold file counts when a shown block's
source is that file), and server time, with plan steps run one after another and concurrently.
The corpus is indexed once into the cached workspace of `benchmark.index_django`.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import time
from pathlib import Path
from typing import Any

from engram.core.recall.plan import validate_plan
from engram.core.recall.render import format_recall
from engram.core.recall.models import RecallResult
from engram.core.recall.run import run_plan

from .common import fetch_sdist, machine, open_engine, write_result

_BLOCK = re.compile(r"^\[\d+\] \S+ · [^·\n]+ · ([^·\n]+?):\d+-\d+ · ", re.M)


def visible_sources(text: str, root: str) -> set[str]:
    """The corpus-relative sources of the blocks shown in a rendered answer (shown relative to the ingest
    folder, which is the corpus root; an absolute path is made relative too)."""
    return {m.group(1).removeprefix(root) for m in _BLOCK.finditer(text)}


def timed(fn: Any, repeat: int) -> tuple[Any, float]:
    """(the last result, the median seconds of ``repeat`` runs)."""
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - started)
    return result, statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lookups", type=Path, default=Path(__file__).with_name("django-lookups.json"))
    parser.add_argument("--repeat", type=int, default=3, help="Runs per timing (median reported).")
    args = parser.parse_args()
    spec = json.loads(args.lookups.read_text())
    corpus = spec["corpus"]
    folder, digest = fetch_sdist(corpus["requirement"])
    root = folder.resolve().as_posix() + "/"
    rows: list[dict[str, Any]] = []
    with open_engine(f"index-{corpus['name']}") as engine:
        engine.call("ingest_path", {"path": str(folder), "project": corpus["name"], "include": corpus["include"]})
        tokenizer = engine.embedder()
        default_chars = engine.settings.search.max_chars
        scope = engine.scope()
        engine.call("search", {"query": "warm up"})
        for lookup in spec["lookups"]:
            parts = lookup["parts"]
            gold = set(lookup["gold"])
            searches = [{"tool": "search", "args": {"query": p["query"]}} for p in parts]

            def separate() -> list[str]:
                return [engine.call("search", {"query": p["query"]}).text for p in parts]

            sep_texts, sep_s = timed(separate, args.repeat)
            sep_chars = sum(len(t) for t in sep_texts)
            matched = max(1200, min(12000, sep_chars))

            def plan_at(max_chars: int) -> str:
                return engine.call("recall", {"question": lookup["question"], "plan": searches,
                                              "max_chars": max_chars}).text

            plan_text, plan_s = timed(lambda: plan_at(default_chars), args.repeat)
            matched_text, _ = timed(lambda: plan_at(matched), 1)
            steps = validate_plan(searches)

            def sequential() -> str:
                reports, items = run_plan(scope, steps, concurrent=False)
                result = RecallResult(question=lookup["question"], planned=True, steps=reports, items=items)
                return format_recall(result, default_chars)

            _, seq_s = timed(sequential, args.repeat)
            question_text, question_s = timed(
                lambda: engine.call("recall", {"question": lookup["question"]}).text, args.repeat)

            def measure(texts: list[str], seconds: float, trips: int) -> dict[str, Any]:
                seen = set().union(*(visible_sources(t, root) for t in texts))
                return {"round_trips": trips, "chars": sum(len(t) for t in texts),
                        "tokens": sum(tokenizer.count_tokens(t) for t in texts),
                        "gold_visible": len(gold & seen), "server_ms": round(1000 * seconds, 1)}

            row = {"id": lookup["id"], "kind": lookup.get("kind", ""), "parts": len(parts), "gold": len(gold),
                   "separate": measure(sep_texts, sep_s, len(parts)),
                   "plan": {**measure([plan_text], plan_s, 1), "sequential_server_ms": round(1000 * seq_s, 1)},
                   "plan_matched": {**measure([matched_text], plan_s, 1), "max_chars": matched},
                   "question": measure([question_text], question_s, 1)}
            rows.append(row)
            print(lookup["id"], {k: v for k, v in row.items() if isinstance(v, dict)}, flush=True)

    modes = ("separate", "plan", "plan_matched", "question")
    totals = {m: {k: round(sum(r[m][k] for r in rows), 1) for k in
                  ("round_trips", "chars", "tokens", "gold_visible", "server_ms")} for m in modes}
    totals["plan"]["sequential_server_ms"] = round(sum(r["plan"]["sequential_server_ms"] for r in rows), 1)
    gold_total = sum(r["gold"] for r in rows)
    result = {"suite": "recall", "lookups_file": str(args.lookups), "corpus": corpus, "sdist_sha256": digest,
              "tokenizer": "all-MiniLM-L6-v2 WordPiece (the bundled GGUF)", "gold_total": gold_total,
              "default_max_chars": default_chars, "repeat": args.repeat, "lookups": rows, "totals": totals,
              "machine": machine()}
    lines = [f"# Recall vs separate calls — {corpus['name']}", "",
             f"{len(rows)} lookups, {sum(r['parts'] for r in rows)} parts, {gold_total} gold files. Tokens: "
             f"{result['tokenizer']}. Server time: median of {args.repeat} runs, in-process.", "",
             "| mode | round trips | chars | tokens | gold visible | server ms |", "|---|---|---|---|---|---|"]
    for m in modes:
        t = totals[m]
        lines.append(f"| {m} | {t['round_trips']:.0f} | {t['chars']:,.0f} | {t['tokens']:,.0f} | "
                     f"{t['gold_visible']:.0f}/{gold_total} | {t['server_ms']:,.0f} |")
    lines += ["", f"Plan steps run one after another: {totals['plan']['sequential_server_ms']:,.0f} ms in all; "
                  f"concurrently: {totals['plan']['server_ms']:,.0f} ms.", "",
              "| lookup | parts | separate tokens / gold | plan tokens / gold | matched tokens / gold | "
              "question tokens / gold |", "|---|---|---|---|---|---|"]
    for r in rows:
        cells = [f"{r[m]['tokens']:,} / {r[m]['gold_visible']}/{r['gold']}" for m in modes]
        lines.append(f"| {r['id']} | {r['parts']} | " + " | ".join(cells) + " |")
    summary = "\n".join(lines) + "\n"
    out = write_result("recall", result, summary)
    print(summary)
    print(f"written to {out}")


if __name__ == "__main__":
    main()
