"""Every tool through Engine.call: results, clear refusals, workspace isolation, ids that round-trip."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engram.core import Engine
from engram.core.catalog import TOOLS, args_model
from engram.core.errors import InvalidArgument, NotFound, WorkspaceError

from .conftest import write_tree

DOC = "# Deploy\n\nWe deploy with ``systemd`` units on the home server.\n\n## Rollback\n\nKeep the previous release.\n"


@pytest.fixture
def filled(engine: Engine, tmp_path: Path) -> dict[str, str]:
    root = write_tree(tmp_path / "ops", {"deploy.md": DOC, "run.py": "def restart_systemd_unit():\n    pass\n"})
    engine.call("ingest_path", {"path": str(root), "project": "ops"})
    note = engine.call("store", {"content": "Rollbacks take two minutes with systemd", "project": "ops"}).result.id
    fact = engine.call("kg_edit", {"action": "add", "subject": "server", "predicate": "runs", "object": "systemd"})
    return {"root": str(root.resolve()), "note": note, "fact": fact.result.fact.id,
            "doc": (root / "deploy.md").resolve().as_posix()}


def test_the_registry_has_the_nineteen_engine_tools_and_recall() -> None:
    assert sorted(TOOLS) == sorted([
        "search", "get_memory", "neighbors", "file_chunks", "file_summary", "list_sources", "kg_query",
        "graph_scope", "review", "status", "device_context", "wake_up", "store", "tidy", "delete", "forget",
        "kg_edit", "ingest_content", "ingest_path", "recall"])
    for name in TOOLS:
        assert "workspace" not in args_model(name).model_fields and "max_chars" not in args_model(name).model_fields


def test_read_tools_answer_on_a_filled_workspace(engine: Engine, filled: dict[str, str]) -> None:
    texts = {
        "search": engine.call("search", {"query": "how do we roll back a release"}).text,
        "file_summary": engine.call("file_summary", {"source": filled["doc"]}).text,
        "list_sources": engine.call("list_sources", {}).text,
        "kg_query": engine.call("kg_query", {"subject": "SERVER"}).text,
        "graph_scope": engine.call("graph_scope", {"project": "ops"}).text,
        "status": engine.call("status", {}).text,
        "device_context": engine.call("device_context", {}).text,
        "wake_up": engine.call("wake_up", {"project": "ops"}).text,
    }
    assert "deploy.md" in texts["search"]
    assert "summary: Deploy: We deploy with ``systemd`` units on the home server." in texts["file_summary"]
    assert texts["list_sources"].startswith("2 sources")
    assert f"{filled['fact']}: server —runs→ systemd" in texts["kg_query"]
    assert "systemd" in texts["graph_scope"]
    assert texts["status"].startswith("workspace default: ")
    assert "llama-cpp-python" in texts["device_context"]
    assert "Rollbacks take two minutes" in texts["wake_up"]


def test_every_printed_id_is_accepted_by_the_tools_that_expand_it(engine: Engine, filled: dict[str, str]) -> None:
    text = engine.call("search", {"query": "systemd"}).text
    ids = re.findall(r"^\[\d+\] ([0-9a-f]{12}) ", text, flags=re.M)
    assert filled["note"] in ids
    got = engine.call("get_memory", {"ids": ids}).result
    assert [m.id for m in got.items] == ids
    for memory_id in ids:
        engine.call("neighbors", {"id": memory_id})
    chunk_text = engine.call("file_chunks", {"source": filled["doc"]}).text
    chunk_ids = re.findall(r"^\[\d+\] ([0-9a-f]{12}) ", chunk_text, flags=re.M)
    assert engine.call("get_memory", {"ids": chunk_ids}).result.items
    fact_ids = re.findall(r"^(f-[0-9a-f]{10}):", engine.call("kg_query", {}).text, flags=re.M)
    assert engine.call("kg_edit", {"action": "end", "fact_id": fact_ids[0]}).result.fact.ended is not None
    assert engine.call("kg_query", {}).result.items == []
    assert engine.call("kg_query", {"include_ended": True}).result.items[0].id == fact_ids[0]


def test_file_chunks_narrow_to_a_line_range(engine: Engine, filled: dict[str, str]) -> None:
    all_chunks = engine.call("file_chunks", {"source": filled["doc"]}).result
    assert all_chunks.total_chunks == len(all_chunks.items)
    late = engine.call("file_chunks", {"source": filled["doc"], "start_line": 5}).result
    assert all(c.end_line >= 5 for c in late.items)


def test_delete_by_id_and_by_source(engine: Engine, filled: dict[str, str]) -> None:
    assert engine.call("delete", {"ids": [filled["note"]]}).text == f"deleted 1 memory in default: {filled['note']}"
    with pytest.raises(NotFound):
        engine.call("get_memory", {"ids": [filled["note"]]})
    out = engine.call("delete", {"source": filled["doc"]})
    assert out.text.startswith(f"forgot {filled['doc']}")
    with pytest.raises(NotFound, match="never ingested"):
        engine.call("file_summary", {"source": filled["doc"]})


@pytest.mark.parametrize(("tool", "arguments", "message"), [
    ("search", {"query": "x", "limit": 51}, "argument 'limit' got 51: Input should be less than or equal to 50"),
    ("search", {"query": ""}, "argument 'query'"),
    ("search", {"query": "x", "limit": "many"}, "argument 'limit' got 'many'"),
    ("search", {"query": "x", "colour": "red"}, "unknown argument 'colour' (accepted: query, limit,"),
    ("search", {}, "missing required argument 'query'"),
    ("search", {"query": "x", "max_chars": 100}, "argument 'max_chars' got 100"),
    ("search", {"query": "x", "kind": "file"}, "argument 'kind' got 'file'"),
    ("get_memory", {"ids": []}, "argument 'ids'"),
    ("delete", {}, "Give either 'ids'"),
    ("kg_edit", {"action": "add", "subject": "a"}, "needs 'subject', 'predicate' and 'object'"),
    ("kg_edit", {"action": "end"}, "needs 'fact_id'"),
    ("store", {"content": "   "}, "'content' is blank"),
    ("nope", {}, "Unknown tool 'nope'"),
    ("search", {"query": "x", "workspace": "Not Valid"}, "argument 'workspace'"),
])
def test_bad_input_is_refused_with_an_actionable_message(engine: Engine, tool: str, arguments: dict,
                                                          message: str) -> None:
    before = engine.call("status").result.memories
    with pytest.raises(InvalidArgument) as err:
        engine.call(tool, arguments)
    assert message in err.value.message
    assert engine.call("status").result.memories == before


@pytest.mark.parametrize(("tool", "arguments", "message"), [
    ("get_memory", {"ids": ["000000000000"]}, "No memory with id 000000000000"),
    ("neighbors", {"id": "000000000000"}, "No memory with id 000000000000"),
    ("file_chunks", {"source": "/never/ingested.md"}, "was never ingested"),
    ("delete", {"ids": ["000000000000"]}, "nothing was deleted"),
    ("kg_edit", {"action": "end", "fact_id": "f-0000000000"}, "No fact with id f-0000000000"),
])
def test_unknown_ids_and_paths_are_not_found(engine: Engine, filled: dict[str, str], tool: str, arguments: dict,
                                             message: str) -> None:
    with pytest.raises(NotFound, match=message):
        engine.call(tool, arguments)


def test_workspaces_are_isolated(engine: Engine, filled: dict[str, str]) -> None:
    other = engine.call("store", {"content": "only in the work workspace: systemd timers", "workspace": "work"})
    assert other.workspace == "work"
    default_ids = {h.id for h in engine.call("search", {"query": "systemd timers", "limit": 50}).result.hits}
    work_ids = {h.id for h in engine.call("search", {"query": "systemd", "workspace": "work"}).result.hits}
    assert other.result.id not in default_ids
    assert work_ids == {other.result.id}
    with pytest.raises(NotFound):
        engine.call("get_memory", {"ids": [filled["note"]], "workspace": "work"})
    with pytest.raises(WorkspaceError, match="does not exist yet.*Existing workspaces: default, work"):
        engine.call("search", {"query": "x", "workspace": "missing"})
    assert not (engine.paths.workspaces_dir / "missing").exists()


def test_answer_length_defaults_to_the_configured_cap(engine: Engine) -> None:
    for i, host in enumerate(["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
                              "juliet"]):
        engine.call("store", {"content": f"Deploy note {i} for {host}: " + f"systemd restarts {host} cleanly. " * 10})
    engine.settings.search.max_chars = 1200
    default = engine.call("search", {"query": "systemd deploy"}).text
    wider = engine.call("search", {"query": "systemd deploy", "max_chars": 4000}).text
    assert len(default) <= 1200 < len(wider) <= 4000


def test_sources_show_relative_to_their_ingest_folder_and_both_forms_are_accepted(engine: Engine,
                                                                                  tmp_path: Path) -> None:
    a = write_tree(tmp_path / "a", {"docs/guide.md": "# Guide\n\nalpha beta", "README.md": "# A\n\nfirst readme"})
    b = write_tree(tmp_path / "b", {"README.md": "# B\n\nsecond readme"})
    engine.call("ingest_path", {"path": str(a), "project": "a"})
    engine.call("ingest_path", {"path": str(b), "project": "b"})
    text = engine.call("search", {"query": "alpha beta"}).text
    assert " · a · docs/guide.md:1-3 · " in text and str(tmp_path) not in text
    absolute = (a / "docs/guide.md").resolve().as_posix()
    by_rel = engine.call("file_chunks", {"source": "docs/guide.md"}).result
    assert by_rel.source == absolute and by_rel.path == "docs/guide.md"
    assert engine.call("file_summary", {"source": absolute}).result.path == "docs/guide.md"
    with pytest.raises(InvalidArgument, match="'README.md' fits 2 sources"):
        engine.call("file_summary", {"source": "README.md"})
    assert engine.call("list_sources", {"prefix": "docs/"}).result.total == 1
    assert [h.path for h in engine.call("search", {"query": "readme", "source_prefix": "docs"}).result.hits] == [
        "docs/guide.md"]
    out = engine.call("delete", {"source": "docs/guide.md"})
    assert out.result.source == absolute


def test_a_source_under_a_dot_folder_round_trips_by_its_printed_name(engine: Engine, tmp_path: Path) -> None:
    root = write_tree(tmp_path / "repo", {".github/workflows/ci.yml": "name: ci\non: push\njobs:\n  lint: ruff check\n",
                                          "README.md": "# Repo\n\nnothing about workflows"})
    engine.call("ingest_path", {"path": str(root), "project": "repo"})
    absolute = (root / ".github/workflows/ci.yml").resolve().as_posix()
    printed = [s.path for s in engine.call("list_sources", {}).result.items]
    assert printed == [".github/workflows/ci.yml", "README.md"]
    assert ".github/workflows/ci.yml" in engine.call("search", {"query": "ruff check lint workflow"}).text
    for name in (".github/workflows/ci.yml", "./.github/workflows/ci.yml"):
        chunks = engine.call("file_chunks", {"source": name}).result
        assert (chunks.source, chunks.path) == (absolute, ".github/workflows/ci.yml")
        assert "ruff check" in chunks.items[0].content
        assert engine.call("file_summary", {"source": name}).result.source == absolute
    assert engine.call("list_sources", {"prefix": ".github/"}).result.total == 1
    assert engine.call("list_sources", {"prefix": "./.github"}).result.total == 1
    assert engine.call("list_sources", {"prefix": "."}).result.total == 2
    with pytest.raises(NotFound):
        engine.call("file_chunks", {"source": "github/workflows/ci.yml"})
