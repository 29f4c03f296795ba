"""The Settings page in the user's words: plain labels grouped, the raw key in tooltips and in Advanced's
complete list, nothing cut off or scrolled sideways at 800×600 and larger, every control named for
assistive technology, and a change made on the page is what ``engram config list`` prints."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSpinBox,
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QLabel,
    QLineEdit,
    QSlider,
    QSpinBox,
)

from engram.app.desktop.desktop import Desktop
from engram.app.desktop.models_control import ModelsController
from engram.app.desktop.setting_labels import LABELS
from engram.app.desktop.setting_rows import ERROR_ON_DARK, ERROR_ON_LIGHT, WEIGHT_DEBOUNCE_MS
from engram.app.desktop.settings_page import SECTIONS
from engram.core import Paths
from engram.core.settings import setting_keys
from engram.core.settings_file import load_settings, set_value

from .desktop_support import settle


@pytest.fixture
def home(desktop_home: Path) -> Path:
    return desktop_home


def type_number(qtbot: Any, spin: QAbstractSpinBox, text: str) -> None:
    """Select a spin box's value, type ``text`` and press Enter, as a person would."""
    spin.selectAll()
    qtbot.keyClicks(spin, text)
    qtbot.keyClick(spin, Qt.Key.Key_Return)


def counted_saves(desktop: Desktop, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every value the page hands the settings controller to write, from now on (still written)."""
    sent: list[tuple[str, str]] = []
    real = desktop.settings_control.save

    def save(key: str, text: str) -> None:
        sent.append((key, text))
        real(key, text)

    monkeypatch.setattr(desktop.settings_control, "save", save)
    return sent


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
    page.show_advanced(True)
    qtbot.waitUntil(lambda: page.rows["service.port"].label.isVisible(), timeout=5_000)
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
    assert [title for title, _ in SECTIONS] == ["General", "Local AI", "Remembering", "Models on this computer",
                                                "Search", "Sessions, folders & service", "Chat research",
                                                "Models on a server"]
    assert page.rows["recall.llm"].label.text() == "Let local AI plan and answer recalls"
    assert page.rows["search.limit"].label.text() == "Results per search"
    assert page.rows["search.limit"].editor.suffix() == " results"
    keys = set(setting_keys())
    for title, box in page.groups.items():
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
    assert page.advanced.isAncestorOf(listed)
    for key in setting_keys():
        assert f"<b>{key}</b> = " in listed.lines[key].text(), key
    assert "<b>search.limit</b> = 10<br>" in listed.lines["search.limit"].text()
    type_number(qtbot, page.rows["search.limit"].editor, "12")
    settle(desktop, qtbot)
    assert "<b>search.limit</b> = 12 (set)<br>" in listed.lines["search.limit"].text()


def test_everyday_choices_come_first_and_a_search_finds_any_setting_opening_advanced(
        make_desktop: Any, qtbot: Any) -> None:
    desktop = make_desktop()
    page = shown_settings(desktop, qtbot, 1000, 700)
    assert page.advanced.isHidden() and page.advanced_toggle.isVisible(), "Advanced starts collapsed"
    for title in ("General", "Local AI", "Remembering"):
        assert page.groups[title].isVisible(), title
    assert not page.rows["service.port"].isVisible() and not page.rows["helper.local.batch"].isVisible()
    assert len([r for r in page.rows.values() if r.isVisible()]) <= 12, "a few everyday choices, not forty rows"
    qtbot.keyClicks(page.find_box, "port")
    assert not page.advanced.isHidden(), "a match under Advanced opens it"
    assert page.rows["service.port"].isVisible() and not page.rows["search.limit"].isVisible()
    assert not page.groups["General"].isVisible() and not page.groups["Search"].isVisible()
    page.find_box.setText("notify")
    assert page.rows["desktop.notifications"].isVisible() and not page.rows["service.port"].isVisible()
    page.find_box.setText("xylophone")
    assert page.no_match.isVisible() and page.no_match.text() == "No setting matches “xylophone”."
    page.find_box.clear()
    assert not page.no_match.isVisible() and page.groups["General"].isVisible()
    page.show_advanced(True)
    assert all(r.isVisible() for r in page.rows.values()), "an empty search shows every setting again"


def test_cpu_threads_offer_no_more_than_this_computers_cores(make_desktop: Any) -> None:
    editor = make_desktop().window.settings.rows["helper.local.threads"].editor
    assert editor.maximum() == (os.cpu_count() or 1) and editor.minimum() == 0


def test_every_control_has_an_accessible_name(make_desktop: Any) -> None:
    page = make_desktop().window.settings
    controls = [*page.findChildren(QAbstractButton), *page.findChildren(QComboBox), *page.findChildren(QLineEdit),
                *page.findChildren(QAbstractSpinBox), *page.findChildren(QSlider)]  # not the scroll bars
    assert len(controls) > len(page.rows)
    for control in controls:
        assert control.accessibleName(), f"{type(control).__name__} {control.toolTip()!r} has no accessible name"
    assert page.rows["recall.llm"].editor.accessibleName() == "Let local AI plan and answer recalls"
    assert isinstance(page.rows["recall.llm"].editor, QCheckBox)


@pytest.mark.slow
def test_a_value_changed_on_the_page_is_what_engram_config_list_prints(make_desktop: Any, qtbot: Any,
                                                                       environ: dict[str, str]) -> None:
    desktop = make_desktop()
    page = desktop.window.settings
    type_number(qtbot, page.rows["search.limit"].editor, "17")
    page.rows["tagger.llm"].editor.setChecked(True)
    settle(desktop, qtbot)
    assert page.rows["search.limit"].error.isHidden()
    listed = subprocess.run([sys.executable, "-m", "engram.app", "config", "list"], env=environ,
                            capture_output=True, text=True, timeout=120, check=True).stdout
    lines = [line.strip() for line in listed.splitlines()]
    assert "search.limit = 17  (file)" in lines and "tagger.llm = true  (file)" in lines, listed


# ------------------------------------------------------------------ the control of each type


def test_a_number_is_a_spin_box_with_its_unit_and_the_models_bounds(make_desktop: Any) -> None:
    rows = make_desktop().window.settings.rows
    limit = rows["search.limit"].editor
    assert isinstance(limit, QSpinBox) and not limit.keyboardTracking()
    assert (limit.minimum(), limit.maximum(), limit.value()) == (1, 50, 10)
    assert limit.suffix() == " results" and limit.text() == "10 results"
    timeout = rows["recall.llm_timeout_sec"].editor
    assert isinstance(timeout, QDoubleSpinBox) and timeout.suffix() == " seconds"
    assert (timeout.minimum(), timeout.maximum(), timeout.value()) == (1.0, 600.0, 30.0)
    deadline = rows["recall.run_budget.deadline_sec"].editor
    assert isinstance(deadline, QDoubleSpinBox) and deadline.minimum() == pytest.approx(0.1)
    port = rows["service.port"].editor
    assert isinstance(port, QSpinBox) and (port.minimum(), port.maximum()) == (0, 65535) and port.suffix() == ""


def test_a_typed_number_is_saved_once_when_the_field_is_left(make_desktop: Any, qtbot: Any, paths: Paths,
                                                             environ: dict[str, str],
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    desktop = make_desktop()
    sent = counted_saves(desktop, monkeypatch)
    row = desktop.window.settings.rows["search.limit"]
    spin = row.editor
    assert isinstance(spin, QSpinBox)
    spin.selectAll()
    qtbot.keyClicks(spin, "23")
    assert sent == [], "nothing is written while typing"
    qtbot.keyClick(spin, Qt.Key.Key_Return)
    spin.editingFinished.emit()  # and the focus leaves: the same value is not written again
    settle(desktop, qtbot)
    assert sent == [("search.limit", "23")]
    assert load_settings(paths.settings_file, environ).value("search.limit") == 23

    timeout = desktop.window.settings.rows["recall.llm_timeout_sec"].editor
    assert timeout.text() == "30 seconds", "whole seconds are shown without decimals"
    type_number(qtbot, timeout, "45")
    settle(desktop, qtbot)
    assert sent[-1] == ("recall.llm_timeout_sec", "45")
    assert load_settings(paths.settings_file, environ).value("recall.llm_timeout_sec") == 45.0

    deadline = desktop.window.settings.rows["recall.run_budget.deadline_sec"].editor  # its bound is 0.1 s
    type_number(qtbot, deadline, "12.5")
    settle(desktop, qtbot)
    assert sent[-1] == ("recall.run_budget.deadline_sec", "12.5")
    assert load_settings(paths.settings_file, environ).value("recall.run_budget.deadline_sec") == 12.5


def test_a_number_out_of_range_cannot_be_entered_and_a_refusal_shows_under_the_row(
        make_desktop: Any, qtbot: Any, paths: Paths, environ: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    desktop = make_desktop()
    sent = counted_saves(desktop, monkeypatch)
    row = desktop.window.settings.rows["search.limit"]
    spin = row.editor
    assert isinstance(spin, QSpinBox)
    type_number(qtbot, spin, "0")  # below the model's 1: the box goes back to the value before
    assert spin.value() == 10 and sent == []
    type_number(qtbot, spin, "500")  # the third digit is not taken: at most 50
    assert spin.value() == 50
    settle(desktop, qtbot)
    assert load_settings(paths.settings_file, environ).value("search.limit") == 50 and row.error.isHidden()
    row.save("0")  # a value the model refuses (from wherever it came) is explained under the row
    settle(desktop, qtbot)
    assert not row.error.isHidden() and "search.limit" in row.error.text()
    assert load_settings(paths.settings_file, environ).value("search.limit") == 50
    type_number(qtbot, spin, "49")
    settle(desktop, qtbot)
    assert row.error.isHidden() and load_settings(paths.settings_file, environ).value("search.limit") == 49


def test_a_weight_slider_moved_with_the_keyboard_saves_one_value_after_a_pause(
        make_desktop: Any, qtbot: Any, paths: Paths, environ: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    desktop = make_desktop()
    sent = counted_saves(desktop, monkeypatch)
    row = desktop.window.settings.rows["search.weight_graph"]
    slider = row.editor
    assert isinstance(slider, QSlider) and slider.orientation() == Qt.Orientation.Horizontal
    assert slider.accessibleName() == LABELS["search.weight_graph"] == row.label.text()
    assert row.value_label is not None and row.value_label.text() == "0.1"
    for _ in range(3):
        qtbot.keyClick(slider, Qt.Key.Key_Right)
    assert row.value_label.text() == "0.4" and sent == [], "no write per step"
    qtbot.waitUntil(lambda: sent != [], timeout=5_000)
    qtbot.wait(WEIGHT_DEBOUNCE_MS + 200)
    assert sent == [("search.weight_graph", "0.4")]
    settle(desktop, qtbot)
    assert load_settings(paths.settings_file, environ).value("search.weight_graph") == 0.4


def test_the_gpu_list_reads_in_words_and_saves_the_raw_value(make_desktop: Any, qtbot: Any, paths: Paths,
                                                             environ: dict[str, str]) -> None:
    set_value(paths.settings_file, "model.gpu_device", "3")  # a GPU this list does not know yet
    desktop = make_desktop()
    page = desktop.window.settings
    combo = page.rows["model.gpu_device"].editor
    assert isinstance(combo, QComboBox) and not combo.isEditable()
    assert [combo.itemText(i) for i in range(combo.count())] == [
        "Automatic (the best GPU found)", "CPU only", "GPU 3"]
    assert combo.currentText() == "GPU 3" and combo.currentData() == "3"

    gpus = [SimpleNamespace(index=0, name="NVIDIA RTX A4000", vendor="nvidia", memory_mb=16376, discrete=True),
            SimpleNamespace(index=3, name="AMD Radeon 780M", vendor="amd", memory_mb=None, discrete=False)]
    page.show_gpus(gpus, "NVIDIA RTX A4000")
    assert [combo.itemText(i) for i in range(combo.count())] == [
        "Automatic (the best GPU found)", "CPU only", "GPU 0: NVIDIA RTX A4000 (16376 MB)", "GPU 3: AMD Radeon 780M"]
    assert combo.currentData() == "3", "the value the file holds stays chosen"
    assert "Chosen now: NVIDIA RTX A4000." in page.gpu_label.text()

    combo.setCurrentIndex(combo.findText("CPU only"))
    combo.activated.emit(combo.currentIndex())
    settle(desktop, qtbot)
    assert load_settings(paths.settings_file, environ).value("model.gpu_device") == "cpu"
    index = combo.findData("0")
    combo.setCurrentIndex(index)
    combo.activated.emit(index)
    settle(desktop, qtbot)
    assert load_settings(paths.settings_file, environ).value("model.gpu_device") == "0"


def test_refusals_are_red_enough_on_a_dark_palette_too(make_desktop: Any) -> None:
    page = make_desktop().window.settings
    row = page.rows["search.limit"]
    assert ERROR_ON_LIGHT in row.error.styleSheet(), "the default palette is light"
    dark = QPalette(page.palette())
    for role, colour in ((QPalette.ColorRole.Window, "#202124"), (QPalette.ColorRole.WindowText, "#e8eaed"),
                         (QPalette.ColorRole.PlaceholderText, "#9aa0a6")):
        dark.setColor(role, QColor(colour))
    page.setPalette(dark)
    assert ERROR_ON_DARK in row.error.styleSheet()
    assert "#9aa0a6" in row.note.styleSheet()
    assert "#9aa0a6" in page.every_setting.lines["search.limit"].text()
    page._show_key_text("No usable OS keyring", False, True)
    assert ERROR_ON_DARK in page.key_state.styleSheet()


# ------------------------------------------------------------------ the helper model's file


def test_the_models_controller_removes_nothing_that_was_not_downloaded(make_desktop: Any, qtbot: Any) -> None:
    desktop = make_desktop()
    page = desktop.window.settings
    models = page.models
    assert isinstance(models, ModelsController)
    if isinstance(getattr(desktop, "models", None), ModelsController):
        assert models is desktop.models, "the page uses the desktop's controller"
    state = models.state("qwen3.5-4b")
    assert not state.present and not state.can_remove and "not downloaded" in state.text
    with qtbot.waitSignal(models.done, timeout=30_000) as done:
        assert models.act("remove")
    assert done.args == ["qwen3.5-4b was not downloaded.", True]
    assert not models.busy and page.model_progress.isHidden()
    with qtbot.waitSignal(models.done, timeout=5_000) as refused:
        models.act("download", "no-such-model")
    message, ok = refused.args
    assert not ok and "no-such-model" in message


def test_the_chat_model_list_offers_the_large_model_only_with_the_memory_it_needs(
        make_desktop: Any, qtbot: Any, paths: Paths, environ: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    from engram.core.errors import ModelError

    monkeypatch.setattr("engram.core.models.files.total_memory_mb", lambda: 24 * 1024)
    desktop = make_desktop()
    combo = desktop.window.settings.rows["chat.local_model"].editor
    assert isinstance(combo, QComboBox) and combo.isEditable(), "a custom .gguf path can be typed in"
    texts = [combo.itemText(i) for i in range(combo.count())]
    assert texts[0] == "qwen3.5-4b" and combo.currentData() == "qwen3.5-4b"
    large = combo.findData("qwen3.5-35b-a3b")
    assert texts[large] == "qwen3.5-35b-a3b — needs 32 GB of memory; this computer has 24 GB"
    assert not combo.model().item(large).isEnabled(), "shown with the reason, not selectable"
    desktop.engine.settings.chat.local_model = "qwen3.5-35b-a3b"
    with pytest.raises(ModelError, match="needs 32 GB of memory; this computer has 24 GB"):
        desktop.engine.chat_model()
    monkeypatch.setattr("engram.core.models.files.total_memory_mb", lambda: 64 * 1024)
    roomy = make_desktop()
    combo = roomy.window.settings.rows["chat.local_model"].editor
    assert combo.model().item(combo.findData("qwen3.5-35b-a3b")).isEnabled()
    combo.setCurrentIndex(combo.findData("qwen3.5-35b-a3b"))
    combo.activated.emit(combo.currentIndex())
    settle(roomy, qtbot)
    assert load_settings(paths.settings_file, environ).value("chat.local_model") == "qwen3.5-35b-a3b"
