"""The first-run welcome: connect the editors found on this computer, pick a folder to ingest.

Shown once per data folder (a marker file records that it was closed), once the editors' settings have
been read (in the background). It downloads nothing: the embedding model is bundled, and a helper model is
fetched only from the Settings page.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QDialog, QDialogButtonBox, QLabel, QPushButton, QVBoxLayout

if TYPE_CHECKING:
    from .desktop import Desktop

MARKER = "welcome-done"


class Welcome(QDialog):
    done_with = Signal(list)  # the messages of what it did

    def __init__(self, desktop: Desktop) -> None:
        super().__init__(desktop.window)
        self.desktop = desktop
        self.setWindowTitle("Welcome to Engram")
        layout = QVBoxLayout(self)
        text = QLabel("<h3>Welcome to Engram</h3><p>Engram keeps a memory for your AI tools on this computer: "
                      "your notes, their conversations and the files you choose, searchable by meaning and by "
                      "words. Nothing leaves this computer, and nothing is downloaded unless you ask.</p>"
                      "<p><b>Connect your editors</b> (found on this computer):</p>")
        text.setWordWrap(True)
        layout.addWidget(text)
        self.checks: dict[str, QCheckBox] = {}
        states = desktop.editors.states
        for editor in states.values():
            if editor.state in ("exists", "installed"):
                box = self.checks[editor.name] = QCheckBox(editor.label)
                box.setChecked(True)
                layout.addWidget(box)
            elif editor.connected:
                layout.addWidget(QLabel(f"✓ {editor.label} is already connected."))
        if not self.checks and not any(editor.connected for editor in states.values()):
            layout.addWidget(QLabel("No editor found yet; connect one later from the Editors page."))
        self.folder_button = QPushButton("Choose a folder to ingest…")
        self.folder_button.clicked.connect(desktop.choose_folder_to_ingest)
        layout.addWidget(self.folder_button)
        buttons = QDialogButtonBox()
        self.connect_button = buttons.addButton("Connect selected editors", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.addButton("Later", QDialogButtonBox.ButtonRole.RejectRole)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)
        self.finished.connect(self._finish)

    def _finish(self, result: int) -> None:
        chosen = [name for name, box in self.checks.items() if box.isChecked()]
        data_dir = self.desktop.paths.data_dir

        def mark(_report: object) -> None:
            try:
                data_dir.mkdir(parents=True, exist_ok=True)
                (data_dir / MARKER).touch()
            except OSError:
                pass  # shown again next time; nothing else depends on it

        self.desktop.jobs.submit("task", "Remembering the welcome was shown", mark, lane="settings")
        if result == QDialog.DialogCode.Accepted and chosen:
            self.desktop.editors.connect_all(chosen, self.done_with.emit)
        else:
            self.done_with.emit([])


def first_run(desktop: Desktop) -> bool:
    return not (desktop.paths.data_dir / MARKER).exists()
