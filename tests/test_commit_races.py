"""A shared workspace's commit that lost a race to another machine is tried again; nothing else is."""

from __future__ import annotations

import pytest

from engram.core.store.commit_races import ATTEMPTS, retrying_lost_races

LOST = RuntimeError("Retryable commit conflict for version 7: This CreateIndex transaction was preempted by "
                    "concurrent transaction CreateIndex at version 7. Please retry.")


def test_a_lost_race_is_tried_again_after_growing_pauses_until_the_commit_goes_through() -> None:
    outcomes: list[Exception | str] = [LOST, LOST, "committed"]
    pauses: list[float] = []

    def commit() -> str:
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    assert retrying_lost_races(commit, "test", sleep=pauses.append) == "committed"
    assert outcomes == [] and len(pauses) == 2
    assert 0.025 <= pauses[0] <= 0.075 and 0.05 <= pauses[1] <= 0.15  # 50 ms, then 100 ms, ± half


def test_a_commit_that_keeps_losing_gives_up_after_its_attempts_with_the_last_conflict() -> None:
    calls: list[int] = []

    def commit() -> None:
        calls.append(1)
        raise LOST

    with pytest.raises(RuntimeError, match="preempted by concurrent transaction"):
        retrying_lost_races(commit, "test", sleep=lambda _s: None)
    assert len(calls) == ATTEMPTS


def test_any_other_failure_is_not_tried_again() -> None:
    calls: list[int] = []

    def commit() -> None:
        calls.append(1)
        raise OSError("Generic S3 error: AccessDenied")

    with pytest.raises(OSError, match="AccessDenied"):
        retrying_lost_races(commit, "test", sleep=lambda _s: None)
    assert calls == [1]


def test_a_failure_the_caller_names_is_tried_again_too() -> None:
    outcomes: list[Exception | str] = [ValueError("Table 'workspace' was not found"), "opened"]

    def open_table() -> str:
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    assert retrying_lost_races(open_table, "test", also=lambda exc: "was not found" in str(exc),
                               sleep=lambda _s: None) == "opened"
