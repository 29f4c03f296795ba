"""Typed tool calls: one method per catalog tool, for the app and the command line.

``Engine.call(name, arguments)`` is how the MCP server and the chat model call a tool they name at run time.
Code that names a fixed tool calls it here instead (``engine.tools.status(workspace=name)``): the parameters
are the tool's call model (``core/catalog.py``) as Python parameters, so mypy checks the arguments, and the
answer is a ``ToolOutput`` of the tool's own result model, so mypy checks what is read from it. Each method
goes through ``Engine.call`` itself: the same validation, workspace, size and rendering, byte for byte.

``tests/test_tool_calls.py`` walks the catalog: a tool without a method here, or a parameter whose name, type
or default differs from its call model, fails it. ``max_chars`` is the one deliberate difference: ``None``
(the default here) leaves the size to the settings, as leaving the argument out of ``Engine.call`` does.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel

from .recall.models import RecallResult
from .recall.plan import PlanStep
from .tools.reads import Channel, MemoryKind
from .tools.results import (
    Deleted,
    DeviceContext,
    FactChange,
    FactList,
    FileChunks,
    Forgotten,
    GraphScope,
    IngestResult,
    MemoryList,
    NeighborList,
    Review,
    SearchResult,
    SourceInfo,
    SourceList,
    Stored,
    Tidied,
    WakeUp,
    WorkspaceStatus,
)
from .tools.writes import DEFAULT_PROJECT

R = TypeVar("R", bound=BaseModel)
R_co = TypeVar("R_co", bound=BaseModel, covariant=True)


@dataclass(frozen=True)
class ToolOutput(Generic[R_co]):
    """A tool's result model and its rendered text."""

    tool: str
    workspace: str
    result: R_co
    text: str


def output_of(value: object, kind: type[R]) -> ToolOutput[R]:
    """``value`` as the ``ToolOutput`` of a ``kind`` result: for a tool's answer handed back untyped (the result
    of a background job).

    Raises:
        TypeError: ``value`` is not a ``ToolOutput``, or its result is not a ``kind`` (a caller's mistake).
    """
    if not isinstance(value, ToolOutput):
        raise TypeError(f"expected a ToolOutput, got {type(value).__name__}")
    result = value.result
    if not isinstance(result, kind):
        raise TypeError(f"expected a {kind.__name__} result, got {type(result).__name__} (from {value.tool})")
    return ToolOutput(value.tool, value.workspace, result, value.text)


#: How the methods run a tool: ``Engine.call``.
CallFn = Callable[[str, dict[str, Any]], ToolOutput[BaseModel]]


class ToolCalls:
    """Every catalog tool as a typed method. Each raises what ``Engine.call`` raises: ``InvalidArgument`` for
    refused arguments (nothing ran), ``NotFound`` for an unknown id, source or workspace, another
    ``EngramError`` for any other failure."""

    def __init__(self, call: CallFn) -> None:
        self._call = call

    def _run(self, tool: str, answer: type[R], /, **arguments: Any) -> ToolOutput[R]:
        # Positional-only: a tool's own argument may be called ``kind`` or ``type``.
        if arguments.get("max_chars", 0) is None:
            del arguments["max_chars"]  # the settings size the answer, as when the argument is left out
        out = self._call(tool, arguments)
        result = out.result
        if not isinstance(result, answer):  # the catalog's row function and this method disagree: a bug here
            raise TypeError(f"{tool} returned {type(result).__name__}, not {answer.__name__}")
        return ToolOutput(out.tool, out.workspace, result, out.text)

    # ------------------------------------------------------------------ reads

    def search(self, query: str, *, limit: int | None = None, project: str | None = None,
               source_prefix: str | None = None, kind: MemoryKind | None = None, type: str | None = None,
               tags: list[str] | None = None, since: datetime | None = None, until: datetime | None = None,
               channels: list[Channel] | None = None, history: bool = False, workspace: str = "",
               run: str | None = None, max_chars: int | None = None) -> ToolOutput[SearchResult]:
        """Hybrid (semantic + lexical + graph) search of the workspace's memories; superseded ones only with
        ``history`` (raises as ``Engine.call``)."""
        return self._run("search", SearchResult, query=query, limit=limit, project=project,
                         source_prefix=source_prefix, kind=kind, type=type, tags=tags, since=since, until=until,
                         channels=channels, history=history, workspace=workspace, run=run, max_chars=max_chars)

    def get_memory(self, ids: list[str], *, workspace: str = "",
                   max_chars: int | None = None) -> ToolOutput[MemoryList]:
        """Full content of memories by id (raises as ``Engine.call``)."""
        return self._run("get_memory", MemoryList, ids=ids, workspace=workspace, max_chars=max_chars)

    def neighbors(self, id: str, *, hops: int = 1, reverse: bool = False, limit: int = 10, workspace: str = "",
                  max_chars: int | None = None) -> ToolOutput[NeighborList]:
        """Memories connected to one memory in the graph (raises as ``Engine.call``)."""
        return self._run("neighbors", NeighborList, id=id, hops=hops, reverse=reverse, limit=limit,
                         workspace=workspace, max_chars=max_chars)

    def file_chunks(self, source: str, *, start_line: int | None = None, end_line: int | None = None,
                    limit: int = 50, workspace: str = "", max_chars: int | None = None) -> ToolOutput[FileChunks]:
        """The chunks of one ingested file or text, in order (raises as ``Engine.call``)."""
        return self._run("file_chunks", FileChunks, source=source, start_line=start_line, end_line=end_line,
                         limit=limit, workspace=workspace, max_chars=max_chars)

    def file_summary(self, source: str, *, workspace: str = "",
                     max_chars: int | None = None) -> ToolOutput[SourceInfo]:
        """What one ingested file or text is (raises as ``Engine.call``)."""
        return self._run("file_summary", SourceInfo, source=source, workspace=workspace, max_chars=max_chars)

    def list_sources(self, *, project: str | None = None, prefix: str | None = None, limit: int = 50,
                     offset: int = 0, workspace: str = "", max_chars: int | None = None) -> ToolOutput[SourceList]:
        """Ingested files and texts, sorted by source (raises as ``Engine.call``)."""
        return self._run("list_sources", SourceList, project=project, prefix=prefix, limit=limit, offset=offset,
                         workspace=workspace, max_chars=max_chars)

    def kg_query(self, *, subject: str | None = None, predicate: str | None = None, object: str | None = None,
                 project: str | None = None, include_ended: bool = False, limit: int = 50, workspace: str = "",
                 max_chars: int | None = None) -> ToolOutput[FactList]:
        """Knowledge-graph facts, current ones unless asked otherwise (raises as ``Engine.call``)."""
        return self._run("kg_query", FactList, subject=subject, predicate=predicate, object=object,
                         project=project, include_ended=include_ended, limit=limit, workspace=workspace,
                         max_chars=max_chars)

    def graph_scope(self, *, project: str | None = None, limit: int = 20,
                    workspace: str = "") -> ToolOutput[GraphScope]:
        """The shape of the graph (raises as ``Engine.call``)."""
        return self._run("graph_scope", GraphScope, project=project, limit=limit, workspace=workspace)

    def review(self, *, project: str | None = None, limit: int = 20, threshold: float | None = None,
               workspace: str = "", max_chars: int | None = None) -> ToolOutput[Review]:
        """Memories written more than once, near-duplicate pairs stored apart, superseded memories (raises as
        ``Engine.call``)."""
        return self._run("review", Review, project=project, limit=limit, threshold=threshold, workspace=workspace,
                         max_chars=max_chars)

    def recall(self, question: str, *, plan: list[PlanStep] | None = None, condense: bool = True,
               workspace: str = "", run: str | None = None,
               max_chars: int | None = None) -> ToolOutput[RecallResult]:
        """Answer a multi-part question in one call (raises as ``Engine.call``)."""
        return self._run("recall", RecallResult, question=question, plan=plan, condense=condense,
                         workspace=workspace, run=run, max_chars=max_chars)

    # ------------------------------------------------------------ orientation

    def status(self, *, workspace: str = "") -> ToolOutput[WorkspaceStatus]:
        """Counts, projects and index state of the workspace (raises as ``Engine.call``)."""
        return self._run("status", WorkspaceStatus, workspace=workspace)

    def device_context(self, *, workspace: str = "") -> ToolOutput[DeviceContext]:
        """This computer as the models see it (raises as ``Engine.call``)."""
        return self._run("device_context", DeviceContext, workspace=workspace)

    def wake_up(self, *, project: str | None = None, limit: int = 8, workspace: str = "",
                max_chars: int | None = None) -> ToolOutput[WakeUp]:
        """Orientation at the start of a session (raises as ``Engine.call``)."""
        return self._run("wake_up", WakeUp, project=project, limit=limit, workspace=workspace, max_chars=max_chars)

    # ----------------------------------------------------------------- writes

    def store(self, content: str, *, project: str = DEFAULT_PROJECT, kind: Literal["note", "exchange"] = "note",
              type: str = "note", tags: list[str] = [], title: str = "",  # noqa: B006 (never mutated)
              supersedes: list[str] = [],  # noqa: B006 (never mutated)
              workspace: str = "") -> ToolOutput[Stored]:
        """Remember a note, counted on the stored one when it duplicates it, marking ``supersedes`` as history
        (raises as ``Engine.call``)."""
        return self._run("store", Stored, content=content, project=project, kind=kind, type=type, tags=tags,
                         title=title, supersedes=supersedes, workspace=workspace)

    def tidy(self, action: Literal["supersede", "keep_both", "merge", "unmerge"], id: str, *,
             others: list[str] = [],  # noqa: B006 (never mutated)
             workspace: str = "") -> ToolOutput[Tidied]:
        """Supersede, keep both, merge or unmerge memories as review or a store reply suggests (raises as
        ``Engine.call``)."""
        return self._run("tidy", Tidied, action=action, id=id, others=others, workspace=workspace)

    def delete(self, *, ids: list[str] | None = None, source: str | None = None, keep_out: bool = True,
               workspace: str = "") -> ToolOutput[Deleted]:
        """Delete memories by id, or forget an ingested file or text, kept out of later ingests unless
        ``keep_out`` is false (raises as ``Engine.call``)."""
        return self._run("delete", Deleted, ids=ids, source=source, keep_out=keep_out, workspace=workspace)

    def forget(self, *, query: str | None = None, limit: int = 50, project: str | None = None,
               source: str | None = None, kind: Literal["note", "exchange", "chunk", "content"] | None = None,
               since: datetime | None = None, until: datetime | None = None, confirm: bool = False,
               workspace: str = "") -> ToolOutput[Forgotten]:
        """Forget the memories matching every given filter, or (without ``confirm``) say which would go (raises as
        ``Engine.call``)."""
        return self._run("forget", Forgotten, query=query, limit=limit, project=project, source=source, kind=kind,
                         since=since, until=until, confirm=confirm, workspace=workspace)

    def kg_edit(self, action: Literal["add", "end"], *, subject: str | None = None, predicate: str | None = None,
                object: str | None = None, project: str = DEFAULT_PROJECT, valid_from: datetime | None = None,
                fact_id: str | None = None, source: str = "", workspace: str = "") -> ToolOutput[FactChange]:
        """Add a knowledge-graph fact, or end one (raises as ``Engine.call``)."""
        return self._run("kg_edit", FactChange, action=action, subject=subject, predicate=predicate, object=object,
                         project=project, valid_from=valid_from, fact_id=fact_id, source=source, workspace=workspace)

    def ingest_content(self, content: str, title: str, *, project: str = DEFAULT_PROJECT,
                       tags: list[str] = [],  # noqa: B006 (never mutated)
                       workspace: str = "") -> ToolOutput[IngestResult]:
        """Ingest a text under a title (raises as ``Engine.call``)."""
        return self._run("ingest_content", IngestResult, content=content, title=title, project=project, tags=tags,
                         workspace=workspace)

    def ingest_path(self, path: str, *, project: str | None = None, include: list[str] | None = None,
                    again: list[str] | None = None, workspace: str = "") -> ToolOutput[IngestResult]:
        """Ingest (or re-sync) the files under a folder; ``again`` takes back files forgotten earlier (raises as
        ``Engine.call``)."""
        return self._run("ingest_path", IngestResult, path=path, project=project, include=include, again=again,
                         workspace=workspace)
