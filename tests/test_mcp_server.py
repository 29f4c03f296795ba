"""The MCP server through a real SDK client (in memory): tools, schemas, annotations, refusals."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client

from engram.core import Engine
from engram.core.catalog import TOOLS, call_model, input_schema
from engram.mcp.server import EngineBackend, build_server

from .conftest import write_tree

pytestmark = pytest.mark.anyio

READS = {"review", "search", "get_memory", "neighbors", "file_chunks", "file_summary", "list_sources", "kg_query",
         "graph_scope", "status", "device_context", "wake_up", "recall"}


async def test_every_engine_tool_is_listed_with_its_schema_and_hints(engine: Engine) -> None:
    async with Client(build_server(EngineBackend(engine))) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
    assert set(listed) == set(TOOLS) and len(listed) == 20
    for name, tool in listed.items():
        assert tool.input_schema == input_schema(name)
        assert set(tool.input_schema["properties"]) == set(call_model(name).model_fields)
        assert "workspace" in tool.input_schema["properties"]
        assert tool.annotations.read_only_hint is (name in READS)
        assert tool.description and len(tool.description) < 160
    assert listed["delete"].annotations.destructive_hint is True
    assert listed["forget"].annotations.destructive_hint is True
    assert listed["kg_edit"].annotations.destructive_hint is True
    assert listed["store"].annotations.destructive_hint is False
    assert listed["search"].annotations.idempotent_hint is True
    assert listed["search"].input_schema["properties"]["limit"] == {
        "maximum": 50, "minimum": 1, "type": "integer", "description": "Results to return (1–50; default search.limit)."}


async def test_tools_answer_with_the_engines_text(engine: Engine, tmp_path: Path) -> None:
    root = write_tree(tmp_path / "p", {"guide.md": "# Guide\n\nRestart the worker with ``systemctl restart``."})
    async with Client(build_server(EngineBackend(engine))) as client:
        ingest = await client.call_tool("ingest_path", {"path": str(root), "project": "p"})
        assert not ingest.is_error and ingest.content[0].text.startswith("ingested ")
        found = await client.call_tool("search", {"query": "restart the worker", "max_chars": 1200})
    assert not found.is_error
    assert found.content[0].text == engine.call("search", {"query": "restart the worker", "max_chars": 1200}).text


async def test_recall_max_chars_is_the_mcp_recalls_default_size(engine: Engine) -> None:
    for i in range(8):
        engine.call("ingest_content", {"title": f"runbook {i}", "content": "\n\n".join(
            f"Step {j}: deploy the worker, roll it back, restart it on host {i}-{j}." for j in range(30))})
    question = "deploy roll back restart the worker"
    async with Client(build_server(EngineBackend(engine))) as client:
        engine.settings.recall.max_chars = 12000
        wide = (await client.call_tool("recall", {"question": question})).content[0].text
        engine.settings.recall.max_chars = 1200
        narrow = (await client.call_tool("recall", {"question": question})).content[0].text
        asked = (await client.call_tool("recall", {"question": question, "max_chars": 6000})).content[0].text
    assert len(narrow) <= 1200 < len(wide) <= 12000
    assert 1200 < len(asked) <= 6000, "a caller's max_chars still wins"


@pytest.mark.parametrize(("tool", "arguments", "message"), [
    ("search", {"query": "x", "limit": 0}, "argument 'limit' got 0"),
    ("search", {"query": 5}, "argument 'query' got 5"),
    ("search", {"query": "x", "extra": 1}, "unknown argument 'extra'"),
    ("search", {"query": "x", "workspace": "nope"}, "Workspace 'nope' does not exist yet"),
    ("get_memory", {"ids": ["000000000000"]}, "No memory with id 000000000000"),
    ("file_chunks", {"source": "/never/seen.md"}, "was never ingested"),
    ("store", {"content": "x", "max_chars": 2000}, "unknown argument 'max_chars'"),
    ("ingest_path", {"path": "~/no/such/folder"}, "does not exist"),
])
async def test_bad_input_is_a_tool_error_and_the_server_keeps_serving(engine: Engine, tool: str, arguments: dict,
                                                                      message: str) -> None:
    async with Client(build_server(EngineBackend(engine))) as client:
        result = await client.call_tool(tool, arguments)
        assert result.is_error and message in result.content[0].text
        after = await client.call_tool("status", {})
    assert not after.is_error and "0 memories" in after.content[0].text


async def test_every_tool_stays_inside_its_workspace(engine: Engine) -> None:
    async with Client(build_server(EngineBackend(engine))) as client:
        mine = await client.call_tool("store", {"content": "private to work", "workspace": "work"})
        other = await client.call_tool("store", {"content": "private to default"})
        memory_id = mine.content[0].text.split()[2]
        in_default = await client.call_tool("get_memory", {"ids": [memory_id]})
        in_work = await client.call_tool("get_memory", {"ids": [memory_id], "workspace": "work"})
        found = await client.call_tool("search", {"query": "private", "workspace": "work"})
    assert not other.is_error
    assert in_default.is_error and not in_work.is_error
    assert "private to default" not in found.content[0].text and "private to work" in found.content[0].text


class Recorder:
    def __init__(self) -> None:
        self.arguments: list[dict] = []

    async def call(self, tool: str, arguments: dict) -> str:
        self.arguments.append(arguments)
        return "ok"


async def test_calls_of_one_stdio_session_share_a_default_run_and_a_callers_run_wins() -> None:
    first, second = Recorder(), Recorder()
    async with Client(build_server(first, stdio=True), mode="legacy") as client:
        await client.call_tool("search", {"query": "a"})
        await client.call_tool("recall", {"question": "b"})
        await client.call_tool("search", {"query": "c", "run": "task-7"})
        await client.call_tool("status", {})
    async with Client(build_server(second, stdio=True), mode="legacy") as client:
        await client.call_tool("search", {"query": "a"})
    runs = [a.get("run") for a in first.arguments]
    assert runs[0] and runs[0].startswith("mcp-") and runs[1] == runs[0] and runs[2] == "task-7"
    assert "run" not in first.arguments[3]  # status takes no run
    assert second.arguments[0]["run"] != runs[0]


class Failing:
    """A backend with a bug: its calls fail with a library error that names an internal file."""

    def __init__(self) -> None:
        self.calls = 0

    async def call(self, tool: str, arguments: dict) -> str:
        self.calls += 1
        if self.calls == 1:
            raise OSError("[Errno 36] File name too long: '/srv/engram/data/workspaces/x/lance/facts.lance'")
        return "ok"


async def test_an_unexpected_failure_is_a_tool_error_that_keeps_library_text_in_the_log(
        caplog: pytest.LogCaptureFixture) -> None:
    backend = Failing()
    async with Client(build_server(backend)) as client:
        failed = await client.call_tool("status", {})
        after = await client.call_tool("status", {})
    assert failed.is_error
    assert "/srv/engram" not in failed.content[0].text and "Errno" not in failed.content[0].text
    assert "status failed unexpectedly" in failed.content[0].text and "Engram's log" in failed.content[0].text
    assert any("/srv/engram" in str(r.exc_info and r.exc_info[1]) for r in caplog.records)
    assert not after.is_error and after.content[0].text == "ok"
