"""Ranking measures the retrieval suites share: NDCG@k and the strict and lenient recall of a ranking's top k.

A ranking is read as the 1-based ranks at which the relevant items were found (each relevant item once, at its
best rank; an item not found has no rank). Every relevant item has gain 1 (LoCoMo's evidence turns and the lookups'
gold files are not graded).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence


def ndcg(ranks: Iterable[int], relevant: int, k: int = 10) -> float:
    """NDCG@k of a ranking whose ``relevant`` relevant items were found at ``ranks`` (1-based; ranks past ``k`` count
    nothing): the discounted gain Σ 1/log2(1 + rank) over the ideal one, where every relevant item (up to ``k``)
    ranks first. 0.0 when nothing is relevant."""
    if relevant <= 0:
        return 0.0
    gain = sum(1.0 / math.log2(1 + r) for r in ranks if 1 <= r <= k)
    ideal = sum(1.0 / math.log2(1 + r) for r in range(1, min(relevant, k) + 1))
    return gain / ideal


def all_within(ranks: Sequence[int], relevant: int, k: int) -> bool:
    """Whether every one of the ``relevant`` items ranks within the top ``k`` (recall_all@k, strict)."""
    return relevant > 0 and len(ranks) == relevant and max(ranks) <= k


def any_within(ranks: Sequence[int], k: int) -> bool:
    """Whether at least one relevant item ranks within the top ``k`` (recall_any@k, what peers print as R@k)."""
    return bool(ranks) and min(ranks) <= k


def first_ranks(ranked: Sequence[str], relevant: Iterable[str]) -> list[int]:
    """The 1-based rank at which each of ``relevant`` first appears in ``ranked`` (best first); unfound ones are left
    out."""
    at: dict[str, int] = {}
    for n, item in enumerate(ranked, 1):
        at.setdefault(item, n)
    return sorted(at[r] for r in set(relevant) if r in at)


def distinct_in_order(items: Iterable[str]) -> list[str]:
    """``items`` with repeats left out, in the order each first appears (a ranking of chunks read as one of files)."""
    return list(dict.fromkeys(items))
