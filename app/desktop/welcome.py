"""The first-run welcome: connect the editors found on this computer, pick a folder to ingest.

Shown once per data folder (a marker file records that it was closed), once the editors' settings have
been read (in the background). It downloads nothing: the embedding model is bundled, and a helper model is
fetched only from the Settings page.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from engram.core import EngramError, Settings
from engram.core.manifest import resolve_model

from .editors import EditorsController
from .jobs import Jobs
from .shell import Shell

MARKER = "welcome-done"


class Welcome(QDialog):
    """Three short steps: connect the editors found, choose folders to remember, local AI (off, and what
    turning it on means). *Later* closes it at any step; *Finish* connects the editors ticked.

    ``show_page`` brings a page of the window to the front; ``data_dir`` is where the marker is written."""

    done_with = Signal(list)  # the messages of what it did

    def __init__(self, parent: QWidget, shell: Shell, jobs: Jobs, editors: EditorsController, settings: Settings,
                 data_dir: Path, show_page: Callable[[str], None]) -> None:
        super().__init__(parent)
        self.shell = shell
        self.jobs = jobs
        self.editors = editors
        self.settings = settings
        self.data_dir = data_dir
        self.show_page = show_page
        self.setWindowTitle("Welcome to Engram")
        layout = QVBoxLayout(self)
        intro = QLabel("<h3>Welcome to Engram</h3><p>Engram keeps a memory for your AI tools on this computer: "
                       "your notes, their conversations and the files you choose, searchable by meaning and by "
                       "words. Nothing leaves this computer, and nothing is downloaded unless you ask.</p>")
        intro.setWordWrap(True)
        layout.addWidget(intro)
        self.steps = QStackedWidget()
        self.steps.addWidget(self._editors_step())
        self.steps.addWidget(self._folders_step())
        self.steps.addWidget(self._local_ai_step())
        layout.addWidget(self.steps)
        self.step_label = QLabel()
        layout.addWidget(self.step_label)
        # Later on the left; Back, then Next or Finish on the right, in the order a person reads them.
        buttons = QHBoxLayout()
        self.later_button = QPushButton("Later")
        self.back_button = QPushButton("Back")
        self.next_button = QPushButton("Next")
        self.connect_button = QPushButton("Finish")
        buttons.addWidget(self.later_button)
        buttons.addStretch(1)
        for button in (self.back_button, self.next_button, self.connect_button):
            buttons.addWidget(button)
        self.later_button.clicked.connect(self.reject)
        self.back_button.clicked.connect(lambda: self.go(self.steps.currentIndex() - 1))
        self.next_button.clicked.connect(lambda: self.go(self.steps.currentIndex() + 1))
        self.connect_button.clicked.connect(self.accept)
        layout.addLayout(buttons)
        self.finished.connect(self._finish)
        self.go(0)

    def go(self, step: int) -> None:
        """Show step ``step`` (0–2) and the buttons that fit it."""
        step = max(0, min(step, self.steps.count() - 1))
        self.steps.setCurrentIndex(step)
        last = step == self.steps.count() - 1
        self.step_label.setText(f"Step {step + 1} of {self.steps.count()}")
        self.back_button.setEnabled(step > 0)
        self.next_button.setVisible(not last)
        self.connect_button.setVisible(last)
        (self.connect_button if last else self.next_button).setDefault(True)

    def _editors_step(self) -> QWidget:
        page, layout = _page("<b>1. Connect your AI tools</b> — the ones found on this computer. Each one reads "
                             "its settings when it starts: restart it afterwards.")
        self.checks: dict[str, QCheckBox] = {}
        states = self.editors.states
        for editor in states.values():
            if editor.state in ("exists", "installed"):
                box = self.checks[editor.name] = QCheckBox(editor.label)
                box.setChecked(True)
                layout.addWidget(box)
            elif editor.connected:
                layout.addWidget(QLabel(f"✓ {editor.label} is already connected."))
        if not self.checks and not any(editor.connected for editor in states.values()):
            layout.addWidget(QLabel("No AI tool found yet; connect one later from the AI tools page."))
        layout.addStretch(1)
        return page

    def _folders_step(self) -> QWidget:
        page, layout = _page("<b>2. Choose folders to remember</b> — notes, documents, code. Engram reads them "
                             "here and keeps what it learns on this computer; the files stay where they are.")
        self.folder_button = QPushButton("Choose a folder to remember…")
        self.folder_button.clicked.connect(self.shell.choose_folder_to_ingest)
        layout.addWidget(self.folder_button)
        layout.addWidget(QLabel("You can add more at any time with Remember a folder… in the tray menu."))
        layout.addStretch(1)
        return page

    def _local_ai_step(self) -> QWidget:
        settings = self.settings
        try:
            entry = resolve_model(settings.helper.local.model)
            size = f"{entry.size / 1e9:.1f} GB" if entry.size else "a few GB"
            memory = f"about {entry.size * 1.3 / 1e9:.1f} GB of memory" if entry.size else "a few GB of memory"
            name = entry.id  # its manifest name says the file format (Q4_K_M GGUF): jargon to a newcomer
        except EngramError:
            name, size, memory = settings.helper.local.model, "a few GB", "a few GB of memory"
        page, layout = _page(
            f"<b>3. Local AI is {'on' if settings.recall.llm else 'off'}.</b> Turned on, a model on this computer "
            f"plans each recall and answers from your memory, citing where each part comes from. It means downloading {name} ({size}) once; "
            f"it uses {memory} while it works and runs on this computer only (on your GPU when there is one). "
            "Nothing is sent anywhere.")
        self.local_ai_button = QPushButton("Open Local AI settings")
        self.local_ai_button.clicked.connect(lambda: self.show_page("settings"))
        layout.addWidget(self.local_ai_button)
        layout.addWidget(QLabel("Engram works without it: recall then returns the evidence itself."))
        layout.addStretch(1)
        return page

    def _finish(self, result: int) -> None:
        chosen = [name for name, box in self.checks.items() if box.isChecked()]
        data_dir = self.data_dir

        def mark(_report: object) -> None:
            try:
                data_dir.mkdir(parents=True, exist_ok=True)
                (data_dir / MARKER).touch()
            except OSError:
                pass  # shown again next time; nothing else depends on it

        self.jobs.submit("task", "Remembering the welcome was shown", mark, lane="settings")
        if result == QDialog.DialogCode.Accepted and chosen:
            self.editors.connect_all(chosen, self.done_with.emit)
        else:
            self.done_with.emit([])


def _page(text: str) -> tuple[QWidget, QVBoxLayout]:
    """A step: its sentence on top, its controls below."""
    page = QWidget()
    layout = QVBoxLayout(page)
    label = QLabel(text)
    label.setWordWrap(True)
    layout.addWidget(label)
    return page, layout


def first_run(data_dir: Path) -> bool:
    """Whether the welcome has not been closed yet for the data folder ``data_dir``."""
    return not (data_dir / MARKER).exists()
