"""What a path given to ``engram import`` holds, told by what is there (never by a flag):

- a folder with ``manifest.json`` (or that file itself): an Engram export;
- a folder with ``MEMORY.md``, ``CLAUDE.md`` or ``CLAUDE.local.md``, or one of those files: Claude Code's memory;
- a ``.json`` file: mem0's export;
- a folder of ``.md`` files, or another ``.md`` file: basic-memory's notes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .claude_memory import FILE_NAMES, is_memory_file
from .folder import MANIFEST, refused, understood
from .results import Format


@dataclass(frozen=True)
class Found:
    """A path and the format it holds (for an export folder, the folder)."""

    format: Format
    path: Path


def detect(path: Path) -> Found:
    """The format ``path`` holds.

    Raises:
        TransferRefused: nothing is there, it cannot be read, or it holds none of the formats (the message lists them).
    """
    if not path.exists():
        raise refused(f"No file or folder at {path}. engram import reads {understood()}.")
    if path.is_dir():
        try:
            names = {p.name for p in path.iterdir()}
        except OSError as exc:
            raise refused(f"The folder {path} cannot be read ({exc.strerror or exc}).") from None
        if MANIFEST in names:
            return Found("engram", path)
        if names & set(FILE_NAMES):
            return Found("claude-code", path)
        if any(path.rglob("*.md")):
            return Found("basic-memory", path)
        raise refused(f"{path} holds no manifest.json, no Claude Code memory file and no .md notes. engram import "
                      f"reads {understood()}.")
    if path.name == MANIFEST:
        return Found("engram", path.parent)
    if is_memory_file(path):
        return Found("claude-code", path)
    suffix = path.suffix.lower()
    if suffix == ".json":
        return Found("mem0", path)
    if suffix in (".md", ".markdown"):
        return Found("basic-memory", path)
    raise refused(f"{path.name} is none of the files engram import reads: {understood()}.")
