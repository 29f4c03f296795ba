"""Opening a result's file at its line: in a code editor that takes a line, else with the desktop's default app.

A desktop's default app for a file (``QDesktopServices``) cannot be told a line, so a card's Open looks for
an editor that can, following ``desktop.open_with``:

- ``auto`` (the default): the first editor on this computer's PATH that opens a file at a line, the editors
  connected to Engram first (a person who connected Cursor wants Cursor, not the VS Code that is also
  installed); when there is none, the default app, at the top of the file.
- ``system``: always the default app (no line).
- a command of the person's own, with ``{file}`` and optionally ``{line}``: ``"code --goto {file}:{line}"``,
  ``"emacsclient -n +{line} {file}"``. It is split like a shell line but run without a shell; the file's path
  is one argument however it is spelled. A shell or an interpreter with a script (``sh -c '… {file}'``) is
  refused when the setting is written (``settings.DesktopSettings``): the file's name would be read as code.

``open_at_line`` starts the editor detached (Qt's ``QProcess.startDetached``: it neither waits for it nor
keeps it as a child) and returns a sentence saying what it opened, or why it could not.
"""

from __future__ import annotations

import re
import shlex
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from PySide6.QtCore import QProcess, QUrl
from PySide6.QtGui import QDesktopServices


@dataclass(frozen=True)
class LineEditor:
    """An editor whose command line opens a file at a line."""

    client: str  # its name among Engram's MCP clients ("" when Engram does not connect it)
    label: str
    program: str
    args: tuple[str, ...]  # with {file} and {line}


EDITORS: tuple[LineEditor, ...] = (
    LineEditor("cursor", "Cursor", "cursor", ("--goto", "{file}:{line}")),
    LineEditor("vscode", "VS Code", "code", ("--goto", "{file}:{line}")),
    LineEditor("windsurf", "Windsurf", "windsurf", ("--goto", "{file}:{line}")),
    LineEditor("", "Zed", "zed", ("{file}:{line}",)),
    LineEditor("", "Sublime Text", "subl", ("{file}:{line}",)),
)
Which = Callable[[str], str | None]


def command_for(file: str, line: int, choice: str, connected: Sequence[str] = (),
                which: Which = shutil.which) -> tuple[str, list[str], str] | None:
    """(program, arguments, the editor's name) that open ``file`` at ``line`` as ``choice`` says, or ``None``
    for the default app. A custom command whose program is not found is ``None`` too (the caller says so)."""
    line = max(line, 1)  # a note or a file's start has line 0 or 1
    if choice == "system":
        return None
    if choice != "auto":
        words = shlex.split(choice)
        program = which(words[0])
        if program is None:
            return None
        return program, [_fill(w, file, line) for w in words[1:]], words[0]
    ordered = sorted(EDITORS, key=lambda e: e.client not in connected)  # connected editors first, else as listed
    for editor in ordered:
        program = which(editor.program)
        if program is not None:
            return program, [_fill(a, file, line) for a in editor.args], editor.label
    return None


def open_at_line(file: str, line: int, choice: str, connected: Sequence[str] = (),
                 which: Which = shutil.which) -> str:
    """Open ``file`` at ``line`` (see the module); returns a sentence of what happened."""
    line = max(line, 1)
    command = command_for(file, line, choice, connected, which)
    if command is not None:
        program, args, label = command
        started, _pid = QProcess.startDetached(program, args)
        if started:
            return f"Opened {file} at line {line} in {label}."
        fallback = f"{label} did not start"
    elif choice not in ("auto", "system"):
        fallback = f"the command of desktop.open_with ({shlex.split(choice)[0]}) is not on this computer"
    else:
        fallback = ""
    if not QDesktopServices.openUrl(QUrl.fromLocalFile(file)):
        return f"Could not open {file}: no app on this computer opens it."
    where = "" if line <= 1 else f" (the app your computer uses for it cannot go to line {line})"
    return f"Opened {file}{where}." + (f" Note: {fallback}." if fallback else "")


def _fill(word: str, file: str, line: int) -> str:
    """``word`` with ``{file}`` and ``{line}`` put in, in one pass: a file named ``a{line}b.md`` stays that
    name. A relative file that begins with ``-`` goes as ``./-…``, so that no editor reads it as an option."""
    if file.startswith("-"):
        file = "./" + file
    return _PLACEHOLDER.sub(lambda m: file if m.group(1) == "file" else str(line), word)


_PLACEHOLDER = re.compile(r"\{(file|line)\}")
