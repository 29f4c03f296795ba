"""Offers of a model on this computer, made where one is missing, as the apps people like do it (LM Studio): a
model is an explicit choice, shown with its size and whether it fits this computer, and its download is visible.

``ChatModelCard`` stands above the chat while chat cannot run here: it names the models, offers the one chosen
for download (or for use, when it is already here) and offers *Search instead*. ``LocalAiCard`` stands above
recall while local AI is off or cannot run: it says what turning it on would give, and offers to. Nothing is
downloaded until a button says so; a download runs through ``ModelsController`` (one model action at a time,
shared with the Settings page) and a failure is said on the card that asked, in the error colour.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from PySide6.QtCore import Signal
from PySide6.QtGui import QStandardItemModel
from PySide6.QtWidgets import QComboBox, QFrame, QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout

from engram.core import Engine, EngramError
from engram.core.manifest import ModelEntry, load_manifest, resolve_model
from engram.core.models.readiness import Readiness, readiness

from .models_control import ModelsController
from .setting_rows import error_colour, wrapped
from .settings_control import Refused, Saved, SettingsController


def size_words(size: int) -> str:
    """A model file's size as a person reads it: ``2.7 GB``, ``98 MB`` (``""`` when it is not known)."""
    if size <= 0:
        return ""
    return f"{size / 1e9:.1f} GB" if size >= 1e9 else f"{size / 1e6:.0f} MB"


def download_words(size: int, lead: str = "Download") -> str:
    """A download button's text: ``Download 2.7 GB`` (just ``Download`` when the size is not known)."""
    return f"{lead} {size_words(size)}".rstrip()


@dataclass(frozen=True)
class Choice:
    """One model that chat could run here: its size, whether it is here, whether it fits this computer."""

    entry: ModelEntry
    present: bool
    fits: bool
    words: str  # the dropdown's line
    spec: str  # what ``chat.local_model`` says for it (a manifest id, or one's own path or link)
    chosen: bool = False  # the one the settings name now


def chat_choices(engine: Engine) -> list[Choice]:
    """The chat models of the manifest (and the one the settings name, when it is a file of one's own), each
    with its size and whether this computer has the memory for it; reads no file beyond a stat."""
    spec = engine.settings.chat.local_model
    entries = [e for e in load_manifest().values() if {"helper", "chat-large"} & set(e.roles)]
    specs = {e.id: e.id for e in entries}
    try:
        chosen: ModelEntry | None = resolve_model(spec)
    except EngramError:
        chosen = None
    if chosen is not None and chosen.id not in specs:
        entries.append(chosen)
        specs[chosen.id] = spec
    files = engine.model_files()
    out = []
    for entry in entries:
        status = files.status(entry)
        fits = status.available
        size = size_words(status.size or entry.size) or "size unknown"
        state = "on this computer" if status.present else (
            "fits this computer" if fits else status.note or "does not fit this computer")
        out.append(Choice(entry, status.present, fits, f"{entry.id} — {size}, {state}", specs[entry.id],
                          chosen is not None and entry.id == chosen.id))
    return out


class _OfferCard(QFrame):
    """A framed card: a heading, what it offers, buttons, a download's progress, and a failure line."""

    changed = Signal()  # the model or the setting it offered is now in place: the owner looks again

    def __init__(self, engine: Engine, models: ModelsController, settings_control: SettingsController,
                 name: str) -> None:
        super().__init__()
        self.engine = engine
        self.models = models
        self.settings_control = settings_control
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAccessibleName(name)
        self._layout = QVBoxLayout(self)
        self.heading = QLabel()
        self.heading.setWordWrap(True)
        self.heading.setStyleSheet("font-weight: bold;")
        self.text = wrapped()
        self.text.setAccessibleName(f"{name}: what it offers")
        self._layout.addWidget(self.heading)
        self._layout.addWidget(self.text)
        self.buttons = QHBoxLayout()
        self._layout.addLayout(self.buttons)
        self.progress = QProgressBar()
        self.progress.setAccessibleName("Model download")
        self.progress.setVisible(False)
        self.detail = wrapped()
        self.detail.setVisible(False)
        self.failure = wrapped()
        self.failure.setAccessibleName("What went wrong")
        self.failure.setVisible(False)
        for widget in (self.progress, self.detail, self.failure):
            self._layout.addWidget(widget)
        self._downloading: str | None = None  # the model this card asked to download
        models.progress.connect(self._progress)
        models.done.connect(self._done)
        settings_control.saved.connect(self._saved)
        settings_control.refused.connect(self._refused)

    def _button(self, text: str, name: str) -> QPushButton:
        button = QPushButton(text)
        button.setAccessibleName(name)
        self.buttons.addWidget(button)
        return button

    def say_failure(self, text: str) -> None:
        """Show ``text`` in the error colour under the buttons (``""`` hides the line)."""
        self.failure.setText(text)
        self.failure.setStyleSheet(f"color: {error_colour(self)};")
        self.failure.setVisible(bool(text))

    def download(self, entry: ModelEntry) -> None:
        """Download ``entry`` on a worker, its progress shown on the card; another model action running (from
        the Settings page) is said instead of waited for."""
        self.say_failure("")
        if self.models.busy:
            self.say_failure("Another model download or check is running (see Settings); try again once it ends.")
            return
        self._downloading = entry.id
        self.models.act("download", entry)
        if self.models.busy:
            self.progress.setRange(0, 0)
            self.progress.setVisible(True)
            size = f" ({size_words(entry.size)})" if entry.size else ""
            self.detail.setText(f"Downloading {entry.id}{size}. You can go on using Engram meanwhile; the download "
                                "carries on if this page is left.")
            self.detail.setVisible(True)
        self.refresh()

    def _progress(self, percent: int, detail: str) -> None:
        if self._downloading is None:
            return
        if percent < 0:
            self.progress.setRange(0, 0)
        else:
            self.progress.setRange(0, 100)
            self.progress.setValue(percent)
        if detail:
            self.detail.setText(f"Downloading {self._downloading}: {detail}.")

    def _done(self, outcome: str, ok: bool) -> None:
        if self._downloading is None:
            self.refresh()  # the Settings page's action may have brought or removed the model
            return
        self._downloading = None
        self.progress.setVisible(False)
        self.detail.setVisible(False)
        if not ok:
            self.say_failure(f"The download did not finish. {outcome}")
        self.refresh()
        if ok:
            self.changed.emit()

    def _saved(self, outcome: Saved) -> None:
        if outcome.key in self.keys:
            self.refresh()
            self.changed.emit()

    def _refused(self, outcome: Refused) -> None:
        if outcome.key in self.keys:
            self.say_failure(f"Not saved: {outcome.message}")

    #: The settings whose change makes the card look again.
    keys: tuple[str, ...] = ()

    def refresh(self) -> None:
        """Look again at whether the model can run, and show or hide the card and its buttons accordingly."""
        raise NotImplementedError


class ChatModelCard(_OfferCard):
    """Above the chat while its model cannot run here: a choice of models with size and fit, *Download* (or
    *Use this model*), and *Search instead*. Hidden when chat runs on a server or its model is ready."""

    search_instead = Signal()
    keys = ("chat.local_model", "chat.provider", "model.gpu_device")

    def __init__(self, engine: Engine, models: ModelsController, settings_control: SettingsController) -> None:
        super().__init__(engine, models, settings_control, "Chat needs a model")
        self.heading.setText("Chat needs a language model on this computer")
        self.choice = QComboBox()
        self.choice.setAccessibleName("Chat model to download")
        self._layout.insertWidget(2, self.choice)
        self.get_button = self._button("Download", "Download the chat model")
        self.search_button = self._button("Search instead", "Search instead")
        self.buttons.addStretch(1)
        self.get_button.clicked.connect(self.get)
        self.search_button.clicked.connect(self.search_instead)
        self.choice.currentIndexChanged.connect(self._chosen)
        self.choices: list[Choice] = []
        self.state: Readiness | None = None
        self.refresh()

    @property
    def needed(self) -> bool:
        """Whether chat cannot run until a model is chosen or downloaded (the card is shown)."""
        return self.state is not None and self.state.where.in_process and not self.state.ready

    def refresh(self) -> None:
        self.state = readiness(self.engine.settings, self.engine.paths, "chat")
        self.setVisible(self.needed)
        if not self.needed:
            return
        problem = "" if self.state.needs_download else f" It cannot run now: {self.state.problem}."
        self.text.setText(
            "Chat answers from what Engram remembers with a model that runs here, so nothing you ask leaves this "
            f"computer. It is downloaded once and kept.{problem} Until then, Search finds what Engram remembers "
            "without one.")
        self.choices = chat_choices(self.engine)
        self.choice.blockSignals(True)
        self.choice.clear()
        for choice in self.choices:
            self.choice.addItem(choice.words, choice.entry.id)
            cast(QStandardItemModel, self.choice.model()).item(self.choice.count() - 1).setEnabled(choice.fits)
        index = next((i for i, c in enumerate(self.choices) if c.chosen and c.fits),
                     next((i for i, c in enumerate(self.choices) if c.fits), -1))
        self.choice.setCurrentIndex(index)
        self.choice.blockSignals(False)
        self._chosen()

    def chosen(self) -> Choice | None:
        """The model picked in the dropdown (``None`` when none fits this computer)."""
        index = self.choice.currentIndex()
        return self.choices[index] if 0 <= index < len(self.choices) and self.choices[index].fits else None

    def _chosen(self, _index: int = -1) -> None:
        choice = self.chosen()
        busy = self._downloading is not None
        if choice is None:
            self.get_button.setText("Download")
            self.get_button.setEnabled(False)
            if not self.choices or not any(c.fits for c in self.choices):
                self.say_failure("None of the chat models fits this computer's memory; choose a server for chat "
                                 "in Settings (Where the chat model runs).")
            return
        self.get_button.setText("Use this model" if choice.present else download_words(choice.entry.size))
        self.get_button.setEnabled(not busy)

    def get(self) -> None:
        """Make the chosen model chat's (``chat.local_model``) and download it unless it is here already."""
        choice = self.chosen()
        if choice is None:
            return
        if not choice.chosen:
            self.settings_control.save("chat.local_model", choice.spec)
        if not choice.present:
            self.download(choice.entry)
            self.get_button.setEnabled(False)


class LocalAiCard(_OfferCard):
    """Above recall while local AI is off or cannot run: what it would add, and a button that turns it on (with
    the helper model's download, its size said, when it is not here)."""

    open_settings = Signal()
    keys = ("recall.llm", "helper.provider", "helper.base_url", "helper.local.model")

    def __init__(self, engine: Engine, models: ModelsController, settings_control: SettingsController) -> None:
        super().__init__(engine, models, settings_control, "Local AI")
        self.turn_on_button = self._button("Turn on local AI", "Turn on local AI")
        self.settings_button = self._button("Settings…", "Open the local AI settings")
        self.buttons.addStretch(1)
        self.turn_on_button.clicked.connect(self.turn_on)
        self.settings_button.clicked.connect(self.open_settings)
        self.state: Readiness | None = None
        self.refresh()

    def refresh(self) -> None:
        s = self.engine.settings
        state = self.state = readiness(s, self.engine.paths)
        on = s.recall.llm and state.ready and state.where.on_this_computer
        self.setVisible(not on)
        if on:
            return
        entry = state.entry
        model = (f"{entry.id}, {size_words(entry.size)}" if entry.size else entry.id) if entry is not None else "its model"
        gives = ("Recall looks up each part of your question by meaning and by words, and shows the passages it "
                 f"found. With local AI on, a model on this computer ({model}) also plans extra lookups and writes "
                 "a short answer that cites those passages. It runs here: nothing you ask leaves this computer.")
        can_turn_on = True
        if not state.where.on_this_computer:
            self.heading.setText("Local AI is off: the helper model is set to run elsewhere")
            gives = (f"The helper model is set to run on {state.where.describe()}, and recall never sends your "
                     "memory off this computer, so recall shows the passages without an answer. Choose “This "
                     "computer” under Where the helper model runs in Settings to turn local AI on.")
            can_turn_on = False
        elif s.recall.llm and state.needs_download:
            self.heading.setText("Local AI is on, but its model is not downloaded yet")
            self.turn_on_button.setText(download_words(entry.size if entry else 0))
        elif not state.ready and not state.needs_download:
            self.heading.setText("Local AI cannot run on this computer now")
            gives += f" Now it cannot: {state.problem}."
            can_turn_on = False
        else:
            self.heading.setText("Local AI is off")
            self.turn_on_button.setText("Turn on local AI" if state.ready else
                                        download_words(entry.size if entry else 0, "Turn on and download"))
        self.text.setText(gives)
        self.turn_on_button.setVisible(can_turn_on)
        self.turn_on_button.setEnabled(can_turn_on and self._downloading is None)

    def turn_on(self) -> None:
        """Turn ``recall.llm`` on, and download the helper model when it is not here."""
        state = self.state
        if state is None:
            return
        if not self.engine.settings.recall.llm:
            self.settings_control.save("recall.llm", "true")
        if state.needs_download and state.entry is not None:
            self.download(state.entry)
            self.turn_on_button.setEnabled(False)
