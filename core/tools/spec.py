"""What a tool is: a row function, a formatter, and what it may do; its argument models.

Argument models are derived from the row functions' signatures (``args_model``), so the MCP
server, the CLI and recall's plan validator all check exactly what the row function accepts.
Calls from outside add two arguments that are not the row function's: ``workspace`` and, for
tools whose output can grow with the data, ``max_chars``. The table of tools is ``core/catalog.py``.
"""

from __future__ import annotations

import inspect
import reprlib
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Any, Literal, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from ..settings import WORKSPACE_PATTERN


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
    #: The settings group whose ``max_chars`` caps the answer when the caller names no size.
    sized_by: Literal["search", "recall"] = "search"

    @property
    def summary(self) -> str:
        return (inspect.getdoc(self.rows) or "").split("\n")[0]


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
def args_model(tool: Tool) -> type[BaseModel]:
    """The pydantic model of a tool's row-function arguments (no workspace, no output size)."""
    fn = tool.rows
    hints = get_type_hints(fn, include_extras=True)
    fields: dict[str, Any] = {}
    for param in list(inspect.signature(fn).parameters.values())[1:]:
        if param.name in OUTPUT_PARAMETERS or param.name in RUN_PARAMETERS:
            continue
        default = ... if param.default is inspect.Parameter.empty else param.default
        fields[param.name] = (hints[param.name], default)
    return create_model(f"{_camel(tool.name)}Args", __config__=_FORBID, **fields)


@cache
def call_model(tool: Tool) -> type[BaseModel]:
    """The arguments a caller passes: the row arguments plus ``workspace``, ``run`` where the row function
    takes one, and, where the answer can grow with the data, ``max_chars``."""
    extra: dict[str, Any] = {"workspace": (WorkspaceArg, "")}
    if "run" in inspect.signature(tool.rows).parameters:
        extra["run"] = (RunArg, None)
    if tool.budgeted:
        extra["max_chars"] = (MaxChars, DEFAULT_MAX_CHARS)
    return create_model(f"{_camel(tool.name)}Call", __base__=args_model(tool), **extra)


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


def describe_validation_error(tool: str, exc: ValidationError, accepted: list[str]) -> str:
    """One message naming every refused argument and what it accepts (``accepted``: the argument names)."""
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
            known = ", ".join(accepted)
            problems.append(f"unknown argument '{arg}' (accepted: {known})")
        elif err["type"] == "missing":
            problems.append(f"missing required argument '{arg}'")
        else:
            problems.append(f"argument '{arg}' got {_shown(err.get('input'))}: {err['msg']}")
    return f"{tool}: " + "; ".join(problems) + "."
