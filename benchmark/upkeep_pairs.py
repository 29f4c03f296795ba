"""The upkeep suite's labelled pairs: does duplicate handling keep every fact (issue 49)?

    python -m benchmark upkeep --only-pairs                        # the tune and test sets of benchmark/
    python -m benchmark upkeep --only-pairs --pairs held-out.json  # any set of the same format

A pair file (``benchmark/upkeep-pairs-tune.json``, ``benchmark/upkeep-pairs-test.json``) holds ``pairs``, each with a
``label``: ``distinct`` (two facts that differ in one detail: a number, version, time, date, name, place, identifier
or negation), ``repeat`` (the same fact again: case, punctuation, spacing, word order, fillers, synonyms, a clause
that adds no fact) or ``update`` (a newer version of a fact, with a ``question`` whose answer is the newer detail);
its ``family``, its ``style`` (note, decision or conversation line) and the two texts, ``first`` then ``second``.
The tune set was written first and the rules were chosen on it; the test set was written apart, by another writer,
on other subjects, and is only reported on.

Every pair goes to its own project of one fresh workspace: ``first`` is stored, then ``second`` (both ``store``
calls, as an agent makes them). Reported per split and family: what the second write did (merged into the first,
stored as a possible update of it, or stored apart), what the vector rule alone did before this change (a cosine of
at least 0.95, or the same normalised text), and, for updates, whether a search of the question (in the pair's
project) shows the newer fact above the older. Targets: distinct pairs merged 0; repeats merged ≥ 90%; newer above
older ≥ 95%.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from engram.core import Settings
from engram.core.ingest.records import embedding_text
from engram.core.upkeep.keys import normalised

from .common import Run, engine_at

#: The rule before issue 49: a near duplicate was any note at least this alike by vector.
OLD_THRESHOLD = 0.95
LABELS = ("distinct", "repeat", "update")


def load(path: Path) -> dict[str, Any]:
    """A pair file, checked.

    Raises:
        SystemExit: it cannot be read or is not a pair file (the message says what is wrong).
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"upkeep: cannot read the pair file {path}: {exc}") from None
    pairs = data.get("pairs") if isinstance(data, dict) else None
    if not isinstance(pairs, list) or not pairs:
        raise SystemExit(f"upkeep: {path} holds no 'pairs' list (see benchmark/upkeep_pairs.py for the format)")
    for number, pair in enumerate(pairs, 1):
        missing = [k for k in ("id", "label", "first", "second") if not isinstance(pair.get(k), str) or not pair[k]]
        if missing or pair["label"] not in LABELS:
            raise SystemExit(f"upkeep: {path}, pair {number}: needs id, label ({', '.join(LABELS)}), first and second"
                             f"{' (missing: ' + ', '.join(missing) + ')' if missing else ''}")
        if pair["label"] == "update" and not isinstance(pair.get("question"), str):
            raise SystemExit(f"upkeep: {path}, pair {pair['id']}: an update needs a question")
    return {"name": str(data.get("name", path.stem)), "split": str(data.get("split", "")), "pairs": pairs}


def measure(run: Run, path: Path, embedder: Any) -> dict[str, Any]:
    """Store every pair of ``path`` into a fresh workspace and say what duplicate handling did with it."""
    data = load(path)
    # --quick: every twelfth pair of a large file (every label is among them).
    pairs = data["pairs"][::12] if run.quick and len(data["pairs"]) > 60 else data["pairs"]
    folder = run.workspace(f"upkeep-pairs-{data['name']}")
    shutil.rmtree(folder, ignore_errors=True)
    vectors = np.asarray(embedder.embed([embedding_text("", p[k]) for p in pairs for k in ("first", "second")]),
                         dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    rows: list[dict[str, Any]] = []
    with engine_at(folder, Settings(), embedder=embedder) as engine:
        for index, pair in enumerate(pairs):
            project = f"pair-{index:04d}"
            kind_type = "decision" if pair.get("style") == "decision" else "note"
            first = engine.tools.store(pair["first"], project=project, type=kind_type).result
            second = engine.tools.store(pair["second"], project=project, type=kind_type).result
            similarity = float(vectors[2 * index] @ vectors[2 * index + 1])
            row = {"id": pair["id"], "label": pair["label"], "family": pair.get("family", ""),
                   "style": pair.get("style", ""), "similarity": round(similarity, 4),
                   "merged": second.duplicate_of == first.id, "flagged": second.may_update == first.id,
                   "changes": second.changes,
                   "old_rule_merged": similarity >= OLD_THRESHOLD or normalised(pair["first"]) == normalised(
                       pair["second"])}
            if pair["label"] == "update":
                hits = engine.tools.search(pair["question"], project=project, limit=5).result.hits
                ids = [h.id for h in hits]
                newer = ids.index(second.id) if second.id in ids else None
                older = ids.index(first.id) if first.id in ids and first.id != second.id else None
                row.update(newer_rank=newer, older_rank=older,
                           newer_above=newer is not None and (older is None or newer < older),
                           older_marked=any(h.id == first.id and h.possibly_outdated_by == second.id for h in hits))
            rows.append(row)
    shutil.rmtree(folder, ignore_errors=True)
    return {"name": data["name"], "split": data["split"], "file": path.name, "pairs": len(rows),
            "totals": _totals(rows), "families": _families(rows), "rows": rows}


def _totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for label in LABELS:
        chosen = [r for r in rows if r["label"] == label]
        if not chosen:
            continue
        entry = {"pairs": len(chosen), "merged": sum(r["merged"] for r in chosen),
                 "flagged": sum(r["flagged"] for r in chosen), "apart": sum(not r["merged"] and not r["flagged"]
                                                                             for r in chosen),
                 "old_rule_merged": sum(r["old_rule_merged"] for r in chosen)}
        if label == "update":
            entry["newer_above"] = sum(r["newer_above"] for r in chosen)
            entry["older_marked"] = sum(r["older_marked"] for r in chosen)
        out[label] = entry
    return out


def _families(rows: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, int]]]:
    out: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
    for r in rows:
        counts = out[r["label"]][r["family"]]
        counts["pairs"] += 1
        counts["merged"] += r["merged"]
        counts["flagged"] += r["flagged"]
        counts["old_rule_merged"] += r["old_rule_merged"]
        if r["label"] == "update":
            counts["newer_above"] += r["newer_above"]
    return {label: {family: dict(c) for family, c in families.items()} for label, families in out.items()}


def _share(n: int, of: int) -> str:
    return f"{n}/{of} ({100 * n / of:.1f}%)" if of else "—"


def summary_lines(results: list[dict[str, Any]]) -> list[str]:
    """The pair measures as Markdown: one table per set, then the misses."""
    lines: list[str] = []
    for r in results:
        t = r["totals"]
        split = f" ({r['split']} set)" if r["split"] else ""
        lines += ["", f"Pairs of `{r['file']}`{split}: {r['pairs']:,} pairs, each in its own project, the second "
                  "text stored after the first.", "",
                  "| label | pairs | merged | stored as a possible update | stored apart | merged by the vector rule "
                  "alone (before) | newer above older in search |", "|---|---|---|---|---|---|---|"]
        for label in LABELS:
            if label not in t:
                continue
            e = t[label]
            above = _share(e["newer_above"], e["pairs"]) if label == "update" else ""
            lines.append(f"| {label} | {e['pairs']} | {_share(e['merged'], e['pairs'])} | "
                         f"{_share(e['flagged'], e['pairs'])} | {_share(e['apart'], e['pairs'])} | "
                         f"{_share(e['old_rule_merged'], e['pairs'])} | {above} |")
        families = r["families"].get("distinct", {})
        if families:
            lines += ["", "Distinct pairs by family (merged now / merged by the vector rule alone / flagged as possible "
                      "updates): " + "; ".join(f"{f} {c.get('merged', 0)}/{c.get('old_rule_merged', 0)}/"
                                             f"{c.get('flagged', 0)} of {c['pairs']}" for f, c in sorted(families.items()))]
        repeats = r["families"].get("repeat", {})
        if repeats:
            lines.append("Repeats merged by family: " + "; ".join(
                f"{f} {c.get('merged', 0)} of {c['pairs']}" for f, c in sorted(repeats.items())))
        wrong = [row for row in r["rows"] if row["label"] != "repeat" and row["merged"]]
        missed = [row for row in r["rows"] if row["label"] == "repeat" and not row["merged"]]
        below = [row for row in r["rows"] if row["label"] == "update" and not row["newer_above"]]
        if wrong:
            lines.append("Merged although distinct: " + ", ".join(f"{w['id']} ({w['similarity']:.3f})" for w in wrong))
        if missed:
            lines.append("Repeats not merged: " + ", ".join(
                f"{m['id']} ({m['similarity']:.3f}{', flagged: ' + m['changes'] if m['flagged'] else ''})"
                for m in missed))
        if below:
            lines.append("Updates whose newer fact was not above the older: " + ", ".join(
                f"{b['id']} (newer {b['newer_rank']}, older {b['older_rank']}, {b['similarity']:.3f}"
                f"{', flagged' if b['flagged'] else ''})" for b in below))
    return lines
