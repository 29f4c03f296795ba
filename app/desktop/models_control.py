"""The helper model's file, downloaded, verified or removed in the background.

``ModelsController`` says what is known of the chosen helper model's file (``state``: a stat of the file and
its verified-identity record, cheap enough for the Qt thread) and runs one action at a time on it (``act``:
download, verify, remove) as a job of ``Jobs``, so a multi-GB download or a full SHA256 read never blocks the
window. It reports ``progress`` while the job runs and ``done`` once, when it ends. The Settings page only
shows widgets and connects to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from PySide6.QtCore import QObject, Signal

from engram.core import Engine, EngramError
from engram.core.manifest import ModelEntry, resolve_model

from .jobs import Job, JobKind, Jobs

#: What ``act`` accepts.
ACTIONS = ("download", "verify", "remove")

#: How a helper model is pinned, in a sentence for the model row.
PINNING_SENTENCES = {
    "hash": "Pinned by hash: the file is checked against the fingerprint Engram ships with, when it arrives and "
            "whenever it changes.",
    "revision": "Pinned by revision only: Engram ships no fingerprint for it, so the one the download site gives is "
                "recorded at the first download and checked from then on.",
    "none": "Your own model: used as it is, not checked.",
}


@dataclass(frozen=True)
class ModelState:
    """What the page shows of one model's file, and which actions make sense now."""

    text: str
    present: bool = False
    can_download: bool = False
    can_verify: bool = False
    can_remove: bool = False


class ModelsController(QObject):
    """Downloads, verifies and removes the chosen helper model on a worker, one action at a time."""

    progress = Signal(int, str)  # percent (-1 while the total is unknown), what is happening
    done = Signal(str, bool)  # the outcome in a sentence, whether the action succeeded
    busy_changed = Signal(bool)  # an action started (True) or ended (False)

    def __init__(self, jobs: Jobs, engine: Engine, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.jobs = jobs
        self.engine = engine
        self._job: int | None = None
        jobs.changed.connect(self._changed)

    @property
    def busy(self) -> bool:
        """Whether an action is running (``act`` starts no second one)."""
        return self._job is not None

    def entry(self, entry_or_id: ModelEntry | str | None = None) -> ModelEntry:
        """The manifest entry of ``entry_or_id`` (default: the helper model the settings choose).

        Raises:
            EngramError: the id names no model and is no usable custom model.
        """
        if isinstance(entry_or_id, ModelEntry):
            return entry_or_id
        return resolve_model(entry_or_id if entry_or_id is not None else self.engine.settings.helper.local.model)

    def state(self, entry_or_id: ModelEntry | str | None = None) -> ModelState:
        """The file of ``entry_or_id`` (default: the chosen helper model) in words, from a stat of the file and
        its verified-identity record (no hashing, no network)."""
        try:
            entry = self.entry(entry_or_id)
            st = self.engine.model_files().status(entry)
        except EngramError as exc:
            return ModelState(exc.message)
        size = f"{st.size / 1e9:.2f} GB" if st.size else "size unknown"
        where = f"downloaded at {st.path}" if st.present else "not downloaded"
        extra = f" {st.note}" if st.note else ""
        idle = not self.busy
        return ModelState(f"{entry.id}, {size}: {where}. {PINNING_SENTENCES[entry.pinning]}{extra}",
                          present=st.present, can_download=idle and not st.present and st.available,
                          can_verify=idle and st.present, can_remove=idle and st.present)

    def act(self, action: str, entry_or_id: ModelEntry | str | None = None) -> bool:
        """Start ``action`` (download, verify or remove) on ``entry_or_id`` (default: the chosen helper model)
        on a worker; ``progress`` follows while it runs and ``done`` once when it ends. Returns False (and
        starts nothing) while another action runs; a model that cannot be resolved is reported through
        ``done`` at once."""
        if action not in ACTIONS:
            raise ValueError(f"unknown model action {action!r}; expected one of {', '.join(ACTIONS)}")
        if self.busy:
            return False
        try:
            entry = self.entry(entry_or_id)
        except EngramError as exc:
            self.done.emit(exc.message, False)
            return True
        engine = self.engine
        files = engine.model_files()

        def work(report: Any) -> str:
            if action == "download":
                got = engine.download_model(entry, progress=lambda p: report(p.done, p.total, _rate(p)))
                return f"{entry.id} downloaded and verified ({got.size:,} bytes)."
            if action == "verify":
                return f"{entry.id} matches its SHA256, read in full ({files.verify(entry, full=True)})."
            return f"{entry.id} {'removed' if files.remove(entry) else 'was not downloaded'}."

        kind: JobKind = "download" if action == "download" else "task"
        job = self.jobs.submit(kind, f"{action.capitalize()} {entry.id}", work, on_done=self._done)
        if job.finished:  # not started (Engram is quitting)
            return False
        self._job = job.id
        self.busy_changed.emit(True)
        self.progress.emit(-1, "")
        return True

    def _changed(self, job: Job) -> None:
        if job.id != self._job or job.finished:
            return
        percent = job.percent
        self.progress.emit(-1 if percent is None else percent, job.detail)

    def _done(self, job: Job) -> None:
        if job.id != self._job:
            return
        self._job = None
        self.busy_changed.emit(False)
        if job.error is not None:
            self.done.emit(f"{job.error.title}: {job.error.message}", False)
        else:
            self.done.emit(str(job.result), True)


def _rate(p: Any) -> str:
    eta = f", {p.eta_s:.0f} s left" if p.eta_s is not None else ""
    return f"{p.done / 1e6:,.1f} of {p.total / 1e6:,.1f} MB at {p.bytes_per_s / 1e6:.1f} MB/s{eta}"
