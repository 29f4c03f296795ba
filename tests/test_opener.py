"""Opening a result's file at its line: which editor, which arguments, and a real detached start."""

from __future__ import annotations

import os
import stat
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QObject, QUrl, Slot
from PySide6.QtGui import QDesktopServices

from engram.app.desktop.opener import command_for, open_at_line
from engram.core.errors import SettingsError
from engram.core.settings import Settings
from engram.core.settings_file import set_value


def on_path(*programs: str) -> Any:
    return lambda program: f"/usr/bin/{program}" if program in programs else None


class UrlCatcher(QObject):
    """Takes the file URLs handed to the desktop (instead of a file manager)."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: list[QUrl] = []

    @Slot(QUrl)
    def catch(self, url: QUrl) -> None:
        self.urls.append(url)


def test_auto_prefers_a_connected_editor_then_the_first_installed_one() -> None:
    both = on_path("code", "cursor")
    assert command_for("/w/a.py", 12, "auto", ["vscode"], both) == ("/usr/bin/code", ["--goto", "/w/a.py:12"],
                                                                    "VS Code")
    assert command_for("/w/a.py", 12, "auto", [], both)[2] == "Cursor"  # type: ignore[index]
    assert command_for("/w/a.py", 3, "auto", [], on_path("zed")) == ("/usr/bin/zed", ["/w/a.py:3"], "Zed")
    assert command_for("/w/a.py", 3, "auto", ["claude-code"], on_path()) is None  # none: the default app


def test_system_never_runs_an_editor_and_a_line_below_one_is_line_one() -> None:
    assert command_for("/w/a.py", 7, "system", ["vscode"], on_path("code")) is None
    assert command_for("/w/a.py", 0, "auto", [], on_path("code"))[1] == ["--goto", "/w/a.py:1"]  # type: ignore[index]


def test_a_command_of_ones_own_gets_the_file_as_one_argument_and_the_line() -> None:
    got = command_for("/w/my notes/a b.md", 40, "emacsclient -n +{line} {file}", [], on_path("emacsclient"))
    assert got == ("/usr/bin/emacsclient", ["-n", "+40", "/w/my notes/a b.md"], "emacsclient")
    assert command_for("/w/a.md", 4, "nano +{line} {file}", [], on_path()) is None  # not installed


@pytest.mark.parametrize("value", ["", "code", "code --goto", "{file}", "code 'unclosed {file}"])
def test_desktop_open_with_refuses_what_it_cannot_run(tmp_path: Path, value: str) -> None:
    with pytest.raises(SettingsError, match="desktop.open_with"):
        set_value(tmp_path / "settings.toml", "desktop.open_with", value)
    assert not (tmp_path / "settings.toml").exists(), "nothing written"
    assert Settings().desktop.open_with == "auto"


def test_without_an_editor_the_default_app_opens_the_file_and_the_sentence_says_it_is_at_the_top(
        qapp: Any, tmp_path: Path) -> None:
    catcher = UrlCatcher()
    QDesktopServices.setUrlHandler("file", catcher, "catch")
    try:
        said = open_at_line(str(tmp_path / "a.md"), 40, "auto", ["vscode"], which=on_path())
        custom = open_at_line(str(tmp_path / "a.md"), 1, "nano +{line} {file}", [], which=on_path())
    finally:
        QDesktopServices.unsetUrlHandler("file")
    assert [u.toLocalFile() for u in catcher.urls] == [str(tmp_path / "a.md")] * 2
    assert said == f"Opened {tmp_path / 'a.md'} (the app your computer uses for it cannot go to line 40)."
    assert custom == (f"Opened {tmp_path / 'a.md'}. Note: the command of desktop.open_with (nano) is not on this "
                      "computer.")


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX shell script stands in for the editor")
def test_an_editor_is_started_detached_with_the_file_and_line(qapp: Any, tmp_path: Path) -> None:
    record = tmp_path / "args.txt"
    editor = tmp_path / "fake-editor"
    editor.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > "{record}"\n')
    editor.chmod(editor.stat().st_mode | stat.S_IXUSR)
    target = tmp_path / "notes" / "a file.md"
    said = open_at_line(str(target), 9, f"{editor} --line {{line}} {{file}}", [],
                        which=lambda p: p if os.access(p, os.X_OK) else None)
    assert said == f"Opened {target} at line 9 in {editor}."
    deadline = time.monotonic() + 20
    while not (record.exists() and record.read_text().count("\n") == 3) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert record.read_text().splitlines() == ["--line", "9", str(target)]
