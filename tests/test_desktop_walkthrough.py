"""The desktop app as a non-technical person met it (issue 36), driven through the real window offscreen: each test
is one thing that stopped them, done the way they did it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QComboBox, QGroupBox, QWidget

from engram.app.desktop.memory_page import MemoryPage
from engram.app.desktop.memory_tree import entry_of
from engram.core import Paths
from engram.core.errors import ModelError
from engram.core.settings_file import load_settings, set_value

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
    box = next(b for b in page.findChildren(QGroupBox) if "Sessions" in b.title())
    assert box.title() == "Sessions, folders && service", "an '&' is shown, not taken for a shortcut"


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


# ------------------------------------------------------------------ 1: chat's model is a choice, never a surprise


def _ask_page(desktop: Any) -> Any:
    desktop.show_window()
    desktop.window.show_page("ask")
    return desktop.window.ask


def test_chat_downloads_nothing_unasked_and_offers_a_model_with_its_size_or_search_instead(
        make_desktop: Any, paths: Paths, qtbot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("engram.core.models.files.total_memory_mb", lambda: 24 * 1024)
    desktop = make_desktop()
    page = _ask_page(desktop)
    card = page.chat.model_card
    assert page.mode.currentWidget() is page.recall_tab, "recall, which needs no model, comes first"
    assert page.mode.tabText(page.mode.indexOf(page.chat)) == "&Chat (needs a model)"
    page.mode.setCurrentWidget(page.chat)
    assert card.isVisible() and not page.chat.question.isEnabled() and not page.chat.ask_button.isEnabled()
    items = [card.choice.itemText(i) for i in range(card.choice.count())]
    assert items[0] == "qwen3.5-4b — 2.7 GB, fits this computer"
    large = card.choice.findData("qwen3.5-35b-a3b")
    assert items[large] == "qwen3.5-35b-a3b — 22.0 GB, needs 32 GB of memory; this computer has 24 GB"
    assert not card.choice.model().item(large).isEnabled()
    assert card.get_button.text() == "Download 2.7 GB"
    with pytest.raises(ModelError, match=r"qwen3.5-4b \(2.7 GB\) is not on this computer yet"):
        desktop.engine.chat("When do we deploy?", download=False)  # what the window's chat runs
    assert not list(paths.models_dir.rglob("*.part")) and not list(paths.models_dir.rglob("*.gguf"))
    card.search_button.click()
    assert desktop.window.tabs.currentWidget() is desktop.window.overview, "Home, where search needs no model"


def test_offline_the_chat_models_download_says_so_on_the_card_and_the_tray_stays_calm(
        make_desktop: Any, paths: Paths, environ: dict[str, str], qtbot: Any) -> None:
    set_value(paths.settings_file, "model.hub_url", "http://127.0.0.1:9")  # nothing answers there: offline
    desktop = make_desktop()
    card = _ask_page(desktop).chat.model_card
    with qtbot.waitSignal(desktop.models.done, timeout=30_000):
        card.get_button.click()
    assert not card.failure.isHidden()
    assert card.failure.text().startswith("The download did not finish. Offline: Could not reach 127.0.0.1 to "
                                          "download Qwen3.5 4B"), card.failure.text()
    assert "this computer seems to be offline" in card.failure.text()
    assert desktop.state != "error" and not card.isHidden() and card.get_button.isEnabled()


def test_a_chosen_chat_model_downloads_on_the_card_and_then_chat_is_open(
        make_desktop: Any, paths: Paths, environ: dict[str, str], qtbot: Any) -> None:
    from .model_server import ModelServer

    blob = b"GGUF" + os.urandom(2_000_000)
    with ModelServer({"tiny-chat.gguf": blob}) as server:
        set_value(paths.settings_file, "chat.local_model", f"{server.url}/files/tiny-chat.gguf")
        desktop = make_desktop()
        page = _ask_page(desktop)
        card = page.chat.model_card
        page.mode.setCurrentWidget(page.chat)
        chosen = card.chosen()
        assert chosen is not None and chosen.entry.custom and chosen.chosen and card.get_button.text() == "Download"
        with qtbot.waitSignal(desktop.models.done, timeout=60_000) as done:
            card.get_button.click()
            assert not card.progress.isHidden() and "You can go on using Engram" in card.detail.text()
    assert done.args[1], done.args
    qtbot.waitUntil(card.isHidden, timeout=10_000)
    assert page.chat.question.isEnabled() and page.chat.ask_button.isEnabled()
    assert page.mode.tabText(page.mode.indexOf(page.chat)) == "&Chat"


# ------------------------------------------------------------------ 2: from "local AI off" to an answer


def test_recall_says_what_local_ai_would_give_and_turns_it_on_with_its_download(
        make_desktop: Any, paths: Paths, environ: dict[str, str], qtbot: Any) -> None:
    from .model_server import ModelServer

    blob = b"GGUF" + os.urandom(2_000_000)
    with ModelServer({"tiny-helper.gguf": blob}) as server:
        desktop = make_desktop()
        page = _ask_page(desktop)
        card = page.local_ai
        page.mode.setCurrentWidget(page.recall_tab)
        assert card.isVisible() and card.heading.text() == "Local AI is off"
        assert "(qwen3.5-4b, 2.7 GB) also plans extra lookups and writes a short answer" in card.text.text()
        assert card.turn_on_button.text() == "Turn on and download 2.7 GB"
        desktop.settings_control.save("helper.local.model", f"{server.url}/files/tiny-helper.gguf")
        settle(desktop, qtbot)
        assert card.turn_on_button.text() == "Turn on and download"
        with qtbot.waitSignal(desktop.models.done, timeout=60_000) as done:
            card.turn_on_button.click()
    assert done.args[1], done.args
    settle(desktop, qtbot)
    qtbot.waitUntil(card.isHidden, timeout=10_000)
    assert load_settings(paths.settings_file, environ).value("recall.llm") is True
    assert desktop.engine.settings.recall.llm


def test_with_the_helper_on_a_server_the_recall_card_says_why_local_ai_is_off_and_opens_settings(
        make_desktop: Any, paths: Paths, qtbot: Any) -> None:
    set_value(paths.settings_file, "helper.provider", "openai")
    desktop = make_desktop()
    card = _ask_page(desktop).local_ai
    assert card.heading.text() == "Local AI is off: the helper model is set to run elsewhere"
    assert "recall never sends your memory off this computer" in card.text.text()
    assert card.turn_on_button.isHidden()
    card.settings_button.click()
    assert desktop.window.tabs.currentWidget() is desktop.window.settings


# ------------------------------------------------------------------ 9: the person's words, not ours

JARGON = ("chunk", "gguf", "q4_k", "ingest", "loopback", "127.0.0.1", "manifest", "n_batch", "rrf")


def _visible_words(widget: Any) -> list[str]:
    from PySide6.QtWidgets import QAbstractButton, QGroupBox, QLabel, QLineEdit

    words = []
    for child in [widget, *widget.findChildren(QWidget)]:
        if not child.isVisibleTo(widget) and child is not widget:
            continue
        if isinstance(child, (QLabel, QAbstractButton)):
            words.append(child.text())
        elif isinstance(child, QGroupBox):
            words.append(child.title())
        elif isinstance(child, QLineEdit):
            words.append(child.placeholderText())
    return [w for w in words if w]


def test_the_window_the_tray_and_the_welcome_speak_without_jargon(make_desktop: Any, home: Path, qtbot: Any) -> None:
    desktop = make_desktop()
    desktop.attach_tray()
    folder = write_tree(home / "mine", {"plan.md": "# Plan\n\nWe ship on Fridays after the review."})
    with qtbot.waitSignal(desktop.jobs.finished, timeout=60_000, check_params_cb=lambda j: j.kind == "ingest"):
        desktop.ingest_folder(str(folder))
    desktop.show_window()
    window = desktop.window
    window.show_service("Serving editors at http://127.0.0.1:8765/mcp")
    assert window.service_label.text() == "Your AI tools can reach Engram"
    assert "127.0.0.1:8765" in window.service_label.toolTip(), "the address stays at hand for the curious"
    window.overview.question.setText("when do we ship")
    with qtbot.waitSignal(window.overview.searched, timeout=30_000):
        window.overview.ask_button.click()
    desktop.show_welcome()
    shown: dict[str, list[str]] = {}
    for name, page in window.pages.items():
        window.show_page(name)
        shown[name] = _visible_words(page)
    shown["status bar"] = _visible_words(window.statusBar())
    assert desktop.tray is not None
    shown["tray"] = [a.text() for a in desktop.tray.menu.actions()] + [a.toolTip() for a in desktop.tray.menu.actions()]
    for step in range(3):
        desktop.welcome.go(step)
        shown[f"welcome {step + 1}"] = _visible_words(desktop.welcome)
    desktop.welcome.reject()
    found = {(where, word, text) for where, texts in shown.items() for text in texts for word in JARGON
             if word in text.lower() and "/" not in text}  # a file's own path may hold any word
    assert not found, sorted(found)
    assert "Remember a folder…" in shown["tray"] and "Remember a folder…" in shown["memory"]


# ------------------------------------------------------------------ 8: search says when nothing is close


def test_a_search_for_what_is_not_remembered_says_nothing_is_close(make_desktop: Any, home: Path, qtbot: Any) -> None:
    desktop = make_desktop()
    for note in ("We deploy on Tuesdays after the review.", "Rollbacks need the on-call lead's approval.",
                 "The staging database is refreshed every Monday night."):
        desktop.engine.call("store", {"content": note})
    desktop.show_window()
    home_page = desktop.window.overview
    home_page.question.setText("xylophone lessons")
    with qtbot.waitSignal(home_page.searched, timeout=30_000):
        home_page.ask_button.click()
    assert home_page.results.message.text().startswith("Nothing close to “xylophone lessons” is remembered.")
    home_page.question.setText("when do we deploy")
    with qtbot.waitSignal(home_page.searched, timeout=30_000):
        home_page.ask_button.click()
    cards = home_page.results.cards
    assert cards and "Tuesdays" in cards[0].memory.content and not home_page.results.message.text().startswith(
        "Nothing close")
