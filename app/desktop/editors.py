"""Editors as the app knows them: each MCP client's state, read and changed off the Qt thread.

Reading six editors' config files (some of them large JSON documents on a slow disk) and rewriting one
are file work: ``EditorsController`` runs them as jobs in the ``editors`` lane (one at a time, in order)
and keeps the last states it read in ``states``; the Editors page, the tray menu and the welcome read
those and listen to ``changed``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal

from engram.core import EngramError
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

from .jobs import Job, Jobs


@dataclass(frozen=True)
class EditorState:
    name: str
    label: str
    state: str  # configured | exists | installed | not found
    path: str  # the config file Engram is written into

    @property
    def connected(self) -> bool:
        return self.state == "configured"


def read_states(places: Places) -> dict[str, EditorState]:
    """Every editor's state (reads their config files: a worker's job)."""
    return {name: EditorState(name, client.label, client_state(client, places), str(client.path(places)))
            for name, client in CLIENTS.items()}


def connect_editor(client: Client, places: Places, *, remove: bool = False) -> str:
    """Add (or remove) Engram in ``client``'s config; returns a sentence saying what happened. An editor not found
    on this computer is not connected: its folders are not made for it.

    Raises:
        SetupError: the editor is not found here, or its config cannot be read, parsed or written (it is left as
            it was).
    """
    if not remove and client_state(client, places) == "not found":
        raise SetupError(f"{client.label} is not installed on this computer, so Engram did not connect it and "
                         "changed nothing. Install it first; its card on the AI tools page then offers Connect.",
                         title=f"{client.label} not found")
    result = configure(client, places, command=launcher_command(), env=launcher_env(), remove=remove)
    if not result.changed:
        return f"{client.label}: nothing to do."
    verb = "Removed Engram from" if remove else "Connected"
    backup = f" (the old file is kept as {result.backup.name})" if result.backup else ""
    return f"{verb} {client.label}: {result.path}{backup}. Restart {client.label} to pick it up."


class EditorsController(QObject):
    """Reads and changes the editors' configs in the background; ``states`` is what was last read."""

    changed = Signal()  # ``states`` was read again
    toggled = Signal(str, str, bool)  # editor name, what happened (or why not), whether it worked

    def __init__(self, jobs: Jobs, places: Places, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.jobs = jobs
        self.places = places
        self.states: dict[str, EditorState] = {}
        self.loaded = False

    def refresh(self) -> None:
        """Read every editor's state again; ``changed`` follows."""
        places = self.places
        self.jobs.submit("task", "Reading the editors' settings", lambda _report: read_states(places),
                         on_done=self._read, lane="editors")

    def toggle(self, name: str) -> None:
        """Connect editor ``name``, or disconnect it when it is connected (decided from its file as it is
        then, not as last shown); ``toggled`` then ``changed`` follow."""
        client, places = CLIENTS[name], self.places

        def work(_report: object) -> str:
            return connect_editor(client, places, remove=client_state(client, places) == "configured")

        self.jobs.submit("task", f"Changing {client.label}'s settings", work,
                         on_done=lambda job: self._toggled(name, job), lane="editors")
        self.refresh()

    def connect_all(self, names: list[str], done: Callable[[list[str]], None]) -> None:
        """Connect each of ``names``; ``done(messages)`` gets one sentence per editor, then ``changed``."""
        places = self.places

        def work(_report: object) -> list[str]:
            messages = []
            for name in names:
                try:
                    messages.append(connect_editor(CLIENTS[name], places))
                except EngramError as exc:
                    messages.append(f"{exc.title}: {exc.message}")
            return messages

        self.jobs.submit("task", "Connecting editors", work,
                         on_done=lambda job: done(job.result if job.error is None else
                                                  [f"{job.error.title}: {job.error.message}"]), lane="editors")
        self.refresh()

    def when_loaded(self, then: Callable[[], None]) -> None:
        """Call ``then`` once the states have been read (at once when they have)."""
        if self.loaded:
            then()
            return

        def once() -> None:
            self.changed.disconnect(once)
            then()

        self.changed.connect(once)

    def _read(self, job: Job) -> None:
        if job.error is not None:
            return  # a config that cannot be read is shown by client_state as it is; a failure here is logged
        self.states = job.result
        self.loaded = True
        self.changed.emit()

    def _toggled(self, name: str, job: Job) -> None:
        if job.error is not None:
            self.toggled.emit(name, f"{job.error.title}: {job.error.message}", False)
        else:
            self.toggled.emit(name, str(job.result), True)
