"""The tool registry: each tool is a row function, a formatter, and what it may do.

Argument models are derived from the row functions' signatures (``args_model``), so the MCP
server, the CLI and recall's plan validator all check exactly what the row function accepts.
Calls from outside add two arguments that are not the row function's: ``workspace`` and, for
tools whose output is text, ``max_chars``.
"""

from __future__ import annotations

import inspect
import reprlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from ..errors import InvalidArgument
from ..settings import WORKSPACE_PATTERN
from . import formats, overview, reads, writes


@dataclass(frozen=True)
class Tool:
    name: str
    rows: Callable[..., BaseModel]
    render: Callable[[Any, int], str]
    write: bool = False
    destructive: bool = False
    idempotent: bool = False
    #: Whether the text answer can grow with the data, so callers may cap it with ``max_chars``.
    budgeted: bool = False

    @property
    def summary(self) -> str:
        return (inspect.getdoc(self.rows) or "").split("\n")[0]


TOOLS: dict[str, Tool] = {t.name: t for t in (
    Tool("search", reads.search, formats.format_search, idempotent=True, budgeted=True),
    Tool("get_memory", reads.get_memory, formats.format_memories, idempotent=True, budgeted=True),
    Tool("neighbors", reads.neighbors, formats.format_neighbors, idempotent=True, budgeted=True),
    Tool("file_chunks", reads.file_chunks, formats.format_file_chunks, idempotent=True, budgeted=True),
    Tool("file_summary", reads.file_summary, formats.format_file_summary, idempotent=True, budgeted=True),
    Tool("list_sources", reads.list_sources, formats.format_sources, idempotent=True, budgeted=True),
    Tool("kg_query", reads.kg_query, formats.format_facts, idempotent=True, budgeted=True),
    Tool("graph_scope", reads.graph_scope, formats.format_graph_scope, idempotent=True),
    Tool("status", overview.status, formats.format_status, idempotent=True),
    Tool("device_context", overview.device_context, formats.format_device, idempotent=True),
    Tool("wake_up", overview.wake_up, formats.format_wake_up, idempotent=True, budgeted=True),
    Tool("store", writes.store, formats.format_stored, write=True),
    Tool("delete", writes.delete, formats.format_deleted, write=True, destructive=True, idempotent=False),
    Tool("kg_edit", writes.kg_edit, formats.format_fact_change, write=True, destructive=True),
    Tool("ingest_content", writes.ingest_content, formats.format_ingest, write=True, idempotent=True),
    Tool("ingest_path", writes.ingest_path, formats.format_ingest, write=True, idempotent=True),
)}

MaxChars = Annotated[int, Field(ge=1200, le=12000, description="Answer length cap in characters.")]
WorkspaceArg = Annotated[str, Field(pattern=f"({WORKSPACE_PATTERN})|^$", max_length=40,
                                    description="Workspace (default: the configured one).")]
RunArg = Annotated[str | None, Field(min_length=1, max_length=200, pattern=r"^[\x21-\x7e]+$", description=(
    "Run id: calls of one task share its semantic-preparation allowance (default: this MCP session)."))]
#: The answer-length cap when a caller gives none (``Engine.call`` uses search.max_chars instead).
DEFAULT_MAX_CHARS = 4000
#: Row-function parameters that size the output: passed by the engine, never caller or step arguments.
OUTPUT_PARAMETERS = ("max_chars",)
#: Row-function parameters that say which run a call belongs to: caller arguments, never plan-step arguments
#: (a recall's steps belong to the recall's run).
RUN_PARAMETERS = ("run",)
_FORBID = ConfigDict(extra="forbid")


@cache
def args_model(name: str) -> type[BaseModel]:
    """The pydantic model of a tool's row-function arguments (no workspace, no output size)."""
    fn = TOOLS[name].rows
    hints = get_type_hints(fn, include_extras=True)
    fields: dict[str, Any] = {}
    for param in list(inspect.signature(fn).parameters.values())[1:]:
        if param.name in OUTPUT_PARAMETERS or param.name in RUN_PARAMETERS:
            continue
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (hints[param.name], default)
    return create_model(f"{_camel(name)}Args", __config__=_FORBID, **fields)


@cache
def call_model(name: str) -> type[BaseModel]:
    """The arguments a caller passes: the row arguments plus ``workspace``, ``run`` where the row function
    takes one, and, where the answer can grow with the data, ``max_chars``."""
    extra: dict[str, Any] = {"workspace": (WorkspaceArg, "")}
    if "run" in inspect.signature(TOOLS[name].rows).parameters:
        extra["run"] = (RunArg, None)
    if TOOLS[name].budgeted:
        extra["max_chars"] = (MaxChars, DEFAULT_MAX_CHARS)
    return create_model(f"{_camel(name)}Call", __base__=args_model(name), **extra)


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxdict, _SHORT.maxstring, _SHORT.maxother = 2, 4, 4, 60, 60


def _shown(value: Any) -> str:
    """A refused value as a message shows it: at most 80 characters, however long or deeply nested it is."""
    try:
        text = _SHORT.repr(value)
    except ValueError:  # an int too long to convert to text
        return "a value too large to show"
    return text if len(text) <= 80 else text[:77] + "..."


def describe_validation_error(tool: str, exc: ValidationError, accepted: list[str] | None = None) -> str:
    """One message naming every refused argument and what it accepts."""
    problems = []
    for err in exc.errors():
        loc = list(err["loc"])
        arg = ".".join(str(p) for p in loc) or "(arguments)"
        if len(loc) >= 2 and loc[0] == "plan" and isinstance(loc[1], int):
            # recall's plan: name the step as the caller counts it
            where = f"plan step {loc[1] + 1}"
            key = ".".join(str(p) for p in loc[2:]) or "step"
            problems.append(f"{where}: {key}: {err['msg']} (a step is {{\"tool\": ..., \"args\": {{...}}}})")
            continue
        if err["type"] == "extra_forbidden" and len(loc) > 1:
            problems.append(f"argument '{loc[0]}' has an unknown key at {arg}")
            continue
        if err["type"] == "extra_forbidden":
            known = ", ".join(accepted if accepted is not None else call_model(tool).model_fields)
            problems.append(f"unknown argument '{arg}' (accepted: {known})")
        elif err["type"] == "missing":
            problems.append(f"missing required argument '{arg}'")
        else:
            problems.append(f"argument '{arg}' got {_shown(err.get('input'))}: {err['msg']}")
    return f"{tool}: " + "; ".join(problems) + "."


def validate_call(tool: str, arguments: dict[str, Any]) -> BaseModel:
    """Validate a caller's arguments for ``tool``.

    Raises:
        InvalidArgument: unknown tool, or arguments that do not validate (the message names each).
    """
    if tool not in TOOLS:
        raise InvalidArgument(f"Unknown tool '{tool}'. Tools: {', '.join(TOOLS)}.")
    try:
        return call_model(tool).model_validate(arguments)
    except ValidationError as exc:
        raise InvalidArgument(describe_validation_error(tool, exc)) from None


# recall validates its plans against the tools above, so it joins the registry last.
from ..recall.render import format_recall  # noqa: E402
from ..recall.run import recall as _recall  # noqa: E402

TOOLS["recall"] = Tool("recall", _recall, format_recall, idempotent=True, budgeted=True)
