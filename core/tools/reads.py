"""Row functions of the read tools: validated arguments in, result models out.

Each function's signature *is* its argument contract: the first parameter is the ``Scope`` and the
rest carry their types and clamps (``Annotated[..., Field(...)]``). The MCP server, the CLI and
recall's plan validator derive their argument models from these signatures, so clamps, filters and
workspace scope cannot drift apart.
"""

from __future__ import annotations

from collections import Counter
from typing import Annotated, Literal, TypeVar

import numpy as np
from pydantic import Field

from ..errors import NotFound
from ..retrieval import graph
from ..retrieval.search import CHANNELS, MEMORY_COLUMNS, SearchParams, hybrid_search
from ..store import WorkspaceStore
from ..store.memory_filter import Filters
from ..store.rows import Row
from ..store.schema import ENTITY_PREFIX, MERGE_FIELDS
from . import source_names
from .datetimes import UtcDatetime
from .results import (
    CountedName,
    Fact,
    FactList,
    FileChunks,
    GraphScope,
    Memory,
    MemoryList,
    Neighbor,
    NeighborList,
    SearchHit,
    SearchResult,
    SourceInfo,
    SourceList,
)
from .scope import Scope

M = TypeVar("M", bound=Memory)
MemoryKind = Literal["note", "exchange", "chunk", "content"]
Channel = Literal["semantic", "lexical", "graph"]
#: What ``get_memory`` reads beside ``MEMORY_COLUMNS``: the texts merged into a memory.
MERGE_COLUMNS = tuple(f.name for f in MERGE_FIELDS)
Id = Annotated[str, Field(min_length=1, max_length=64, description="A memory id as printed by another tool.")]
#: Stored tags are 1–50 characters; the length check also refuses text that cannot be encoded (a lone surrogate).
TagName = Annotated[str, Field(min_length=1, max_length=50)]
#: The longest query ``search`` accepts (a recall's question may be longer: see recall/run.py).
QUERY_MAX_CHARS = 2000
#: Line numbers are stored as 32-bit integers; a larger one names no line of any file.
MAX_LINE = 2**31 - 1


def search(
    scope: Scope,
    query: Annotated[str, Field(min_length=1, max_length=QUERY_MAX_CHARS, description="What to look for, in plain words.")],
    limit: Annotated[int | None, Field(ge=1, le=50, description="Results to return (1–50; default search.limit).")] = None,
    project: Annotated[str | None, Field(max_length=100, description="Only this project.")] = None,
    source_prefix: Annotated[str | None, Field(max_length=1000, description="Only sources under this path.")] = None,
    kind: Annotated[MemoryKind | None, Field(description="Only this kind of memory.")] = None,
    type: Annotated[str | None, Field(max_length=50, description="Only this type (e.g. python, markdown, decision).")] = None,
    tags: Annotated[list[TagName] | None, Field(max_length=16, description="Only memories with any of these tags.")] = None,
    since: Annotated[UtcDatetime | None, Field(description="Only memories updated at or after this time.")] = None,
    until: Annotated[UtcDatetime | None, Field(description="Only memories updated at or before this time.")] = None,
    channels: Annotated[list[Channel] | None, Field(min_length=1, max_length=3,
                                                    description="Channels to use (default all three).")] = None,
    history: Annotated[bool, Field(description="Also memories a newer one superseded.")] = False,
    run: str | None = None,
) -> SearchResult:
    """Hybrid (semantic + lexical + graph) search of the workspace's memories."""
    cfg = scope.settings.search
    params = SearchParams(
        limit=limit or cfg.limit, k_per_channel=max(cfg.k_per_channel, limit or cfg.limit),
        weights={"semantic": cfg.weight_semantic, "lexical": cfg.weight_lexical, "graph": cfg.weight_graph},
        rrf_k=cfg.rrf_k, graph_seeds=cfg.graph_seeds, graph_hops=cfg.graph_hops, graph_reverse=cfg.graph_reverse,
        channels=tuple(c for c in CHANNELS if channels is None or c in channels), fusion=cfg.fusion,
        feedback=cfg.feedback,
    )
    prefixes = tuple(source_names.expand_prefix(scope.store, source_prefix)) if source_prefix else ()
    filters = Filters(project=project, source_prefixes=prefixes, kinds=(kind,) if kind else (), type=type,
                      tags=tuple(tags or ()), since=since, until=until, state="any" if history else "current")
    vector, withheld = prepared_vector(scope, run, query) if "semantic" in params.channels else (None, None)
    outcome = hybrid_search(scope.store, scope.embedder_or_none() if "semantic" in params.channels else None,
                            query, filters, params, vector=vector, withheld=withheld)
    hits = _named(scope, [SearchHit.from_row(h.row, score=round(h.score, 6), channels=list(h.channels),
                                             similarity=None if h.similarity is None else round(h.similarity, 4),
                                             possibly_outdated_by=h.outdated_by, outdated_changes=h.outdated_changes)
                          for h in outcome.hits])
    warnings = outcome.warning_lines
    semantic_lost = any(w.channel == "semantic" and w.reason != "withheld" for w in outcome.warnings)
    if semantic_lost and (note := scope.embed_note()):
        warnings.append(note)
    return SearchResult(query=query, hits=hits, warnings=warnings, superseded_matched=outcome.superseded_matched)


def prepared_vector(scope: Scope, run: str | None, query: str) -> tuple[np.ndarray | None, str | None]:
    """(the query's vector prepared under a run budget, or why it was withheld); (None, None) without a budget.

    A recall hands its steps the batch it prepared (``scope.prepared``); a lone search prepares its own.
    """
    prepared = scope.prepared if scope.prepared is not None else scope.prepare_queries(run, [query])
    if prepared is None:
        return None, None
    vector = prepared.vector_for(query)
    if vector is not None:
        return vector, None
    return None, prepared.note or ("semantic preparation withheld (the query's prepared vector expired at the run's "
                                   "deadline); answered from the lexical and graph channels")


def get_memory(
    scope: Scope,
    ids: Annotated[list[Id], Field(min_length=1, max_length=20, description="Memory ids to expand (1–20).")],
) -> MemoryList:
    """Full content of memories by id, with the texts merged into each, what it superseded and what superseded it."""
    found = scope.store.memories_by_ids(ids, [*MEMORY_COLUMNS, *MERGE_COLUMNS])
    missing = [i for i in dict.fromkeys(ids) if i not in found]
    if not found:
        raise NotFound(f"No memory with id {', '.join(missing)} in workspace '{scope.workspace}'. "
                       "Use ids printed by search, neighbors or file_chunks in this workspace.")
    history = {i: _named(scope, [Memory.from_row(r) for r in chain]) for i in found
               if len(chain := supersession_chain(scope.store, found[i])) > 1}
    return MemoryList(items=_named(scope, [Memory.from_row(found[i]) for i in dict.fromkeys(ids) if i in found]),
                      missing=missing, history=history)


def supersession_chain(store: WorkspaceStore, row: Row, *, longest: int = 50) -> list[Row]:
    """The versions of ``row``'s memory, oldest first: those it superseded (following each one back) and those that
    superseded it, at most ``longest``.

    Raises:
        StoreError: the workspace cannot be read.
    """
    before: list[Row] = []
    seen = {row["id"]}
    wave = [row["id"]]
    while wave and len(before) < longest:
        older = [r for r in store.superseded_by_ids(wave, MEMORY_COLUMNS) if r["id"] not in seen]
        seen |= {r["id"] for r in older}
        before = sorted(older, key=lambda r: r["created_at"]) + before
        wave = [r["id"] for r in older]
    after: list[Row] = []
    nxt = row.get("superseded_by")
    while nxt and nxt not in seen and len(after) < longest:
        newer = store.memories_by_ids([nxt], MEMORY_COLUMNS).get(nxt)
        if newer is None:
            break
        seen.add(nxt)
        after.append(newer)
        nxt = newer.get("superseded_by")
    return [*before, row, *after]


def neighbors(
    scope: Scope,
    id: Id,
    hops: Annotated[int, Field(ge=1, le=3, description="How far to walk (1–3).")] = 1,
    reverse: Annotated[bool, Field(description="Also walk edges backwards (previous chunk).")] = False,
    limit: Annotated[int, Field(ge=1, le=50, description="Neighbours to return (1–50).")] = 10,
) -> NeighborList:
    """Memories connected to one memory in the graph: next chunk, same file, shared identifiers."""
    if not scope.store.memories_by_ids([id], ["id"]):
        raise NotFound(f"No memory with id {id} in workspace '{scope.workspace}'.")
    links = graph.walk(scope.store, [id], hops=hops, reverse=reverse)[:limit]
    rows = scope.store.memories_by_ids([link.id for link in links], MEMORY_COLUMNS)
    items = _named(scope, [Neighbor.from_row(rows[link.id], relation=link.relation, via=link.via, hop=link.hop,
                                             score=round(link.score, 6)) for link in links if link.id in rows])
    return NeighborList(origin=id, items=items)


def _source_row(scope: Scope, source: str) -> Row:
    return source_names.resolve(scope.store, scope.workspace, source)


def _named(scope: Scope, memories: list[M]) -> list[M]:
    """The memories with ``path`` set (their source as callers see it)."""
    name = source_names.namer(scope.store)
    for memory in memories:
        memory.path = name(memory.source) if memory.source else ""
    return memories


def file_chunks(
    scope: Scope,
    source: Annotated[str, Field(min_length=1, max_length=2000, description="An ingested source, as printed by search.")],
    start_line: Annotated[int | None, Field(ge=1, le=MAX_LINE,
                                            description="Only chunks ending at or after this line.")] = None,
    end_line: Annotated[int | None, Field(ge=1, le=MAX_LINE,
                                          description="Only chunks starting at or before this line.")] = None,
    limit: Annotated[int, Field(ge=1, le=200, description="Chunks to return (1–200).")] = 50,
) -> FileChunks:
    """The chunks of one ingested file or text, in order, optionally within a line range."""
    row = _source_row(scope, source)
    source = row["source"]
    chunks = sorted(scope.store.chunks_of(source, MEMORY_COLUMNS, from_line=start_line, to_line=end_line),
                    key=lambda r: r["chunk_index"])
    return FileChunks(source=source, path=source_names.display(scope.store, source), total_chunks=row["chunk_count"],
                      items=_named(scope, [Memory.from_row(r) for r in chunks[:limit]]))


def _outline(scope: Scope, source: str) -> list[str]:
    rows = scope.store.chunks_of(source, ["title", "chunk_index"])
    titles = [r["title"] for r in sorted(rows, key=lambda r: r["chunk_index"]) if r["title"]]
    return list(dict.fromkeys(titles))


def file_summary(
    scope: Scope,
    source: Annotated[str, Field(min_length=1, max_length=2000, description="An ingested source, as printed by search.")],
) -> SourceInfo:
    """What one ingested file or text is: its summary, outline, size and chunk count."""
    row = _source_row(scope, source)
    return SourceInfo(**row, path=source_names.display(scope.store, row["source"]), outline=_outline(scope, row["source"]))


def list_sources(
    scope: Scope,
    project: Annotated[str | None, Field(max_length=100, description="Only this project.")] = None,
    prefix: Annotated[str | None, Field(max_length=2000, description="Only sources starting with this.")] = None,
    limit: Annotated[int, Field(ge=1, le=200, description="Sources to return (1–200).")] = 50,
    offset: Annotated[int, Field(ge=0, description="Sources to skip (for paging).")] = 0,
) -> SourceList:
    """Ingested files and texts, sorted by source."""
    prefixes = source_names.expand_prefix(scope.store, prefix) if prefix else []
    rows = sorted(scope.store.source_rows(project=project, prefixes=prefixes), key=lambda r: r["source"])
    items = [SourceInfo(**r, path=source_names.display(scope.store, r["source"])) for r in rows[offset:offset + limit]]
    return SourceList(items=items, total=len(rows), offset=offset)


def kg_query(
    scope: Scope,
    subject: Annotated[str | None, Field(max_length=200, description="Facts about this subject.")] = None,
    predicate: Annotated[str | None, Field(max_length=100, description="Facts with this predicate.")] = None,
    object: Annotated[str | None, Field(max_length=500, description="Facts with this object.")] = None,
    project: Annotated[str | None, Field(max_length=100, description="Only this project.")] = None,
    include_ended: Annotated[bool, Field(description="Also facts that were ended.")] = False,
    limit: Annotated[int, Field(ge=1, le=200, description="Facts to return (1–200).")] = 50,
) -> FactList:
    """Knowledge-graph facts (subject, predicate, object), current ones unless asked otherwise."""
    found = scope.store.facts(subject=subject, predicate=predicate, object=object, project=project,
                              include_ended=include_ended)
    rows = sorted(found, key=lambda r: (r["valid_from"], r["id"]), reverse=True)
    return FactList(items=[Fact(**{k: r[k] for k in Fact.model_fields}) for r in rows[:limit]])


def graph_scope(
    scope: Scope,
    project: Annotated[str | None, Field(max_length=100, description="Only this project.")] = None,
    limit: Annotated[int, Field(ge=1, le=100, description="Entities and predicates to list (1–100).")] = 20,
) -> GraphScope:
    """The shape of the graph: edges per relation, most-mentioned entities, fact predicates."""
    store = scope.store
    if project:
        ids = [r["id"] for r in store.memories(["id"], project=project)]
        edges = store.edges_from(ids)
        memories = len(ids)
    else:
        edges = store.edges()
        memories = store.count_memories()
    relations = Counter(e.relation for e in edges)
    entities = Counter(e.dst[len(ENTITY_PREFIX):] for e in edges if e.relation == "mentions")
    facts = store.facts(project=project, columns=["predicate"])
    predicates = Counter(f["predicate"] for f in facts)

    def as_counts(counts: Counter[str]) -> list[CountedName]:
        return [CountedName(name=n, count=k) for n, k in sorted(counts.items(), key=lambda x: (-x[1], x[0]))]

    return GraphScope(project=project, memories=memories, edges_by_relation=as_counts(relations),
                      top_entities=as_counts(entities)[:limit], predicates=as_counts(predicates)[:limit])
