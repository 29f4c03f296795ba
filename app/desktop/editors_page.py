"""The Editors page: which MCP clients name Engram, with a button to add or remove each.

It runs the same writers as ``engram setup`` (a backup of the old file, an atomic replace, comments
kept in TOML), pointing each editor at this installation's ``engram mcp``, through the editors
controller: the files are read and written off the Qt thread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QGridLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from engram.mcp.setup_clients import CLIENTS

from .editors import STATE_TEXT

if TYPE_CHECKING:
    from .desktop import Desktop


class EditorsPage(QWidget):
    changed = Signal(str, str)  # client name, message

    def __init__(self, desktop: Desktop) -> None:
        super().__init__()
        self.desktop = desktop
        self.editors = desktop.editors
        layout = QVBoxLayout(self)
        intro = QLabel("Editors and agents reach Engram over MCP: each one starts <code>engram mcp</code>, which "
                       "talks to this app. Connect the ones you use, then restart them.")
        intro.setWordWrap(True)
        layout.addWidget(intro)
        grid = QGridLayout()
        self.state_labels: dict[str, QLabel] = {}
        self.buttons: dict[str, QPushButton] = {}
        for i, client in enumerate(CLIENTS.values()):
            grid.addWidget(QLabel(f"<b>{client.label}</b>"), i, 0)
            self.state_labels[client.name] = QLabel("Reading its settings…")
            grid.addWidget(self.state_labels[client.name], i, 1)
            button = self.buttons[client.name] = QPushButton("Connect")
            button.setEnabled(False)
            button.clicked.connect(lambda _c=False, name=client.name: self.toggle(name))
            grid.addWidget(button, i, 2)
        layout.addLayout(grid)
        self.message = QLabel()
        self.message.setWordWrap(True)
        layout.addWidget(self.message)
        layout.addStretch(1)
        self.editors.changed.connect(self.show_states)
        self.editors.toggled.connect(self._toggled)
        self.show_states()

    def refresh(self) -> None:
        """Read the editors' settings again (in the background)."""
        self.editors.refresh()

    def show_states(self) -> None:
        for name, state in self.editors.states.items():
            self.state_labels[name].setText(f"{STATE_TEXT[state.state]} — {state.path}")
            self.buttons[name].setText("Remove" if state.connected else "Connect")
            self.buttons[name].setEnabled(True)

    def toggle(self, name: str) -> None:
        self.buttons[name].setEnabled(False)  # until its file has been changed and read again
        self.message.setStyleSheet("")
        self.message.setText(f"Changing {CLIENTS[name].label}'s settings…")
        self.editors.toggle(name)

    def _toggled(self, name: str, text: str, ok: bool) -> None:
        self.message.setStyleSheet("" if ok else "color: #b00020")
        self.message.setText(text)
        self.changed.emit(name, text)
