"""The tool catalog: every tool Engram offers, built from its row functions, recall included.

This is the one place that knows every tool. The MCP server, the CLI and the engine look tools up here;
recall is handed the evidence reads its plans may use, so tools and recall never import each other.
"""

from __future__ import annotations

from typing import Any, get_type_hints

from pydantic import BaseModel, ValidationError

from .errors import InvalidArgument
from .recall.plan import EVIDENCE_TOOLS, PlanTools
from .recall.render import format_recall
from .recall.run import recall_rows
from .tools import forget, formats, overview, reads, review, tidy, upkeep_formats, writes
from .tools.spec import Tool, describe_validation_error
from .tools.spec import args_model as _args_model
from .tools.spec import call_model as _call_model

_ENGINE_TOOLS = (
    Tool("search", reads.search, formats.format_search, idempotent=True, budgeted=True),
    Tool("get_memory", reads.get_memory, formats.format_memories, idempotent=True, budgeted=True),
    Tool("neighbors", reads.neighbors, formats.format_neighbors, idempotent=True, budgeted=True),
    Tool("file_chunks", reads.file_chunks, formats.format_file_chunks, idempotent=True, budgeted=True),
    Tool("file_summary", reads.file_summary, formats.format_file_summary, idempotent=True, budgeted=True),
    Tool("list_sources", reads.list_sources, formats.format_sources, idempotent=True, budgeted=True),
    Tool("kg_query", reads.kg_query, formats.format_facts, idempotent=True, budgeted=True),
    Tool("graph_scope", reads.graph_scope, formats.format_graph_scope, idempotent=True),
    Tool("review", review.review, upkeep_formats.format_review, idempotent=True, budgeted=True),
    Tool("status", overview.status, formats.format_status, idempotent=True),
    Tool("device_context", overview.device_context, formats.format_device, idempotent=True),
    Tool("wake_up", overview.wake_up, formats.format_wake_up, idempotent=True, budgeted=True),
    Tool("store", writes.store, formats.format_stored, write=True),
    Tool("tidy", tidy.tidy, upkeep_formats.format_tidied, write=True),
    Tool("delete", writes.delete, formats.format_deleted, write=True, destructive=True, idempotent=False),
    Tool("forget", forget.forget, upkeep_formats.format_forgotten, write=True, destructive=True, idempotent=False),
    Tool("kg_edit", writes.kg_edit, formats.format_fact_change, write=True, destructive=True),
    Tool("ingest_content", writes.ingest_content, formats.format_ingest, write=True, idempotent=True),
    Tool("ingest_path", writes.ingest_path, formats.format_ingest, write=True, idempotent=True),
)


def _plan_tools(tools: tuple[Tool, ...]) -> PlanTools:
    by_name = {t.name: t for t in tools}
    return PlanTools(reads={name: by_name[name] for name in EVIDENCE_TOOLS},
                     others={**{t.name: t.write for t in tools if t.name not in EVIDENCE_TOOLS}, "recall": False})


#: What recall's plans may use.
PLAN_TOOLS = _plan_tools(_ENGINE_TOOLS)
#: Every tool by name, in the order the MCP server lists them.
TOOLS: dict[str, Tool] = {t.name: t for t in (
    *_ENGINE_TOOLS,
    Tool("recall", recall_rows(PLAN_TOOLS), format_recall, idempotent=True, budgeted=True, sized_by="recall"),
)}


def tool(name: str) -> Tool:
    """The tool called ``name``.

    Raises:
        InvalidArgument: no tool has that name (the message lists them).
    """
    if name not in TOOLS:
        raise InvalidArgument(f"Unknown tool '{name}'. Tools: {', '.join(TOOLS)}.")
    return TOOLS[name]


def args_model(name: str) -> type[BaseModel]:
    """The pydantic model of tool ``name``'s row-function arguments (no workspace, no output size)."""
    return _args_model(TOOLS[name])


def call_model(name: str) -> type[BaseModel]:
    """The arguments a caller passes to tool ``name`` (see ``tools.spec.call_model``)."""
    return _call_model(TOOLS[name])


def result_model(name: str) -> type[BaseModel]:
    """The pydantic model of tool ``name``'s result: its row function's return type. Raises ``KeyError`` for an
    unknown tool."""
    answer = get_type_hints(TOOLS[name].rows)["return"]
    assert isinstance(answer, type) and issubclass(answer, BaseModel), f"{name}'s rows return no model"
    return answer


def validate_call(name: str, arguments: dict[str, Any]) -> BaseModel:
    """Validate a caller's arguments for tool ``name``.

    Raises:
        InvalidArgument: unknown tool, or arguments that do not validate (the message names each).
    """
    model = call_model(tool(name).name)
    try:
        return model.model_validate(arguments)
    except ValidationError as exc:
        raise InvalidArgument(describe_validation_error(name, exc, accepted=list(model.model_fields))) from None


#: Schema keys callers are not shown: titles repeat the names; string length and pattern limits are noise to an
#: agent or a model (the engine still enforces them and says what it accepts when one is crossed).
_UNPUBLISHED = frozenset({"title", "minLength", "maxLength", "pattern"})


def input_schema(name: str) -> dict[str, Any]:
    """The JSON schema callers see for tool ``name`` (MCP clients and the chat model alike): its call model,
    lean. Raises ``KeyError`` for an unknown tool."""
    schema = call_model(name).model_json_schema()

    def lean(node: Any) -> Any:
        if isinstance(node, list):
            return [lean(v) for v in node]
        if not isinstance(node, dict):
            return node
        node = {k: ({p: lean(v2) for p, v2 in v.items()} if k == "properties" else lean(v))
                for k, v in node.items() if k not in _UNPUBLISHED}  # property names are never dropped
        # "X or null, default null" says no more than an optional X: keep just X.
        options = node.get("anyOf")
        if options and node.get("default", ...) is None and {"type": "null"} in options and len(options) == 2:
            node.pop("anyOf")
            node.pop("default")
            node = {**next(o for o in options if o != {"type": "null"}), **node}
        return node

    return dict(lean(schema))
