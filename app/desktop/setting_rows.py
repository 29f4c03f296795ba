"""The Settings page's editable row for one key.

A row shows its plain label (``setting_labels``), the raw key in its tooltip, the control that fits the
key's type, a note (what it does, where it comes from, whether it needs a restart) and the model's message
when a value is refused. The controls: a switch (checkbox) for a boolean; a dropdown for a choice (its
items in words, the raw value in each item's data: the GPU list reads "CPU only" and saves ``cpu``); a
slider with its value beside it for a search weight; a spin box for a number, its unit as the suffix and
its range the model's bounds; a text field for the rest. Numbers are saved when the person leaves the
field or pauses on a slider, never per keystroke. Values leave the row as text: the settings controller
validates them with the same model as ``engram config set``, so a refusal explains itself under the row.
Colours come from the palette (a dark one gets a lighter red) and follow it when it changes. The read-only
list of every key is ``every_setting``.
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from typing import Any, Literal

import annotated_types
from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtGui import QColor, QPalette, QWheelEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSlider,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from engram.core.settings import GROUPS, describe_key, split_key
from engram.core.settings_file import env_name

from .setting_labels import LABELS, UNITS
from .settings_control import as_text as _text

#: Keys a running service or a loaded model holds: saved at once, used after a restart.
RESTART_KEYS = frozenset({"service.port", "embed.model", "embed.threads", "model.gpu_device",
                          "store.read_consistency_sec"})
#: The search channels' weights: a slider each.
WEIGHT_KEYS = frozenset({"search.weight_semantic", "search.weight_lexical", "search.weight_graph"})
#: A weight slider's steps across the weight's range.
WEIGHT_STEPS = 100
#: How long a weight slider waits after a key or the wheel moved it before it saves, in milliseconds.
WEIGHT_DEBOUNCE_MS = 400
#: The GPU list's fixed items in words.
GPU_WORDS = {"auto": "Automatic (the best GPU found)", "cpu": "CPU only"}
#: A number's bound when its model sets none.
NO_BOUND = 10**9
#: The red of a refusal on a light window and on a dark one.
ERROR_ON_LIGHT, ERROR_ON_DARK = "#b00020", "#ff8a80"


def _annotation(key: str) -> Any:
    group, name = split_key(key)
    return GROUPS[group].model_fields[name].annotation


def number_range(key: str, decimals: int = 0) -> tuple[float, float]:
    """The lowest and highest value ``key`` accepts (a strict bound moved in by one step of ``decimals``)."""
    group, name = split_key(key)
    step = 1 if _annotation(key) is int else 10.0 ** -decimals
    low, high = float(-NO_BOUND), float(NO_BOUND)
    for m in GROUPS[group].model_fields[name].metadata:
        if isinstance(m, annotated_types.Ge):
            low = float(m.ge)  # type: ignore[arg-type]
        elif isinstance(m, annotated_types.Gt):
            low = float(m.gt) + step  # type: ignore[arg-type]
        elif isinstance(m, annotated_types.Le):
            high = float(m.le)  # type: ignore[arg-type]
        elif isinstance(m, annotated_types.Lt):
            high = float(m.lt) - step  # type: ignore[arg-type]
    return low, high


def decimals_of(value: float) -> int:
    """The decimals ``value`` needs to be shown exactly (at most 6)."""
    text = f"{value:.6f}".rstrip("0")
    return len(text.partition(".")[2])


def float_text(value: float, decimals: int = 6) -> str:
    """``value`` as a person writes it: ``45.0``, ``0.8`` (no ``0.8000000000000002``)."""
    text = f"{value:.{decimals}f}"
    if "." not in text:
        return text
    text = text.rstrip("0")
    return text + "0" if text.endswith(".") else text


def gpu_words(value: str) -> str:
    """A ``model.gpu_device`` value the GPU list does not hold yet, in words."""
    return GPU_WORDS.get(value) or (f"GPU {value}" if value.isdigit() else f"The GPU whose name contains “{value}”")


def note_colour(widget: QWidget) -> str:
    """The palette's colour for secondary text, as ``#rrggbb`` (a translucent one laid over the window)."""
    c, under = (widget.palette().color(r) for r in (QPalette.ColorRole.PlaceholderText, QPalette.ColorRole.Window))
    a = c.alphaF()
    mixed = (a * x + (1 - a) * y for x, y in ((c.redF(), under.redF()), (c.greenF(), under.greenF()),
                                               (c.blueF(), under.blueF())))
    return QColor.fromRgbF(*mixed).name()


def error_colour(widget: QWidget) -> str:
    """A red that reads on the widget's window colour: dark on a light window, light on a dark one."""
    return ERROR_ON_DARK if widget.palette().color(QPalette.ColorRole.Window).lightness() < 128 else ERROR_ON_LIGHT


def palette_changed(event: QEvent) -> bool:
    return event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange)


def wrapped(text: str = "") -> QLabel:
    """A word-wrapped label."""
    label = QLabel(text)
    label.setWordWrap(True)
    return label


def _wheel(widget: QWidget, event: QWheelEvent, base: Any) -> None:
    """Let the wheel change a number only once the person chose the control; else the page scrolls."""
    if widget.hasFocus():
        base.wheelEvent(widget, event)
    else:
        event.ignore()


class SpinBox(QSpinBox):
    def wheelEvent(self, event: QWheelEvent) -> None:
        _wheel(self, event, QSpinBox)


class DoubleSpinBox(QDoubleSpinBox):
    def wheelEvent(self, event: QWheelEvent) -> None:
        _wheel(self, event, QDoubleSpinBox)


class Slider(QSlider):
    def wheelEvent(self, event: QWheelEvent) -> None:
        _wheel(self, event, QSlider)


class SettingRow(QWidget):
    """One key: its control, a note (origin, restart) and the validation message.

    ``label`` is the widget that shows the plain label: the checkbox itself for a boolean, else a
    word-wrapped ``QLabel`` the page puts beside the row. ``choices`` are a dropdown's items as
    ``(words, raw value)``; ``editable`` lets a value outside them be typed. ``save`` is called with the
    row and its new value as text when the person changes it (the page writes it in the background).
    """

    def __init__(self, save: Callable[[SettingRow, str], None], key: str,
                 choices: list[tuple[str, str]] | None = None, editable: bool = False) -> None:
        super().__init__()
        self._save_text = save
        self.key = key
        self._loading = False
        self._sent: str | None = None  # a number's value last shown or saved: leaving it unchanged saves nothing
        info = describe_key(key)
        words = LABELS[key]
        tip = f"{key}: {info['description']} Accepts {info['accepts']}."
        annotation = _annotation(key)
        self.editor: QWidget
        self.label: QLabel | QCheckBox
        self.value_label: QLabel | None = None  # a slider's value
        line = QHBoxLayout()
        line.setContentsMargins(0, 0, 0, 0)
        if annotation is bool:
            self.editor = self.label = box = QCheckBox(words)
            box.toggled.connect(lambda on: self.save("true" if on else "false"))
        elif key in WEIGHT_KEYS:
            self.editor = self._slider(line)
        elif typing.get_origin(annotation) is Literal or choices is not None:
            self.editor = self._combo(words, choices or [(str(a), str(a)) for a in typing.get_args(annotation)],
                                      editable)
        elif annotation in (int, float):
            self.editor = self._spin(words, annotation is int)
        else:
            self.editor = text = QLineEdit()
            text.editingFinished.connect(lambda: self.save(text.text()))
        if not isinstance(self.editor, QCheckBox):
            self.label = label = wrapped(words)
            label.setBuddy(self.editor)
            # A wrapped label's size hint is narrow enough to break even a short label in two: keep a short
            # one on one line, and break a long one only past about 24 characters.
            metrics = label.fontMetrics()
            label.setMinimumWidth(min(metrics.horizontalAdvance(words) + 2, metrics.averageCharWidth() * 24))
        self.label.setToolTip(tip)
        self.editor.setToolTip(tip)
        self.editor.setAccessibleName(words)
        self.editor.setAccessibleDescription(info["description"])
        wide = isinstance(self.editor, (QComboBox, QSlider)) or key in ("helper.base_url", "helper.remote_model")
        line.insertWidget(0, self.editor, 1 if wide else 0)
        if not wide:
            line.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 4)
        layout.addLayout(line)
        self.note = wrapped()
        layout.addWidget(self.note)
        self.error = wrapped()
        self.error.hide()
        layout.addWidget(self.error)
        self._colour()

    # ------------------------------------------------------------ controls

    def _combo(self, words: str, choices: list[tuple[str, str]], editable: bool) -> QComboBox:
        combo = QComboBox()
        for shown, raw in choices:
            combo.addItem(shown, raw)
        combo.setEditable(editable)
        combo.activated.connect(lambda i: self.save(self._raw(combo, i)))
        if (typed := combo.lineEdit()) is not None:  # an editable combo box has one
            typed.setAccessibleName(words)
            typed.editingFinished.connect(lambda: self.save(self._typed(combo)))
        return combo

    @classmethod
    def _typed(cls, combo: QComboBox) -> str:
        """What an editable list holds once its text is left: the value of a choice whose words it shows (a choice
        is shown in words, e.g. "An editor that goes to the line (automatic)" for ``auto``), else the text typed."""
        text = combo.currentText()
        found = combo.findText(text)
        return cls._raw(combo, found) if found >= 0 else text

    @staticmethod
    def _raw(combo: QComboBox, index: int) -> str:
        data = combo.itemData(index)  # None for a value typed into an editable list
        return str(data) if data is not None else combo.itemText(index)

    def _spin(self, words: str, whole: bool) -> QSpinBox | QDoubleSpinBox:
        spin: QSpinBox | QDoubleSpinBox
        default = describe_key(self.key)["default"]
        if whole:
            spin = SpinBox()
            low, high = number_range(self.key)
            spin.setRange(int(low), int(high))
        else:
            spin = DoubleSpinBox()
            decimals = decimals_of(default)  # 30 seconds, not 30.00; a finer bound or value adds its decimals
            low, high = number_range(self.key, decimals)
            decimals = max(decimals, decimals_of(low), decimals_of(high))
            spin.setDecimals(decimals)
            spin.setRange(low, high)
            spin.setSingleStep(1.0 if high - low >= 10 else 0.1)
        if self.key in UNITS:
            spin.setSuffix(f" {UNITS[self.key]}")
        spin.setKeyboardTracking(False)  # typing 120 is one value, not 1, 12 and 120
        spin.setFocusPolicy(Qt.FocusPolicy.StrongFocus)  # the wheel scrolls the page until the box is chosen
        if (typed := spin.lineEdit()) is not None:
            typed.setAccessibleName(words)
        spin.editingFinished.connect(self._number_finished)
        return spin

    def _number_finished(self) -> None:
        spin = self.editor
        assert isinstance(spin, (QSpinBox, QDoubleSpinBox))
        spin.interpretText()  # a value out of range goes back to the one before: nothing to save
        self._send(self._number_text())

    def _number_text(self) -> str:
        spin = self.editor
        if isinstance(spin, QDoubleSpinBox):
            return float_text(spin.value(), spin.decimals())
        assert isinstance(spin, QSpinBox)
        return str(spin.value())

    def _slider(self, line: QHBoxLayout) -> QSlider:
        slider = Slider(Qt.Orientation.Horizontal)
        slider.setRange(0, WEIGHT_STEPS)
        slider.setPageStep(WEIGHT_STEPS // 10)
        slider.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self._low, high = number_range(self.key, 2)
        self._step = (high - self._low) / WEIGHT_STEPS
        self.value_label = QLabel()
        self.value_label.setMinimumWidth(self.value_label.fontMetrics().horizontalAdvance("00.00") + 4)
        line.addWidget(self.value_label)
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(WEIGHT_DEBOUNCE_MS)
        self._debounce.timeout.connect(lambda: self._send(self._weight_text()))
        slider.valueChanged.connect(self._weight_moved)
        slider.sliderReleased.connect(self._weight_released)
        return slider

    def slider_step(self, value: float) -> int:
        """The step of a weight's slider nearest ``value`` (outside its ends for a value out of range)."""
        return round((value - self._low) / self._step)

    def _weight_text(self) -> str:
        assert isinstance(self.editor, QSlider)
        return float_text(self._low + self.editor.value() * self._step, 2)

    def _weight_moved(self, _step: int) -> None:
        assert isinstance(self.editor, QSlider) and self.value_label is not None
        self.value_label.setText(self._weight_text())
        if not self._loading and not self.editor.isSliderDown():  # a key, the wheel or a click beside the handle
            self._debounce.start()

    def _weight_released(self) -> None:
        self._debounce.stop()
        self._send(self._weight_text())

    def _send(self, text: str) -> None:
        if text != self._sent:
            self._sent = text
            self.save(text)

    # ------------------------------------------------------------ values

    def load(self, value: Any, origin: str) -> None:
        """Show ``value`` without saving it."""
        self._loading = True
        try:
            editor = self.editor
            if isinstance(editor, QCheckBox):
                editor.setChecked(bool(value))
            elif isinstance(editor, QComboBox):
                raw = _text(value)
                index = editor.findData(raw)
                if index < 0:
                    index = editor.findText(raw)
                if index < 0:
                    editor.addItem(gpu_words(raw) if self.key == "model.gpu_device" else raw, raw)
                    index = editor.count() - 1
                editor.setCurrentIndex(index)
            elif isinstance(editor, QDoubleSpinBox):
                editor.setDecimals(max(editor.decimals(), decimals_of(float(value))))
                editor.setValue(float(value))
                self._sent = self._number_text()
            elif isinstance(editor, QSpinBox):
                editor.setValue(int(value))
                self._sent = self._number_text()
            elif isinstance(editor, QSlider) and self.value_label is not None:
                self._debounce.stop()
                editor.setValue(self.slider_step(float(value)))
                self._sent = float_text(float(value))
                self.value_label.setText(self._sent)  # the value itself, also between two steps
            elif isinstance(editor, QLineEdit):
                editor.setText(_text(value))
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
        self._save_text(self, text)

    def show_error(self, message: str | None) -> None:
        if message:
            self._sent = None  # the same value entered again is sent again
        self.error.setText(message or "")
        self.error.setVisible(bool(message))

    # ------------------------------------------------------------ colours

    def _colour(self) -> None:
        self.note.setStyleSheet(f"color: {note_colour(self)}")
        self.error.setStyleSheet(f"color: {error_colour(self)}")

    def changeEvent(self, event: QEvent) -> None:
        if palette_changed(event):
            self._colour()
        super().changeEvent(event)
