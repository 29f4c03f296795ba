"""``import_path``: recognise what a path holds, read it whole, then write it — or, in a dry run, only count.

An Engram export is checked completely before its first row is written (``engram_import``). A peer's path is read
completely (every file parsed, every note's arguments checked) before its first note is stored; its notes then go
through ``store`` one by one (``peer_write``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..embedding import Embedder
from ..events import EngineEvent, MemoriesWritten
from ..store import WorkspaceStore
from ..tools.scope import Scope
from .basic_memory import read_basic_memory
from .claude_memory import read_claude_memory
from .detect import Found, detect
from .engram_import import Target, check_export, write_export
from .folder import Counts, refused
from .mem0 import read_mem0
from .peer_write import write_peer
from .peers import PeerImport
from .results import Imported

_READERS: dict[str, Callable[[Path, str | None], PeerImport]] = {
    "claude-code": read_claude_memory, "basic-memory": read_basic_memory, "mem0": read_mem0}


@dataclass(frozen=True)
class ImportTarget:
    """The workspace an import goes to, as the engine gives it."""

    workspace: str
    #: Its scope, the workspace created if it does not exist yet (only called when something is written).
    scope: Callable[[], Scope]
    #: Its store when the workspace exists (never creates it).
    existing: Callable[[], WorkspaceStore | None]
    #: The vector size and embedding model (and the model's SHA-256, "" when unknown) of this engine.
    dimensions: int
    model: str
    sha256: str
    #: The embedding model (``None``: it cannot be loaded; ``embed_note`` says why).
    embedder: Callable[[], Embedder | None]
    embed_note: Callable[[], str | None]
    vector_index_min_rows: int
    emit: Callable[[EngineEvent], None]


def import_path(path: Path, target: ImportTarget, *, project: str | None, dry_run: bool) -> Imported:
    """Import what ``path`` holds into ``target`` (see the module and ``detect``).

    Raises:
        TransferRefused: the path is missing, unreadable or of no known format; ``project`` given for an Engram
            export; an export that is incomplete, of a newer format, or whose vectors cannot be made again.
        InvalidArgument: a peer's note that ``store`` refuses even shortened.
        ModelError, StoreError, WorkspaceError: embedding, reading or writing the workspace failed.
    """
    started = time.perf_counter()
    found = detect(path)
    if found.format == "engram":
        result = _engram(found, target, project=project, dry_run=dry_run)
    else:
        result = _peer(found, target, project=project, dry_run=dry_run)
    return result.model_copy(update={"seconds": round(time.perf_counter() - started, 3)})


def _engram(found: Found, target: ImportTarget, *, project: str | None, dry_run: bool) -> Imported:
    if project:
        raise refused("--project names the project of a Claude Code, basic-memory or mem0 import; an Engram export "
                      "keeps each memory's own project (to move one project, export it with engram export --project).")
    store = target.existing() if dry_run else target.scope().store
    checked = check_export(found.path, Target(store, target.dimensions, target.model, target.sha256),
                           target.embedder, target.embed_note, dry_run=dry_run)
    if not dry_run and store is not None:
        write_export(store, target.scope().writer, checked, vector_index_min_rows=target.vector_index_min_rows)
        if checked.added.memories or checked.added.facts:
            target.emit(MemoriesWritten(store.name, "import", checked.added.memories + checked.added.facts))
    notes = []
    if checked.manifest.project:
        notes.append(f"the export holds project {checked.manifest.project} of workspace {checked.manifest.workspace}")
    return Imported(workspace=target.workspace, path=str(found.path), format="engram", dry_run=dry_run,
                    added=checked.added, already_there=checked.already, reembedded=checked.reembedded, notes=notes)


def _peer(found: Found, target: ImportTarget, *, project: str | None, dry_run: bool) -> Imported:
    try:
        read = _READERS[found.format](found.path, project)
    except UnicodeDecodeError as exc:
        raise refused(f"A file under {found.path} is not UTF-8 text ({exc.reason}).") from None
    except OSError as exc:
        raise refused(f"{exc.filename or found.path} cannot be read ({exc.strerror or exc}).") from None
    if not read.notes and not read.facts:
        raise refused(f"{found.path} holds no notes to import (read as {found.format}).")
    # Every note's arguments are checked before the first is stored (a dry run does only that).
    write_peer(None, read, dry_run=True, store=None)
    store = target.existing()
    tally = write_peer(None if dry_run else target.scope(), read, dry_run=dry_run, store=store)
    return Imported(workspace=target.workspace, path=str(found.path), format=found.format, dry_run=dry_run,
                    added=Counts(memories=tally.notes, facts=tally.facts), already_there=Counts(facts=tally.facts_there),
                    merged=tally.merged, redacted=tally.redacted,
                    notes=[f"into project {read.project}", *read.remarks])
