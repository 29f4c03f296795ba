"""A person's (or an agent's) answers to what upkeep found, on the writer: supersede, keep both, merge, unmerge.

- **supersede**: a stored memory replaces older ones (they stay as history): a possible update confirmed.
- **keep both**: a possible update that is not one: both are true, and the pair is not offered again.
- **merge**: other memories made one with a kept memory: each is superseded by it (its row stays) and recorded as
  a text merged into it, so that the merge can be undone.
- **unmerge**: a memory's merged texts (near duplicates counted on it, memories merged into it) become memories of
  their own again, with their own ids, times, tags and sightings; the memory gets its own text back.

Nothing here deletes a text: superseded rows stay, merged texts stay in the record until they are memories again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

import numpy as np

from ..errors import InvalidArgument, NotFound
from ..ingest.records import content_hash, edge, embedding_text, mention_edges, new_memory_id
from ..store import WorkspaceStore
from .keys import dedup_key
from .near_index import near_index
from .versions import Merge, MergedTexts, Own, merged_with
from .writing import KEPT_KINDS, checked_supersedes

#: The columns a tidy reads of a memory.
TIDY_COLUMNS = ("id", "project", "source", "kind", "type", "tags", "title", "content", "created_at", "updated_at",
                "seen_count", "last_seen", "valid_to", "superseded_by", "merged_texts", "vector")
#: Embeds texts as the memories they become are embedded (a note's title and text).
EmbedFn = Callable[[list[str]], np.ndarray]


def current(store: WorkspaceStore, workspace: str, ids: Sequence[str]) -> dict[str, Mapping[str, Any]]:
    """The memories ``ids``, each a current note or exchange of the workspace.

    Raises:
        NotFound: one names no memory of the workspace.
        InvalidArgument: one is a file's chunk, or superseded.
    """
    with store.reads_before_write():
        found = store.memories_by_ids(ids, TIDY_COLUMNS)
    missing = [i for i in ids if i not in found]
    if missing:
        raise NotFound(f"No memory with id {', '.join(missing)} in workspace '{workspace}'; nothing was changed. Use "
                       "ids printed by search, get_memory or review.")
    for memory_id in ids:
        row = found[memory_id]
        if row["kind"] not in KEPT_KINDS:
            raise InvalidArgument(f"Memory {memory_id} is a {row['kind']} of an ingested file or text: only notes and "
                                  "exchanges are tidied (change the file and ingest it again). Nothing was changed.")
        if row["valid_to"] is not None:
            raise InvalidArgument(f"Memory {memory_id} was already superseded by {row['superseded_by']}: use that one "
                                  "instead. Nothing was changed.")
    return found


def supersede(store: WorkspaceStore, workspace: str, new: str, old: Sequence[str], now: datetime) -> list[str]:
    """On the writer: the current memory ``new`` supersedes the memories ``old`` (they stay as history).

    Raises:
        InvalidArgument / NotFound: as ``current`` and ``checked_supersedes`` say.
    """
    if new in old:
        raise InvalidArgument(f"Memory {new} cannot supersede itself; give the older memories. Nothing was changed.")
    current(store, workspace, [new])
    olds = checked_supersedes(store, workspace, old)
    store.supersede(olds, new, now, [edge(new, o, "supersedes", new) for o in olds])
    near_index(store).forget(store)
    return olds


def keep_both(store: WorkspaceStore, workspace: str, first: str, second: str) -> None:
    """On the writer: memories ``first`` and ``second`` are both true: never offered again as a possible update.

    Raises:
        InvalidArgument / NotFound: as ``current`` says, or the same memory twice.
    """
    if first == second:
        raise InvalidArgument("Give two different memories; nothing was changed.")
    current(store, workspace, [first, second])
    store.add_memories([], [edge(first, second, "keep_both", first)])


def merge(store: WorkspaceStore, workspace: str, kept: str, others: Sequence[str], now: datetime) -> int:
    """On the writer: memories ``others`` made one with ``kept``: each superseded by it and recorded as a text merged
    into it (``how`` merge), its sightings and tags counted on it. Returns how many times ``kept`` is now written.

    Raises:
        InvalidArgument: the same memory twice, another project or kind, or as ``current`` says.
        NotFound: as ``current`` says.
        ValueError: ``kept``'s record of merged texts is damaged (nothing was changed).
    """
    wanted = list(dict.fromkeys(others))
    if kept in wanted or not wanted:
        raise InvalidArgument("Give a memory to keep and at least one other to merge into it; nothing was changed.")
    rows = current(store, workspace, [kept, *wanted])
    into = dict(rows[kept])
    for other in wanted:
        row = rows[other]
        if (row["project"], row["kind"]) != (into["project"], into["kind"]):
            raise InvalidArgument(f"{other} is a {row['kind']} of project {row['project']} and {kept} a {into['kind']} "
                                  f"of project {into['project']}: only memories of one project and kind are merged. "
                                  "Nothing was changed.")
    seen = int(into["seen_count"] or 1)
    for other in wanted:
        row = rows[other]
        record, _ = merged_with(into, Merge(
            id=other, content=str(row["content"]), title=str(row["title"]), tags=tuple(row["tags"]),
            type=str(row["type"]), written=row["created_at"], how="merge", similarity=_cosine(into, row),
            seen=int(row["seen_count"] or 1)), now, show_longer=False)
        into["merged_texts"] = record.to_json()
        seen += int(row["seen_count"] or 1)
    record = MergedTexts.from_json(into["merged_texts"])
    tags = list(dict.fromkeys([*rows[kept]["tags"], *record.tags()]))
    store.update_memory(kept, {"seen_count": seen, "last_seen": now, "tags": tags, "merged_texts": into["merged_texts"]})
    store.supersede(wanted, kept, now, [edge(kept, o, "supersedes", kept) for o in wanted])
    near_index(store).forget(store)
    return seen


@dataclass(frozen=True)
class Split:
    """What unmerging a memory will do, worked out before the writer runs it (the texts embedded): the memories it
    brings back, and what the memory itself becomes."""

    memory: str
    record: str  # the record it was worked out from: the writer applies it only to that very record
    new_rows: list[dict[str, Any]]
    restored: list[str]  # memories merged by ``merge`` that become current again
    values: dict[str, Any]  # the memory's columns after


def plan_unmerge(store: WorkspaceStore, workspace: str, memory_id: str, only: Sequence[str], embed: EmbedFn,
                 now: datetime) -> Split:
    """What unmerging ``memory_id`` (only the merged texts ``only``, when given) does: each merged text becomes a
    memory again and the memory keeps its own text and what was not split off.

    Raises:
        NotFound / InvalidArgument: as ``current`` says; the memory has nothing merged into it; ``only`` names a text
        that is not merged into it.
        ValueError: its record of merged texts is damaged.
    """
    row = current(store, workspace, [memory_id])[memory_id]
    record = MergedTexts.from_json(row.get("merged_texts"))
    if not record.texts:
        unkept = "" if not int(row["seen_count"] or 1) > 1 else (
            f" (it was written {row['seen_count']} times, but the texts counted on it were not kept: those counts are "
            "from before Engram kept every merged text, or exact repeats of its text)")
        raise InvalidArgument(f"Memory {memory_id} has no merged texts to split{unkept}. Nothing was changed.")
    by_id = {t.id: t for t in record.texts}
    unknown = [i for i in only if i not in by_id]
    if unknown:
        raise InvalidArgument(f"{', '.join(unknown)} is not merged into {memory_id}; the texts merged into it are "
                              f"{', '.join(by_id)}. Nothing was changed.")
    chosen = [t for t in record.texts if not only or t.id in only]
    staying = [t for t in record.texts if t not in chosen]
    own = record.own or Own(str(row["content"]), str(row["title"]), tuple(row["tags"]))
    near = [t for t in chosen if t.how == "near"]
    taken = set(store.memories_by_ids([t.id for t in near], ["id"]))
    shown = max([None, *staying], key=lambda t: len(own.content) if t is None else len(t.content))
    texts_to_embed = [embedding_text(t.title, t.content) for t in near]
    shown_changes = (shown is None and record.shown is not None) or (shown is not None and not shown.kept)
    if shown_changes:
        texts_to_embed.append(embedding_text(*((own.title, own.content) if shown is None else (shown.title, shown.content))))
    vectors = embed(texts_to_embed) if texts_to_embed else np.zeros((0, 0), dtype=np.float32)
    new_rows: list[dict[str, Any]] = []
    for index, text in enumerate(near):
        new_id = text.id if text.id not in taken else new_memory_id()
        new_rows.append({
            "id": new_id, "project": row["project"], "source": row["source"], "kind": row["kind"], "type": text.type,
            "tags": list(text.tags), "title": text.title, "content": text.content, "vector": vectors[index],
            "created_at": text.written, "updated_at": text.written, "content_hash": content_hash(text.content),
            "chunk_index": 0, "start_line": 0, "end_line": 0,
            "dedup_key": dedup_key(str(row["kind"]), str(row["project"]), text.content, text.title, text.written),
            "seen_count": text.seen, "last_seen": text.last_seen or text.written})
    rest = MergedTexts(own, tuple(replace(t, kept=t is shown) for t in staying)) if staying else None
    values: dict[str, Any] = {
        "seen_count": max(1, int(row["seen_count"] or 1) - sum(t.seen for t in chosen)),
        "tags": rest.tags() if rest is not None else list(own.tags),
        "merged_texts": rest.to_json() if rest is not None else None}
    if shown_changes:
        title, content = (own.title, own.content) if shown is None else (shown.title, shown.content)
        values.update(title=title, content=content, vector=vectors[-1], content_hash=content_hash(content),
                      dedup_key=dedup_key(str(row["kind"]), str(row["project"]), content, title, row["created_at"]),
                      updated_at=now)
    return Split(memory_id, str(row["merged_texts"]), new_rows, [t.id for t in chosen if t.how == "merge"], values)


def unmerge(store: WorkspaceStore, workspace: str, split: Split) -> None:
    """On the writer: carry out ``split`` (``plan_unmerge``), unless the memory's record changed since it was worked
    out.

    Raises:
        InvalidArgument: the memory changed meanwhile (another merge or unmerge): nothing was changed; try again.
    """
    row = current(store, workspace, [split.memory])[split.memory]
    if str(row["merged_texts"]) != split.record:
        raise InvalidArgument(f"Memory {split.memory} changed while it was being split (another write merged into it "
                              "or split it); nothing was changed. Try again.")
    edges = [e for r in split.new_rows for e in mention_edges(str(r["id"]), str(r["content"]), str(r["id"]))]
    store.add_memories(split.new_rows, edges)
    store.update_memory(split.memory, split.values)
    back = [i for i in split.restored
            if store.memories_by_ids([i], ["superseded_by"]).get(i, {}).get("superseded_by") == split.memory]
    store.unsupersede(back, [edge(split.memory, i, "supersedes", split.memory)["id"] for i in back])
    near_index(store).forget(store)


def _cosine(a: Mapping[str, Any], b: Mapping[str, Any]) -> float:
    va, vb = np.asarray(a["vector"], dtype=np.float32), np.asarray(b["vector"], dtype=np.float32)
    norm = float(np.linalg.norm(va) * np.linalg.norm(vb))
    return float(va @ vb) / norm if norm else 0.0

