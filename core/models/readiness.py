"""Whether a model can run now, decided in one place: where it runs (``runs_where``), then, for a model in this
process, whether its file names a model and is on this computer. Nothing here downloads, loads or hashes.

``engram status``, recall's gate, the desktop's status line, its Settings page and its Ask page all read this, so
they never disagree about whether local AI is on or why not.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import EngramError
from ..manifest import ModelEntry, resolve_model
from ..paths import Paths
from ..settings import Settings
from .files import ModelFiles
from .runs_where import Where, runs_where


@dataclass(frozen=True)
class Readiness:
    """Whether the model of one role can run now, and if not, why."""

    where: Where
    #: The model run in this process (``None`` for a server's model, or a setting that names no model).
    entry: ModelEntry | None = None
    #: Why it cannot run now, in a sentence (``""``: it can).
    problem: str = ""
    #: The model is in this process and only its file is missing: a download would make it ready.
    needs_download: bool = False

    @property
    def ready(self) -> bool:
        """Whether a call would find the model (a server's model is taken to be there until it answers)."""
        return not self.problem

    def sentence(self) -> str:
        """One line: what runs where, or why it cannot."""
        if self.problem:
            return self.problem
        if self.entry is not None:
            return f"{self.entry.id} on this computer"
        return f"{self.where.model or 'the default model'} via {self.where.describe()}"


def readiness(settings: Settings, paths: Paths, role: str = "helper") -> Readiness:
    """Whether the model of ``role`` (``helper``, ``chat-large`` or ``chat``) can run now; never raises."""
    where = runs_where(settings, role)
    if not where.in_process:
        return Readiness(where)
    try:
        entry = resolve_model(where.model)
    except EngramError as exc:
        return Readiness(where, problem=exc.message)
    status = ModelFiles(paths.models_dir, settings.model.hub_url).status(entry)
    if entry.local_path and not status.present:
        return Readiness(where, entry, problem=f"the model file {entry.local_path} does not exist")
    if not status.available:
        return Readiness(where, entry, problem=f"{entry.id} {status.note}")
    if not status.present:
        return Readiness(where, entry, problem=f"{entry.id} is not on this computer (`engram models download "
                                                f"{entry.id}`)", needs_download=True)
    return Readiness(where, entry)
