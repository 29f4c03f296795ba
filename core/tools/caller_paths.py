"""Paths in tool arguments that name a file or folder on the caller's computer.

The service runs in a folder of its own and refuses relative paths (``ingest_path``); a process that
runs where its caller does (the stdio launcher, the CLI) resolves them against that folder first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: Arguments that name a file or folder on the caller's computer, by tool.
CALLER_PATHS = {"ingest_path": ("path", "again")}


def resolve_caller_paths(tool: str, arguments: dict[str, Any], cwd: Path) -> dict[str, Any]:
    """``arguments`` with each relative path of ``CALLER_PATHS`` (a path, or a list of them) made absolute against
    ``cwd``, the caller's folder. ``~`` is left for the engine; anything that is no usable path is left for it to
    refuse."""
    resolved = dict(arguments)
    for name in CALLER_PATHS.get(tool, ()):
        value = arguments.get(name)
        if isinstance(value, str):
            resolved[name] = _absolute(value, cwd)
        elif isinstance(value, list):
            resolved[name] = [_absolute(v, cwd) if isinstance(v, str) else v for v in value]
    return resolved


def _absolute(value: str, cwd: Path) -> str:
    if value and not value.startswith("~") and "\x00" not in value and not Path(value).is_absolute():
        return str(cwd / value)
    return value
