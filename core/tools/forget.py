"""The ``forget`` tool: many memories at once, chosen by filters, previewed before anything goes.

A call without ``confirm`` changes nothing and says what would go; the same filters with ``confirm`` forget it in
one writer step. Notes and exchanges go one by one; a file's chunk takes its whole file with it (a file is one
source of truth: half of one would be wrong), and the file is kept out of later ingests of its folder as ``delete``
keeps it out; a text ingested under a title goes whole too.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from fnmatch import fnmatchcase
from itertools import zip_longest
from typing import Annotated

from pydantic import Field

from ..errors import InvalidArgument, NotFound
from ..events import MemoriesDeleted
from ..store.memory_filter import Filters
from ..store.rows import Row
from . import source_names
from .datetimes import UtcDatetime
from .reads import QUERY_MAX_CHARS, MemoryKind
from .results import ForgetItem, Forgotten
from .scope import Scope

#: The most matches a ``query`` selects.
MAX_QUERY_MATCHES = 500
#: How near in meaning (cosine similarity of the embeddings) a memory must be to a query to match it without its words.
MEANING_FLOOR = 0.5
#: Memories a preview lists by name (all are counted).
LISTED = 50
_KEPT_KINDS = ("note", "exchange")
_COLUMNS = ["id", "kind", "project", "source", "title", "content", "created_at"]
_GLOB = set("*?[")


def forget(
    scope: Scope,
    query: Annotated[str | None, Field(min_length=1, max_length=QUERY_MAX_CHARS, description=(
        "Memories with these words, or near them in meaning; the best `limit` of them."))] = None,
    limit: Annotated[int, Field(ge=1, le=MAX_QUERY_MATCHES, description="With query: how many of its matches "
                                                                        "(1–500).")] = 50,
    project: Annotated[str | None, Field(min_length=1, max_length=100, description="Only this project.")] = None,
    source: Annotated[str | None, Field(min_length=1, max_length=2000, description=(
        "Only this source: a name as list_sources prints it, its full path, or a glob (docs/old/*, *.log)."))] = None,
    kind: Annotated[MemoryKind | None, Field(description="Only this kind of memory.")] = None,
    since: Annotated[UtcDatetime | None, Field(description="Only memories created at or after this time.")] = None,
    until: Annotated[UtcDatetime | None, Field(description="Only memories created at or before this time.")] = None,
    confirm: Annotated[bool, Field(description=(
        "false (default): change nothing, list what would go. true: forget it."))] = False,
) -> Forgotten:
    """Forget every memory matching all the given filters (at least one); without ``confirm`` only a preview.

    Raises:
        InvalidArgument: no filter given, ``until`` before ``since``, or ``limit`` without ``query``.
    """
    if not any(v is not None for v in (query, project, source, kind, since, until)):
        raise InvalidArgument("Give at least one of 'query', 'project', 'source', 'kind', 'since' or 'until': "
                              "forget never takes a whole workspace at once. Nothing was forgotten.")
    if since is not None and until is not None and until < since:
        raise InvalidArgument(f"'until' ({until:%Y-%m-%d %H:%M}) is before 'since' ({since:%Y-%m-%d %H:%M}); "
                              "nothing can match. Nothing was forgotten.")
    rows = _matching(scope, query=query, limit=limit, project=project, source=source, kind=kind, since=since,
                     until=until)
    plan = _Plan.of(scope, rows)
    result = plan.result(scope.workspace, dry_run=not confirm)
    if confirm and (plan.memory_ids or plan.sources):
        def forget_all() -> None:
            scope.store.delete_memories(plan.memory_ids)
            scope.store.delete_sources([s["source"] for s in plan.sources],
                                       [s for s in plan.sources if s["kind"] == "file"])

        scope.writer.run(forget_all)
        scope.emit(MemoriesDeleted(scope.workspace, result.count))
    return result


def _matching(scope: Scope, *, query: str | None, limit: int, project: str | None, source: str | None,
              kind: str | None, since: datetime | None, until: datetime | None) -> list[Row]:
    """The memories every given filter matches (any state: superseded ones too)."""
    store = scope.store
    kinds = (kind,) if kind else ()
    names: set[str] | None = None
    if source is not None:
        names = _sources_named(scope, source)
        if not names:
            return []
    if query is not None:
        rows = list(store.memories_by_ids(_query_matches(scope, query, limit, Filters(project=project, kinds=kinds)),
                                          _COLUMNS).values())
    else:
        rows = store.memories(_COLUMNS, project=project, kinds=kinds, sources=sorted(names or ()))
    return [r for r in rows
            if (names is None or r["source"] in names)
            and (since is None or r["created_at"] >= since) and (until is None or r["created_at"] <= until)]


def _query_matches(scope: Scope, query: str, limit: int, filters: Filters) -> list[str]:
    """The ids of the ``limit`` best memories for ``query``: those full-text search finds for its words, and those
    whose meaning is near it (cosine similarity at least ``MEANING_FLOOR``), alternately in the two rankings' order.
    Unlike search, nothing is taken for being the nearest of what is left, nor for a link alone.

    Raises:
        ModelError: the embedding model cannot embed the query (the words alone are then not used either).
    """
    store = scope.store
    by_words = [str(r["id"]) for r in store.text_search(query, limit, filters, ["id"])]
    by_meaning: list[str] = []
    embedder = scope.embedder_or_none()
    if embedder is not None:
        vector = embedder.embed([query])[0]
        by_meaning = [str(r["id"]) for r in store.vector_search(vector, limit, filters, ["id"])
                      if 1.0 - float(r["_distance"]) >= MEANING_FLOOR]
    merged: dict[str, None] = {}
    for pair in zip_longest(by_words, by_meaning):
        merged.update((i, None) for i in pair if i is not None)
    return list(merged)[:limit]


def _sources_named(scope: Scope, given: str) -> set[str]:
    """The stored sources ``given`` names: one (an exact or root-relative name) or, for a glob, every source whose
    full path or shown name matches it. Notes and exchanges have sources too (an editor's session, an import)."""
    store = scope.store
    if not _GLOB & set(given):
        try:
            return {source_names.resolve(store, scope.workspace, given)["source"]}
        except NotFound:  # no ingested source has that name; a note's or an exchange's source may
            return {given} if store.memories(["id"], sources=[given]) else set()
    shown = source_names.namer(store)
    every = {r["source"] for r in store.memories(["source"])}
    return {s for s in every if s and (fnmatchcase(s, given) or fnmatchcase(shown(s), given))}


class _Plan:
    """What a set of matched memories means to forget: notes and exchanges by id, the sources of chunks whole."""

    def __init__(self, memories: list[Row], sources: list[Row], chunks: dict[str, int], shown: dict[str, str]) -> None:
        self.memories = memories
        self.memory_ids = [str(m["id"]) for m in memories]
        self.sources = sources
        self.chunks = chunks
        self.shown = shown

    @classmethod
    def of(cls, scope: Scope, rows: list[Row]) -> _Plan:
        kept = sorted((r for r in rows if r["kind"] in _KEPT_KINDS), key=lambda r: (r["created_at"], r["id"]))
        wanted = sorted({str(r["source"]) for r in rows if r["kind"] not in _KEPT_KINDS})
        found = {str(r["source"]): r for r in scope.store.source_rows(prefixes=wanted)} if wanted else {}
        sources = [found[name] for name in wanted if name in found]  # one read, not one per file
        namer = source_names.namer(scope.store)
        return cls(kept, sources, {s["source"]: int(s["chunk_count"]) for s in sources},
                   {s["source"]: namer(s["source"]) for s in sources})

    def result(self, workspace: str, *, dry_run: bool) -> Forgotten:
        by_kind = Counter(str(m["kind"]) for m in self.memories)
        by_project = Counter(str(m["project"]) for m in self.memories)
        for s in self.sources:
            by_kind["chunk" if s["kind"] == "file" else "content"] += self.chunks[s["source"]]
            by_project[str(s["project"])] += self.chunks[s["source"]]
        items = [ForgetItem(id=str(m["id"]), kind=str(m["kind"]), project=str(m["project"]),
                            title=_title(m), created_at=m["created_at"]) for m in self.memories[:LISTED]]
        return Forgotten(workspace=workspace, dry_run=dry_run, count=sum(by_kind.values()),
                         memories=len(self.memories), by_kind=dict(by_kind.most_common()),
                         by_project=dict(by_project.most_common()), listed=items,
                         files=[self.shown[s["source"]] for s in self.sources],
                         file_chunks=[self.chunks[s["source"]] for s in self.sources],
                         kept_out=sum(1 for s in self.sources if s["kind"] == "file"))


def _title(row: Row) -> str:
    text = str(row["title"] or "").strip() or " ".join(str(row["content"]).split())
    return text if len(text) <= 80 else text[:79] + "…"
