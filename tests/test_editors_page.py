"""The Editors page: one card per editor, its state in words, and one button that connects or disconnects it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractButton, QLabel, QWidget

from engram.app.desktop.desktop import Desktop
from engram.app.desktop.editors_page import EditorsPage
from engram.core import Paths
from engram.mcp.setup_clients import CLIENTS

from .conftest import HashingEmbedder
from .desktop_support import desktop_environ, desktops

EDITORS = ["claude-code", "claude-desktop", "cursor", "vscode", "codex", "windsurf"]


@pytest.fixture
def home(desktop_home: Path) -> Path:
    """A home folder of our own, with Cursor installed."""
    (desktop_home / ".cursor").mkdir()
    return desktop_home


@pytest.fixture
def make_desktop(qapp: Any, paths: Paths, home: Path, fake_embedder: HashingEmbedder) -> Iterator[Any]:
    with desktops(paths, desktop_environ(paths, home), fake_embedder, tray=False) as build:
        yield build


def loaded_page(desktop: Desktop, qtbot: Any) -> EditorsPage:
    qtbot.waitUntil(lambda: desktop.editors.loaded, timeout=10_000)
    return desktop.window.editors


def test_each_editor_has_a_card_that_says_checking_then_its_state_in_words(make_desktop: Any, home: Path,
                                                                            qtbot: Any) -> None:
    windsurf = home / ".codeium" / "windsurf" / "mcp_config.json"  # a config without Engram: not connected
    windsurf.parent.mkdir(parents=True)
    windsurf.write_text('{"mcpServers": {}}')
    desktop = make_desktop()
    page = desktop.window.editors
    assert list(page.cards) == EDITORS
    assert {card.state_label.text() for card in page.cards.values()} == {"Checking…"}, "before the files are read"
    assert not any(button.isEnabled() for button in page.buttons.values())

    loaded_page(desktop, qtbot)
    states = {name: card.state_label.text() for name, card in page.cards.items()}
    assert states == {"claude-code": "Not found on this computer", "claude-desktop": "Not found on this computer",
                      "cursor": "Installed — not connected", "vscode": "Not found on this computer",
                      "codex": "Not found on this computer", "windsurf": "Installed — not connected"}
    assert [card.name_label.text() for card in page.cards.values()] == [CLIENTS[n].label for n in EDITORS]
    assert page.cards["cursor"].details.text() == f"Settings file: {home / '.cursor' / 'mcp.json'}"
    assert page.buttons["cursor"].text() == "Connect" and page.buttons["cursor"].isEnabled()
    icon = page.cards["cursor"].icon.pixmap()
    assert not icon.isNull() and icon.devicePixelRatio() == page.cards["cursor"].devicePixelRatioF()


def test_connect_writes_the_editors_config_and_asks_for_a_restart_then_disconnect_removes_it(
        make_desktop: Any, home: Path, qtbot: Any) -> None:
    desktop = make_desktop()
    page = loaded_page(desktop, qtbot)
    card, button = page.cards["cursor"], page.buttons["cursor"]
    config = home / ".cursor" / "mcp.json"

    button.click()
    assert button.text() == "Connecting…" and not button.isEnabled()
    qtbot.waitUntil(lambda: desktop.editors.states["cursor"].connected, timeout=10_000)
    assert json.loads(config.read_text())["mcpServers"]["engram"]["args"][-1] == "mcp"
    assert card.state_label.text() == "Connected — restart Cursor to use Engram"
    assert button.text() == "Disconnect" and button.isEnabled() and button.accessibleName() == "Disconnect Cursor"
    assert "Restart Cursor" in page.message.text()

    button.click()
    assert button.text() == "Disconnecting…" and not button.isEnabled()
    qtbot.waitUntil(lambda: not desktop.editors.states["cursor"].connected, timeout=10_000)
    assert "engram" not in json.loads(config.read_text())["mcpServers"]
    assert card.state_label.text() == "Installed — not connected"
    assert button.text() == "Connect" and button.isEnabled() and button.accessibleName() == "Connect Cursor"


def test_an_editor_connected_before_this_session_reads_connected(make_desktop: Any, home: Path, qtbot: Any) -> None:
    (home / ".cursor" / "mcp.json").write_text('{"mcpServers": {"engram": {"command": "engram", "args": ["mcp"]}}}')
    page = loaded_page(make_desktop(), qtbot)
    assert page.cards["cursor"].state_label.text() == "Connected"
    assert page.buttons["cursor"].text() == "Disconnect"


def test_a_change_that_fails_says_why_and_gives_the_button_back(make_desktop: Any, home: Path, qtbot: Any) -> None:
    config = home / ".cursor" / "mcp.json"
    config.write_text("{ not json")
    desktop = make_desktop()
    page = loaded_page(desktop, qtbot)
    button = page.buttons["cursor"]
    with qtbot.waitSignal(page.changed, timeout=10_000) as changed:
        button.click()
    assert changed.args[0] == "cursor" and changed.args[1] == page.message.text()
    assert "mcp.json" in page.message.text() and config.read_text() == "{ not json"
    qtbot.waitUntil(button.isEnabled, timeout=10_000)
    assert button.text() == "Connect" and page.cards["cursor"].state_label.text() == "Installed — not connected"


def test_a_not_found_editors_button_is_disabled_and_says_why(make_desktop: Any, qtbot: Any) -> None:
    page = loaded_page(make_desktop(), qtbot)
    button = page.buttons["vscode"]
    assert not button.isEnabled() and button.text() == "Connect"
    assert button.toolTip() == "VS Code was not found on this computer."
    assert page.cards["vscode"].details.isHidden(), "no settings file is named for an editor that is not there"


def test_every_control_and_state_has_an_accessible_name_and_tab_follows_the_cards(make_desktop: Any,
                                                                                   qtbot: Any) -> None:
    page = loaded_page(make_desktop(), qtbot)
    controls = page.findChildren(QAbstractButton)
    assert controls and all(control.accessibleName() for control in controls)
    assert all(card.state_label.accessibleName() for card in page.cards.values())
    assert page.cards["cursor"].state_label.accessibleName() == "Cursor: Installed — not connected"
    selectable = [label for label in page.findChildren(QLabel) if label.textInteractionFlags() & Qt.TextInteractionFlag.TextSelectableByMouse]
    assert selectable and all(label.accessibleName() for label in selectable)

    chain: list[QWidget] = []
    widget = page.buttons[EDITORS[0]]
    while widget not in chain:
        chain.append(widget)
        widget = widget.nextInFocusChain()
    buttons = [w for w in chain if w in page.buttons.values()]
    assert buttons == [page.buttons[name] for name in EDITORS]


def test_no_horizontal_scrolling_at_800_pixels_wide(make_desktop: Any, qtbot: Any) -> None:
    desktop = make_desktop()
    page = loaded_page(desktop, qtbot)
    window = desktop.window
    window.tabs.setCurrentWidget(page)
    window.resize(800, 600)
    window.show()
    qtbot.waitExposed(window)
    page.buttons["cursor"].click()  # the longest state: "Connected — restart Cursor to use Engram"
    qtbot.waitUntil(lambda: desktop.editors.states["cursor"].connected, timeout=10_000)
    qtbot.waitUntil(lambda: page.scroll_area.widget().width() <= page.scroll_area.viewport().width(), timeout=5_000)
    assert window.width() == 800
    assert not page.scroll_area.horizontalScrollBar().isVisible()
