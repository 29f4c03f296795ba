"""The Editors page: which MCP clients name Engram, with a button to add or remove each.

It runs the same writers as ``engram setup`` (a backup of the old file, an atomic replace, comments
kept in TOML), pointing each editor at this installation's ``engram mcp``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QGridLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from engram.mcp.setup_clients import (
    CLIENTS,
    Client,
    Places,
    SetupError,
    client_state,
    configure,
    launcher_command,
    launcher_env,
)

if TYPE_CHECKING:
    from .desktop import Desktop

STATE_TEXT = {"configured": "connected", "exists": "not connected", "installed": "installed, not connected",
              "not found": "not found on this computer"}


def connect_editor(client: Client, places: Places, *, remove: bool = False) -> str:
    """Add (or remove) Engram in ``client``'s config; returns a sentence saying what happened.

    Raises:
        SetupError: the config cannot be read, parsed or written (it is left as it was).
    """
    result = configure(client, places, command=launcher_command(), env=launcher_env(), remove=remove)
    if not result.changed:
        return f"{client.label}: nothing to do."
    verb = "Removed Engram from" if remove else "Connected"
    backup = f" (the old file is kept as {result.backup.name})" if result.backup else ""
    return f"{verb} {client.label}: {result.path}{backup}. Restart {client.label} to pick it up."


class EditorsPage(QWidget):
    changed = Signal(str, str)  # client name, message

    def __init__(self, desktop: Desktop) -> None:
        super().__init__()
        self.desktop = desktop
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
            self.state_labels[client.name] = QLabel()
            grid.addWidget(self.state_labels[client.name], i, 1)
            button = self.buttons[client.name] = QPushButton()
            button.clicked.connect(lambda _c=False, c=client: self.toggle(c))
            grid.addWidget(button, i, 2)
        layout.addLayout(grid)
        self.message = QLabel()
        self.message.setWordWrap(True)
        layout.addWidget(self.message)
        layout.addStretch(1)
        self.refresh()

    def refresh(self) -> None:
        places = self.desktop.places
        for name, client in CLIENTS.items():
            state = client_state(client, places)
            self.state_labels[name].setText(f"{STATE_TEXT[state]} — {client.path(places)}")
            self.buttons[name].setText("Remove" if state == "configured" else "Connect")

    def toggle(self, client: Client) -> None:
        try:
            text = self.desktop.toggle_editor(client)
            self.message.setStyleSheet("")
        except SetupError as exc:
            text = f"{exc.title}: {exc.message}"
            self.message.setStyleSheet("color: #b00020")
        self.message.setText(text)
        self.changed.emit(client.name, text)
