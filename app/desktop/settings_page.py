"""The Settings page: the same typed settings as ``engram config``, validated by the same models.

Each row edits one key. A value is written by the settings controller off the Qt thread with
``settings_file.set_value`` (validate first, then an atomic replace), so a refused value shows the model's
message under the row and the file stays as it was. A key set in the environment is shown but not
editable (the environment wins). Saved values apply at once, except the few that a running service or a
loaded model holds (marked). API keys go to the OS keyring through the keys controller.
"""

from __future__ import annotations

import typing
from typing import TYPE_CHECKING, Any, Literal

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from engram.core import EngramError
from engram.core.manifest import load_manifest, resolve_model
from engram.core.models.providers import is_local_inference
from engram.core.settings import GROUPS, describe_key, split_key
from engram.core.settings_file import env_name

from .. import keys
from .jobs import Job, JobKind
from .settings_control import Refused, Saved
from .settings_control import as_text as _text

if TYPE_CHECKING:
    from .desktop import Desktop

#: Keys a running service or a loaded model holds: saved at once, used after a restart.
RESTART_KEYS = frozenset({"service.port", "embed.model", "embed.threads", "model.gpu_device",
                          "store.read_consistency_sec"})

#: How a helper model is pinned, in a sentence for the model row.
PINNING_SENTENCES = {
    "hash": "Pinned by hash: Engram's manifest holds its SHA256; the file is checked against it when it arrives "
            "and whenever it changes.",
    "revision": "Pinned by revision only: Engram's manifest has no SHA256 for it; the hub's hash for the pinned "
                "commit is recorded at the first download and checked from then on.",
    "none": "Custom model: used as it is, unverified.",
}

SECTIONS: list[tuple[str, list[str]]] = [
    ("Recall", ["recall.llm", "recall.llm_timeout_sec", "recall.max_chars", "search.max_chars",
                "recall.run_budget.enabled", "recall.run_budget.max_queries", "recall.run_budget.max_rounds",
                "recall.run_budget.deadline_sec", "recall.run_budget.max_tokens_per_query"]),
    ("Search", ["search.limit", "search.weight_semantic", "search.weight_lexical", "search.weight_graph"]),
    ("Helper model", ["tagger.llm", "summarizer.enabled", "tagger.llm_provider", "tagger.base_url",
                      "tagger.remote_model", "tagger.local.model", "tagger.local.threads", "tagger.local.batch"]),
    ("Device", ["model.gpu_device"]),
    ("App and service", ["service.port", "desktop.start_at_login", "desktop.notifications"]),
]


def _annotation(key: str) -> Any:
    group, name = split_key(key)
    return GROUPS[group].model_fields[name].annotation


class SettingRow(QWidget):
    """One key: its editor, a note (origin, restart) and the validation message."""

    def __init__(self, page: SettingsPage, key: str, choices: list[str] | None = None) -> None:
        super().__init__()
        self.page = page
        self.key = key
        info = describe_key(key)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 4)
        annotation = _annotation(key)
        self.editor: QWidget
        if annotation is bool:
            self.editor = box = QCheckBox(info["description"])
            box.toggled.connect(lambda on: self.save("true" if on else "false"))
        elif typing.get_origin(annotation) is Literal or choices is not None:
            self.editor = combo = QComboBox()
            combo.addItems([str(a) for a in typing.get_args(annotation)] if choices is None else choices)
            combo.setEditable(choices is not None)
            combo.activated.connect(lambda _i: self.save(combo.currentText()))
            if (typed := combo.lineEdit()) is not None:  # an editable combo box has one
                typed.editingFinished.connect(lambda: self.save(combo.currentText()))
        else:
            self.editor = line = QLineEdit()
            line.editingFinished.connect(lambda: self.save(line.text()))
        self.editor.setToolTip(f"{key}: {info['description']} Accepts {info['accepts']}.")
        layout.addWidget(self.editor)
        self.note = QLabel()
        self.note.setWordWrap(True)
        self.note.setStyleSheet("color: #666")
        layout.addWidget(self.note)
        self.error = QLabel()
        self.error.setWordWrap(True)
        self.error.setStyleSheet("color: #b00020")
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
        notes = []
        if not isinstance(self.editor, QCheckBox):
            notes.append(describe_key(self.key)["description"])
        if fixed:
            notes.append(f"Set by {env_name(self.key)} in the environment, which wins over this window.")
        if self.key in RESTART_KEYS:
            notes.append("Applies after Engram restarts.")
        self.note.setText(" ".join(notes))
        self.note.setVisible(bool(notes))

    def save(self, text: str) -> None:
        if self._loading:
            return
        self.page.save(self, text)

    def show_error(self, message: str | None) -> None:
        self.error.setText(message or "")
        self.error.setVisible(bool(message))


class SettingsPage(QWidget):
    """Every row, the recall.llm explanation, model files, API keys."""

    saved = Signal(str, object)  # key, the value as stored
    refused = Signal(str, str)  # key, the message shown

    def __init__(self, desktop: Desktop) -> None:
        super().__init__()
        self.desktop = desktop
        self.rows: dict[str, SettingRow] = {}
        outer = QVBoxLayout(self)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        outer.addWidget(scroll)
        body = QWidget()
        scroll.setWidget(body)
        layout = QVBoxLayout(body)
        helper_ids = [e.id for e in load_manifest().values() if "helper" in e.roles]
        for title, section_keys in SECTIONS:
            box = QGroupBox(title)
            form = QFormLayout(box)
            for key in section_keys:
                choices = helper_ids if key == "tagger.local.model" else (
                    ["auto", "cpu"] if key == "model.gpu_device" else None)
                row = self.rows[key] = SettingRow(self, key, choices)
                form.addRow(QLabel(key), row)
            if title == "Recall":
                self.llm_state = QLabel()
                self.llm_state.setWordWrap(True)
                form.addRow(QLabel("Local inference"), self.llm_state)
            if title == "Helper model":
                form.addRow(QLabel("Model file"), self._model_box())
            if title == "Device":
                self.gpu_label = QLabel("Looking for GPUs…")
                self.gpu_label.setWordWrap(True)
                form.addRow(QLabel("Detected"), self.gpu_label)
            layout.addWidget(box)
        layout.addWidget(self._keys_box())
        layout.addStretch(1)
        desktop.settings_control.saved.connect(self._saved)
        desktop.settings_control.refused.connect(self._refused)
        desktop.settings_control.reset_done.connect(lambda _key: self.load())
        desktop.keys.state.connect(self._show_key_text)
        self.load()

    # ------------------------------------------------------------ the rows

    def load(self) -> None:
        loaded = self.desktop.loaded_settings()
        for key, row in self.rows.items():
            row.load(loaded.value(key), loaded.origins.get(key, "default"))
            row.show_error(None)
        self.explain_llm()
        self.show_model_state()

    def save(self, row: SettingRow, text: str) -> None:
        """Write ``row``'s new value in the background; ``saved`` or ``refused`` follows."""
        self.desktop.settings_control.save(row.key, text)

    def _saved(self, outcome: Saved) -> None:
        row = self.rows.get(outcome.key)
        if row is not None:
            row.show_error(None)  # also when unchanged (typed back after a refusal): nothing was written
        if not outcome.changed:
            return
        if outcome.key in ("recall.llm", "tagger.llm_provider", "tagger.base_url", "tagger.local.model"):
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
        self.desktop.settings_control.reset(key)

    # ---------------------------------------------------- recall.llm state

    def explain_llm(self) -> None:
        """Say what recall.llm does and whether it can be on (local provider? model present?)."""
        s = self.desktop.engine.settings
        what = ("With recall.llm on, recall asks the helper model to plan extra searches and to condense the "
                "evidence into an answer that cites it; without it, recall returns the evidence itself. ")
        if not is_local_inference(s.tagger.llm_provider, s.tagger.base_url):
            why = (f"It cannot be on now: the helper model runs at {s.tagger.llm_provider}"
                   f"{' (' + s.tagger.base_url + ')' if s.tagger.base_url else ''}, not on this computer, and recall "
                   "never sends your memory elsewhere.")
        else:
            try:
                entry = resolve_model(s.tagger.local.model)
                status = self.desktop.engine.model_files().status(entry)
                present = status.present or bool(entry.local_path)
            except EngramError as exc:
                present, entry = False, None
                why = f"It cannot be on now: {exc.message}"
            if entry is not None:
                why = (f"It can be on: {entry.id} is on this computer." if present else
                       f"It would fall back to plain recall: {entry.id} is not downloaded yet (Download below).")
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
            b.clicked.connect(lambda _c=False, a=action: self.model_action(a))
            buttons.addWidget(b)
        layout.addLayout(buttons)
        self.model_progress = QProgressBar()
        self.model_progress.hide()
        layout.addWidget(self.model_progress)
        return box

    def _model_entry(self) -> Any:
        return resolve_model(self.desktop.engine.settings.tagger.local.model)

    def show_model_state(self) -> None:
        try:
            entry = self._model_entry()
            st = self.desktop.engine.model_files().status(entry)
        except EngramError as exc:
            self.model_state.setText(exc.message)
            return
        size = f"{st.size / 1e9:.2f} GB" if st.size else "size unknown"
        where = f"downloaded at {st.path}" if st.present else "not downloaded"
        extra = f" {st.note}" if st.note else ""
        self.model_state.setText(f"{st.name}, {size}: {where}. {PINNING_SENTENCES[entry.pinning]}{extra}")
        self.download_button.setEnabled(not st.present and st.available)
        self.verify_button.setEnabled(st.present)
        self.remove_button.setEnabled(st.present)

    def model_action(self, action: str) -> None:
        """Download, verify or remove the chosen helper model on a worker; progress shows in the bar."""
        try:
            entry = self._model_entry()
        except EngramError as exc:
            self.model_state.setText(exc.message)
            return
        engine = self.desktop.engine
        files = engine.model_files()
        self.model_progress.setRange(0, 0)
        self.model_progress.show()

        def work(report: Any) -> str:
            if action == "download":
                got = engine.download_model(entry, progress=lambda p: report(p.done, p.total, _rate(p)))
                return f"{entry.id} downloaded and verified ({got.size:,} bytes)."
            if action == "verify":
                return f"{entry.id} matches its SHA256, read in full ({files.verify(entry, full=True)})."
            return f"{entry.id} {'removed' if files.remove(entry) else 'was not downloaded'}."

        kind: JobKind = "download" if action == "download" else "task"
        job = self.desktop.jobs.submit(kind, f"{action.capitalize()} {entry.id}", work, on_done=self._model_done)
        self._model_job = job.id
        self.desktop.jobs.changed.connect(self._model_progress)

    def _model_progress(self, job: Job) -> None:
        if job.id != getattr(self, "_model_job", None) or job.finished:
            return
        if job.percent is not None:
            self.model_progress.setRange(0, 100)
            self.model_progress.setValue(job.percent)
            self.model_progress.setFormat(f"%p% — {job.detail}")

    def _model_done(self, job: Job) -> None:
        self.desktop.jobs.changed.disconnect(self._model_progress)
        self.model_progress.hide()
        self.show_model_state()
        self.explain_llm()
        if job.error is not None:
            self.model_state.setText(f"{job.error.title}: {job.error.message}")

    # ----------------------------------------------------------- GPU

    def show_gpus(self, gpus: list[Any], chosen: str) -> None:
        row = self.rows["model.gpu_device"]
        combo = row.editor
        assert isinstance(combo, QComboBox)
        for g in gpus:
            if combo.findText(str(g.index)) < 0:
                combo.addItem(str(g.index))
        listed = "; ".join(f"{g.index}: {g.name} ({g.vendor}, {g.memory_mb or '?'} MB"
                           f"{', discrete' if g.discrete else ''})" for g in gpus)
        self.gpu_label.setText((listed or "No GPU found; models run on the CPU.") + f" Chosen now: {chosen}.")

    # ----------------------------------------------------------- API keys

    def _keys_box(self) -> QGroupBox:
        box = QGroupBox("API keys of remote providers (kept in the OS keyring, never in the settings file)")
        layout = QVBoxLayout(box)
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
        self.key_provider.currentTextChanged.connect(self.desktop.keys.show)
        for w in (self.key_provider, self.key_input, self.key_store, self.key_remove):
            row.addWidget(w)
        layout.addLayout(row)
        self.key_state = QLabel("Checking the keyring…")
        self.key_state.setWordWrap(True)
        layout.addWidget(self.key_state)
        for w in (self.key_input, self.key_store, self.key_remove):
            w.setEnabled(False)  # until the keyring has answered
        self.desktop.keys.check()
        return box

    def _show_key_text(self, text: str, works: bool, is_error: bool) -> None:
        self.key_state.setText(text)
        self.key_state.setStyleSheet("color: #b00020" if is_error else "")
        for w in (self.key_input, self.key_store, self.key_remove):
            w.setEnabled(works)

    def store_key(self) -> None:
        """Store the typed key (the field is cleared at once: the secret stays in no widget)."""
        secret = self.key_input.text()
        self.key_input.clear()
        self.key_state.setText("Storing…")
        self.desktop.keys.store(self.key_provider.currentText(), secret)

    def remove_key(self) -> None:
        self.desktop.keys.remove(self.key_provider.currentText())


def _rate(p: Any) -> str:
    eta = f", {p.eta_s:.0f} s left" if p.eta_s is not None else ""
    return f"{p.done / 1e6:,.1f} of {p.total / 1e6:,.1f} MB at {p.bytes_per_s / 1e6:.1f} MB/s{eta}"
