"""Duplicates at write time: a memory written again is counted on the memory already stored, not stored twice.

Two kinds are found, both within one project and one kind of memory (never across projects; each workspace has
its own store, so never across workspaces): an **exact** duplicate has the same normalised text (``dedup_key``),
a **near** duplicate's vector lies at or above ``upkeep.near_threshold`` cosine similarity to a current memory's.
Only current memories (not superseded) are matched. File chunks are never deduplicated: a file is its own source
of truth and its re-ingest replaces its chunks.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ..store import WorkspaceStore
from ..store.memory_filter import Filters
from ..store.rows import Row

Merge = Literal["exact", "near"]
#: The columns a found duplicate is read with (what merging it needs).
DUPLICATE_COLUMNS = ("id", "project", "kind", "type", "title", "content", "tags", "seen_count", "created_at")
_SPACE = re.compile(r"\s+")


def normalised(text: str) -> str:
    """``text`` as duplicates are compared: Unicode NFKC, case-folded, every run of white space one space, stripped."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def dedup_key(kind: str, project: str, text: str) -> str:
    """The exact-duplicate key of a memory: 32 hex digits of SHA-256 over its kind, project and normalised text."""
    return hashlib.sha256("\x00".join((kind, project, normalised(text))).encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True)
class Duplicate:
    """A stored memory that a new one duplicates, and how it was found."""

    row: Row
    how: Merge
    #: The cosine similarity of the two vectors (1.0 for an exact duplicate).
    similarity: float

    @property
    def id(self) -> str:
        return str(self.row["id"])


def find_duplicate(store: WorkspaceStore, *, kind: str, project: str, key: str, vector: np.ndarray | None,
                   mode: Literal["exact", "near", "off"], threshold: float) -> Duplicate | None:
    """The current memory of ``project`` and ``kind`` that a new memory (``key``, ``vector``) duplicates, if any.

    ``mode`` ``off`` finds none; ``exact`` only a memory with the same key; ``near`` the nearest memory by vector
    when it has the same key or its cosine similarity is at least ``threshold``, else a memory with the same key
    (one the vector index did not rank first).

    Raises:
        StoreError: the workspace cannot be read.
    """
    if mode == "off":
        return None
    if mode == "near" and vector is not None:
        # The nearest memory first: a repeat is nearly always it (its key tells an exact one), so one query
        # answers most writes; the key is looked up as well only when the nearest is not near enough.
        nearest = store.vector_search(vector, 1, Filters(project=project, kinds=(kind,), state="current"),
                                      [*DUPLICATE_COLUMNS, "dedup_key"])
        if nearest:
            similarity = 1.0 - float(nearest[0]["_distance"])
            if nearest[0]["dedup_key"] == key:
                return Duplicate(nearest[0], "exact", 1.0)
            if similarity >= threshold:
                return Duplicate(nearest[0], "near", similarity)
    found = store.memory_with_key(key, DUPLICATE_COLUMNS)
    return Duplicate(found, "exact", 1.0) if found is not None else None
