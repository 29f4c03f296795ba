"""Background work for the window and the tray: blocking engine calls on worker threads.

The Qt thread never waits on the engine, a file, the keyring or a vendor tool. ``Jobs.submit`` runs a
callable on a small thread pool (or in a *lane*: one worker per lane, so the writes of one file or store
happen one at a time, in the order asked, and a slow keyring holds up only the keyring) and reports
through Qt signals, which are emitted on the Qt thread only: a worker's news travels there first (a queued
relay), so every listener, and every connection made or dropped meanwhile, meets it on one thread.
Ingests are followed through the engine's events: an ingest that starts on one of our workers is that
worker's job; one that starts on another thread (an editor's ingest through the service) becomes an
``external`` job, so the tray shows that indexing too, and it ends on the ingest's finished or failed
event. Writes and deletions by anyone, and the end of any ingest, are passed on as ``memories_changed``.
"""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any, Literal

from PySide6.QtCore import QObject, Signal, Slot

from engram.core import EngramError
from engram.core.errors import IngestCancelled
from engram.core.events import (
    EngineEvent,
    IngestFailed,
    IngestFinished,
    IngestProgressed,
    IngestStarted,
    MemoriesDeleted,
    MemoriesWritten,
)

logger = logging.getLogger(__name__)

JobKind = Literal["ingest", "download", "recall", "chat", "task"]
Report = Callable[[int, int, str], None]


@dataclass(frozen=True)
class Job:
    """A snapshot of one piece of background work."""

    id: int
    kind: JobKind
    title: str
    done: int = 0
    total: int = 0
    detail: str = ""
    finished: bool = False
    result: Any = None
    error: EngramError | None = None
    external: bool = False
    ingest: str = ""  # the engine's id of the ingest this job runs (its ``IngestStarted`` event), once known
    cancelling: bool = False

    @property
    def percent(self) -> int | None:
        """0–100 when the total is known."""
        if self.finished and self.error is None:
            return 100
        return int(100 * self.done / self.total) if self.total else None


class Jobs(QObject):
    """Runs blocking work off the Qt thread; every change of a job is emitted as ``changed``."""

    changed = Signal(object)  # Job
    finished = Signal(object)  # Job, once, when it ends (``error`` set when it failed)
    memories_changed = Signal(str)  # a workspace whose memories were written or deleted (by anyone)
    # What any thread reports; the slots re-emit it on the Qt thread (this object lives there), directly
    # when the report is made there, queued otherwise.
    _changed_anywhere = Signal(object)
    _finished_anywhere = Signal(object)
    _memories_changed_anywhere = Signal(str)

    def __init__(self, workers: int = 2, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="engram-job")
        self._lanes: dict[str, ThreadPoolExecutor] = {}
        self._closed = False
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._jobs: dict[int, Job] = {}
        self._by_thread: dict[int, int] = {}  # our workers' threads → their jobs
        self._by_ingest: dict[str, int] = {}  # ingests in progress → their jobs
        self._handlers: dict[int, Callable[[Job], None]] = {}
        self._changed_anywhere.connect(self._relay_changed)
        self._finished_anywhere.connect(self._relay_finished)
        self._memories_changed_anywhere.connect(self._relay_memories_changed)

    def submit(self, kind: JobKind, title: str, work: Callable[[Report], Any],
               on_done: Callable[[Job], None] | None = None, *, lane: str | None = None) -> Job:
        """Run ``work(report)`` on a worker; ``report(done, total, detail)`` updates the job's progress.

        ``on_done(job)`` runs on the Qt thread when the work ends (``job.error`` set when it failed). Jobs of
        one ``lane`` (e.g. ``"settings"``, ``"keyring"``) run one at a time in the order submitted.
        """
        job = Job(next(self._ids), kind, title)
        if self._closed:  # a timer or a late signal after quit: nothing runs, nothing is reported
            logger.debug("not started after shutdown: %s", title)
            return replace(job, finished=True, error=EngramError("Engram is quitting.", title="Not started"))
        if on_done is not None:
            self._handlers[job.id] = on_done
        self._store(job)

        def run() -> None:
            thread = threading.get_ident()
            with self._lock:
                self._by_thread[thread] = job.id
            def report(done: int, total: int, detail: str = "") -> None:
                self._update(job.id, done=done, total=total, detail=detail)

            try:
                result = work(report)
            except EngramError as exc:
                self._finish(job.id, error=exc)
            except Exception as exc:  # the top-level handler of a worker: the window must hear of it
                logger.exception("%s failed", title)
                self._finish(job.id, error=EngramError(f"{title} failed unexpectedly: {exc!r}. The log has details.",
                                                       title="Unexpected error"))
            else:
                self._finish(job.id, result=result)
            finally:
                with self._lock:
                    self._by_thread.pop(thread, None)

        if lane is None:
            self._pool.submit(run)
        else:
            with self._lock:
                executor = self._lanes.get(lane)
                if executor is None:
                    executor = self._lanes[lane] = ThreadPoolExecutor(max_workers=1,
                                                                      thread_name_prefix=f"engram-{lane}")
            executor.submit(run)
        return job

    def engine_event(self, event: EngineEvent) -> None:
        """An engine listener (any thread): follows every ingest as a job and passes on memory changes."""
        if isinstance(event, (MemoriesWritten, MemoriesDeleted)):
            self._memories_changed_anywhere.emit(event.workspace)
        elif isinstance(event, IngestStarted):
            with self._lock:
                job_id = self._by_thread.get(threading.get_ident())
                if job_id is None:  # an ingest that an editor started through the service
                    job = Job(next(self._ids), "ingest", "Remembering a folder (asked for by an AI tool)", external=True)
                    self._jobs[job.id] = job
                    job_id = job.id
                self._by_ingest[event.ingest] = job_id
            self._update(job_id, ingest=event.ingest)
        elif isinstance(event, IngestProgressed):
            with self._lock:
                job_id = self._by_ingest.get(event.ingest)
            if job_id is not None:
                p = event.progress
                detail = f"{p.files_done:,} of {p.files_total:,} files, {p.chunks:,} passages"
                self._update(job_id, done=p.files_done, total=p.files_total, detail=detail)
        elif isinstance(event, (IngestFinished, IngestFailed)):
            # What an ingest wrote (all of it, or its batches before it failed or was cancelled) is there to show.
            self._memories_changed_anywhere.emit(event.workspace)
            with self._lock:
                job_id = self._by_ingest.pop(event.ingest, None)
                ended = self._jobs.get(job_id) if job_id is not None else None
            if ended is None or not ended.external:
                return  # our own job ends when its work returns or raises
            if isinstance(event, IngestFailed):
                error = (IngestCancelled(event.message) if event.cancelled
                         else EngramError(event.message, title=event.title))
                self._finish(ended.id, error=error)
            else:
                self._finish(ended.id, result=None)

    @Slot(object)
    def _relay_changed(self, job: Job) -> None:
        self.changed.emit(job)

    @Slot(object)
    def _relay_finished(self, job: Job) -> None:
        handler = self._handlers.pop(job.id, None)
        try:
            if handler is not None:  # the submitter hears first, then every listener
                handler(job)
        finally:
            self.finished.emit(job)

    @Slot(str)
    def _relay_memories_changed(self, workspace: str) -> None:
        self.memories_changed.emit(workspace)

    def cancel_ingest(self, job_id: int, cancel: Callable[[str], bool]) -> bool:
        """Ask the engine (``cancel``: ``Engine.cancel_ingest``) to stop the ingest job ``job_id`` after its
        current batch; the job then ends with ``IngestCancelled``. Returns False when it runs no ingest now."""
        job = self.get(job_id)
        if job is None or job.finished or not job.ingest or not cancel(job.ingest):
            return False
        self._update(job_id, cancelling=True, detail="stopping after the files being written now…")
        return True

    def get(self, job_id: int) -> Job | None:
        with self._lock:
            return self._jobs.get(job_id)

    def running(self) -> list[Job]:
        with self._lock:
            return [j for j in self._jobs.values() if not j.finished]

    def shutdown(self) -> None:
        """Stop taking work; running jobs finish on their threads. Work queued in a lane (a settings write, a
        key being stored) still runs: it was asked for and nothing may be half-done."""
        self._closed = True
        self._pool.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            lanes = list(self._lanes.values())
        for executor in lanes:
            executor.shutdown(wait=False)

    def _store(self, job: Job) -> None:
        with self._lock:
            self._jobs[job.id] = job
        self._changed_anywhere.emit(job)

    def _update(self, job_id: int, **changes: Any) -> None:
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None or job.finished:
                return
            job = self._jobs[job_id] = replace(job, **changes)
        self._changed_anywhere.emit(job)

    def _finish(self, job_id: int, *, result: Any = None, error: EngramError | None = None) -> None:
        with self._lock:
            job = self._jobs.pop(job_id, None)
            if job is None:
                return
            if error is None and job.total:
                job = replace(job, done=job.total)
            job = replace(job, finished=True, result=result, error=error)
        self._changed_anywhere.emit(job)
        self._finished_anywhere.emit(job)
