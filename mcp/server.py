"""Engram's MCP server on the official SDK (``MCPServer``).

The same server definition serves three ways: in the headless service (Streamable HTTP), in
``engram mcp --standalone`` (stdio, engine in-process) and in the stdio launcher, whose backend
forwards each call to the service. A tool's input schema is the engine's own call model (the row
function's arguments plus ``workspace`` and ``max_chars``); the SDK passes arguments through
untouched and the engine validates them, so refusals read the same everywhere.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp.types import CallToolResult, ToolAnnotations
from pydantic import ConfigDict

from engram.core import Engine, EngramError
from engram.core.catalog import TOOLS, call_model, input_schema
from engram.core.tools.caller_paths import resolve_caller_paths
from engram.core.tools.descriptions import DESCRIPTIONS, INSTRUCTIONS

from .errors import ToolFailure, tool_error_result

logger = logging.getLogger(__name__)



class ToolBackend(Protocol):
    """Runs one tool call and returns its text, or raises ``EngramError`` with a message for the caller."""

    async def call(self, tool: str, arguments: dict[str, Any]) -> str: ...


class EngineBackend:
    """Runs tools on an in-process engine, off the event loop (blocking reads and writes in threads)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    async def call(self, tool: str, arguments: dict[str, Any]) -> str:
        logger.info("tool %s called", tool)
        out = await anyio.to_thread.run_sync(lambda: self.engine.call(tool, arguments))
        return out.text


class _PassThrough(ArgModelBase):
    """Hands the caller's arguments to the backend unvalidated: the engine validates them itself."""

    model_config = ConfigDict(extra="allow")

    def model_dump_one_level(self) -> dict[str, Any]:
        return {"arguments": dict(self.model_extra or {})}


def version() -> str:
    try:
        return metadata.version("engram")
    except metadata.PackageNotFoundError:
        return "0"


def tool_annotations(tool: str) -> ToolAnnotations:
    spec = TOOLS[tool]
    return ToolAnnotations(readOnlyHint=not spec.write, destructiveHint=spec.destructive if spec.write else None,
                           idempotentHint=spec.idempotent, openWorldHint=False)


class SessionRuns:
    """The default run of each MCP session: calls that name no ``run`` share their session's allowance.

    Over stdio a server process serves one connection (one editor window's launcher), so its session is
    one run (``stdio_run``). Over HTTP the ``Mcp-Session-Id`` header names the session where the client
    keeps one; a sessionless HTTP call without ``run`` belongs to no run and is not budgeted (our
    launcher always sends its run).
    """

    def __init__(self, stdio_run: str | None) -> None:
        self.stdio_run = stdio_run

    def run_id(self, ctx: Context) -> str | None:
        if self.stdio_run is not None:
            return self.stdio_run
        try:
            request = ctx.request_context.request
        except ValueError:  # outside a request
            return None
        session_id = (getattr(request, "headers", None) or {}).get("mcp-session-id")
        return f"mcp-{session_id}"[:200] if session_id else None


def _tool_function(backend: ToolBackend, tool: str, runs: SessionRuns,
                   cwd: Path | None) -> Callable[..., Awaitable[str | CallToolResult]]:
    takes_run = "run" in call_model(tool).model_fields

    async def run(arguments: dict[str, Any], ctx: Context) -> str | CallToolResult:
        if takes_run and arguments.get("run") is None and (default := runs.run_id(ctx)) is not None:
            arguments = {**arguments, "run": default}
        if cwd is not None:
            arguments = resolve_caller_paths(tool, arguments, cwd)
        try:
            return await backend.call(tool, arguments)
        except EngramError as exc:
            logger.info("tool %s failed: %r", tool, exc.message)  # %r: the caller's text stays on one line
            return tool_error_result(tool, ToolFailure(title=exc.title, message=exc.message))
        except Exception:  # top level of a tool call: a bug, not bad input; its text (paths, SQL) stays in the log
            logger.exception("tool %s failed unexpectedly", tool)
            return tool_error_result(tool, ToolFailure(
                title="", message=f"Internal error: {tool} failed unexpectedly (the details are in Engram's log). "
                                  "Try again; if it keeps failing, please report it with the log."))

    run.__name__ = tool
    return run


def build_server(backend: ToolBackend, *, stdio: bool = False) -> MCPServer:
    """An ``MCPServer`` exposing every engine tool through ``backend``.

    ``stdio``: the server will serve one stdio connection, whose calls form one run by default, and whose
    relative paths are resolved against this process's folder (the caller's).
    """
    runs = SessionRuns(f"mcp-{uuid.uuid4().hex}" if stdio else None)
    # Over stdio this process was started by the caller, in the caller's folder: relative paths mean that folder.
    cwd = Path.cwd() if stdio else None
    tools = [
        Tool(fn=_tool_function(backend, name, runs, cwd), name=name, description=DESCRIPTIONS[name],
             parameters=input_schema(name), fn_metadata=FuncMetadata(arg_model=_PassThrough), is_async=True,
             context_kwarg="ctx", annotations=tool_annotations(name))
        for name in TOOLS
    ]
    return MCPServer(name="engram", title="Engram", instructions=INSTRUCTIONS, version=version(), tools=tools,
                     log_level="WARNING")
