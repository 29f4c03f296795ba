"""``engram capture``: import editors' session files (Codex's, Claude Code's without its hooks) as turns.

With no path it reads every session file of the editors whose capture is on (``capture.claude_code``,
``capture.codex``) in their own folders; given files or folders, it reads those. Each file is read from where
the last capture of it stopped, so a second run stores only what is new. While a service runs, the files are
handed to it (as the hooks do, through the capture inbox) and this waits for its answers; otherwise an engine
of this process reads them.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from engram.core import Engine, Paths, Settings
from engram.core.capture import claude_code, codex
from engram.core.capture.inbox import Job, inbox_dir, post
from engram.core.capture.ledger import Ledger
from engram.core.capture.worker import READERS, editor_on, session_files
from engram.core.errors import InvalidArgument
from engram.mcp.service_client import ServiceClient

from .terminal import for_stream

COMMANDS = ("capture",)
#: How long ``engram capture`` waits for a running service to take the files it handed over.
SERVICE_WAIT_S = 300.0


def add_parser(sub: Any) -> None:
    p = sub.add_parser("capture", help="Remember editor sessions from their files (Codex, Claude Code)",
                       description="Reads Codex session files (~/.codex/sessions) and Claude Code transcripts "
                                   "(~/.claude/projects), or the files and folders given, and stores each turn "
                                   "not stored yet as an exchange of the session's project.")
    p.add_argument("paths", nargs="*", help="Session files (.jsonl) or folders of them; none: the editors' own.")
    p.add_argument("--editor", choices=sorted(READERS), help="Whose files the paths are (default: told by each file).")
    p.add_argument("--json", action="store_true", help="One JSON object with every file's outcome.")


def editor_of(path: Path) -> str:
    """Which editor wrote the session file at ``path``: Codex's start with ``session_meta`` (or are named
    ``rollout-…``), anything else is read as Claude Code's."""
    if path.name.startswith("rollout-"):
        return codex.EDITOR
    try:
        with path.open("rb") as handle:
            first = json.loads(handle.readline() or b"null")
    except (OSError, ValueError):
        return claude_code.EDITOR
    return codex.EDITOR if isinstance(first, dict) and first.get("type") == "session_meta" else claude_code.EDITOR


def _given(paths: list[str], editor: str | None) -> Iterator[tuple[str, Path]]:
    for given in paths:
        path = Path(given).expanduser().resolve()
        if path.is_dir():
            files = sorted(path.rglob("*.jsonl"))
        elif path.is_file():
            files = [path]
        else:
            raise InvalidArgument(f"No file or folder {given}. Give session files (.jsonl) or folders of them.")
        for file in files:
            yield editor or editor_of(file), file


def run(args: argparse.Namespace, paths: Paths, settings: Settings) -> int:
    """Carry out ``engram capture``.

    Raises:
        InvalidArgument: a path that is not there.
        EngramError: the service or the engine failed.
    """
    files = list(_given(args.paths, args.editor)) if args.paths else list(session_files(paths, settings))
    off = sorted({e for e, _ in files if not editor_on(settings, e)})
    files = [(e, f) for e, f in files if editor_on(settings, e)]
    client = ServiceClient.find(paths)
    if client is not None:
        with client:
            outcomes = _through_service(paths, files)
    else:
        with Engine(paths, settings) as engine:
            outcomes = []
            for editor, file in files:
                report = engine.capture_file(editor, file)
                outcomes.append({"editor": editor, "file": str(file), "session": report.session_id,
                                 "project": report.project, "new": report.stored.new,
                                 "replaced": report.stored.replaced, "unchanged": report.stored.unchanged,
                                 "capped": report.stored.capped, "duplicates": report.stored.duplicates,
                                 "note": report.note})
    notes = [f"capture.{e.replace('-', '_')} is off: its files were not read (`engram config set "
             f"capture.{e.replace('-', '_')} true` turns it on)" for e in off]
    if args.json:
        print(json.dumps({"files": outcomes, "notes": notes}))
        return 0
    for o in outcomes:
        if "new" not in o:
            what = o.get("note", "")
        elif not (o["new"] or o["replaced"] or o["capped"] or o.get("duplicates")):
            what = "nothing new"
        else:
            what = (f"{o['new']} new turns" + (f", {o['replaced']} grown" if o["replaced"] else "")
                    + (f", {o['duplicates']} already remembered (counted on the stored memory)"
                       if o.get("duplicates") else "")
                    + (f", {o['capped']} left out over a cap" if o["capped"] else ""))
        print(for_stream(f"{o['editor']:<12} {o['project'] or '?':<20} {Path(o['file']).name}: "
                         f"{what}{' (' + o['note'] + ')' if o.get('note') and 'new' in o else ''}", sys.stdout))
    total = sum(o.get("new", 0) for o in outcomes)
    print(f"{len(outcomes)} session files read, {total} new turns stored")
    for note in notes:
        print(f"note: {note}")
    return 0


def _through_service(paths: Paths, files: list[tuple[str, Path]]) -> list[dict[str, Any]]:
    """Hand ``files`` to the running service through the capture inbox and wait until it took them all."""
    ledger = Ledger(paths.data_dir)
    before = {(s.editor, s.transcript): s for s in ledger.sessions()}
    jobs = [post(paths.data_dir, Job(editor=e, event="capture", session_id=_session_of(e, f), transcript=str(f),
                                     cwd="", at=time.time())) for e, f in files]
    deadline = time.monotonic() + SERVICE_WAIT_S
    while any(j.exists() for j in jobs) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = sum(j.exists() for j in jobs)
    after = {(s.editor, s.transcript): s for s in ledger.sessions()}
    outcomes: list[dict[str, Any]] = []
    for editor, file in files:
        now, was = after.get((editor, str(file))), before.get((editor, str(file)))
        if now is None:
            outcomes.append({"editor": editor, "file": str(file), "project": "", "note": "not read (see the log)"})
            continue
        outcomes.append({"editor": editor, "file": str(file), "session": now.session_id, "project": now.project,
                         "new": now.turns - (was.turns if was else 0), "replaced": 0, "unchanged": 0,
                         "capped": now.capped - (was.capped if was else 0), "note": ""})
    if left:
        raise_note = f"{left} of the files were not taken by the service within {SERVICE_WAIT_S:.0f} s; " \
                     f"they wait in {inbox_dir(paths.data_dir)}"
        print(f"engram: note: {raise_note}", file=sys.stderr)
    return outcomes


def _session_of(editor: str, file: Path) -> str:
    return codex.session_of(file) if editor == codex.EDITOR else file.stem
