"""The Settings page in the user's words: plain labels grouped, the raw key in tooltips and in Advanced's
complete list, nothing cut off or scrolled sideways at 800×600 and larger, every control named for
assistive technology, and a change made on the page is what ``engram config list`` prints."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QAbstractButton, QCheckBox, QComboBox, QLabel, QLineEdit

from engram.app.desktop.desktop import Desktop
from engram.app.desktop.setting_labels import LABELS
from engram.app.desktop.settings_page import SECTIONS
from engram.core.settings import setting_keys

from .desktop_support import enter, settle


@pytest.fixture
def home(desktop_home: Path) -> Path:
    return desktop_home


def shown_settings(desktop: Desktop, qtbot: Any, width: int, height: int) -> Any:
    window = desktop.window
    window.resize(width, height)
    window.show()
    window.tabs.setCurrentWidget(window.settings)
    qtbot.waitExposed(window)
    qtbot.waitUntil(lambda: window.width() == width and window.height() == height, timeout=5_000)
    return window.settings


@pytest.mark.parametrize("size", [(800, 600), (1200, 800)])
def test_the_page_never_scrolls_sideways_and_no_label_is_cut_off(make_desktop: Any, qtbot: Any,
                                                                 size: tuple[int, int]) -> None:
    desktop = make_desktop()
    page = shown_settings(desktop, qtbot, *size)
    scroll = page.scroll_area
    assert not scroll.horizontalScrollBar().isVisible()
    assert scroll.widget().width() <= scroll.viewport().width(), "the body fits the visible width"
    assert scroll.widget().minimumSizeHint().width() <= scroll.viewport().width()
    for key, row in page.rows.items():
        label = row.label
        assert label.isVisible(), key
        fits = label.width() >= label.sizeHint().width()
        assert fits or (isinstance(label, QLabel) and label.wordWrap()), f"{key}: label cut off"
        box = page.groups[next(title for title, keys in SECTIONS if key in keys)]
        assert label.mapTo(box, label.rect().topRight()).x() <= box.width(), f"{key}: label past the group's edge"
        assert row.mapTo(box, row.rect().topRight()).x() <= box.width(), f"{key}: row past the group's edge"


def test_rows_are_labelled_in_words_with_the_key_in_their_tooltips(make_desktop: Any) -> None:
    page = make_desktop().window.settings
    assert [title for title, _ in SECTIONS] == ["General", "Local AI", "Search", "Editors & service", "Advanced"]
    assert page.rows["recall.llm"].label.text() == "Let local AI plan and answer recalls"
    assert page.rows["search.limit"].label.text() == "Results per search"
    assert page.rows["search.limit"].unit.text() == "results"
    keys = set(setting_keys())
    for title, box in page.groups.items():
        if title == "Advanced":
            continue
        texts = {w.text() for w in box.findChildren(QLabel)} | {w.text() for w in box.findChildren(QAbstractButton)}
        assert not texts & keys, f"{title}: a raw key shown as a label"
    for key, row in page.rows.items():
        assert row.label.text() == LABELS[key], key
        assert row.editor.toolTip().startswith(f"{key}:"), key
        assert row.label.toolTip().startswith(f"{key}:"), key


def test_advanced_lists_every_key_with_its_value(make_desktop: Any, qtbot: Any) -> None:
    desktop = make_desktop()
    page = desktop.window.settings
    listed = page.every_setting
    assert page.groups["Advanced"].isAncestorOf(listed)
    for key in setting_keys():
        assert f"<b>{key}</b> = " in listed.lines[key].text(), key
    assert "<b>search.limit</b> = 10<br>" in listed.lines["search.limit"].text()
    enter(page.rows["search.limit"], "12")
    settle(desktop, qtbot)
    assert "<b>search.limit</b> = 12 (set)<br>" in listed.lines["search.limit"].text()


def test_every_control_has_an_accessible_name(make_desktop: Any) -> None:
    page = make_desktop().window.settings
    controls = [*page.findChildren(QAbstractButton), *page.findChildren(QComboBox), *page.findChildren(QLineEdit)]
    assert len(controls) > len(page.rows)
    for control in controls:
        assert control.accessibleName(), f"{type(control).__name__} {control.toolTip()!r} has no accessible name"
    assert page.rows["recall.llm"].editor.accessibleName() == "Let local AI plan and answer recalls"
    assert isinstance(page.rows["recall.llm"].editor, QCheckBox)


def test_a_value_changed_on_the_page_is_what_engram_config_list_prints(make_desktop: Any, qtbot: Any,
                                                                       environ: dict[str, str]) -> None:
    desktop = make_desktop()
    page = desktop.window.settings
    enter(page.rows["search.limit"], "17")
    page.rows["tagger.llm"].editor.setChecked(True)
    settle(desktop, qtbot)
    assert page.rows["search.limit"].error.isHidden()
    listed = subprocess.run([sys.executable, "-m", "engram.app", "config", "list"], env=environ,
                            capture_output=True, text=True, timeout=120, check=True).stdout
    lines = [line.strip() for line in listed.splitlines()]
    assert "search.limit = 17  (file)" in lines and "tagger.llm = true  (file)" in lines, listed
