"""The ``review`` tool: what upkeep has to show a person about a project's notes and exchanges.

Five lists: memories written more than once (each repeat was counted on it, ``upkeep.duplicates``); pairs of
current memories near enough to be duplicates, every detail agreeing, that were nonetheless stored apart (written
before duplicate handling, with it off, or from another machine at the same moment); **possible updates**: a newer
note alike to an older one with a detail changed (linked when it was stored, or found here by comparison), with the
details side by side; memories **merged by similarity before** Engram kept merged texts (their counted texts were
not kept: a person should look at them); and memories a newer version superseded. The window's Memory page shows
them; ``tidy`` (``engram merge``, ``supersede``, ``keep-both``) answers them.

Near pairs are found from the stored vectors, one project and kind at a time, by the cosine similarity of every
two current memories (``upkeep.near_threshold`` unless the call gives one), in blocks so that memory stays small.
Only the newest ``COMPARED_MAX`` memories of the call's scope are compared; the result says when more were there.
A pair a person kept both is never listed again.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Annotated

import numpy as np
from pydantic import Field

from ..retrieval.search import MEMORY_COLUMNS
from ..retrieval.updates import KEEP_BOTH, open_pairs
from ..store.rows import Row
from ..upkeep.details import compare
from ..upkeep.duplicates import SUBJECT_SIMILARITY, Rules, may_update
from ..upkeep.writing import rules
from .reads import _named
from .results import Memory, NearPair, PossibleUpdatePair, Review
from .scope import Scope

#: The most current notes and exchanges compared for near pairs in one call (newest first).
COMPARED_MAX = 5000
#: Rows of one similarity block (a block of BLOCK × group size floats at a time).
BLOCK = 512


def review(
    scope: Scope,
    project: Annotated[str | None, Field(min_length=1, max_length=100, description=(
        "Only this project (default: every project, each compared within itself)."))] = None,
    limit: Annotated[int, Field(ge=1, le=200, description="Memories listed per list (1–200).")] = 20,
    threshold: Annotated[float | None, Field(ge=0.5, le=1.0, description=(
        "Cosine similarity at which two memories count as near duplicates (default: upkeep.near_threshold)."))]
    = None,
) -> Review:
    """Duplicates, possible updates and history to review: memories written more than once, near-duplicate pairs
    stored apart, newer notes that may update older ones, memories merged before their texts were kept, and
    superseded memories (each list newest or most repeated first)."""
    store = scope.store
    near = scope.settings.upkeep.near_threshold if threshold is None else threshold
    seen = sorted(store.memories_seen_again(MEMORY_COLUMNS, project=project),
                  key=lambda r: (-int(r["seen_count"] or 1), -r["updated_at"].timestamp()))
    old = sorted(store.superseded_memories(MEMORY_COLUMNS, project=project), key=lambda r: r["valid_to"],
                 reverse=True)
    unkept = sorted(store.memories_merged_unkept([*MEMORY_COLUMNS, "merged_unkept"], project=project),
                    key=lambda r: (-int(r["merged_unkept"] or 0), -r["updated_at"].timestamp()))
    candidates = sorted(store.current_notes(["id", "project", "kind", "vector", "updated_at", "created_at",
                                             "content"], project=project),
                        key=lambda r: r["updated_at"], reverse=True)
    answered = {frozenset((e.src, e.dst)) for e in store.edges(KEEP_BOTH)}
    judged = rules(scope.settings.upkeep)
    similar = [p for p in _near_pairs(candidates[:COMPARED_MAX], min(near, judged.update, SUBJECT_SIMILARITY))
               if frozenset(p[1:]) not in answered]
    by_id = {str(r["id"]): r for r in candidates}
    pairs = [(sim, a, b) for sim, a, b in similar if sim >= near
             and compare(str(by_id[b]["content"]), str(by_id[a]["content"])).agree]
    updates = _updates(scope, by_id, similar, judged)
    shown = pairs[:limit]
    shown_updates = updates[:limit]
    wanted = store.memories_by_ids({i for _, a, b in [*shown, *shown_updates] for i in (a, b)}, MEMORY_COLUMNS)
    memories = {i: Memory.from_row(r) for i, r in wanted.items()}
    _named(scope, list(memories.values()))
    return Review(
        workspace=scope.workspace, project=project, threshold=near,
        seen_again=_named(scope, [Memory.from_row(r) for r in seen[:limit]]), seen_again_total=len(seen),
        near_pairs=[NearPair(similarity=round(sim, 4), first=memories[a], second=memories[b])
                    for sim, a, b in shown if a in memories and b in memories],
        near_pairs_total=len(pairs), compared=min(len(candidates), COMPARED_MAX), current=len(candidates),
        possible_updates=[PossibleUpdatePair(
            similarity=round(sim, 4), newer=memories[a], older=memories[b],
            changes=[str(c) for c in compare(memories[b].content, memories[a].content).changes])
            for sim, a, b in shown_updates if a in memories and b in memories],
        possible_updates_total=len(updates),
        merged_before=_named(scope, [Memory.from_row(r) for r in unkept[:limit]]), merged_before_total=len(unkept),
        superseded=_named(scope, [Memory.from_row(r) for r in old[:limit]]), superseded_total=len(old))


def _updates(scope: Scope, current: dict[str, Row], similar: list[tuple[float, str, str]],
             judged: Rules) -> list[tuple[float, str, str]]:
    """(similarity, newer id, older id) of the open possible updates among the ``current`` memories: those a store
    linked (``may_update``) and alike pairs that ``may_update`` would have linked, newest first."""
    linked = {(newer, older) for older, news in open_pairs(scope.store).items() for newer in news
              if newer in current and older in current}
    found: dict[tuple[str, str], float] = {}
    for sim, a, b in similar:
        if current[a]["kind"] != "note":
            continue  # conversation turns are events, never updates of each other
        if may_update(str(current[b]["content"]), str(current[a]["content"]), sim, judged) is not None:
            found[(a, b)] = sim
    for newer, older in linked:
        found.setdefault((newer, older), _similarity(current[newer], current[older]))
    return sorted(((sim, a, b) for (a, b), sim in found.items()),
                  key=lambda p: current[p[1]]["created_at"], reverse=True)


def _similarity(a: Row, b: Row) -> float:
    va, vb = np.asarray(a["vector"], dtype=np.float32), np.asarray(b["vector"], dtype=np.float32)
    norm = float(np.linalg.norm(va) * np.linalg.norm(vb))
    return float(va @ vb) / norm if norm else 0.0


def _near_pairs(rows: list[Row], threshold: float) -> list[tuple[float, str, str]]:
    """(similarity, newer id, older id) of every two ``rows`` of one project and kind at or above ``threshold``,
    most similar first (``rows`` newest first)."""
    groups: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for row in rows:
        if row["vector"] is not None:
            groups[(row["project"], row["kind"])].append(row)
    found: list[tuple[float, str, str]] = []
    for group in groups.values():
        if len(group) < 2:
            continue
        raw = np.asarray([r["vector"] for r in group], dtype=np.float32)
        norms = np.linalg.norm(raw, axis=1, keepdims=True)
        vectors = (raw / np.where(norms == 0, 1.0, norms)).astype(np.float32)
        for start in range(0, len(group), BLOCK):
            similar = vectors[start:start + BLOCK] @ vectors.T
            for i, j in zip(*np.nonzero(similar >= threshold), strict=True):
                a = start + int(i)
                if a < int(j):  # each pair once, not a memory with itself
                    found.append((float(similar[i, j]), str(group[a]["id"]), str(group[int(j)]["id"])))
    return sorted(found, key=lambda p: -p[0])
