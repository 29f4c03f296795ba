"""The Editors page: a card per editor saying in words whether it uses Engram, with one button to connect it or
disconnect it.

Connecting runs the same writers as ``engram setup`` (a backup of the old file, an atomic replace, comments
kept in TOML), pointing the editor at this installation's ``engram mcp``, through the editors controller: the
files are read and written off the Qt thread. An editor reads its settings only when it starts, so one that
became connected while the app runs is shown with a reminder to restart it.
"""

from __future__ import annotations

from itertools import pairwise

from PySide6.QtCore import QEvent, QSize, Qt, Signal
from PySide6.QtGui import QIcon, QPalette, QShowEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from engram.mcp.setup_clients import CLIENTS

from .editors import EditorsController, EditorState

CHECKING = "Checking…"  # the editors' files have not been read yet

#: Each state in words; "exists" is a settings file that does not name Engram: installed, not connected.
WORDS = {"configured": "Connected", "exists": "Installed — not connected", "installed": "Installed — not connected",
         "not found": "Not found on this computer"}

_Icon = QStyle.StandardPixmap
ICONS = {"configured": _Icon.SP_DialogApplyButton, "exists": _Icon.SP_MessageBoxInformation,
         "installed": _Icon.SP_MessageBoxInformation, "not found": _Icon.SP_ComputerIcon}

INTRO = ("Connect an AI tool (an editor's assistant, a coding agent, a chat app) to let it search your Engram memory "
         "and add to it, all on this computer. Connecting adds Engram to the tool's settings file (the old file is "
         "kept as a copy). Then restart the tool: it reads its settings only when it starts.")


def state_words(state: EditorState | None, *, restart: bool = False) -> str:
    """What a card says about an editor (``None``: not read yet); ``restart``: it was connected just now."""
    if state is None:
        return CHECKING
    if state.connected and restart:
        return f"Connected — restart {state.label} to use Engram"
    return WORDS[state.state]


class EditorCard(QFrame):
    """One editor: its name, an icon and a sentence for its state, its settings file, and one button."""

    def __init__(self, name: str, label: str) -> None:
        super().__init__()
        self.name = name
        self.label = label
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAccessibleName(label)
        self._pixmap = _Icon.SP_BrowserReload
        self._dimmed = False
        self.icon = QLabel()
        self.icon.setAlignment(Qt.AlignmentFlag.AlignTop)
        self.name_label = QLabel(label)
        self.name_label.setTextFormat(Qt.TextFormat.PlainText)
        font = self.name_label.font()
        font.setBold(True)
        self.name_label.setFont(font)
        self.state_label = QLabel(CHECKING)
        self.state_label.setTextFormat(Qt.TextFormat.PlainText)
        self.state_label.setWordWrap(True)
        # The path is for someone who wants to look at the file: small, grey, selectable (it wraps after a "/").
        self.details = QLabel()
        self.details.setTextFormat(Qt.TextFormat.PlainText)
        self.details.setWordWrap(True)
        self.details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.details.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.details.setAccessibleName(f"{label}'s settings file")
        small = self.details.font()
        if small.pointSizeF() > 0:
            small.setPointSizeF(small.pointSizeF() * 0.9)
            self.details.setFont(small)
        self.details.hide()
        self.button = QPushButton("Connect")
        self.button.setEnabled(False)
        self.button.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self._fit_button()

        text = QVBoxLayout()
        text.setSpacing(2)
        text.addWidget(self.name_label)
        text.addWidget(self.state_label)
        text.addWidget(self.details)
        row = QHBoxLayout(self)
        row.addWidget(self.icon, 0, Qt.AlignmentFlag.AlignTop)
        row.addLayout(text, 1)
        row.addWidget(self.button, 0, Qt.AlignmentFlag.AlignVCenter)
        self.show_state(None)

    def show_state(self, state: EditorState | None, *, busy: str = "", restart: bool = False) -> None:
        """Show ``state`` (``None``: not read yet); ``busy`` ("Connecting…") while a change runs."""
        words = state_words(state, restart=restart)
        self.state_label.setText(words)
        self.state_label.setAccessibleName(f"{self.label}: {words}")
        self._pixmap = _Icon.SP_BrowserReload if state is None else ICONS[state.state]
        self._dimmed = state is not None and state.state == "not found"  # not an error: an editor not used here
        self._draw_icon()
        if state is not None:
            self.details.setText(f"Settings file: {state.path}")
        # An editor not on this computer has no settings file to look at: its path would only puzzle.
        self.details.setVisible(state is not None and state.state != "not found")
        verb = "Disconnect" if state is not None and state.connected else "Connect"
        self.button.setText(busy or verb)
        self.button.setAccessibleName(f"{busy.removesuffix('…')} {self.label}…" if busy else f"{verb} {self.label}")
        found = state is not None and state.state != "not found"
        self.button.setEnabled(found and not busy)
        missing = f"{self.label} was not found on this computer." if state is not None and not found else ""
        self.button.setToolTip(missing)
        self.button.setAccessibleDescription(missing)

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.DevicePixelRatioChange:  # moved to a screen of another scale
            self._draw_icon()
        return super().event(event)

    def changeEvent(self, event: QEvent) -> None:
        if event.type() in (QEvent.Type.StyleChange, QEvent.Type.FontChange):
            self._draw_icon()
            self._fit_button()
        super().changeEvent(event)

    def _draw_icon(self) -> None:
        style = self.style()
        side = style.pixelMetric(QStyle.PixelMetric.PM_LargeIconSize, None, self)
        icon = style.standardIcon(self._pixmap, None, self)
        self.icon.setFixedSize(side, side)
        mode = QIcon.Mode.Disabled if self._dimmed else QIcon.Mode.Normal
        self.icon.setPixmap(icon.pixmap(QSize(side, side), self.devicePixelRatioF(), mode))

    def _fit_button(self) -> None:
        """As wide as its widest text, so that the card does not jump as the button's text changes."""
        text = self.button.text()
        widths = []
        for label in ("Connect", "Disconnect", "Connecting…", "Disconnecting…"):
            self.button.setText(label)
            widths.append(self.button.sizeHint().width())
        self.button.setText(text)
        self.button.setMinimumWidth(max(widths))


class EditorsPage(QWidget):
    changed = Signal(str, str)  # editor name, what happened (or why not)

    def __init__(self, editors: EditorsController) -> None:
        super().__init__()
        self.editors = editors
        self.busy: dict[str, str] = {}  # editor → "Connecting…" or "Disconnecting…", until its file is read again
        self._written: set[str] = set()  # editors whose change has run; busy until the read that follows it
        self.to_restart: set[str] = set()  # became connected while the app runs
        self._shown: dict[str, EditorState] = dict(self.editors.states)

        intro = QLabel(INTRO)
        intro.setWordWrap(True)
        self.cards: dict[str, EditorCard] = {}
        self.buttons: dict[str, QPushButton] = {}
        column = QWidget()
        cards = QVBoxLayout(column)
        cards.setContentsMargins(0, 0, 0, 0)
        for client in CLIENTS.values():
            card = self.cards[client.name] = EditorCard(client.name, client.label)
            card.button.clicked.connect(lambda _c=False, name=client.name: self.toggle(name))
            self.buttons[client.name] = card.button
            cards.addWidget(card)
        cards.addStretch(1)
        for before, after in pairwise(self.buttons.values()):  # Tab goes down the cards
            QWidget.setTabOrder(before, after)
        self.scroll_area = QScrollArea()
        self.scroll_area.setAccessibleName("Editors")
        self.scroll_area.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll_area.setWidgetResizable(True)
        self.scroll_area.setWidget(column)
        self.message = QLabel()
        self.message.setWordWrap(True)
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.message.setAccessibleName("What the last change did")

        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.scroll_area, 1)
        layout.addWidget(self.message)
        self.editors.changed.connect(self.show_states)
        self.editors.toggled.connect(self._toggled)
        self.show_states()

    def refresh(self) -> None:
        """Read the editors' settings again (in the background)."""
        self.editors.refresh()

    def showEvent(self, event: QShowEvent) -> None:
        if not event.spontaneous():  # the page was opened: an editor may have been installed since
            self.refresh()
        super().showEvent(event)

    def show_states(self) -> None:
        """Show the states as last read; an editor that became connected since the last read needs a restart."""
        states = self.editors.states
        for name, state in states.items():
            before = self._shown.get(name)
            if not state.connected:
                self.to_restart.discard(name)
            elif before is not None and not before.connected:
                self.to_restart.add(name)
        self._shown = dict(states)
        for name in self._written:
            self.busy.pop(name, None)
        self._written.clear()
        for name in self.cards:
            self._show(name)

    def toggle(self, name: str) -> None:
        """Connect editor ``name``, or disconnect it when it is connected (off the Qt thread)."""
        state = self.editors.states.get(name)
        self.busy[name] = "Disconnecting…" if state is not None and state.connected else "Connecting…"
        self._show(name)
        self.message.setStyleSheet("")
        self.message.setText(f"Changing {CLIENTS[name].label}'s settings…")
        self.editors.toggle(name)

    def _show(self, name: str) -> None:
        self.cards[name].show_state(self.editors.states.get(name), busy=self.busy.get(name, ""),
                                    restart=name in self.to_restart)

    def _toggled(self, name: str, text: str, ok: bool) -> None:
        if ok:
            self._written.add(name)  # its card shows the change once the file has been read again
        elif self.busy.pop(name, None) is not None:
            self._show(name)  # nothing changed: the state shown is still right
        self.message.setStyleSheet("" if ok else "color: #b00020")
        self.message.setText(text)
        self.changed.emit(name, text)
