"""The ``review`` tool: what upkeep has to show a person about a project's notes and exchanges.

Three lists: memories written more than once (each repeat was counted on it, ``upkeep.duplicates``), pairs of
current memories near enough to be duplicates that were nonetheless stored apart (written before duplicate
handling, with it off, or from another machine at the same moment), and memories a newer version superseded. The
window's Memory page shows them; ``engram merge`` or a ``store`` with ``supersedes`` tidies a pair.

Near pairs are found from the stored vectors, one project and kind at a time, by the cosine similarity of every
two current memories (``upkeep.near_threshold`` unless the call gives one), in blocks so that memory stays small.
Only the newest ``COMPARED_MAX`` memories of the call's scope are compared; the result says when more were there.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Annotated

import numpy as np
from pydantic import Field

from ..retrieval.search import MEMORY_COLUMNS
from ..store.rows import Row
from .reads import _named
from .results import Memory, NearPair, Review
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
    """Duplicates and history to review: memories written more than once, near-duplicate pairs stored apart, and
    superseded memories (each list newest or most repeated first)."""
    store = scope.store
    near = scope.settings.upkeep.near_threshold if threshold is None else threshold
    seen = sorted(store.memories_seen_again(MEMORY_COLUMNS, project=project),
                  key=lambda r: (-int(r["seen_count"] or 1), -r["updated_at"].timestamp()))
    old = sorted(store.superseded_memories(MEMORY_COLUMNS, project=project), key=lambda r: r["valid_to"],
                 reverse=True)
    candidates = sorted(store.current_notes(["id", "project", "kind", "vector", "updated_at"], project=project),
                        key=lambda r: r["updated_at"], reverse=True)
    pairs = _near_pairs(candidates[:COMPARED_MAX], near)
    shown = pairs[:limit]
    wanted = store.memories_by_ids({i for _, a, b in shown for i in (a, b)}, MEMORY_COLUMNS)
    memories = {i: Memory.from_row(r) for i, r in wanted.items()}
    _named(scope, list(memories.values()))
    return Review(
        workspace=scope.workspace, project=project, threshold=near,
        seen_again=_named(scope, [Memory.from_row(r) for r in seen[:limit]]), seen_again_total=len(seen),
        near_pairs=[NearPair(similarity=round(sim, 4), first=memories[a], second=memories[b])
                    for sim, a, b in shown if a in memories and b in memories],
        near_pairs_total=len(pairs), compared=min(len(candidates), COMPARED_MAX), current=len(candidates),
        superseded=_named(scope, [Memory.from_row(r) for r in old[:limit]]), superseded_total=len(old))


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
