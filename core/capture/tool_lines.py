"""One line about what an assistant's tools did in a turn: files read, files edited, commands run, searches.

Only the tools' inputs are read (a file's path, a command's first line, a search's pattern), never their
outputs: a turn's memory says ``read core/engine.py; edited core/engine.py, tests/test_engine.py; ran `pytest -q```
and nothing of what those files or commands held.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

#: Tools (Claude Code's and Codex's names) by what they do to a file named in their input.
_READS = {"Read", "NotebookRead", "read_file", "view"}
_EDITS = {"Edit", "MultiEdit", "Write", "NotebookEdit", "apply_patch", "write_file", "edit_file"}
_RUNS = {"Bash", "shell", "shell_command", "exec_command", "local_shell", "container.exec"}
_SEARCHES = {"Grep", "Glob", "WebSearch", "grep", "find"}
_PATH_KEYS = ("file_path", "notebook_path", "path", "filename")
#: The files a Codex patch (``apply_patch``) names.
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.MULTILINE)
#: At most this many names per group, and characters per command.
NAMES_SHOWN = 8
COMMAND_CHARS = 80


def _text(value: Any, limit: int = COMMAND_CHARS) -> str:
    if isinstance(value, list):  # Codex: ``["bash", "-lc", "pytest -q"]``
        value = value[-1] if len(value) > 2 and value[:2] in (["bash", "-lc"], ["sh", "-c"]) else " ".join(
            str(v) for v in value)
    first = str(value).strip().splitlines()[0] if str(value).strip() else ""
    return first if len(first) <= limit else first[: limit - 1].rstrip() + "…"


def _relative(path: str, cwd: str) -> str:
    root = cwd.rstrip("/") + "/"
    return path[len(root):] if cwd and path.startswith(root) else path


def _path(given: Mapping[str, Any], cwd: str) -> str:
    for key in _PATH_KEYS:
        value = given.get(key)
        if isinstance(value, str) and value:
            return _relative(value, cwd)
    return ""


def _listed(verb: str, names: list[str]) -> str:
    unique = list(dict.fromkeys(names))
    shown = ", ".join(unique[:NAMES_SHOWN])
    more = f" and {len(unique) - NAMES_SHOWN} more" if len(unique) > NAMES_SHOWN else ""
    return f"{verb} {shown}{more}"


def tool_lines(uses: Iterable[tuple[str, Mapping[str, Any]]], cwd: str = "") -> tuple[str, ...]:
    """What ``uses`` (each a tool's name and its input) did, one phrase per kind of action in the order first
    seen: ``read a.py, b.py``, ``edited c.py``, ``ran `pytest -q```, ``searched 'TODO'``, ``used WebFetch``.
    Paths under ``cwd`` are shown relative to it."""
    groups: dict[str, list[str]] = {}
    for name, given in uses:
        path = _path(given, cwd)
        if name in _READS and path:
            groups.setdefault("read", []).append(path)
        elif name in _EDITS and path:
            groups.setdefault("edited", []).append(path)
        elif name in _EDITS and isinstance(patch := given.get("input") or given.get("patch"), str):
            named = [_relative(f.strip(), cwd) for f in _PATCH_FILE.findall(patch)]
            groups.setdefault("edited", []).extend(named or ["files (a patch)"])
        elif name in _RUNS and (command := given.get("command") or given.get("cmd")):
            groups.setdefault("ran", []).append(f"`{_text(command)}`")
        elif name in _SEARCHES and (pattern := given.get("pattern") or given.get("query")):
            groups.setdefault("searched", []).append(repr(_text(pattern, 40)))
        else:
            groups.setdefault("used", []).append(name)
    return tuple(_listed(verb, names) for verb, names in groups.items())
