"""Hybrid search: semantic, lexical and graph channels fused by weighted RRF, then hydrated.

A channel that cannot run (no embedder, a store error) becomes a warning in the outcome; the other
channels still answer.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

import numpy as np

from ..embedding import Embedder
from ..errors import EngramError
from ..store import WorkspaceStore
from ..store import filters as sql
from ..store.bucket_errors import WHOLE_WORKSPACE
from .fusion import fuse
from .graph import walk

logger = logging.getLogger(__name__)

CHANNELS = ("semantic", "lexical", "graph")
#: Every memory column except the vector: what search results carry.
MEMORY_COLUMNS = ("id", "project", "source", "kind", "type", "tags", "title", "content", "created_at", "updated_at",
                  "content_hash", "chunk_index", "start_line", "end_line")


@dataclass(frozen=True)
class Filters:
    """Restrictions every channel applies. Empty fields restrict nothing."""

    project: str | None = None
    source_prefixes: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    type: str | None = None
    tags: tuple[str, ...] = ()
    since: datetime | None = None
    until: datetime | None = None
    ids: list[str] | None = None  # only these memories (None: no restriction)

    def where(self) -> str | None:
        tags = None
        if self.tags:
            tags = "array_has_any(tags, [" + ", ".join(sql.quote(t) for t in self.tags) + "])"
        return sql.all_of(
            f"project = {sql.quote(self.project)}" if self.project else None,
            " OR ".join(f"({sql.prefix('source', p)})" for p in self.source_prefixes) if self.source_prefixes else None,
            sql.in_list("kind", self.kinds) if self.kinds else None,
            sql.in_list("id", self.ids) if self.ids is not None else None,
            f"type = {sql.quote(self.type)}" if self.type else None,
            tags,
            f"updated_at >= {sql.timestamp(self.since)}" if self.since else None,
            f"updated_at <= {sql.timestamp(self.until)}" if self.until else None,
        )


@dataclass(frozen=True)
class SearchParams:
    limit: int
    k_per_channel: int = 24
    weights: dict[str, float] = field(default_factory=lambda: {"semantic": 1.0, "lexical": 1.0, "graph": 0.1})
    rrf_k: int = 60
    graph_seeds: int = 8
    graph_hops: int = 1
    graph_reverse: bool = False
    channels: tuple[str, ...] = CHANNELS
    exact: bool = False  # scan every vector instead of using the vector index (benchmarks compare both)


@dataclass(frozen=True)
class Hit:
    row: dict[str, Any]
    score: float
    ranks: dict[str, int]

    @property
    def channels(self) -> tuple[str, ...]:
        return tuple(c for c in CHANNELS if c in self.ranks)


@dataclass(frozen=True)
class ChannelWarning:
    """A channel that was left out or failed: which one, why (``withheld`` by a run budget, ``unavailable``
    without a model, ``failed``), and the line the caller is shown."""

    channel: str
    reason: Literal["withheld", "unavailable", "failed"]
    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class SearchOutcome:
    hits: list[Hit]
    warnings: list[ChannelWarning]

    @property
    def warning_lines(self) -> list[str]:
        return [w.text for w in self.warnings]


def hybrid_search(store: WorkspaceStore, embedder: Embedder | None, query: str, filters: Filters,
                  params: SearchParams, *, vector: np.ndarray | None = None,
                  withheld: str | None = None) -> SearchOutcome:
    """The ``params.limit`` best memories for ``query`` in ``store``, fused across channels.

    ``vector`` is the query's prepared vector (then ``embedder`` is not called); ``withheld`` keeps
    the semantic channel out and becomes a warning (a run budget withheld the preparation).
    Never raises for a failing channel: its failure is reported in ``warnings``.

    Raises:
        BucketUnreachable (or another of ``WHOLE_WORKSPACE``): a shared workspace's storage failed as a whole.
    """
    where = filters.where()
    warnings: list[ChannelWarning] = []
    rows: dict[str, dict[str, Any]] = {}
    rankings: dict[str, list[str]] = {}

    if "semantic" in params.channels and withheld is not None:
        warnings.append(ChannelWarning("semantic", "withheld", withheld))
    elif "semantic" in params.channels and vector is None and embedder is None:
        warnings.append(ChannelWarning("semantic", "unavailable",
                                       "semantic channel unavailable: no embedding model is loaded"))
    elif "semantic" in params.channels:
        try:
            if vector is None:
                assert embedder is not None  # the branch above took a query with neither
                vector = embedder.embed([query])[0]
            found = store.vector_search(vector, params.k_per_channel, where, MEMORY_COLUMNS, exact=params.exact)
            rankings["semantic"] = [r["id"] for r in found]
            rows.update({r["id"]: r for r in found})
        except WHOLE_WORKSPACE:
            raise
        except EngramError as exc:
            warnings.append(ChannelWarning("semantic", "failed", f"semantic channel failed: {exc.message}"))
    if "lexical" in params.channels:
        try:
            found = store.text_search(query, params.k_per_channel, where, MEMORY_COLUMNS)
            rankings["lexical"] = [r["id"] for r in found]
            for r in found:
                rows.setdefault(r["id"], r)
        except WHOLE_WORKSPACE:
            raise
        except EngramError as exc:
            warnings.append(ChannelWarning("lexical", "failed", f"lexical channel failed: {exc.message}"))
    if "graph" in params.channels and params.graph_seeds > 0:
        seeds = [f.id for f in fuse(rankings, params.weights, params.rrf_k)[: params.graph_seeds]]
        try:
            links = walk(store, seeds, hops=params.graph_hops, reverse=params.graph_reverse)
            linked = [link.id for link in links[: params.k_per_channel * 2]]
            if where:
                # Only memories that pass the filters count; their ids suffice to rank them.
                unseen = [i for i in linked if i not in rows]
                allowed = {r["id"] for r in store.scan(store.memories, sql.all_of(sql.in_list("id", unseen), where),
                                                       ["id"], limit=len(unseen))} if unseen else set()
                linked = [i for i in linked if i in rows or i in allowed]
            rankings["graph"] = linked[: params.k_per_channel]
        except WHOLE_WORKSPACE:
            raise
        except EngramError as exc:
            warnings.append(ChannelWarning("graph", "failed", f"graph channel failed: {exc.message}"))

    fused = fuse(rankings, params.weights, params.rrf_k)[: params.limit]
    missing = [f.id for f in fused if f.id not in rows]
    if missing:
        # Rows reached only through the graph are read once they made the cut.
        try:
            rows.update(store.memories_by_ids(missing, MEMORY_COLUMNS))
        except WHOLE_WORKSPACE:
            raise
        except EngramError as exc:
            warnings.append(ChannelWarning("graph", "failed", f"graph channel failed: {exc.message}"))
    hits = [Hit(_clean(rows[f.id]), f.score, f.ranks) for f in fused if f.id in rows]
    return SearchOutcome(hits, warnings)


def _clean(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if not k.startswith("_")}
