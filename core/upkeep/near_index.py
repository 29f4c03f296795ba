"""The duplicate lookup's memory of a project's current notes (or exchanges): keys, vectors and what a merge reads.

Asking LanceDB for a new memory's nearest neighbour costs a query on every write (about 11 ms on 2 cores, most of
a repeat's cost; benchmark/RESULTS.md, Upkeep). A local workspace is written by this process's one writer, so
the writer can keep what that query would read — every current memory's ``dedup_key``, normalised vector and the
columns a merge reads (``DUPLICATE_COLUMNS``), per project and kind — and bring it up to date with each write it
makes. It is used only while it is known to be exactly the table: it is stamped with the memories table's version
after the writer's last change, and only when that change moved the version by the writer's own commits alone
(maintenance, which changes no row, carries the stamp over). Any other version (another process wrote, a memory
was forgotten, an ingest ran) means it is read again from the table before it answers.

Shared workspaces (another machine may write at any moment) and groups larger than ``MAX_ROWS`` use the table's
query instead, as do batch writes (capture), which leave the groups to be read again.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..store import WorkspaceStore
from .duplicates import CANDIDATES, DUPLICATE_COLUMNS, Duplicate, Found, Rules, judge
from .versions import kept_text_keys

#: The most memories of one project and kind held in memory (their vector, 1.5 KB at 384 dimensions, and what a
#: merge reads of them).
MAX_ROWS = 20_000


@dataclass
class _Group:
    """The current memories of one project and kind: ids, keys and unit vectors, row for row. A memory that is
    gone leaves a zero row (never near anything) until the group is read again."""

    ids: list[str] = field(default_factory=list)
    keys: dict[str, str] = field(default_factory=dict)  # the key of any of a memory's texts → id
    key_of: dict[str, str] = field(default_factory=dict)  # id → dedup_key (the text it shows)
    texts_of: dict[str, set[str]] = field(default_factory=dict)  # id → the keys of every text it keeps
    row_of: dict[str, int] = field(default_factory=dict)  # id → its row
    data: dict[str, dict[str, Any]] = field(default_factory=dict)  # id → its DUPLICATE_COLUMNS
    vectors: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.float32))
    size: int = 0  # rows of ``vectors`` in use (it grows by doubling)

    def add(self, row: Mapping[str, Any]) -> None:
        memory_id, key, unit = str(row["id"]), row.get("dedup_key"), _unit(row["vector"])
        if self.vectors.shape[1] != unit.shape[0] or self.size == self.vectors.shape[0]:
            grown = np.zeros((max(16, 2 * self.size), unit.shape[0]), dtype=np.float32)
            if self.size and self.vectors.shape[1] == unit.shape[0]:
                grown[: self.size] = self.vectors[: self.size]
            self.vectors = grown
        self.vectors[self.size] = unit
        self.ids.append(memory_id)
        self.row_of[memory_id] = self.size
        self.size += 1
        self.data[memory_id] = {c: row.get(c) for c in DUPLICATE_COLUMNS}
        self._set_key(memory_id, key)
        self._set_text_keys(memory_id)

    def change(self, memory_id: str, values: Mapping[str, Any]) -> None:
        """``values`` written to a memory held here (a merge: its count, tags, merged texts, maybe a longer text and
        vector)."""
        if memory_id not in self.row_of:
            return
        self.data[memory_id].update({c: v for c, v in values.items() if c in DUPLICATE_COLUMNS})
        if "vector" in values:
            self.vectors[self.row_of[memory_id]] = _unit(values["vector"])
        if "dedup_key" in values:
            self._drop_key(memory_id)
            self._set_key(memory_id, values["dedup_key"])
        if "merged_texts" in values or "dedup_key" in values:
            self._set_text_keys(memory_id)

    def remove(self, memory_id: str) -> None:
        row = self.row_of.pop(memory_id, None)
        if row is not None:
            self.vectors[row] = 0.0
            self.ids[row] = ""
            self._drop_key(memory_id)
            self.data.pop(memory_id, None)

    def _set_key(self, memory_id: str, key: str | None) -> None:
        if key:
            self.keys[key] = memory_id
            self.key_of[memory_id] = key

    def _set_text_keys(self, memory_id: str) -> None:
        """Hold the keys of the texts merged into a note (and of its own, when it shows a merged one): a text
        written again word for word is then an exact repeat of that memory, counted without embedding it."""
        for old in self.texts_of.pop(memory_id, set()):
            if self.keys.get(old) == memory_id and self.key_of.get(memory_id) != old:
                del self.keys[old]
        keys = kept_text_keys(self.data[memory_id])
        self.texts_of[memory_id] = keys
        for key in keys:
            self.keys.setdefault(key, memory_id)

    def _drop_key(self, memory_id: str) -> None:
        old = self.key_of.pop(memory_id, None)
        if old is not None and self.keys.get(old) == memory_id:
            del self.keys[old]
        for key in self.texts_of.pop(memory_id, set()):
            if self.keys.get(key) == memory_id:
                del self.keys[key]

    def nearest(self, vector: np.ndarray, k: int) -> list[tuple[dict[str, Any], float]]:
        """The ``k`` memories nearest ``vector`` (what a merge reads of them, with their key), nearest first."""
        if not self.row_of:
            return []
        similar = self.vectors[: self.size] @ _unit(vector)
        best = np.argsort(-similar)[:k] if self.size <= k else np.argpartition(-similar, k)[:k]
        ranked = sorted(((int(i), float(similar[i])) for i in best if self.ids[int(i)]), key=lambda p: -p[1])
        return [({**self.data[self.ids[i]], "dedup_key": self.key_of.get(self.ids[i])}, sim) for i, sim in ranked]


def _unit(vector: Any) -> np.ndarray:
    unit = np.asarray(vector, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(unit))
    return unit / norm if norm else unit


class NearIndex:
    """One store's groups, used on its writer: ``lookup`` before a write, ``wrote`` after it."""

    def __init__(self) -> None:
        self._groups: dict[tuple[str, str], _Group] = {}

    @staticmethod
    def usable(store: WorkspaceStore) -> bool:
        """Only a workspace this process writes alone (a local folder) is held in memory."""
        return store.location is None

    def _stamp_name(self, project: str, kind: str) -> str:
        return f"near-index\x00{project}\x00{kind}"

    def _group(self, store: WorkspaceStore, project: str, kind: str, version: Hashable) -> _Group | None:
        """The group at ``version`` (the table's now), read again from the table when the table moved on without it
        (None: too large)."""
        name = self._stamp_name(project, kind)
        group = self._groups.get((project, kind))
        if group is not None and store.derived.stamp(name) == version:
            return group
        rows = [r for r in store.current_notes([*DUPLICATE_COLUMNS, "dedup_key", "vector"], project=project)
                if r["kind"] == kind]
        if len(rows) > MAX_ROWS:
            self._groups.pop((project, kind), None)
            return None
        group = _Group()
        for row in rows:
            if row["vector"] is not None:
                group.add(row)
        self._groups[(project, kind)] = group
        store.derived.set_stamp(name, version)
        return group

    def holds_key(self, project: str, kind: str, key: str) -> bool:
        """Whether a memory of ``project`` and ``kind`` with ``key`` was current when the group was last brought up
        to date: a hint, safe from any thread (one dict lookup), that lets a caller skip embedding an exact repeat.
        ``lookup`` on the writer decides."""
        group = self._groups.get((project, kind))
        return group is not None and key in group.keys

    def version(self, store: WorkspaceStore) -> Hashable:
        """The memories table's version now, as groups are stamped (read before a write, for ``wrote``)."""
        return ("memories", store.memories_version())

    def lookup(self, store: WorkspaceStore, version: Hashable, *, project: str, kind: str, key: str, content: str,
               vector: np.ndarray | None, rules: Rules) -> Found | bool:
        """What a memory of ``project`` and ``kind`` with ``key``, ``content`` and ``vector`` is to the current ones,
        as ``find_duplicate`` decides it, with the table at ``version`` (``version(store)``, read just before): a
        ``Duplicate``, a ``PossibleUpdate``, ``None`` (nothing), or ``False`` (no answer here: ask the table; always
        so for a ``vector`` of ``None`` that is not an exact repeat).

        Raises:
            StoreError: the workspace cannot be read.
        """
        group = self._group(store, project, kind, version)
        if group is None:
            return False
        if key in group.keys:  # the text of a current memory, or of a text merged into one, word for word
            memory_id = group.keys[key]
            return Duplicate({**group.data[memory_id], "dedup_key": group.key_of.get(memory_id)}, "exact", 1.0)
        if vector is None:  # a caller that skipped embedding an exact repeat: only its key can answer
            return False
        return judge(kind, key, content, group.nearest(vector, CANDIDATES), rules)

    def wrote(self, store: WorkspaceStore, before: Hashable, commits: int, *, added: Sequence[Mapping[str, Any]] = (),
              changed: Mapping[str, Mapping[str, Any]] | None = None, gone: Sequence[str] = ()) -> None:
        """The writer made ``commits`` commits to the memories table since version ``before``: memories ``added``
        (whole rows), ``changed`` (id → values written) and ``gone`` (superseded). The groups held at ``before``
        take the change and are stamped with the version those commits alone lead to (``before`` + ``commits``):
        had another process committed meanwhile, the table's version differs from it at the next lookup, and the
        groups are read again then (so the version is not read here)."""
        if not isinstance(before, tuple):
            self.forget(store)
            return
        after = before[1] + commits
        fresh = [(p, k) for p, k in self._groups if store.derived.stamp(self._stamp_name(p, k)) == before]
        for project, kind in fresh:
            group = self._groups[(project, kind)]
            for memory_id in gone:
                group.remove(memory_id)
            for memory_id, values in (changed or {}).items():
                group.change(memory_id, values)
            for row in added:
                if (row["project"], row["kind"]) == (project, kind) and row["vector"] is not None:
                    group.add(row)
            if len(group.row_of) > MAX_ROWS:  # grown too large to hold: the table answers for it from now on
                del self._groups[(project, kind)]
                store.derived.set_stamp(self._stamp_name(project, kind), None)
                continue
            store.derived.set_stamp(self._stamp_name(project, kind), ("memories", after))

    def forget(self, store: WorkspaceStore) -> None:
        """Drop every group (the table changed in a way not told here): each is read again when next needed."""
        for project, kind in list(self._groups):
            store.derived.set_stamp(self._stamp_name(project, kind), None)
        self._groups.clear()


def near_index(store: WorkspaceStore) -> NearIndex:
    """The store's index (one per store, kept in its derived state)."""
    return store.derived.keep("near-index", NearIndex)
