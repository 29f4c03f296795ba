"""Possible updates in search results: a newer note that may update an older one comes right before it.

A note stored alike to an older one with a detail changed ("every 90 days" after "every 30 days") is linked to it by
a ``may_update`` edge until a person answers: superseded (the older leaves search) or both kept (a ``keep_both``
edge). Until then, a search, recall or pack that finds the older one shows the newer first, brought in (beside the
results the search ranked) when it did not rank it, and marks the older ``possibly outdated by`` the newer, with the details that differ: a
memory must not answer "30 days" confidently after being told "90 days".

The open pairs are read once per version of the edges table (the store's derived state).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from ..store import WorkspaceStore
from ..store.memory_filter import Filters
from ..upkeep.details import compare

#: The relation of a new note to an older one it may update, and of a pair a person said are both true.
MAY_UPDATE = "may_update"
KEEP_BOTH = "keep_both"


def open_pairs(store: WorkspaceStore) -> dict[str, list[str]]:
    """older id → the ids of the notes that may update it, newest link last (pairs kept both left out).

    Raises:
        StoreError: the edges cannot be read.
    """
    def read() -> dict[str, list[str]]:
        answered = {frozenset((e.src, e.dst)) for e in store.edges(KEEP_BOTH)}
        pairs: dict[str, list[str]] = defaultdict(list)
        for e in store.edges(MAY_UPDATE):
            if frozenset((e.src, e.dst)) not in answered and e.src not in pairs[e.dst]:
                pairs[e.dst].append(e.src)
        return dict(pairs)

    return store.derived.cached("update pairs", ("edges", store.edges_version()), read)


def newer_first(store: WorkspaceStore, hits: list[Any], filters: Filters | None,
                read: Callable[[list[str]], Mapping[str, Mapping[str, Any]]], make: Callable[[Mapping[str, Any], Any], Any],
                ) -> list[Any]:
    """``hits`` (each with ``row``, ``outdated_by`` and ``outdated_changes``) with every newer note of an open pair
    placed right before its older one (read with ``read`` and made a hit by ``make(row, older_hit)`` when the search
    did not find it and it passes ``filters``: one more result beside those the search ranked), the older marked.

    Raises:
        StoreError: the edges or the newer notes cannot be read.
    """
    pairs = open_pairs(store)
    if not pairs or not any(h.row["id"] in pairs for h in hits):
        return hits
    found = {h.row["id"]: h for h in hits}
    wanted = [n for h in hits for n in pairs.get(h.row["id"], []) if n not in found]
    if wanted:
        allowed = store.memory_ids_matching(wanted, filters) if filters is not None else set(wanted)
        rows = read([n for n in wanted if n in allowed])
    else:
        rows = {}
    out: list[Any] = []
    placed: set[str] = set()
    for hit in hits:
        memory_id = hit.row["id"]
        if memory_id in placed:
            continue
        newer = []
        for n in pairs.get(memory_id, []):
            newer_hit = found.get(n) or (make(rows[n], hit) if n in rows else None)
            if newer_hit is None or newer_hit.row.get("valid_to") is not None:
                continue
            newer.append(newer_hit)
            if n not in placed:
                out.append(newer_hit)
                placed.add(n)
        if newer:
            latest = newer[-1]
            hit = replace(hit, outdated_by=latest.row["id"],
                          outdated_changes=compare(str(hit.row["content"]), str(latest.row["content"])).describe())
        out.append(hit)
        placed.add(memory_id)
    return out
