"""Qt's system libraries checked before Qt loads: a machine without them hears which and how to install them,
in the terminal, in the log and on its desktop (a launch from the menu has no terminal)."""

from __future__ import annotations

import logging
import os
import stat
import time
from pathlib import Path

import pytest

from engram.app.desktop import main, qt_libraries
from engram.app.desktop.qt_libraries import CORE, XCB, explain, missing_libraries
from engram.core import Paths


def test_x11_needs_the_xcb_libraries_offscreen_does_not_and_other_systems_need_none() -> None:
    nothing = lambda library: False  # noqa: E731 - a computer with none of them
    assert set(missing_libraries({"DISPLAY": ":0"}, platform="linux", find=nothing)) == set(CORE) | set(XCB)
    assert set(missing_libraries({"DISPLAY": ":0", "QT_QPA_PLATFORM": "offscreen"}, platform="linux",
                                 find=nothing)) == set(CORE)
    assert missing_libraries({"DISPLAY": ":0"}, platform="win32", find=nothing) == {}
    assert missing_libraries({"DISPLAY": ":0"}, platform="darwin", find=nothing) == {}


def test_this_machine_has_what_offscreen_qt_needs() -> None:
    """The README's setup installs them: the real loader finds every one."""
    assert missing_libraries({"QT_QPA_PLATFORM": "offscreen"}) == {}


def test_the_message_names_the_libraries_the_packages_and_the_command() -> None:
    said = explain({"libxcb-cursor.so.0": "libxcb-cursor0", "libxcb-icccm.so.4": "libxcb-icccm4"})
    assert said.startswith("Engram's window needs system libraries this computer lacks: libxcb-cursor.so.0, "
                           "libxcb-icccm.so.4.")
    assert "sudo apt-get install -y libxcb-cursor0 libxcb-icccm4" in said and "scripts/qt-deps.sh" in said


def test_a_start_without_them_says_so_on_the_desktop_in_the_log_and_in_the_terminal(
        paths: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    heard = tmp_path / "heard.txt"
    notifier = bin_dir / "notify-send"  # the desktop's own notifier, stood in for by a script that keeps its words
    notifier.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {heard}\n')
    notifier.chmod(notifier.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}/usr/bin:/bin")
    monkeypatch.setattr(qt_libraries, "loadable", lambda library: library != "libxcb-cursor.so.0")
    monkeypatch.setattr(qt_libraries, "NOTIFIERS", tuple(c for c in qt_libraries.NOTIFIERS if c[0] == "notify-send"))
    env = {**os.environ, "DISPLAY": ":0"}
    env.pop("QT_QPA_PLATFORM", None)
    try:
        assert main.run_tray(paths, env) == 1
    finally:
        logging.getLogger().handlers.clear()
    assert "Engram cannot start: Engram's window needs system libraries this computer lacks: " \
           "libxcb-cursor.so.0" in capsys.readouterr().err
    for _ in range(100):
        if heard.exists() and heard.read_text():
            break
        time.sleep(0.05)
    lines = heard.read_text().splitlines()
    assert lines[:2] == ["--urgency=critical", "Engram cannot start"]
    assert "sudo apt-get install -y libxcb-cursor0" in lines[2]
    assert "libxcb-cursor0" in (paths.log_dir / "tray.log").read_text()
