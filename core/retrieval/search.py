"""Hybrid search: semantic, lexical and graph channels fused by weighted RRF, then hydrated.

A channel that cannot run (no embedder, a store error) becomes a warning in the outcome; the other
channels still answer.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from ..embedding import Embedder
from ..errors import EngramError
from ..store import WorkspaceStore
from ..store.bucket_errors import WHOLE_WORKSPACE
from ..store.memory_filter import Filters
from ..store.rows import Row
from .fusion import Fused, fuse, fuse_scores
from .graph import walk
from .speakers import named_speakers_first, without_speakers
from .updates import newer_first

logger = logging.getLogger(__name__)

CHANNELS = ("semantic", "lexical", "graph")
#: Every memory column except the vector: what search results carry.
MEMORY_COLUMNS = ("id", "project", "source", "kind", "type", "tags", "title", "content", "created_at", "updated_at",
                  "content_hash", "chunk_index", "start_line", "end_line", "seen_count", "last_seen", "valid_to",
                  "superseded_by")


#: Candidates each channel gives the convex fusion (scores need a channel's longer tail to scale against).
CONVEX_DEPTH = 100
#: With ``fusion = "auto"``, the convex fusion ranks candidates of which at least this share are exchanges.
CONVEX_EXCHANGE_SHARE = 0.5
#: Dense pseudo-relevance feedback: the query's vector moves towards the mean of the best fused results' vectors.
FEEDBACK_DOCS = 5
FEEDBACK_WEIGHT = 0.5


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
    #: ``auto``: convex for conversation exchanges, RRF for everything else (see ``hybrid_search``).
    fusion: Literal["auto", "convex", "rrf"] = "auto"
    feedback: bool = True  # with the convex fusion, search again from the query moved towards the best results


@dataclass(frozen=True)
class Hit:
    row: dict[str, Any]
    score: float
    ranks: dict[str, int]
    #: The cosine similarity of the memory to the query, when the semantic channel read it (an absolute measure
    #: of closeness, where the fused score is relative to the other candidates).
    similarity: float | None = None
    #: A newer note that may update this one (shown right before it), and the details that differ.
    outdated_by: str | None = None
    outdated_changes: str = ""

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
    #: Superseded memories left out (``Filters.state`` current) that a channel ranked among the first ``limit``.
    superseded_matched: int = 0

    @property
    def warning_lines(self) -> list[str]:
        return [w.text for w in self.warnings]


def hybrid_search(store: WorkspaceStore, embedder: Embedder | None, query: str, filters: Filters,
                  params: SearchParams, *, vector: np.ndarray | None = None,
                  withheld: str | None = None) -> SearchOutcome:
    """The ``params.limit`` best memories for ``query`` in ``store``, fused across channels.

    The semantic and lexical channels each give their best candidates. They are fused by ``params.fusion``:
    ``auto`` (the default) fuses by scores (``fuse_scores``) when at least half the candidates are conversation
    exchanges and by ranks (RRF) otherwise, as measured best for each (benchmark/RESULTS.md: LoCoMo conversations
    gain from scores; code, documentation and abstracts do not). With the scores fusion and ``params.feedback``, the
    semantic channel searches again from the query's vector moved towards the vectors of the best fused
    candidates. The graph channel walks from the best fused candidates. Exchanges of a speaker the query names
    come first (``speakers``). ``vector`` is the query's prepared vector (then ``embedder`` is not
    called); ``withheld`` keeps the semantic channel out and becomes a warning (a run budget withheld the
    preparation). Never raises for a failing channel: its failure is reported in ``warnings``.

    Raises:
        BucketUnreachable (or another of ``WHOLE_WORKSPACE``): a shared workspace's storage failed as a whole.
    """
    if filters.state == "current" and not _holds_superseded(store):
        filters = replace(filters, state="any")  # nothing to leave out: the plain query
    where = filters if filters.restricts else None
    warnings: list[ChannelWarning] = []
    rows: dict[str, Row] = {}

    # "auto" reads the convex fusion's longer tail only where it may fuse by scores: a workspace with exchanges.
    deep = params.fusion == "convex" or (params.fusion == "auto" and _holds_exchanges(store))
    depth = max(params.k_per_channel, CONVEX_DEPTH) if deep else params.k_per_channel
    meaning = query  # what the semantic channel embeds
    lexical: list[Row] | None = None
    lexical_read = False  # the lexical channel already read (``lexical``; None when it failed)
    if "semantic" in params.channels and withheld is not None:
        warnings.append(ChannelWarning("semantic", "withheld", withheld))
    elif "semantic" in params.channels and vector is None and embedder is None:
        warnings.append(ChannelWarning("semantic", "unavailable",
                                       "semantic channel unavailable: no embedding model is loaded"))
    elif "semantic" in params.channels and vector is None:
        assert embedder is not None  # the branch above took a query with neither
        if deep and "lexical" in params.channels:
            # Among conversations, the words first: the speakers they name are left out of what is embedded.
            lexical, lexical_read = _lexical(store, query, where, depth, rows, warnings), True
            meaning = without_speakers(query, lexical or [])
        try:
            vector = embedder.embed([meaning])[0]
        except EngramError as exc:
            warnings.append(ChannelWarning("semantic", "failed", f"semantic channel failed: {exc.message}"))
    semantic = vector if "semantic" in params.channels and withheld is None else None
    # The feedback reads the best candidates' vectors: the semantic channel brings its candidates' along (free in
    # the same query); only lexical-only candidates need a read of their own.
    scored = _candidates(store, query, semantic, where, params, depth, rows, warnings,
                         with_vectors=deep and params.feedback, lexical=lexical, lexical_read=lexical_read)
    convex = _by_scores(params, scored, rows)
    fused = _fuse(scored, params, convex, rows)
    similar = dict(scored.get("semantic", []))  # to the query itself (the feedback below moves it)
    if convex and params.feedback and semantic is not None and "semantic" in scored and fused:
        try:
            moved = _moved_towards(store, semantic, [f.id for f in fused[:FEEDBACK_DOCS]], rows)
            if moved is not None:
                scored["semantic"] = _nearest(store, moved, where, depth, params.exact, rows)
                fused = _fuse(scored, params, convex, rows)
        except WHOLE_WORKSPACE:
            raise
        except EngramError as exc:  # the first semantic ranking stands
            warnings.append(ChannelWarning("semantic", "failed", f"semantic feedback failed: {exc.message}"))
    if "graph" in params.channels and params.graph_seeds > 0:
        seeds = [f.id for f in fused[: params.graph_seeds]]
        try:
            links = walk(store, seeds, hops=params.graph_hops, reverse=params.graph_reverse)
            linked = [(link.id, link.score) for link in links[: depth * 2]]
            if where:
                # Only memories that pass the filters count; their ids suffice to rank them.
                unseen = [i for i, _ in linked if i not in rows]
                allowed = store.memory_ids_matching(unseen, where)
                linked = [(i, s) for i, s in linked if i in rows or i in allowed]
            scored["graph"] = linked[: depth]
            fused = _fuse(scored, params, convex, rows)
        except WHOLE_WORKSPACE:
            raise
        except EngramError as exc:
            warnings.append(ChannelWarning("graph", "failed", f"graph channel failed: {exc.message}"))

    by_id = {f.id: f for f in fused}
    order = named_speakers_first(query, list(by_id), rows)[: params.limit]
    missing = [i for i in order if i not in rows]
    if missing:
        # Rows reached only through the graph are read once they made the cut.
        try:
            rows.update(store.memories_by_ids(missing, MEMORY_COLUMNS))
        except WHOLE_WORKSPACE:
            raise
        except EngramError as exc:
            warnings.append(ChannelWarning("graph", "failed", f"graph channel failed: {exc.message}"))
    if semantic is not None and any(i not in similar for i in order):
        similar.update(_similarities(store, semantic, [i for i in order if i not in similar], rows))
    hits = [Hit(_clean(rows[i]), by_id[i].score, by_id[i].ranks, similar.get(i)) for i in order if i in rows]
    try:
        hits = newer_first(store, hits, filters if filters.restricts else None,
                           lambda ids: store.memories_by_ids(ids, MEMORY_COLUMNS),
                           lambda row, older: Hit(_clean(row), older.score, {}, None))
    except WHOLE_WORKSPACE:
        raise
    except EngramError as exc:
        warnings.append(ChannelWarning("graph", "failed", f"possible updates could not be read: {exc.message}"))
    left_out = 0
    if filters.state == "current":
        left_out = _superseded_matches(store, query, semantic, filters, params, scored, warnings)
    return SearchOutcome(hits, warnings, left_out)


def _holds_superseded(store: WorkspaceStore) -> bool:
    try:
        return store.count_superseded() > 0
    except WHOLE_WORKSPACE:
        raise
    except EngramError:  # the channels will say what failed; search without the restriction meanwhile
        return False


def _superseded_matches(store: WorkspaceStore, query: str, vector: np.ndarray | None, filters: Filters,
                        params: SearchParams, scored: dict[str, list[tuple[str, float]]],
                        warnings: list[ChannelWarning]) -> int:
    """How many superseded memories (passing the other ``filters``) the semantic or lexical channel would have
    ranked among its first ``params.limit`` candidates: those scoring at least the ``limit``-th current one."""
    history = replace(filters, state="superseded")
    matched: set[str] = set()
    try:
        if vector is not None and "semantic" in scored:
            bar = _bar([s for _, s in scored["semantic"]], params.limit)
            found = store.vector_search(vector, params.limit, history, ["id"], exact=params.exact)
            matched |= {r["id"] for r in found if 1.0 - float(r["_distance"]) >= bar}
        if "lexical" in scored:
            bar = _bar([s for _, s in scored["lexical"]], params.limit)
            found = store.text_search(query, params.limit, history, ["id"])
            matched |= {r["id"] for r in found if float(r["_score"]) >= bar}
    except WHOLE_WORKSPACE:
        raise
    except EngramError as exc:
        warnings.append(ChannelWarning("semantic", "failed", f"counting superseded matches failed: {exc.message}"))
    return len(matched)


def _bar(scores: list[float], limit: int) -> float:
    """The score a candidate needs to rank among the first ``limit`` of ``scores`` (best first): the ``limit``-th,
    or any score when fewer were found."""
    return scores[limit - 1] if len(scores) >= limit else float("-inf")


def _candidates(store: WorkspaceStore, query: str, vector: np.ndarray | None, where: Filters | None,
                params: SearchParams, depth: int, rows: dict[str, Row], warnings: list[ChannelWarning], *,
                with_vectors: bool = False, lexical: list[Row] | None = None,
                lexical_read: bool = False) -> dict[str, list[tuple[str, float]]]:
    """The semantic (when ``vector`` is given) and lexical channels' ``depth`` best candidates as (id, score); their
    rows go into ``rows`` (the semantic ones with their ``vector`` when ``with_vectors``), a failing channel's reason
    into ``warnings``. With ``lexical_read``, ``lexical`` is the lexical channel's rows read already by ``_lexical``
    (``None``: it failed, and said so once)."""
    scored: dict[str, list[tuple[str, float]]] = {}
    if vector is not None:
        try:
            scored["semantic"] = _nearest(store, vector, where, depth, params.exact, rows, with_vectors=with_vectors)
        except WHOLE_WORKSPACE:
            raise
        except EngramError as exc:
            warnings.append(ChannelWarning("semantic", "failed", f"semantic channel failed: {exc.message}"))
    if "lexical" in params.channels:
        found = lexical if lexical_read else _lexical(store, query, where, depth, rows, warnings)
        if found is not None:
            scored["lexical"] = [(r["id"], float(r["_score"])) for r in found]
    return scored


def _lexical(store: WorkspaceStore, query: str, where: Filters | None, depth: int, rows: dict[str, Row],
             warnings: list[ChannelWarning]) -> list[Row] | None:
    """The lexical channel's ``depth`` best rows (into ``rows`` too); ``None`` when it failed (said in
    ``warnings``)."""
    try:
        found = store.text_search(query, depth, where, MEMORY_COLUMNS)
    except WHOLE_WORKSPACE:
        raise
    except EngramError as exc:
        warnings.append(ChannelWarning("lexical", "failed", f"lexical channel failed: {exc.message}"))
        return None
    for r in found:
        rows.setdefault(r["id"], r)
    return found


def _nearest(store: WorkspaceStore, vector: np.ndarray, where: Filters | None, depth: int, exact: bool,
             rows: dict[str, Row], *, with_vectors: bool = False) -> list[tuple[str, float]]:
    """The semantic channel's candidates as (id, cosine similarity); their rows go into ``rows``."""
    columns = [*MEMORY_COLUMNS, "vector"] if with_vectors else MEMORY_COLUMNS
    found = store.vector_search(vector, depth, where, columns, exact=exact)
    for r in found:
        rows.setdefault(r["id"], r)
    return [(r["id"], 1.0 - float(r["_distance"])) for r in found]


def _similarities(store: WorkspaceStore, vector: np.ndarray, ids: list[str],
                  rows: dict[str, Row]) -> dict[str, float]:
    """The cosine similarity to the query of hits the semantic channel did not read (found by words or links):
    their vectors are read (one small query) so that every hit says how close it is."""
    try:
        found = {i: rows[i]["vector"] for i in ids if i in rows and rows[i].get("vector") is not None}
        missing = [i for i in ids if i not in found]
        if missing:
            found.update({i: r["vector"] for i, r in store.memories_by_ids(missing, ["vector"]).items()})
    except WHOLE_WORKSPACE:
        raise
    except EngramError:
        return {}  # closeness is a hint: the hits stand without it
    unit = np.asarray(vector, dtype=np.float32).reshape(-1)
    unit = unit / (float(np.linalg.norm(unit)) or 1.0)
    out = {}
    for i, v in found.items():
        stored = np.asarray(v, dtype=np.float32)
        norm = float(np.linalg.norm(stored))
        out[i] = float(stored @ unit / norm) if norm else 0.0
    return out


def _moved_towards(store: WorkspaceStore, vector: np.ndarray, ids: list[str],
                   rows: dict[str, Row]) -> np.ndarray | None:
    """The query's vector moved towards the mean of the vectors of ``ids`` (dense pseudo-relevance feedback); the
    vectors come from ``rows`` where they hold them, else from the store."""
    found = {i: rows[i]["vector"] for i in ids if i in rows and rows[i].get("vector") is not None}
    missing = [i for i in ids if i not in found]
    if missing:
        found.update({i: r["vector"] for i, r in store.memories_by_ids(missing, ["vector"]).items()})
    if not found:
        return None
    mean = np.mean(np.asarray([found[i] for i in ids if i in found], dtype=np.float32), axis=0)
    norm = float(np.linalg.norm(mean))
    if norm == 0.0:
        return None
    moved: np.ndarray = np.asarray(vector, dtype=np.float32) + FEEDBACK_WEIGHT * (mean / norm)
    return moved / float(np.linalg.norm(moved) or 1.0)


def _holds_exchanges(store: WorkspaceStore) -> bool:
    try:
        return store.holds_exchanges()
    except WHOLE_WORKSPACE:
        raise
    except EngramError:  # the channels will say what failed; search at RRF's depth meanwhile
        return False


def _by_scores(params: SearchParams, scored: dict[str, list[tuple[str, float]]],
               rows: dict[str, Row]) -> bool:
    """Whether the channels' candidates are fused by their scores (else by their ranks)."""
    if params.fusion != "auto":
        return params.fusion == "convex"
    kinds = [rows[i]["kind"] for items in scored.values() for i, _ in items if i in rows]
    return bool(kinds) and sum(k == "exchange" for k in kinds) >= CONVEX_EXCHANGE_SHARE * len(kinds)


def _fuse(scored: dict[str, list[tuple[str, float]]], params: SearchParams, convex: bool,
          rows: dict[str, Row]) -> list[Fused]:
    if convex:
        return fuse_scores(scored, params.weights)
    rankings = {c: [i for i, _ in items[: params.k_per_channel]] for c, items in scored.items()}
    files = {i: str(rows[i]["source"]) for ids in rankings.values() for i in ids
             if i in rows and rows[i].get("kind") == "chunk" and rows[i].get("source")}
    return fuse(rankings, params.weights, params.rrf_k, files)


def _clean(row: Row) -> dict[str, Any]:
    """A hit's row without the channels' working columns (distances, scores, the feedback's vector)."""
    return {k: v for k, v in row.items() if not k.startswith("_") and k != "vector"}
