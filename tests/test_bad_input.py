"""Every input gets an Engram error: datetimes, paths, patterns, numbers and nesting that used to escape as
library errors, and messages that keep Engram's own folders and filter text to the log."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

from engram.core import Engine, Paths, Settings
from engram.core.catalog import TOOLS, call_model
from engram.core.errors import IngestError, InvalidArgument, SettingsError, StoreError, WorkspaceError
from engram.core.settings import IngestSettings

from .conftest import HashingEmbedder, write_tree

#: 9999-12-31 in its own offset, but 10000-01-01 in UTC.
FAR_FUTURE = "9999-12-31T23:59:59-05:00"
#: 0001-01-01 in its own offset, but year 0 in UTC.
FAR_PAST = "0001-01-01T00:00:00+05:00"
#: The smallest set of arguments each tool with a datetime argument runs with.
REQUIRED = {"search": {"query": "deploy"}, "forget": {"project": "ops"},
            "kg_edit": {"action": "add", "subject": "server", "predicate": "runs", "object": "systemd"}}


def datetime_arguments() -> list[tuple[str, str]]:
    """(tool, argument) for every datetime argument of every tool, read from the tools' JSON schemas."""
    found = []
    for tool in TOOLS:
        for name, prop in call_model(tool).model_json_schema()["properties"].items():
            if any(option.get("format") == "date-time" for option in prop.get("anyOf", [prop])):
                found.append((tool, name))
    return found


def test_the_datetime_arguments_are_found_in_the_schemas() -> None:
    assert set(datetime_arguments()) >= {("search", "since"), ("search", "until"), ("kg_edit", "valid_from")}
    assert {tool for tool, _ in datetime_arguments()} <= set(REQUIRED)


@pytest.mark.parametrize("value", [FAR_FUTURE, FAR_PAST])
@pytest.mark.parametrize(("tool", "argument"), datetime_arguments())
@pytest.mark.slow
def test_datetimes_outside_years_1_to_9999_in_utc_are_refused_naming_the_argument(
        engine: Engine, tool: str, argument: str, value: str) -> None:
    with pytest.raises(InvalidArgument) as err:
        engine.call(tool, {**REQUIRED[tool], argument: value})
    assert f"argument '{argument}'" in err.value.message
    assert "years 1–9999 in UTC" in err.value.message
    assert engine.call("status").result.facts == 0


@pytest.mark.parametrize("value", [FAR_FUTURE, FAR_PAST])
def test_a_recall_step_with_a_datetime_outside_years_1_to_9999_is_refused_before_anything_runs(
        engine: Engine, value: str) -> None:
    plan = [{"tool": "search", "args": {"query": "deploy"}}, {"tool": "search", "args": {"query": "x", "until": value}}]
    with pytest.raises(InvalidArgument) as err:
        engine.call("recall", {"question": "when?", "plan": plan})
    assert err.value.message.startswith("Plan step 2 (search): ")
    assert "argument 'until'" in err.value.message and "years 1–9999 in UTC" in err.value.message


@pytest.mark.parametrize("value", [FAR_FUTURE, FAR_PAST])
def test_a_context_pack_filter_outside_years_1_to_9999_in_utc_is_refused(engine: Engine, value: str) -> None:
    with pytest.raises(InvalidArgument) as err:
        engine.context_pack({"query": "deploy", "budget_tokens": 500, "filters": {"since": value}})
    assert "filters.since" in err.value.message and "years 1–9999 in UTC" in err.value.message


def test_datetimes_are_kept_in_utc_and_those_without_an_offset_are_taken_as_utc(engine: Engine) -> None:
    offset = engine.call("kg_edit", {**REQUIRED["kg_edit"], "valid_from": "2024-03-01T10:00:00+02:00"}).result.fact
    naive = engine.call("kg_edit", {**REQUIRED["kg_edit"], "valid_from": "2024-03-01T10:00:00"}).result.fact
    assert offset.valid_from == datetime(2024, 3, 1, 8, tzinfo=UTC)
    assert offset.valid_from.utcoffset() == timedelta(0)
    assert naive.valid_from == datetime(2024, 3, 1, 10, tzinfo=UTC)
    stored = {f.id: f.valid_from for f in engine.call("kg_query", {}).result.items}
    assert stored == {offset.id: offset.valid_from, naive.id: naive.valid_from}


def test_a_fact_from_before_year_1000_shows_its_year_in_four_digits(engine: Engine) -> None:
    added = engine.call("kg_edit", {**REQUIRED["kg_edit"], "valid_from": "0099-01-01T00:00:00Z"})
    assert "since 0099-01-01" in added.text
    assert "since 0099-01-01" in engine.call("kg_query", {}).text
    plan = [{"tool": "kg_query", "args": {}}]
    assert "since 0099-01-01" in engine.call("recall", {"question": "what runs?", "plan": plan}).text


def test_search_from_year_1_to_year_9999_filters_without_a_warning(engine: Engine) -> None:
    note = engine.call("store", {"content": "We deploy with systemd"}).result.id
    found = engine.call("search", {"query": "deploy", "since": "0001-01-01T00:00:00Z",
                                   "until": "9999-12-31T23:59:59Z"}).result
    assert found.warnings == []
    assert [h.id for h in found.hits] == [note]


def test_a_fact_dated_past_year_9999_by_an_older_engram_can_still_be_read_and_ended(engine: Engine) -> None:
    store = engine.store()
    # What kg_edit wrote before datetimes were checked: 9999-12-31T23:59:59-05:00, stored as year 10000 in UTC.
    now = datetime.now(UTC)
    engine.internals().writer.run(store.add_fact, {
        "id": "f-0000000010", "project": "general", "subject": "comet", "predicate": "returns", "object": "never",
        "valid_from": datetime(9999, 12, 31, 23, 59, 59, tzinfo=timezone(timedelta(hours=-5))), "ended": None,
        "source": "", "created_at": now})

    facts = engine.call("kg_query", {}).result.items
    assert [f.id for f in facts] == ["f-0000000010"]
    assert facts[0].valid_from.year == 9999
    assert [f.id for f in engine.call("wake_up", {}).result.facts] == ["f-0000000010"]

    ended = engine.call("kg_edit", {"action": "end", "fact_id": "f-0000000010"}).result.fact
    assert ended.ended is not None
    assert engine.call("kg_query", {}).result.items == []
    assert [f.id for f in engine.call("kg_query", {"include_ended": True}).result.items] == ["f-0000000010"]


@pytest.mark.parametrize("name", ["engram\x00test", "x" * 300, "x" * 300 + "/docs", "docs/\x00"])
def test_a_path_the_file_system_cannot_name_is_refused_with_an_engram_error(
        engine: Engine, home: Path, name: str) -> None:
    write_tree(home / "docs", {"a.md": "# A\n\nalpha\n"})
    with pytest.raises((IngestError, InvalidArgument)) as err:
        engine.call("ingest_path", {"path": f"{home}/{name}"})
    assert "path" in err.value.message or "folder" in err.value.message
    assert engine.call("status").result.sources == 0


def test_an_include_pattern_of_a_lone_bang_is_refused(engine: Engine, tmp_path: Path) -> None:
    root = write_tree(tmp_path / "docs", {"a.md": "# A\n\nalpha\n"})
    with pytest.raises(InvalidArgument) as err:
        engine.call("ingest_path", {"path": str(root), "include": ["docs/*.md", "!"]})
    assert "'include' pattern '!'" in err.value.message and ".gitignore syntax" in err.value.message
    assert engine.call("status").result.sources == 0


@pytest.mark.parametrize("pattern", ["\\", "[z-a]"])
def test_other_include_patterns_that_do_not_compile_are_refused_naming_them(
        engine: Engine, tmp_path: Path, pattern: str) -> None:
    root = write_tree(tmp_path / "docs", {"a.md": "# A\n\nalpha\n"})
    with pytest.raises(InvalidArgument) as err:
        engine.call("ingest_path", {"path": str(root), "include": [pattern]})
    assert f"'include' pattern {pattern!r}" in err.value.message


def test_a_gitignore_line_that_is_no_pattern_is_skipped_and_the_rest_still_applies(
        engine: Engine, tmp_path: Path) -> None:
    root = write_tree(tmp_path / "docs", {".gitignore": "!\n*.log\n[z-a]\n", "a.md": "# A\n\nalpha\n",
                                          "debug.log": "noise\n"})
    engine.call("ingest_path", {"path": str(root)})
    assert [s.path for s in engine.call("list_sources", {}).result.items] == [".gitignore", "a.md"]


def test_an_exclude_setting_that_is_no_gitignore_pattern_is_named_when_ingesting(paths: Paths, tmp_path: Path) -> None:
    root = write_tree(tmp_path / "docs", {"a.md": "# A\n\nalpha\n"})
    settings = Settings(ingest=IngestSettings(exclude=["!"]))
    with Engine(paths, settings, embedder=HashingEmbedder()) as engine:
        with pytest.raises(SettingsError) as err:
            engine.call("ingest_path", {"path": str(root)})
        assert "ingest.exclude" in err.value.message and "'!'" in err.value.message


@pytest.mark.parametrize("argument", ["start_line", "end_line"])
@pytest.mark.parametrize("value", [2**31, 10**30])
def test_line_numbers_beyond_any_file_are_refused_naming_the_argument(
        engine: Engine, argument: str, value: int) -> None:
    engine.call("ingest_content", {"content": "# A\n\nalpha\n", "title": "a"})
    with pytest.raises(InvalidArgument) as err:
        engine.call("file_chunks", {"source": "content:a", argument: value})
    assert f"argument '{argument}'" in err.value.message


def test_a_search_tag_with_a_lone_surrogate_is_refused_naming_it(engine: Engine) -> None:
    with pytest.raises(InvalidArgument) as err:
        engine.call("search", {"query": "deploy", "tags": ["infra", "\ud800"]})
    assert "argument 'tags.1'" in err.value.message
    err.value.message.encode("utf-8")  # the refusal itself can go out as JSON


@pytest.mark.parametrize("tool", ["\ud800", "x" * 500])
def test_a_plan_step_naming_an_odd_tool_is_refused_with_a_message_that_can_be_sent(engine: Engine, tool: str) -> None:
    with pytest.raises(InvalidArgument) as err:
        engine.call("recall", {"question": "q", "plan": [{"tool": tool, "args": {}}]})
    assert "plan step 1" in err.value.message.lower() and len(err.value.message) < 400
    err.value.message.encode("utf-8")


def _nested(depth: int) -> list:
    outer: list = []
    inner = outer
    for _ in range(depth):
        inner.append([])
        inner = inner[0]
    return outer


def test_deeply_nested_arguments_are_refused_with_a_short_message(engine: Engine) -> None:
    with pytest.raises(InvalidArgument) as err:
        engine.call("search", {"query": _nested(5000)})
    assert "argument 'query'" in err.value.message and len(err.value.message) < 400
    with pytest.raises(InvalidArgument) as err:
        engine.call("recall", {"question": "q", "plan": [{"tool": "search", "args": {"query": _nested(5000)}}]})
    assert err.value.message.startswith("Plan step 1 (search): ") and len(err.value.message) < 400


def _break_memories_table(paths: Paths) -> None:
    """Remove the data files of the default workspace's memories table (its manifest still names them)."""
    data = paths.workspace_dir("default") / "lance" / "memories.lance" / "data"
    files = list(data.iterdir())
    assert files
    for file in files:
        file.unlink()


def test_a_store_that_cannot_be_read_says_so_without_its_folder_or_filter(
        engine: Engine, paths: Paths, caplog: pytest.LogCaptureFixture) -> None:
    note = engine.call("store", {"content": "We deploy with systemd"}).result.id
    _break_memories_table(paths)
    with caplog.at_level(logging.WARNING), pytest.raises(StoreError) as err:
        engine.call("get_memory", {"ids": [note]})
    assert "workspace 'default'" in err.value.message and "Engram's log" in err.value.message
    assert str(paths.data_dir) not in err.value.message and "lance" not in err.value.message
    assert note not in err.value.message  # the filter text (id IN ('…')) stays in the log
    assert any("workspaces/default/lance" in r.getMessage() for r in caplog.records)  # the details: in the log

    warnings = engine.call("search", {"query": "deploy"}).result.warnings
    assert warnings and all(str(paths.data_dir) not in w and "lance" not in w for w in warnings)


def test_a_damaged_workspace_file_is_reported_without_the_data_folder(paths: Paths) -> None:
    folder = paths.workspace_dir("work")
    folder.mkdir(parents=True)
    (folder / "workspace.json").write_text("{not json")
    with Engine(paths, Settings(), embedder=HashingEmbedder()) as engine:
        with pytest.raises(WorkspaceError) as err:
            engine.call("status", {"workspace": "work"})
    assert "'work'" in err.value.message and str(paths.data_dir) not in err.value.message


class BrokenEmbedder(HashingEmbedder):
    """An embedder with a bug: it fails with a library error that names an internal file."""

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        raise RuntimeError("tensor mismatch in /opt/engram/internal/model.gguf")


def test_a_recall_step_that_fails_unexpectedly_reports_no_library_text(paths: Paths) -> None:
    with Engine(paths, Settings(), embedder=BrokenEmbedder()) as engine:
        result = engine.call("recall", {"question": "q", "plan": [{"tool": "search", "args": {"query": "deploy"}}]})
    (step,) = result.result.steps
    assert step.error is not None and "Engram's log" in step.error
    assert "/opt/engram" not in step.error and "tensor" not in step.error
    assert json.dumps(result.result.model_dump(mode="json")).count("/opt/engram") == 0

