"""Where the command line's tool calls run: in the data folder's service when one runs, else in this process.

Either way a call returns the same thing (``DirectOutput``: the result as JSON and its text), so the
commands print the same output and exit with the same status wherever the call ran.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Protocol

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from engram.core import Engine, Paths, Settings
from engram.core.catalog import result_model
from engram.core.events import EngineEvent, IngestProgress, IngestProgressed, Listener
from engram.core.tool_calls import ToolCalls, ToolOutput
from engram.mcp.service_client import DirectOutput, ServiceClient

ProgressFn = Callable[[IngestProgress], None]


class Calls(Protocol):
    def call(self, tool: str, arguments: dict[str, Any], progress: ProgressFn | None = None) -> DirectOutput: ...

    def context_pack(self, request: dict[str, Any], workspace: str = "") -> dict[str, Any]: ...

    def transfer(self, action: str, arguments: dict[str, Any]) -> dict[str, Any]: ...


class LocalCalls:
    """Calls on an engine opened by this process (no service runs for the data folder)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def call(self, tool: str, arguments: dict[str, Any], progress: ProgressFn | None = None) -> DirectOutput:
        unsubscribe = self.engine.subscribe(_own_progress(progress)) if progress is not None else None
        try:
            out = self.engine.call(tool, arguments)
        finally:
            if unsubscribe is not None:
                unsubscribe()
        return DirectOutput(out.tool, out.workspace, out.result.model_dump(mode="json"), out.text)

    def context_pack(self, request: dict[str, Any], workspace: str = "") -> dict[str, Any]:
        return self.engine.context_pack(request, workspace=workspace).model_dump(mode="json")

    def transfer(self, action: str, arguments: dict[str, Any]) -> dict[str, Any]:
        out = self.engine.transfer(action, arguments)
        return {"result": out.model_dump(mode="json"), "text": out.summary()}


def typed(calls: Calls) -> ToolCalls:
    """``calls`` as one typed method per tool (``engine.tools`` when the engine is this process's): the arguments
    go as JSON, the answer comes back as the tool's own result model, so a command reads checked fields."""
    if isinstance(calls, LocalCalls):
        return calls.engine.tools

    def call(tool: str, arguments: dict[str, Any]) -> ToolOutput[BaseModel]:
        out = calls.call(tool, to_jsonable_python(arguments))
        return ToolOutput(out.tool, out.workspace, result_model(tool).model_validate(out.result), out.text)

    return ToolCalls(call)


def _own_progress(progress: ProgressFn) -> Listener:
    """An engine listener passing on the progress of ingests run on this thread (this call's), no other's."""
    caller = threading.get_ident()

    def listen(event: EngineEvent) -> None:
        if isinstance(event, IngestProgressed) and threading.get_ident() == caller:
            progress(event.progress)

    return listen


@contextmanager
def open_calls(paths: Paths, settings: Settings, environ: Mapping[str, str] | None = None) -> Iterator[Calls]:
    """The running service's calls, or (when none runs) an engine of this process on ``environ`` (the CLI's
    environment: a shared workspace's keys may come from it), closed on exit.

    Raises:
        TokenMismatch, ServiceStopped: a service holds the folder but cannot be used.
    """
    client = ServiceClient.find(paths)
    if client is not None:
        with client:
            yield client
        return
    with Engine(paths, settings, environ=environ) as engine:
        yield LocalCalls(engine)
