"""Fusing the channels' candidates into one ranking: by their scores (convex, the default) or by their ranks (RRF).

**Convex**: score(d) = Σ_c w_c · minmax_c(s_c(d)): each channel's own scores (cosine similarity for the semantic
channel, BM25 for the lexical one, the walk's weight for the graph) are scaled to 0–1 over that channel's
candidates, and a memory a channel did not find gets 0 from it. The semantic and lexical weights are taken as
shares of their sum; the graph's weight is on the same scale, so at 0.1 with the other two at 1 its best link adds
a tenth of what a channel's best candidate does, as in RRF. Measured on LoCoMo and SciFact's training claims
(benchmark/RESULTS.md), scores carry what ranks lose: how far ahead the best candidate of a channel is.

**RRF**: score(d) = Σ_c w_c / (k + rank_c(d)), kept as ``search.fusion = "rrf"`` (and ``auto``'s choice for files
and notes). Chunks of one file share its subject, so a primary channel that did not find a file's chunk but found
another chunk of the same file adds ``SAME_FILE_SHARE`` of what that chunk's rank gives (``sources`` names each
chunk's file): the two channels often reach one file through different chunks, and without it a file one channel
ranks 6th is pushed out by chunks both rank 20th. Measured on the Django and pytest lookups (benchmark/RESULTS.md):
it is what keeps hybrid at or above each channel alone.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

#: Channels whose weights set the scale of the convex fusion (the graph is weighed on their scale).
_PRIMARY = ("semantic", "lexical")
#: What a primary channel gives a chunk for its best-ranked other chunk of the same file, as a share of that rank's
#: RRF score (0.15–0.5 measured; 0.25 best on the Django lookups, no loss on the others).
SAME_FILE_SHARE = 0.25


@dataclass(frozen=True)
class Fused:
    id: str
    score: float
    ranks: dict[str, int]  # channel -> 1-based rank in that channel

    @property
    def channels(self) -> tuple[str, ...]:
        return tuple(self.ranks)


def fuse(rankings: Mapping[str, Sequence[str]], weights: Mapping[str, float], k: int,
         sources: Mapping[str, str] | None = None) -> list[Fused]:
    """Fuse per-channel rankings: score(d) = Σ_c w_c / (k + rank_c(d)), best first; with ``sources`` (a chunk's
    file, for chunks of files only), a primary channel that missed d but ranked another chunk of d's file adds
    ``SAME_FILE_SHARE`` · w_c / (k + that chunk's rank) (see the module docstring).

    Ties break by the best single rank, then by id, so the order is deterministic.
    """
    scores: dict[str, float] = {}
    ranks: dict[str, dict[str, int]] = {}
    best_of_file: dict[str, dict[str, int]] = {}
    for channel, ids in rankings.items():
        w = weights.get(channel, 1.0)
        for rank, doc in enumerate(ids, start=1):
            if channel in ranks.setdefault(doc, {}):
                continue
            ranks[doc][channel] = rank
            scores[doc] = scores.get(doc, 0.0) + w / (k + rank)
            if sources and doc in sources:
                best_of_file.setdefault(channel, {}).setdefault(sources[doc], rank)
    if sources:
        for doc in scores:
            source = sources.get(doc)
            if source is None:
                continue
            for channel in _PRIMARY:
                other = best_of_file.get(channel, {}).get(source)
                if other is not None and channel not in ranks[doc]:
                    scores[doc] += SAME_FILE_SHARE * weights.get(channel, 1.0) / (k + other)
    return _ordered(scores, ranks)


def fuse_scores(scored: Mapping[str, Sequence[tuple[str, float]]], weights: Mapping[str, float]) -> list[Fused]:
    """Fuse per-channel ``(id, score)`` lists (higher is better, best first) by the convex combination of their
    min-max scaled scores (see the module docstring), best first; ties as in ``fuse``."""
    ran = [c for c in _PRIMARY if c in scored]
    total = sum(weights.get(c, 1.0) for c in ran) or 1.0
    scores: dict[str, float] = {}
    ranks: dict[str, dict[str, int]] = {}
    for channel, items in scored.items():
        if not items:
            continue
        w = weights.get(channel, 1.0) / total
        values = [s for _, s in items]
        low, high = min(values), max(values)
        for rank, (doc, value) in enumerate(items, start=1):
            if channel in ranks.setdefault(doc, {}):
                continue
            ranks[doc][channel] = rank
            scaled = (value - low) / (high - low) if high > low else 1.0
            scores[doc] = scores.get(doc, 0.0) + w * scaled
    return _ordered(scores, ranks)


def _ordered(scores: dict[str, float], ranks: dict[str, dict[str, int]]) -> list[Fused]:
    order = sorted(scores, key=lambda d: (-scores[d], min(ranks[d].values()), d))
    return [Fused(d, scores[d], ranks[d]) for d in order]
