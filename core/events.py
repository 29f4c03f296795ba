"""Engine events: what happened, told to every subscriber on the thread where it happened.

The engine and its tools emit these; the window, the tray, the CLI's progress line and the service's
streamed calls subscribe. A listener runs on the emitting thread (an ingest's worker, a download's
thread, an editor's call) and must hand the event over to its own thread if it needs one (the desktop
does so through a Qt signal). A failing listener is logged and never breaks the work that emitted.

Every ingest has an id (``ingest``) shared by its started, progress and finished-or-failed events, so
a subscriber can tell one ingest from another, whoever started it.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass

logger = logging.getLogger(__name__)


def new_ingest_id() -> str:
    """A fresh id for one ingest's events."""
    return "i-" + uuid.uuid4().hex[:12]


@dataclass(frozen=True)
class IngestProgress:
    """How far an ingest is, pushed by the pipeline after each batch."""

    files_done: int
    files_total: int
    chunks: int
    elapsed: float


@dataclass(frozen=True)
class IngestStarted:
    """An ingest began (a folder, a file or a text)."""

    ingest: str
    workspace: str
    project: str
    root: str


@dataclass(frozen=True)
class IngestProgressed:
    """A batch of an ingest was written."""

    ingest: str
    workspace: str
    progress: IngestProgress


@dataclass(frozen=True)
class IngestFinished:
    """An ingest ended and everything it read is written."""

    ingest: str
    workspace: str
    files_indexed: int
    chunks_written: int
    seconds: float


@dataclass(frozen=True)
class IngestFailed:
    """An ingest stopped with an error; what its finished batches wrote stays written.

    ``cancelled`` is true when it stopped because it was cancelled (``Engine.cancel_ingest``), not failed.
    """

    ingest: str
    workspace: str
    title: str
    message: str
    cancelled: bool = False


@dataclass(frozen=True)
class MemoriesWritten:
    """Memories or facts were added or changed in a workspace (ingests tell their own end instead)."""

    workspace: str
    tool: str
    count: int


@dataclass(frozen=True)
class MemoriesDeleted:
    """Memories, a source or its chunks were removed from a workspace."""

    workspace: str
    count: int
    source: str | None = None


@dataclass(frozen=True)
class ModelDownloadProgress:
    """Bytes of a model download so far (``total`` 0 while unknown)."""

    model: str
    done: int
    total: int


@dataclass(frozen=True)
class ModelDownloaded:
    """A model file arrived and was verified."""

    model: str
    size: int


@dataclass(frozen=True)
class ModelDownloadFailed:
    """A model download stopped; the model that was there before (if any) is untouched."""

    model: str
    title: str
    message: str


EngineEvent = (IngestStarted | IngestProgressed | IngestFinished | IngestFailed | MemoriesWritten | MemoriesDeleted
               | ModelDownloadProgress | ModelDownloaded | ModelDownloadFailed)
Listener = Callable[[EngineEvent], None]


class EventBus:
    """Subscribers and the events they get. Thread-safe: subscribe, unsubscribe and emit from any thread."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subscriptions: dict[object, Listener] = {}  # in subscription order

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener`` with every event from now on; returns the function that ends this subscription
        (idempotent; the same listener subscribed twice is told twice and unsubscribed once per call)."""
        token = object()
        with self._lock:
            self._subscriptions[token] = listener

        def unsubscribe() -> None:
            with self._lock:
                self._subscriptions.pop(token, None)

        return unsubscribe

    def emit(self, event: EngineEvent) -> None:
        """Tell every subscriber, on this thread. A listener that raises is logged; the others still hear."""
        with self._lock:
            listeners = list(self._subscriptions.values())
        for listener in listeners:
            try:
                listener(event)
            except Exception:  # a subscriber's bug must not fail the ingest or write that emitted
                logger.exception("an engine event listener failed on %s", type(event).__name__)
