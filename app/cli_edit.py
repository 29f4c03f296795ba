"""``engram edit``, ``merge``, ``unmerge``, ``supersede`` and ``keep-both``: a note's new version, memories made one
and split again, possible updates answered, as history keeps.

What they do is ``revise``'s (the window's Edit, Merge, Split, Newer replaces older and Both are true do the same);
this module reads the command line and opens the user's editor.
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engram.core import Paths, Settings
from engram.core.errors import InvalidArgument

from .cli_calls import open_calls, typed
from .revise import EditorFn, edit, keep_both, merge, supersede, unmerge
from .terminal import for_stream

COMMANDS = ("edit", "merge", "unmerge", "supersede", "keep-both")


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
                    "written again); the other is marked superseded by it, stays as history and is kept with it "
                    "as a merged text (`engram unmerge ID` splits them again).")
    merge.add_argument("ids", metavar="ID", nargs=2, help="The two memories.")
    unmerge = sub.add_parser(
        "unmerge", help="Split a merged memory back into its memories",
        description="Every text merged into the memory (near duplicates counted on it, memories `engram merge` "
                    "made one with it) becomes a memory of its own again, with its own id, times and tags; the "
                    "memory shows its own text again. `engram get ID` lists the merged texts.")
    unmerge.add_argument("id", metavar="ID", help="The merged memory.")
    unmerge.add_argument("--only", action="append", default=[], metavar="TEXT_ID",
                         help="Split off only this merged text (its id, as `engram get` lists it; repeatable).")
    supersede = sub.add_parser(
        "supersede", help="Make a memory the current one in place of older ones (a possible update confirmed)",
        description="The older memories stay as history: search leaves them out unless --history; `engram get NEW` "
                    "shows the versions.")
    supersede.add_argument("new", metavar="NEW", help="The memory that is current now.")
    supersede.add_argument("old", metavar="OLD", nargs="+", help="The memories it replaces.")
    keep_both_parser = sub.add_parser(
        "keep-both", help="Keep two alike memories as both true (a possible update that is not one)",
        description="The pair is not listed as a possible update again, and search stops marking the older one.")
    keep_both_parser.add_argument("ids", metavar="ID", nargs=2, help="The two memories (the newer first).")
    for parser in (edit, merge, unmerge, supersede, keep_both_parser):
        parser.add_argument("-w", "--workspace", default="", help="Workspace (default: store.default_workspace).")


def run(args: argparse.Namespace, paths: Paths, settings: Settings, environ: Mapping[str, str],
        editor: EditorFn | None = None) -> int:
    """Carry out ``engram edit`` or ``engram merge`` (errors propagate as ``EngramError``; the CLI prints them)."""
    with open_calls(paths, settings, environ) as calls:
        tools = typed(calls)
        if args.command == "edit":
            text = edit(tools, args.id, args.content, args.workspace, editor or _editor(environ)).text
        elif args.command == "merge":
            text = merge(tools, args.ids[0], args.ids[1], args.workspace).text
        elif args.command == "unmerge":
            text = unmerge(tools, args.id, list(args.only), args.workspace).text
        elif args.command == "supersede":
            text = supersede(tools, args.new, list(args.old), args.workspace).text
        else:
            text = keep_both(tools, args.ids[0], args.ids[1], args.workspace).text
    print(for_stream(text, sys.stdout))
    return 0


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
