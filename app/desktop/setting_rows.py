"""The Settings page's widgets for single keys: one editable row, and the read-only list of every key.

A row shows its plain label (``setting_labels``), the raw key in its tooltip, an editor that fits the
key's type (a checkbox for a boolean, a list for choices, a field with its unit for the rest), a note
(what it does, where it comes from, whether it needs a restart) and the model's message when a value
is refused. Values leave the row as text: the settings controller validates them with the same model
as ``engram config set``, so a field accepts anything typed and the refusal explains itself.
"""

from __future__ import annotations

import html
import typing
from typing import TYPE_CHECKING, Any, Literal

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QVBoxLayout,
    QWidget,
)

from engram.core.settings import GROUPS, describe_key, setting_keys, split_key
from engram.core.settings_file import LoadedSettings, env_name

from .setting_labels import LABELS, UNITS
from .settings_control import as_text as _text

if TYPE_CHECKING:
    from .settings_page import SettingsPage

#: Keys a running service or a loaded model holds: saved at once, used after a restart.
RESTART_KEYS = frozenset({"service.port", "embed.model", "embed.threads", "model.gpu_device",
                          "store.read_consistency_sec"})


def _annotation(key: str) -> Any:
    group, name = split_key(key)
    return GROUPS[group].model_fields[name].annotation


def _wrapped(text: str = "", colour: str = "") -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    if colour:
        label.setStyleSheet(f"color: {colour}")
    return label


class SettingRow(QWidget):
    """One key: its editor (with a unit), a note (origin, restart) and the validation message.

    ``label`` is the widget that shows the plain label: the checkbox itself for a boolean, else a
    word-wrapped ``QLabel`` the page puts beside the row.
    """

    def __init__(self, page: SettingsPage, key: str, choices: list[str] | None = None) -> None:
        super().__init__()
        self.page = page
        self.key = key
        info = describe_key(key)
        words = LABELS[key]
        tip = f"{key}: {info['description']} Accepts {info['accepts']}."
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 4)
        annotation = _annotation(key)
        self.editor: QWidget
        self.label: QLabel | QCheckBox
        if annotation is bool:
            self.editor = self.label = box = QCheckBox(words)
            box.toggled.connect(lambda on: self.save("true" if on else "false"))
        elif typing.get_origin(annotation) is Literal or choices is not None:
            self.editor = combo = QComboBox()
            combo.addItems([str(a) for a in typing.get_args(annotation)] if choices is None else choices)
            combo.setEditable(choices is not None)
            combo.activated.connect(lambda _i: self.save(combo.currentText()))
            if (typed := combo.lineEdit()) is not None:  # an editable combo box has one
                typed.setAccessibleName(words)
                typed.editingFinished.connect(lambda: self.save(combo.currentText()))
        else:
            self.editor = line = QLineEdit()
            line.editingFinished.connect(lambda: self.save(line.text()))
            if annotation in (int, float):  # a number needs a short field, not the page's width
                line.setMaximumWidth(line.fontMetrics().horizontalAdvance("0") * 16)
        if not isinstance(self.editor, QCheckBox):
            self.label = label = _wrapped(words)
            label.setBuddy(self.editor)
            # A wrapped label's size hint is narrow enough to break even a short label in two: keep a short
            # one on one line, and break a long one only past about 24 characters.
            metrics = label.fontMetrics()
            label.setMinimumWidth(min(metrics.horizontalAdvance(words) + 2, metrics.averageCharWidth() * 24))
        self.label.setToolTip(tip)
        self.editor.setToolTip(tip)
        self.editor.setAccessibleName(words)
        self.editor.setAccessibleDescription(info["description"])
        line_of_editor = QHBoxLayout()
        line_of_editor.setContentsMargins(0, 0, 0, 0)
        line_of_editor.addWidget(self.editor, 1 if isinstance(self.editor, QComboBox) or key == "tagger.base_url"
                                 or key == "tagger.remote_model" else 0)
        self.unit = QLabel(UNITS.get(key, ""))
        self.unit.setVisible(key in UNITS)
        line_of_editor.addWidget(self.unit)
        if not isinstance(self.editor, QComboBox):
            line_of_editor.addStretch(1)
        layout.addLayout(line_of_editor)
        self.note = _wrapped(colour="#666")
        layout.addWidget(self.note)
        self.error = _wrapped(colour="#b00020")
        self.error.hide()
        layout.addWidget(self.error)
        self._loading = False

    def load(self, value: Any, origin: str) -> None:
        """Show ``value`` without saving it."""
        self._loading = True
        try:
            if isinstance(self.editor, QCheckBox):
                self.editor.setChecked(bool(value))
            elif isinstance(self.editor, QComboBox):
                index = self.editor.findText(_text(value))
                if index < 0:
                    self.editor.addItem(_text(value))
                    index = self.editor.count() - 1
                self.editor.setCurrentIndex(index)
            elif isinstance(self.editor, QLineEdit):
                self.editor.setText(_text(value))
        finally:
            self._loading = False
        fixed = origin == "env"
        self.editor.setEnabled(not fixed)
        notes = [describe_key(self.key)["description"]]
        if fixed:
            notes.append(f"Set by {env_name(self.key)} in the environment, which wins over this window.")
        if self.key in RESTART_KEYS:
            notes.append("Applies after Engram restarts.")
        self.note.setText(" ".join(notes))

    def save(self, text: str) -> None:
        if self._loading:
            return
        self.page.save(self, text)

    def show_error(self, message: str | None) -> None:
        self.error.setText(message or "")
        self.error.setVisible(bool(message))


class EverySetting(QGroupBox):
    """Every key of the settings, read-only, as ``key = value`` with its description: nothing is hidden."""

    def __init__(self) -> None:
        super().__init__("Every setting (change the ones not above with engram config set KEY VALUE)")
        layout = QVBoxLayout(self)
        self.lines: dict[str, QLabel] = {}
        for key in setting_keys():
            line = self.lines[key] = _wrapped()
            line.setTextFormat(Qt.TextFormat.RichText)
            line.setToolTip(key)
            layout.addWidget(line)

    def show_values(self, loaded: LoadedSettings) -> None:
        for key in self.lines:
            self.show_value(key, loaded.value(key), loaded.origins.get(key, "default"))

    def show_value(self, key: str, value: Any, origin: str) -> None:
        where = {"env": f" (from {env_name(key)})", "file": " (set)"}.get(origin, "")
        self.lines[key].setText(
            f"<b>{html.escape(key)}</b> = {html.escape(_text(value))}{where}<br>"
            f"<span style='color: #666'>{html.escape(describe_key(key)['description'])}</span>")
