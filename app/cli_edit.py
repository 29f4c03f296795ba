"""``engram edit ID`` and ``engram merge ID ID``: a note's new version, and two memories made one, as history keeps.

What they do is ``revise.edit`` and ``revise.merge`` (the window's Edit and Merge do the same); this module reads
the command line and opens the user's editor.
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
from .revise import EditorFn, edit, merge
from .terminal import for_stream

COMMANDS = ("edit", "merge")


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
            text = edit(tools, args.id, args.content, args.workspace, editor or _editor(environ)).text
        else:
            text = merge(tools, args.ids[0], args.ids[1], args.workspace).text
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
