"""Duplicates and possible updates at write time: what a new note or turn is to the current memories of its project.

Within one project and one kind of memory (never across projects; each workspace has its own store, so never
across workspaces), a new memory is, to the current ones:

- an **exact** duplicate: the same normalised text (``dedup_key``; for a conversation turn also the same title,
  who spoke and when, or with no title the same minute) as a memory shows, or as a note keeps merged into it;
- a **near** duplicate (notes only): its vector at or above ``upkeep.near_threshold`` cosine similarity to a stored
  note's, and every detail that carries meaning agreeing (``details.compare``: numbers, identifiers, names, times,
  negation, content words swapped for non-synonyms);
- a **possible update** (notes only): at or above ``upkeep.update_threshold`` with a detail that differs: stored as
  a memory of its own, linked to the one it may update;
- or none of these.

Conversation turns are events: two people saying "Thanks, see you Friday!" on two days are two turns, so a turn
is never merged by similarity and is never an update. Only current memories (not superseded) are matched. File
chunks are never deduplicated: a file is its own source of truth and its re-ingest replaces its chunks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ..store import WorkspaceStore
from ..store.memory_filter import Filters
from ..store.rows import Row
from .details import Difference, compare, overlap, says_it_changes
from .versions import kept_text_keys, own_text

Merge = Literal["exact", "near"]
Mode = Literal["exact", "near", "off"]
#: The columns a found duplicate is read with (what merging it needs).
DUPLICATE_COLUMNS = ("id", "project", "kind", "type", "title", "content", "tags", "seen_count", "created_at",
                     "merged_texts")
#: The stored memories nearest a new one that are judged (a duplicate whose details agree may not be the nearest).
CANDIDATES = 5
#: A note less alike than ``upkeep.update_threshold`` is still a possible update when it is at least this alike and
#: says most of it with the same words (``details.overlap``): "Priya is the tech lead for the search team" and
#: "Daniel is …" are 0.57 alike to MiniLM, 0.8 by their words.
SUBJECT_SIMILARITY = 0.55
SUBJECT_OVERLAP = 0.7
#: A note that says it changes something ("moved to", "from now on": ``details.says_it_changes``) is a possible
#: update of a note at least this alike whose details differ. With the two rules above and ``update_threshold``
#: 0.8, chosen on benchmark/upkeep-pairs-tune.json: all 56 of its updates are caught, and 7 of the 56,280 pairs of
#: its other notes (a note and one about the same subject, mostly) would be linked.
CUED_SIMILARITY = 0.6


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


@dataclass(frozen=True)
class PossibleUpdate:
    """A stored note that a new one is alike to but differs from in a detail: the new one may update it."""

    row: Row
    similarity: float
    difference: Difference

    @property
    def id(self) -> str:
        return str(self.row["id"])


Found = Duplicate | PossibleUpdate | None


@dataclass(frozen=True)
class Rules:
    """How a new memory is judged: ``upkeep.duplicates`` and its two thresholds."""

    mode: Mode
    near: float
    update: float


def judge(kind: str, key: str, content: str, candidates: Sequence[tuple[Row, float]], rules: Rules) -> Found:
    """What a new memory (``kind``, ``key``, ``content``) is to ``candidates`` (stored current memories of its project
    and kind with their cosine similarity to it, nearest first): an exact duplicate, a near one whose details
    agree, a note it may update, or nothing."""
    if rules.mode == "off":
        return None
    for row, _ in candidates:  # its text word for word: the one a memory shows, or one merged into it
        if row.get("dedup_key") == key or key in kept_text_keys(row):
            return Duplicate(row, "exact", 1.0)
    if kind != "note":
        return None  # a conversation turn is an event: only a replay of it is the same
    if rules.mode == "near":
        for row, similarity in candidates:
            if similarity >= rules.near and _agrees(row, content):
                return Duplicate(row, "near", similarity)
    for row, similarity in candidates:
        difference = may_update(str(row["content"]), content, similarity, rules)
        if difference is not None:
            return PossibleUpdate(row, similarity, difference)
    return None


def _agrees(row: Row, content: str) -> bool:
    """Whether ``content`` agrees on every detail with the text memory ``row`` shows and, when that is a longer
    text merged into it, with the memory's own first text too: merges do not drift from what was first said (a
    paraphrase without the speaker's label, once shown, would otherwise let another speaker's line in)."""
    first = own_text(row)
    return compare(str(row["content"]), content).agree and (first is None or compare(first, content).agree)


def may_update(old: str, new: str, similarity: float, rules: Rules) -> Difference | None:
    """The details that differ when note ``new`` may update note ``old`` (``similarity`` alike): alike enough
    (``rules.update``; or ``SUBJECT_SIMILARITY`` with ``SUBJECT_OVERLAP`` of their words the same; or
    ``CUED_SIMILARITY`` when ``new`` says it changes something) and a detail differs; ``None`` otherwise."""
    if similarity < min(rules.update, SUBJECT_SIMILARITY):
        return None
    if similarity < rules.update and overlap(old, new) < SUBJECT_OVERLAP and not (
            similarity >= CUED_SIMILARITY and says_it_changes(new)):
        return None
    difference = compare(old, new)
    return None if difference.agree else difference


def find_duplicate(store: WorkspaceStore, *, kind: str, project: str, key: str, content: str,
                   vector: np.ndarray | None, rules: Rules) -> Found:
    """What a new memory (``key``, ``content``, ``vector``) is to the current memories of ``project`` and ``kind``
    (``judge``), asked of the table: its nearest memories by vector, and the memory with its key when none of them
    is a duplicate.

    Raises:
        StoreError: the workspace cannot be read.
    """
    if rules.mode == "off":
        return None
    found: Found = None
    if vector is not None:
        nearest = store.vector_search(vector, CANDIDATES, Filters(project=project, kinds=(kind,), state="current"),
                                      [*DUPLICATE_COLUMNS, "dedup_key"])
        found = judge(kind, key, content, [(r, 1.0 - float(r["_distance"])) for r in nearest], rules)
    if isinstance(found, Duplicate):
        return found
    same = store.memory_with_key(key, [*DUPLICATE_COLUMNS, "dedup_key"])
    return Duplicate(same, "exact", 1.0) if same is not None else found
