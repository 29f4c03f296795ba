"""The desktop app as a non-technical person met it (issue 36), driven through the real window offscreen: each test
is one thing that stopped them, done the way they did it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QComboBox, QGroupBox

from engram.app.desktop.memory_page import MemoryPage
from engram.app.desktop.memory_tree import entry_of

from .conftest import write_tree
from .desktop_support import settle


@pytest.fixture
def home(desktop_home: Path) -> Path:
    return desktop_home


def _workspace_line(page: MemoryPage) -> str:
    item = page.tree.topLevelItem(0)
    return item.text(0) if item is not None else ""


def test_the_memory_page_shows_what_each_ingest_added_without_being_asked(make_desktop: Any, home: Path,
                                                                          qtbot: Any) -> None:
    desktop = make_desktop(tray=False)
    page = desktop.window.memory
    qtbot.waitUntil(lambda: _workspace_line(page).startswith("Nothing stored yet"), timeout=30_000)
    folder = write_tree(home / "mine", {f"note{i}.md": f"# Note {i}\n\nSomething of mine, number {i}." for i in range(10)})
    with qtbot.waitSignal(desktop.jobs.finished, timeout=60_000, check_params_cb=lambda j: j.kind == "ingest"):
        desktop.ingest_folder(str(folder))
    qtbot.waitUntil(lambda: "10 files" in _workspace_line(page), timeout=30_000)
    write_tree(folder, {"later.md": "# Later\n\nOne more thing."})
    with qtbot.waitSignal(desktop.jobs.finished, timeout=60_000, check_params_cb=lambda j: j.kind == "ingest"):
        desktop.ingest_folder(str(folder))
    qtbot.waitUntil(lambda: "11 files" in _workspace_line(page), timeout=30_000)
    qtbot.waitUntil(lambda: "11 files" in desktop.window.overview.state.text(), timeout=30_000)


def test_a_file_forgotten_in_the_window_stays_forgotten_when_its_folder_is_remembered_again(
        make_desktop: Any, home: Path, qtbot: Any) -> None:
    desktop = make_desktop(tray=False)
    folder = write_tree(home / "mine", {"keep.md": "# Keep\n\nKeep this.", "drop.md": "# Drop\n\nForget this."})
    with qtbot.waitSignal(desktop.jobs.finished, timeout=60_000, check_params_cb=lambda j: j.kind == "ingest"):
        desktop.ingest_folder(str(folder), project="mine")
    page = desktop.window.memory
    page.reload()
    qtbot.waitUntil(lambda: page.project_item("default", "mine") is not None, timeout=30_000)
    project = page.project_item("default", "mine")
    project.setExpanded(True)
    qtbot.waitUntil(lambda: project.childCount() == 2 and project.child(0).childCount() == 2, timeout=30_000)
    files = project.child(0)
    drop = next(files.child(i) for i in range(files.childCount()) if "drop.md" in files.child(i).text(0))
    page.tree.setCurrentItem(drop)
    page.forget_button.click()
    forget = next(b for b in page.confirm.buttons() if b.text() == "Forget")
    with qtbot.waitSignal(page.forgotten, timeout=30_000):
        forget.click()
    with qtbot.waitSignal(desktop.jobs.finished, timeout=60_000, check_params_cb=lambda j: j.kind == "ingest"):
        desktop.ingest_folder(str(folder), project="mine")
    assert [s.path for s in desktop.engine.tools.list_sources().result.items] == ["keep.md"]
    qtbot.waitUntil(lambda: [entry_of(files.child(i)).label for i in range(files.childCount())]  # type: ignore[union-attr]
                    == ["keep.md"], timeout=30_000)


def test_the_tray_offers_only_the_editors_on_this_computer_and_connects_none_that_is_not(
        make_desktop: Any, home: Path, qtbot: Any) -> None:
    (home / ".cursor").mkdir()
    desktop = make_desktop()
    desktop.attach_tray()
    tray = desktop.tray
    desktop.editors.refresh()
    settle(desktop, qtbot)
    claude_desktop = tray.editor_actions["claude-desktop"]
    assert not claude_desktop.isEnabled() and claude_desktop.text() == "Claude Desktop (not installed)"
    assert tray.editor_actions["cursor"].isEnabled() and tray.editor_actions["cursor"].text() == "Cursor"
    before = sorted(p.relative_to(home) for p in home.rglob("*"))
    with qtbot.waitSignal(desktop.editors.toggled, timeout=30_000) as told:
        desktop.editors.toggle("claude-desktop")  # as the window's first-run step might ask
    assert told.args[2] is False and "not installed on this computer" in told.args[1]
    settle(desktop, qtbot)
    assert sorted(p.relative_to(home) for p in home.rglob("*")) == before, "no folder, file or backup was made"


def test_pause_watching_with_no_watch_here_says_why_and_stays_unticked(make_desktop: Any, environ: dict[str, str],
                                                                      qtbot: Any) -> None:
    desktop = make_desktop(env={**environ, "ENGRAM_WATCH_ENABLED": "false"})
    desktop.attach_tray()
    messages: list[str] = []
    desktop.shell.message.connect(lambda text, _ms: messages.append(text))
    desktop.tray.watch_action.trigger()
    assert not desktop.tray.watch_action.isChecked()
    assert messages[-1].startswith("Nothing to pause: keeping folders current is turned off")


def test_the_file_opener_setting_keeps_its_value_when_focus_leaves_it_and_its_group_shows_an_ampersand(
        make_desktop: Any, qtbot: Any) -> None:
    desktop = make_desktop(tray=False)
    page = desktop.window.settings
    row = page.rows["desktop.open_with"]
    combo = row.editor
    assert isinstance(combo, QComboBox) and combo.isEditable()
    shown = combo.currentText()
    assert shown != "auto", "the automatic choice is shown in words"
    combo.lineEdit().editingFinished.emit()  # focused and left, as a person tabs through the page
    settle(desktop, qtbot)
    assert not row.error.isVisible() and row.error.text() == ""
    assert desktop.engine.settings.desktop.open_with == "auto"
    box = next(b for b in page.findChildren(QGroupBox) if "Editors" in b.title())
    assert box.title() == "Editors && service", "an '&' is shown, not taken for a shortcut"


def test_a_launch_opens_the_window_and_a_start_at_login_stays_in_the_tray(make_desktop: Any, home: Path,
                                                                         qtbot: Any) -> None:
    from engram.app.desktop import autostart
    from engram.app.desktop.welcome import MARKER

    launched = make_desktop()
    launched.paths.data_dir.mkdir(parents=True, exist_ok=True)
    (launched.paths.data_dir / MARKER).write_text("")  # not the first run (that shows the welcome)
    launched.start()
    assert launched.window.isVisible(), "a launch from the menu opens the window"
    at_login = make_desktop(background=True)
    at_login.start()
    assert at_login.tray is not None and not at_login.window.isVisible(), "at login: the tray icon alone"
    assert autostart.tray_command()[-2:] == ["tray", "--background"], "the login entry starts it in the background"


def test_the_first_close_says_engram_keeps_running_in_the_tray_and_only_the_first(make_desktop: Any,
                                                                                 qtbot: Any) -> None:
    desktop = make_desktop()
    desktop.attach_tray()
    desktop.show_window()
    desktop.window.close()
    assert not desktop.window.isVisible() and desktop.went_to_tray_box is not None
    box = desktop.went_to_tray_box
    assert box.isVisible() and "still running" in box.text() and "Quit Engram" in box.informativeText()
    box.close()
    desktop.went_to_tray_box = None
    desktop.show_window()
    desktop.window.close()
    assert desktop.went_to_tray_box is None, "said once"


def test_the_folder_picker_opens_in_the_home_folder(make_desktop: Any, home: Path, qtbot: Any) -> None:
    desktop = make_desktop(tray=False)
    desktop.choose_folder_to_ingest()
    assert desktop.folder_dialog is not None
    assert Path(desktop.folder_dialog.directory().absolutePath()) == home
