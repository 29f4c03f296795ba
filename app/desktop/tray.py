"""The tray icon: state at a glance (ready, indexing, downloading, error) and the menu."""

from __future__ import annotations

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QSystemTrayIcon

from engram.mcp.setup_clients import CLIENTS

from .editors import EditorsController
from .resources import tray_icon
from .shell import Shell

STATE_TIPS = {"ready": "Engram — ready", "indexing": "Engram — indexing", "downloading": "Engram — downloading a model",
              "error": "Engram — something failed (open Engram for details)"}


class Tray(QObject):
    """The icon, its menu and its notifications. Every action calls into the ``Shell``; the icon, its tooltip,
    the status line and Pause indexing follow the shell's signals."""

    def __init__(self, shell: Shell, editors: EditorsController, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.shell = shell
        self.editors = editors
        self.icon = QSystemTrayIcon(tray_icon("ready"))
        self.menu = QMenu()
        self.status_action = self.menu.addAction("Starting…")
        self.status_action.setEnabled(False)
        self.menu.addSeparator()
        self.open_action = self.menu.addAction("Open Engram")
        self.open_action.triggered.connect(lambda: shell.show_window())
        self.editors_menu = self.menu.addMenu("Connect an AI tool")
        self.editor_actions: dict[str, QAction] = {}
        for client in CLIENTS.values():
            action = self.editors_menu.addAction(client.label)
            action.setCheckable(True)
            action.triggered.connect(lambda _checked=False, name=client.name: editors.toggle(name))
            self.editor_actions[client.name] = action
        self.ingest_action = self.menu.addAction("Remember a folder…")
        self.ingest_action.triggered.connect(shell.choose_folder_to_ingest)
        self.pause_action = self.menu.addAction("Pause indexing")
        self.pause_action.setCheckable(True)
        self.pause_action.toggled.connect(shell.set_indexing_paused)
        self.watch_action = self.menu.addAction("Pause watching folders")
        self.watch_action.setCheckable(True)
        self.watch_action.setToolTip("Remembered folders are kept current while Engram runs; paused, changes wait.")
        self.watch_action.toggled.connect(shell.set_watching_paused)
        self.menu.addSeparator()
        self.quit_action = self.menu.addAction("Quit Engram")
        self.quit_action.triggered.connect(shell.quit)
        self.icon.setContextMenu(self.menu)
        self.icon.activated.connect(self._activated)
        self.last_page: str | None = None  # the page the latest notification is about
        self.icon.messageClicked.connect(lambda: shell.show_window(self.last_page))
        editors.changed.connect(self.refresh_editors)
        shell.state_changed.connect(self.set_state)
        shell.status_changed.connect(self.set_status)
        shell.paused_changed.connect(self.show_paused)
        shell.watching_paused_changed.connect(self.show_watching_paused)
        self.refresh_editors()
        self.set_state("ready")

    def show(self) -> None:
        self.icon.show()

    def hide(self) -> None:
        self.icon.hide()

    def set_state(self, state: str, detail: str = "") -> None:
        self.icon.setIcon(tray_icon(state))
        self.icon.setToolTip(STATE_TIPS[state] + (f"\n{detail}" if detail else ""))

    def set_status(self, text: str) -> None:
        self.status_action.setText(text)

    def show_paused(self, paused: bool) -> None:
        """Tick (or untick) Pause indexing: indexing may be paused from the window too."""
        if self.pause_action.isChecked() != paused:
            self.pause_action.setChecked(paused)

    def show_watching_paused(self, paused: bool) -> None:
        """Tick (or untick) Pause watching folders as the app says it is (untick: there was nothing to pause)."""
        if self.watch_action.isChecked() != paused:
            self.watch_action.blockSignals(True)
            self.watch_action.setChecked(paused)
            self.watch_action.blockSignals(False)

    def refresh_editors(self) -> None:
        """Show the editors' states as last read (the controller reads them in the background)."""
        for name, action in self.editor_actions.items():
            state = self.editors.states.get(name)
            configured = state is not None and state.connected
            missing = state is None or state.state == "not found"  # not read yet, or not on this computer
            action.setChecked(configured)
            action.setEnabled(configured or not missing)
            label = CLIENTS[name].label
            action.setText(f"{label} (connected)" if configured else f"{label} (not installed)"
                           if state is not None and missing else label)

    def notify(self, title: str, message: str, *, error: bool = False, warning: bool = False,
               page: str | None = None) -> None:
        """Show a notification; clicking it opens the window on ``page`` (the one it is about)."""
        self.last_page = page
        kind = (QSystemTrayIcon.MessageIcon.Critical if error else
                QSystemTrayIcon.MessageIcon.Warning if warning else QSystemTrayIcon.MessageIcon.Information)
        self.icon.showMessage(title, message, kind, 8000)

    def _activated(self, reason: QSystemTrayIcon.ActivationReason) -> None:
        if reason in (QSystemTrayIcon.ActivationReason.Trigger, QSystemTrayIcon.ActivationReason.DoubleClick):
            self.shell.show_window()
