"""``engram export`` and ``engram import``: a workspace to a portable folder and back, and peers' memories read in.

Like the tool commands, both run in the data folder's service when one runs (its one writer writes the import) and
in an engine of this process otherwise. Paths are made absolute here, as the service's working folder is not ours.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engram.core import Paths, Settings

from .cli_calls import open_calls
from .terminal import for_stream

COMMANDS = ("export", "import")


def add_parsers(sub: Any) -> None:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-w", "--workspace", default="", help="Workspace (default: store.default_workspace).")
    common.add_argument("--json", action="store_true", help="Print one JSON document instead of text.")
    export = sub.add_parser(
        "export", parents=[common], help="Write a workspace (or one project) to a new folder",
        description="Writes manifest.json, memories.jsonl (every column), vectors.f32, facts.jsonl, edges.jsonl, "
                    "sources.jsonl and markdown/<project>/<kind>.md to FOLDER, which must not exist yet. An "
                    "interrupted export leaves only FOLDER.partial. `engram import FOLDER` reads it back.")
    export.add_argument("folder", metavar="FOLDER", help="The new folder to write.")
    export.add_argument("--project", help="Only this project's memories, facts, sources and edges.")
    imp = sub.add_parser(
        "import", parents=[common], help="Read an Engram export, or Claude Code, basic-memory or mem0 memories",
        description="Recognises what PATH holds: an Engram export folder (every row as it was; rows already in the "
                    "workspace are left as they are), a Claude Code MEMORY.md or CLAUDE.md (or its folder), a "
                    "folder of basic-memory notes, or a mem0 export (.json). A peer's notes are stored as notes, "
                    "secrets redacted; basic-memory's relations become facts.")
    imp.add_argument("path", metavar="PATH", help="The folder or file to import.")
    imp.add_argument("--project", help="The project of a peer's notes (default: from the folder or file name).")
    imp.add_argument("--dry-run", dest="dry_run", action="store_true",
                     help="Count what would be imported; write nothing.")


def _arguments(args: argparse.Namespace) -> dict[str, Any]:
    if args.command == "export":
        values: dict[str, Any] = {"folder": str(Path(args.folder).expanduser().absolute())}
    else:
        values = {"path": str(Path(args.path).expanduser().absolute()), "dry_run": args.dry_run}
    values["workspace"] = args.workspace
    if args.project is not None:
        values["project"] = args.project
    return values


def run(args: argparse.Namespace, paths: Paths, settings: Settings, environ: Mapping[str, str]) -> int:
    """Carry out ``engram export`` or ``engram import`` (errors propagate as ``EngramError``; the CLI prints them)."""
    with open_calls(paths, settings, environ) as calls:
        done = calls.transfer(args.command, _arguments(args))
    if args.json:
        print(for_stream(json.dumps({"command": args.command, **done}, ensure_ascii=False), sys.stdout, json=True))
    else:
        print(for_stream(str(done["text"]), sys.stdout))
    return 0
