"""What the pages and the tray may ask of the app, and what they hear from it.

``Desktop`` composes the app and hands a ``Shell`` to each page and to the tray: its methods are the app-level
actions (show the window, quit, ingest a folder, pause indexing or the folder watch, notify), its signals say what changed (the
counts, the state, the GPUs found, the service). The pages connect to the signals and update their own widgets;
nothing here imports a page, so no page imports ``Desktop``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from PySide6.QtCore import QObject, Signal


class Notify(Protocol):
    """``notify(title, message, error=…, warning=…, page=…)``: a notification that opens ``page`` when clicked."""

    def __call__(self, title: str, message: str, *, error: bool = False, warning: bool = False,
                 page: str = "home") -> None: ...


class Shell(QObject):
    """The app-level actions (callables ``Desktop`` hands in) and the signals it emits for the pages and the tray."""

    counts_changed = Signal(object)  # the counts job (a ``Job``): its result, or its error
    status_changed = Signal(str)  # what Engram remembers in a sentence (the tray's status line)
    state_changed = Signal(str, str)  # ready, indexing, downloading or error; a detail ("paused"), often ""
    paused_changed = Signal(bool)  # indexing was paused (True) or resumed
    watching_paused_changed = Signal(bool)  # keeping folders current was paused (True) or not (also: could not be)
    gpus_found = Signal(object)  # the GPU job (a ``Job``): (the GPUs, the device chosen in words), or its error
    service_changed = Signal(str)  # a sentence about the service (its address, or why it is not served here)
    message = Signal(str, int)  # a line for the window's status bar, and for how many milliseconds

    def __init__(self, *, show_window: Callable[[str | None], None], quit: Callable[[], None],
                 choose_folder_to_ingest: Callable[[], None], set_indexing_paused: Callable[[bool], None],
                 cancel_ingest: Callable[[int], bool], notify: Notify, has_tray: Callable[[], bool],
                 set_watching_paused: Callable[[bool], None], went_to_tray: Callable[[], None] | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._show_window = show_window
        self._quit = quit
        self._choose_folder = choose_folder_to_ingest
        self._set_paused = set_indexing_paused
        self._set_watching_paused = set_watching_paused
        self._cancel_ingest = cancel_ingest
        self._notify = notify
        self._has_tray = has_tray
        self._went_to_tray = went_to_tray or (lambda: None)

    def show_window(self, page: str | None = None) -> None:
        """Show the window (on ``page`` when given: home, ask, memory, editors, settings)."""
        self._show_window(page)

    def quit(self) -> None:
        """End the app (the service stops, running jobs end, the engine closes)."""
        self._quit()

    def choose_folder_to_ingest(self) -> None:
        """Ask for a folder and ingest it in the background."""
        self._choose_folder()

    def set_indexing_paused(self, paused: bool) -> None:
        """Pause (or resume) every ingest after its current batch; ``paused_changed`` follows."""
        self._set_paused(paused)

    def set_watching_paused(self, paused: bool) -> None:
        """Hold (or let go of) the watch of ingested folders: their changes wait until it is resumed."""
        self._set_watching_paused(paused)

    def cancel_ingest(self, job_id: int) -> bool:
        """Stop the ingest job ``job_id`` after its current batch. Returns False when it runs no ingest now."""
        return self._cancel_ingest(job_id)

    def notify(self, title: str, message: str, *, error: bool = False, warning: bool = False,
               page: str = "home") -> None:
        """A tray notification (the status bar where there is no tray); clicking it opens ``page``."""
        self._notify(title, message, error=error, warning=warning, page=page)

    def show_message(self, text: str, milliseconds: int) -> None:
        """Say ``text`` in the window's status bar for ``milliseconds``."""
        self.message.emit(text, milliseconds)

    def went_to_tray(self) -> None:
        """The window was closed and Engram runs on in the tray (the first time, the app says so)."""
        self._went_to_tray()

    @property
    def has_tray(self) -> bool:
        """Whether the tray icon is shown (closing the window then hides it instead of quitting)."""
        return self._has_tray()
