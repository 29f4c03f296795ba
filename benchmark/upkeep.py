"""Suite `upkeep`: an agent's memory written full of repeats, with duplicate handling on and off; export → import.

    python -m benchmark upkeep --data ../shared/data/locomo-public.json

Three measures (issue 34):

1. **Writes full of repeats.** ``--writes`` (6,000) ``store`` calls of which ``--repeats`` (90%) repeat an earlier
   one: half exact repeats (only case and white space changed: ``paraphrase.exact_repeat``), half paraphrases made
   by rules (reordered clauses, synonyms from a fixed table, punctuation, case, an interjection:
   ``paraphrase.paraphrase``). The distinct memories are LoCoMo's public turns (``speaker: text``, distinct after
   normalising), each in its conversation's project. The same writes go, in the same order and alternating in
   batches of ``BATCH`` so that the machine's load falls on both alike, to two fresh workspaces: one with
   ``upkeep.duplicates = "off"`` (what ``store`` did before duplicate handling) and one with the default
   (``near``). Reported: stored rows against the distinct memories (target ≤ 1.1×), ``store`` p50/p95 of each
   (target: near's p50 within 1.2× of off's), and what duplicate handling did with each write: repeats counted
   (exact, near), repeats stored as new (missed), distinct memories counted on another (wrongly merged).
2. **Evidence recall unchanged.** The ``conversation`` suite's measure (every turn of every conversation stored
   one call each, each question of categories 1–4 searched once) with the default hybrid search, duplicates off
   and on: all@10 must agree within ±0.005.
3. **Export → import.** ``benchmark/transfer.py``'s round trip of a ``--round-trip`` (10,000) memory workspace:
   both times, the export's size and whether every field of every row came back equal.

LoCoMo is CC BY-NC 4.0: it is read from the path given, never committed.
"""

from __future__ import annotations

import json
import random
import shutil
import time
from typing import Any

from engram.core import Settings

from . import conversation, paraphrase, transfer, upkeep_pairs
from .common import Run, engine_at
from .suites import UpkeepOptions

#: Writes sent to one workspace before the other gets the same ones.
BATCH = 100
HYBRID = "hybrid (default)"
MODES = ("off", "near")


def _settings(mode: str) -> Settings:
    return Settings.model_validate({"upkeep": {"duplicates": mode}, "store": {"maintenance_writes": 32}})


def distinct_turns(samples: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Every turn of ``samples`` as (project, ``speaker: text``), the first of each normalised text only."""
    seen: set[str] = set()
    out: list[tuple[str, str]] = []
    for index, sample in enumerate(samples):
        project = str(sample.get("sample_id", f"conversation-{index}"))
        for turn in conversation.turns(sample["conversation"]):
            text = f"{turn['speaker']}: {turn['text']}"
            key = paraphrase.normalise(text)
            if key not in seen:
                seen.add(key)
                out.append((project, text))
    return out


def write_stream(turns: list[tuple[str, str]], writes: int, repeats: float,
                 rng: random.Random) -> list[dict[str, Any]]:
    """``writes`` writes of which the share ``repeats`` repeat an earlier write's memory: ``{origin, project,
    text, how}`` with ``how`` one of ``first``, ``exact``, ``paraphrase``; ``origin`` indexes the distinct memory.

    Raises:
        ValueError: the data holds fewer distinct turns than the writes need.
    """
    distinct = max(1, round(writes * (1 - repeats)))
    if distinct > len(turns):
        raise ValueError(f"{writes} writes with {repeats:.0%} repeats need {distinct} distinct turns; the data has "
                         f"{len(turns)}")
    chosen = rng.sample(turns, distinct)
    # The first slot is a first write; the others, shuffled, are firsts (in a random order of the memories) and
    # repeats of a memory written before them.
    slots = [True, *rng.sample([True] * (distinct - 1) + [False] * (writes - distinct), writes - 1)]
    order = iter(rng.sample(range(distinct), distinct))
    out: list[dict[str, Any]] = []
    written: list[int] = []
    for first in slots:
        if first:
            origin = next(order)
            written.append(origin)
            project, text = chosen[origin]
            out.append({"origin": origin, "project": project, "text": text, "how": "first"})
            continue
        origin = rng.choice(written)
        project, text = chosen[origin]
        how = rng.choice(("exact", "paraphrase"))
        varied = paraphrase.exact_repeat(text, rng) if how == "exact" else paraphrase.paraphrase(text, rng)
        out.append({"origin": origin, "project": project, "text": varied, "how": how})
    return out


def measure_writes(run: Run, stream: list[dict[str, Any]], embedder: Any) -> dict[str, Any]:
    """The writes of ``stream`` into a fresh workspace per mode, alternating in batches; what each mode stored."""
    engines = {}
    for mode in MODES:
        folder = run.workspace(f"upkeep-writes-{mode}")
        shutil.rmtree(folder, ignore_errors=True)
        engines[mode] = engine_at(folder, _settings(mode), embedder=embedder)
    times: dict[str, list[float]] = {m: [] for m in MODES}
    kept: dict[str, list[str]] = {m: [] for m in MODES}
    merged: dict[str, list[str | None]] = {m: [] for m in MODES}
    try:
        for start in range(0, len(stream), BATCH):
            for mode in MODES if (start // BATCH) % 2 == 0 else MODES[::-1]:
                engine = engines[mode]
                for w in stream[start:start + BATCH]:
                    args = {"content": w["text"], "project": w["project"], "kind": "note"}
                    began = time.perf_counter()
                    stored = engine.call("store", args).result
                    times[mode].append(time.perf_counter() - began)
                    kept[mode].append(stored.id)
                    merged[mode].append(stored.merged)
        rows = {m: engines[m].store().count_memories() for m in MODES}
    finally:
        for engine in engines.values():
            engine.close()
    distinct = len({w["origin"] for w in stream})
    out: dict[str, Any] = {"writes": len(stream), "distinct": distinct,
                           "exact_repeats": sum(1 for w in stream if w["how"] == "exact"),
                           "paraphrases": sum(1 for w in stream if w["how"] == "paraphrase"), "modes": {}}
    for mode in MODES:
        out["modes"][mode] = {"rows": rows[mode], "rows_per_distinct": round(rows[mode] / distinct, 3),
                              "store": conversation._ms(times[mode]), **_outcomes(stream, kept[mode], merged[mode])}
    off, near = out["modes"]["off"]["store"]["p50_ms"], out["modes"]["near"]["store"]["p50_ms"]
    out["store_p50_ratio"] = round(near / off, 3) if off else 0.0
    return out


def _outcomes(stream: list[dict[str, Any]], ids: list[str], merged: list[str | None]) -> dict[str, Any]:
    """What happened to each write: counted on its own memory (exact or near), stored as new although a repeat
    (missed), or counted on another memory's (wrongly merged: a distinct memory, or a repeat, lost in another)."""
    origin_of: dict[str, int] = {}  # each stored row: the distinct memory whose write made it
    counts: dict[str, Any] = {"counted_exact": 0, "counted_near": 0, "repeats_missed": 0, "wrongly_merged": 0,
                              "missed_by_kind": {"exact": 0, "paraphrase": 0}}
    for w, kept, how in zip(stream, ids, merged, strict=True):
        origin = w["origin"]
        if how is None:
            origin_of[kept] = origin
            if w["how"] != "first":
                counts["repeats_missed"] += 1
                counts["missed_by_kind"][w["how"]] += 1
        elif w["how"] == "first" or origin_of.get(kept) != origin:
            # A first write counted on an earlier row (every earlier one is another turn's), or a repeat counted
            # on another turn's row; a repeat counted on a copy of its own memory stored earlier is not lost.
            counts["wrongly_merged"] += 1
        else:
            counts["counted_exact" if how == "exact" else "counted_near"] += 1
    return counts


def measure_recall(run: Run, samples: list[dict[str, Any]], embedder: Any) -> dict[str, Any]:
    """The conversation suite's evidence recall (the default search) with duplicates off and on."""
    out: dict[str, Any] = {}
    for mode in MODES:
        measured = [conversation.measure_sample(run, s, i, _settings(mode), embedder, mixes=(HYBRID,),
                                                name=f"upkeep-recall-{mode}") for i, s in enumerate(samples)]
        rows = [r for m in measured for r in m["rows"][HYBRID]]
        out[mode] = {"questions": len(rows), **conversation._recall(rows),
                     "store": conversation._ms([t for m in measured for t in m["store"]]),
                     "turns": sum(m["turns"] for m in measured)}
    out["all@10_difference"] = round(out["near"]["all@10"] - out["off"]["all@10"], 3)
    return out


def run_suite(run: Run, options: UpkeepOptions) -> dict[str, Any]:
    """Measure the labelled pairs, the writes, the evidence recall and the round trip (see the module)."""
    started = time.perf_counter()
    with engine_at(run.workspace("upkeep-model")) as model_owner:
        pairs = [upkeep_pairs.measure(run, path, model_owner.embedder()) for path in options.pairs]
    pairs_s = round(time.perf_counter() - started, 1)
    if options.only_pairs:
        return {"pairs": pairs, "seconds": {"pairs": pairs_s}}
    try:
        samples = json.loads(options.data.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"upkeep: cannot read {options.data}: {exc}") from None
    if not isinstance(samples, list) or not all(isinstance(s, dict) and "conversation" in s for s in samples):
        raise SystemExit(f"upkeep: {options.data} is not a list of LoCoMo samples")
    writes = min(options.writes, 300) if run.quick else options.writes
    rng = random.Random(run.seed)
    try:
        stream = write_stream(distinct_turns(samples), writes, options.repeats, rng)
    except ValueError as exc:
        raise SystemExit(f"upkeep: {exc}") from None
    with engine_at(run.workspace("upkeep-model")) as model_owner:
        embedder = model_owner.embedder()
        started = time.perf_counter()
        written = measure_writes(run, stream, embedder)
        writes_s = time.perf_counter() - started
        started = time.perf_counter()
        recall = measure_recall(run, samples[:1] if run.quick else samples, embedder)
        recall_s = time.perf_counter() - started
    size = min(options.round_trip, 500) if run.quick else options.round_trip
    folder = run.workspace("upkeep-transfer")
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    round_trip = transfer.measure_round_trip(size, folder)
    shutil.rmtree(folder, ignore_errors=True)
    return {"data": options.data.name, "pairs": pairs, "writes": written, "recall": recall, "round_trip": round_trip,
            "seconds": {"pairs": pairs_s, "writes": round(writes_s, 1), "recall": round(recall_s, 1)}}


def summary(envelope: dict[str, Any]) -> str:
    r = envelope["result"]
    pairs = upkeep_pairs.summary_lines(r.get("pairs", []))
    if "writes" not in r:
        return "\n".join([f"# Upkeep — labelled pairs{' (quick)' if envelope['quick'] else ''}", *pairs]) + "\n"
    w, rec, rt = r["writes"], r["recall"], r["round_trip"]
    off, near = w["modes"]["off"], w["modes"]["near"]
    lines = [f"# Upkeep — {r['data']}{' (quick)' if envelope['quick'] else ''}", "",
             f"{w['writes']:,} `store` calls: {w['distinct']:,} distinct LoCoMo turns, {w['exact_repeats']:,} exact "
             f"repeats (case and spacing changed) and {w['paraphrases']:,} rule-made paraphrases; the same writes "
             "to two workspaces in alternating batches.", "",
             "| duplicates | stored rows | rows / distinct | store p50 ms | p95 ms | counted exact | counted near | "
             "repeats stored as new | distinct memories wrongly merged |", "|---|---|---|---|---|---|---|---|---|"]
    for mode, m in (("off (before issue 34)", off), ("near (default)", near)):
        lines.append(f"| {mode} | {m['rows']:,} | {m['rows_per_distinct']:.3f} | {m['store']['p50_ms']} | "
                     f"{m['store']['p95_ms']} | {m['counted_exact']:,} | {m['counted_near']:,} | "
                     f"{m['repeats_missed']:,} ({m['missed_by_kind']['paraphrase']:,} paraphrases) | "
                     f"{m['wrongly_merged']:,} |")
    lines += ["", f"store p50 with duplicate handling: {w['store_p50_ratio']:.2f}× the p50 without (target ≤ 1.2×); "
              f"rows {near['rows_per_distinct']:.3f}× the distinct memories (target ≤ 1.1×).", "",
              f"Evidence recall, the conversation suite's default search over {rec['off']['turns']:,} turns stored "
              f"one call each and {rec['off']['questions']:,} questions:", "",
              "| duplicates | all@5 | all@10 | all@20 | any@10 | store p50 ms | p95 ms |", "|---|---|---|---|---|---|---|"]
    for mode in MODES:
        m = rec[mode]
        lines.append(f"| {mode} | {m['all@5']:.3f} | {m['all@10']:.3f} | {m['all@20']:.3f} | {m['any@10']:.3f} | "
                     f"{m['store']['p50_ms']} | {m['store']['p95_ms']} |")
    lines += ["", f"all@10 difference (near − off): {rec['all@10_difference']:+.3f} (target ±0.005).", "",
              f"Export → import of a {rt['memories']:,}-memory workspace ({rt['facts']:,} facts, {rt['edges']:,} "
              f"edges; made-up vectors): export {rt['export_s']} s ({rt['export_mb']} MB), import {rt['import_s']} s; "
              f"every field of every row equal: {'yes' if rt['equal'] else 'NO'}.", *pairs]
    return "\n".join(lines) + "\n"
