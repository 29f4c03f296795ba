"""The first-run welcome: connect the editors found on this computer, pick a folder to ingest.

Shown once per data folder (a marker file records that it was closed). It downloads nothing:
the embedding model is bundled, and a helper model is fetched only from the Settings page.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QDialog, QDialogButtonBox, QLabel, QPushButton, QVBoxLayout

from engram.core import EngramError
from engram.mcp.setup_clients import CLIENTS, client_state

from .editors_page import connect_editor

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
        for client in CLIENTS.values():
            state = client_state(client, desktop.places)
            if state in ("exists", "installed"):
                box = self.checks[client.name] = QCheckBox(client.label)
                box.setChecked(True)
                layout.addWidget(box)
            elif state == "configured":
                layout.addWidget(QLabel(f"✓ {client.label} is already connected."))
        if not self.checks and not any(client_state(c, desktop.places) == "configured" for c in CLIENTS.values()):
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
        messages = []
        if result == QDialog.DialogCode.Accepted:
            for name, box in self.checks.items():
                if box.isChecked():
                    try:
                        messages.append(connect_editor(CLIENTS[name], self.desktop.places))
                    except EngramError as exc:
                        messages.append(f"{exc.title}: {exc.message}")
        try:
            self.desktop.paths.data_dir.mkdir(parents=True, exist_ok=True)
            (self.desktop.paths.data_dir / MARKER).touch()
        except OSError:
            pass  # shown again next time; nothing else depends on it
        self.desktop.editors_changed()
        self.done_with.emit(messages)


def first_run(desktop: Desktop) -> bool:
    return not (desktop.paths.data_dir / MARKER).exists()
