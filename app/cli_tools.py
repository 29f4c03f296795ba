"""CLI commands for the engine's tools, generated from the tools' argument models.

Each command maps to one tool; its options are the tool's arguments (``--source-prefix`` for
``source_prefix``), with the positional ones listed here. Values are passed to the engine as text
and validated there, so the CLI accepts exactly what the MCP tools accept.
"""

from __future__ import annotations

import argparse
import types
import typing
from dataclasses import dataclass
from typing import Any, Literal

from engram.core.catalog import TOOLS, args_model, call_model


@dataclass(frozen=True)
class ToolCommand:
    command: str
    tool: str
    positional: tuple[str, ...] = ()
    help: str = ""


COMMANDS = (
    ToolCommand("ingest", "ingest_path", ("path",), "Ingest (or re-sync) a folder or file"),
    ToolCommand("ingest-text", "ingest_content", ("title",), "Ingest a text (from --content or standard input)"),
    ToolCommand("search", "search", ("query",), "Hybrid search of your memories"),
    ToolCommand("get", "get_memory", ("ids",), "Show memories in full by id"),
    ToolCommand("neighbors", "neighbors", ("id",), "Memories connected to one memory"),
    ToolCommand("chunks", "file_chunks", ("source",), "The chunks of an ingested file"),
    ToolCommand("summary", "file_summary", ("source",), "Summary and outline of an ingested file"),
    ToolCommand("sources", "list_sources", (), "List ingested files and texts"),
    ToolCommand("facts", "kg_query", (), "Query knowledge-graph facts"),
    ToolCommand("graph", "graph_scope", (), "The shape of the memory graph"),
    ToolCommand("status", "status", (), "What the workspace holds"),
    ToolCommand("device", "device_context", (), "This computer as the models see it"),
    ToolCommand("wake-up", "wake_up", (), "Orientation: recent notes and current facts"),
    ToolCommand("review", "review", (), "Repeats, near duplicates stored apart, and superseded memories"),
    ToolCommand("remember", "store", ("content",), "Remember a note"),
    ToolCommand("delete", "delete", ("ids",), "Delete memories by id (or --source to forget a file)"),
)
#: ``engram fact add|end`` maps to kg_edit; its positionals depend on the action.
FACT_COMMAND = "fact"


def _unwrap(annotation: Any) -> tuple[Any, bool]:
    """(the inner type, whether it is a list) of an annotation such as ``list[str] | None``."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        inner = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _unwrap(inner[0])
    if origin is list:
        inner, _ = _unwrap(typing.get_args(annotation)[0])
        return inner, True
    return annotation, False


def _fields(tool: str) -> dict[str, Any]:
    """The options of ``tool`` on the command line: its row arguments, and ``run`` where it takes one."""
    fields = dict(args_model(tool).model_fields)
    if "run" in call_model(tool).model_fields:
        fields["run"] = call_model(tool).model_fields["run"]
    return fields


def add_tool_arguments(parser: argparse.ArgumentParser, tool: str, positional: tuple[str, ...]) -> None:
    """Add one argument per field of ``tool``'s argument model to ``parser``."""
    for name, field in _fields(tool).items():
        inner, is_list = _unwrap(field.annotation)
        help_text = field.description or ""
        choices = list(typing.get_args(inner)) if typing.get_origin(inner) is Literal else None
        if name in positional:
            nargs = ("+" if field.is_required() else "*") if is_list else None  # `delete --source X` takes no ids
            parser.add_argument(name, nargs=nargs, help=help_text, metavar=name.upper())
            continue
        flag = "--" + name.replace("_", "-")
        if inner is bool and field.default is True:  # on unless turned off: --keep-out / --no-keep-out
            parser.add_argument(flag, dest=name, action=argparse.BooleanOptionalAction, default=None, help=help_text)
        elif inner is bool:
            parser.add_argument(flag, dest=name, action="store_true", default=None, help=help_text)
        elif is_list:
            parser.add_argument(flag, dest=name, action="append", choices=choices, help=help_text + " (repeatable)")
        else:
            parser.add_argument(flag, dest=name, choices=choices, help=help_text,
                                metavar=None if choices else name.upper())


def tool_arguments(namespace: argparse.Namespace, tool: str) -> dict[str, Any]:
    """The arguments the user gave for ``tool`` (unset options left out, so the tool's defaults apply)."""
    fields = _fields(tool)
    return {k: v for k, v in vars(namespace).items() if k in fields and v is not None}


def tool_summary(tool: str) -> str:
    return TOOLS[tool].summary
