"""The ``review`` tool: repeats counted on a memory, near duplicates stored apart, superseded memories."""

from __future__ import annotations

from engram.core import Engine, Paths, Settings
from engram.core.tools import review as review_module
from standins.embedder import HashingEmbedder


def _engine(paths: Paths, duplicates: str) -> Engine:
    settings = Settings()
    settings.upkeep.duplicates = duplicates  # type: ignore[assignment]
    return Engine(paths, settings, embedder=HashingEmbedder())


def test_review_lists_repeats_pairs_stored_apart_and_superseded_notes_per_project(paths: Paths) -> None:
    with _engine(paths, "off") as engine:  # as a workspace written before duplicate handling
        tools = engine.tools
        cache = "the cache keys of the web service expire after one hour unless a deploy clears them sooner"
        older = tools.store(cache, project="web").result.id
        newer = tools.store(cache + " as agreed", project="web").result.id  # similarity 0.951 (hashing embedder)
        tools.store(cache + " as agreed", project="ops")  # another project: never paired
        tools.store("Deploys go out on Tuesdays", project="web", kind="exchange")  # another kind: never paired
        engine.settings.upkeep.duplicates = "near"
        repeated = tools.store("Lunch is at noon", project="web").result.id
        for _ in range(2):
            assert tools.store("lunch is at  NOON", project="web").result.id == repeated
        replaced = tools.store("Backups run at 02:00", project="web").result.id
        current = tools.store("Backups run at 03:30", project="web", supersedes=[replaced]).result.id

        out = tools.review(project="web")
        r = out.result
        assert [(m.id, m.seen_count) for m in r.seen_again] == [(repeated, 3)] and r.seen_again_total == 1
        assert [(p.first.id, p.second.id) for p in r.near_pairs] == [(newer, older)] and r.near_pairs_total == 1
        assert r.near_pairs[0].similarity >= engine.settings.upkeep.near_threshold
        assert [(m.id, m.superseded_by) for m in r.superseded] == [(replaced, current)] and r.superseded_total == 1
        assert (r.compared, r.current) == (5, 5)  # the superseded note is not compared
        assert r.possible_updates_total == 0 and "Possible updates: none." in out.text
        assert "Near duplicates stored apart (1 pair at similarity ≥ 0.88" in out.text
        assert f"{replaced} · web · superseded by {current}" in out.text

        everywhere = tools.review().result
        assert everywhere.near_pairs_total == 1 and everywhere.current == 6, "each project compared within itself"
        assert 0.95 <= r.near_pairs[0].similarity < 0.96
        assert tools.review(project="web", threshold=0.96).result.near_pairs_total == 0


def test_alike_notes_whose_details_differ_are_possible_updates_not_near_duplicates(paths: Paths) -> None:
    with _engine(paths, "off") as engine:  # stored apart before duplicate handling: review finds the pair itself
        tools = engine.tools
        older = tools.store("the cache keys of the web service expire after 1 hour unless a deploy clears them",
                            project="web").result.id
        newer = tools.store("the cache keys of the web service expire after 2 hours unless a deploy clears them",
                            project="web").result.id
        out = tools.review(project="web")
    r = out.result
    assert r.near_pairs_total == 0, "alike by vector, but a number differs: not a duplicate"
    assert [(u.newer.id, u.older.id, u.changes) for u in r.possible_updates] == [(newer, older, ["1 hour → 2 hours"])]
    assert f"  {newer} (" in out.text and f"may update {older}" in out.text and "1 hour → 2 hours" in out.text


def test_a_pair_kept_both_is_not_offered_again_and_a_superseded_one_leaves_the_list(paths: Paths) -> None:
    with _engine(paths, "near") as engine:
        tools = engine.tools
        a = tools.store("Alice owns the billing service and its on-call rota", project="web").result.id
        b = tools.store("Bob owns the billing service and its on-call rota", project="web").result
        assert b.may_update == a and b.changes == "Alice → Bob"
        c = tools.store("Deploys to staging need one approval from the team", project="web").result.id
        d = tools.store("Deploys to staging need two approvals from the team", project="web").result
        assert d.may_update == c
        assert {(u.newer.id, u.older.id) for u in tools.review(project="web").result.possible_updates} == {
            (b.id, a), (d.id, c)}
        tools.tidy("keep_both", b.id, others=[a])  # two owners: both are true
        tools.tidy("supersede", d.id, others=[c])  # the newer replaces the older
        after = tools.review(project="web").result
    assert after.possible_updates_total == 0
    assert [m.id for m in after.superseded] == [c]


def test_review_compares_only_the_newest_memories_and_says_so(paths: Paths, monkeypatch: object) -> None:
    import pytest

    assert isinstance(monkeypatch, pytest.MonkeyPatch)
    monkeypatch.setattr(review_module, "COMPARED_MAX", 3)
    with _engine(paths, "off") as engine:
        for text in ("one alpha", "two beta", "three gamma", "four delta", "one alpha"):
            engine.tools.store(text, project="p")
        out = engine.tools.review(project="p")
    assert (out.result.compared, out.result.current) == (3, 5)
    assert out.result.near_pairs_total == 0, "the older 'one alpha' was not among the newest three"
    assert "the newest 3 of 5 current notes and exchanges compared" in out.text


def test_review_of_an_empty_workspace_says_there_is_nothing_to_tidy(engine: Engine) -> None:
    out = engine.tools.review()
    assert out.text.splitlines()[1:] == [
        "Written more than once: none.",
        "Near duplicates stored apart: none at similarity ≥ 0.88 (0 current notes and exchanges compared).",
        "Possible updates: none.",
        "Superseded: none."]
