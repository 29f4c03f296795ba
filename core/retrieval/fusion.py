"""Weighted Reciprocal Rank Fusion."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Fused:
    id: str
    score: float
    ranks: dict[str, int]  # channel -> 1-based rank in that channel

    @property
    def channels(self) -> tuple[str, ...]:
        return tuple(self.ranks)


def fuse(rankings: Mapping[str, Sequence[str]], weights: Mapping[str, float], k: int) -> list[Fused]:
    """Fuse per-channel rankings: score(d) = Σ_c w_c / (k + rank_c(d)), best first.

    Ties break by the best single rank, then by id, so the order is deterministic.
    """
    scores: dict[str, float] = {}
    ranks: dict[str, dict[str, int]] = {}
    for channel, ids in rankings.items():
        w = weights.get(channel, 1.0)
        for rank, doc in enumerate(ids, start=1):
            if channel in ranks.setdefault(doc, {}):
                continue
            ranks[doc][channel] = rank
            scores[doc] = scores.get(doc, 0.0) + w / (k + rank)
    order = sorted(scores, key=lambda d: (-scores[d], min(ranks[d].values()), d))
    return [Fused(d, scores[d], ranks[d]) for d in order]
