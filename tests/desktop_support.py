"""What the desktop tests share: a home folder of their own, a factory of real ``Desktop``s, and how to wait
for the app's background work and type into a settings row as a person would."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractSpinBox, QComboBox, QLineEdit, QSlider

from engram.app.desktop.desktop import Desktop
from engram.core import Engine, Paths
from engram.core.settings_file import load_settings
from engram.mcp.setup_clients import Places


def own_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home folder of the test's own: editor configs and the login entry land here, never in the real one."""
    folder = tmp_path / "home"
    folder.mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return folder


def desktop_environ(paths: Paths, home: Path) -> dict[str, str]:
    return {"HOME": str(home), "ENGRAM_DATA_DIR": str(paths.data_dir), "ENGRAM_CONFIG_DIR": str(paths.config_dir)}


@contextmanager
def desktops(paths: Paths, environ: dict[str, str], embedder: Any, *, tray: bool | None = True
             ) -> Iterator[Callable[..., Desktop]]:
    """A factory of real desktops on ``paths`` (each closes its engine with it, as the real app does):
    ``build(serve=False, tray=…, env=None, background=False)``."""
    made: list[Desktop] = []

    def build(*, serve: bool = False, tray: bool | None = tray, env: dict[str, str] | None = None,
              background: bool = False) -> Desktop:
        env = env or environ
        engine = Engine(paths, load_settings(paths.settings_file, env).settings, embedder=embedder)
        desktop = Desktop(paths, env, engine=engine, places=Places.from_environ(env), serve=serve, tray=tray,
                          background=background)
        desktop._owns_engine = True
        made.append(desktop)
        return desktop

    try:
        yield build
    finally:
        for desktop in made:
            desktop.jobs.shutdown()
            desktop.window.hide()
            desktop.engine.close()


def settle(desktop: Desktop, qtbot: Any, lanes: tuple[str, ...] = ("settings", "keyring", "editors")) -> None:
    """Wait until the work asked of these lanes so far has run and its results were shown (on the Qt thread):
    the app writes settings, keys and editor configs off the Qt thread, one at a time per lane."""
    pending = set(lanes)
    for lane in lanes:
        desktop.jobs.submit("task", "test: settled", lambda _report: None,
                            on_done=lambda _job, lane=lane: pending.discard(lane), lane=lane)
    qtbot.waitUntil(lambda: not pending, timeout=30_000)


def enter(row: Any, text: str) -> None:
    """Put ``text`` into a row's control and leave it, as a person would: typed into a field, pasted over a
    number and Enter pressed (a spin box refuses what is out of its range and keeps its value), chosen in a
    list (by its value or its words), or a slider dragged to it and let go (it stops at its ends, takes no words).
    """
    editor = row.editor
    if isinstance(editor, QLineEdit):
        editor.setText(text)
        editor.editingFinished.emit()
    elif isinstance(editor, QAbstractSpinBox):
        typed = editor.lineEdit()
        typed.selectAll()
        typed.insert(text)  # through the box's validator, as a paste goes
        QTest.keyClick(editor, Qt.Key.Key_Return)
    elif isinstance(editor, QSlider):
        try:
            step = row.slider_step(float(text))
        except ValueError:
            return
        if editor.minimum() <= step <= editor.maximum():
            editor.setSliderDown(True)
            editor.setValue(step)
            editor.setSliderDown(False)
    else:
        assert isinstance(editor, QComboBox)
        index = editor.findData(text)
        if index < 0:
            index = editor.findText(text)
        if index < 0:
            editor.setEditText(text)
            editor.lineEdit().editingFinished.emit()
        else:
            editor.setCurrentIndex(index)
            editor.activated.emit(index)
