"""A note's new version, memories made one and split again, and possible updates answered, as history keeps: what
``engram edit`` / ``merge`` / ``unmerge`` / ``supersede`` / ``keep-both`` and the window's Edit, Merge, Split, Newer
replaces older and Both are true do.

An edit is a ``store`` call with ``supersedes``: the edited text is stored as a new memory that supersedes the old
(the old text stays, marked superseded). The others are ``tidy`` calls: a merge keeps the longer of two texts and
makes the other its history (its text kept with it, so that ``unmerge`` can split them again). Nothing is deleted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from engram.core.errors import InvalidArgument, NotFound
from engram.core.tool_calls import ToolCalls, ToolOutput
from engram.core.tools.results import Memory, Stored

#: The new text of a memory, from its current text (an editor, or a given text).
EditorFn = Callable[[str], str]


@dataclass(frozen=True)
class Revised:
    """What an edit or a merge did: in a sentence, and the memory that holds the text now (unchanged: the same)."""

    text: str
    id: str


def memories(tools: ToolCalls, ids: list[str], workspace: str) -> list[Memory]:
    out = tools.get_memory(ids, workspace=workspace).result
    if out.missing:
        raise NotFound(f"No memory with id {', '.join(out.missing)} in the workspace; nothing was stored. Use an "
                       "id printed by search or get.")
    by_id = {m.id: m for m in out.items}
    return [by_id[i] for i in ids]


def editable(memory: Memory) -> None:
    if memory.kind not in ("note", "exchange"):
        raise InvalidArgument(f"Memory {memory.id} is a {memory.kind} of an ingested file or text: only notes "
                              "and exchanges are edited or merged here (change the file and ingest it again).")
    if memory.superseded_by:
        raise InvalidArgument(f"Memory {memory.id} was already superseded by {memory.superseded_by}: edit that "
                              "one instead. Nothing was stored.")


def _store_again(tools: ToolCalls, memory: Memory, content: str, tags: list[str], supersedes: str,
                 workspace: str) -> ToolOutput[Stored]:
    """``content`` stored as a memory of ``memory``'s project, kind, type and title, superseding ``supersedes``."""
    kind: Literal["note", "exchange"] = "exchange" if memory.kind == "exchange" else "note"
    return tools.store(content, project=memory.project, kind=kind, type=memory.type, tags=tags,
                       title=memory.title, supersedes=[supersedes], workspace=workspace)


def edit(tools: ToolCalls, memory_id: str, content: str | None, workspace: str, editor: EditorFn) -> Revised:
    """Store the edited text of ``memory_id`` as its new version.

    Raises:
        NotFound: no such memory. InvalidArgument: not a current note or exchange, or the new text is blank.
    """
    (old,) = memories(tools, [memory_id], workspace)
    editable(old)
    new = content if content is not None else editor(old.content)
    if not new.strip():
        raise InvalidArgument("The new text is blank; nothing was stored (`engram delete ID` forgets a note).")
    if new.strip() == old.content.strip():
        return Revised(f"No change to {memory_id}; nothing was stored.", memory_id)
    done = _store_again(tools, old, new, old.tags, memory_id, workspace)
    return Revised(done.text, done.result.id)


def merge(tools: ToolCalls, first: str, second: str, workspace: str) -> Revised:
    """Keep the longer text of two memories, the other superseded by it and kept with it as a merged text.

    Raises:
        NotFound: either is missing. InvalidArgument: the same id twice, different projects or kinds, or one that
        is not a current note or exchange.
    """
    if first == second:
        raise InvalidArgument("Give two different memories to merge; nothing was changed.")
    a, b = memories(tools, [first, second], workspace)
    for m in (a, b):
        editable(m)
    if (a.project, a.kind) != (b.project, b.kind):
        raise InvalidArgument(f"{first} is a {a.kind} of project {a.project} and {second} a {b.kind} of "
                              f"project {b.project}: only memories of one project and kind are merged.")
    kept, other = (a, b) if len(a.content) >= len(b.content) else (b, a)
    done = tools.tidy("merge", kept.id, others=[other.id], workspace=workspace)
    return Revised(done.text, kept.id)


def unmerge(tools: ToolCalls, memory_id: str, only: list[str], workspace: str) -> Revised:
    """Split the texts merged into ``memory_id`` (``only`` these, when given) back into memories of their own.

    Raises:
        NotFound: no such memory. InvalidArgument: nothing is merged into it, or ``only`` names a text that is not.
    """
    done = tools.tidy("unmerge", memory_id, others=only, workspace=workspace)
    return Revised(done.text, memory_id)


def supersede(tools: ToolCalls, new: str, old: list[str], workspace: str) -> Revised:
    """Make ``new`` the current memory in place of ``old`` (a possible update confirmed; the old stay as history).

    Raises:
        NotFound: a memory is missing. InvalidArgument: one is not a current note or exchange.
    """
    done = tools.tidy("supersede", new, others=old, workspace=workspace)
    return Revised(done.text, new)


def keep_both(tools: ToolCalls, first: str, second: str, workspace: str) -> Revised:
    """Say that ``first`` and ``second`` are both true: the pair is not offered as a possible update again.

    Raises:
        NotFound: a memory is missing. InvalidArgument: the same memory twice, or one is not current.
    """
    done = tools.tidy("keep_both", first, others=[second], workspace=workspace)
    return Revised(done.text, first)
