"""The ranking measures of the retrieval suites (benchmark/ranking.py), on rankings worked out by hand."""

from __future__ import annotations

import math

import pytest

from benchmark import ranking


def test_ndcg_is_one_for_the_ideal_ranking_and_discounts_each_rank_down() -> None:
    assert ranking.ndcg([1, 2], 2) == 1.0
    assert ranking.ndcg([2], 1) == pytest.approx(1 / math.log2(3))
    assert ranking.ndcg([1, 3], 2) == pytest.approx((1 + 0.5) / (1 + 1 / math.log2(3)))
    assert ranking.ndcg([11], 1) == 0.0, "past k counts nothing"
    assert ranking.ndcg([], 3) == 0.0 and ranking.ndcg([1], 0) == 0.0
    # More relevant items than k: the ideal fills the top k only.
    assert ranking.ndcg(list(range(1, 11)), 12) == 1.0


def test_recall_all_is_strict_and_recall_any_lenient() -> None:
    assert ranking.all_within([1, 4], 2, 5) and not ranking.all_within([1, 6], 2, 5)
    assert not ranking.all_within([1], 2, 5), "an item not found at all is not within k"
    assert ranking.any_within([6, 3], 5) and not ranking.any_within([6], 5) and not ranking.any_within([], 5)


def test_first_ranks_read_a_chunk_ranking_as_one_of_files() -> None:
    files = ranking.distinct_in_order(["a.py", "b.py", "a.py", "c.py"])
    assert files == ["a.py", "b.py", "c.py"]
    assert ranking.first_ranks(files, ["c.py", "a.py", "z.py"]) == [1, 3]
