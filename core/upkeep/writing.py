"""Writing one new note or exchange with upkeep: a duplicate counted on the stored memory (its text kept with it),
a possible update linked to the note it may update, superseded ones marked.

Runs on the engine's writer (``write_memory`` is what the writer runs), so the duplicate lookup and the write it
decides cannot interleave with another caller's: two editors storing the same text at once store it once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from ..errors import InvalidArgument, NotFound
from ..ingest.records import content_hash, edge, mention_edges
from ..settings import UpkeepSettings
from ..store import WorkspaceStore
from .duplicates import Duplicate, Found, Merge, PossibleUpdate, Rules, find_duplicate
from .keys import dedup_key
from .near_index import NearIndex, near_index
from .versions import Merge as MergedIn
from .versions import merged_with

logger = logging.getLogger(__name__)

#: At most this many memories one write may supersede.
MAX_SUPERSEDES = 20
#: The kinds of memory that duplicates are looked for among and that may be superseded (file chunks are replaced by
#: their file's re-ingest instead).
KEPT_KINDS = ("note", "exchange")


@dataclass(frozen=True)
class MayUpdate:
    """A stored note the new one may update: alike, with the details that differ."""

    id: str
    similarity: float
    #: The details that differ, as a person reads them (``30 days → 90 days``).
    changes: str


@dataclass(frozen=True)
class Written:
    """What a write did: the memory that holds the text now, and whether it was a duplicate."""

    id: str
    #: The stored memory the new one duplicated (``None``: the text was stored as a new memory).
    duplicate_of: str | None = None
    merged: Merge | None = None
    #: How many times the memory has now been written (1 for a new one).
    seen: int = 1
    #: The memories the write marked superseded.
    superseded: list[str] = field(default_factory=list)
    #: The ids of the entities the kept text mentions.
    entities: list[str] = field(default_factory=list)
    #: The stored note the new one may update (it was stored as a memory of its own, linked to it).
    may_update: MayUpdate | None = None


def rules(upkeep: UpkeepSettings) -> Rules:
    """The duplicate rules of ``upkeep`` settings."""
    return Rules(mode=upkeep.duplicates, near=upkeep.near_threshold, update=upkeep.update_threshold)


def memory_key(row: Mapping[str, Any]) -> str:
    """The exact-duplicate key of a memory row (a turn's holds its title, or the minute it was written)."""
    return dedup_key(str(row["kind"]), str(row["project"]), str(row["content"]), str(row.get("title") or ""),
                     row.get("created_at"))


def checked_supersedes(store: WorkspaceStore, workspace: str, ids: Sequence[str]) -> list[str]:
    """``ids`` (without repeats) once each is a current note or exchange of the workspace.

    Raises:
        InvalidArgument: more than ``MAX_SUPERSEDES``, or one is a file chunk or already superseded.
        NotFound: one names no memory of the workspace.
    """
    wanted = list(dict.fromkeys(ids))
    if len(wanted) > MAX_SUPERSEDES:
        raise InvalidArgument(f"Argument 'supersedes' names {len(wanted)} memories; it accepts at most "
                              f"{MAX_SUPERSEDES} ids. Nothing was stored.")
    if not wanted:
        return []
    with store.reads_before_write():
        found = store.memories_by_ids(wanted, ["id", "kind", "valid_to", "superseded_by"])
    missing = [i for i in wanted if i not in found]
    if missing:
        raise NotFound(f"'supersedes' names no memory with id {', '.join(missing)} in workspace '{workspace}'. "
                       "Nothing was stored; use ids printed by search or get_memory.")
    for memory_id in wanted:
        row = found[memory_id]
        if row["kind"] not in KEPT_KINDS:
            raise InvalidArgument(f"Memory {memory_id} is a {row['kind']} of an ingested file or text: only notes "
                                  "and exchanges can be superseded (ingest the changed file instead). Nothing was "
                                  "stored.")
        if row["valid_to"] is not None:
            raise InvalidArgument(f"Memory {memory_id} was already superseded by {row['superseded_by']} on "
                                  f"{row['valid_to']:%Y-%m-%d}: supersede that one instead. Nothing was stored.")
    return wanted


def probably_repeated(store: WorkspaceStore, upkeep: UpkeepSettings, row: Mapping[str, Any]) -> bool:
    """Whether memory ``row`` (without its vector) looks like an exact repeat of a current memory by the writer's
    index (from any thread, without a read): a caller may then hand ``write_memory`` the row without its vector and
    embed only if told to."""
    return (upkeep.duplicates != "off" and NearIndex.usable(store)
            and near_index(store).holds_key(str(row["project"]), str(row["kind"]), memory_key(row)))


def write_memory(store: WorkspaceStore, upkeep: UpkeepSettings, row: Mapping[str, Any],
                 edges: Sequence[Mapping[str, Any]], *, supersedes: Sequence[str] = (), now: datetime) -> Written | None:
    """On the writer: store the new memory ``row`` (a note or exchange) with its ``edges``, unless it duplicates a
    current memory of its project and kind, which is then counted as written again (the new text kept with it, the
    longer text shown); a note that may update a stored one is stored linked to it (``may_update``); then mark the
    memories ``supersedes`` (checked by ``checked_supersedes``) superseded by whichever holds the text.

    A ``row`` whose vector is ``None`` (``probably_repeated`` said so) is written only as an exact repeat; when it
    is none, nothing is written and ``None`` is returned: embed it and call again.

    Raises:
        StoreError: the workspace cannot be read or written.
    """
    key = memory_key(row)
    judged = rules(upkeep)
    index = near_index(store) if upkeep.duplicates != "off" and NearIndex.usable(store) else None
    if row["vector"] is None and index is None:
        return None
    with store.reads_before_write():
        before = index.version(store) if index is not None else None
        looked: Found | bool = False
        if index is not None:
            looked = index.lookup(store, before, project=row["project"], kind=row["kind"], key=key,
                                  content=row["content"], vector=row["vector"], rules=judged)
        if looked is False and row["vector"] is None:
            return None  # not the exact repeat it looked like: the caller embeds it first
        found = looked if not isinstance(looked, bool) else find_duplicate(
            store, kind=row["kind"], project=row["project"], key=key, content=row["content"], vector=row["vector"],
            rules=judged)
    if found is not None and found.id in supersedes:
        if row["vector"] is None:
            return None
        found = None  # a new version as it was: written as a memory of its own, superseding the old
    merged: Merged | None = None
    if isinstance(found, Duplicate):
        try:
            merged = merge_into(store, found, row, key, now=now)
        except ValueError as exc:  # its record of merged texts is damaged: never written over; stored apart
            logger.warning("memory %s keeps a damaged record of merged texts (%s): the new memory is stored apart",
                           found.id, exc)
            found = None
    commits = 0
    added: list[dict[str, Any]] = []
    changed: dict[str, Mapping[str, Any]] = {}
    may_update: MayUpdate | None = None
    if merged is None:
        links = list(edges)
        if isinstance(found, PossibleUpdate):
            may_update = MayUpdate(found.id, round(found.similarity, 4), found.difference.describe())
            links.append(edge(str(row["id"]), found.id, "may_update", str(row["id"])))
        added = [{**row, "dedup_key": key, "seen_count": 1, "last_seen": now}]
        store.add_memories(added, links)
        kept, seen, entities = str(row["id"]), 1, [e["dst"][2:] for e in edges if e["relation"] == "mentions"]
    else:
        assert isinstance(found, Duplicate)
        seen, entities, changed = merged.seen, merged.entities, {found.id: merged.values}
        kept = found.id
    commits += 1
    replaced = [i for i in supersedes if i != kept]
    if replaced:
        store.supersede(replaced, kept, now, [edge(kept, old, "supersedes", kept) for old in replaced])
        commits += 1
    if index is not None:
        index.wrote(store, before, commits, added=added, changed=changed, gone=replaced)
    if merged is None or not isinstance(found, Duplicate):
        return Written(kept, superseded=replaced, entities=entities, may_update=may_update)
    return Written(kept, duplicate_of=kept, merged=found.how, seen=seen, superseded=replaced, entities=entities)


@dataclass(frozen=True)
class Merged:
    """What counting a memory on a stored one did: the sighting count, the entities the new text mentions (linked to
    the kept memory) and the values written to it."""

    seen: int
    entities: list[str]
    values: dict[str, Any]


def merge_into(store: WorkspaceStore, found: Duplicate, row: Mapping[str, Any], key: str, *, now: datetime) -> Merged:
    """Count ``row`` as ``found`` written again, in one commit of the memories table: one more sighting, tags united;
    a near duplicate's text is kept among the memory's merged texts (``versions``), and shown in place of the
    memory's when it is longer (the shown one stays kept); an exact repeat of a merged text counts on its entry.

    Raises:
        ValueError: the memory's record of merged texts is damaged (nothing was written).
        StoreError: the workspace cannot be written.
    """
    old = found.row
    seen = int(old["seen_count"] or 1) + 1
    values: dict[str, Any] = {"seen_count": seen, "last_seen": now}
    # A near duplicate's text, or any repeat of a memory that keeps merged texts (counted on the text it repeats).
    if found.how == "near" or old.get("merged_texts"):
        record, shown = merged_with(old, MergedIn(
            id=str(row["id"]), content=str(row["content"]), title=str(row["title"]), tags=tuple(row["tags"]),
            type=str(row["type"]), written=now, how="near", similarity=found.similarity), now)
        values["merged_texts"] = record.to_json()
        tags = list(dict.fromkeys([*old["tags"], *record.tags()]))
        if shown:
            values.update(content=row["content"], title=row["title"] or old["title"],
                          vector=np.asarray(row["vector"]), content_hash=content_hash(row["content"]),
                          dedup_key=key, updated_at=now)
    else:  # an exact repeat of a memory that keeps no merged texts: its tags are the memory's own
        tags = list(dict.fromkeys([*old["tags"], *row["tags"]]))
    if tags != list(old["tags"]):
        values["tags"] = tags
    store.update_memory(found.id, values)
    mentions = mention_edges(found.id, str(row["content"]), found.id)
    if mentions:  # a text that names no identifier has no links to add (and needs no look at the old ones)
        linked = {(e.dst, e.relation) for e in store.edges_from([found.id])}
        new = [e for e in mentions if (e["dst"], e["relation"]) not in linked]
        if new:
            store.add_memories([], new)
    return Merged(seen, [e["dst"][2:] for e in mentions], values)


def write_new_memories(store: WorkspaceStore, upkeep: UpkeepSettings, rows: Sequence[Mapping[str, Any]],
                       edges: Mapping[str, Sequence[Mapping[str, Any]]], *, now: datetime,
                       on_duplicate: Callable[[Mapping[str, Any], str], Sequence[Mapping[str, Any]]],
                       ) -> list[Written]:
    """On the writer: store new memories ``rows`` (in order; ``edges`` by row id) in one commit, each one that
    duplicates a current memory (stored, or earlier in ``rows``) counted on it instead; ``on_duplicate(row,
    kept_id)`` gives the edges to add for such a row (e.g. a captured turn's link to its session). Returns what
    happened to each row, in order.

    Raises:
        StoreError: the workspace cannot be read or written.
    """
    added: list[dict[str, Any]] = []
    by_key: dict[str, dict[str, Any]] = {}
    new_edges: list[Mapping[str, Any]] = []
    written: list[Written] = []
    judged = rules(upkeep)
    for row in rows:
        key = memory_key(row)
        if upkeep.duplicates != "off" and key in by_key:
            twin = by_key[key]
            twin["seen_count"] += 1
            new_edges += on_duplicate(row, twin["id"])
            written.append(Written(twin["id"], duplicate_of=twin["id"], merged="exact", seen=twin["seen_count"]))
            continue
        with store.reads_before_write():
            found = find_duplicate(store, kind=row["kind"], project=row["project"], key=key, content=row["content"],
                                   vector=row["vector"], rules=judged)
        if isinstance(found, Duplicate):
            try:
                seen = merge_into(store, found, row, key, now=now).seen
            except ValueError as exc:
                logger.warning("memory %s keeps a damaged record of merged texts (%s): the new memory is stored "
                               "apart", found.id, exc)
            else:
                new_edges += on_duplicate(row, found.id)
                written.append(Written(found.id, duplicate_of=found.id, merged=found.how, seen=seen))
                continue
        kept = {**row, "dedup_key": key, "seen_count": 1, "last_seen": now}
        added.append(kept)
        by_key[key] = kept
        new_edges += edges.get(str(row["id"]), ())
        written.append(Written(str(row["id"])))
    store.add_memories(added, new_edges)
    return written
