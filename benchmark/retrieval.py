"""Suite `retrieval`: every retrieval set with its tuning and test parts apart — hybrid against each channel alone.

    python -m benchmark retrieval [--lookups FILE]... [--data LOCOMO.json]

**File lookups** (default: every ``benchmark/*-lookups.json``): each corpus is indexed once (the cache keeps it),
then every part of every lookup is searched once per mode as an agent calls ``search`` (the default limit and
``max_chars``): hybrid (every channel, the default), semantic+lexical, dense-only, BM25-only. Measured: gold files
visible (a gold file counts when a shown block names it, as the recall suite counts it; per lookup, the union over
its parts) and NDCG@10 of each part's file ranking (its hits read as files in the order they first appear, gain 1
per gold file of that part). A lookup's ``split`` (``tune`` or ``test``) says which part it belongs to: choices
are made on the tuning parts and reported on the test parts, each corpus's totals given for both apart.

**Conversations** (``--data``, LoCoMo's format; left out when the file is not there): each conversation stored
turn by turn and searched per question (``conversation.measure_sample``) with the hybrid, semantic-only and
lexical-only mixes; turn- and session-level recall_all@k / recall_any@k and NDCG@10, per category, for the
tuning and the test conversations apart (``conversation.SPLITS``).

The target (issue 50): on every test part, hybrid at least as good as the best single channel, in gold files and in
NDCG@10.
"""

from __future__ import annotations

import json
import time
from typing import Any

from engram.core import Settings

from . import conversation, ranking
from .common import Run, engine_at
from .corpus import indexed, load
from .recall import visible_sources
from .suites import RetrievalOptions

#: Search modes of the file lookups: their label → the channels they search (None: every channel, the default).
MODES: dict[str, list[str] | None] = {"hybrid": None, "semantic+lexical": ["semantic", "lexical"],
                                      "dense-only": ["semantic"], "BM25-only": ["lexical"]}
SINGLE = ("dense-only", "BM25-only")
#: Conversation mixes measured here (conversation.MIXES names them).
CONVERSATION_MIXES = ("hybrid (default)", "semantic only", "lexical only")
SPLITS = ("tune", "test")


def measure_lookups(run: Run, lookups_file: Any) -> dict[str, Any]:
    """Every part of ``lookups_file``'s lookups searched per mode: gold visible and NDCG@10, per lookup and per
    split."""
    corpus = load(run, lookups_file)
    root = corpus.folder.resolve().as_posix() + "/"
    engine, ingest = indexed(run, corpus)
    rows: list[dict[str, Any]] = []
    with engine:
        engine.call("search", {"query": "warm up"})
        for lookup in corpus.lookups:
            row: dict[str, Any] = {"id": lookup["id"], "split": lookup.get("split", "test"),
                                   "kind": lookup.get("kind", ""), "gold": len(set(lookup["gold"]))}
            for mode, channels in MODES.items():
                seen: set[str] = set()
                scores: list[float] = []
                for part in lookup["parts"]:
                    args: dict[str, Any] = {"query": part["query"], **({"channels": channels} if channels else {})}
                    answer = engine.call("search", args)
                    seen |= visible_sources(answer.text, root)
                    files = ranking.distinct_in_order(
                        str(h.source or "").removeprefix(root) for h in answer.result.hits)
                    scores.append(ranking.ndcg(ranking.first_ranks(files, part["gold"]), len(set(part["gold"]))))
                row[mode] = {"gold_visible": len(seen & set(lookup["gold"])),
                             "ndcg@10": round(sum(scores) / len(scores), 4), "parts": len(scores)}
            rows.append(row)
            print(f"retrieval {corpus.name} {lookup['id']} ({row['split']}): " + ", ".join(
                f"{m} {row[m]['gold_visible']}/{row['gold']} {row[m]['ndcg@10']:.2f}" for m in MODES), flush=True)
    splits = {split: _totals([r for r in rows if r["split"] == split]) for split in SPLITS
              if any(r["split"] == split for r in rows)}
    return {"lookups_file": lookups_file.name, "corpus": corpus.name, "kind": corpus.spec["corpus"].get("kind", ""),
            "sdist_sha256": corpus.sha256, "ingest": ingest, "lookups": rows, "splits": splits}


def _totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Gold visible (summed) and NDCG@10 (the mean over parts) per mode, and whether hybrid holds against the
    best single channel on both."""
    parts = sum(r["hybrid"]["parts"] for r in rows)
    out: dict[str, Any] = {"lookups": len(rows), "parts": parts, "gold": sum(r["gold"] for r in rows)}
    for mode in MODES:
        out[mode] = {"gold_visible": sum(r[mode]["gold_visible"] for r in rows),
                     "ndcg@10": round(sum(r[mode]["ndcg@10"] * r[mode]["parts"] for r in rows) / parts, 3)
                     if parts else 0.0}
    out["hybrid_holds"] = all(out["hybrid"][m] >= max(out[s][m] for s in SINGLE) for m in ("gold_visible", "ndcg@10"))
    return out


def measure_conversations(run: Run, data: Any) -> dict[str, Any]:
    """The LoCoMo file's conversations with the hybrid and single-channel mixes (``conversation.summarize``)."""
    samples = json.loads(data.read_text(encoding="utf-8"))
    if run.quick:
        samples = samples[:1]
    with engine_at(run.workspace("retrieval-model")) as model_owner:
        embedder = model_owner.embedder()
        measured = [conversation.measure_sample(run, s, i, Settings(), embedder, mixes=CONVERSATION_MIXES,
                                                name="retrieval-conversation") for i, s in enumerate(samples)]
    return {"data": data.name, "summary": conversation.summarize(measured)}


def run_suite(run: Run, options: RetrievalOptions) -> dict[str, Any]:
    started = time.perf_counter()
    corpora = [measure_lookups(run, path) for path in options.lookups]
    lookups_s = time.perf_counter() - started
    conversations = None
    if options.data.is_file():
        try:
            conversations = measure_conversations(run, options.data)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise SystemExit(f"retrieval: cannot read the conversations of {options.data}: {exc}") from None
    return {"corpora": corpora, "conversations": conversations,
            "seconds": {"lookups": round(lookups_s, 1), "total": round(time.perf_counter() - started, 1)}}


def _set(corpus: dict[str, Any]) -> str:
    """A lookups set's short name: its file without ``-lookups.json`` (two sets may share a corpus)."""
    return str(corpus["lookups_file"]).removesuffix(".json").removesuffix("-lookups")


def summary(envelope: dict[str, Any]) -> str:
    result = envelope["result"]
    lines = [f"# Retrieval on tuning and test parts{' (quick)' if envelope['quick'] else ''}", "",
             "File lookups: one `search` per part and mode (default limit and max_chars). **gold**: gold files "
             "visible in the answers (per lookup, the union over its parts); **NDCG@10**: the mean over parts of "
             "NDCG@10 of the part's hits read as files. Hybrid holds when it is at least the best single channel "
             "on both.", ""]
    for split in SPLITS:
        label = "Tuning parts (choices are made on these)" if split == "tune" else \
            "Test parts (reported; never tuned on)"
        lines += [f"### {label}", "", "| lookups | corpus | kind | lookups | parts | " +
                  " | ".join(f"{m} gold / NDCG@10" for m in MODES) + " | hybrid holds |",
                  "|---|---|---|---|---|" + "---|" * (len(MODES) + 1)]
        for c in result["corpora"]:
            t = c["splits"].get(split)
            if t is None:
                continue
            cells = [f"{t[m]['gold_visible']}/{t['gold']} / {t[m]['ndcg@10']:.3f}" for m in MODES]
            lines.append(f"| {_set(c)} | {c['corpus']} | {c['kind'] or '–'} | {t['lookups']} | {t['parts']} | " +
                         " | ".join(cells) + f" | {'yes' if t['hybrid_holds'] else '**no**'} |")
        lines.append("")
    lines += ["Per lookup (gold visible / NDCG@10; ⚠ where a single channel beats hybrid on either):", "",
              "| lookups | lookup | split | gold | " + " | ".join(MODES) + " |", "|---|---|---|---|" + "---|" * len(MODES)]
    for c in result["corpora"]:
        for r in c["lookups"]:
            worse = any(r["hybrid"][k] < max(r[s][k] for s in SINGLE) for k in ("gold_visible", "ndcg@10"))
            lines.append(f"| {_set(c)} | {r['id']}{' ⚠' if worse else ''} | {r['split']} | {r['gold']} | " +
                         " | ".join(f"{r[m]['gold_visible']} / {r[m]['ndcg@10']:.2f}" for m in MODES) + " |")
    conversations = result.get("conversations")
    lines.append("")
    if conversations is None:
        lines += ["Conversations: left out (no LoCoMo file at --data)."]
    else:
        s = conversations["summary"]
        lines += [f"### Conversations — {conversations['data']}", "",
                  f"{s['turns']:,} turns stored one `store` call each, {s['questions']:,} questions of categories "
                  "1–4. Turn level: every (all) or one (any) evidence turn in the top k; session level: the same of "
                  "the sessions the evidence was said in, among the sessions of the top k turns.", "",
                  *conversation.split_tables(s["splits"], "####")]
    return "\n".join(lines).rstrip("\n") + "\n"
