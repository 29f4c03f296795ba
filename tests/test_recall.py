"""Recall: plans validated before anything runs, concurrent steps, merged evidence under one budget."""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from datetime import UTC
from pathlib import Path

import numpy as np
import pytest

from engram.core import Engine, Paths, Settings
from engram.core.catalog import PLAN_TOOLS
from engram.core.errors import InvalidArgument
from engram.core.recall.models import Evidence
from engram.core.recall.plan import validate_plan
from engram.core.recall.run import by_source_first, merge
from engram.core.tools.results import Memory

from .conftest import HashingEmbedder, write_tree

GUIDE = "# Deploy\n\n" + "\n\n".join(f"Step {i}: roll back with ``git revert`` and redeploy the service." * 2
                                     for i in range(12))


@pytest.fixture
def filled(engine: Engine, tmp_path: Path) -> dict[str, str]:
    root = write_tree(tmp_path / "ops", {"deploy.md": GUIDE, "tasks.py": "def git_revert():\n    '''Revert.'''\n",
                                         "backup.md": "# Backups\n\nBackups run nightly with restic to the NAS."})
    engine.call("ingest_path", {"path": str(root), "project": "ops"})
    note = engine.call("store", {"content": "Decision: restic keeps 30 daily snapshots", "project": "ops"}).result.id
    fact = engine.call("kg_edit", {"action": "add", "subject": "backups", "predicate": "use", "object": "restic"})
    return {"note": note, "fact": fact.result.fact.id, "deploy": (root / "deploy.md").resolve().as_posix(),
            "backup": (root / "backup.md").resolve().as_posix()}


# ----------------------------------------------------------------------------------------- plan validation

@pytest.mark.parametrize(("plan", "message"), [
    ([{"tool": "nope", "args": {}}], "Plan step 1 (nope): unknown tool"),
    ([{"tool": "search", "args": {"query": "a"}}, {"tool": "store", "args": {"content": "x"}}],
     "Plan step 2 (store): store is a write"),
    ([{"tool": "status", "args": {}}], "Plan step 1 (status): status is not an evidence read"),
    ([{"tool": "search", "args": {"query": "a", "colour": 1}}], "unknown argument 'colour' (accepted: query, limit,"),
    ([{"tool": "search", "args": {"query": "a", "limit": "ten"}}], "Plan step 1 (search): argument 'limit' got 'ten'"),
    ([{"tool": "search", "args": {}}], "Plan step 1 (search): missing required argument 'query'"),
    ([{"tool": "search", "args": {"query": "a", "workspace": "w"}}], "'workspace' is not a step argument"),
    ([{"tool": "file_chunks", "args": {"source": "/x", "max_chars": 2000}}], "'max_chars' is not a step argument"),
    ([{"tool": "search", "args": {"query": str(i)}} for i in range(9)], "at most 8 items"),
    ([{"tool": "search", "arguments": {"query": "a"}}], "plan step 1: arguments: Extra inputs are not permitted"),
])
def test_an_invalid_plan_is_refused_before_anything_runs(engine: Engine, fake_embedder: HashingEmbedder, plan: list,
                                                         message: str) -> None:
    engine.call("store", {"content": "something"})
    before = fake_embedder.texts_embedded
    with pytest.raises(InvalidArgument) as err:
        engine.call("recall", {"question": "q", "plan": plan})
    assert message in err.value.message
    assert fake_embedder.texts_embedded == before, "no step may run when the plan is invalid"


def test_duplicate_steps_run_once() -> None:
    steps = validate_plan([{"tool": "search", "args": {"query": "a", "limit": 5}},
                           {"tool": "search", "args": {"limit": 5, "query": "a"}},
                           {"tool": "search", "args": {"query": "b"}}], PLAN_TOOLS)
    assert [(s.number, s.duplicate_of) for s in steps] == [(1, None), (2, 1), (3, None)]


# ------------------------------------------------------------------------------------------ running

class BarrierEmbedder(HashingEmbedder):
    """Each embed call waits for a second caller: only concurrent steps get through."""

    def __init__(self) -> None:
        super().__init__()
        self.barrier = threading.Barrier(2)
        self.armed = False

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.armed:
            self.barrier.wait(timeout=10)
        return super().embed(texts)


def test_steps_run_concurrently(paths: Paths) -> None:
    embedder = BarrierEmbedder()
    with Engine(paths, Settings(), embedder=embedder) as engine:
        engine.call("store", {"content": "alpha note"})
        engine.call("store", {"content": "beta note"})
        embedder.armed = True
        out = engine.call("recall", {"question": "q", "plan": [{"tool": "search", "args": {"query": "alpha"}},
                                                               {"tool": "search", "args": {"query": "beta"}}]})
    assert [s.error for s in out.result.steps] == [None, None], "the two searches met at the barrier"


def test_a_failing_step_reports_its_error_and_the_others_return(engine: Engine, filled: dict[str, str]) -> None:
    out = engine.call("recall", {"question": "backups", "plan": [
        {"tool": "search", "args": {"query": "backups"}},
        {"tool": "get_memory", "args": {"ids": ["000000000000"]}},
        {"tool": "file_summary", "args": {"source": filled["backup"]}}]})
    lines = out.text.splitlines()
    assert lines[0].startswith('step 1 · search "backups" → ') and lines[0].endswith(" results")
    assert lines[1] == ("step 2 · get_memory 000000000000 → error: No memory with id 000000000000 in workspace "
                        "'default'. Use ids printed by search, neighbors or file_chunks in this workspace.")
    assert lines[2] == "step 3 · file_summary backup.md → 1 result"
    assert "[1] " in out.text and "\n[6] " in out.text and " file:backup.md · ops · 1 chunks · " in out.text


def test_an_unexpected_failure_in_a_step_is_contained(engine: Engine, filled: dict[str, str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    class BrokenTable:
        def search(self, *args: object, **kwargs: object) -> None:
            raise TypeError("facts table unreadable (test)")  # not a library error the store translates

    monkeypatch.setattr(engine.store(), "facts", BrokenTable())
    out = engine.call("recall", {"question": "q", "plan": [{"tool": "kg_query", "args": {}},
                                                          {"tool": "search", "args": {"query": "backups",
                                                                                      "channels": ["semantic"]}}]})
    assert out.result.steps[0].error == "failed unexpectedly (the details are in Engram's log)"
    assert out.result.steps[1].error is None and out.result.steps[1].results > 0


def test_results_merge_by_key_round_robin_keeping_the_fullest_content(engine: Engine, filled: dict[str, str]) -> None:
    chunks = engine.call("file_chunks", {"source": filled["deploy"]}).result.items
    first = chunks[0].id
    out = engine.call("recall", {"question": "rollback", "plan": [
        {"tool": "search", "args": {"query": "roll back git revert", "limit": 5}},
        {"tool": "get_memory", "args": {"ids": [first, filled["note"]]}},
        {"tool": "file_chunks", "args": {"source": filled["deploy"], "limit": 3}},
        {"tool": "neighbors", "args": {"id": first}},
        {"tool": "kg_query", "args": {"subject": "backups"}}]}).result
    keys = [i.key for i in out.items]
    assert len(keys) == len(set(keys)), "each memory appears once"
    by_key = {i.key: i for i in out.items}
    assert set(by_key[first].steps) >= {2, 3}
    assert by_key[first].memory.content == chunks[0].content
    assert f"fact:{filled['fact']}" in by_key
    # every source's best result comes before any second chunk of a source already shown
    sources = [i.memory.source if i.memory is not None and i.memory.source else i.key for i in out.items]
    firsts = [n for n, src in enumerate(sources) if src not in sources[:n]]
    assert firsts == list(range(len(firsts)))


def test_merge_prefers_the_longer_content_and_unions_steps() -> None:
    from datetime import datetime

    t = datetime(2026, 1, 1, tzinfo=UTC)

    def ev(step: int, content: str, key: str = "m1") -> Evidence:
        return Evidence(key=key, kind="memory", steps=[step], memory=Memory(
            id=key, project="p", source="", kind="note", type="note", content=content, created_at=t, updated_at=t))

    merged = merge([[ev(1, "short"), ev(1, "x", "m2")], [ev(2, "the longer text")], [ev(3, "mid text", "m3")]])
    assert [m.key for m in merged] == ["m1", "m3", "m2"]
    assert merged[0].memory.content == "the longer text" and merged[0].steps == [1, 2]


def test_each_sources_best_chunk_comes_before_second_chunks_in_rank_order() -> None:
    from datetime import datetime

    t = datetime(2026, 1, 1, tzinfo=UTC)

    def ev(key: str, source: str) -> Evidence:
        return Evidence(key=key, kind="memory", steps=[1], memory=Memory(
            id=key, project="p", source=source, kind="chunk", type="text", content=key, created_at=t, updated_at=t))

    ordered = by_source_first([ev("a1", "/a"), ev("a2", "/a"), ev("b1", "/b"), ev("a3", "/a"), ev("n1", ""),
                               ev("b2", "/b"), ev("c1", "/c")])
    assert [e.key for e in ordered] == ["a1", "b1", "n1", "c1", "a2", "b2", "a3"]


@pytest.mark.parametrize("budget", [1200, 2000, 4000, 8000, 12000])
def test_one_budget_bounds_the_whole_answer_and_counts_what_is_hidden(engine: Engine, filled: dict[str, str],
                                                                      budget: int) -> None:
    plan = [{"tool": "search", "args": {"query": q, "limit": 20}} for q in ("roll back", "backups", "redeploy")]
    plan.append({"tool": "file_chunks", "args": {"source": filled["deploy"]}})
    out = engine.call("recall", {"question": "q", "plan": plan, "max_chars": budget})
    assert len(out.text) <= budget
    total = len(out.result.items)
    shown = len(re.findall(r"^\[\d+\] ", out.text, flags=re.M))
    last = out.text.splitlines()[-1]
    assert last.startswith(f"— {shown} of {total} results shown")
    if shown < total:
        assert f"{total - shown} not shown" in last
    body = out.text.split("\n\n", 1)[1].rsplit("\n\n", 1)[0]
    blocks = re.split(r"\n\n(?=\[\d+\] )", body) if shown else []
    for block, item in zip(blocks, out.result.items):
        lines = block.split("\n")[1:]
        if item.memory is not None and item.memory.title:
            lines = lines[1:]
        excerpt = "\n".join(lines)
        whole = item.memory.content.strip() if item.memory is not None else excerpt
        assert excerpt == whole or len(excerpt) >= 300, (budget, len(excerpt))


def test_without_a_plan_recall_is_byte_for_byte_the_search_answer(engine: Engine, filled: dict[str, str]) -> None:
    for max_chars in (1200, 4000, 9000):
        question = "how are backups made and kept?"
        recalled = engine.call("recall", {"question": question, "max_chars": max_chars}).text
        assert recalled == engine.call("search", {"query": question, "max_chars": max_chars}).text


def test_every_step_stays_in_the_recalls_workspace(engine: Engine, filled: dict[str, str]) -> None:
    engine.call("store", {"content": "work-only: backups go to the cloud bucket", "workspace": "work"})
    plan = [{"tool": "search", "args": {"query": "backups"}}, {"tool": "get_memory", "args": {"ids": [filled["note"]]}},
            {"tool": "kg_query", "args": {}}, {"tool": "list_sources", "args": {}},
            {"tool": "file_summary", "args": {"source": filled["backup"]}}]
    out = engine.call("recall", {"question": "backups", "plan": plan, "workspace": "work"})
    assert "work-only" in out.text and "restic" not in out.text
    assert [s.results for s in out.result.steps[2:4]] == [0, 0]
    assert out.result.steps[1].error and out.result.steps[4].error
