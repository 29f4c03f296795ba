"""The desktop app driven with the keyboard alone, as a person who does not use a mouse would: search, a
result's actions, forget a note, connect an editor, change a setting, and see it in ``engram config list``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget

from .conftest import write_tree
from .desktop_support import settle

TABS = 400  # more Tab presses than any page has controls: past this, a control cannot be reached


def press(qtbot: Any, key: Qt.Key, modifier: Qt.KeyboardModifier = Qt.KeyboardModifier.NoModifier) -> None:
    """One key, to whatever has the keyboard focus (as the person's keyboard would)."""
    focus = QApplication.focusWidget() or QApplication.activeWindow()
    assert focus is not None, "no window has the keyboard"
    qtbot.keyClick(focus, key, modifier)


def tab_to(qtbot: Any, wanted: Callable[[QWidget], bool], what: str) -> QWidget:
    """Press Tab until the focused control is the one ``wanted``; fail when Tab never gets there."""
    for _ in range(TABS):
        focus = QApplication.focusWidget()
        if focus is not None and wanted(focus):
            return focus
        press(qtbot, Qt.Key.Key_Tab)
    raise AssertionError(f"Tab never reached {what}")


def test_search_forget_connect_and_configure_with_the_keyboard_alone(make_desktop: Any, desktop_home: Path,
                                                                      environ: dict[str, str], qtbot: Any) -> None:
    (desktop_home / ".cursor").mkdir()
    desktop = make_desktop()
    folder = write_tree(desktop_home / "ops", {"deploy.md": "# Deploy\n\nRoll back a deploy with git revert."})
    with qtbot.waitSignal(desktop.jobs.finished, timeout=60_000, check_params_cb=lambda j: j.kind == "ingest"):
        desktop.ingest_folder(str(folder))
    desktop.engine.call("store", {"content": "Rollbacks need the on-call lead's approval.", "title": "Approval"})
    window = desktop.window
    desktop.show_window()
    settle(desktop, qtbot)
    with qtbot.waitActive(window):
        window.activateWindow()

    # Search: Ctrl+F, type, Enter.
    press(qtbot, Qt.Key.Key_F, Qt.KeyboardModifier.ControlModifier)
    assert QApplication.focusWidget() is window.overview.question
    qtbot.keyClicks(window.overview.question, "who approves a rollback")
    with qtbot.waitSignal(window.overview.searched, timeout=60_000):
        press(qtbot, Qt.Key.Key_Return)
    cards = window.overview.results.cards
    note = next(card for card in cards if card.target is not None and card.target.kind == "note")
    qtbot.waitUntil(note.copy_button.isVisible, timeout=5_000)  # cards are shown on the next turn of the loop

    # A result's actions: Tab to the note's Copy, Space.
    tab_to(qtbot, lambda w: w is note.copy_button, "the note's Copy button")
    press(qtbot, Qt.Key.Key_Space)
    assert "on-call lead" in QGuiApplication.clipboard().text()

    # Forget the note: its Forget button, Space, then Forget in the question (Cancel is the default).
    tab_to(qtbot, lambda w: w is note.forget_button, "the note's Forget button")
    press(qtbot, Qt.Key.Key_Space)
    box = window.overview.confirm
    assert isinstance(box, QMessageBox)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is not None and box.isAncestorOf(QApplication.focusWidget()),
                    timeout=5_000)
    tab_to(qtbot, lambda w: box.isAncestorOf(w) and getattr(w, "text", lambda: "")() == "Forget", "Forget")
    with qtbot.waitSignal(window.overview.forgotten, timeout=30_000):
        press(qtbot, Qt.Key.Key_Space)
    with qtbot.waitActive(window):  # the question closed: a window manager gives the window the keyboard back
        window.activateWindow()
    found = desktop.engine.call("search", {"query": "who approves a rollback"}).result
    assert not any("on-call lead" in hit.content for hit in found.hits), "the note is forgotten"
    assert any("git revert" in hit.content for hit in found.hits), "the file is not"

    # Connect Cursor: Ctrl+4 opens Editors, Tab to its button, Space.
    press(qtbot, Qt.Key.Key_4, Qt.KeyboardModifier.ControlModifier)
    assert window.tabs.currentWidget() is window.editors
    button = window.editors.buttons["cursor"]
    qtbot.waitUntil(button.isEnabled, timeout=10_000)
    window.editors.setFocus()
    tab_to(qtbot, lambda w: w is button, "Connect Cursor")
    press(qtbot, Qt.Key.Key_Space)
    qtbot.waitUntil(lambda: desktop.editors.states["cursor"].connected, timeout=10_000)
    config = json.loads((desktop_home / ".cursor" / "mcp.json").read_text())
    assert "engram" in config["mcpServers"]

    # Change a setting: Ctrl+5 opens Settings; "Results per search" is under the collapsed Advanced, so type its
    # words into Find a setting (which opens Advanced), Tab to it, type 12, Tab away.
    press(qtbot, Qt.Key.Key_5, Qt.KeyboardModifier.ControlModifier)
    assert window.tabs.currentWidget() is window.settings
    limit = window.settings.rows["search.limit"].editor
    window.settings.setFocus()
    find = window.settings.find_box
    tab_to(qtbot, lambda w: w is find, "Find a setting")
    qtbot.keyClicks(find, "results per search")
    assert not window.settings.advanced.isHidden()
    tab_to(qtbot, lambda w: w is limit, "Results per search")
    press(qtbot, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClicks(limit, "12")
    press(qtbot, Qt.Key.Key_Tab)
    settle(desktop, qtbot)
    listed = subprocess.run([sys.executable, "-m", "engram.app", "config", "list"], env={**os.environ, **environ},
                            capture_output=True, text=True, timeout=120, check=True).stdout
    assert "search.limit = 12  (file)" in [line.strip() for line in listed.splitlines()], listed
