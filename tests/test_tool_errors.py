"""A tool's error as it crosses MCP: the text agents read, and the title and message the launcher passes on."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client

from engram.core.errors import InvalidArgument
from engram.mcp.errors import ERROR_META, RemoteToolError, remote_tool_error
from engram.mcp.server import build_server

pytestmark = pytest.mark.anyio


class Refusing:
    """A backend that refuses every call as the engine would, or fails as a bug would."""

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        if tool == "status":
            raise OSError("[Errno 5] Input/output error: '/srv/engram/data'")
        raise InvalidArgument("argument 'limit' got 0; it accepts 1–50.")


class Forwarding:
    """The launcher's way: each call goes to another MCP server (here in memory), its errors raised again."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        result = await self.client.call_tool(tool, arguments)
        if result.is_error:
            raise remote_tool_error(result)
        return "\n".join(c.text for c in result.content if c.type == "text")


REFUSED = "Error executing tool search: Invalid argument: argument 'limit' got 0; it accepts 1–50."
FAILED = ("Error executing tool status: Internal error: status failed unexpectedly (the details are in Engram's log). "
          "Try again; if it keeps failing, please report it with the log.")


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_refusal_reads_as_before_and_carries_its_title_and_message(mode: str) -> None:
    async with Client(build_server(Refusing()), mode=mode) as client:
        refused = await client.call_tool("search", {"query": "x", "limit": 0})
        failed = await client.call_tool("status", {})
    assert refused.is_error and [c.text for c in refused.content if c.type == "text"] == [REFUSED]
    assert refused.meta is not None and refused.meta[ERROR_META] == {
        "title": "Invalid argument", "message": "argument 'limit' got 0; it accepts 1–50."}
    error = remote_tool_error(refused)
    assert (error.title, error.message) == ("Invalid argument", "argument 'limit' got 0; it accepts 1–50.")
    assert failed.is_error and [c.text for c in failed.content if c.type == "text"] == [FAILED]
    assert (remote_tool_error(failed).title, remote_tool_error(failed).message) == ("", FAILED.split(": ", 1)[1])


async def test_the_launcher_passes_the_services_error_on_unchanged() -> None:
    async with (Client(build_server(Refusing())) as service,
                Client(build_server(Forwarding(service), stdio=True), mode="legacy") as editor):
        refused = await editor.call_tool("search", {"query": "x", "limit": 0})
        failed = await editor.call_tool("status", {})
    assert [c.text for c in refused.content if c.type == "text"] == [REFUSED]
    assert [c.text for c in failed.content if c.type == "text"] == [FAILED]


async def test_an_error_the_sdk_reports_itself_keeps_its_text() -> None:
    async with Client(build_server(Refusing())) as client:
        unknown = await client.call_tool("no_such_tool", {})
    error = remote_tool_error(unknown)
    assert isinstance(error, RemoteToolError) and (error.title, error.message) == ("", "Unknown tool: no_such_tool")
