"""The Settings page: the same typed settings as ``engram config``, validated by the same models.

Rows are labelled in the user's words (``setting_labels``). The everyday choices come first (General, Local AI,
Remembering); the rest sit under a collapsed *Advanced settings*, which ends with every key, read-only, so
nothing is hidden. A search box at the top finds any setting by its words, its key or its description, opening
Advanced when the match is there (as Obsidian's settings do). A value is
written by the settings controller off the Qt thread with ``settings_file.set_value`` (validate first,
then an atomic replace), so a refused value shows the model's message under the row and the file stays
as it was. A key set in the environment is shown but not editable (the environment wins). Saved values
apply at once, except the few that a running service or a loaded model holds (marked). The helper model's
file is downloaded, verified and removed by ``models_control.ModelsController``; API keys go to the OS
keyring through the keys controller: the page only shows widgets. It never scrolls sideways: labels wrap.
"""

from __future__ import annotations

import os
from typing import Any, cast

from PySide6.QtCore import QEvent, Qt, Signal
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from engram.core import Engine
from engram.core.manifest import ModelEntry, load_manifest
from engram.core.models.readiness import readiness
from engram.core.settings import describe_key

from .. import keys
from .every_setting import EverySetting
from .jobs import Job
from .models_control import ModelsController
from .setting_labels import ADVANCED_GROUPS, EVERYDAY_GROUPS, PAGE_GROUPS
from .setting_rows import GPU_WORDS, SettingRow, error_colour, palette_changed, wrapped
from .settings_control import KeysController, Refused, Saved, SettingsController
from .shell import Shell

#: The page's groups and the keys each edits, in the order shown.
SECTIONS: list[tuple[str, list[str]]] = PAGE_GROUPS


def _form(box: QGroupBox) -> QFormLayout:
    form = QFormLayout(box)
    form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
    form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
    return form


class SettingsPage(QWidget):
    """Every row in its group, the recall.llm explanation, model files, API keys, every key read-only."""

    saved = Signal(str, object)  # key, the value as stored
    refused = Signal(str, str)  # key, the message shown

    def __init__(self, engine: Engine, settings_control: SettingsController, keys: KeysController,
                 models: ModelsController, shell: Shell) -> None:
        super().__init__()
        self.engine = engine
        self.settings_control = settings_control
        self.keys = keys
        self.models = models
        self.rows: dict[str, SettingRow] = {}
        self.groups: dict[str, QGroupBox] = {}
        outer = QVBoxLayout(self)
        self.find_box = QLineEdit()
        self.find_box.setPlaceholderText("Find a setting (e.g. port, threads, timeout, model)")
        self.find_box.setAccessibleName("Find a setting")
        self.find_box.setClearButtonEnabled(True)
        for clear in self.find_box.findChildren(QToolButton):
            clear.setAccessibleName("Clear the setting search")
        self.find_box.textChanged.connect(self.find_setting)
        outer.addWidget(self.find_box)
        self.scroll_area = scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        outer.addWidget(scroll)
        body = QWidget()
        scroll.setWidget(body)
        layout = QVBoxLayout(body)
        self._key_error = False
        #: What each group's form shows beside its rows (an explanation, the model file, the GPUs), by the key
        #: whose row it belongs with: a search shows it with that row.
        self._extras: dict[str, list[QWidget]] = {}
        self._forms: dict[str, QFormLayout] = {}
        self.no_match = wrapped()
        self.no_match.setAccessibleName("No setting matches")
        self.no_match.setVisible(False)
        layout.addWidget(self.no_match)
        for title, section_keys in EVERYDAY_GROUPS:
            layout.addWidget(self._group(title, section_keys))
        self.advanced_toggle = QToolButton()
        self.advanced_toggle.setText("Advanced settings")
        self.advanced_toggle.setAccessibleName("Show the advanced settings")
        self.advanced_toggle.setCheckable(True)
        self.advanced_toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.advanced_toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.advanced_toggle.toggled.connect(self.show_advanced)
        layout.addWidget(self.advanced_toggle)
        self.advanced = QWidget()
        advanced = QVBoxLayout(self.advanced)
        advanced.setContentsMargins(0, 0, 0, 0)
        for title, section_keys in ADVANCED_GROUPS:
            advanced.addWidget(self._group(title, section_keys))
        self.keys_box = self._keys_box()
        advanced.addWidget(self.keys_box)
        self.every_setting = EverySetting()
        advanced.addWidget(self.every_setting)
        self.advanced.setVisible(False)
        layout.addWidget(self.advanced)
        layout.addStretch(1)
        settings_control.saved.connect(self._saved)
        settings_control.refused.connect(self._refused)
        settings_control.reset_done.connect(lambda _key: self.load())
        keys.state.connect(self._show_key_text)
        shell.gpus_found.connect(self._gpus_found)
        self.models.progress.connect(self._model_progress)
        self.models.done.connect(self._model_done)
        self.load()

    # ------------------------------------------------------------ the rows

    def _group(self, title: str, section_keys: list[str]) -> QGroupBox:
        box = self.groups[title] = QGroupBox(title.replace("&", "&&"))  # "&" would mark a shortcut key
        form = self._forms[title] = _form(box)
        manifest = load_manifest().values()
        for key in section_keys:
            if key == "recall.llm":
                self.llm_state = wrapped()
                self._extra(form, key, wrapped("What local AI does"), self.llm_state)
            if key == "helper.local.model":  # a custom model can be typed in
                row = SettingRow(self.save, key, [(e.id, e.id) for e in manifest if "helper" in e.roles],
                                 editable=True)
            elif key == "chat.local_model":  # the chat models, those this computer cannot hold disabled
                row = self._chat_model_row(key, [e for e in manifest if {"helper", "chat-large"} & set(e.roles)])
            elif key == "desktop.open_with":  # in words; a command of one's own can be typed in
                row = SettingRow(self.save, key, [("An editor that goes to the line (automatic)", "auto"),
                                                  ("The app my computer uses for the file", "system")], editable=True)
            elif key == "model.gpu_device":  # in words; the GPUs found are added by show_gpus
                row = SettingRow(self.save, key, [(words, raw) for raw, words in GPU_WORDS.items()])
            else:
                row = SettingRow(self.save, key)
            if key == "helper.local.threads" and isinstance(row.editor, QSpinBox):
                row.editor.setMaximum(max(1, os.cpu_count() or 1))  # more threads than cores only slow it
            self.rows[key] = row
            if row.label is row.editor:  # a checkbox carries its own label
                form.addRow(row)
            else:
                form.addRow(row.label, row)
            if key == "helper.local.model":
                self._extra(form, key, wrapped("Model file"), self._model_box())
            if key == "model.gpu_device":
                self.gpu_label = wrapped("Looking for GPUs…")
                self._extra(form, key, wrapped("GPUs found"), self.gpu_label)
        return box

    def _extra(self, form: QFormLayout, key: str, label: QWidget, field: QWidget) -> None:
        form.addRow(label, field)
        self._extras.setdefault(key, []).append(field)

    def show_advanced(self, shown: bool) -> None:
        """Open (or close) the advanced settings."""
        self.advanced.setVisible(shown)
        self.advanced_toggle.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)
        if self.advanced_toggle.isChecked() != shown:
            self.advanced_toggle.setChecked(shown)

    def find_setting(self, text: str) -> list[str]:
        """Show only the settings whose words, key or description hold every word of ``text`` (every setting
        when it is empty), opening Advanced when one is there; returns the keys shown."""
        words = text.lower().split()
        shown: list[str] = []
        for title, section_keys in PAGE_GROUPS:
            form = self._forms[title]
            visible = 0
            for key in section_keys:
                row = self.rows[key]
                haystack = f"{row.label.text()} {key} {describe_key(key)['description']}".lower()
                match = all(w in haystack for w in words)
                form.setRowVisible(row, match)
                for extra in self._extras.get(key, []):
                    form.setRowVisible(extra, match)
                if match:
                    shown.append(key)
                    visible += 1
            self.groups[title].setVisible(visible > 0)
        listed = self.every_setting.filter(words)
        keys_box = not words or all(w in "api keys of remote providers keyring openai anthropic" for w in words)
        self.keys_box.setVisible(keys_box)
        if words:
            advanced = {k for _, ks in ADVANCED_GROUPS for k in ks}
            self.show_advanced(bool(advanced & set(shown)) or listed > 0 or keys_box)
        self.advanced_toggle.setVisible(not words)
        self.no_match.setText(f"No setting matches “{text.strip()}”." if words and not shown and not listed
                              and not keys_box else "")
        self.no_match.setVisible(bool(self.no_match.text()))
        return shown

    def load(self) -> None:
        loaded = self.settings_control.loaded()
        for key, row in self.rows.items():
            row.load(loaded.value(key), loaded.origins.get(key, "default"))
            row.show_error(None)
        self.every_setting.show_values(loaded)
        self.explain_llm()
        self.show_model_state()

    def save(self, row: SettingRow, text: str) -> None:
        """Write ``row``'s new value in the background; ``saved`` or ``refused`` follows."""
        self.settings_control.save(row.key, text)

    def _saved(self, outcome: Saved) -> None:
        row = self.rows.get(outcome.key)
        if row is not None:
            row.show_error(None)  # also when unchanged (typed back after a refusal): nothing was written
        if not outcome.changed:
            return
        self.every_setting.show_value(outcome.key, outcome.value, "file")
        if outcome.key in ("recall.llm", "helper.provider", "helper.base_url", "helper.local.model"):
            self.explain_llm()
            self.show_model_state()
        self.saved.emit(outcome.key, outcome.value)

    def _refused(self, outcome: Refused) -> None:
        row = self.rows.get(outcome.key)
        if row is not None:
            row.show_error(outcome.message)
        self.refused.emit(outcome.key, outcome.message)

    def reset(self, key: str) -> None:
        """Back to the default (in the background); the rows are shown again after."""
        self.settings_control.reset(key)

    # ---------------------------------------------------- recall.llm state

    def explain_llm(self) -> None:
        """Say what local AI does for recall (``recall.llm``) and whether it can be on (local provider? model present?)."""
        s = self.engine.settings
        what = ("When local AI plans and answers recalls, the helper model plans extra searches and condenses the "
                "evidence into an answer that cites it; otherwise a recall returns the evidence itself. ")
        ready = readiness(s, self.engine.paths)
        if not ready.where.on_this_computer:
            why = (f"It cannot be on now: the helper model runs on {ready.where.describe()}, not on this computer, "
                   "and recall never sends your memory elsewhere.")
        elif ready.needs_download and ready.entry is not None:
            why = f"It would fall back to plain recall: {ready.entry.id} is not downloaded yet (Download below)."
        elif not ready.ready:
            why = f"It cannot be on now: {ready.problem}"
        else:
            why = f"It can be on: {ready.sentence()}."
        state = "on" if s.recall.llm else "off"
        self.llm_state.setText(f"{what}Now {state}. {why}")

    # --------------------------------------------------------- model files

    def _model_box(self) -> QWidget:
        box = QWidget()
        layout = QVBoxLayout(box)
        layout.setContentsMargins(0, 0, 0, 0)
        self.model_state = QLabel()
        self.model_state.setWordWrap(True)
        layout.addWidget(self.model_state)
        buttons = QHBoxLayout()
        self.download_button = QPushButton("Download")
        self.verify_button = QPushButton("Verify")
        self.remove_button = QPushButton("Remove")
        for b, action in ((self.download_button, "download"), (self.verify_button, "verify"),
                          (self.remove_button, "remove")):
            b.setAccessibleName(f"{action.capitalize()} the helper model")
            b.clicked.connect(lambda _c=False, a=action: self.model_action(a))
            buttons.addWidget(b)
        layout.addLayout(buttons)
        self.model_progress = QProgressBar()
        self.model_progress.hide()
        layout.addWidget(self.model_progress)
        return box

    def _model_entry(self) -> ModelEntry:
        return self.models.entry()

    def show_model_state(self) -> None:
        state = self.models.state()
        self.model_state.setText(state.text)
        self.download_button.setEnabled(state.can_download)
        self.verify_button.setEnabled(state.can_verify)
        self.remove_button.setEnabled(state.can_remove)

    def model_action(self, action: str) -> None:
        """Download, verify or remove the chosen helper model (on a worker); progress shows in the bar."""
        if self.models.act(action) and self.models.busy:
            for b in (self.download_button, self.verify_button, self.remove_button):
                b.setEnabled(False)
            self.model_progress.setRange(0, 0)
            self.model_progress.show()

    def _model_progress(self, percent: int, detail: str) -> None:
        if percent < 0:
            self.model_progress.setRange(0, 0)
        else:
            self.model_progress.setRange(0, 100)
            self.model_progress.setValue(percent)
            self.model_progress.setFormat(f"%p% — {detail}" if detail else "%p%")

    def _model_done(self, message: str, ok: bool) -> None:
        self.model_progress.hide()
        self.show_model_state()
        self.explain_llm()
        if not ok:
            self.model_state.setText(message)

    # ------------------------------------------------------ chat model

    def _chat_model_row(self, key: str, entries: list[Any]) -> SettingRow:
        """The chat model's list: each manifest model by id, one that needs more memory than this computer has
        shown with the reason and not selectable; a custom model (a .gguf path) can be typed in."""
        files = self.engine.model_files()
        statuses = [files.status(e) for e in entries]  # a stat and /proc/meminfo: no waiting
        row = SettingRow(self.save, key, [(e.id if st.available else f"{e.id} — {st.note}", e.id)
                                          for e, st in zip(entries, statuses)], editable=True)
        combo = row.editor
        assert isinstance(combo, QComboBox)
        for index, status in enumerate(statuses):
            if not status.available:
                item = cast(QStandardItemModel, combo.model()).item(index)
                item.setEnabled(False)
                item.setToolTip(f"Unavailable: {status.note}.")
        return row

    # ----------------------------------------------------------- GPU

    def _gpus_found(self, job: Job) -> None:
        if job.error is not None:
            self.gpu_label.setText(f"{job.error.title}: {job.error.message}")
        else:
            self.show_gpus(*job.result)

    def show_gpus(self, gpus: list[Any], chosen: str) -> None:
        """List the GPUs found in the GPU dropdown, in words (``GPU 0: NVIDIA … (8192 MB)``, saved as ``0``)."""
        combo = self.rows["model.gpu_device"].editor
        assert isinstance(combo, QComboBox)
        for g in gpus:
            words = f"GPU {g.index}: {g.name}" + (f" ({g.memory_mb} MB)" if g.memory_mb else "")
            index = combo.findData(str(g.index))
            if index < 0:  # after Automatic, CPU only and the GPUs of lower indexes
                after = [i for i in range(combo.count()) if str(combo.itemData(i)).isdigit()
                         and int(combo.itemData(i)) > g.index]
                combo.insertItem(after[0] if after else combo.count(), words, str(g.index))
            else:  # the value the file holds, added in the meantime as "GPU 3"
                combo.setItemText(index, words)
        listed = "; ".join(f"{g.index}: {g.name} ({g.vendor}, {g.memory_mb or '?'} MB"
                           f"{', discrete' if g.discrete else ''})" for g in gpus)
        self.gpu_label.setText((listed or "No GPU found; models run on the CPU.") + f" Chosen now: {chosen}.")

    # ----------------------------------------------------------- API keys

    def _keys_box(self) -> QGroupBox:
        box = QGroupBox("API keys of remote providers")
        layout = QVBoxLayout(box)
        layout.addWidget(wrapped("Kept in the OS keyring, never in the settings file."))
        row = QHBoxLayout()
        self.key_provider = QComboBox()
        self.key_provider.addItems(list(keys.REMOTE_PROVIDERS))
        self.key_input = QLineEdit()
        self.key_input.setEchoMode(QLineEdit.EchoMode.Password)
        self.key_input.setPlaceholderText("Paste an API key")
        self.key_store = QPushButton("Store")
        self.key_remove = QPushButton("Remove")
        self.key_store.clicked.connect(self.store_key)
        self.key_remove.clicked.connect(self.remove_key)
        # Reading a secret can make the OS ask to unlock the keyring: only when the person picks a provider.
        self.key_provider.currentTextChanged.connect(self.keys.show)
        for w, name in ((self.key_provider, "Provider of the API key"), (self.key_input, "API key"),
                        (self.key_store, "Store the API key"), (self.key_remove, "Remove the API key")):
            w.setAccessibleName(name)
            row.addWidget(w)
        layout.addLayout(row)
        self.key_state = QLabel("Checking the keyring…")
        self.key_state.setWordWrap(True)
        layout.addWidget(self.key_state)
        for w in (self.key_input, self.key_store, self.key_remove):
            w.setEnabled(False)  # until the keyring has answered
        self.keys.check()
        return box

    def _show_key_text(self, text: str, works: bool, is_error: bool) -> None:
        self.key_state.setText(text)
        self._key_error = is_error
        self._colour_key_text()
        for w in (self.key_input, self.key_store, self.key_remove):
            w.setEnabled(works)

    def _colour_key_text(self) -> None:
        self.key_state.setStyleSheet(f"color: {error_colour(self)}" if self._key_error else "")

    def changeEvent(self, event: QEvent) -> None:
        if palette_changed(event):
            self._colour_key_text()
        super().changeEvent(event)

    def store_key(self) -> None:
        """Store the typed key (the field is cleared at once: the secret stays in no widget)."""
        secret = self.key_input.text()
        self.key_input.clear()
        self.key_state.setText("Storing…")
        self.keys.store(self.key_provider.currentText(), secret)

    def remove_key(self) -> None:
        self.keys.remove(self.key_provider.currentText())

