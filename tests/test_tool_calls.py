"""The typed tool calls (``engine.tools``): one method per catalog tool, its parameters the tool's call model,
answering exactly what ``Engine.call`` answers."""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Literal, get_args, get_origin, get_type_hints

import pytest
from pydantic import BaseModel

from engram.core import Engine, ToolOutput
from engram.core.catalog import TOOLS, call_model
from engram.core.errors import InvalidArgument, NotFound
from engram.core.tool_calls import ToolCalls, output_of
from engram.core.tools.results import Deleted, WorkspaceStatus

from .conftest import write_tree


def _plain(tp: Any) -> Any:
    """``tp`` without ``Annotated`` layers (the call model's clamps), unions as sets: what a caller must pass."""
    origin = get_origin(tp)
    if origin is Annotated:
        return _plain(get_args(tp)[0])
    if origin in (typing.Union, types.UnionType):
        return ("union", frozenset(_plain(a) for a in get_args(tp)))
    if origin is Literal:
        return ("literal", frozenset(get_args(tp)))
    if origin is not None:
        return (origin, tuple(_plain(a) for a in get_args(tp)))
    return tp


def drift(tool: str, method: Callable[..., Any] | None) -> list[str]:
    """How ``method`` differs from tool ``tool``'s call model and result: names and order, types, defaults."""
    if method is None:
        return [f"{tool}: no typed method"]
    model = call_model(tool)
    hints = get_type_hints(method)
    params = list(inspect.signature(method).parameters.values())[1:]
    problems = []
    if [p.name for p in params] != list(model.model_fields):
        problems.append(f"{tool}: parameters {[p.name for p in params]} != {list(model.model_fields)}")
    for param in params:
        field = model.model_fields.get(param.name)
        if field is None:
            continue
        if param.name == "max_chars":  # None leaves the size to the settings, as leaving it out of call does
            want_type: Any = _plain(int | None)
            want_default: Any = None
        else:
            want_type = _plain(field.annotation)
            want_default = inspect.Parameter.empty if field.is_required() else field.default
        if _plain(hints[param.name]) != want_type:
            problems.append(f"{tool}.{param.name}: type {hints[param.name]} != {field.annotation}")
        if param.default != want_default or type(param.default) is not type(want_default):
            problems.append(f"{tool}.{param.name}: default {param.default!r} != {want_default!r}")
    answer = get_type_hints(TOOLS[tool].rows)["return"]
    if hints["return"] != ToolOutput[answer]:
        problems.append(f"{tool}: returns {hints['return']} != ToolOutput[{answer.__name__}]")
    return problems


def test_every_catalog_tool_has_a_typed_method_with_its_call_models_parameters_and_result() -> None:
    problems = [p for name in TOOLS for p in drift(name, getattr(ToolCalls, name, None))]
    assert problems == []


def test_the_drift_check_names_a_missing_method_a_renamed_retyped_or_redefaulted_parameter_and_a_wrong_result() \
        -> None:
    class Drifted:
        def neighbors(self, id: str, *, hops: str = "1", reverse: bool = True, lim: int = 10, workspace: str = "",
                      max_chars: int = 4000) -> ToolOutput[WorkspaceStatus]:
            raise AssertionError("never called")

    assert drift("status", None) == ["status: no typed method"]
    assert drift("neighbors", Drifted.neighbors) == [
        "neighbors: parameters ['id', 'hops', 'reverse', 'lim', 'workspace', 'max_chars'] != "
        "['id', 'hops', 'reverse', 'limit', 'workspace', 'max_chars']",
        "neighbors.hops: type <class 'str'> != <class 'int'>",
        "neighbors.hops: default '1' != 1",
        "neighbors.reverse: default True != False",
        "neighbors.max_chars: type <class 'int'> != <class 'int'>",
        "neighbors.max_chars: default 4000 != None",
        "neighbors: returns engram.core.tool_calls.ToolOutput[engram.core.tools.results.WorkspaceStatus] != "
        "ToolOutput[NeighborList]",
    ]


DOC = "# Deploy\n\nWe deploy with ``systemd`` units on the home server.\n\n## Rollback\n\nKeep the previous release.\n"


@pytest.fixture
def filled(engine: Engine, tmp_path: Path) -> dict[str, str]:
    root = write_tree(tmp_path / "ops", {"deploy.md": DOC})
    engine.tools.ingest_path(str(root), project="ops")
    note = engine.tools.store("Rollbacks take two minutes with systemd", project="ops", tags=["ops"])
    engine.tools.kg_edit("add", subject="server", predicate="runs", object="systemd")
    return {"doc": (root / "deploy.md").resolve().as_posix(), "note": note.result.id}


def _same(typed: ToolOutput[BaseModel], by_name: ToolOutput[BaseModel]) -> None:
    assert (typed.tool, typed.workspace, typed.text) == (by_name.tool, by_name.workspace, by_name.text)
    timing = {"seconds"}  # how long a recall took: the one field two identical calls may differ in
    assert typed.result.model_dump(exclude=timing) == by_name.result.model_dump(exclude=timing)


def test_typed_reads_answer_exactly_what_call_by_name_answers(engine: Engine, filled: dict[str, str]) -> None:
    tools = engine.tools
    pairs: list[tuple[ToolOutput[BaseModel], ToolOutput[BaseModel]]] = [
        (tools.search("how do we roll back", limit=3), engine.call("search", {"query": "how do we roll back",
                                                                             "limit": 3})),
        (tools.search("systemd", max_chars=1200), engine.call("search", {"query": "systemd", "max_chars": 1200})),
        (tools.get_memory([filled["note"]]), engine.call("get_memory", {"ids": [filled["note"]]})),
        (tools.neighbors(filled["note"]), engine.call("neighbors", {"id": filled["note"]})),
        (tools.file_chunks(filled["doc"]), engine.call("file_chunks", {"source": filled["doc"]})),
        (tools.file_summary(filled["doc"]), engine.call("file_summary", {"source": filled["doc"]})),
        (tools.list_sources(project="ops"), engine.call("list_sources", {"project": "ops"})),
        (tools.kg_query(subject="SERVER"), engine.call("kg_query", {"subject": "SERVER"})),
        (tools.graph_scope(project="ops"), engine.call("graph_scope", {"project": "ops"})),
        (tools.wake_up(project="ops", limit=2), engine.call("wake_up", {"project": "ops", "limit": 2})),
        (tools.recall("how do we roll back?"), engine.call("recall", {"question": "how do we roll back?"})),
    ]
    for typed, by_name in pairs:
        _same(typed, by_name)
    status = tools.status()
    assert isinstance(status.result, WorkspaceStatus) and status.result.memories == 2
    assert status.text == engine.call("status", {}).text
    assert len(tools.search("systemd", max_chars=1200).text) <= 1200


def test_typed_writes_write_as_call_by_name_does(engine: Engine) -> None:
    stored = engine.tools.store("The on-call lead approves rollbacks.", project="ops", workspace="team")
    assert (stored.tool, stored.workspace, stored.result.project) == ("store", "team", "ops")
    deleted = engine.tools.delete(ids=[stored.result.id], workspace="team")
    assert deleted.result.ids == [stored.result.id]
    assert deleted.text == f"deleted 1 memory in team: {stored.result.id}"
    ingested = engine.tools.ingest_content("Backups are kept for 30 days.", "Retention", workspace="team")
    assert ingested.result.chunks_written == 1
    assert engine.tools.status(workspace="team").result.memories == 1


def test_typed_calls_refuse_what_call_by_name_refuses_with_the_same_message(engine: Engine) -> None:
    with pytest.raises(InvalidArgument) as typed:
        engine.tools.search("", limit=99)
    with pytest.raises(InvalidArgument) as by_name:
        engine.call("search", {"query": "", "limit": 99})
    assert typed.value.message == by_name.value.message
    assert "argument 'limit'" in typed.value.message
    with pytest.raises(InvalidArgument, match="not both"):
        engine.tools.delete()
    with pytest.raises(NotFound):
        engine.tools.get_memory(["m-nope"])


def test_output_of_gives_a_jobs_answer_its_type_and_refuses_another(engine: Engine) -> None:
    answer: object = engine.call("status", {})
    assert output_of(answer, WorkspaceStatus).result.workspace == "default"
    with pytest.raises(TypeError, match="expected a Deleted result, got WorkspaceStatus"):
        output_of(answer, Deleted)
    with pytest.raises(TypeError, match="expected a ToolOutput, got NoneType"):
        output_of(None, WorkspaceStatus)
