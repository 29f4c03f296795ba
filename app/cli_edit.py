"""``engram edit ID`` and ``engram merge ID ID``: a note's new version, and two memories made one, as history keeps.

Both are ``store`` calls with ``supersedes``: the edited text is stored as a new memory that supersedes the old (the
old text stays, marked superseded); a merge stores the longer of two texts again, which store's duplicate handling
counts on the memory that holds it, and supersedes the other by it. Nothing is deleted.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from engram.core import Paths, Settings
from engram.core.errors import InvalidArgument, NotFound
from engram.core.tool_calls import ToolCalls, ToolOutput
from engram.core.tools.results import Memory, Stored

from .cli_calls import open_calls, typed
from .terminal import for_stream

COMMANDS = ("edit", "merge")
EditorFn = Callable[[str], str]


def add_parsers(sub: Any) -> None:
    edit = sub.add_parser(
        "edit", help="Store a new version of a note (the old one stays as history)",
        description="Opens the note's text in $VISUAL or $EDITOR (or takes --content); the changed text is stored "
                    "as a new note of the same project, kind, type, tags and title that supersedes the old one, "
                    "which search then leaves out (history=true shows it; `engram get NEW_ID` shows both).")
    edit.add_argument("id", metavar="ID", help="The note (or exchange) to edit, as search or get print it.")
    edit.add_argument("--content", help="The new text (without it, an editor is opened).")
    merge = sub.add_parser(
        "merge", help="Make two memories one: the longer text kept, the other superseded by it",
        description="Both must be notes or exchanges of one project and kind. The longer text is kept (counted as "
                    "written again); the other is marked superseded by it and stays as history.")
    merge.add_argument("ids", metavar="ID", nargs=2, help="The two memories.")
    for parser in (edit, merge):
        parser.add_argument("-w", "--workspace", default="", help="Workspace (default: store.default_workspace).")


def run(args: argparse.Namespace, paths: Paths, settings: Settings, environ: Mapping[str, str],
        editor: EditorFn | None = None) -> int:
    """Carry out ``engram edit`` or ``engram merge`` (errors propagate as ``EngramError``; the CLI prints them)."""
    with open_calls(paths, settings, environ) as calls:
        tools = typed(calls)
        if args.command == "edit":
            text = edit(tools, args.id, args.content, args.workspace, editor or _editor(environ))
        else:
            text = merge(tools, args.ids[0], args.ids[1], args.workspace)
    print(for_stream(text, sys.stdout))
    return 0


def _memories(tools: ToolCalls, ids: list[str], workspace: str) -> list[Memory]:
    out = tools.get_memory(ids, workspace=workspace).result
    if out.missing:
        raise NotFound(f"No memory with id {', '.join(out.missing)} in the workspace; nothing was stored. Use an "
                       "id printed by search or get.")
    by_id = {m.id: m for m in out.items}
    return [by_id[i] for i in ids]


def _editable(memory: Memory) -> None:
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


def edit(tools: ToolCalls, memory_id: str, content: str | None, workspace: str, editor: EditorFn) -> str:
    """Store the edited text of ``memory_id`` as its new version; the result's text.

    Raises:
        NotFound: no such memory. InvalidArgument: not a current note or exchange, or the new text is blank.
    """
    (old,) = _memories(tools, [memory_id], workspace)
    _editable(old)
    new = content if content is not None else editor(old.content)
    if not new.strip():
        raise InvalidArgument("The new text is blank; nothing was stored (`engram delete ID` forgets a note).")
    if new.strip() == old.content.strip():
        return f"No change to {memory_id}; nothing was stored."
    return _store_again(tools, old, new, old.tags, memory_id, workspace).text


def merge(tools: ToolCalls, first: str, second: str, workspace: str) -> str:
    """Keep the longer text of two memories, superseding the other by it; the result's text.

    Raises:
        NotFound: either is missing. InvalidArgument: the same id twice, different projects or kinds, or one that
        is not a current note or exchange.
    """
    if first == second:
        raise InvalidArgument("Give two different memories to merge; nothing was changed.")
    a, b = _memories(tools, [first, second], workspace)
    for m in (a, b):
        _editable(m)
    if (a.project, a.kind) != (b.project, b.kind):
        raise InvalidArgument(f"{first} is a {a.kind} of project {a.project} and {second} a {b.kind} of "
                              f"project {b.project}: only memories of one project and kind are merged.")
    kept, other = (a, b) if len(a.content) >= len(b.content) else (b, a)
    done = _store_again(tools, kept, kept.content, list(dict.fromkeys([*kept.tags, *other.tags])), other.id,
                        workspace)
    if done.result.id != kept.id:  # duplicate handling off: the kept text was stored as a memory of its own
        return (f"{done.text}\n(Duplicate handling is off, so the kept text was stored as {done.result.id}; "
                f"{kept.id} stays current beside it.)")
    return done.text


def _editor(environ: Mapping[str, str]) -> EditorFn:
    """Edit a text in the user's editor ($VISUAL, $EDITOR, else nano or vi) on a temporary file."""
    def run_editor(text: str) -> str:
        command = environ.get("VISUAL") or environ.get("EDITOR") or ("nano" if _on_path("nano") else "vi")
        with tempfile.TemporaryDirectory(prefix="engram-edit-") as folder:
            path = Path(folder) / "note.md"
            path.write_text(text, encoding="utf-8")
            try:
                subprocess.run([*shlex.split(command), str(path)], check=True)
            except (OSError, subprocess.CalledProcessError) as exc:
                raise InvalidArgument(f"The editor ({command}) did not finish: {exc}. Set $EDITOR, or pass the "
                                      "new text with --content. Nothing was stored.") from None
            return path.read_text(encoding="utf-8")

    return run_editor


def _on_path(name: str) -> bool:
    return any((Path(d) / name).exists() for d in os.environ.get("PATH", "").split(os.pathsep) if d)
