"""Context packs: retrieval results packed greedily under a token budget, at a chosen altitude.

``altitude``:
- ``entity``: the retrieved rows themselves, best first;
- ``scope``: the digests of the projects the retrieved rows belong to;
- ``workspace``: the workspace digest;
- ``auto`` (default): the rows if the top rows (as many as a search returns) fit; else the source and
  entity digests that cover those rows, if they fit; else the scope digests, if they fit; else the
  workspace digest.
Packing is greedy in rank order and stops at the first item that would overflow; the rest are
counted in ``omitted``. A digest and a row it covers never share a pack.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Annotated, Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from ..retrieval.search import SearchParams, hybrid_search
from ..store.memory_filter import Filters
from ..store.schema import ENTITY_PREFIX
from ..tools.datetimes import UtcDatetime
from ..tools.reads import prepared_vector
from ..tools.scope import Scope
from .digests import digest_id, ensure_digests

Altitude = Literal["auto", "entity", "scope", "workspace"]


class Tokenizer(Protocol):
    name: str

    def count(self, text: str) -> int: ...


class ByteTokenizer:
    """The default estimate: one token per four bytes of UTF-8, rounded up."""

    name = "bytes/4"

    def count(self, text: str) -> int:
        return math.ceil(len(text.encode("utf-8")) / 4)


class ModelTokenizer:
    """A loaded model's own tokenizer (``count_tokens``)."""

    def __init__(self, name: str, count_tokens: Callable[[str], int]) -> None:
        self.name = name
        self._count = count_tokens

    def count(self, text: str) -> int:
        return self._count(text)


class PackFilters(BaseModel):
    model_config = ConfigDict(extra="forbid")

    project: str | None = None
    source_prefix: str | None = None
    type: str | None = None
    tags: list[str] | None = None
    since: UtcDatetime | None = None
    until: UtcDatetime | None = None


class PackRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: Annotated[str, Field(min_length=1, max_length=4000)]
    budget_tokens: Annotated[int, Field(ge=0, le=1_000_000)]
    kinds: list[Literal["note", "exchange", "chunk", "content"]] | None = None
    entities: Annotated[list[str] | None, Field(max_length=32)] = None
    k: Annotated[int, Field(ge=1, le=200)] = 24
    hops: Annotated[int, Field(ge=1, le=3)] = 1
    filters: PackFilters = Field(default_factory=PackFilters)
    graph_reverse: bool = False
    #: Also memories a newer one superseded (else they are left out and counted).
    history: bool = False
    graph_seeds: Annotated[int, Field(ge=0, le=64)] = 8
    altitude: Altitude = "auto"
    #: The run whose semantic-preparation allowance this retrieval spends (``recall.run_budget``).
    run: Annotated[str | None, Field(min_length=1, max_length=200)] = None


class PackItem(BaseModel):
    kind: Literal["memory", "digest"]
    id: str
    row: dict[str, Any]
    score: float
    sources: list[str]
    tokens: int


class ContextPack(BaseModel):
    items: list[PackItem]
    omitted: int
    tokens: int
    warnings: list[str]
    altitude: str
    tokenizer: str
    #: Superseded memories that matched and were left out (``history`` shows them).
    superseded_matched: int = 0


def item_text(item: PackItem) -> str:
    """The text an item costs: its heading and content."""
    title = item.row.get("title") or ""
    return f"{title}\n{item.row['content']}" if title else item.row["content"]


def covers(digest: dict[str, Any], memory: dict[str, Any], mentioned: dict[str, set[str]]) -> bool:
    """Whether ``digest`` summarises ``memory`` (see core/recall/digests.py)."""
    level = digest["level"]
    if level == "workspace":
        return True
    if level == "scope":
        return bool(memory["project"] == digest["key"])
    if level == "source":
        return bool(memory["source"] == digest["key"])
    return memory["id"] in mentioned.get(digest["key"], set())


def greedy(candidates: list[PackItem], budget: int, tokenizer: Tokenizer) -> tuple[list[PackItem], int, int]:
    """(packed, omitted, tokens): items in order until the first that would overflow ``budget``."""
    packed: list[PackItem] = []
    used = 0
    for i, item in enumerate(candidates):
        cost = tokenizer.count(item_text(item))
        if used + cost > budget:
            return packed, len(candidates) - i, used
        packed.append(item.model_copy(update={"tokens": cost}))
        used += cost
    return packed, 0, used


def _fits(items: list[PackItem], budget: int, tokenizer: Tokenizer) -> bool:
    return bool(items) and sum(tokenizer.count(item_text(i)) for i in items) <= budget


def _digest_items(scope: Scope, ids: list[str]) -> list[PackItem]:
    if not ids:
        return []
    rows = scope.store.digests_by_ids(ids)
    return [PackItem(kind="digest", id=i, row=rows[i], score=0.0, sources=["digest"], tokens=0) for i in ids if i in rows]


def context_pack(scope: Scope, request: PackRequest, tokenizer: Tokenizer | None = None) -> ContextPack:
    """Retrieve for ``request.query`` and pack the result under ``request.budget_tokens``.

    Raises:
        StoreError: the store cannot be read (a failing channel is a warning instead).
    """
    tokenizer = tokenizer or ByteTokenizer()
    cfg = scope.settings.search
    warnings: list[str] = []
    f = request.filters
    where_ids: list[str] | None = None
    mentioned: dict[str, set[str]] = {}
    if request.entities:
        names = [e.lower() for e in request.entities]
        edges = scope.store.edges_to([ENTITY_PREFIX + n for n in names], ["mentions"])
        for e in edges:
            mentioned.setdefault(e.dst[len(ENTITY_PREFIX):], set()).add(e.src)
        where_ids = sorted({e.src for e in edges})
        if not where_ids:
            warnings.append(f"no memory mentions {', '.join(request.entities)}")
    filters = Filters(project=f.project, source_prefixes=(f.source_prefix,) if f.source_prefix else (),
                      kinds=tuple(request.kinds or ()),
                      type=f.type, tags=tuple(f.tags or ()), since=f.since, until=f.until, ids=where_ids,
                      state="any" if request.history else "current")
    params = SearchParams(limit=request.k * 3, k_per_channel=request.k, rrf_k=cfg.rrf_k,
                          weights={"semantic": cfg.weight_semantic, "lexical": cfg.weight_lexical,
                                   "graph": cfg.weight_graph},
                          graph_seeds=request.graph_seeds, graph_hops=request.hops, graph_reverse=request.graph_reverse,
                          fusion=cfg.fusion, feedback=cfg.feedback)
    vector, withheld = prepared_vector(scope, request.run, request.query)
    outcome = hybrid_search(scope.store, scope.embedder_or_none(), request.query, filters, params, vector=vector,
                            withheld=withheld)
    warnings += outcome.warning_lines
    rows = [PackItem(kind="memory", id=h.row["id"], row=_marked(h.row, h.outdated_by, h.outdated_changes),
                     score=round(h.score, 6), sources=list(h.channels), tokens=0) for h in outcome.hits]
    top = rows[: cfg.limit]

    levels: dict[str, Callable[[], list[PackItem]]] = {"entity": lambda: rows}
    if request.altitude in ("auto", "scope", "workspace"):
        ensure_digests(scope)
        levels["entity-digests"] = lambda: _digest_items(scope, list(dict.fromkeys(
            digest_id("source", r.row["source"]) if r.row["source"] else digest_id("scope", r.row["project"])
            for r in top)))
        levels["scope"] = lambda: _digest_items(scope, list(dict.fromkeys(
            digest_id("scope", r.row["project"]) for r in top)) or [])
        levels["workspace"] = lambda: _digest_items(scope, [digest_id("workspace", scope.store.name)])

    chosen: str = request.altitude
    if request.altitude == "auto":
        chosen = "workspace"
        for level in ("entity", "entity-digests", "scope"):
            candidates = levels[level]()
            if _fits(candidates if level != "entity" else top, request.budget_tokens, tokenizer):
                chosen = level
                break
    candidates = levels[chosen]()
    packed, omitted, used = greedy(candidates, request.budget_tokens, tokenizer)
    _check_no_digest_beside_covered_row(packed, mentioned)
    return ContextPack(items=packed, omitted=omitted, tokens=used, warnings=warnings,
                       altitude=chosen, tokenizer=tokenizer.name, superseded_matched=outcome.superseded_matched)


def _marked(row: dict[str, Any], outdated_by: str | None, changes: str) -> dict[str, Any]:
    """A memory's row as a pack carries it: with the newer note that may update it (shown right before it), if any."""
    return {**row, "possibly_outdated_by": outdated_by, "outdated_changes": changes} if outdated_by else row


def _check_no_digest_beside_covered_row(items: list[PackItem], mentioned: dict[str, set[str]]) -> None:
    digests = [i.row for i in items if i.kind == "digest"]
    memories = [i.row for i in items if i.kind == "memory"]
    clash = [(d["id"], m["id"]) for d in digests for m in memories if covers(d, m, mentioned)]
    if clash:
        raise AssertionError(f"a digest and a row it covers share a pack: {clash[:3]}")
